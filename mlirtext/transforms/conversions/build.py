"""Small builders the conversions share: constants and shape values of the target dialects."""
from __future__ import annotations

import numpy as np

from ...interpreter.constants import array_to_attr
from ...ir import types as T
from ...ir.attributes import DenseArrayAttr, OpaqueAttr
from ...ir.core import Operation, Value


def tensor_of(shape, element: T.Type) -> T.RankedTensorType:
    return T.RankedTensorType(tuple(shape), element)


def tosa_const(rw, before: Operation, value, type: T.RankedTensorType) -> Value:
    """`tosa.const` holding `value` (an array or scalar, broadcast to `type`)."""
    from ...interpreter.dtypes import dtype_of
    array = np.broadcast_to(np.asarray(value, dtype=dtype_of(type)), type.shape)
    return rw.create(before, "tosa.const", (), [type], {"values": array_to_attr(array, type)}).result


def tosa_shape(rw, before: Operation, dims) -> Value:
    """`tosa.const_shape` of `dims`: the shape operand of reshape, tile, slice, pad."""
    dims = [int(d) for d in dims]
    attr = array_to_attr(np.array(dims, np.int64), tensor_of([len(dims)], T.index))
    return rw.create(before, "tosa.const_shape", (), [T.DialectType(f"tosa.shape<{len(dims)}>")],
                     {"values": attr}).result


def i32_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i32, tuple(int(v) for v in values))


def tosa_enum(kind: str, case: str) -> OpaqueAttr:
    return OpaqueAttr(f"#tosa.{kind}<{case}>")
