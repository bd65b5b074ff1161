"""exp, exp2, expm1, log, log2, log10, log1p, tanh, pow and cbrt on f64 as arith polynomials, for
targets without a math library (GPUs: NVPTX and AMDGPU have no f64 libcalls, GLSL.std.450 is
16/32-bit only).

Written from the math: range reduction by n ln2 (ln2 in two parts, fdlibm's split) with the
magic-number rounding of the f32 expansions (1.5 * 2^52 here), Taylor polynomials for e^r - 1,
fdlibm's minimax fit for log(1 + f) in s = f/(2 + f); the code is our own.

| op (f64)   | method                                                             | bound |
|------------|--------------------------------------------------------------------|-------|
| exp        | x = n ln2 + r, degree-13 Taylor for e^r - 1, 2^n in two exact halves | 2 ulp |
| expm1      | 2 (2^(n-1) (e^r - 1) + 2^(n-1) - 1/2): no cancellation for small x    | 3 ulp |
| log        | frexp by bits, m - 1 = f in [sqrt(1/2) - 1, sqrt(2) - 1), log(1 + f) = | 2 ulp |
|            | f - f^2/2 + s (f^2/2 + R(s^2)) (fdlibm's R)                          |       |
| log1p      | log(u) x / (u - 1), u = 1 + x rounded (Goldberg)                     | 3 ulp |
| tanh       | m / (m + 2) with m = expm1(2|x|), the sign of x                      | 4 ulp |
| cbrt       | exponent / 3 by integer division, 4 Newton steps, a last one with the | 2 ulp |
|            | residual t^3 - x formed exactly (Dekker's products)                  |       |
| exp2       | exp(x ln2) with x ln2 as Dekker's product + its error + x ln2_lo, that | 2 ulp |
|            | tail added to exp's reduced argument (2^n for integer n exactly)     |       |
| log2,      | log x as hi + lo (as pow's, below) times 1/ln2 (1/ln10) in two parts:  | 2 ulp |
| log10      | Dekker's product of the high parts, the small products added to it   |       |
| pow        | exp(y log|x|) with log|x| as hi + lo (2 atanh(s), s = f/(2 + f) in two | 2 ulp |
|            | parts, a degree-27 Taylor polynomial; e ln2 + 2s summed exactly),    |       |
|            | y log|x| as the product + its exact error (Dekker) + y lo, that tail |       |
|            | added to exp's reduced argument; C99's special cases (odd integer y  |       |
|            | keeps x's sign, 0^-y = inf, 1^y = x^0 = 1, |x| = 1 with y = +-inf    |       |
|            | gives 1, a finite x < 0 with a non-integer y gives NaN, ...)         |       |

Bounds are against numpy in long double (tests/test_gpu_math.py, 2^18 inputs per op: random bit
patterns, dense sweeps, edge cases); measured natively (a fused fma): exp, exp2, log, log2, log10,
cbrt, pow 1 ulp; expm1, log1p 2; tanh 3; on lavapipe (whose Fma rounds twice; 2^16 inputs): exp,
exp2, log, log2, log10, cbrt, pow 1, expm1, log1p, tanh 2. Nothing here needs a fused
multiply-add to be right (exact products are Dekker's). f32 (and f16/bf16) pow and cbrt are
computed with the f64 forms and rounded once (measured 0 ulp from the correctly rounded result,
both ways).
"""
from __future__ import annotations

import math
from fractions import Fraction

from .trig_approximation import float_parts

#: The largest error, in ulp of the result, against numpy that each expansion is held to, by (op,
#: float width).
ULP_BOUNDS = {("math.exp", 64): 2, ("math.expm1", 64): 3, ("math.log", 64): 2, ("math.log1p", 64): 3,
              ("math.tanh", 64): 4, ("math.cbrt", 64): 2, ("math.cbrt", 32): 1, ("math.powf", 64): 2,
              ("math.powf", 32): 1, ("math.exp2", 64): 2, ("math.log2", 64): 2, ("math.log10", 64): 2}
