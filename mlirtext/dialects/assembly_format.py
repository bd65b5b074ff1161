"""Declared assembly formats: one string gives an op family's grammar rule, parser and printer.

In the spirit of MLIR's ODS `assemblyFormat` (and xDSL's `assembly_format`), a
family of ops with one custom syntax declares it once:

    dialect.op_family("load", ("memref.load",), "$memref `[` $indices `]` attr-dict `:` type($memref)",
                      operands=("memref", "indices*"), results=("result",),
                      infer={"indices": T.index, "result": ("memref", element_type)})

and from that string come the Lark rule (composed into the grammar and cached with
the LALR tables), the parse callback (generated as Python source, so it costs what a
hand-written one does: the parse loop is the hot path) and the printer. So the
three can no longer drift apart.

Directives:
  `$name`                 an operand (single, `name*` variadic, `name?` optional), an
                          attribute (its kind in `attributes`, default: any attribute
                          written in full) or a successor. A variadic operand followed by
                          `` `,` `` writes each value with its comma (`%a, %b, dim = 0`:
                          MLIR's custom<VariadicOperandWithAttribute>), the one form an
                          LALR(1) parser can tell from a comma-separated list
  `` `lit` ``             a literal keyword or punctuation
  `attr-dict`             the discardable attributes `{...}`; `attr-dict-with-keyword`
                          writes `attributes {...}`
  `type($x)`              the type of an operand or result (a list for a variadic one)
  `functional-type($a, $r)`  `(types of a) -> types of r`; `functional-type(operands,
                          results)`: of all of them
  `custom<Name>(...)`     an irregular piece the family supplies as a `Custom` (grammar
                          fragment, parse, print), optionally over `type($x)` arguments
                          and `ref($x)` ones (the operand tokens already read: how many)
  `( ... $x^ ... )?`      an optional group, present when its anchor `x` is

Types a format does not write are inferred (`infer`): from another name's type
(`"result"`), a fixed type (`T.index`) or a function of another name's type
(`("lhs", to_i1)`). Printing follows MLIR's spacing rules, so a format prints
what MLIR prints for it.

An attribute's kind (`grammar`, `parse`, `print`) may also say which attributes it can write
(`accepts(attr)`): an optional group anchored on such an attribute is printed only for one it
accepts, and one it does not is left to `attr-dict`, as MLIR leaves an attribute the format
cannot write (tosa's keyword items: `axis(1)` for an i32, `{axis = 1 : i64}` otherwise).
"""
from __future__ import annotations

import re
from functools import cached_property
from typing import Callable, Optional

from ..ir.attributes import IntegerAttr, StringAttr
from ..ir.signatures import Group, OpSignature
from ..syntax.literals import string_value, symbol_ref
from .common import create, explicit_attrs, merge_unique_attrs


# ---- pieces a family plugs in ---------------------------------------------------------
# (Plain classes, not dataclasses: declaring a dataclass costs half a millisecond of start-up.)
class Custom:
    """A custom directive (`custom<Flags>`, `custom<SelectTypes>(type($c), type($r))`).

    `grammar`: a Lark fragment giving exactly one child (a rule of the dialect's .lark
    file, often optional: `[arith_flags]`). `parse(ctx, op_name, child)` returns the
    attributes it stands for (a dict; not called when an optional piece is absent), or,
    when the directive takes `type($x)` arguments, those types in order; `ref($x)` arguments
    come after `child`, as the operand tokens read for `$x` (a list for a group). `print(p, op)`
    returns its text (with its own leading space, "" when there is nothing to show) and
    the attribute keys it printed (left out of the attribute dictionary)."""

    __slots__ = ("grammar", "parse", "print")

    def __init__(self, grammar: str, parse: Callable, print: Callable):
        self.grammar, self.parse, self.print = grammar, parse, print


class AnyAttr:
    """An attribute written in full (`1 : i32`, `dense<...> : tensor<...>`, `@sym`, ...)."""

    grammar = "attribute"

    def parse(self, ctx, child):
        return child

    def print(self, p, attr) -> str:
        return p.attr(attr)


