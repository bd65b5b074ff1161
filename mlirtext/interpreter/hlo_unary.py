"""StableHLO / MHLO unary elementwise ops: abs, negate, sign, not, popcnt,
count_leading_zeros, rounding, math functions, is_finite, real / imag / complex.

Math functions compute in double and round once to the result type, as the reference
interpreter does, except for large low-precision tensors (see LARGE). sign keeps NaN and
the sign of zero; for complex numbers it is z / |z| (NaN parts give NaN, NaN).
round_nearest_afz rounds ties away from zero, round_nearest_even to even.
"""
from __future__ import annotations

import numpy as np

from .hlo_common import fit, np_dtype
from .hlo_elementwise import (as_unsigned_bits, is_float_dtype, value_kind, logical_width, NARROW_FLOATS,
                              register_hlo)
from .machine import InterpreterError
from .registry import impl


#: Above this many elements, f32/f16/bf16 math runs in float32 (numpy's vectorised
#: single-precision functions, within a few ulp) instead of double rounded once: the
#: double path costs 3-6x and large tensors are workloads, not conformance tests.
LARGE = 1 << 16


def _float_unary(f64, complex_fn=None):
    """Unary math: computed in double (complex128) and rounded once to the result type
    (float32 for large low-precision tensors, see LARGE)."""
    def run(interp, op, args):
        (a,) = args
        with np.errstate(all="ignore"):
            if a.dtype.kind == "c":
                r = (complex_fn or f64)(a.astype(np.complex128))
            elif is_float_dtype(a.dtype):
                wide = np.float32 if a.size > LARGE and a.dtype.itemsize <= 4 else np.float64
                r = f64(a.astype(wide, copy=False))
            else:
                raise InterpreterError(f"'{op.name}' expects floats or complex numbers, got {a.dtype}")
        return [fit(op, r)]
    return run


# ---- unary ---------------------------------------------------------------------------------------------
def _unary_generic(int_fn, float_fn, bool_fn=None, complex_fn=None):
    def run(interp, op, args):
        (a,) = args
        k = value_kind(a)
        with np.errstate(all="ignore"):
            if k == "b":
                if bool_fn is None:
                    raise InterpreterError(f"'{op.name}' is not defined on booleans")
                r = bool_fn(a)
            elif k in "iu":
                if int_fn is None:
                    raise InterpreterError(f"'{op.name}' is not defined on integers")
                r = int_fn(a, logical_width(op))
            elif k == "c":
                r = (complex_fn or float_fn)(a)
            else:
                if float_fn is None:
                    raise InterpreterError(f"'{op.name}' is not defined on floats")
                r = float_fn(a.astype(np.float32) if a.dtype.kind == "V" or a.dtype.name in NARROW_FLOATS else a)
        return [fit(op, r)]
    return run


def _abs_complex(a):
    return np.abs(a.astype(np.complex128))


def _sign_float(a):
    r = np.sign(a)  # keeps NaN; sign(+-0) = +-0 below
    return np.where(a == 0, a, r)


def _sign_complex(a):
    a = a.astype(np.complex128)
    nan = np.isnan(a.real) | np.isnan(a.imag)
    mag = np.abs(a)
    r = np.where(mag == 0, 0j, a / np.where(mag == 0, 1, mag))
    return np.where(nan, complex(np.nan, np.nan), r)


def _round_afz(a):
    x = a.astype(np.float64) if a.dtype != np.float64 else a
    t = np.trunc(x)
    frac = np.abs(x - t)
    return np.where(frac >= 0.5, t + np.copysign(1.0, x), t)


def _popcnt(a, bits):
    return np.bitwise_count(as_unsigned_bits(a, bits)).astype(a.dtype)


def _clz(a, bits):
    x = as_unsigned_bits(a, bits)
    n = np.zeros(x.shape, np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        big = x >= np.uint64(1 << s)
        x = np.where(big, x >> np.uint64(s), x)
        n = n + np.where(big, s, 0)
    length = n + (x > 0)
    return (bits - length).astype(a.dtype)


def _not_int(a, bits):
    return ~a


register_hlo(["abs"], _unary_generic(lambda a, w: np.abs(a) if a.dtype.kind != "u" else a, np.abs,
                                  complex_fn=_abs_complex))
register_hlo(["negate"], _unary_generic(lambda a, w: np.negative(a), np.negative, complex_fn=np.negative))
register_hlo(["sign"], _unary_generic(lambda a, w: np.sign(a) if a.dtype.kind != "u" else (a != 0),
                                   _sign_float, complex_fn=_sign_complex))
register_hlo(["not"], _unary_generic(_not_int, None, np.logical_not), quant=False)
register_hlo(["popcnt"], _unary_generic(_popcnt, None), quant=False)
register_hlo(["count_leading_zeros"], _unary_generic(_clz, None), quant=False)
register_hlo(["floor"], _unary_generic(None, np.floor))
register_hlo(["ceil"], _unary_generic(None, np.ceil))
register_hlo(["round_nearest_even"], _unary_generic(None, np.rint))
register_hlo(["round_nearest_afz"], _unary_generic(None, _round_afz))


def _logistic_real(x):
    # 1 / (1 + exp(-x)), evaluated without overflow warnings for large |x|.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _cbrt_complex(z):
    theta = np.arctan2(z.imag, z.real) / 3.0
    return np.power(z.real ** 2 + z.imag ** 2, 1.0 / 6.0) * (np.cos(theta) + 1j * np.sin(theta))


_MATH = {
    "exponential": (np.exp, None),
    "exponential_minus_one": (np.expm1, lambda z: np.exp(z) - 1),
    "log": (np.log, None),
    "log_plus_one": (np.log1p, lambda z: np.log(z + 1)),
    "logistic": (_logistic_real, lambda z: 1 / (1 + np.exp(-z))),
    "sqrt": (np.sqrt, None),
    "rsqrt": (lambda x: 1 / np.sqrt(x), None),
    "cbrt": (np.cbrt, _cbrt_complex),
    "sine": (np.sin, None),
    "cosine": (np.cos, None),
    "tan": (np.tan, None),
    "tanh": (np.tanh, None),
}
for _name, (_f, _c) in _MATH.items():
    register_hlo([_name], _float_unary(_f, _c))


@impl("stablehlo.is_finite", "mhlo.is_finite")
def _is_finite(interp, op, args):
    a = args[0]
    return [np.isfinite(a.astype(np.float64) if a.dtype.kind == "V" else a)]


@impl("stablehlo.real", "mhlo.real")
def _real(interp, op, args):
    a = args[0]
    return [fit(op, a.real if a.dtype.kind == "c" else a)]


@impl("stablehlo.imag", "mhlo.imag")
def _imag(interp, op, args):
    a = args[0]
    return [fit(op, a.imag if a.dtype.kind == "c" else np.zeros_like(a))]


@impl("stablehlo.complex", "mhlo.complex")
def _complex(interp, op, args):
    a, b = args
    dt = np_dtype(op.results[0].type)
    out = np.empty(np.broadcast(a, b).shape, dtype=dt)
    out.real = a
    out.imag = b
    return [out]
