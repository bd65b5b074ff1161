"""The IR and numpy: element types as dtypes, attributes as arrays and back.

Every runtime value is a numpy array: 0-d for scalars (`i32`, `f32`, `index`),
shaped for tensors and vectors. Signless integers are stored as signed numpy
integers of the same width (unsigned ops reinterpret the bits); `i1` is bool.
Low-precision floats come from ml_dtypes when it is installed. `!stablehlo.token`
and `!mhlo.token` values are the `TOKEN` singleton; HLO tuples are Python tuples.

Everything that turns IR into numpy values (constant folding, lowerings, code
generation, the VM, importers, the interpreter) shares this one module.
"""
from __future__ import annotations

import re

import numpy as np

from ..limits import check_array
from . import types as T
from .attributes import FloatAttr, IntegerAttr, float_bits_hex
from .dense import DenseElementsAttr

_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_ML_DTYPES = {"bf16": "bfloat16", "f8E5M2": "float8_e5m2", "f8E4M3FN": "float8_e4m3fn",
              "f8E4M3": "float8_e4m3", "f8E5M2FNUZ": "float8_e5m2fnuz", "f8E4M3FNUZ": "float8_e4m3fnuz",
              "f8E4M3B11FNUZ": "float8_e4m3b11fnuz", "f8E3M4": "float8_e3m4",
              "f8E8M0FNU": "float8_e8m0fnu", "f6E2M3FN": "float6_e2m3fn", "f6E3M2FN": "float6_e3m2fn",
              "f4E2M1FN": "float4_e2m1fn"}


#: The storage type of a quantized type: `!quant.uniform<i8:f32, 0.5>` is held as int8.
_QUANT_STORAGE = re.compile(r"quant\.\w+<\s*(ui|u|si|i)(\d+)")


class UnsupportedType(ValueError):
    pass


def is_float_dtype(dtype: np.dtype) -> bool:
    """A real float dtype: numpy's own, or one of ml_dtypes' (bfloat16, the f8 types, ...)."""
    return dtype.kind == "f" or dtype.name in _ML_DTYPES.values()


class Token:
    """The only value of the token types: it orders side effects and carries no data."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "token"


TOKEN = Token()


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
        m = _QUANT_STORAGE.match(e.text)
        if m:
            return _storage_dtype(m.group(1), int(m.group(2)), e)
    if isinstance(e, T.DialectType) and e.text == "tosa.mxint8":  # int8 storage, value = int8 * 2^-6
        return np.dtype(np.int8)
    if isinstance(e, T.DialectType) and e.text.startswith("tosa.block_scaled<"):  # held dequantized
        return np.dtype(np.float32)
    raise UnsupportedType(f"type {t} has no numpy representation")


def _storage_dtype(kind: str, width: int, t: T.Type) -> np.dtype:
    if width > 64:
        raise UnsupportedType(f"integers wider than 64 bits ({t}) are not supported")
    bits = next(w for w in (8, 16, 32, 64) if width <= w)
    return np.dtype(f"{'u' if kind.startswith('u') else 'i'}{bits // 8}")


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


def reinterpret_bits(array, element: T.IntegerType, dtype: np.dtype) -> np.ndarray:
    """The integers whose `element.width` low bits are those of `array`'s, as `element` reads
    them: signless as two's complement (255 : ui8 is -1 : i8), unsigned as 0 .. 2^w-1."""
    array = np.asarray(array)
    width = element.width
    if width == 1:
        return array.astype(dtype)
    if width == 64:
        bits = array.astype(np.int64 if array.dtype.kind == "i" else np.uint64).view(np.uint64)
        return bits.view(np.uint64 if element.is_unsigned else np.int64).astype(dtype)
    bits = array.astype(np.int64) & ((1 << width) - 1)
    if not element.is_unsigned:
        bits = np.where(bits >= 1 << (width - 1), bits - (1 << width), bits)
    return bits.astype(dtype)


def shape_of(t: T.Type) -> tuple:
    return tuple(t.shape) if isinstance(t, T.ShapedType) else ()


