"""A matmul's B in the micro-kernel's packed layout, as a module constant and as kernel IR.

The layout: B (K x N, per batch) cut into P = ceil(N / 16) panels of 16 columns, each panel's K
rows of 16 floats stored one after the other (P x K x 16 per batch), zeros past column N. It is
what the micro-kernel copies a block of B into before its row tiles read it (ukernels.py), so a
constant B stored this way is read in place: no copy on any call.

In a kernel, a packed argument is unpacked by the ops that say what the layout means, which the
reference device interprets and the micro-kernel recognises instead of running
(`packed_argument`):

    %t = linalg.transpose ins(%packed : [batch x] P x K x 16) permutation = [.., 1, 0, 2]   (K x P x 16)
    %b = tensor.collapse_shape %t [.., [1, 2]]                                                (K x P*16)
    %b' = tensor.extract_slice %b[.., 0, 0] [.., K, N] [.., 1, 1]        (only when N % 16 != 0)
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..dialects.linalg import i64_array, structured_op
from ..ir import types as T
from ..ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr
from ..ir.core import Operation, Value

#: Columns per panel (the micro-kernel's TILE_N).
PANEL = 16


def pack_panels(b: np.ndarray) -> np.ndarray:
    """B (..., K, N) as (..., P, K, 16): panels of 16 columns, each row-major, zeros past N."""
    *lead, K, N = b.shape
    panels = -(-N // PANEL)
    padded = np.zeros((*lead, K, panels * PANEL), dtype=b.dtype)
    padded[..., :N] = b
    return np.ascontiguousarray(np.swapaxes(padded.reshape(*lead, K, panels, PANEL), -2, -3))


def packed_type(b: T.RankedTensorType) -> T.RankedTensorType:
    """The type of B (..., K, N) packed: (..., P, K, 16)."""
    *lead, K, N = b.shape
    return T.RankedTensorType((*lead, -(-N // PANEL), K, PANEL), T.element_type(b))


def filter_matrix(f: T.RankedTensorType) -> T.RankedTensorType:
    """An HWIO filter as the B of its implicit GEMM: (KH * KW * IC) x OC, the same floats."""
    KH, KW, IC, OC = f.shape
    return T.RankedTensorType((KH * KW * IC, OC), T.element_type(f))


def unpacking_ops(packed: Value, b: T.RankedTensorType, filter_shape: Optional[T.RankedTensorType] = None) \
        -> list[Operation]:
    """The ops making B (type `b`) from `packed` (its `packed_type`); the last one's result is B, or
    with `filter_shape` (`b` its `filter_matrix`), B viewed as that HWIO filter."""
    *lead, K, N = b.shape
    panels = -(-N // PANEL)
    rank, element = b.rank, T.element_type(b)
    moved = T.RankedTensorType((*lead, K, panels, PANEL), element)
    empty = Operation("tensor.empty", [], [moved])
    perm = [*range(rank - 2), rank - 1, rank - 2, rank]
    transpose = structured_op("linalg.transpose", [packed], [empty.results[0]], {"permutation": i64_array(perm)})
    groups = [[i] for i in range(rank - 1)] + [[rank - 1, rank]]
    wide = T.RankedTensorType((*lead, K, panels * PANEL), element)
    collapse = Operation("tensor.collapse_shape", [transpose.results[0]], [wide], {"reassociation": _groups(groups)})
    ops = [empty, transpose, collapse]
    if panels * PANEL != N:
        ops.append(Operation("tensor.extract_slice", [collapse.results[0]], [b],
                             {"static_offsets": i64_array([0] * rank), "static_sizes": i64_array(b.shape),
                              "static_strides": i64_array([1] * rank),
                              "operandSegmentSizes": DenseArrayAttr(T.i32, (1, 0, 0, 0))}))
    if filter_shape is not None:
        ops.append(Operation("tensor.expand_shape", [ops[-1].results[0]], [filter_shape],
                             {"reassociation": _groups([[0, 1, 2], [3]]),
                              "static_output_shape": i64_array(filter_shape.shape)}))
    return ops


def _groups(groups: list) -> ArrayAttr:
    return ArrayAttr(tuple(ArrayAttr(tuple(IntegerAttr(i) for i in g)) for g in groups))


def packed_argument(ops: list[Operation], args: list) -> Optional[tuple[Value, Value, int]]:
    """(the kernel argument, B, the number of ops) when `ops` (a kernel's body without its
    `tensor.empty`s) start by unpacking an argument as `unpacking_ops` does (B: an HWIO filter
    when it ends with the filter's view), else None."""
    if len(ops) < 2 or ops[0].name != "linalg.transpose" or ops[1].name != "tensor.collapse_shape":
        return None
    transpose, collapse = ops[0], ops[1]
    packed = transpose.operand("input")
    t = packed.type
    if not any(packed is a for a in args) or not isinstance(t, T.RankedTensorType) or t.rank < 3 or \
            t.shape[-1] != PANEL or T.element_type(t) != T.f32:
        return None
    rank = t.rank - 1
    perm = list(getattr(transpose.attributes.get("permutation"), "values", ()))
    if perm != [*range(rank - 2), rank - 1, rank - 2, rank] or collapse.operand("src") is not transpose.results[0] or \
            len(transpose.results[0].uses) != 1 or len(packed.uses) != 1:
        return None
    if _reassociation(collapse) != [[i] for i in range(rank - 1)] + [[rank - 1, rank]]:
        return None
    b, count = collapse.results[0], 2
    if len(ops) > 2 and ops[2].name == "tensor.extract_slice" and ops[2].operand("source") is b:
        cut = ops[2]
        if list(cut.attr("static_offsets").values) != [0] * rank or \
                list(cut.attr("static_strides").values) != [1] * rank or \
                list(cut.attr("static_sizes").values) != list(cut.results[0].type.shape) or \
                list(cut.results[0].type.shape[:-1]) != list(b.type.shape[:-1]) or \
                not b.type.shape[-1] - PANEL < cut.results[0].type.shape[-1] < b.type.shape[-1] or len(b.uses) != 1:
            return None
        b, count = cut.results[0], 3
    view = ops[count] if len(ops) > count else None
    if view is not None and view.name == "tensor.expand_shape" and view.operand("src") is b and rank == 2 and \
            _reassociation(view) == [[0, 1, 2], [3]] and len(b.uses) == 1:
        b, count = view.results[0], count + 1
    return packed, b, count


def _reassociation(view: Operation) -> list:
    return [[getattr(i, "value", None) for i in g.items] for g in view.attr("reassociation").items]
