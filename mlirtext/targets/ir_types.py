"""Types and constants as LLVM IR text (`float`, `<8 x float>`, `{ ptr, ptr }`, `0x3FF0000000000000`).

Floats are written as LLVM's hexadecimal forms, the only ones that are exact for
every value: `0x` + the 16 hex digits of the value as a double for `float` and
`double` (an f32 widens to double exactly), `0xH`/`0xR` + the 16 raw bits for
`half`/`bfloat`.
"""
from __future__ import annotations

import struct

import numpy as np

from ..dialects import llvm_types as LT
from ..ir import types as T
from ..ir.arrays import dense_to_array, dtype_of
from ..ir.attributes import FloatAttr, IntegerAttr
from ..ir.dense import DenseElementsAttr


class Untranslatable(ValueError):
    """Something with no LLVM IR form here (the op translating it turns it into a TranslateError)."""


_FLOATS = {"f16": "half", "bf16": "bfloat", "f32": "float", "f64": "double", "f80": "x86_fp80",
           "f128": "fp128"}


def ir_type(t: T.Type) -> str:
    if isinstance(t, T.IntegerType):
        return f"i{t.width}"
    if isinstance(t, T.IndexType):
        return "i64"
    if isinstance(t, T.FloatType):
        name = _FLOATS.get(t.name)
        if name is None:
            raise Untranslatable(f"type {t} has no LLVM IR form")
        return name
    if isinstance(t, T.VectorType):
        if len(t.shape) != 1:
            raise Untranslatable(f"multi-dimensional vector {t} (LLVM vectors are 1-D)")
        scalable = "vscale x " if t.scalable and t.scalable[0] else ""
        return f"<{scalable}{t.shape[0]} x {ir_type(t.element)}>"
    if isinstance(t, LT.LLVMPointerType):
        return "ptr" if not t.address_space else f"ptr addrspace({t.address_space})"
    if isinstance(t, LT.LLVMArrayType):
        return f"[{t.size} x {ir_type(t.element)}]"
    if isinstance(t, LT.LLVMStructType):
        if t.name is not None:
            return "%" + quote_name(t.name)
        body = ", ".join(ir_type(f) for f in t.body or ())
        return f"<{{ {body} }}>" if t.packed else f"{{ {body} }}" if body else "{}"
    if isinstance(t, LT.LLVMFunctionType):
        params = [ir_type(p) for p in t.params] + (["..."] if t.vararg else [])
        return f"{ir_type(t.result)} ({', '.join(params)})"
    if isinstance(t, LT.LLVMSimpleType) and t.name in ("void", "token", "label", "metadata"):
        return t.name
    raise Untranslatable(f"type {t} has no LLVM IR form")


def quote_name(name: str) -> str:
    """A global or local name as LLVM IR writes it: bare when it can be, else quoted."""
    ok = name and (name[0].isalpha() or name[0] in "$._-") and all(c.isalnum() or c in "$._-" for c in name)
    if ok and name.isascii():
        return name
    return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\{ord(c):02X}" for c in name) + '"'


