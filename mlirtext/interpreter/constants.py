"""Attributes to numpy values: scalars and dense elements literals."""
from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..ir.attributes import FloatAttr, IntegerAttr
from ..ir.dense import DenseElementsAttr
from .dtypes import dtype_of, shape_of


def attr_to_array(attr, type: T.Type) -> np.ndarray:
    """The value an attribute denotes, as the runtime form of `type`."""
    dtype = dtype_of(type)
    if isinstance(attr, (IntegerAttr, FloatAttr)):
        return np.array(_scalar(attr.value, dtype), dtype=dtype)
    if isinstance(attr, DenseElementsAttr):
        return dense_to_array(attr, dtype, shape_of(type))
    raise ValueError(f"cannot turn attribute {attr} into a value")


def _scalar(v, dtype: np.dtype):
    if dtype.kind in "iu":
        bits = dtype.itemsize * 8
        v = int(v) & ((1 << bits) - 1)
        if dtype.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return v
    if dtype.kind == "b":
        return bool(v)
    if dtype.kind == "c":
        part = np.dtype(f"f{dtype.itemsize // 2}")
        re_im = v if isinstance(v, (tuple, list)) else (v, 0)
        return complex(*(float(_scalar(x, part)) for x in re_im))
    if isinstance(v, str):  # a hex bit pattern kept from the source
        bits = int(v, 16)
        return np.array(bits, dtype=f"u{dtype.itemsize}").view(dtype)
    return v


def dense_to_array(attr: DenseElementsAttr, dtype: np.dtype, shape: tuple) -> np.ndarray:
    if attr.hex is not None:
        raw = bytes.fromhex(attr.hex[2:])
        count = int(np.prod(shape)) if shape else 1
        if dtype.kind == "b" and len(raw) * 8 >= count and len(raw) != count:
            flat = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")[:count].astype(bool)
        else:
            flat = np.frombuffer(raw, dtype=dtype).copy()
        if flat.size == 1 and count != 1:
            return np.full(shape, flat[0], dtype=dtype)
        return flat.reshape(shape)
    values = [_scalar(v, dtype) for v in attr.values]
    if attr.splat or (len(values) == 1 and int(np.prod(shape, dtype=np.int64)) != 1):
        return np.full(shape, values[0] if values else 0, dtype=dtype)
    return np.array(values, dtype=dtype).reshape(shape)


def array_to_attr(value: np.ndarray, type: T.Type):
    """The attribute that denotes `value` as type `type` (inverse of `attr_to_array`):
    a DenseElementsAttr for shaped types, an IntegerAttr/FloatAttr for scalars.
    Values that do not print exactly as decimals (non-finite, low-precision floats)
    are kept as bit patterns, as MLIR prints them."""
    from ..ir.attributes import float_bits_hex
    arr = np.asarray(value)
    if not isinstance(type, T.ShapedType):
        scalar = arr.reshape(()).item()
        if isinstance(type, T.FloatType):
            return FloatAttr(float(scalar), type)
        return IntegerAttr(int(scalar), type)
    elt = T.element_type(type)
    flat = arr.reshape(-1)
    splat = _is_splat(flat)
    items = flat[:1] if splat else flat
    if isinstance(elt, T.FloatType):
        if elt.name in ("f16", "f32", "f64") and np.isfinite(items).all():
            values = tuple(float(v) for v in items)
        elif float_bits_hex(0.0, elt.name) is not None:
            values = tuple(float_bits_hex(float(v), elt.name) for v in items)
        else:  # formats without a decimal form that round-trips here: raw bytes
            return DenseElementsAttr(type, (), False, "0x" + np.ascontiguousarray(flat).tobytes().hex().upper())
    elif isinstance(elt, T.ComplexType):
        values = tuple((float(v.real), float(v.imag)) for v in items)
    else:
        values = tuple(int(v) for v in items)
    return DenseElementsAttr(type, values, splat)


def _is_splat(flat: np.ndarray) -> bool:
    """All elements have the same bits (so NaNs and -0.0 count exactly)."""
    if flat.size == 0:
        return False
    rows = np.ascontiguousarray(flat).view(np.uint8).reshape(flat.size, -1)
    return bool((rows == rows[0]).all())
