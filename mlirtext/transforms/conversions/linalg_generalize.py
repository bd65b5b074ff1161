"""Elementwise named linalg ops (`linalg.add`, `linalg.exp`, ...) as `linalg.generic`.

Upstream MLIR removed these named ops in favour of `linalg.elementwise`, so current MLIR
(`iree-opt` 3.13) no longer reads them. The tosa and linalg levels generalize them (the
conversions into those levels include this pattern): the same operands,
identity maps, all loops parallel, and the body the named op already carries.
"""
from __future__ import annotations

from ...dialects.linalg import ELEMENTWISE_BINARY, ELEMENTWISE_UNARY, segments
from ..rewriter import RewritePattern
from .hlo_generic import identity_map, make_generic

#: The named ops removed upstream (select included: it became `linalg.elementwise` too).
REMOVED_ELEMENTWISE = frozenset(f"linalg.{n}" for n in (*ELEMENTWISE_UNARY, *ELEMENTWISE_BINARY, "select"))


class GeneralizeRemovedElementwise(RewritePattern):
    ops = tuple(sorted(REMOVED_ELEMENTWISE))

    def match_and_rewrite(self, op, rw) -> bool:
        ins, outs = segments(op)
        rank = getattr(outs[0].type, "rank", None)
        if "indexing_maps" in op.attributes or rank is None or not op.results or not op.regions[0].blocks:
            return False  # broadcasting and buffer forms are left to the loops level
        if any(getattr(v.type, "shape", None) != outs[0].type.shape for v in ins):
            return False
        body = op.regions[0].blocks[0]
        op.regions[0].blocks.clear()  # the body moves to the generic
        maps = [identity_map(rank)] * (len(ins) + len(outs))
        generic = make_generic(rw, op, ins, maps[:len(ins)], outs, maps[len(ins):], ["parallel"] * rank, body)
        rw.replace_op(op, generic.results)
        return True


PATTERNS = [GeneralizeRemovedElementwise()]
