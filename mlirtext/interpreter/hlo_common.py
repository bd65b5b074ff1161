"""Helpers the HLO (stablehlo / mhlo / chlo) semantics share: result dtypes, casting
into a result type, attribute readers, and `!quant.uniform` element types."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..dialects.hlo_attrs import enum_word, int_list
from ..ir import types as T
from ..ir.arrays import dtype_of, wrap_to_width
from ..ir.attributes import IntegerAttr, StringAttr, UnitAttr


# ---- quantized element types ------------------------------------------------------------
@dataclass(frozen=True)
class QuantType:
    """`!quant.uniform<i8<-127:127>:f32:1, {0.1:-30, 0.5}>` (per-axis when `axis` is set)."""
    storage: T.Type
    expressed: T.Type
    scales: tuple
    zero_points: tuple
    axis: Optional[int]
    storage_min: int
    storage_max: int

    def scale_zp(self, shape: tuple):
        """Scales and zero points broadcastable against an array of `shape`."""
        s = np.asarray(self.scales, np.float64)
        z = np.asarray(self.zero_points, np.float64)
        if self.axis is not None and len(shape) > self.axis:
            view = [1] * len(shape)
            view[self.axis] = -1
            s, z = s.reshape(view), z.reshape(view)
        elif s.size == 1:
            s, z = s.reshape(()), z.reshape(())
        return s, z


_QUANT = re.compile(r"quant\.uniform<\s*(\w+)(?:<\s*(-?\d+)\s*:\s*(-?\d+)\s*>)?\s*:\s*(\w+)\s*(?::\s*(\d+))?\s*,\s*(.*)>\s*$",
                    re.S)
_CACHE: dict = {}


def quant_type(t) -> Optional[QuantType]:
    """The quantized element type of `t` (a tensor of quant.uniform or the type itself), or None."""
    e = T.element_type(t)
    if not isinstance(e, T.DialectType) or not e.text.startswith("quant.uniform"):
        return None
    q = _CACHE.get(e.text)
    if q is not None:
        return q
    m = _QUANT.match(e.text)
    if not m:
        raise ValueError(f"cannot read the quantized type {e}")
    storage = T.scalar_type_from_name(m.group(1))
    expressed = T.scalar_type_from_name(m.group(4))
    if storage is None or not isinstance(storage, T.IntegerType):
        raise ValueError(f"unsupported storage type in {e}")
    axis = int(m.group(5)) if m.group(5) is not None else None
    body = m.group(6).strip().strip("{}")
    scales, zps = [], []
    for part in body.split(","):
        part = part.strip()
        if not part:
            continue
        s, _, z = part.partition(":")
        scales.append(float(s))
        zps.append(int(z) if z.strip() else 0)
    bits = storage.width
    if storage.is_unsigned:
        lo, hi = 0, (1 << bits) - 1
    else:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if m.group(2) is not None:
        lo, hi = int(m.group(2)), int(m.group(3))
    q = QuantType(storage, expressed, tuple(scales), tuple(zps), axis, lo, hi)
    _CACHE[e.text] = q
    return q


def dequantize(x: np.ndarray, q: QuantType) -> np.ndarray:
    s, z = q.scale_zp(x.shape)
    return ((x.astype(np.float64) - z) * s).astype(dtype_of(q.expressed))


def quantize(x: np.ndarray, q: QuantType) -> np.ndarray:
    """Spec: round_nearest_even(x / scale + zero_point), clamped to the storage range."""
    s, z = q.scale_zp(np.shape(x))
    v = np.rint(np.asarray(x, np.float64) / s + z)
    v = np.clip(v, q.storage_min, q.storage_max)
    return v.astype(dtype_of(q.storage))


# ---- dtypes and results -------------------------------------------------------------------
def np_dtype(t) -> np.dtype:
    """The numpy dtype of a tensor type (quantized tensors: their storage type)."""
    q = quant_type(t)
    if q is not None:
        return dtype_of(q.storage)
    return dtype_of(t)


def result_type(op, index: int = 0):
    return op.results[index].type


def fit(op, value, index: int = 0) -> np.ndarray:
    """`value` in the runtime form of result `index`: its dtype, wrapped to its width."""
    return fit_like(op.results[index].type, value)


def fit_like(t, value) -> np.ndarray:
    """`value` in the runtime form of type `t`: its dtype, wrapped to its width."""
    dt = np_dtype(t)
    arr = np.asarray(value)
    if arr.dtype != dt:
        with np.errstate(all="ignore"):
            arr = arr.astype(dt)
    q = quant_type(t)
    return wrap_to_width(arr, q.storage if q is not None else t)


def is_unsigned(t) -> bool:
    e = T.element_type(t)
    return isinstance(e, T.IntegerType) and e.is_unsigned


# ---- attributes ----------------------------------------------------------------------------
def ints(op, name: str, default=None) -> Optional[list]:
    attr = op.attributes.get(name)
    if attr is None:
        return default
    v = int_list(attr)
    if v is None:
        raise ValueError(f"attribute '{name}' is not a list of integers: {attr}")
    return v


def int_attr(op, name: str, default=None):
    attr = op.attributes.get(name)
    if attr is None:
        return default
    if isinstance(attr, IntegerAttr):
        return int(attr.value)
    v = int_list(attr)
    if v is not None and len(v) == 1:
        return v[0]
    raise ValueError(f"attribute '{name}' is not an integer: {attr}")


def bool_attr(op, name: str, default: bool = False) -> bool:
    attr = op.attributes.get(name)
    if attr is None:
        return default
    if isinstance(attr, UnitAttr):
        return True
    if isinstance(attr, IntegerAttr):
        return bool(attr.value)
    return default


def enum_attr(op, name: str, default: Optional[str] = None) -> Optional[str]:
    attr = op.attributes.get(name)
    if attr is None:
        return default
    if isinstance(attr, StringAttr):
        return attr.value
    w = enum_word(attr)
    if w is None:
        raise ValueError(f"cannot read attribute '{name}': {attr}")
    return w


def float_compute_dtype(dt: np.dtype) -> np.dtype:
    """Where to compute an op on floats of `dt` so one rounding gives the result: f64 for
    f32/f64 (the reference interpreter upcasts to double), f32 for the narrow floats."""
    if dt.kind == "c":
        return np.dtype(np.complex128)
    return np.dtype(np.float64)