class SymbolAttr:
    """A flat symbol reference (`@global`), recorded as a symbol use (go to definition)."""

    grammar = "SYMBOL"

    def parse(self, ctx, tok):
        return symbol_ref(ctx, [tok])

    def print(self, p, attr) -> str:
        return str(attr)


class StringAttrKind:
    """A quoted string (`"message"`), escapes resolved."""

    grammar = "STRING"

    def parse(self, ctx, tok):
        return StringAttr(string_value(ctx, tok))

    def print(self, p, attr) -> str:
        return str(attr)


class EnumAttr:
    """An integer attribute written as one of `words` (`slt`, or quoted `"slt"`); `what`
    names it in the error for an unknown word."""

    grammar = "(BARE_ID | STRING)"

    def __init__(self, words: tuple, type, what: str):
        self.words, self.type, self.what = tuple(words), type, what

    def parse(self, ctx, tok):
        word = tok.value[1:-1] if tok.value.startswith('"') else tok.value
        if word not in self.words:
            raise ctx.fail(f"unknown {self.what} \"{word}\"", tok)
        return IntegerAttr(self.words.index(word), self.type)

    def print(self, p, attr) -> str:
        return self.words[attr.value]


# ---- the format as a list of elements --------------------------------------------------
class Element:
    """One directive of a format: `kind` is literal, ref (bound to operand, attribute or
    successor), attr-dict, type, functional-type, custom or optional."""

    __slots__ = ("kind", "text", "args", "group", "keyword", "body", "anchor", "comma")

    def __init__(self, kind: str, text: str = "", args: tuple = (), keyword: bool = False):
        self.kind = kind
        self.text = text            # literal text; name of an operand/attribute/successor/custom
        self.args = args            # names a type/functional-type directive reads; a custom's type args
        self.group: Optional[Group] = None
        self.keyword = keyword      # attr-dict-with-keyword
        self.body: list = []        # an optional group's elements
        self.anchor = ""            # an optional group's anchor name
        self.comma = False          # a variadic operand whose values each end with `,`


_TOKEN = re.compile(r"\s*(?:(`[^`]*`)|(attr-dict-with-keyword|attr-dict)|(functional-type|type)\(([^)]*)\)"
                    r"|custom<(\w+)>(?:\(((?:[^()]|\([^()]*\))*)\))?|(\$\w+\^?)|(\()|(\)\?))")


class FormatError(ValueError):
    """A format string that does not describe the op (a bug in a dialect's declaration)."""


#: The bare words of `functional-type(operands, results)`, apart from names (`$operands`).
_ALL = {"operands": ":operands", "results": ":results"}


def _names(args: str) -> tuple:
    out = []
    for a in (x.strip() for x in args.split(",") if x.strip()):
        if a in ("operands", "results"):  # functional-type(operands, results): all of them
            out.append(_ALL[a])
            continue
        ref = re.fullmatch(r"ref\(\$(\w+)\)", a)
        if ref is not None:  # a custom directive's `ref($x)`: the operand tokens of x
            out.append("&" + ref.group(1))
            continue
        m = re.fullmatch(r"(?:type\()?\$(\w+)\)?", a)
        if m is None:
            raise FormatError(f"expected `$name` or `type($name)`, got {a!r}")
        out.append(m.group(1))
    return tuple(out)


def parse_format(text: str) -> list:
    """The elements of format `text` (a FormatError if it is malformed)."""
    stack: list = [[]]
    pos = 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise FormatError(f"cannot read the format at {text[pos:]!r}")
        pos = m.end()
        lit, attr_dict, type_kind, type_args, custom, custom_args, ref, open_, close = m.groups()
        if lit is not None:
            stack[-1].append(Element("literal", lit[1:-1]))
        elif attr_dict:
            stack[-1].append(Element("attr-dict", keyword=attr_dict.endswith("keyword")))
        elif type_kind:
            stack[-1].append(Element(type_kind, args=_names(type_args)))
        elif custom:
            stack[-1].append(Element("custom", custom, args=_names(custom_args or "")))
        elif ref:
            anchor = ref.endswith("^")
            element = Element("ref", ref[1:].rstrip("^"))
            stack[-1].append(element)
            if anchor:
                if len(stack) == 1:
                    raise FormatError(f"anchor '{ref}' outside an optional group")
                stack[-2][-1].anchor = element.text
        elif open_:
            group = Element("optional")
            stack[-1].append(group)
            stack.append(group.body)
        elif close:
            if len(stack) == 1:
                raise FormatError("`)?` without `(`")
            body = stack.pop()
            if not stack[-1][-1].anchor:
                raise FormatError("an optional group needs an anchor (`$name^`)")
            stack[-1][-1].body = body
    if len(stack) != 1:
        raise FormatError("unclosed optional group")
    return stack[0]


