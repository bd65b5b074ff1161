"""Static shapes where the IR already fixes them (MLIR's `tensor.empty` and linalg
canonicalizations `ReplaceEmptyTensorStaticShapeDims`, `InferStaticShapeOfOperands`, and
`tensor.cast` folding):

- `tensor.empty(%c128, %n) : tensor<?x?xT>` with a constant size is
  `tensor.cast (tensor.empty(%n) : tensor<128x?xT>)`;
- a linalg op whose operand is a `tensor.cast` that only forgot sizes works on the cast's
  source instead, so its results get the static sizes, cast back for the old users;
- a cast of a cast is one cast; `util.optimization_barrier` passes a forgetting cast through
  to its result (the barrier hides values from folding, not shapes), and
  `flow.tensor.tie_shape` of such a cast is the cast.

Together they carry a size known at compile time from where it is set to where it is used,
so a program that only looks dynamic (a helper called with constant sizes) compiles to
static buffers. They change types only, never values: `refine-static-shapes` applies them
without folding constants.
"""
from __future__ import annotations

from ...dialects.linalg import segments
from ...ir import types as T
from ...ir.attributes import IntegerAttr
from ..constants import constant_value
from ..rewriter import RewritePattern


def _forgetting_cast_source(value):
    """The source of `value` when a `tensor.cast` made it from a more static tensor."""
    op = getattr(value, "op", None)
    if getattr(op, "name", None) != "tensor.cast":
        return None
    source = op.operand("source")
    before, after = source.type, value.type
    if not (isinstance(before, T.RankedTensorType) and isinstance(after, T.RankedTensorType)):
        return None
    gains = any(a is None and b is not None for a, b in zip(after.shape, before.shape))
    return source if gains else None


class EmptyWithConstantSizes(RewritePattern):
    ops = ("tensor.empty",)

    def match_and_rewrite(self, op, rw) -> bool:
        old = op.results[0].type
        sizes = iter(op.operands)
        shape, dynamic = [], []
        for dim in old.shape:
            if dim is not None:
                shape.append(dim)
                continue
            size = next(sizes)
            known = constant_value(size)
            if isinstance(known, IntegerAttr) and known.value >= 0:
                shape.append(int(known.value))
            else:
                shape.append(None)
                dynamic.append(size)
        if len(dynamic) == len(op.operands):
            return False
        new_type = T.RankedTensorType(tuple(shape), old.element, old.encoding)
        empty = rw.create(op, "tensor.empty", dynamic, [new_type], dict(op.attributes))
        cast = rw.create(op, "tensor.cast", [empty.results[0]], [old])
        rw.replace_op(op, cast.results)
        return True


class StructuredOpOnStaticOperands(RewritePattern):
    """Any destination-style linalg op on tensors: its results take their inits' types."""

    def match_and_rewrite(self, op, rw) -> bool:
        if not op.name.startswith("linalg.") or not op.results:
            return False
        inits = segments(op)[1]
        if len(op.results) != len(inits) or not all(isinstance(v.type, T.RankedTensorType)
                                                    for v in (*inits, *op.results)):
            return False
        sources = [_forgetting_cast_source(v) for v in op.operands]
        if not any(sources):
            return False
        new = op.clone()
        new.set_operands([s if s is not None else v for s, v in zip(sources, op.operands)])
        for result, init in zip(new.results, segments(new)[1]):
            result.type = init.type
        rw.insert_before(op, new)
        rw.replace_op(op, [r if r.type == old.type else rw.create(op, "tensor.cast", [r], [old.type]).results[0]
                           for r, old in zip(new.results, op.results)])
        return True


class CastOfCast(RewritePattern):
    ops = ("tensor.cast",)

    def match_and_rewrite(self, op, rw) -> bool:
        inner = getattr(op.operand("source"), "op", None)
        if getattr(inner, "name", None) != "tensor.cast":
            return False
        origin = inner.operand("source")
        if origin.type == op.results[0].type:
            rw.replace_op(op, [origin])
        else:
            op.set_operand(0, origin)
            rw.changed(op)
            rw.changed(inner)  # it may have become dead
        return True


class BarrierPassesCasts(RewritePattern):
    ops = ("util.optimization_barrier",)

    def match_and_rewrite(self, op, rw) -> bool:
        sources = [_forgetting_cast_source(v) for v in op.operands]
        if not any(sources):
            return False
        operands = [s if s is not None else v for s, v in zip(sources, op.operands)]
        barrier = rw.create(op, op.name, operands, [v.type for v in operands], dict(op.attributes))
        results = [rw.create(op, "tensor.cast", [new], [old.type]).results[0] if new.type != old.type else new
                   for new, old in zip(barrier.results, op.results)]
        rw.replace_op(op, results)
        return True


class TieShapeOfCast(RewritePattern):
    """`flow.tensor.tie_shape` only names sizes its operand has; once a cast says where they
    came from, the cast is all it was."""
    ops = ("flow.tensor.tie_shape",)

    def match_and_rewrite(self, op, rw) -> bool:
        tensor = op.operand("operand")
        if _forgetting_cast_source(tensor) is None:
            return False
        rw.replace_op(op, [tensor])
        return True


PATTERNS = [EmptyWithConstantSizes(), StructuredOpOnStaticOperands(), CastOfCast(), BarrierPassesCasts(),
            TieShapeOfCast()]
