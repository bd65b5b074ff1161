"""tensor: creating, inspecting and casting tensors (the ops the core needs)."""
from __future__ import annotations

from ..ir import types as T
from .base import PURE, Dialect, VerifyError
from .common import create

dialect = Dialect("tensor", grammar="tensor")


def _ranked(t) -> T.RankedTensorType:
    if not isinstance(t, T.RankedTensorType):
        raise VerifyError(f"expected a ranked tensor, got {t}")
    return t


def _dynamic_count(t) -> int:
    return sum(1 for d in t.shape if d is None)


# ---- tensor.empty ----------------------------------------------------------------
def _print_empty(p, op) -> None:
    p.write("tensor.empty(", p.values(op.operands), ")", p.op_attr_dict(op), " : ",
            p.type(op.results[0].type))


def _verify_empty(op) -> None:
    t = _ranked(op.results[0].type)
    if len(op.operands) != _dynamic_count(t):
        raise VerifyError(f"incorrect number of dynamic sizes, has {len(op.operands)}, "
                          f"expected {_dynamic_count(t)}")


dialect.op("tensor.empty", "A tensor of the given shape with unspecified contents.", traits=(PURE,),
           verify=_verify_empty, print=_print_empty)


@dialect.rule("tensor_empty")
def _tensor_empty(ctx, children):
    uses, attrs, type = children
    operands = [ctx.resolve(u, T.index) for u in (uses or [])]
    return create(ctx, "tensor.empty", operands, [type], attrs)


# ---- tensor.dim --------------------------------------------------------------------
def _print_dim(p, op) -> None:
    p.write("tensor.dim", p.op_attr_dict(op), " ", p.values(op.operands), " : ", p.type(op.operands[0].type))


dialect.op("tensor.dim", "The size of one dimension of a tensor.", traits=(PURE,), print=_print_dim)


@dialect.rule("tensor_dim")
def _tensor_dim(ctx, children):
    attrs, source, index, type = children
    operands = [ctx.resolve(source, type), ctx.resolve(index, T.index)]
    return create(ctx, "tensor.dim", operands, [T.index], attrs)


# ---- tensor.cast -------------------------------------------------------------------
def _print_cast(p, op) -> None:
    p.write("tensor.cast ", p.value(op.operands[0]), p.op_attr_dict(op), " : ",
            p.type(op.operands[0].type), " to ", p.type(op.results[0].type))


def _verify_cast(op) -> None:
    a, b = op.operands[0].type, op.results[0].type
    if T.element_type(a) != T.element_type(b):
        raise VerifyError(f"operand type '{a}' and result type '{b}' are cast incompatible")
    if isinstance(a, T.RankedTensorType) and isinstance(b, T.RankedTensorType):
        if a.rank != b.rank or any(x is not None and y is not None and x != y
                                   for x, y in zip(a.shape, b.shape)):
            raise VerifyError(f"operand type '{a}' and result type '{b}' are cast incompatible")


dialect.op("tensor.cast", "Changes static/dynamic shape information without changing data.",
           traits=(PURE,), verify=_verify_cast, print=_print_cast)


@dialect.rule("tensor_cast")
def _tensor_cast(ctx, children):
    source, attrs, src, dst = children
    return create(ctx, "tensor.cast", [ctx.resolve(source, src)], [dst], attrs)


# ---- tensor.extract / tensor.insert -------------------------------------------------------
def _print_extract(p, op) -> None:
    p.write("tensor.extract ", p.value(op.operands[0]), "[", p.values(op.operands[1:]), "]",
            p.op_attr_dict(op), " : ", p.type(op.operands[0].type))


def _verify_extract(op) -> None:
    t = _ranked(op.operands[0].type)
    if len(op.operands) - 1 != t.rank:
        raise VerifyError("incorrect number of indices for extract_element")


dialect.op("tensor.extract", "Reads one element of a tensor.", traits=(PURE,),
           verify=_verify_extract, print=_print_extract)


