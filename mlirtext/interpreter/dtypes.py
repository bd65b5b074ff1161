"""MLIR element types as numpy dtypes, and values as numpy arrays.

Every runtime value is a numpy array: 0-d for scalars (`i32`, `f32`, `index`),
shaped for tensors and vectors. Signless integers are stored as signed numpy
integers of the same width (unsigned ops reinterpret the bits); `i1` is bool.
Low-precision floats come from ml_dtypes when it is installed.
"""
from __future__ import annotations

import numpy as np

from ..ir import types as T

_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_ML_DTYPES = {"bf16": "bfloat16", "f8E5M2": "float8_e5m2", "f8E4M3FN": "float8_e4m3fn",
              "f8E4M3": "float8_e4m3", "f8E5M2FNUZ": "float8_e5m2fnuz", "f8E4M3FNUZ": "float8_e4m3fnuz",
              "f8E4M3B11FNUZ": "float8_e4m3b11fnuz", "f8E3M4": "float8_e3m4",
              "f8E8M0FNU": "float8_e8m0fnu", "f6E2M3FN": "float6_e2m3fn", "f6E3M2FN": "float6_e3m2fn",
              "f4E2M1FN": "float4_e2m1fn"}


class UnsupportedType(ValueError):
    pass


def dtype_of(t: T.Type) -> np.dtype:
    """The numpy dtype for an element type (or the element type of a shaped type)."""
    e = T.element_type(t)
    if isinstance(e, T.IntegerType):
        if e.width == 1:
            return np.dtype(np.bool_)
        for width in (8, 16, 32, 64):
            if e.width <= width:
                kind = "u" if e.is_unsigned else "i"
                return np.dtype(f"{kind}{width // 8}")
        raise UnsupportedType(f"integers wider than 64 bits ({e}) are not supported")
    if isinstance(e, T.IndexType):
        return np.dtype(np.int64)
    if isinstance(e, T.FloatType):
        if e.name in _FLOATS:
            return np.dtype(_FLOATS[e.name])
        name = _ML_DTYPES.get(e.name)
        if name is not None:
            try:
                import ml_dtypes
                return np.dtype(getattr(ml_dtypes, name))
            except (ImportError, AttributeError):
                raise UnsupportedType(f"{e} needs the ml_dtypes package") from None
        raise UnsupportedType(f"float type {e} is not supported")
    if isinstance(e, T.ComplexType):
        inner = T.element_type(e.element)
        return np.dtype(np.complex64 if str(inner) == "f32" else np.complex128)
    if isinstance(e, T.DialectType) and e.text.startswith("quant."):  # quantized: the storage type
        import re
        m = re.match(r"quant\.\w+<\s*([iu])(\d+)", e.text)
        if m and int(m.group(2)) <= 64:
            width = next(w for w in (8, 16, 32, 64) if int(m.group(2)) <= w)
            return np.dtype(f"{m.group(1)}{width // 8}")
    if isinstance(e, T.DialectType) and e.text.startswith("quant.uniform"):
        from .hlo_common import quant_type  # quantized values are their storage integers
        return dtype_of(quant_type(e).storage)
    if isinstance(e, T.DialectType) and e.text == "tosa.mxint8":  # int8 storage, value = int8 * 2^-6
        return np.dtype(np.int8)
    if isinstance(e, T.DialectType) and e.text.startswith("tosa.block_scaled<"):  # held dequantized
        return np.dtype(np.float32)
    raise UnsupportedType(f"type {t} has no numpy representation")


def signed_view(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"i{a.dtype.itemsize}")) if a.dtype.kind == "u" else a


def unsigned_view(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"u{a.dtype.itemsize}")) if a.dtype.kind == "i" else a


def wrap_to_width(a: np.ndarray, t: T.Type) -> np.ndarray:
    """Wrap an integer array to the bit width of `t` (for widths numpy lacks, e.g. i4, i17)."""
    e = T.element_type(t)
    if not isinstance(e, T.IntegerType) or e.width in (1, 8, 16, 32, 64):
        return a
    bits = e.width
    mask = (1 << bits) - 1
    u = a.astype(np.int64) & mask
    if not e.is_unsigned:
        u = np.where(u >= (1 << (bits - 1)), u - (1 << bits), u)
    return u.astype(a.dtype)


def shape_of(t: T.Type) -> tuple:
    return tuple(t.shape) if isinstance(t, T.ShapedType) else ()


#: ml_dtypes' narrow integers (what onnx hands out for INT4, UINT4, INT2, UINT2 tensors).
_NARROW_INTS = ("int2", "int4", "uint2", "uint4")


def narrow_ints_as_storage(a: np.ndarray) -> np.ndarray:
    """An ml_dtypes int2/int4/uint2/uint4 array as the int8/uint8 array that holds such values here
    (`dtype_of(i4)` is int8); any other array as it is."""
    if a.dtype.kind == "V" and a.dtype.name in _NARROW_INTS:
        return a.astype(np.uint8 if a.dtype.name.startswith("u") else np.int8)
    return a


def check_value(value: np.ndarray, t: T.Type, what: str) -> np.ndarray:
    """`value` as the runtime form of type `t`, or a clear error saying what differs."""
    if isinstance(t, T.TupleType):  # HLO tuples are Python tuples
        if not isinstance(value, tuple) or len(value) != len(t.types):
            raise ValueError(f"{what}: expected {t}")
        return tuple(check_value(v, e, f"{what}, element {i}") for i, (v, e) in enumerate(zip(value, t.types)))
    if isinstance(t, T.DialectType) and t.text in ("stablehlo.token", "mhlo.token"):
        from .values import TOKEN
        if value is not TOKEN:
            raise ValueError(f"{what}: expected {t}")
        return value
    dtype = dtype_of(t)
    arr = narrow_ints_as_storage(np.asarray(value))
    if isinstance(t, T.ShapedType):
        want = shape_of(t)
        if arr.ndim != len(want) or any(w is not None and w != d for w, d in zip(want, arr.shape)):
            shape = "x".join(map(str, arr.shape)) or "scalar"
            raise ValueError(f"{what}: expected {t}, got shape {shape}")
    elif arr.ndim != 0:
        raise ValueError(f"{what}: expected a scalar {t}, got shape {'x'.join(map(str, arr.shape))}")
    if arr.dtype != dtype:
        if arr.dtype.kind in "iub" and dtype.kind in "iub" or arr.dtype.kind == dtype.kind or \
                (arr.dtype.kind in "iu" and dtype.kind in "fc"):
            arr = arr.astype(dtype)
        else:
            raise ValueError(f"{what}: expected element type {T.element_type(t)}, got {arr.dtype}")
    return arr
