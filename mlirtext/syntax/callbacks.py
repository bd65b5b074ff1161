"""The reduction callbacks: Lark's tree shaping, compiled to one function per rule.

Lark's `ParseTreeBuilder` wraps each rule's callback in objects that shape the
children before the callback sees them: drop filtered tokens (`","`), insert
`None` for absent `[x]` (placeholders), splice the children of inlined `_rule`s,
and return the single child of a `?rule`. That costs two or three Python calls
per reduction. Here the same shaping is generated as the body of one function
per rule, which calls our callback `fn(ctx, children)` directly:

    def reduce(ctx, c): return fn(ctx, [c[0], None, c[2]])

`lark_shaping` gives, per rule, the plan Lark itself uses (its own helper
`maybe_create_child_filter`), so what a callback receives is what Lark's
wrappers would give it; `tests/test_parser_tables.py` checks that for every rule.
"""
from __future__ import annotations

from functools import partial
from typing import Callable, Optional

from lark import Tree
from lark.parse_tree_builder import (ChildFilterLALR, ChildFilterLALR_NoPlaceholders,
                                     maybe_create_child_filter)

#: lookup(name) -> fn(ctx, children), or None for rules without a callback (a Tree is built).
Lookup = Callable[[str], Optional[Callable]]


def first_child(ctx, children):
    """The callback of a rule whose value is its first child's (a keyword rule's token)."""
    return children[0]


def callback_name(rule) -> str:
    return rule.alias or rule.options.template_source or rule.origin.name


def lark_shaping(rule):
    """(to_include, nones_at_end, expand_single) as Lark's tree builder does it (LALR,
    placeholders on): to_include lists (child index, splice its children?, Nones before
    it); None when the children are passed as they are."""
    expand_single = bool(rule.options.expand1 and not rule.alias)
    made = maybe_create_child_filter(rule.expansion, rule.options.keep_all_tokens, False,
                                     rule.options.empty_indices)
    if made is None:
        return None, 0, expand_single
    cls, *args = made.func, *made.args
    if cls is ChildFilterLALR:
        to_include, nones_at_end = args
        return list(to_include), nones_at_end, expand_single
    if cls is ChildFilterLALR_NoPlaceholders:
        (pairs,) = args
        return [(i, expand, 0) for i, expand in pairs], 0, expand_single
    raise NotImplementedError(f"unexpected child filter {cls.__name__}")  # pragma: no cover


def rule_body(rule, fn: Optional[Callable]):
    """The body of `reduce(ctx, c)` for `rule` as a tuple of source lines; "keep" when the
    rule's value is its only child's (a `?rule` of one symbol, or a keyword rule: the
    driver then keeps that value); "direct" when `fn` takes the children as they are."""
    to_include, nones_at_end, expand_single = lark_shaping(rule)
    size = len(rule.expansion)
    if size == 1 and to_include is None and (expand_single or fn is first_child):
        return "keep"
    if to_include is None:
        if not expand_single:
            return "direct"
        body = ["    f = c"]
    else:
        body = _filter_body(to_include, nones_at_end)
    if expand_single:
        body.append("    if len(f) == 1:\n        return f[0]")
    body.append("    return fn(ctx, f)")
    return tuple(body)


def _filter_body(to_include, nones_at_end) -> list[str]:
    """Lark's ChildFilterLALR loop, unrolled for one rule (same lists, same aliasing)."""
    if not any(expand for _, expand, _ in to_include):
        items = []
        for i, _, nones in to_include:
            items += ["None"] * nones + [f"c[{i}]"]
        items += ["None"] * nones_at_end
        return [f"    f = [{', '.join(items)}]"]
    lines = []
    state = "empty"   # what `f` is known to be: "empty" (not made yet), "nonempty", or "unknown"
    for i, expand, nones in to_include:
        if nones:
            lines.append(f"    f = [None] * {nones}" if state == "empty" else f"    f += [None] * {nones}")
            state = "nonempty"
        if expand:
            if state == "empty":
                lines.append(f"    f = c[{i}].children")   # Lark reuses the inlined rule's list
                state = "unknown"
            elif state == "nonempty":
                lines.append(f"    f += c[{i}].children")
            else:
                lines.append(f"    if f:\n        f += c[{i}].children\n    else:\n        f = c[{i}].children")
        else:
            lines.append(f"    f = [c[{i}]]" if state == "empty" else f"    f.append(c[{i}])")
            state = "nonempty"
    if state == "empty":
        lines.append("    f = []")
    if nones_at_end:
        lines.append(f"    f += [None] * {nones_at_end}")
    return lines


def _tree(name, ctx, children):
    return Tree(name, children)


class CallbackCompiler:
    """Makes each rule's `reduce(ctx, children)` (None: keep the only child) on request.

    Compiling all of them up front costs a quarter of a second at start-up, and a
    parse uses few rules: the driver asks for a rule's callback the first time it
    reduces by that rule. Rules share shapes: each distinct body is compiled once,
    as a factory that closes over the rule's callback."""

    def __init__(self, rules, lookup: Lookup):
        self.rules = rules
        self.lookup = lookup
        self.factories: dict = {}

    def __call__(self, index: int):
        rule = self.rules[index]
        fn = self.lookup(callback_name(rule))
        body = rule_body(rule, fn)
        if body == "keep":
            return None
        if fn is None:
            fn = partial(_tree, callback_name(rule))
        if body == "direct":
            return fn
        factory = self.factories.get(body)
        if factory is None:
            inner = "\n".join("    " + line.replace("\n", "\n    ") for line in body)
            namespace: dict = {}
            exec(f"def make(fn):\n    def reduce(ctx, c):\n{inner}\n    return reduce\n", namespace)
            factory = self.factories[body] = namespace["make"]
        return factory(fn)


def compile_callbacks(rules, lookup: Lookup) -> list:
    """Every rule's callback at once (tests; the driver compiles them as it needs them)."""
    compiler = CallbackCompiler(rules, lookup)
    return [compiler(i) for i in range(len(rules))]
