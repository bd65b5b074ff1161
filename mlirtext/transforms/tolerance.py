"""How far a float result may move and still count as the same (`--check-semantics`, bisect,
reduce, compare): a module of its own, stdlib only, so that the command line gets its defaults
without importing numpy and the interpreter."""
from __future__ import annotations

from dataclasses import dataclass

ULP_BOUND = 8
RELATIVE_BOUND = 1e-6


@dataclass(frozen=True)
class Tolerance:
    """How far a float result may move: within `ulp` units in the last place, or within
    `relative` of the largest magnitude in that result."""
    ulp: int = ULP_BOUND
    relative: float = RELATIVE_BOUND

    def __str__(self) -> str:
        return f"{self.ulp} ulp or {self.relative:g} relative"