def check_allocation(t: T.ShapedType, shape: tuple) -> None:
    """limits.MemoryLimitError when an array of `t` with `shape` (`t`'s own, or the sizes a dynamic
    `t` has at run time) is above the memory limit: asked before the array is made."""
    what = t if tuple(t.shape) == tuple(shape) else f"{t} of shape {'x'.join(map(str, shape))}"
    check_array(shape, dtype_of(t).itemsize, what)


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
    """The array of a dense literal (limits.MemoryLimitError, before it is made, when it is above
    the memory limit: a splat of 10^11 elements is one value in the text)."""
    check_array(shape, dtype.itemsize, attr.type)
    if attr.is_raw:
        raw = attr.raw_bytes()
        count = int(np.prod(shape)) if shape else 1
        if dtype.kind == "b" and len(raw) * 8 >= count and len(raw) != count:
            flat = np.unpackbits(np.frombuffer(raw, np.uint8), bitorder="little")[:count].astype(bool)
        else:
            flat = np.frombuffer(raw, dtype=dtype).copy()
        if flat.size == 1 and count != 1:
            return np.full(shape, flat[0], dtype=dtype)
        return flat.reshape(shape)
    memo = attr.array_memo
    if memo is not None and memo[0] == dtype and memo[1] == tuple(shape):
        return memo[2].copy()   # (a copy: the caller may write to it)
    values = attr.values if _plain(attr.values, dtype) else [_scalar(v, dtype) for v in attr.values]
    if attr.splat or (len(values) == 1 and int(np.prod(shape, dtype=np.int64)) != 1):
        return np.full(shape, values[0] if len(values) else 0, dtype=dtype)
    array = np.array(values, dtype=dtype).reshape(shape)
    attr.remember_array(dtype, tuple(shape), array.copy())
    return array


def _plain(values: tuple, dtype: np.dtype) -> bool:
    """Whether numpy reads `values` as `dtype` exactly as `_scalar` would, element by element:
    floats and ints as a float type, bools and ints as bool, ints within an integer type's range
    (a folded constant holds tens of thousands of them; `_scalar` on each is 20 times slower)."""
    kinds = set(map(type, values))
    if dtype.kind == "f":
        return kinds <= {float, int}
    if dtype.kind == "b":
        return kinds <= {bool, int}
    if dtype.kind in "iu" and kinds <= {int} and values:
        info = np.iinfo(dtype)
        return info.min <= min(values) and max(values) <= info.max
    return False


def array_to_attr(value: np.ndarray, type: T.Type):
    """The attribute that denotes `value` as type `type` (inverse of `attr_to_array`):
    a DenseElementsAttr for shaped types, an IntegerAttr/FloatAttr for scalars.
    Values that do not print exactly as decimals (non-finite, low-precision floats)
    are kept as bit patterns, as MLIR prints them."""
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
    exact = False   # whether numpy reads `values` back as `arr`, bit for bit
    if isinstance(elt, T.FloatType):
        if elt.name in ("f16", "f32", "f64") and np.isfinite(items).all():
            values = tuple(items.astype(np.float64).tolist())
            exact = True
        elif float_bits_hex(0.0, elt.name) is not None:
            values = tuple(float_bits_hex(float(v), elt.name) for v in items)
        else:  # formats without a decimal form that round-trips here: raw bytes
            return DenseElementsAttr(type, raw=np.ascontiguousarray(flat).tobytes())
    elif isinstance(elt, T.ComplexType):
        values = tuple((float(v.real), float(v.imag)) for v in items)
    else:
        values = tuple(map(int, items.tolist()))
        exact = True
    attr = DenseElementsAttr(type, values, splat)
    if exact and not splat and arr.dtype == dtype_of(type):
        attr.remember_array(arr.dtype, arr.shape, arr.copy())
    return attr


def array_to_bytes_attr(value: np.ndarray, type: T.ShapedType) -> DenseElementsAttr:
    """`value` as a dense attribute of its raw bytes (`dense<"0x...">`, as torch-mlir writes
    weights): for the large arrays the compiler makes itself (packed weights), where a decimal
    attribute costs a Python float per element to make and again to read."""
    return DenseElementsAttr(type, raw=np.ascontiguousarray(value, dtype=dtype_of(type)).tobytes())


def _is_splat(flat: np.ndarray) -> bool:
    """All elements have the same bits (so NaNs and -0.0 count exactly)."""
    if flat.size == 0:
        return False
    rows = np.ascontiguousarray(flat).view(np.uint8).reshape(flat.size, -1)
    return bool((rows == rows[0]).all())