_OEQ, _OGT, _OLT, _ONE, _UNO = 1, 2, 4, 6, 14

LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10   # ln2_hi: 32 bits, exact n ln2_hi
LOG2E = 1.4426950408889634
MAGIC, MAGIC_BITS = 6755399441055744.0, 0x4338000000000000                 # 1.5 * 2^52
# e^r - 1 = r + r^2 (1/2! + r/3! + ... + r^11/13!): coefficients highest first
_EXPM1_POLY = tuple(1 / math.factorial(k) for k in range(2, 14))[::-1]
# log(1 + f) = f - hfsq + s (hfsq + R), R = z (Lg1 + z Lg2 + ... + z^6 Lg7), z = s^2: Lg7 first
_LOG_POLY = (1.479819860511658591e-01, 1.531383769920937332e-01, 1.818357216161805012e-01,
             2.222219843214978396e-01, 2.857142874366239149e-01, 3.999999999940941908e-01,
             6.666666666666735130e-01)
DBL_MIN = 2.2250738585072014e-308
SQRT_HALF = 0.7071067811865476


def two_product(b, x, y):
    """(p, e) with x y = p + e exactly, p = x y rounded: Dekker's product on Veltkamp's halves
    (26 bits each), which needs no fused multiply-add (Vulkan's Fma may round twice). e is NaN
    where x or y is beyond 2^996 (the split overflows): callers drop it there."""
    def split(v):
        scaled = b.mul(v, b.c(134217729.0))                      # 2^27 + 1
        high = b.sub(scaled, b.sub(scaled, v))
        return high, b.sub(v, high)
    p = b.mul(x, y)
    (xh, xl), (yh, yl) = split(x), split(y)
    e = b.add(b.add(b.add(b.sub(b.mul(xh, yh), p), b.mul(xh, yl)), b.mul(xl, yh)), b.mul(xl, yl))
    return p, e


def _reduce(b, x):
    """(r, n) with x = n ln2 + r, |r| <= ln2/2 (about), n as the builder's integer (i64)."""
    k = b.fma(x, b.c(LOG2E), b.c(MAGIC))
    n = b.sub(k, b.c(MAGIC))
    r = b.fma(n, b.c(-LN2_LO), b.fma(n, b.c(-LN2_HI), x))
    return r, b.subi(b.bits(k), b.ci(MAGIC_BITS))


def _expm1_reduced(b, r):
    return b.fma(b.mul(r, r), b.horner(r, _EXPM1_POLY), r)


def exp(b, x, tail=None, shift=0):
    """e^x, or e^(x + tail) for a `tail` far below x's last bit (pow's y log|x| in two parts),
    times 2^shift (|shift| <= 64) rounded once: sinh's e^|x| / 2 where e^|x| alone overflows,
    erfc's e^(-x^2) 2^64 where it alone would underflow before its last factor."""
    low, high = -746.0 - shift * LN2_HI, 710.0 - shift * LN2_HI   # 0 below, inf above; NaN passes
    x = b.clamp_above(b.clamp_below(x, low), high)
    r, n = _reduce(b, x)
    if tail is not None:
        r = b.add(r, tail)
    y = b.add(_expm1_reduced(b, r), b.c(1.0))
    if shift:
        n = b.addi(n, b.ci(shift))
    half = b.shrsi(n, b.ci(1))                                   # n in [-1077, 1025]: two normal halves
    return b.mul(b.mul(y, b.pow2(half)), b.pow2(b.subi(n, half)))


def expm1(b, x):
    xc = b.clamp_above(b.clamp_below(x, -40.0), 710.0)          # -1 below (to the last bit), inf above
    r, n = _reduce(b, xc)
    h = b.pow2(b.subi(n, b.ci(1)))                               # 2^(n-1), n in [-58, 1024]
    result = b.mul(b.fma(h, _expm1_reduced(b, r), b.sub(h, b.c(0.5))), b.c(2.0))
    return b.select(b.fcmp(_OEQ, x, b.c(0.0)), x, result)        # -0 stays -0


