"""hlo -> linalg for `map`: one `linalg.generic` over the result whose body is the map's region
made scalar (`scalarize`: its ops on 0-d tensors become arith/math ops on the elements), as
`stablehlo-legalize-to-linalg` lowers it. StableHLO's map applies over every dimension in order.
"""
from __future__ import annotations

from ...dialects.hlo_attrs import int_list
from .build import empty, hlo_names
from .hlo_generic import identity_map, HloLoweringPattern, generic_body, make_generic
from .hlo_scalar import scalarize


class Map(HloLoweringPattern):
    ops = hlo_names("map")

    def rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        dims = int_list(op.attr("dimensions"))
        if dims is not None and list(dims) != list(range(t.rank)) or len(op.regions) != 1:
            return False
        region = op.regions[0].blocks[0]
        block = generic_body(list(op.operands), [t], lambda b, ins, outs: scalarize(b, region, list(ins)))
        if block is None:
            return False
        rank = t.rank
        out = make_generic(rw, op, list(op.operands), [identity_map(rank)] * len(op.operands), [empty(rw, op, t)],
                           [identity_map(rank)], ["parallel"] * rank, block)
        rw.replace_op(op, out.results)
        return True


PATTERNS = [Map()]