# ---- the declaration: format + names ------------------------------------------------------
class Format:
    """An op family's format, bound to its names: builds the grammar rule, the parse
    callback and the printer."""

    def __init__(self, rule: str, op_names: tuple, text: str, signature: OpSignature,
                 attributes: dict, successors: tuple, infer: dict, customs: dict, type_checks: dict,
                 strict: bool = True, aliases=None, build=None):
        self.rule = rule
        #: fn(ctx, name, operands, result types, attributes[, regions, successors]) -> Operation;
        #: `common.create` unless the dialect builds its ops its own way (mhlo keeps the inherent
        #: attributes its custom forms write as properties)
        self.build = build or create
        self.aliases = dict(aliases or {})  # other spellings of op names (`call` for `func.call`)
        self.strict = strict
        self.type_checks = type_checks
        self.op_names = op_names
        self.text = text
        self.signature = signature
        self.attributes = {k: v or AnyAttr() for k, v in attributes.items()}
        self.successors = successors
        self.infer = infer
        self.customs = customs
        self.elements = parse_format(text)
        self.operands = {g.name: g for g in signature.operands}
        self.results = {g.name: g for g in signature.results}
        self.named_attributes: list = []   # the attributes the format writes (not in attr-dict)
        self._bind(self.elements)
        # The callback's source is made (and checked) now; it is compiled when the parser first
        # reduces by this rule: most runs use few of the formats, and compiling costs start-up time.
        self.source, self._env = self._callback_source()

    @cached_property
    def callback(self) -> Callable:
        """The parse callback `fn(ctx, children)` (generated Python, see `source`)."""
        exec(compile(self.source, f"<format {self.rule}>", "exec"), self._env)
        return self._env["callback"]

    # -- checking the names ----------------------------------------------------------
    def _bind(self, elements) -> None:
        for e in list(elements):
            if e.kind == "ref":
                if e.text in self.operands:
                    e.kind, e.group = "operand", self.operands[e.text]
                    following = elements.index(e) + 1
                    if not e.group.single and following < len(elements) and \
                            elements[following].kind == "literal" and elements[following].text == ",":
                        e.comma = True  # `$inputs `,`` : the comma goes with each value
                        del elements[following]
                elif e.text in self.attributes:
                    e.kind = "attribute"
                    self.named_attributes.append(e.text)
                elif e.text in self.successors:
                    e.kind = "successor"
                else:
                    raise FormatError(f"{self.rule}: '${e.text}' is no operand, attribute or successor")
            elif e.kind in ("type", "functional-type"):
                for name in e.args:
                    if name in _ALL.values() and e.kind == "functional-type":
                        if sum(not g.single for g in self._groups(name)) > 1:
                            raise FormatError(f"{self.rule}: functional-type({name[1:]}) takes at most one "
                                              f"variadic group")
                    elif name not in self.operands and name not in self.results:
                        raise FormatError(f"{self.rule}: type(${name}) names no operand or result")
            elif e.kind == "custom" and e.text not in self.customs:
                raise FormatError(f"{self.rule}: no custom directive '{e.text}'")
            elif e.kind == "custom" and any(a[1:] not in self.operands for a in e.args if a.startswith("&")):
                raise FormatError(f"{self.rule}: custom<{e.text}>'s ref() names no operand")
            elif e.kind == "optional":
                self._bind(e.body)

    # -- grammar ------------------------------------------------------------------
    def grammar(self) -> str:
        """The Lark rule(s) for this family (`!<rule>_name` lists the op names)."""
        if len(self.op_names) > 1 or self.aliases:
            head = f"{self.rule}_name"
            names = " | ".join(f'"{n}"' for n in (*self.op_names, *self.aliases))
            extra = f"!{self.rule}_name: {names}\n"
        else:
            head, extra = f'"{self.op_names[0]}"', ""
        return f"{self.rule}: {head} {self._grammar(self.elements)}\n{extra}"

    def _grammar(self, elements) -> str:
        parts = []
        for e in elements:
            if e.kind == "literal":
                parts.append(f'"{e.text}"')
            elif e.kind == "operand":
                parts.append("VALUE_ID" if e.group.single else "[value_uses_comma]" if e.comma else "[value_uses]")
            elif e.kind == "attribute":
                parts.append(self.attributes[e.text].grammar)
            elif e.kind == "successor":
                parts.append("CARET_ID")
            elif e.kind == "attr-dict":
                parts.append('["attributes" attr_dict]' if e.keyword else "[attr_dict]")
            elif e.kind == "type":
                parts.append("type" if self._single(e.args[0]) else "[types]")
            elif e.kind == "functional-type":
                parts.append("function_type")
            elif e.kind == "custom":
                parts.append(self.customs[e.text].grammar)
            else:
                parts.append(f"[{self._grammar(e.body)}]")
        return " ".join(parts)

    def _group(self, name: str) -> Group:
        return self.operands.get(name) or self.results[name]

    def _single(self, name: str) -> bool:
        return self._group(name).single

    # -- parsing: the callback as generated Python ---------------------------------------
    def _callback_source(self) -> tuple[str, dict]:
        lines: list = []
        env: dict = {"create": self.build, "explicit_attrs": explicit_attrs, "merge_unique_attrs": merge_unique_attrs}
        slot = [0]
        if self.aliases:
            env["ALIASES"] = self.aliases
            lines.append("    name = c[0].value\n    name = ALIASES.get(name, name)")
            slot[0] = 1
        elif len(self.op_names) > 1:
            lines.append("    name = c[0].value")
            slot[0] = 1
        else:
            env["NAME"] = self.op_names[0]
            lines.append("    name = NAME")
        lines.append("    attributes = {}")
        tokens: dict = {}     # operand/successor name -> child expression
        types: dict = {}      # name -> expression of its type (a list for a variadic group)
        attr_dicts: list = []
        self._parse_lines(self.elements, lines, env, slot, tokens, types, attr_dicts)
        for expr in attr_dicts:  # after the named attributes, as MLIR orders them
            merge = "attributes.update(explicit_attrs(ctx, name, {}))" if self.strict else \
                "merge_unique_attrs(ctx, attributes, {})"
            lines.append(f"    if {expr} is not None:\n        " + merge.format(expr))
        for name, check in self.type_checks.items():  # before inferring anything from them
            env[f"check_{name}"] = check
            lines.append(f"    problem = check_{name}({types[name]})\n"
                         f"    if problem is not None:\n"
                         f"        raise ctx.fail(problem)")
        self._infer_lines(lines, env, types, tokens)
        operands = []
        for g in self.signature.operands:
            if g.single:
                operands.append(f"ctx.resolve({tokens[g.name]}, {types[g.name]})")
            else:
                operands.append(f"*ctx.resolve_all({tokens[g.name]}, {types[g.name]})")
        results = [types[g.name] if g.single else f"*{types[g.name]}" for g in self.signature.results]
        call = f"create(ctx, name, [{', '.join(operands)}], [{', '.join(results)}], attributes"
        if self.successors:
            call += f", (), [{', '.join(f'ctx.block_ref({tokens[s]})' for s in self.successors)}]"
        lines.append(f"    return {call})")
        return "def callback(ctx, c):\n" + "\n".join(lines) + "\n", env

    def _parse_lines(self, elements, lines, env, slot, tokens, types, attr_dicts) -> None:
        for e in elements:
            if e.kind == "literal":
                continue
            if e.kind == "optional":
                self._parse_lines(e.body, lines, env, slot, tokens, types, attr_dicts)
                continue
            child = f"c[{slot[0]}]"
            slot[0] += 1
            if e.kind in ("operand", "successor"):
                tokens[e.text] = child
            elif e.kind == "attribute":
                env[f"kind_{e.text}"] = self.attributes[e.text]
                lines.append(f"    if {child} is not None:\n"
                             f"        attributes[{e.text!r}] = kind_{e.text}.parse(ctx, {child})")
            elif e.kind == "attr-dict":
                attr_dicts.append(child)
            elif e.kind == "type":
                types[e.args[0]] = child if self._single(e.args[0]) else f"({child} or [])"
            elif e.kind == "functional-type":
                for side, name in zip(("inputs", "results"), e.args):
                    self._functional_lines(lines, types, tokens, f"{child}.{side}", name, side)
            else:  # custom
                env[f"custom_{e.text}"] = self.customs[e.text].parse
                typed = [a for a in e.args if not a.startswith("&")]
                if typed:
                    refs = "".join(f", {tokens[a[1:]]}" for a in e.args if a.startswith("&"))
                    targets = ", ".join(f"t_{a}" for a in typed)
                    lines.append(f"    {targets}, = custom_{e.text}(ctx, name, {child}{refs})")
                    types.update({a: f"t_{a}" for a in typed})
                else:  # an absent optional piece stands for no attributes
                    lines.append(f"    if {child} is not None:\n"
                                 f"        attributes.update(custom_{e.text}(ctx, name, {child}))")
        for name, expr in list(types.items()):
            if expr != f"t_{name}":
                lines.append(f"    t_{name} = {expr}")
                types[name] = f"t_{name}"

    def _groups(self, name: str) -> list:
        """The groups `name` stands for in a functional-type: all operands or results, or one."""
        if name == _ALL["operands"]:
            return list(self.signature.operands)
        if name == _ALL["results"]:
            return list(self.signature.results)
        return [self._group(name)]

    def _functional_lines(self, lines, types, tokens, expr: str, name: str, side: str) -> None:
        """Take the types of `name` from one side of a function type, checking their number."""
        groups = self._groups(name)
        if len(groups) == 1 and not groups[0].single:
            types[groups[0].name] = f"list({expr})"
            return
        n = len(groups)
        variadic = [i for i, g in enumerate(groups) if not g.single]
        if variadic:  # the single groups around one variadic one: `%x, %i, %j` for $operand $indices*
            # (too few types: the operands present, as MLIR counts them, against the types)
            present = " + ".join("1" if g.single else f"len({tokens.get(g.name, '()')} or ())" for g in groups)
            lines.append(f"    if len({expr}) < {n - 1}:\n"
                         f"        raise ctx.fail(f\"{{{present}}} operands present, but expected {{len({expr})}}\")")
            k = variadic[0]
            after = n - k - 1
            for i, g in enumerate(groups):
                types[g.name] = (f"{expr}[{i}]" if i < k else f"{expr}[{i - n}]" if i > k else
                                 f"list({expr}[{k}:len({expr}) - {after}])")
            return
        message = (f"{n} operands present, but expected {{len({expr})}}" if side == "inputs" else
                   f"expected {n} result type{'s' if n != 1 else ''}, got {{len({expr})}}")
        lines.append(f"    if len({expr}) != {n}:\n        raise ctx.fail(f\"{message}\")")
        for i, g in enumerate(groups):
            types[g.name] = f"{expr}[{i}]"

    def _infer_lines(self, lines, env, types, tokens) -> None:
        """Assign every type the format does not write, from what `infer` says."""
        wanted = [g for g in (*self.signature.operands, *self.signature.results) if g.name not in types]
        while wanted:
            progress = False
            for g in list(wanted):
                rule = self.infer.get(g.name)
                if rule is None:
                    raise FormatError(f"{self.rule}: the type of '{g.name}' is neither written nor inferred")
                source = rule if isinstance(rule, str) else rule[0] if isinstance(rule, tuple) else None
                if source is not None and source not in types:
                    continue
                if isinstance(rule, str) and g.single == self._group(source).single:
                    types[g.name] = types[source]  # the same type: the same variable, no line
                    wanted.remove(g)
                    progress = True
                    continue
                if isinstance(rule, str):
                    expr = types[source]
                elif isinstance(rule, tuple):
                    env[f"infer_{g.name}"] = rule[1]
                    expr = f"infer_{g.name}({types[source]})"
                else:
                    env[f"fixed_{g.name}"] = rule
                    expr = f"fixed_{g.name}"
                if not g.single:  # every value of a group written with one type
                    if g.name not in tokens:
                        raise FormatError(f"{self.rule}: the types of result group '{g.name}' must be written")
                    expr = f"[{expr}] * len({tokens[g.name]} or ())"
                lines.append(f"    t_{g.name} = {expr}")
                types[g.name] = f"t_{g.name}"
                wanted.remove(g)
                progress = True
            if not progress:
                raise FormatError(f"{self.rule}: circular type inference for {[g.name for g in wanted]}")

    # -- printing: generated Python too ------------------------------------------------
    def print(self, p, op) -> None:
        """Write `op` in this format, with MLIR's spacing (no space before `,` `)` `]`, none
        after `(` `[` `<`)."""
        self._printer(p, op)

    @cached_property
    def _printer(self) -> Callable:
        checked = tuple((n, self.attributes[n]) for n in self.named_attributes if self.checks_kind(n))
        env = {"NAMED": tuple(n for n in self.named_attributes if not self.checks_kind(n)), "CHECKED": checked}
        source = _PrinterSource(self, env).source()
        exec(compile(source, f"<format {self.rule} printer>", "exec"), env)
        return env["printer"]

    def values_expr(self, name: str) -> tuple[str, bool]:
        """A Python expression for the values of operand or result `name` of `op`, and
        whether it is a list (a group) rather than one value. Indices are fixed where at
        most one group of the op is variadic or optional (MLIR's segments otherwise)."""
        operand = name in self.operands
        groups = self.signature.operands if operand else self.signature.results
        where, sizes = ("op.operands", "operandSegmentSizes") if operand else ("op.results", "resultSegmentSizes")
        index = [g.name for g in groups].index(name)
        group = groups[index]
        flexible = [i for i, g in enumerate(groups) if not g.single]
        if len(flexible) > 1:
            method = "op.operands_named" if operand else "op.results_named"
            if operand:
                return f"{method}({name!r})" + ("[0]" if group.single else ""), not group.single
            raise FormatError(f"{self.rule}: two variadic result groups are not supported")
        if not flexible or index < flexible[0]:
            return f"{where}[{index}]", False
        if index > flexible[0]:
            return f"{where}[{index - len(groups)}]", False
        after = len(groups) - index - 1
        return (f"{where}[{index}:]" if after == 0 else f"{where}[{index}:len({where}) - {after}]"), True

    def checks_kind(self, name: str) -> bool:
        """Whether attribute `name`'s kind says which attributes it can write (`accepts`): one
        of another kind is left to the attribute dictionary, which writes any."""
        return hasattr(self.attributes.get(name), "accepts")

    def present_expr(self, anchor: str) -> str:
        """When an optional group anchored on `anchor` is printed (for an attribute whose kind
        checks, `kind_<anchor>` in the printer's namespace: when it has that kind)."""
        if anchor in self.operands:
            return self.values_expr(anchor)[0]
        if anchor in self.attributes and self.checks_kind(anchor):
            return f"{anchor!r} in op.attributes and kind_{anchor}.accepts(op.attributes[{anchor!r}])"
        if anchor in self.attributes:
            return f"{anchor!r} in op.attributes"
        raise FormatError(f"{self.rule}: anchor '{anchor}' must be an operand or attribute")


