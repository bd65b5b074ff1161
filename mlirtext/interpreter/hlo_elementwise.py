"""StableHLO / MHLO elementwise semantics: binary arithmetic and bitwise ops, compare, select,
clamp, constant (unary ops and math functions: `hlo_unary.py`).

Follows the StableHLO spec and its reference interpreter (`stablehlo/reference/Element.cpp`):

- The signedness of integers comes from the element type: `ui*` are unsigned, `i*`/`si*`
  signed; integers wrap at their width (i2, i4 ... via `wrap_to_width`).
- Integer division and remainder by zero, and INT_MIN / -1, are left undefined by the spec;
  we give XLA's results: x / 0 = -1 (all ones), x % 0 = x, INT_MIN / -1 = INT_MIN,
  INT_MIN % -1 = 0. Remainder has the sign of the dividend (C fmod), for floats too.
- Shifts by the width or more (amounts read as unsigned): 0 for shift_left and
  shift_right_logical, the sign for shift_right_arithmetic (APInt's shl/lshr/ashr).
- maximum / minimum on floats are IEEE 754 maximum/minimum: NaN propagates and -0 < +0;
  on complex numbers they compare (real, imag) lexicographically; on booleans or / and.
- Transcendental functions compute in double and round once to the result type, as the
  reference interpreter does (bf16/f16/f8 included).
- power on integers: exponentiation by squaring; a negative exponent gives 0 unless the
  base is 1 or -1.
"""
from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..ir.arrays import attr_to_array
from .hlo_common import dequantize, enum_attr, fit, np_dtype, quant_type, quantize
from .machine import InterpreterError
from .registry import impl

NARROW_FLOATS = ("float16", "bfloat16")


def value_kind(a: np.ndarray) -> str:
    """'b' bool, 'i' signed, 'u' unsigned, 'f' float (numpy or ml_dtypes), 'c' complex."""
    k = a.dtype.kind
    if k in "biufc":
        return k
    return "f"  # ml_dtypes floats report kind 'V'


def is_float_dtype(dt: np.dtype) -> bool:
    return dt.kind == "f" or (dt.kind == "V" and dt.names is None)


def logical_width(op, index: int = 0) -> int:
    t = op.operands[index].type
    q = quant_type(t)
    e = q.storage if q is not None else T.element_type(t)
    if isinstance(e, T.IntegerType):
        return e.width
    return np_dtype(t).itemsize * 8


# ---- quantized operands: dequantize, compute, quantize ------------------------------------
def _dequantized_args(op, args):
    out = []
    for v, a in zip(op.operands, args):
        q = quant_type(v.type)
        out.append(dequantize(a, q) if q is not None else a)
    return out


def _requantize(op, values):
    res = []
    for i, v in enumerate(values):
        q = quant_type(op.results[i].type)
        res.append(quantize(v, q) if q is not None else fit(op, v, i))
    return res


def _quant_aware(fn):
    """Elementwise ops on quantized tensors run on the dequantized values (spec:
    dequantize_op_quantize)."""
    def run(interp, op, args):
        if any(quant_type(v.type) is not None for v in list(op.operands) + list(op.results)):
            deq = _dequantized_args(op, args)
            results = fn(interp, _FloatView(op), deq)
            return _requantize(op, results)
        return fn(interp, op, args)
    return run


class _FloatView:
    """Stands in for an op whose quantized result types read as their expressed types."""

    def __init__(self, op):
        self._op = op
        self.results = [_TypeOnly(_expressed(r.type)) for r in op.results]
        self.operands = [_TypeOnly(_expressed(v.type)) for v in op.operands]
        self.attributes = op.attributes
        self.name = op.name
        self.regions = op.regions


class _TypeOnly:
    def __init__(self, t):
        self.type = t


def _expressed(t):
    q = quant_type(t)
    if q is None:
        return t
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, q.expressed, t.encoding)
    return q.expressed


# ---- generic drivers ----------------------------------------------------------------------
def register_hlo(names, fn, quant=True):
    run = _quant_aware(fn) if quant else fn
    for n in names:
        impl(f"stablehlo.{n}", f"mhlo.{n}")(run)