@dialect.rule("tensor_extract")
def _tensor_extract(ctx, children):
    source, indices, attrs, type = children
    if not isinstance(type, (T.RankedTensorType, T.UnrankedTensorType)):
        raise ctx.fail(f"expected a tensor type, got {type}")
    operands = [ctx.resolve(source, type)] + [ctx.resolve(i, T.index) for i in (indices or [])]
    return create(ctx, "tensor.extract", operands, [type.element], attrs)


def _print_insert(p, op) -> None:
    p.write("tensor.insert ", p.value(op.operands[0]), " into ", p.value(op.operands[1]), "[",
            p.values(op.operands[2:]), "]", p.op_attr_dict(op), " : ", p.type(op.operands[1].type))


def _verify_insert(op) -> None:
    t = _ranked(op.operands[1].type)
    if len(op.operands) - 2 != t.rank:
        raise VerifyError("incorrect number of indices")


dialect.op("tensor.insert", "A copy of a tensor with one element replaced.", traits=(PURE,),
           verify=_verify_insert, print=_print_insert)


@dialect.rule("tensor_insert")
def _tensor_insert(ctx, children):
    scalar, dest, indices, attrs, type = children
    if not isinstance(type, (T.RankedTensorType, T.UnrankedTensorType)):
        raise ctx.fail(f"expected a tensor type, got {type}")
    operands = [ctx.resolve(scalar, type.element), ctx.resolve(dest, type)]
    operands += [ctx.resolve(i, T.index) for i in (indices or [])]
    return create(ctx, "tensor.insert", operands, [type], attrs)


# ---- tensor.from_elements / tensor.splat ------------------------------------------------
def _print_from_elements(p, op) -> None:
    p.write("tensor.from_elements")
    if op.operands:
        p.write(" ", p.values(op.operands))
    p.write(p.op_attr_dict(op), " : ", p.type(op.results[0].type))


def _verify_from_elements(op) -> None:
    t = _ranked(op.results[0].type)
    if t.num_elements != len(op.operands):
        raise VerifyError(f"expected {t.num_elements} operands, got {len(op.operands)}")


dialect.op("tensor.from_elements", "A static tensor built from scalar operands (row-major).",
           traits=(PURE,), verify=_verify_from_elements, print=_print_from_elements)


@dialect.rule("tensor_from_elements")
def _tensor_from_elements(ctx, children):
    uses, attrs, type = children
    if not isinstance(type, T.RankedTensorType):
        raise ctx.fail(f"expected a ranked tensor type, got {type}")
    operands = [ctx.resolve(u, type.element) for u in (uses or [])]
    return create(ctx, "tensor.from_elements", operands, [type], attrs)


def _print_splat(p, op) -> None:
    p.write("tensor.splat ", p.value(op.operands[0]))
    if len(op.operands) > 1:
        p.write("[", p.values(op.operands[1:]), "]")
    p.write(p.op_attr_dict(op), " : ", p.type(op.results[0].type))


def _verify_splat(op) -> None:
    t = _ranked(op.results[0].type)
    if op.operands[0].type != t.element:
        raise VerifyError("operand type must match the result element type")
    if len(op.operands) - 1 != _dynamic_count(t):
        raise VerifyError("incorrect number of dynamic sizes")


dialect.op("tensor.splat", "A tensor with every element equal to one scalar.", traits=(PURE,),
           verify=_verify_splat, print=_print_splat)


@dialect.rule("tensor_splat")
def _tensor_splat(ctx, children):
    scalar, sizes, attrs, type = children
    if not isinstance(type, T.RankedTensorType):
        raise ctx.fail(f"expected a ranked tensor type, got {type}")
    operands = [ctx.resolve(scalar, type.element)] + [ctx.resolve(u, T.index) for u in (sizes or [])]
    return create(ctx, "tensor.splat", operands, [type], attrs)
