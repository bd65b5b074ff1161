"""The levels of the compile flow and the conversion that leaves each one.

`--lower-to=LEVEL` starts from the level the input is at (the highest level
whose dialects it uses) and runs each step down to LEVEL, tidying up after
each one with canonicalize and cse.
"""
from __future__ import annotations

from typing import Optional

from ...dialects.registry import Registry, builtin_registry
from ...ir.core import Operation

LEVELS = ("hlo", "tosa", "linalg", "loops", "llvm")

#: Dialects that place a module at a level (checked from the highest level down).
_LEVEL_DIALECTS = {"hlo": {"stablehlo", "mhlo", "chlo"}, "tosa": {"tosa"}, "linalg": {"linalg"},
                   "loops": {"scf", "memref", "cf"}, "llvm": {"llvm"}}

#: level -> the pass that lowers it one level down (absent: not available yet).
STEPS = {"hlo": "convert-hlo-to-tosa", "tosa": "convert-tosa-to-linalg", "linalg": "convert-linalg-to-loops",
         "loops": "convert-loops-to-llvm"}

#: Optimisations run once a step has arrived at a level (besides canonicalize and cse).
ARRIVAL = {"linalg": ["linalg-fuse-elementwise-ops"]}


class UnregisteredOp(ValueError):
    """The module holds an op of a dialect the registry does not know: no conversion can take
    it down, so lowering stops before it starts, naming the op (`op`)."""

    def __init__(self, op: Operation):
        self.op = op
        super().__init__(f"'{op.name}' is an op of the unregistered dialect '{op.dialect}': no conversion "
                         "knows it, so lowering stops at it")


def first_unregistered_op(module: Operation, registry: Optional[Registry] = None) -> Optional[Operation]:
    """The first op of `module` whose dialect `registry` (the built-in one by default) does not know."""
    knows = (registry or builtin_registry()).knows
    return next((op for op in module.walk() if not knows(op.dialect)), None)


def level_of(module: Operation) -> Optional[str]:
    """The highest level whose dialects `module` uses; None when it uses none of them
    (plain arith/math/tensor functions sit at every level)."""
    used = {op.dialect for op in module.walk()}
    for level in LEVELS:
        if used & _LEVEL_DIALECTS[level]:
            return level
    return None


def first_op_at_level(module: Operation, level: str) -> Optional[Operation]:
    """The first op of `module` whose dialect places it at `level` (to point a diagnostic at)."""
    return next((op for op in module.walk() if op.dialect in _LEVEL_DIALECTS.get(level, ())), None)


def lowering_pipeline(module: Operation, target: str) -> str:
    """Pipeline text that takes `module` down to `target`; ValueError says why it cannot."""
    return ",".join(text for _, text in lowering_steps(module, target) if text)


def lowering_steps(module: Operation, target: str, start: Optional[str] = None) -> list[tuple[str, str]]:
    """(level, pipeline text of the step that arrives there) for each level below `module`'s
    down to `target`; ValueError says why it cannot. A module of no level (plain
    arith/math/tensor) sits at every level: from `start`, when given, each level below it
    comes with an empty step; else there is nothing to do."""
    if target not in LEVELS:
        raise ValueError(f"unknown level '{target}' (levels: {', '.join(LEVELS)})")
    unknown = first_unregistered_op(module)
    if unknown is not None:
        raise UnregisteredOp(unknown)
    current = level_of(module)
    if current is None:
        below = LEVELS[LEVELS.index(start) + 1:LEVELS.index(target) + 1] if start is not None else ()
        return [(level, "") for level in below]
    if LEVELS.index(current) > LEVELS.index(target):
        raise ValueError(f"the input is at the {current} level, below {target}: nothing to lower")
    steps = []
    for level in LEVELS[LEVELS.index(current):LEVELS.index(target)]:
        step = STEPS.get(level)
        below = LEVELS[LEVELS.index(level) + 1]
        if step is None:
            raise ValueError(f"lowering from {level} to {below} is not available yet")
        steps.append((below, ",".join([step, "canonicalize", "cse", *ARRIVAL.get(below, [])])))
    return steps
