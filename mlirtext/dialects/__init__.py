"""The dialects mlirtext knows: their grammars, op declarations and rules.

Adding a dialect: a module here creating a `Dialect` that declares its ops (with
assembly formats: `assembly_format.declare_family`), listed in `DIALECTS`; syntax no
format can say goes in `grammars/<name>.lark` (an entry rule `<name>_op`).
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


def format_grammar() -> tuple:
    """((rule name, Lark text), ...) of every dialect's declared assembly formats."""
    return tuple(pair for d in DIALECTS for pair in d.format_grammar())
