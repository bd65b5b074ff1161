"""Weights imported as arguments, baked back into the module as constants.

When torch-mlir cannot import a module with its weights inline (a transformers `BertModel`:
"Could not find state mapping for buffer"), the importer imports it with the weights as `@main`'s
trailing arguments and then puts each one back as the constant the inline import would have made
(`stablehlo.constant`, `tosa.const` or `arith.constant`, its bytes as a hex `dense<...>`), so the
user gets the module they asked for: `@main` takes only the model's inputs.
"""
from __future__ import annotations

import numpy as np

from ..dialects.func import function_type
from ..ir import types as T
from ..ir.attributes import ArrayAttr, TypeAttr
from ..ir.core import Operation
from ..ir.dense import DenseElementsAttr

#: level -> (the constant op of that level, its value attribute)
CONSTANT_OPS = {"stablehlo": ("stablehlo.constant", "value"), "tosa": ("tosa.const", "values"),
                "linalg": ("arith.constant", "value")}


class CannotBake(Exception):
    """The module's @main does not take the weights as its last arguments (with their types)."""


def _main(module: Operation) -> Operation:
    for op in module.walk():
        if op.name == "func.func" and getattr(op.attr("sym_name"), "value", None) == "main":
            return op
    raise CannotBake("the imported module has no @main")


def _constant_attr(value: np.ndarray, t) -> DenseElementsAttr:
    if not isinstance(t, T.RankedTensorType) or tuple(t.shape) != value.shape:
        raise CannotBake(f"a weight of shape {value.shape} is passed as {t}")
    return DenseElementsAttr(t, raw=np.ascontiguousarray(value).tobytes())


def bake_weights(module: Operation, values: list, level: str) -> None:
    """Replace @main's last `len(values)` arguments by constants holding `values` (in place)."""
    fn = _main(module)
    block = fn.regions[0].blocks[0]
    ftype = function_type(fn)
    keep = len(block.arguments) - len(values)
    if keep < 0:
        raise CannotBake(f"@main takes {len(block.arguments)} arguments, fewer than the {len(values)} weights")
    name, key = CONSTANT_OPS[level]
    first = block.ops[0] if block.ops else None
    for arg, value in zip(block.arguments[keep:], values):
        const = Operation(name, [], [arg.type], {key: _constant_attr(np.asarray(value), arg.type)})
        if first is None:
            block.append(const)
        else:
            block.insert_before(first, const)
        arg.replace_all_uses_with(const.results[0])
    del block.arguments[keep:]
    fn.attributes["function_type"] = TypeAttr(T.FunctionType(tuple(ftype.inputs[:keep]), ftype.results))
    arg_attrs = fn.attr("arg_attrs")
    if isinstance(arg_attrs, ArrayAttr):
        fn.attributes["arg_attrs"] = ArrayAttr(tuple(arg_attrs.items[:keep]))