class _PrinterSource:
    """The source of a format's printer. The spacing state (space before the next element?,
    was the last one punctuation?) is known while generating wherever no optional piece
    came before; past one it lives in the variables `sp` and `pu`."""

    def __init__(self, fmt: Format, env: dict):
        self.fmt = fmt
        self.env = env
        self.lines: list = []
        self.state = (True, False)   # or None: in `sp`, `pu`
        self.n = 0

    def source(self) -> str:
        lines = self.lines
        customs = list(self._customs(self.fmt.elements))
        keys = []
        for i, e in enumerate(customs):
            self.env[f"custom_{e.text}"] = self.fmt.customs[e.text].print
            lines.append(f"    ct_{e.text}, ck{i} = custom_{e.text}(p, op)")
            keys.append(f"ck{i}")
        if self.env["CHECKED"]:  # the attributes of a checked kind are elided where the format wrote them
            keys.append("tuple(k for k, kind in CHECKED if k in op.attributes and kind.accepts(op.attributes[k]))")
        lines.append(f"    elided = NAMED{''.join(' + ' + k for k in keys)}")
        lines.append("    w = p.out.append")
        lines.append("    w(op.name)")
        self._elements(self.fmt.elements, "    ")
        return "def printer(p, op):\n" + "\n".join(lines) + "\n"

    def _customs(self, elements):
        for e in elements:
            if e.kind == "custom":
                yield e
            elif e.kind == "optional":
                yield from self._customs(e.body)

    def _sync(self, indent: str) -> None:
        """Put a known state into `sp`, `pu` (before code that may or may not run)."""
        if self.state is not None:
            self.lines.append(f"{indent}sp, pu = {self.state[0]}, {self.state[1]}")
            self.state = None

    def _elements(self, elements, indent: str) -> None:
        fmt, lines = self.fmt, self.lines
        for e in elements:
            if e.kind == "literal":
                self._literal(e.text, indent)
            elif e.kind == "optional":
                self._sync(indent)
                if fmt.checks_kind(e.anchor):
                    self.env[f"kind_{e.anchor}"] = fmt.attributes[e.anchor]
                lines.append(f"{indent}if {fmt.present_expr(e.anchor)}:")
                self._elements(e.body, indent + "    ")
                self._sync(indent + "    ")
                lines.append(f"{indent}    pass")
            elif e.kind == "attr-dict":
                keyword = ', "attributes"' if e.keyword else ""
                self._own_space(f"p.attr_dict(op.attributes, elided{keyword})", indent)
            elif e.kind == "custom":
                self._own_space(f"ct_{e.text}", indent)
            else:
                text, maybe_empty = self._text(e)
                self._value(text, maybe_empty, indent)

    def _text(self, e) -> tuple[str, bool]:
        """The expression of an element's text, and whether it may be empty."""
        fmt = self.fmt
        if e.kind == "operand":
            expr, group = fmt.values_expr(e.text)
            if e.comma:
                return f"''.join(p.value(v) + ', ' for v in {expr})[:-1]", True
            return (f"p.values({expr})", True) if group else (f"p.value({expr})", False)
        if e.kind == "attribute":
            self.env[f"kind_{e.text}"] = fmt.attributes[e.text]
            return f"kind_{e.text}.print(p, op.attributes[{e.text!r}])", False
        if e.kind == "successor":
            return f"p.block(op.successors[{fmt.successors.index(e.text)}])", False
        if e.kind == "type":
            expr, group = fmt.values_expr(e.args[0])
            return (f"p.types([v.type for v in {expr}])", True) if group else (f"p.type({expr}.type)", False)
        sides = []
        for name in e.args:  # functional-type
            everything = name in _ALL.values()
            expr = f"op.{name[1:]}" if everything else fmt.values_expr(name)[0]
            single = not everything and not fmt.values_expr(name)[1]
            sides.append(f"[{expr}.type]" if single else f"[v.type for v in {expr}]")
        return f"p.function_type({sides[0]}, {sides[1]})", False

    def _literal(self, v: str, indent: str) -> None:
        """MLIR's `shouldEmitSpaceBefore`: a space unless the literal is one punctuation
        character that takes none (`,` `)` `]`, and `(` `[` `<` unless after punctuation)."""
        long = len(v) != 1 and v != "->"
        after = (len(v) != 1 or v not in "<({[", v[0] != "_" and not v[0].isalpha())
        if self.state is not None:
            sp, pu = self.state
            space = sp and (long or (v[0] not in ">)}]," if pu else v[0] not in "<>(){}[],"))
            self.lines.append(f"{indent}w({(' ' if space else '') + v!r})")
        else:
            if_pu, if_not_pu = long or v[0] not in ">)}],", long or v[0] not in "<>(){}[],"
            cond = ("sp" if if_pu and if_not_pu else "sp and pu" if if_pu else
                    "sp and not pu" if if_not_pu else "False")
            self.lines.append(f"{indent}w({v!r})" if cond == "False" else
                              f"{indent}w({' ' + v!r} if {cond} else {v!r})")
        self.state = after

    def _value(self, text: str, maybe_empty: bool, indent: str) -> None:
        """An element whose text needs a space before it when the state says so."""
        if not maybe_empty:
            if self.state is None:
                self.lines.append(f"{indent}w(' ' + {text} if sp else {text})")
            else:
                space = "' ' + " if self.state[0] else ""
                self.lines.append(f"{indent}w({space}{text})")
            self.state = (True, False)
            return
        self._if_not_empty(text, indent,
                           lambda t, known: f"' ' + {t}" if known else f"' ' + {t} if sp else {t}")

    def _own_space(self, text: str, indent: str) -> None:
        """attr-dict and custom pieces: their text brings its own leading space, or is empty."""
        self._if_not_empty(text, indent, lambda t, known: t)

    def _if_not_empty(self, text: str, indent: str, written) -> None:
        """Code that writes `text` unless it is empty; `written(t, known)` is what to write
        (`known`: the state before is the one after a value, a space and no punctuation)."""
        self.n += 1
        t = f"t{self.n}"
        self.lines.append(f"{indent}{t} = {text}")
        if self.state == (True, False):  # printed or not, the state stays
            self.lines.append(f"{indent}if {t}:\n{indent}    w({written(t, True)})")
            return
        self._sync(indent)
        self.lines.append(f"{indent}if {t}:\n{indent}    w({written(t, False)})\n"
                          f"{indent}    sp, pu = True, False")


