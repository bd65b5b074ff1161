"""fold-static-gathers: a `gather` at one constant index is a slice, and a slice reads through the
transposes and unit-dim reshapes before it.

torch.onnx exports PyTorch's `MultiheadAttention` (a ViT's) as its packed QKV projection reshaped
to 1x197x1x3x768, transposed to 3x197x1x1x768 (the 3 first) and three ONNX Gathers at indices 0,
1 and 2: the transpose is a copy of the whole 197x2304 projection (0.3 ms a layer in the ViT) for
three slices that could read it where it lies. Here, at the hlo level:

    gather(x, constant index i along axis a)  ->  reshape(slice(x, [i : i+1] along a))
    slice(reshape(y)), the reshape only adding or dropping unit dims  ->  reshape(slice(y))
    slice(transpose(x)), where the slice of x transposed moves unit dims only
        ->  reshape(slice(x))

so each of q, k and v is a slice of the projection (3x smaller copies, or none once fused) and the
transpose goes. Each rewrite gives the same elements in the same order (the index is clamped as
the gather clamps it; the dims a reshape adds or drops have one element).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..dialects.hlo_attrs import dims_field, int_field, int_list, struct_fields
from ..ir import types as T
from ..ir.arrays import attr_to_array
from ..ir.attributes import DenseArrayAttr
from ..ir.core import Operation
from .driver import GreedyDriver
from .passes import Pass
from .patterns.common import NoOpWhenSameType
from .rewriter import PatternRewriter, RewritePattern

CONSTANTS = ("stablehlo.constant", "mhlo.constant", "arith.constant")


def _op(value, *names: str) -> Optional[Operation]:
    op = getattr(value, "op", None)
    return op if isinstance(op, Operation) and op.name in names else None


def _dialect(op: Operation) -> str:
    return op.name.split(".")[0]


def _slice(rw: PatternRewriter, before: Operation, value, start: list, limit: list, strides: list):
    shape = tuple(-(-(hi - lo) // s) for lo, hi, s in zip(start, limit, strides))
    t = T.RankedTensorType(shape, value.type.element, value.type.encoding)
    return rw.create(before, f"{_dialect(before)}.slice", [value], [t],
                     {"start_indices": DenseArrayAttr(T.i64, tuple(start)),
                      "limit_indices": DenseArrayAttr(T.i64, tuple(limit)),
                      "strides": DenseArrayAttr(T.i64, tuple(strides))}).result


def _reshape(rw: PatternRewriter, before: Operation, value, t: T.RankedTensorType):
    if value.type == t:
        return value
    return rw.create(before, f"{_dialect(before)}.reshape", [value], [t], {}).result


def _non_unit(shape) -> list:
    return [d for d in shape if d != 1]


def _ranked(*values) -> bool:
    return all(isinstance(v.type, T.RankedTensorType) and v.type.has_static_shape for v in values)


class ConstantGatherToSlice(RewritePattern):
    """gather(x, one constant index vector) -> reshape(slice(x)): the window at the clamped start."""
    ops = ("stablehlo.gather", "mhlo.gather")

    def match_and_rewrite(self, op: Operation, rw: PatternRewriter) -> bool:
        x, indices = op.operands
        const = _op(indices, *CONSTANTS)
        f = struct_fields(op.attr("dimension_numbers"))
        sizes = int_list(op.attr("slice_sizes"))
        if const is None or f is None or sizes is None or not _ranked(x, indices, op.results[0]):
            return False
        if dims_field(f, "operand_batching_dims") or dims_field(f, "start_indices_batching_dims"):
            return False
        start_map = dims_field(f, "start_index_map")
        ivd = int_field(f, "index_vector_dim", 0)
        vector = indices.type.shape[ivd] if ivd < indices.type.rank else 1
        if indices.type.num_elements != vector or vector != len(start_map) or len(sizes) != x.type.rank:
            return False   # (more than one index vector: a real gather)
        try:
            index = np.asarray(attr_to_array(const.attr("value"), indices.type)).reshape(-1)
        except Exception:  # noqa: BLE001 - a constant this reader does not take: leave the gather
            return False
        start = [0] * x.type.rank
        for k, d in enumerate(start_map):
            start[d] = int(min(max(int(index[k]), 0), x.type.shape[d] - sizes[d]))
        window = _slice(rw, op, x, start, [s + n for s, n in zip(start, sizes)], [1] * x.type.rank)
        rw.replace_op(op, [_reshape(rw, op, window, op.results[0].type)])
        return True


class SliceThroughUnitReshape(RewritePattern):
    """slice(reshape(y)) -> reshape(slice(y)) when the reshape only adds or drops unit dims."""
    ops = ("stablehlo.slice", "mhlo.slice")

    def match_and_rewrite(self, op: Operation, rw: PatternRewriter) -> bool:
        reshape = _op(op.operand("operand"), "stablehlo.reshape", "mhlo.reshape")
        if reshape is None or not _ranked(reshape.operand("operand"), op.operand("operand"), op.results[0]):
            return False
        y, shape = reshape.operand("operand"), op.operand("operand").type.shape
        if _non_unit(y.type.shape) != _non_unit(shape):
            return False
        bounds = [(lo, hi, s) for lo, hi, s, n in zip(int_list(op.attr("start_indices")), int_list(op.attr("limit_indices")),
                                                       int_list(op.attr("strides")), shape) if n != 1]
        start, limit, strides, k = [], [], [], 0
        for n in y.type.shape:   # (non-unit dims in the same order on both sides)
            lo, hi, s = bounds[k] if n != 1 else (0, 1, 1)
            k += n != 1
            start.append(lo), limit.append(hi), strides.append(s)
        window = _slice(rw, op, y, start, limit, strides)
        rw.replace_op(op, [_reshape(rw, op, window, op.results[0].type)])
        return True


class SliceThroughTranspose(RewritePattern):
    """slice(transpose(x)) -> reshape(slice(x)) when the transpose of the slice moves unit dims only."""
    ops = ("stablehlo.slice", "mhlo.slice")

    def match_and_rewrite(self, op: Operation, rw: PatternRewriter) -> bool:
        transpose = _op(op.operand("operand"), "stablehlo.transpose", "mhlo.transpose")
        if transpose is None or not _ranked(transpose.operand("operand"), op.results[0]):
            return False
        perm = int_list(transpose.attr("permutation"))
        start, limit, strides = (int_list(op.attr(k)) for k in ("start_indices", "limit_indices", "strides"))
        x = transpose.operand("operand")
        if perm is None or None in (start, limit, strides):
            return False
        # result dim i is x's dim perm[i]: the same bounds on x's side
        at = {p: i for i, p in enumerate(perm)}
        window_shape = [-(-(limit[at[d]] - start[at[d]]) // strides[at[d]]) for d in range(x.type.rank)]
        moved = [window_shape[p] for p in perm]
        if _non_unit(moved) != _non_unit(window_shape):
            return False   # (the slice still needs a real transpose)
        window = _slice(rw, op, x, [start[at[d]] for d in range(x.type.rank)],
                        [limit[at[d]] for d in range(x.type.rank)], [strides[at[d]] for d in range(x.type.rank)])
        rw.replace_op(op, [_reshape(rw, op, window, op.results[0].type)])
        return True


@dataclass(frozen=True)
class FoldStaticGathers(Pass):
    name = "fold-static-gathers"
    summary = "A gather at one constant index as a slice; slices read through transposes and unit reshapes"

    def run(self, op: Operation) -> None:
        # (ONNX's Gather is followed by a Cast to its own type: left, it would copy each slice again)
        GreedyDriver([ConstantGatherToSlice(), SliceThroughUnitReshape(), SliceThroughTranspose(),
                      NoOpWhenSameType("stablehlo.convert", "mhlo.convert")], fold=False).run(op)
