"""Shared pieces of the HLO custom syntax: op creation, enum and list attributes, the
kinds of attribute the declared formats write (`GT`, `[0, 1]`, `true`), custom<SameTypes>,
and the fallback of a custom printer to the generic form.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...ir import types as T
from ...ir.attributes import ArrayAttr, BoolAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr
from ...syntax.literals import number_value
from ..assembly_format import Custom
from ..common import create


def prefix_of(name: str) -> str:
    return name.split(".", 1)[0]


def short_of(name: str) -> str:
    return name.split(".", 1)[1]


def hlo_create(ctx, name, operands=(), result_types=(), attributes=None, regions=()):
    """An HLO op from custom syntax (hand-written or a declared format's); mhlo ops keep the
    inherent attributes it wrote as properties, as mlir-hlo's own parser makes them."""
    op = create(ctx, name, operands, result_types, attributes or {}, regions)
    if name.startswith("mhlo."):
        d = ctx.registry.lookup(name)
        if d is not None:
            op.property_names = frozenset(k for k in op.attributes if k in d.properties)
    return op


def enum_attr(prefix: str, kind: str, word: str) -> OpaqueAttr:
    return OpaqueAttr(f"#{prefix}<{kind} {word}>")


def i64_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i64, tuple(int(v) for v in values))


def int_item(item, ctx):
    if isinstance(item, tuple) and isinstance(item[0], str):
        try:
            value = number_value(item[0])
        except (TypeError, ValueError):
            value = None
        if isinstance(value, int):  # not `1.5`, which int() would quietly make 1
            return value
        raise ctx.fail(f"expected an integer, got '{item[0]}'", item[1])
    raise ctx.fail("expected an integer")


def int_items(items, ctx) -> list:
    if not isinstance(items, list):
        raise ctx.fail("expected a list of integers `[...]`")
    return [int_item(i, ctx) for i in items]


# `[...]` lists, and the format pieces that are lists too (`[0:2, 1:3]`, `<a = 1, b = 2>`, dot_general's
# dimension pairs): their items, absent optional ones left out
def _hlo_list(ctx, children):
    return [c for c in children if c is not None]


def _hlo_bare(ctx, children):
    return ("bare", children[0])


class _Generic(Exception):
    """Raised by a custom printer when the op's attributes have no custom spelling."""


def custom(fn):
    """A custom printer that falls back to the generic form when `fn` raises `_Generic`
    (an attribute without a custom spelling) or fails on unexpected IR."""
    def print_op(p, op) -> None:
        n = len(p.out)
        try:
            fn(p, op)
        except Exception:  # noqa: BLE001 - anything odd: the generic form is always right
            del p.out[n:]
            p.generic_op(op)
    return print_op


def need(cond) -> None:
    if not cond:
        raise _Generic()


def arr(op, key) -> list:
    a = op.attr(key)
    need(isinstance(a, DenseArrayAttr) and a.element_type == T.i64)
    return list(a.values)