def float_literal(value: float, t: T.FloatType, bits: int | None = None) -> str:
    """`value` (or the raw `bits` of type t) as an exact LLVM IR float constant."""
    name = t.name
    if name in ("f32", "f64"):
        if bits is not None:
            value = float(np.array(bits, np.uint32 if name == "f32" else np.uint64).view(
                np.float32 if name == "f32" else np.float64))
        elif name == "f32":
            with np.errstate(over="ignore"):
                value = float(np.float32(value))
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if name == "f16":
        raw = bits if bits is not None else int(np.array(value, np.float16).view(np.uint16))
        return "0xH%04X" % raw
    if name == "bf16":
        if bits is None:
            f32 = int(np.array(value, np.float32).view(np.uint32))
            bits = (f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16  # round to nearest even
        return "0xR%04X" % bits
    raise Untranslatable(f"float constants of type {t}")


def scalar_literal(value, t: T.Type) -> str:
    """A Python/numpy scalar as an IR constant of scalar type t."""
    if isinstance(t, T.IntegerType):
        v = int(value)
        if t.width == 1:
            return "true" if v & 1 else "false"
        return str(_signed(v, t.width))
    if isinstance(t, T.FloatType):
        if isinstance(value, np.generic) and t.name in ("f16", "bf16"):
            return float_literal(0.0, t, int(np.asarray(value).view(np.uint16)))
        return float_literal(float(value), t)
    if LT.is_pointer(t):
        if int(value) == 0:
            return "null"
        raise Untranslatable(f"pointer constant {value}")
    raise Untranslatable(f"constants of type {t}")


def _signed(v: int, width: int) -> int:
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


def attr_constant(attr, t: T.Type) -> str:
    """The constant (without its type) an attribute denotes as a value of LLVM type t."""
    from ..ir.attributes import ArrayAttr, StringAttr
    if isinstance(attr, IntegerAttr) and not isinstance(t, (T.VectorType, LT.LLVMArrayType)):
        return scalar_literal(attr.value, t)
    if isinstance(attr, FloatAttr) and not isinstance(t, (T.VectorType, LT.LLVMArrayType)):
        bits = int(attr.hex, 16) if attr.hex is not None and t.name in ("f16", "bf16", "f32", "f64") else None
        if bits is not None and t.name == "f32" and bits > 0xFFFFFFFF:
            bits = None
        return float_literal(attr.value, t, bits)
    if isinstance(attr, StringAttr) and isinstance(t, LT.LLVMArrayType):
        data = attr.value.encode("latin-1", "replace")
        return 'c"' + "".join(chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else f"\\{b:02X}"
                              for b in data) + '"'
    if isinstance(attr, DenseElementsAttr):
        return dense_constant(attr, t)
    if isinstance(attr, (IntegerAttr, FloatAttr)):  # a scalar splatted over a vector or array
        leaf, count = _leaf(t)
        return aggregate_constant(np.full(count, attr.value), t)
    if isinstance(attr, ArrayAttr) and isinstance(t, LT.LLVMStructType) and t.body:
        return "{ " + ", ".join(f"{ir_type(ft)} {attr_constant(a, ft)}" for a, ft in zip(attr.items, t.body)) + " }"
    if isinstance(attr, ArrayAttr) and isinstance(t, LT.LLVMArrayType):
        return "[" + ", ".join(f"{ir_type(t.element)} {attr_constant(a, t.element)}" for a in attr.items) + "]"
    raise Untranslatable(f"the attribute {attr} as a constant of type {t}")


def _leaf(t: T.Type) -> tuple[T.Type, int]:
    """The scalar element of nested arrays/vectors and how many there are."""
    count = 1
    while True:
        if isinstance(t, LT.LLVMArrayType):
            count *= t.size
            t = t.element
        elif isinstance(t, T.VectorType):
            count *= t.shape[0]
            t = t.element
        else:
            return t, count


def dense_constant(attr: DenseElementsAttr, t: T.Type) -> str:
    leaf, count = _leaf(t)
    if not isinstance(leaf, (T.IntegerType, T.FloatType)):
        raise Untranslatable(f"dense constants of element type {leaf}")
    try:
        flat = dense_to_array(attr, dtype_of(leaf), (count,))
    except Exception as e:  # noqa: BLE001 - a size mismatch or an unreadable literal
        raise Untranslatable(f"the dense constant does not fill {t}: {e}") from None
    if isinstance(t, T.FloatType | T.IntegerType):
        return scalar_literal(flat.reshape(-1)[0], t)
    return aggregate_constant(flat, t)


def aggregate_constant(flat: np.ndarray, t: T.Type) -> str:
    """Nested `[...]`/`<...>` constant of array/vector type t from its flat elements."""
    flat = np.ascontiguousarray(flat).reshape(-1)
    if not isinstance(t, (LT.LLVMArrayType, T.VectorType)):
        return scalar_literal(flat[0], t)
    if not flat.view(np.uint8).any():  # all bits zero (-0.0 is not)
        return "zeroinitializer"
    if isinstance(t, LT.LLVMArrayType):
        inner, n = t.element, t.size
        open_, close = "[", "]"
    elif isinstance(t, T.VectorType):
        inner, n = t.element, t.shape[0]
        open_, close = "<", ">"
    else:
        return scalar_literal(flat[0], t)
    step = flat.size // n
    inner_text = ir_type(inner)
    parts = [f"{inner_text} {aggregate_constant(flat[i * step:(i + 1) * step], inner)}" for i in range(n)]
    return open_ + ", ".join(parts) + close


def zero_constant(t: T.Type) -> str:
    if isinstance(t, T.IntegerType):
        return "false" if t.width == 1 else "0"
    if isinstance(t, T.FloatType):
        return float_literal(0.0, t)
    if LT.is_pointer(t):
        return "null"
    return "zeroinitializer"
