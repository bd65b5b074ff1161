"""Helpers shared by dialect modules: building ops from grammar callbacks, type rules."""
from __future__ import annotations

from ..ir import types as T
from ..ir.core import Operation
from ..ir.source import Span
from .base import VerifyError


def create(ctx, name: str, operands=(), result_types=(), attributes=None, regions=(),
           successors=()) -> Operation:
    """An op built by a custom-syntax callback; its name span is the rule's first token."""
    op = Operation(name, operands, result_types, attributes or {}, regions, successors)
    op.name_span = Span(ctx.source, ctx.start, ctx.first_end)
    return op


def symbol_name(ctx, tok) -> str:
    """The name a SYMBOL token (`@f` or `@"a b"`) defines, quotes and escapes removed."""
    text = tok.value[1:]
    if text[:1] == '"':
        from ..syntax.core_rules import string_value
        return string_value(ctx, tok, text)
    return text


def token_text(tok) -> str:
    """The text of a `!`-kept keyword rule's value (a token)."""
    return tok.value


def shaped_like(t: T.Type, element: T.Type) -> T.Type:
    """`t` with its element type replaced (`tensor<4xf32>`, i1 -> `tensor<4xi1>`)."""
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, element, t.encoding)
    if isinstance(t, T.UnrankedTensorType):
        return T.UnrankedTensorType(element)
    if isinstance(t, T.VectorType):
        return T.VectorType(t.shape, element, t.scalable)
    if isinstance(t, T.MemRefType):
        return T.MemRefType(t.shape, element, t.layout, t.memory_space)
    return element


def require(condition: bool, message: str) -> None:
    if not condition:
        raise VerifyError(message)


def check_same_types(op: Operation) -> None:
    """All operands and results have one type."""
    types = op.operand_types + op.result_types
    if any(t != types[0] for t in types):
        raise VerifyError(f"requires the same type for all operands and results")


def check_element_kind(op: Operation, kind: str) -> None:
    """Every operand's element type is an integer/index ('int') or a float ('float')."""
    for t in op.operand_types:
        e = T.element_type(t)
        ok = T.is_integer(e) if kind == "int" else T.is_float(e)
        if not ok:
            what = "signless-integer-like" if kind == "int" else "floating-point-like"
            raise VerifyError(f"operand #0 must be {what}, but got '{t}'")


def same_shape(a: T.Type, b: T.Type) -> bool:
    if isinstance(a, T.ShapedType) != isinstance(b, T.ShapedType):
        return False
    if isinstance(a, T.ShapedType):
        return type(a) is type(b) and a.shape == b.shape
    return type(a) is type(b) or not isinstance(a, (T.UnrankedTensorType, T.UnrankedMemRefType))
