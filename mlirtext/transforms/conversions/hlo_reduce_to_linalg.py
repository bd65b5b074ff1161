"""hlo -> linalg for reductions TOSA's do not cover: reduce with any body or several inputs, and
reduce_window (padding, base and window dilations). The region's body is copied into a
reduction generic on accumulators that start as the init values.
"""
from __future__ import annotations

from ...dialects.hlo_attrs import int_list
from ...ir import types as T
from .build import empty, hlo_names
from .hlo_generic import HloLoweringPattern, identity_map, affine_map, stablehlo_pad, split_pairs, broadcast_scalar, generic_body, make_generic
from .hlo_scalar import scalarize


class Reduce(HloLoweringPattern):
    """Any reduce TOSA's reductions do not cover: a reduction generic whose body is the region's,
    on accumulators that start as the init values; over an empty set, the init values."""
    ops = hlo_names("reduce")
    signless_safe = True
    empty_operands_ok = True

    def rewrite(self, op, rw) -> bool:
        n = len(op.operands) // 2
        inputs, inits = op.operands[:n], op.operands[n:]
        if 0 in inputs[0].type.shape:
            # A reduced extent is 0 (the results have elements, so no kept one is): the body
            # never runs and each result is its init value everywhere, by the spec's schedule.
            rw.replace_op(op, [broadcast_scalar(rw, op, init, r.type) for init, r in zip(inits, op.results)])
            return True
        rank = inputs[0].type.rank
        dims = set(int_list(op.attr("dimensions")) or [])
        kept = [d for d in range(rank) if d not in dims]
        if not op.regions or not op.regions[0].blocks:
            return False
        region = op.regions[0].blocks[0]
        block = generic_body(inputs, [r.type for r in op.results],
                             lambda b, ins, outs: scalarize(b, region, [*outs, *ins]))
        if block is None:
            return False
        accs = [broadcast_scalar(rw, op, init, r.type) for init, r in zip(inits, op.results)]
        kinds = ["reduction" if d in dims else "parallel" for d in range(rank)]
        out = make_generic(rw, op, inputs, [identity_map(rank)] * n, accs,
                           [affine_map(rank, [f"d{d}" for d in kept])] * n, kinds, block)
        rw.replace_op(op, out.results)
        return True


class ReduceWindow(HloLoweringPattern):
    """Pad (and base-dilate) with the init values, then reduce each window: loops over the
    result and the window (its extent given by a `tensor.empty` of the window's shape, as
    linalg's pooling ops do), the body the region's."""
    ops = hlo_names("reduce_window")
    signless_safe = True

    def rewrite(self, op, rw) -> bool:
        n = len(op.operands) // 2
        inputs, inits = list(op.operands[:n]), op.operands[n:]
        rank = inputs[0].type.rank
        window = int_list(op.attr("window_dimensions"))
        strides = int_list(op.attr("window_strides")) or [1] * rank
        base = int_list(op.attr("base_dilations")) or [1] * rank
        wdil = int_list(op.attr("window_dilations")) or [1] * rank
        lo, hi = split_pairs(op.attr("padding"), rank)
        if window is None or not op.regions or not op.regions[0].blocks:
            return False
        region = op.regions[0].blocks[0]
        wt = T.RankedTensorType(tuple(window), T.i1)
        block = generic_body([wt, *inputs], [r.type for r in op.results],
                             lambda b, ins, outs: scalarize(b, region, [*outs, *ins[1:]]))
        if block is None:
            return False
        if any(lo) or any(hi) or any(d != 1 for d in base):
            inputs = [stablehlo_pad(rw, op, x, v, lo, hi, [d - 1 for d in base]) for x, v in zip(inputs, inits)]
        loops = 2 * rank
        in_map = affine_map(loops, [f"d{d} * {strides[d]} + d{rank + d} * {wdil[d]}" for d in range(rank)])
        accs = [broadcast_scalar(rw, op, init, r.type) for init, r in zip(inits, op.results)]
        kinds = ["parallel"] * rank + ["reduction"] * rank
        out = make_generic(rw, op, [empty(rw, op, wt), *inputs],
                           [affine_map(loops, [f"d{rank + d}" for d in range(rank)])] + [in_map] * n, accs,
                           [affine_map(loops, [f"d{d}" for d in range(rank)])] * n, kinds, block)
        rw.replace_op(op, out.results)
        return True


PATTERNS = [Reduce(), ReduceWindow()]