def log(b, x):
    tiny = b.fcmp(_OLT, x, b.c(DBL_MIN))
    xs = b.select(tiny, b.mul(x, b.c(2.0 ** 54)), x)             # subnormals: scale first
    bits = b.bits(xs)
    e = b.to_float(b.subi(b.shrui(bits, b.ci(52)), b.ci(1022)))
    e = b.select(tiny, b.sub(e, b.c(54.0)), e)
    m = b.from_bits(b.ori(b.andi(bits, b.ci((1 << 52) - 1)), b.ci(0x3FE0000000000000)))   # [0.5, 1)
    low = b.fcmp(_OLT, m, b.c(SQRT_HALF))
    e = b.select(low, b.sub(e, b.c(1.0)), e)
    f = b.select(low, b.sub(b.add(m, m), b.c(1.0)), b.sub(m, b.c(1.0)))
    s = b.div(f, b.add(b.c(2.0), f))
    z = b.mul(s, s)
    big_r = b.mul(z, b.horner(z, _LOG_POLY))
    hfsq = b.mul(b.mul(f, f), b.c(0.5))
    inner = b.fma(s, b.add(hfsq, big_r), b.mul(e, b.c(LN2_LO)))
    r = b.sub(b.mul(e, b.c(LN2_HI)), b.sub(b.sub(hfsq, inner), f))
    inf = b.c(math.inf)
    r = b.select(b.fcmp(_OEQ, x, inf), inf, r)
    r = b.select(b.fcmp(_OEQ, x, b.c(0.0)), b.c(-math.inf), r)
    r = b.select(b.fcmp(_OLT, x, b.c(0.0)), b.c(math.nan), r)
    return b.select(b.fcmp(_UNO, x, x), x, r)


# 2 atanh(s) = 2s + s z P(z), z = s^2: P's Taylor coefficients 2/(2k+1), k = 13 .. 1
_ATANH_POLY = tuple(2 / (2 * k + 1) for k in range(13, 0, -1))


def log_hi_lo(b, a):
    """log(a) as hi + lo (about 2^-60 relative error), for a finite a > 0: log(1 + f) = 2 atanh(s),
    s = f/(2 + f) carried as s + s_lo, |s| <= 0.172; e ln2_hi + 2s summed exactly (two-sum), the
    small terms added to the low part."""
    tiny = b.fcmp(_OLT, a, b.c(DBL_MIN))
    bits = b.bits(b.select(tiny, b.mul(a, b.c(2.0 ** 54)), a))
    e = b.to_float(b.subi(b.shrui(bits, b.ci(52)), b.ci(1022)))
    e = b.select(tiny, b.sub(e, b.c(54.0)), e)
    m = b.from_bits(b.ori(b.andi(bits, b.ci((1 << 52) - 1)), b.ci(0x3FE0000000000000)))
    low = b.fcmp(_OLT, m, b.c(SQRT_HALF))
    e = b.select(low, b.sub(e, b.c(1.0)), e)
    f = b.select(low, b.sub(b.add(m, m), b.c(1.0)), b.sub(m, b.c(1.0)))      # exact
    two = b.c(2.0)
    u = b.add(two, f)
    u_error = b.add(b.sub(two, u), f)                              # 2 + f = u + u_error exactly
    s = b.div(f, u)
    su, su_error = two_product(b, s, u)
    s_lo = b.div(b.sub(b.sub(b.sub(f, su), su_error), b.mul(s, u_error)), u)     # (f - s (2 + f)) / u
    z = b.mul(s, s)
    tail = b.mul(b.mul(s, z), b.horner(z, _ATANH_POLY))
    big, small = b.mul(e, b.c(LN2_HI)), b.add(s, s)               # both exact
    head = b.add(big, small)                                       # two-sum: head + error exactly
    bv = b.sub(head, big)
    error = b.add(b.sub(big, b.sub(head, bv)), b.sub(small, bv))
    rest = b.add(error, b.add(b.fma(e, b.c(LN2_LO), b.add(s_lo, s_lo)), tail))
    hi = b.add(head, rest)
    return hi, b.sub(rest, b.sub(hi, head))