def declare_family(dialect, family: str, op_names, format: str, operands=(), results=(), attributes=None,
                   successors=(), infer=None, custom=None, type_checks=None, per_op=None,
                   strict_properties=True, aliases=None, build=None, **op_kwargs) -> Format:
    """Declare the ops `op_names` of `dialect`, which share the syntax `format`: the grammar
    rule `<dialect>_<family>`, its callback, the printer and the ops' names (see
    ir/signatures.py). `operands`/`results`: specs like ("memref", "indices*");
    `attributes`: name -> kind (None: AnyAttr) of the attributes the format writes;
    `custom`: name -> Custom; `type_checks`: name -> fn(written type) -> None or the message of
    a parse error (types other things are inferred from: `tensor.extract`'s must be a tensor);
    `strict_properties=False` lets the attribute dictionary hold inherent attributes too (as
    MLIR did before properties: `memref.load %m[%i] {nontemporal = true}`); other keywords
    go to `Dialect.op` (verify, traits, ...), and `per_op(op name)` gives the keywords that
    differ between the ops (a dict). `aliases` maps other spellings to op names (`{"call":
    "func.call"}`: MLIR reads ops of the func dialect without their prefix). `build` makes the op
    (`common.create`'s arguments) where the dialect does more than `create`.
    The operand/result/successor counts are derived from the names unless given."""
    signature = OpSignature.of(operands, results, tuple(attributes or ()))
    fmt = Format(f"{dialect.name}_{family}", tuple(op_names), format, signature, dict(attributes or {}),
                 tuple(successors), dict(infer or {}), dict(custom or {}), dict(type_checks or {}),
                 strict_properties, aliases, build)
    dialect.formats.append(fmt)
    counts = {"operands": _count(signature.operands), "results": _count(signature.results),
              "regions": 0, "successors": len(successors)}
    counts.update({k: op_kwargs.pop(k) for k in list(op_kwargs) if k in counts})
    for name in fmt.op_names:
        own = {**op_kwargs, **(per_op(name) if per_op is not None else {})}
        dialect.op(name, print=fmt.print, names=signature, **counts, **own)
    return fmt


def _count(groups: tuple):
    """OpDef's count for `groups`: a number, or `(n, None)` (n or more) with a variadic one."""
    fixed = sum(1 for g in groups if g.single)
    return fixed if all(g.single for g in groups) else (fixed, None)
