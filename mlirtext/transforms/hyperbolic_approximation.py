"""sinh, cosh, asinh, acosh, atanh, asin and acos on f64 as arith polynomials, for targets without
a math library (GPUs); f32, f16 and bf16 operands are computed with them and rounded once.

Written from the identities (the code is our own), on the f64 pieces of f64_approximation.py and
trig_approximation.py:

| op    | method                                                                      | bound |
|-------|-----------------------------------------------------------------------------|-------|
| sinh  | |x| < 1: odd Taylor polynomial (degree 21); else h - 1/(4h), h = e^|x| / 2  | 2 ulp |
|       | (exp's 2^-1 scaling: no overflow where sinh itself is finite)               |       |
| cosh  | h + 1/(4h), h = e^|x| / 2 (two positive terms: no cancellation)             | 2 ulp |
| asinh | log1p(a + a^2 / (1 + sqrt(1 + a^2))) below 2, log(2a + 1/(a + sqrt(a^2+1)))  | 2 ulp |
|       | up to 2^28, log(a) + ln2 beyond                                             |       |
| acosh | log1p(t + sqrt(t (t + 2))), t = x - 1 (exact) up to 2, then as asinh        | 2 ulp |
| atanh | log1p(2a + 2a^2 / (1 - a)) / 2 below 1/2, log1p(2a / (1 - a)) / 2 above     | 2 ulp |
| asin  | atan2(|x|, sqrt(1 - x^2)) with the sign of x; acos: atan2(sqrt(1 - x^2), x); | 3 ulp |
| acos  | 1 - x^2 formed exactly (Dekker's square) and its square root corrected once  | 3 ulp |

Every log here is `_log_of`: f64_approximation's log in two parts (about 2^-60 relative error)
of an argument given as a value and a correction (the exact error of the sum that formed it), so
log1p(v) = log(1 + v) loses nothing to the rounding of 1 + v. No fused multiply-add is needed to
be right (exact products are Dekker's; Vulkan's Fma may round twice). Bounds are against numpy in
long double (tests/test_gpu_math.py, 2^18 inputs per op: random bit patterns, sweeps, each op's
hardest range); measured natively (fused fma): sinh, acosh, asin, acos 2 ulp; cosh, asinh, atanh 1;
on lavapipe (Fma rounding twice, 2^16 inputs): asin, acos, acosh 2, the others 1. f32 results
(computed in f64, rounded once) measured 0 ulp from numpy's rounded to f32; f16 at most 1.
"""
from __future__ import annotations

import math

from . import f64_approximation as f64
from . import trig_approximation as trig

#: The largest error, in ulp of the result, that each expansion is held to, by (op, float width).
ULP_BOUNDS = {**{(op, 64): 2 for op in ("math.sinh", "math.cosh", "math.asinh", "math.acosh", "math.atanh")},
              ("math.asin", 64): 3, ("math.acos", 64): 3,
              **{(op, 32): 1 for op in ("math.sinh", "math.cosh", "math.asinh", "math.acosh", "math.atanh",
                                        "math.asin", "math.acos")}}
_OEQ, _OGT, _OGE, _OLT, _UNO = 1, 2, 3, 4, 14

LN2, LN2_LO = trig.float_parts(f64.LN2_EXACT, 2, 64)
# sinh(a) = a + a z (1/3! + z/5! + ... + z^9/21!), z = a^2: coefficients highest first
_SINH_POLY = tuple(1 / math.factorial(2 * k + 1) for k in range(10, 0, -1))


def _two_sum(b, x, y):
    """(s, e) with x + y = s + e exactly, s = x + y rounded (Knuth: no condition on the sizes)."""
    s = b.add(x, y)
    bv = b.sub(s, x)
    return s, b.add(b.sub(x, b.sub(s, bv)), b.sub(y, bv))


def _log_of(b, w, w_lo, plus_ln2: bool = False):
    """log(w + w_lo) (+ ln2), rounded once from log w in two parts, for a finite w > 0 and a
    |w_lo| far below w (other w give a number that the callers replace)."""
    regular = b.op("arith.andi", [b.fcmp(_OGT, w, b.c(0.0)), b.fcmp(_OLT, w, b.c(math.inf))], b.b)
    w = b.select(regular, w, b.c(1.0))
    hi, lo = f64.log_hi_lo(b, w)
    lo = b.add(lo, b.div(w_lo, w))
    if plus_ln2:
        hi, error = _two_sum(b, hi, b.c(LN2))
        lo = b.add(lo, b.add(error, b.c(LN2_LO)))
    return b.add(hi, lo)


def _log1p_of(b, v, v_lo):
    """log1p(v + v_lo) for v > -1: 1 + v as a sum and its exact error."""
    u, error = _two_sum(b, b.c(1.0), v)
    return _log_of(b, u, b.add(error, v_lo))


