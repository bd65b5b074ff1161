"""StableHLO / MHLO conversions: convert, bitcast_convert, uniform_quantize / dequantize,
reduce_precision.

- convert (reference interpreter semantics): to i1 is `!= 0` (of the real part for complex);
  complex to real keeps the real part; float to integer rounds toward zero, saturates at the
  integer range and gives 0 for NaN (APFloat::convertToInteger); to floats rounds to nearest
  even.
- bitcast_convert reinterprets the bits, little-endian; between widths the last dimension
  grows or shrinks by the width ratio (i1 counts as one bit).
- Quantized values are their storage integers; `quantize` rounds half to even and clamps
  to the storage range.
"""
from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..ir.arrays import dtype_of, wrap_to_width
from .hlo_common import dequantize, fit, int_attr, np_dtype, quant_type, quantize
from .machine import InterpreterError
from .registry import impl


def _kind(a: np.ndarray) -> str:
    k = a.dtype.kind
    return k if k in "biufc" else "f"


# ---- convert -----------------------------------------------------------------------------------
def _float_to_int(x: np.ndarray, t) -> np.ndarray:
    """Round toward zero, saturate to the range of `t`, NaN -> 0 (APFloat::convertToInteger)."""
    e = T.element_type(t)
    bits = e.width
    if e.is_unsigned:
        lo, hi = 0, (1 << bits) - 1
    else:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    x = np.trunc(x.astype(np.float64))
    dt = dtype_of(t)
    work = np.uint64 if e.is_unsigned else np.int64
    mid = np.clip(np.where(np.isnan(x), 0, x), max(lo, -2.0 ** 63), min(hi, 2.0 ** 62))
    out = mid.astype(work)
    out = np.where(x >= float(hi), np.array(hi, dtype=work), out)
    out = np.where(x <= float(lo), np.array(lo, dtype=work), out)
    out = np.where(np.isnan(x), np.array(0, dtype=work), out)
    return out.astype(dt)


def convert_array(a: np.ndarray, t) -> np.ndarray:
    """`stablehlo.convert` of `a` to element type of `t` (a type, not a dtype)."""
    e = T.element_type(t)
    dt = dtype_of(t)
    k = _kind(a)
    with np.errstate(all="ignore"):
        if dt.kind == "b":
            src = a.real if k == "c" else a
            if k == "f" and src.dtype.kind == "V":
                src = src.astype(np.float32)
            return np.asarray(src != 0)
        if k == "c" and dt.kind != "c":
            a = a.real
            k = "f"
        if isinstance(e, T.IntegerType):
            if k == "f":
                return fit_type(_float_to_int(a, e), t)
            if k == "b":
                return a.astype(dt)
            return fit_type(a.astype(dt), t)
        if dt.kind == "c":
            if k == "b":
                a = a.astype(np.int8)
            if k == "f" and a.dtype.kind == "V":
                a = a.astype(np.float32)
            return a.astype(dt)
        # to a float type
        if k == "b":
            return a.astype(np.float32).astype(dt)
        if k in "iu" and a.dtype.itemsize * 8 > 24 and (dt.kind == "V" or dt.itemsize < 4):
            # int -> narrow float in one rounding: go through float64 only when exact
            return a.astype(np.float64).astype(dt)
        return a.astype(dt)


def fit_type(arr, t):
    return wrap_to_width(arr, t)


@impl("stablehlo.convert", "mhlo.convert")
def _convert(interp, op, args):
    (a,) = args
    src_q = quant_type(op.operand("operand").type)
    if src_q is not None:
        a = dequantize(a, src_q)
    t = op.results[0].type
    q = quant_type(t)
    if q is not None:
        return [quantize(a, q)]
    return [convert_array(np.asarray(a), t)]


# ---- quantization --------------------------------------------------------------------------------
@impl("stablehlo.uniform_quantize", "mhlo.uniform_quantize")
def _uniform_quantize(interp, op, args):
    (a,) = args
    src_q = quant_type(op.operand("operand").type)
    if src_q is not None:
        a = dequantize(a, src_q)
    q = quant_type(op.results[0].type)
    if q is None:
        raise InterpreterError("uniform_quantize must produce a quantized tensor")
    return [quantize(a, q)]


@impl("stablehlo.uniform_dequantize", "mhlo.uniform_dequantize")
def _uniform_dequantize(interp, op, args):
    (a,) = args
    q = quant_type(op.operand("operand").type)
    if q is None:
        raise InterpreterError("uniform_dequantize expects a quantized tensor")
    return [fit(op, dequantize(a, q))]