def list_text(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _sig_same(p, op) -> str:
    types = op.operand_types + op.result_types
    if types and all(t == types[0] for t in types) and len(op.results) == 1:
        return p.type(types[0])
    return p.function_type(op.operand_types, op.result_types)


def sig_func(p, op) -> str:
    return p.function_type(op.operand_types, op.result_types)


# As StableHLO's ODS declares them (`$lhs `,` $rhs attr-dict `:`
# custom<SameOperandsAndResultType>(...)`), for stablehlo and mhlo alike (one rule per prefix).
# Printing raises where the IR has no custom spelling (an attribute of another kind, a type
# the short form cannot say): the printer then writes the generic form.
class EnumWord:
    """An HLO enum attribute written as its bare word: `GT` for `#stablehlo<comparison_direction GT>`."""

    grammar = "BARE_ID"

    def __init__(self, prefix: str, kind: str):
        self.prefix, self.kind = prefix, kind
        self.pattern = re.compile(rf"#{prefix}<{kind} (\w+)>")

    def parse(self, ctx, tok):
        return enum_attr(self.prefix, self.kind, tok.value)

    def print(self, p, attr) -> str:
        return self.pattern.fullmatch(attr.text).group(1)


class _I64List:
    """`[0, 1]`: a dense i64 array (`array<i64: 0, 1>`)."""

    grammar = "hlo_list"

    def parse(self, ctx, items):
        return i64_array(int_items(items, ctx))

    def print(self, p, attr) -> str:
        need(isinstance(attr, DenseArrayAttr) and attr.element_type == T.i64)
        return list_text(attr.values)


class Int:
    """An integer of `type` written bare: `dim = 0` (i64), `%t[1]` (i32)."""

    def __init__(self, type, grammar: str):
        self.type, self.grammar = type, grammar

    def parse(self, ctx, item):
        return IntegerAttr(int_item(item if isinstance(item, tuple) else (item.value, item), ctx), self.type)

    def print(self, p, attr) -> str:
        need(isinstance(attr, IntegerAttr) and attr.type == self.type)
        return str(attr.value)


def _print_same_types(p, op):
    """`T` when every operand and the one result have type T, else the function type."""
    return " " + _sig_same(p, op), ()


def same_types(n_operands: int) -> Custom:
    """custom<SameOperandsAndResultType>: one type for all, or a function type."""
    def parse(ctx, name, t):
        if not isinstance(t, T.FunctionType):
            return (t,) * (n_operands + 1)
        if len(t.inputs) != n_operands:
            raise ctx.fail(f"custom op '{name}' {n_operands} operands present, but expected {len(t.inputs)}")
        if len(t.results) != 1:
            raise ctx.fail(f"custom op '{name}' expected single output")
        return (*t.inputs, t.results[0])
    return Custom("type", parse, _print_same_types)


class Words(EnumWord):
    """`[DEFAULT, HIGHEST]`: an array of `#prefix<kind WORD>` enum attributes (precision_config)."""

    grammar = "hlo_list"

    def parse(self, ctx, items):
        words = []
        for item in items:
            if not (isinstance(item, tuple) and item[0] == "bare"):
                raise ctx.fail(f"expected a {self.kind} word")
            words.append(enum_attr(self.prefix, self.kind, item[1].value))
        return ArrayAttr(tuple(words))

    def print(self, p, attr) -> str:
        need(isinstance(attr, ArrayAttr))
        words = [self.pattern.fullmatch(str(item)) for item in attr.items]
        need(all(words))
        return list_text(m.group(1) for m in words)


class Bool:
    """`true` / `false` (cholesky's `lower`)."""

    grammar = "BARE_ID"

    def parse(self, ctx, tok):
        if tok.value not in ("true", "false"):
            raise ctx.fail(f"expected true or false, got '{tok.value}'", tok)
        return BoolAttr(tok.value == "true")

    def print(self, p, attr) -> str:
        need(isinstance(attr, IntegerAttr) and attr.type == T.i1)
        return "true" if attr.value else "false"


I64S = _I64List()
I64 = Int(T.i64, "number")
FUNCTIONAL = "attr-dict `:` functional-type(operands, results)"
_SAME_TYPES = "attr-dict `:` custom<SameTypes>"


def same_types_format(*names: str, result: str = "result") -> str:
    """`attr-dict : custom<SameTypes>(type($a), ..., type($result))` over operands `names`."""
    return _SAME_TYPES + "(" + ", ".join(f"type(${n})" for n in (*names, result)) + ")"


@dataclass(frozen=True, eq=False)
class HloFormat:
    """A declared assembly format shared by a family of ops (as StableHLO's ODS writes it).

    `attributes`: name -> the kind of attribute the format writes, or a function of the
    prefix giving it (an enum word reads `#stablehlo<...>` or `#mhlo<...>`); `custom`: the
    custom<...> pieces; `family` names the grammar rule (`stablehlo_<family>`)."""
    family: str
    text: str
    operands: tuple
    attributes: dict = field(default_factory=dict)
    custom: dict = field(default_factory=dict)
    results: tuple = ("result",)


def same_types_family(family: str, *operands: str) -> HloFormat:
    """`%a, %b : T` (custom<SameOperandsAndResultType>) over `operands`, as mhlo's copy and
    add_dependency write it."""
    return HloFormat(family, " `,` ".join(f"${n}" for n in operands) + " " + same_types_format(*operands),
                     operands, custom={"SameTypes": same_types(len(operands))})


#: The elementwise unary ops' format (and the quantize ops' and convert's).
UNARY_FORMAT = HloFormat("unary", "$operand " + same_types_format("operand"), ("operand",),
                         custom={"SameTypes": same_types(1)})
#: reshape's and bitcast_convert's: one operand, a result of another type.
CAST = HloFormat("cast", "$operand " + FUNCTIONAL, ("operand",))

#: Grammar callbacks of the pieces every family's syntax uses.
RULES = {"hlo_list": _hlo_list, "hlo_slice_ranges": _hlo_list, "hlo_dot_algorithm": _hlo_list,
         "hlo_dot_dims": _hlo_list, "hlo_bare": _hlo_bare}
