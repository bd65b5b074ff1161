"""canonicalize: folders, constant folding and canonicalization patterns, to a fixed point."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation
from .driver import GreedyDriver
from .passes import Pass
from .patterns import canonicalization_patterns


@dataclass(frozen=True)
class Canonicalizer(Pass):
    name = "canonicalize"
    summary = "Fold ops (constant operands included), apply canonicalization patterns, drop dead ops"
    max_num_rewrites: int = -1  # -1: the driver's own bound

    def run(self, op: Operation) -> None:
        limit = None if self.max_num_rewrites < 0 else self.max_num_rewrites
        GreedyDriver(canonicalization_patterns()).run(op, max_rewrites=limit)


@dataclass(frozen=True)
class RefineStaticShapes(Pass):
    """The shape part of canonicalize alone: compiling a test program with its constants
    unfolded (`compile_module(fold=False)`) still gives its tensors the sizes those constants fix."""
    name = "refine-static-shapes"
    summary = "Give tensors the static sizes that constant sizes and casts already fix (types only)"

    def run(self, op: Operation) -> None:
        from .patterns import static_shapes
        GreedyDriver(static_shapes.PATTERNS, fold=False).run(op)
