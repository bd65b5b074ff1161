"""dce: erase pure ops whose results are unused, chains included."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation
from .driver import is_trivially_dead
from .passes import Pass


@dataclass(frozen=True)
class DCE(Pass):
    name = "dce"
    summary = "Erase pure ops whose results are unused"

    def run(self, op: Operation) -> None:
        erase_dead_ops(op)


def erase_dead_ops(root: Operation) -> int:
    """Erase dead ops under `root`, last first, so a dead chain goes in one sweep."""
    erased = 0
    for op in reversed([o for o in root.walk() if o is not root]):
        if op.parent is not None and is_trivially_dead(op):
            op.erase()
            erased += 1
    return erased
