"""chlo -> stablehlo for `ragged_dot` with static shapes, one masked `dot_general` per group (the
group count is static: the length of `group_sizes`), as chlo-legalize-to-stablehlo decomposes it:

- the ragged dimension is one of lhs's free dimensions, rhs has a group dimension: group g's rows
  (positions start_g <= i < start_g + size_g along it, start_g the sum of the sizes before it)
  take lhs times rhs[g]; the masked products (every other row zero) are summed, so rows after the
  last group are zero;
- the ragged dimension is a contracting one: group g contracts only its own positions, and the
  result stacks the G products along a new leading dimension.
A ragged batch dimension is not lowered (the interpreter does not run it either).
"""
from __future__ import annotations

from ...dialects.hlo_attrs import dot_numbers_attr, struct_fields
from ...ir import types as T
from ...ir.attributes import DenseArrayAttr, IntegerAttr
from ..rewriter import RewritePattern
from .build import all_static, tensor_of
from .chlo_decompositions import Formulas
from .hlo_decompositions import HloBuilder


def _dims(fields: dict, name: str) -> list:
    value = fields.get(name, [])
    return value if isinstance(value, list) else [value]


class _Groups:
    """Masks selecting each group's positions along lhs's ragged dimension."""

    def __init__(self, h: HloBuilder, lhs, ragged: int, sizes):
        self.h, self.lhs, self.sizes = h, lhs, sizes
        index = sizes.type.element
        self.positions = h.op("iota", [], tensor_of(lhs.type.shape, index), {"iota_dimension": IntegerAttr(ragged, T.i64)})
        self.start = h.constant(0, tensor_of((), index))

    def size(self, g: int):
        h, scalar = self.h, tensor_of((), self.sizes.type.element)
        piece = h.op("slice", [self.sizes], tensor_of((1,), scalar.element),
                     {"start_indices": DenseArrayAttr(T.i64, (g,)), "limit_indices": DenseArrayAttr(T.i64, (g + 1,)),
                      "strides": DenseArrayAttr(T.i64, (1,))})
        return h.op("reshape", [piece], scalar)

    def masked_lhs(self, g: int):
        """lhs with every position outside group g zeroed (and the start moved past the group)."""
        h, t = self.h, self.lhs.type
        end = h.binary("add", self.start, self.size(g))
        bounds = tensor_of(t.shape, self.sizes.type.element)
        f = Formulas(h, bounds)
        inside = h.binary("and", f.compare("GE", self.positions, h.broadcast(self.start, [], bounds)),
                          f.compare("LT", self.positions, h.broadcast(end, [], bounds)))
        self.start = end
        return h.op("select", [inside, self.lhs, h.constant(0, t)], t)


class RaggedDot(RewritePattern):
    ops = ("chlo.ragged_dot",)

    def match_and_rewrite(self, op, rw) -> bool:
        lhs, rhs, sizes = op.operands
        out = op.results[0].type
        fields = struct_fields(op.attr("ragged_dot_dimension_numbers")) or {}
        lb, rb = _dims(fields, "lhs_batching_dimensions"), _dims(fields, "rhs_batching_dimensions")
        lc, rc = _dims(fields, "lhs_contracting_dimensions"), _dims(fields, "rhs_contracting_dimensions")
        ragged, groups = _dims(fields, "lhs_ragged_dimensions"), _dims(fields, "rhs_group_dimensions")
        if not all_static(lhs.type, rhs.type, sizes.type, out) or sizes.type.rank != 1 or len(ragged) != 1 or \
                ragged[0] in lb or lhs.type.element != out.element or rhs.type.element != out.element:
            return False
        h, count = HloBuilder(rw, op), sizes.type.shape[0]
        masks = _Groups(h, lhs, ragged[0], sizes)
        if ragged[0] in lc:   # one product per group, stacked
            part_type = tensor_of(out.shape[1:], out.element)
            numbers = dot_numbers_attr("stablehlo", lb, rb, lc, rc)
            parts = [h.op("reshape", [h.op("dot_general", [masks.masked_lhs(g), rhs], part_type,
                                            {"dot_dimension_numbers": numbers})],
                          tensor_of((1, *part_type.shape), out.element)) for g in range(count)]
            result = parts[0] if count == 1 else h.op("concatenate", parts, out,
                                                       {"dimension": IntegerAttr(0, T.i64)})
        else:
            if len(groups) != 1:
                return False
            (gd,) = groups
            rt = rhs.type
            group_rhs_type = tensor_of([n for d, n in enumerate(rt.shape) if d != gd], rt.element)
            numbers = dot_numbers_attr("stablehlo", lb, [d - (d > gd) for d in rb], lc, [d - (d > gd) for d in rc])
            result = h.constant(0, out)
            for g in range(count):
                start = [0] * rt.rank
                limit = list(rt.shape)
                start[gd], limit[gd] = g, g + 1
                piece = h.op("slice", [rhs], tensor_of([1 if d == gd else n for d, n in enumerate(rt.shape)], rt.element),
                             {"start_indices": DenseArrayAttr(T.i64, tuple(start)),
                              "limit_indices": DenseArrayAttr(T.i64, tuple(limit)),
                              "strides": DenseArrayAttr(T.i64, (1,) * rt.rank)})
                product = h.op("dot_general", [masks.masked_lhs(g), h.op("reshape", [piece], group_rhs_type)], out,
                               {"dot_dimension_numbers": numbers})
                result = h.binary("add", result, product)
        rw.replace_op(op, [result])
        return True


PATTERNS = [RaggedDot()]
