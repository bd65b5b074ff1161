"""tensor: the ops with custom syntax that the core needs (tensor.empty)."""
from __future__ import annotations

from ..ir import types as T
from .base import PURE, Dialect, VerifyError
from .common import create

dialect = Dialect("tensor", grammar="tensor")


def _print_empty(p, op) -> None:
    p.write("tensor.empty(", p.values(op.operands), ")", p.op_attr_dict(op), " : ",
            p.type(op.results[0].type))


def _verify_empty(op) -> None:
    t = op.results[0].type
    if not isinstance(t, T.RankedTensorType):
        raise VerifyError("result must be a ranked tensor")
    dynamic = sum(1 for d in t.shape if d is None)
    if len(op.operands) != dynamic:
        raise VerifyError("incorrect number of dynamic sizes, has "
                          f"{len(op.operands)}, expected {dynamic}")


dialect.op("tensor.empty", "A tensor of the given shape with unspecified contents.", traits=(PURE,),
           verify=_verify_empty, print=_print_empty)


@dialect.rule("tensor_empty")
def _tensor_empty(ctx, children):
    uses, attrs, type = children
    operands = [ctx.resolve(u, T.index) for u in (uses or [])]
    return create(ctx, "tensor.empty", operands, [type], attrs)
