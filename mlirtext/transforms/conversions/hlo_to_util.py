"""hlo -> util/forwarding for the ops that only carry values:

- `optimization_barrier` becomes IREE's `util.optimization_barrier` (what IREE's
  stablehlo-to-iree-input conversion does), which the later steps keep as a barrier;
- `get_tuple_element` of a value `tuple` built is that operand (tuples exist only between
  the two), and a `tuple` nothing reads any more goes.
"""
from __future__ import annotations

from ...ir.attributes import IntegerAttr
from ..rewriter import RewritePattern
from .build import hlo_names


class OptimizationBarrier(RewritePattern):
    ops = hlo_names("optimization_barrier")

    def match_and_rewrite(self, op, rw) -> bool:
        new = rw.create(op, "util.optimization_barrier", list(op.operands), list(op.result_types))
        rw.replace_op(op, new.results)
        return True


class ForwardTupleElement(RewritePattern):
    ops = hlo_names("get_tuple_element")

    def match_and_rewrite(self, op, rw) -> bool:
        source = getattr(op.operand("operand"), "op", None)
        index = op.attr("index")
        if source is None or source.name not in hlo_names("tuple") or not isinstance(index, IntegerAttr):
            return False
        rw.replace_op(op, [source.operands[index.value]])
        return True


class DropUnusedTuple(RewritePattern):
    ops = hlo_names("tuple")

    def match_and_rewrite(self, op, rw) -> bool:
        if any(r.uses for r in op.results):
            return False
        rw.erase_op(op)
        return True


PATTERNS = [OptimizationBarrier(), ForwardTupleElement(), DropUnusedTuple()]
