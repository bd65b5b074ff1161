"""chlo -> stablehlo for `top_k`, as `chlo-legalize-to-stablehlo` writes it: an iota of the
positions along the last dimension, a stable `stablehlo.sort` of (values, positions) with a
`GT` comparator on the values (TOTALORDER for floats, so NaNs and -0 / +0 have their places;
SIGNED / UNSIGNED for integers), and the first k of both sorted along that dimension.
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.attributes import DenseArrayAttr, IntegerAttr, OpaqueAttr
from ...ir.core import Block, Operation, Region
from ..rewriter import RewritePattern
from .build import all_static, tensor_of
from .hlo_decompositions import HloBuilder


def _compare_kind(element: T.Type) -> str:
    if T.is_float(element):
        return "TOTALORDER"
    return "UNSIGNED" if isinstance(element, T.IntegerType) and element.is_unsigned else "SIGNED"


def _greater_than(element: T.Type, index: T.Type) -> Region:
    """The comparator (a, b, index_a, index_b) -> a > b."""
    value, position = tensor_of((), element), tensor_of((), index)
    block = Block([value, value, position, position])
    a, b = block.arguments[:2]
    attrs = {"comparison_direction": OpaqueAttr("#stablehlo<comparison_direction GT>"),
             "compare_type": OpaqueAttr(f"#stablehlo<comparison_type {_compare_kind(element)}>")}
    compare = Operation("stablehlo.compare", [a, b], [tensor_of((), T.i1)], attrs)
    block.append(compare)
    block.append(Operation("stablehlo.return", [compare.results[0]], []))
    return Region([block])


class TopK(RewritePattern):
    ops = ("chlo.top_k",)

    def match_and_rewrite(self, op, rw) -> bool:
        x = op.operand("operand")
        t = x.type
        values_type, indices_type = (r.type for r in op.results)
        if not all_static(t, values_type, indices_type) or t.rank == 0 or t.element == T.i1:
            return False
        last = t.rank - 1
        h = HloBuilder(rw, op)
        positions = h.op("iota", [], tensor_of(t.shape, indices_type.element),
                         {"iota_dimension": IntegerAttr(last, T.i64)})
        sort = rw.create(op, "stablehlo.sort", [x, positions], [t, positions.type],
                         {"dimension": IntegerAttr(last, T.i64), "is_stable": IntegerAttr(1, T.i1)},
                         [_greater_than(t.element, indices_type.element)])
        k = values_type.shape[last]
        slices = {"start_indices": DenseArrayAttr(T.i64, (0,) * t.rank),
                  "limit_indices": DenseArrayAttr(T.i64, (*t.shape[:last], k)),
                  "strides": DenseArrayAttr(T.i64, (1,) * t.rank)}
        rw.replace_op(op, [h.op("slice", [sort.results[0]], values_type, slices),
                           h.op("slice", [sort.results[1]], indices_type, slices)])
        return True


PATTERNS = [TopK()]
