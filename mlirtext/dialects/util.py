"""util (IREE): `util.unfoldable_constant` and `util.optimization_barrier`.

Both are identities the compiler must not see through: an unfoldable constant
is a constant value that folding and constant propagation leave alone (end-to-end
tests use it to keep inputs opaque), a barrier returns its operands unchanged.
"""
from __future__ import annotations

from ..ir.attributes import IntegerAttr, TypeAttr
from .base import Dialect, VerifyError
from .common import create

dialect = Dialect("util", grammar="util")


# ---- util.unfoldable_constant ---------------------------------------------------------
def _typed(value):
    if isinstance(value, TypeAttr):
        return None
    return getattr(value, "type", None)


def _print_unfoldable(p, op) -> None:
    value = op.attr("value")
    text = p.attr(value)
    if isinstance(value, IntegerAttr) and " : " not in text and text not in ("true", "false"):
        text = f"{text} : {p.type(value.type)}"  # MLIR writes `1 : i64` here
    attrs = p.op_attr_dict(op, elide=("value",))
    p.write("util.unfoldable_constant", attrs, " ", text)


def _verify_unfoldable(op) -> None:
    value = op.attr("value")
    t = _typed(value)
    if t is None:
        raise VerifyError("requires attribute 'value' to be a typed attribute")
    if len(op.results) != 1 or op.results[0].type != t:
        raise VerifyError(f"result type must match the type of 'value' ({t})")


dialect.op("util.unfoldable_constant", "A constant the compiler must not fold or propagate.",
           properties=("value",), verify=_verify_unfoldable, print=_print_unfoldable)


@dialect.rule("util_unfoldable_constant")
def _util_unfoldable_constant(ctx, children):
    attrs, value = children
    t = _typed(value)
    if t is None:
        raise ctx.fail("expected a typed attribute (for example `1 : i32` or `dense<...> : tensor<...>`)")
    attributes = {"value": value}
    for key, v in (attrs or {}).items():
        if key == "value":
            raise ctx.fail("attribute 'value' given twice")
        attributes[key] = v
    return create(ctx, "util.unfoldable_constant", (), [t], attributes)


# ---- util.optimization_barrier ------------------------------------------------------
def _print_barrier(p, op) -> None:
    p.write("util.optimization_barrier", p.op_attr_dict(op))
    if op.operands:
        p.write(" ", p.values(op.operands), " : ", p.types(op.operand_types))


def _verify_barrier(op) -> None:
    if op.operand_types != op.result_types:
        raise VerifyError("failed to verify that all of {operands, results} have same type")


dialect.op("util.optimization_barrier", "Returns its operands unchanged; blocks optimisation across it.",
           verify=_verify_barrier, print=_print_barrier)


@dialect.rule("util_optimization_barrier")
def _util_optimization_barrier(ctx, children):
    attrs, uses, types = children
    types = types or []
    operands = ctx.resolve_all(uses, types)
    return create(ctx, "util.optimization_barrier", operands, types, attrs)
