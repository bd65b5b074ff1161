"""Constant ops of every dialect: reading their value, and making new ones.

Folding produces attributes; they become ops again as the constant op of the
dialect that folded (stablehlo folds to `stablehlo.constant`, tosa to
`tosa.const`, the rest to `arith.constant`), as MLIR's `materializeConstant`.
"""
from __future__ import annotations

from typing import Optional

from ..ir import types as T
from ..ir.attributes import Attribute
from ..ir.core import Operation, Value

#: constant op name -> the attribute holding its value.
CONSTANT_OPS = {"arith.constant": "value", "stablehlo.constant": "value", "mhlo.constant": "value",
                "tosa.const": "values", "llvm.mlir.constant": "value"}

#: dialect -> the op its folds materialize as.
_MATERIALIZE = {"stablehlo": "stablehlo.constant", "mhlo": "mhlo.constant", "chlo": "stablehlo.constant",
                "tosa": "tosa.const", "llvm": "llvm.mlir.constant"}


def constant_value(value: Value) -> Optional[Attribute]:
    """The attribute `value` is known to be, when a constant op defines it."""
    op = getattr(value, "op", None)
    if not isinstance(op, Operation):
        return None
    key = CONSTANT_OPS.get(op.name)
    if key is None:
        return None
    return op.attributes.get(key) or (op.attr("value") if op.name == "tosa.const" else None)


def is_constant(op: Operation) -> bool:
    return op.name in CONSTANT_OPS


def materialize(rewriter, before: Operation, attr: Attribute, type: T.Type, dialect: str) -> Operation:
    """A constant op of `dialect`'s kind for `attr`, inserted before `before`."""
    name = _MATERIALIZE.get(dialect, "arith.constant")
    if name != "arith.constant" and not isinstance(type, T.ShapedType) and dialect != "llvm":
        name = "arith.constant"  # hlo and tosa constants are tensors; scalars stay arith
    return rewriter.create(before, name, (), [type], {CONSTANT_OPS[name]: attr})
