"""flow (IREE): the few tensor ops IREE's end-to-end tests use around the main dialects.

`flow.tensor.dynamic_constant` is a constant whose result type hides (some of)
its static shape; `flow.tensor.tie_shape` attaches SSA values for the dynamic
dimensions of a tensor; `flow.tensor.bitcast` reinterprets a tensor's bytes as
another element type (dynamic dimensions given as `{%d, ...}` after each type).
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import DenseArrayAttr
from ..ir.dense import DenseElementsAttr, DenseResourceAttr
from ..ir.signatures import OpSignature
from .base import PURE, Dialect, VerifyError
from .common import create, merge_unique_attrs
from ..ir.types import FLOAT_WIDTHS

dialect = Dialect("flow", grammar="flow")


def _dynamic_count(t) -> int:
    return sum(1 for d in getattr(t, "shape", ()) if d is None)


def _dims_text(p, values) -> str:
    return "{" + p.values(values) + "}" if values else ""


def _check_dims(t, values, what: str) -> None:
    n = _dynamic_count(t)
    if n != len(values):
        raise VerifyError(f"{what} set has {n} dynamic dimensions but only {len(values)} dimension values "
                          "are attached")
    for v in values:
        if v.type != T.index:
            raise VerifyError(f"dynamic dimension values must be index, but got '{v.type}'")


@dialect.rule("flow_dims")
def _flow_dims(ctx, children):
    return children[0] or []


# ---- flow.tensor.dynamic_constant -------------------------------------------------------------
def _print_dynamic_constant(p, op) -> None:
    value = op.attr("value")
    p.write("flow.tensor.dynamic_constant", p.op_attr_dict(op, elide=("value",)), " ", p.attr(value), " -> ",
            p.type(op.results[0].type))


def _verify_dynamic_constant(op) -> None:
    value = op.attr("value")
    if not isinstance(value, (DenseElementsAttr, DenseResourceAttr)):
        raise VerifyError("requires attribute 'value' (an elements attribute)")
    vt, rt = value.type, op.results[0].type
    if not isinstance(vt, T.RankedTensorType) or not isinstance(rt, T.RankedTensorType):
        raise VerifyError("expects ranked tensor types")
    if vt.element != rt.element or len(vt.shape) != len(rt.shape) or any(
            d is not None and d != s for s, d in zip(vt.shape, rt.shape)):
        raise VerifyError(f"value type {vt} is not compatible with the result type {rt}")


dialect.op("flow.tensor.dynamic_constant", "A constant whose result type has dynamic dimensions.",
           properties=("value",), verify=_verify_dynamic_constant, print=_print_dynamic_constant)


@dialect.rule("flow_dynamic_constant")
def _flow_dynamic_constant(ctx, children):
    attrs, value, type = children
    return create(ctx, "flow.tensor.dynamic_constant", (), [type], merge_unique_attrs(ctx, {"value": value}, attrs))


# ---- flow.tensor.tie_shape ------------------------------------------------------------------
def _print_tie_shape(p, op) -> None:
    v, *dims = op.operands
    p.write("flow.tensor.tie_shape ", p.value(v), p.op_attr_dict(op), " : ", p.type(v.type), "{",
            p.values(dims), "}")


def _verify_tie_shape(op) -> None:
    v, *dims = op.operands
    if op.results[0].type != v.type:
        raise VerifyError("failed to verify that all of {operand, result} have same type")
    _check_dims(v.type, dims, "value")


dialect.op("flow.tensor.tie_shape", "Attaches the values of a tensor's dynamic dimensions.", traits=(PURE,),
           verify=_verify_tie_shape, print=_print_tie_shape,
           names=OpSignature.of(("operand", "dynamic_dims*"), ("result",)))


@dialect.rule("flow_tie_shape")
def _flow_tie_shape(ctx, children):
    value, attrs, type, dims = children
    operands = [ctx.resolve(value, type)] + [ctx.resolve(d, T.index) for d in dims]
    return create(ctx, "flow.tensor.tie_shape", operands, [type], attrs)


# ---- flow.tensor.bitcast ----------------------------------------------------------------------
def _bitcast_parts(op):
    seg = op.attr("operandSegmentSizes")
    sizes = list(seg.values) if isinstance(seg, DenseArrayAttr) and len(seg.values) == 3 else \
        [1, len(op.operands) - 1, 0]
    src = op.operand("source")
    a = op.operands[1:1 + sizes[1]]
    b = op.operands[1 + sizes[1]:1 + sizes[1] + sizes[2]]
    return src, a, b


def _print_bitcast(p, op) -> None:
    src, a, b = _bitcast_parts(op)
    p.write("flow.tensor.bitcast ", p.value(src), p.op_attr_dict(op, elide=("operandSegmentSizes",)), " : ",
            p.type(src.type), _dims_text(p, a), " -> ", p.type(op.results[0].type), _dims_text(p, b))


def _bits(t):
    e = t.element
    width = getattr(e, "width", None)
    if width is None:
        width = FLOAT_WIDTHS.get(str(e)) if isinstance(e, T.FloatType) else None
    if width is None or None in t.shape:
        return None
    n = 1
    for d in t.shape:
        n *= d
    return n * width


def _verify_bitcast(op) -> None:
    src, a, b = _bitcast_parts(op)
    st, rt = src.type, op.results[0].type
    if not isinstance(st, T.RankedTensorType) or not isinstance(rt, T.RankedTensorType):
        raise VerifyError("expects ranked tensor types")
    _check_dims(st, a, "source")
    _check_dims(rt, b, "result")
    sb, rb = _bits(st), _bits(rt)
    if sb is not None and rb is not None and sb != rb:
        raise VerifyError(f"source and result must have the same size in bits ({sb} vs {rb})")


dialect.op("flow.tensor.bitcast", "Reinterprets the bytes of a tensor as another element type and shape.",
           traits=(PURE,), properties=("operandSegmentSizes",), verify=_verify_bitcast, print=_print_bitcast,
           names=OpSignature.of(("source", "source_dims*", "result_dims*"), ("result",)))


@dialect.rule("flow_bitcast")
def _flow_bitcast(ctx, children):
    value, attrs, src_type, src_dims, dst_type, dst_dims = children
    src_dims, dst_dims = src_dims or [], dst_dims or []
    operands = [ctx.resolve(value, src_type)]
    operands += [ctx.resolve(d, T.index) for d in (*src_dims, *dst_dims)]
    attributes = {"operandSegmentSizes": DenseArrayAttr(T.i32, (1, len(src_dims), len(dst_dims)))}
    return create(ctx, "flow.tensor.bitcast", operands, [dst_type], merge_unique_attrs(ctx, attributes, attrs))