def sinh(b, x):
    a = b.abs(x)
    z = b.mul(a, a)
    small = b.fma(b.mul(a, z), b.horner(z, _SINH_POLY), a)
    h = f64.exp(b, a, shift=-1)                                   # e^|x| / 2, inf from 710.48
    large = b.sub(h, b.div(b.c(0.25), h))
    return b.copysign(b.select(b.fcmp(_OLT, a, b.c(1.0)), small, large), x)   # -0 stays -0


def cosh(b, x):
    h = f64.exp(b, b.abs(x), shift=-1)
    return b.add(h, b.div(b.c(0.25), h))                          # inf: inf + 0; NaN passes


def _large_log(b, a):
    """log(2a) = log a + ln2, for a > 2^28 (where 2a + 1/(a + sqrt(a^2 +- 1)) is 2a)."""
    return _log_of(b, a, b.c(0.0), plus_ln2=True)


def asinh(b, x):
    a = b.abs(x)
    one = b.c(1.0)
    a2 = b.mul(a, a)
    # below 2: log1p(a + a^2 / (1 + sqrt(1 + a^2))), a + that term carried as a sum and its error
    v, v_lo = _two_sum(b, a, b.div(a2, b.add(one, b.op("math.sqrt", [b.add(one, a2)], b.f))))
    small = _log1p_of(b, v, v_lo)
    middle = _log_of(b, b.add(b.add(a, a), b.div(one, b.add(a, b.op("math.sqrt", [b.add(a2, one)], b.f)))),
                     b.c(0.0))
    r = b.select(b.fcmp(_OLT, a, b.c(2.0)), small, b.select(b.fcmp(_OGT, a, b.c(2.0 ** 28)), _large_log(b, a), middle))
    r = b.select(b.fcmp(_OEQ, a, b.c(math.inf)), a, r)
    r = b.select(b.fcmp(_UNO, x, x), x, r)
    return b.copysign(r, x)                                       # -0 stays -0


def acosh(b, x):
    one = b.c(1.0)
    t = b.sub(x, one)                                             # exact for x in [1, 2]
    small = _log1p_of(b, b.add(t, b.op("math.sqrt", [b.mul(t, b.add(t, b.c(2.0)))], b.f)), b.c(0.0))
    root = b.op("math.sqrt", [b.sub(b.mul(x, x), one)], b.f)
    middle = _log_of(b, b.sub(b.add(x, x), b.div(one, b.add(x, root))), b.c(0.0))
    r = b.select(b.fcmp(_OGT, x, b.c(2.0)), b.select(b.fcmp(_OGT, x, b.c(2.0 ** 28)), _large_log(b, x), middle),
                 small)
    r = b.select(b.fcmp(_OEQ, x, b.c(math.inf)), x, r)
    r = b.select(b.fcmp(_OLT, x, one), b.c(math.nan), r)
    return b.select(b.fcmp(_UNO, x, x), x, r)


def atanh(b, x):
    a = b.abs(x)
    one = b.c(1.0)
    a2 = b.add(a, a)
    rest = b.sub(one, a)                                          # exact from 1/2 up
    v, v_lo = _two_sum(b, a2, b.div(b.mul(a2, a), rest))          # below 1/2: 2a + 2a^2 / (1 - a)
    small = _log1p_of(b, v, v_lo)
    large = _log1p_of(b, b.div(a2, rest), b.c(0.0))
    r = b.mul(b.select(b.fcmp(_OLT, a, b.c(0.5)), small, large), b.c(0.5))
    r = b.select(b.fcmp(_OEQ, a, one), b.c(math.inf), r)
    r = b.select(b.fcmp(_OGT, a, one), b.c(math.nan), r)
    r = b.select(b.fcmp(_UNO, x, x), x, r)
    return b.copysign(r, x)


def _cosine_of_arcsine(b, a):
    """sqrt(1 - a^2) for a = |x| <= 1, to about half an ulp: 1 - a^2 = d + d_lo exactly (a^2 by
    Dekker's product, 1 - p by a two-sum that is exact as p <= 1), then one Newton correction of
    sqrt(d) with its exact square. NaN for a > 1."""
    one = b.c(1.0)
    p, p_error = f64.two_product(b, a, a)
    d = b.sub(one, p)
    d_lo = b.sub(b.sub(b.sub(one, d), p), p_error)
    c = b.op("math.sqrt", [d], b.f)
    square, square_error = f64.two_product(b, c, c)
    residual = b.add(b.sub(b.sub(d, square), square_error), d_lo)
    correction = b.div(residual, b.add(c, c))
    return b.select(b.fcmp(_OGT, c, b.c(0.0)), b.add(c, correction), c)   # (a = 1: 0, not 0/0)


def asin(b, x):
    a = b.abs(x)
    return b.copysign(trig.atan2(b, a, _cosine_of_arcsine(b, a)), x)


def acos(b, x):
    return trig.atan2(b, _cosine_of_arcsine(b, b.abs(x)), x)


EXPANSIONS = {"math.sinh": sinh, "math.cosh": cosh, "math.asinh": asinh, "math.acosh": acosh, "math.atanh": atanh,
              "math.asin": asin, "math.acos": acos}
