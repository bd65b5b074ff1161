"""The dialects mlirtext knows: their grammars, op declarations and rules.

Adding a dialect: write `grammars/<name>.lark` (an entry rule `<name>_op`), a
module here creating a `Dialect`, and list it in `DIALECTS`.
"""
from __future__ import annotations

from typing import Optional

from . import (arith, builtin, cf, check, chlo, flow, func, interpreter, linalg, llvm, math, memref, mhlo,
               scf, stablehlo, tensor, tosa, transform, util)
from .base import Dialect, OpDef

DIALECTS: tuple[Dialect, ...] = (
    builtin.dialect, func.dialect, arith.dialect, math.dialect, tensor.dialect,
    stablehlo.dialect, mhlo.dialect, chlo.dialect, tosa.dialect, linalg.dialect, llvm.dialect,
    scf.dialect, memref.dialect, cf.dialect, check.dialect, util.dialect, flow.dialect,
    interpreter.dialect, transform.dialect,
)

_OPS: dict[str, OpDef] = {name: d for dialect in DIALECTS for name, d in dialect.ops.items()}


def lookup(name: str) -> Optional[OpDef]:
    """The declaration of op `name`, or None for an op mlirtext does not know."""
    return _OPS.get(name)


def grammar_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys(d.grammar for d in DIALECTS if d.grammar))
