"""Helpers the tosa semantics modules share: result types, attribute readers, integer
wrapping, and the spec's scaling helpers (apply_scale_32/16, count_leading_zeros)."""
from __future__ import annotations

import numpy as np

from ..dialects.tosa import enum_case
from ..ir import types as T
from ..ir.arrays import attr_to_array, dtype_of, unsigned_view, wrap_to_width
from ..ir.attributes import DenseArrayAttr, IntegerAttr
from ..ir.dense import DenseElementsAttr
from .machine import InterpreterError


def out_type(op, index: int = 0):
    return op.results[index].type


def out_dtype(op, index: int = 0) -> np.dtype:
    return dtype_of(out_type(op, index))


def out_width(op, index: int = 0) -> int:
    """Bit width of an integer result element type (i48 -> 48)."""
    e = T.element_type(out_type(op, index))
    if isinstance(e, T.IntegerType):
        return e.width
    return out_dtype(op, index).itemsize * 8


def finish(op, value, index: int = 0) -> np.ndarray:
    """`value` as the result type: cast (integers wrap) and wrapped to odd widths."""
    t = out_type(op, index)
    dtype = dtype_of(t)
    arr = np.asarray(value)
    if dtype.kind in "iu" and arr.dtype.kind in "iub" and arr.dtype != dtype:
        arr = arr.astype(np.int64, copy=False).astype(dtype)
    elif arr.dtype != dtype:
        with np.errstate(all="ignore"):
            arr = arr.astype(dtype)
    return wrap_to_width(arr, t)


def wrap_bits(a: np.ndarray, bits: int) -> np.ndarray:
    """Wrap an int64 array to a signed `bits`-wide value (kept as int64)."""
    if bits >= 64:
        return a.astype(np.int64)
    a = a.astype(np.int64) & ((1 << bits) - 1)
    return np.where(a >= (1 << (bits - 1)), a - (1 << bits), a)


def attr(op, name: str, default=None):
    return op.attributes.get(name, default)


def first_attr(op, *names):
    """The first of `names` the op has (older spellings after the current one), else None."""
    for name in names:
        if name in op.attributes:
            return op.attributes[name]
    return None


def flag(op, name: str, default: bool = False) -> bool:
    a = op.attributes.get(name)
    if a is None:
        return default
    if isinstance(a, IntegerAttr):
        return bool(a.value)
    return bool(getattr(a, "value", default))


def attr_value(a, what: str):
    """The number an IntegerAttr/FloatAttr holds, or a clear error naming `what`."""
    if not isinstance(getattr(a, "value", None), (int, float)):
        raise InterpreterError(f"{what} must be a number, got {a}")
    return a.value


def int_attr(op, name: str, default=None):
    a = op.attributes.get(name)
    return default if a is None else int(attr_value(a, f"attribute '{name}'"))


def dense_attr(op, name: str):
    """The array a dense elements attribute `name` holds, as its own type."""
    a = op.attributes.get(name)
    if not isinstance(a, DenseElementsAttr):
        raise InterpreterError(f"{op.name} needs a dense elements attribute '{name}', got {a}")
    return attr_to_array(a, a.type)


def ints_attr(op, name: str):
    a = op.attributes.get(name)
    if a is None:
        return None
    if isinstance(a, DenseArrayAttr):
        return [int(v) for v in a.values]
    if isinstance(a, DenseElementsAttr):
        return [int(v) for v in np.asarray(attr_to_array(a, a.type)).ravel()]
    items = getattr(a, "items", None)
    if items is not None:
        return [int(attr_value(i, f"attribute '{name}'")) for i in items]
    raise InterpreterError(f"attribute '{name}' is not a list of integers: {a}")


def enum(op, name: str, default: str) -> str:
    a = op.attributes.get(name)
    if a is None:
        return default
    return enum_case(a) or default


def scalar_int(a) -> int:
    """The single value of a zero-point / shift operand (tensor<1xi8> or a scalar)."""
    return int(np.asarray(a).ravel()[0])


def scalar_value(a):
    return np.asarray(a).ravel()[0]


def is_float(a) -> bool:
    return np.asarray(a).dtype.kind in "fcV" or np.asarray(a).dtype.name in (
        "bfloat16", "float8_e5m2", "float8_e4m3fn")


def compute_float(a: np.ndarray) -> np.ndarray:
    """f16/bf16/f8 in f32 for computing; f32/f64 as they are."""
    a = np.asarray(a)
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float32)


def signed_range(bits: int) -> tuple:
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def out_is_unsigned(op, index: int = 0) -> bool:
    e = T.element_type(out_type(op, index))
    return e.is_unsigned if isinstance(e, T.IntegerType) else out_dtype(op, index).kind == "u"


def int_range(op, index: int = 0) -> tuple:
    bits = out_width(op, index)
    if out_is_unsigned(op, index):
        return 0, (1 << bits) - 1
    return signed_range(bits)



def clz(a: np.ndarray) -> np.ndarray:
    bits = a.dtype.itemsize * 8
    x = unsigned_view(a).astype(np.uint64)
    length = np.zeros(x.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):  # binary search for the bit length, on the whole array
        hi = x >> np.uint64(s)
        nz = hi != 0
        length += np.where(nz, s, 0)
        x = np.where(nz, hi, x)
    length += (x != 0).astype(np.int64)
    return bits - length


def apply_scale_32(value, multiplier, shift, double_round):
    """The spec's apply_scale_32 on int64 arrays (exact; the result wraps to i32)."""
    value = value.astype(np.int64)
    multiplier = np.asarray(multiplier, np.int64)
    shift = np.asarray(shift, np.int64)
    one = np.int64(1)
    rnd = np.where(shift > 0, np.left_shift(one, np.maximum(shift - 1, 0)), 0)
    if double_round:
        rnd = rnd + np.where(shift > 31, np.where(value >= 0, 1 << 30, -(1 << 30)), 0)
    with np.errstate(over="ignore"):
        result = (value * multiplier + rnd) >> shift
    return wrap_bits(result, 32)


def apply_scale_16(value, multiplier, shift):
    value = value.astype(np.int64)
    multiplier = np.asarray(multiplier, np.int64)
    shift = np.asarray(shift, np.int64)
    rnd = np.where(shift > 0, np.left_shift(np.int64(1), np.maximum(shift - 1, 0)), 0)
    with np.errstate(over="ignore"):
        return wrap_bits((value * multiplier + rnd) >> shift, 32)
