"""The reduction callbacks: Lark's tree shaping, compiled to one function per rule.

Lark's `ParseTreeBuilder` wraps each rule's callback in objects that shape the
children before the callback sees them: drop filtered tokens (`","`), insert
`None` for absent `[x]` (placeholders), splice the children of inlined `_rule`s,
and return the single child of a `?rule`. That costs two or three Python calls
per reduction. Here the same shaping is generated as the body of one function
per rule, which calls our callback `fn(ctx, children)` directly:

    def reduce(ctx, c): return fn(ctx, [c[0], None, c[2]])

Each rule comes as a plain `RuleShape` tuple, made once from Lark's own plan when
the tables are built (`lark_tables.rule_shape`) and cached with them: parsing
needs no lark (importing it costs more CPU than parsing a small file).
`tests/test_parser_tables.py` checks, for every rule, that a callback receives what
Lark's wrappers would give it.
"""
from __future__ import annotations

from typing import Callable, Optional

#: lookup(name) -> fn(ctx, children), or None for rules without a callback (a Tree is built).
Lookup = Callable[[str], Optional[Callable]]

#: A rule as the callbacks need it, in plain values (stored with the tables):
#: (callback name, origin name, size, to_include, nones_at_end, expand_single). `to_include`
#: lists (child index, splice its children?, Nones before it), None when the children pass as
#: they are (Lark's ChildFilterLALR plan, placeholders on); `expand_single`: a `?rule`'s
#: value is its only child.
RuleShape = tuple


class Tree:
    """The value of a rule without a callback: its name and children (as Lark's Tree; only
    inlined `_rule`s, whose children the parent splices, and tests ever see one)."""

    __slots__ = ("data", "children")

    def __init__(self, data: str, children: list):
        self.data = data
        self.children = children

    def __repr__(self) -> str:
        return f"Tree({self.data!r}, {self.children!r})"


def first_child(ctx, children):
    """The callback of a rule whose value is its first child's (a keyword rule's token)."""
    return children[0]


def rule_body(rule: RuleShape, fn: Optional[Callable]):
    """The body of `reduce(ctx, c)` for `rule` as a tuple of source lines; "keep" when the
    rule's value is its only child's (a `?rule` of one symbol, or a keyword rule: the
    driver then keeps that value); "direct" when `fn` takes the children as they are."""
    _, _, size, to_include, nones_at_end, expand_single = rule
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


def _tree_maker(name: str):
    return lambda ctx, children: Tree(name, children)


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
        name = rule[0]
        fn = self.lookup(name)
        body = rule_body(rule, fn)
        if body == "keep":
            return None
        if fn is None:
            fn = _tree_maker(name)
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
