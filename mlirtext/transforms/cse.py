"""cse: an op equal to one that dominates it (same name, operands, attributes, result
types; pure, no regions) is replaced by it. Scopes follow the region tree: values
above a region are visible in it unless its op is isolated from above."""
from __future__ import annotations

from collections import ChainMap
from dataclasses import dataclass

from ..dialects import lookup
from ..dialects.base import ISOLATED
from ..ir.core import Operation, Region
from .driver import is_pure
from .passes import Pass
from .rewriter import PatternRewriter


@dataclass(frozen=True)
class CSE(Pass):
    name = "cse"
    summary = "Eliminate common subexpressions"

    def run(self, op: Operation) -> None:
        rewriter = PatternRewriter()
        for region in op.regions:
            _cse_region(region, ChainMap(), rewriter)


def _key(op: Operation):
    key = (op.name, tuple(map(id, op.operands)), tuple(sorted(op.attributes.items())),
           tuple(r.type for r in op.results))
    try:
        hash(key)
    except TypeError:  # an attribute without a hash cannot be compared cheaply: keep the op
        return None
    return key


def _cse_region(region: Region, outer: ChainMap, rewriter: PatternRewriter) -> None:
    # In a region of several blocks, only ops of the same block (and those above the region)
    # are known to dominate: a conservative but always correct scope.
    for block in region.blocks:
        known = outer.new_child()
        for op in list(block.ops):
            if op.regions:
                definition = lookup(op.name)
                isolated = definition is not None and definition.has(ISOLATED)
                for nested in op.regions:
                    _cse_region(nested, ChainMap() if isolated else known.new_child(), rewriter)
                continue
            if not op.results or not is_pure(op):
                continue
            key = _key(op)
            if key is None:
                continue
            existing = known.get(key)
            if existing is None:
                known[key] = op
            else:
                rewriter.replace_op(op, existing.results)