def log1p(b, x):
    one = b.c(1.0)
    u = b.add(x, one)
    um1 = b.sub(u, one)
    lu = log(b, u)
    r = b.select(b.fcmp(_OEQ, um1, b.c(0.0)), x, b.mul(lu, b.div(x, um1)))
    return b.select(b.fcmp(_OEQ, u, b.c(math.inf)), lu, r)


def tanh(b, x):
    ax = b.abs(x)
    m = expm1(b, b.clamp_above(b.add(ax, ax), 40.0))            # tanh rounds to 1 from |x| = 19.1
    return b.copysign(b.div(m, b.add(m, b.c(2.0))), x)


def cbrt(b, x):
    ax = b.abs(x)
    tiny = b.fcmp(_OLT, ax, b.c(DBL_MIN))
    a = b.select(tiny, b.mul(ax, b.c(2.0 ** 54)), ax)
    # exponent / 3 (and the mantissa, roughly) by dividing the bits: about 3% off
    t = b.from_bits(b.addi(b.op("arith.divui", [b.bits(a), b.ci(3)], b.i), b.ci(715094163 << 32)))
    for _ in range(4):                                           # Newton: t = (2t + a/t^2) / 3
        t = b.mul(b.add(b.add(t, t), b.div(a, b.mul(t, t))), b.c(1 / 3))
    t2, t2_error = two_product(b, t, t)
    t3, t3_error = two_product(b, t2, t)
    residual = b.add(b.sub(t3, a), b.fma(t2_error, t, t3_error))     # t^3 - a, nearly exact
    t = b.sub(t, b.div(residual, b.mul(t2, b.c(3.0))))
    t = b.select(tiny, b.mul(t, b.c(2.0 ** -18)), t)
    special = b.op("arith.ori", [b.fcmp(_OEQ, ax, b.c(0.0)), b.fcmp(_OEQ, ax, b.c(math.inf))], b.b)
    special = b.op("arith.ori", [special, b.fcmp(_UNO, x, x)], b.b)
    return b.select(special, x, b.copysign(t, x))


def pow(b, x, y):  # noqa: A001 - math.powf
    ax = b.abs(x)
    hi, lo = log_hi_lo(b, ax)
    regular = b.op("arith.andi", [b.fcmp(_OGT, ax, b.c(0.0)), b.fcmp(_OLT, ax, b.c(math.inf))], b.b)
    hi = b.select(b.fcmp(_OEQ, ax, b.c(0.0)), b.c(-math.inf), hi)   # log's special values
    hi = b.select(b.fcmp(_OEQ, ax, b.c(math.inf)), ax, hi)
    hi = b.select(b.fcmp(_UNO, ax, ax), ax, hi)
    product, error = two_product(b, y, hi)
    tail = b.fma(y, lo, error)                                    # y (hi + lo) = product + tail
    usable = b.op("arith.andi", [regular, b.fcmp(_OLT, b.abs(tail), b.c(math.inf))], b.b)   # not NaN/inf
    result = exp(b, product, b.select(usable, tail, b.c(0.0)))
    # y an integer (and odd?): |y| >= 2^53 is an even integer
    y_integer = b.fcmp(_OEQ, b.floor(y), y)
    half = b.mul(y, b.c(0.5))
    y_odd = b.op("arith.andi", [y_integer, b.fcmp(_ONE, b.floor(half), half)], b.b)
    x_negative = b.fcmp(_OLT, b.copysign(b.c(1.0), x), b.c(0.0))        # -0 included
    result = b.select(b.op("arith.andi", [x_negative, y_odd], b.b), b.op("arith.negf", [result], b.f), result)
    # a finite x < 0 and a y that is not an integer (inf is one here; a NaN y gives NaN anyway)
    finite_negative = b.op("arith.andi", [b.fcmp(_OLT, x, b.c(0.0)), b.fcmp(_OLT, ax, b.c(math.inf))], b.b)
    invalid = b.op("arith.andi", [finite_negative, b.fcmp(_ONE, b.floor(y), y)], b.b)
    result = b.select(invalid, b.c(math.nan), result)
    one = b.c(1.0)
    unit = b.op("arith.andi", [b.fcmp(_OEQ, ax, one), b.fcmp(_OEQ, b.abs(y), b.c(math.inf))], b.b)
    always_one = b.op("arith.ori", [b.fcmp(_OEQ, y, b.c(0.0)), b.fcmp(_OEQ, x, one)], b.b)
    return b.select(b.op("arith.ori", [always_one, unit], b.b), one, result)


