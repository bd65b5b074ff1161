"""fold-dot-general-broadcasts: a `dot_general` operand that is a `broadcast_in_dim` along batch
dimensions only (the same matrix for every batch) is contracted unbroadcast, those batch dimensions
becoming free dimensions of the other operand.

torch-mlir lowers ONNX's MatMul of a rank-3 activation by a 2-D weight (a ViT's attention input
projection in PyTorch's (sequence, batch, features) layout: 197x1x768 by 768x2304) as the weight
broadcast to 197x768x2304 and a batched matmul of 197 one-row products: 1.4 GB written and read on
every call, where one 197x768 by 768x2304 GEMM reads 7 MB. Here the batch joins the rows:

    dot_general(x[B,M,K], broadcast_in_dim(w[K,N]) : [B,K,N], batching [0]x[0], contracting [2]x[1])
      -> dot_general(x, w, contracting [2]x[0]) : [B,M,N]

The result keeps its type; where dropping the batching dims reorders its dimensions (a broadcast
lhs: w[M,K] against x[B,K,N] gives [M,B,N]) a transpose puts them back.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..dialects.hlo_attrs import dot_dims, dot_numbers_attr, int_list
from ..ir import types as T
from ..ir.core import Operation
from .channels_last import transpose
from .driver import GreedyDriver
from .passes import Pass
from .rewriter import PatternRewriter, RewritePattern

BROADCASTS = ("stablehlo.broadcast_in_dim", "mhlo.broadcast_in_dim")


def _batch_broadcast(value, batch: list[int]) -> Optional[Operation]:
    """The broadcast_in_dim that makes `value` when it adds dims among `batch` and nothing else
    (every dim it keeps keeps its size), else None."""
    op = getattr(value, "op", None)
    if not isinstance(op, Operation) or op.name not in BROADCASTS:
        return None
    source, t = op.operand("operand").type, value.type
    dims = int_list(op.attr("broadcast_dimensions"))
    if dims is None or not isinstance(source, T.RankedTensorType) or not isinstance(t, T.RankedTensorType):
        return None
    if any(source.shape[j] != t.shape[d] for j, d in enumerate(dims)):
        return None   # a size-1 dim stretched: not one matrix repeated along the batch
    added = [d for d in range(t.rank) if d not in dims]
    return op if added and all(d in batch for d in added) else None


def _labels(rank: int, batch: list[int], contract: list[int], side: int) -> list[tuple]:
    """What each dim of an operand is: ("b", i) batch pair i, ("c", k) contracting pair k, (side, d) free."""
    return [("b", batch.index(d)) if d in batch else ("c", contract.index(d)) if d in contract else (side, d)
            for d in range(rank)]


class FoldBroadcastIntoDotGeneral(RewritePattern):
    """dot_general(x, broadcast(w)) along batch dims -> dot_general(x, w) (see the module's doc)."""
    ops = ("stablehlo.dot_general", "mhlo.dot_general")

    def match_and_rewrite(self, op: Operation, rw: PatternRewriter) -> bool:
        dims = dot_dims(op.attr("dot_dimension_numbers"))
        operands = list(op.operands)
        if dims is None or not all(isinstance(v.type, T.RankedTensorType) for v in (*operands, op.results[0])):
            return False
        batch = [dims["lhs_batching_dimensions"], dims["rhs_batching_dimensions"]]
        contract = [dims["lhs_contracting_dimensions"], dims["rhs_contracting_dimensions"]]
        labels = [_labels(v.type.rank, batch[s], contract[s], s) for s, v in enumerate(operands)]
        # StableHLO's result order: batch pairs, lhs free dims, rhs free dims.
        old = [("b", i) for i in range(len(batch[0]))] + [x for x in labels[0] + labels[1] if x[0] in (0, 1)]
        # (the rhs first: a weight on the right keeps the result's order)
        side = next((s for s in (1, 0) if _batch_broadcast(operands[s], batch[s]) is not None), None)
        if side is None:
            return False
        broadcast = operands[side].op
        operands[side] = broadcast.operand("operand")
        labels[side] = [labels[side][d] for d in int_list(broadcast.attr("broadcast_dimensions"))]
        # A batch pair the broadcast added is now a free dim of the other operand, keeping its label.
        kept = [x for x in labels[side] if x[0] == "b"]
        contracted = [("c", k) for k in range(len(contract[0]))]
        free = [[x for x in labels[s] if x not in kept and x[0] != "c"] for s in (0, 1)]
        new = kept + free[0] + free[1]
        t = op.results[0].type
        size = dict(zip(old, t.shape))
        attrs = dict(op.attributes)
        attrs["dot_dimension_numbers"] = dot_numbers_attr(
            op.dialect, *([labels[s].index(x) for x in kept] for s in (0, 1)),
            *([labels[s].index(x) for x in contracted] for s in (0, 1)))
        dot = rw.create(op, op.name, operands, [T.RankedTensorType(tuple(size[x] for x in new), t.element,
                                                                   t.encoding)], attrs)
        rw.replace_op(op, [transpose(rw, op, dot.result, [new.index(x) for x in old])])
        return True


@dataclass(frozen=True)
class FoldDotGeneralBroadcasts(Pass):
    name = "fold-dot-general-broadcasts"
    summary = "Contract a dot_general operand broadcast along batch dims unbroadcast (one GEMM, not one per batch)"

    def run(self, op: Operation) -> None:
        GreedyDriver([FoldBroadcastIntoDotGeneral()], fold=False).run(op)