# ---- reduce_precision ------------------------------------------------------------------------
def reduce_precision(x: np.ndarray, exponent_bits: int, mantissa_bits: int) -> np.ndarray:
    """The reference interpreter's bit-level rounding to (exponent_bits, mantissa_bits)."""
    dt = x.dtype
    width = dt.itemsize * 8
    try:
        import ml_dtypes
        info = ml_dtypes.finfo(dt)
    except (ImportError, ValueError, TypeError):
        info = np.finfo(dt)
    src_mant = int(info.nmant)
    src_exp = width - src_mant - 1
    udt = np.dtype(f"u{dt.itemsize}")
    u = x.view(udt).astype(np.uint64)
    if mantissa_bits < src_mant:
        last = np.uint64(1 << (src_mant - mantissa_bits))
        base_bias = (last >> np.uint64(1)) - np.uint64(1)
        last_bit = (u & last) >> np.uint64(src_mant - mantissa_bits)
        u = (u + last_bit + base_bias) & ~(last - np.uint64(1))
        if width < 64:
            u = u & np.uint64((1 << width) - 1)
    if exponent_bits < src_exp:
        sign_mask = np.uint64(1 << (width - 1))
        exp_mask = np.uint64(((1 << src_exp) - 1) << src_mant)
        bias = (1 << (src_exp - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        max_e = np.uint64((bias + reduced_bias) << src_mant)
        min_e = np.uint64((bias - reduced_bias) << src_mant)
        xe = u & exp_mask
        signed_zero = u & sign_mask
        signed_inf = signed_zero | exp_mask
        u = np.where(xe > max_e, signed_inf, u)
        u = np.where(xe <= min_e, signed_zero, u)
    out = u.astype(udt).view(dt)
    nan = np.isnan(x.astype(np.float64) if dt.kind == "V" else x)
    if mantissa_bits > 0:
        return np.where(nan, x, out)
    return np.where(nan, np.array(np.inf, dtype=dt), out)


@impl("stablehlo.reduce_precision", "mhlo.reduce_precision")
def _reduce_precision(interp, op, args):
    (a,) = args
    return [reduce_precision(np.asarray(a), int_attr(op, "exponent_bits"), int_attr(op, "mantissa_bits"))]


# ---- bitcast_convert ----------------------------------------------------------------------
def _storage_type(t):
    q = quant_type(t)
    return q.storage if q is not None else T.element_type(t)


def _bit_width(t) -> int:
    e = _storage_type(t)
    if isinstance(e, T.IntegerType):
        return e.width
    return np_dtype(t).itemsize * 8


def _to_bits(a: np.ndarray, t) -> np.ndarray:
    """Each element's bits, least significant first: shape a.shape + (width,)."""
    e = _storage_type(t)
    w = _bit_width(t)
    if a.dtype.kind == "b":
        return a.astype(np.uint8)[..., None]
    if isinstance(e, T.IntegerType) and w not in (8, 16, 32, 64):
        u = a.astype(np.int64).astype(np.uint64) & np.uint64((1 << w) - 1)
        return ((u[..., None] >> np.arange(w, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)
    raw = np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (a.dtype.itemsize,))
    return np.unpackbits(raw, axis=-1, bitorder="little")


def _from_bits(bits: np.ndarray, t) -> np.ndarray:
    e = _storage_type(t)
    w = _bit_width(t)
    dt = np_dtype(t)
    if dt.kind == "b":
        return bits[..., 0].astype(bool)
    if isinstance(e, T.IntegerType) and w not in (8, 16, 32, 64):
        u = (bits.astype(np.uint64) << np.arange(w, dtype=np.uint64)).sum(axis=-1, dtype=np.uint64)
        return wrap_to_width(u.astype(np.int64).astype(dt), e)
    packed = np.packbits(bits, axis=-1, bitorder="little")
    return np.ascontiguousarray(packed).view(dt).reshape(bits.shape[:-1])


@impl("stablehlo.bitcast_convert", "mhlo.bitcast_convert")
def _bitcast_convert(interp, op, args):
    (a,) = args
    a = np.asarray(a)
    src_t, dst_t = op.operand("operand").type, op.results[0].type
    w_in, w_out = _bit_width(src_t), _bit_width(dst_t)
    dt = np_dtype(dst_t)
    if w_in == w_out and a.dtype.itemsize == dt.itemsize and a.dtype.kind != "b" and dt.kind != "b" \
            and w_in in (8, 16, 32, 64, 128):
        return [np.ascontiguousarray(a).view(dt).reshape(a.shape)]
    bits = _to_bits(a, src_t)
    if w_in > w_out:
        if w_in % w_out:
            raise InterpreterError(f"bitcast_convert from {w_in} to {w_out} bits: widths do not divide")
        bits = bits.reshape(a.shape + (w_in // w_out, w_out))
    elif w_in < w_out:
        if w_out % w_in or not a.shape or a.shape[-1] * w_in != w_out:
            raise InterpreterError(f"bitcast_convert from {w_in} to {w_out} bits needs a last dimension "
                                   f"of {w_out // max(w_in, 1)}")
        bits = bits.reshape(a.shape[:-1] + (w_out,))
    return [_from_bits(bits, dst_t)]