def _atanh_inverse(x: int, precision: int) -> Fraction:
    """atanh(1/x) (its Taylor series in fixed point with `precision` fraction bits), x >= 3."""
    one, total, power, k = 1 << precision, 0, (1 << precision) // x, 1
    while power:
        total += power // k
        power //= x * x
        k += 2
    return Fraction(total, one)


#: ln 2 = 2 atanh(1/3); ln 10 = 3 ln 2 + ln(5/4), ln(5/4) = 2 atanh(1/9): 256 bits
LN2_EXACT = 2 * _atanh_inverse(3, 256)
_LN10_EXACT = 3 * LN2_EXACT + 2 * _atanh_inverse(9, 256)
_LN2_PARTS = float_parts(LN2_EXACT, 2, 64)
_INVERSE_LN = {"math.log2": float_parts(1 / LN2_EXACT, 2, 64), "math.log10": float_parts(1 / _LN10_EXACT, 2, 64)}


def exp2(b, x):
    """e^(x ln2), x ln2 carried as the product and its exact error (Dekker) plus x times ln2's
    second part: exp's tail. Integer x gives 2^x exactly."""
    x = b.clamp_above(b.clamp_below(x, -1100.0), 1100.0)       # (beyond: 0 and inf; keeps the split finite)
    ln2, ln2_lo = _LN2_PARTS
    product, error = two_product(b, x, b.c(ln2))
    return exp(b, product, b.fma(x, b.c(ln2_lo), error))


def _log_scaled(b, x, factor):
    """log(x) * factor for factor = 1/ln2 or 1/ln10 given in two parts: log x as hi + lo
    (`log_hi_lo`), the product hi factor as Dekker's product plus the small terms; powers of 2
    (log2) and of 10 (log10, to 10^22) come out exact. Special values as log's."""
    f_hi, f_lo = factor
    positive = b.op("arith.andi", [b.fcmp(_OGT, x, b.c(0.0)), b.fcmp(_OLT, x, b.c(math.inf))], b.b)
    hi, lo = log_hi_lo(b, b.select(positive, x, b.c(1.0)))
    product, error = two_product(b, hi, b.c(f_hi))
    r = b.add(product, b.add(error, b.fma(lo, b.c(f_hi), b.mul(hi, b.c(f_lo)))))
    inf = b.c(math.inf)
    r = b.select(b.fcmp(_OEQ, x, inf), inf, r)
    r = b.select(b.fcmp(_OEQ, x, b.c(0.0)), b.c(-math.inf), r)
    r = b.select(b.fcmp(_OLT, x, b.c(0.0)), b.c(math.nan), r)
    return b.select(b.fcmp(_UNO, x, x), x, r)


def log2(b, x):
    return _log_scaled(b, x, _INVERSE_LN["math.log2"])


def log10(b, x):
    return _log_scaled(b, x, _INVERSE_LN["math.log10"])


EXPANSIONS = {"math.exp": exp, "math.expm1": expm1, "math.log": log, "math.log1p": log1p, "math.tanh": tanh,
              "math.cbrt": cbrt, "math.powf": pow, "math.exp2": exp2, "math.log2": log2, "math.log10": log10}
