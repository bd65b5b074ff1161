"""bufferization: `alloc_tensor`, a tensor whose buffer is allocated where it is made.

`bufferization.alloc_tensor(%d) : tensor<?x4xf32>` has the shape its dynamic sizes give
and unspecified contents (as `tensor.empty`); `copy(%t)` makes it a copy of `%t` (then
no sizes: they are `%t`'s); `size_hint=%n` is the number of entries a sparse tensor
expects. The operands are segmented as MLIR's: sizes, copy, size hint.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import DenseArrayAttr
from .base import Dialect, VerifyError
from .common import create, merge_unique_attrs

dialect = Dialect("bufferization", grammar="bufferization")

_SEGMENTS = "operandSegmentSizes"


def segments(op) -> tuple:
    """(dynamic sizes, copy, size hint) of an alloc_tensor: lists of its operands."""
    seg = op.attributes.get(_SEGMENTS)
    counts = list(seg.values) if isinstance(seg, DenseArrayAttr) else [len(op.operands), 0, 0]
    if len(counts) != 3 or sum(counts) != len(op.operands) or counts[1] > 1 or counts[2] > 1:
        raise VerifyError(f"operand count does not match the '{_SEGMENTS}' attribute")
    sizes, copy = op.operands[:counts[0]], op.operands[counts[0]:counts[0] + counts[1]]
    return list(sizes), list(copy), list(op.operands[counts[0] + counts[1]:])


def _verify_alloc_tensor(op) -> None:
    """MLIR's AllocTensorOp::verify."""
    t = op.results[0].type if len(op.results) == 1 else None
    if not isinstance(t, T.RankedTensorType):
        raise VerifyError(f"result #0 must be ranked tensor of any type values, but got '{t}'")
    sizes, copy, hint = segments(op)
    for v in (*sizes, *hint):
        if v.type != T.index:
            raise VerifyError(f"operand must be index, but got '{v.type}'")
    dynamic = sum(1 for d in t.shape if d is None)
    if copy and sizes:
        raise VerifyError("dynamic sizes not needed when copying a tensor")
    if not copy and len(sizes) != dynamic:
        raise VerifyError(f"expected {dynamic} dynamic sizes")
    if copy and copy[0].type != t:
        raise VerifyError("expected that `copy` and return type match")


def _print_alloc_tensor(p, op) -> None:
    sizes, copy, hint = segments(op)
    p.write(op.name, "(", p.values(sizes), ")")
    if copy:
        p.write(" copy(", p.values(copy), ")")
    if hint:
        p.write(" size_hint=", p.values(hint))
    p.write(p.op_attr_dict(op, elide=(_SEGMENTS,)), " : ", p.type(op.results[0].type))


dialect.op("bufferization.alloc_tensor", "A tensor whose buffer is allocated here: of the shape its dynamic "
           "sizes give, or a copy of `copy`.", operands=(0, None), results=1, regions=0, successors=0, properties=(_SEGMENTS,),
           verify=_verify_alloc_tensor, print=_print_alloc_tensor)


@dialect.rule("bufferization_alloc_tensor")
def _alloc_tensor(ctx, children):
    sizes, copy, hint, attrs, t = children
    sizes = [ctx.resolve(v, T.index) for v in sizes or []]
    copy = [ctx.resolve(copy, t)] if copy is not None else []
    hint = [ctx.resolve(hint, T.index)] if hint is not None else []
    attributes = {_SEGMENTS: DenseArrayAttr(T.i32, (len(sizes), len(copy), len(hint)))}
    return create(ctx, "bufferization.alloc_tensor", [*sizes, *copy, *hint], [t],
                  merge_unique_attrs(ctx, attributes, attrs))


@dialect.rule("bufferization_copy")
def _copy(ctx, children):
    return children[0]


@dialect.rule("bufferization_size_hint")
def _size_hint(ctx, children):
    return children[0]