def _binary(int_fn, float_fn, bool_fn=None, complex_fn=None, name=""):
    def run(interp, op, args):
        a, b = (np.asarray(x) for x in args)
        k = value_kind(a)
        with np.errstate(all="ignore"):
            if k == "b":
                if bool_fn is None:
                    raise InterpreterError(f"'{op.name}' is not defined on booleans")
                r = bool_fn(a, b)
            elif k in "iu":
                if int_fn is None:
                    raise InterpreterError(f"'{op.name}' is not defined on integers")
                r = int_fn(a, b, logical_width(op))
            elif k == "c":
                r = (complex_fn or float_fn)(a, b)
            else:
                if float_fn is None:
                    raise InterpreterError(f"'{op.name}' is not defined on floats")
                if a.dtype.name in NARROW_FLOATS or a.dtype.kind == "V":
                    r = float_fn(a.astype(np.float32), b.astype(np.float32))
                else:
                    r = float_fn(a, b)
        return [fit(op, r)]
    return run


# ---- integer helpers --------------------------------------------------------------------------
def _int_limits(a: np.ndarray, bits: int):
    if a.dtype.kind == "u":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _div_int(a, b, bits):
    zero = b == 0
    safe = np.where(zero, 1, b).astype(b.dtype)
    if a.dtype.kind == "u":
        return np.where(zero, np.array(-1).astype(a.dtype), a // safe)
    lo, _ = _int_limits(a, bits)
    overflow = (a == lo) & (b == -1)
    safe = np.where(overflow, 1, safe).astype(b.dtype)
    q = np.floor_divide(a, safe)
    r = a - q * safe
    q = np.where((r != 0) & ((a < 0) != (safe < 0)), q + 1, q)
    q = np.where(overflow, a, q)
    return np.where(zero, np.array(-1, dtype=a.dtype), q)


def _rem_int(a, b, bits):
    zero = b == 0
    safe = np.where(zero, 1, b).astype(b.dtype)
    if a.dtype.kind == "u":
        return np.where(zero, a, a % safe)
    safe = np.where(safe == -1, 1, safe).astype(b.dtype)  # x % -1 == 0, and no INT_MIN overflow
    return np.where(zero, a, np.fmod(a, safe))


def _pow_int(a, b, bits):
    dt = a.dtype
    base = a.astype(np.uint64) if dt.kind == "u" else a.astype(np.int64)
    if dt.kind == "u":
        exp = b.astype(np.uint64)
        negative = np.zeros(b.shape, bool)
    else:
        negative = b < 0
        exp = np.where(negative, 0, b).astype(np.int64).astype(np.uint64)
    result = np.ones(np.broadcast(base, exp).shape, dtype=base.dtype)
    base = np.broadcast_to(base, result.shape).copy()
    exp = np.broadcast_to(exp, result.shape).copy()
    while np.any(exp):
        odd = (exp & np.uint64(1)).astype(bool)
        result = np.where(odd, result * base, result)
        base = base * base
        exp = exp >> np.uint64(1)
    if dt.kind != "u":
        one = a == 1
        minus_one = a == -1
        odd_exp = (b.astype(np.int64) & 1).astype(bool)
        neg_result = np.where(one, 1, np.where(minus_one, np.where(odd_exp, -1, 1), 0))
        result = np.where(negative, neg_result, result)
    return result


def as_unsigned_bits(a: np.ndarray, bits: int) -> np.ndarray:
    """The low `bits` bits of each element as uint64."""
    u = a.astype(np.int64).astype(np.uint64) if a.dtype.kind != "u" else a.astype(np.uint64)
    if bits < 64:
        u = u & np.uint64((1 << bits) - 1)
    return u


def _shift(kind):
    def run(a, b, bits):
        amount = as_unsigned_bits(b, bits)
        big = amount >= np.uint64(bits)
        amount = np.where(big, np.uint64(0), amount)
        if kind == "left":
            out = as_unsigned_bits(a, bits) << amount
            if bits < 64:
                out = out & np.uint64((1 << bits) - 1)
            fill = np.uint64(0)
        elif kind == "logical":
            out = as_unsigned_bits(a, bits) >> amount
            fill = np.uint64(0)
        else:  # arithmetic: the stored value is sign-extended already
            signed = a.astype(np.int64) if a.dtype.kind != "u" else _sign_extend(a, bits)
            out = signed >> amount.astype(np.int64)
            fill = np.where(signed < 0, -1, 0)
            return np.where(big, fill, out).astype(np.int64).astype(a.dtype) if a.dtype.kind != "u" \
                else np.where(big, fill, out).astype(np.int64).astype(np.uint64).astype(a.dtype)
        out = np.where(big, fill, out)
        return out.astype(a.dtype) if a.dtype.kind == "u" else out.astype(np.int64).astype(a.dtype)
    return run


def _sign_extend(a: np.ndarray, bits: int) -> np.ndarray:
    v = a.astype(np.uint64).astype(np.int64) if bits == 64 else a.astype(np.int64)
    if bits < 64:
        v = np.where(v >= (1 << (bits - 1)), v - (1 << bits), v)
    return v


# ---- floats: IEEE maximum / minimum, complex lexicographic ------------------------------------------
def _fmax(a, b):
    return _settle_zero_ties(np.maximum(a, b), a, b, np.bitwise_and, wrong_zero_sign=1)


def _fmin(a, b):
    return _settle_zero_ties(np.minimum(a, b), a, b, np.bitwise_or, wrong_zero_sign=0)


def _settle_zero_ties(r, a, b, combine, wrong_zero_sign):
    """numpy's max/min of a (+0, -0) tie depends on the operand order; the spec has +0 > -0.
    A result can only be wrong where it is the zero of the losing sign (-0 for max, +0 for
    min), so the common case costs one integer compare of the result's bits; where both
    operands are zeros, combining their bits settles it (and: +0 wins the max; or: -0 wins
    the min)."""
    r = np.asarray(r)
    dtype = r.dtype
    if dtype.itemsize not in (2, 4, 8):
        tie = (r == 0) & (a == b)
        return np.where(tie, np.where(np.signbit(a) == bool(wrong_zero_sign), b, a), r)
    bits = np.dtype(f"u{dtype.itemsize}")
    wrong = np.array(wrong_zero_sign << (8 * dtype.itemsize - 1), dtype=bits)
    suspects = r.view(bits) == wrong
    if not suspects.any():
        return r
    a, b = np.broadcast_arrays(a, b)
    tie = suspects & (a == b)
    out = r.copy()
    out[tie] = combine(a[tie].view(bits), b[tie].view(bits)).view(dtype)
    return out


def _cmax(a, b):
    pick = np.where(a.real == b.real, a.imag > b.imag, a.real > b.real)
    return np.where(pick, a, b)


def _cmin(a, b):
    pick = np.where(a.real == b.real, a.imag < b.imag, a.real < b.real)
    return np.where(pick, a, b)


def _cdiv(a, b):
    return (a.astype(np.complex128) / b.astype(np.complex128))


def _fpow(a, b):
    return np.power(a.astype(np.float64), b.astype(np.float64))


def _cpow(a, b):
    a, b = a.astype(np.complex128), b.astype(np.complex128)
    return np.where((a == 0) & (b == 0), 1 + 0j, np.power(a, b))


def _atan2_complex(y, x):
    y, x = y.astype(np.complex128), x.astype(np.complex128)
    i = 1j
    return -i * np.log((x + i * y) / np.sqrt(x * x + y * y))


register_hlo(["add"], _binary(lambda a, b, w: a + b, np.add, np.logical_or))
register_hlo(["subtract"], _binary(lambda a, b, w: a - b, np.subtract))
register_hlo(["multiply"], _binary(lambda a, b, w: a * b, np.multiply, np.logical_and))
register_hlo(["divide"], _binary(_div_int, np.divide, complex_fn=_cdiv))
register_hlo(["remainder"], _binary(_rem_int, np.fmod))
register_hlo(["power"], _binary(_pow_int, _fpow, complex_fn=_cpow))
register_hlo(["maximum"], _binary(lambda a, b, w: np.maximum(a, b), _fmax, np.logical_or, _cmax))
register_hlo(["minimum"], _binary(lambda a, b, w: np.minimum(a, b), _fmin, np.logical_and, _cmin))
register_hlo(["and"], _binary(lambda a, b, w: a & b, None, np.logical_and), quant=False)
register_hlo(["or"], _binary(lambda a, b, w: a | b, None, np.logical_or), quant=False)
register_hlo(["xor"], _binary(lambda a, b, w: a ^ b, None, np.logical_xor), quant=False)
register_hlo(["shift_left"], _binary(_shift("left"), None), quant=False)
register_hlo(["shift_right_logical"], _binary(_shift("logical"), None), quant=False)
register_hlo(["shift_right_arithmetic"], _binary(_shift("arithmetic"), None), quant=False)
register_hlo(["atan2"], _binary(None, lambda y, x: np.arctan2(y.astype(np.float64), x.astype(np.float64)),
                             complex_fn=_atan2_complex))


# ---- constant, select, clamp ------------------------------------------------------------------------
@impl("stablehlo.constant", "mhlo.constant")
def _constant(interp, op, args):
    t = op.results[0].type
    q = quant_type(t)
    if q is not None:
        st = T.RankedTensorType(t.shape, q.storage) if isinstance(t, T.RankedTensorType) else q.storage
        return [attr_to_array(op.attr("value"), st)]
    return [attr_to_array(op.attr("value"), t)]


@impl("stablehlo.select", "mhlo.select")
def _select(interp, op, args):
    pred, a, b = args
    return [fit(op, np.where(pred, a, b))]


def _maximum_any(a, b):
    k = value_kind(a)
    if k == "b":
        return np.logical_or(a, b)
    if k in "iu":
        return np.maximum(a, b)
    if k == "c":
        return _cmax(a, b)
    return _fmax(a, b)


def _minimum_any(a, b):
    k = value_kind(a)
    if k == "b":
        return np.logical_and(a, b)
    if k in "iu":
        return np.minimum(a, b)
    if k == "c":
        return _cmin(a, b)
    return _fmin(a, b)


def _clamp(interp, op, args):
    lo, x, hi = (np.asarray(a) for a in args)
    if x.dtype.kind == "V" or x.dtype.name in NARROW_FLOATS:
        lo, x, hi = (v.astype(np.float32) for v in (lo, x, hi))
    with np.errstate(all="ignore"):
        return [fit(op, _minimum_any(_maximum_any(x, lo), hi))]


register_hlo(["clamp"], _clamp)


# ---- compare --------------------------------------------------------------------------------------
def _total_order_key(a: np.ndarray) -> np.ndarray:
    """Floats as signed integers ordered like IEEE totalOrder (-NaN < -Inf < ... < +NaN)."""
    bits = a.dtype.itemsize * 8
    i = a.view(np.dtype(f"i{a.dtype.itemsize}")).astype(np.int64)
    if bits < 64:
        return np.where(i < 0, -(i & ((1 << (bits - 1)) - 1)) - 1, i)
    return np.where(i < 0, i ^ np.int64(0x7FFFFFFFFFFFFFFF), i)


_DIRS = {"EQ": np.equal, "NE": np.not_equal, "GE": np.greater_equal, "GT": np.greater,
         "LE": np.less_equal, "LT": np.less}


def _compare(interp, op, args):
    a, b = (np.asarray(x) for x in args)
    direction = enum_attr(op, "comparison_direction")
    if direction not in _DIRS:
        raise InterpreterError(f"unknown comparison_direction {direction}")
    ctype = enum_attr(op, "compare_type", None) or enum_attr(op, "comparison_type", None)
    fn = _DIRS[direction]
    k = value_kind(a)
    with np.errstate(all="ignore"):
        if k == "c":
            if direction in ("EQ", "NE"):
                r = fn(a, b)
            else:
                eq_real = a.real == b.real
                r = np.where(eq_real, fn(a.imag, b.imag), fn(a.real, b.real))
        elif k == "f":
            if ctype == "TOTALORDER":
                r = fn(_total_order_key(a), _total_order_key(b))
            else:
                if a.dtype.kind == "V" or a.dtype.name in NARROW_FLOATS:
                    a, b = a.astype(np.float32), b.astype(np.float32)
                r = fn(a, b)
        elif k in "iu":
            if ctype == "UNSIGNED" and a.dtype.kind == "i":
                w = logical_width(op)
                a, b = as_unsigned_bits(a, w), as_unsigned_bits(b, w)
            elif ctype == "SIGNED" and a.dtype.kind == "u":
                w = logical_width(op)
                a, b = _sign_extend(a, w), _sign_extend(b, w)
            r = fn(a, b)
        else:
            r = fn(a, b)
    return [np.asarray(r, dtype=bool)]


register_hlo(["compare"], _compare)
