"""Verification and shape rules of the HLO family (stablehlo, mhlo, chlo).

`VERIFIERS` maps a stablehlo op name ("stablehlo.dot_general") to its check;
mhlo and chlo declarations look up the stablehlo name of the same op (or their
own name where no stablehlo op exists). Rules follow the StableHLO spec.
"""
from __future__ import annotations

from typing import Callable

from ..ir.core import Operation

VERIFIERS: dict[str, Callable[[Operation], None]] = {}


def verifier_for(name: str) -> Callable[[Operation], None]:
    """The check for op `name`, looked up when it runs (so declarations need no order)."""
    def verify(op: Operation) -> None:
        check = VERIFIERS.get(name)
        if check is not None:
            check(op)
    return verify
