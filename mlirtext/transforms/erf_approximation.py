"""erf and erfc on f64 as arith polynomials, for targets without a math library (GPUs); erfc on
f32, f16 and bf16 is computed with them and rounded once (f32 erf has its own expansion in
polynomial_approximation.py).

Written from the math; the code and the coefficients are our own, computed here in exact
rational arithmetic (every coefficient is the correct rounding of its true value):

- |x| < 1/2: erf x = 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1)), 13 terms (Horner in x^2).
- x >= 1/2: erfc x = e^(-x^2) erfcx(x), e^(-x^2) from f64_approximation's exp with x^2 as Dekker's
  product and its exact error (the error goes in as exp's tail: e^(-x^2) is right to an ulp even
  where x^2 is near 745), times 2^64 so that it does not underflow before the last factor
  (erfc x is subnormal from x = 26.5 and 0 from 27.3); erfcx, the scaled function, is
  - on [1/2, 4): a Taylor polynomial of degree 17 around the centre of each of 7 intervals of
    width 1/2 (|t| <= 1/4), picked by `select`s. Its coefficients follow from erfcx' =
    2x erfcx - 2/sqrt(pi): a_(k+1) = (2c a_k + 2 a_(k-1)) / (k + 1), from a_0 = erfcx(c) =
    e^(c^2) - 2/sqrt(pi) sum 2^k c^(2k+1) / (2k+1)!! (both series summed exactly, pi to 400 bits);
  - from 4: Laplace's continued fraction 1/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
    30 levels (relative error under 2^-65 there).
- erf x = 1 - erfc x from 1/2 (erfc <= 0.48: no digits lost), with the sign of x; erfc x = 1 - erf x
  below 1/2 and 2 - erfc(-x) below -1/2.

Bounds (`ULP_BOUNDS`) against mpmath and, with glibc's own error added (up to 1 ulp for erf, 2
for erfc), against Python's math.erf and math.erfc over 2^18 inputs (tests/test_gpu_math.py).
Measured against mpmath, natively and on lavapipe (whose Fma rounds twice): erf 2 ulp, erfc 3.
No fused multiply-add is needed to be right. f32 erfc: 0 ulp from math.erfc rounded to f32.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction

from . import f64_approximation as f64
from .trig_approximation import pi_fixed

#: The largest error, in ulp of the result, that each expansion is held to, by (op, float width).
ULP_BOUNDS = {("math.erf", 64): 2, ("math.erfc", 64): 3, ("math.erfc", 32): 1}
_OEQ, _OGE, _OLT, _UNO = 1, 3, 4, 14

_PRECISION = 400
_INTERVALS = [(0.5 + j / 2, 0.75 + j / 2) for j in range(7)]     # (start, centre): [1/2, 4)
_DEGREE = 17
_FRACTION_LEVELS = 30


@functools.cache
def _sqrt_pi() -> Fraction:
    return Fraction(math.isqrt(pi_fixed(_PRECISION) << _PRECISION), 1 << _PRECISION)


def _series(term, first: Fraction) -> Fraction:
    """sum of first, term(first, 1), term(that, 2), ... until the terms fall under 2^-precision."""
    total, t, k = first, first, 1
    while abs(t) > Fraction(1, 1 << _PRECISION):
        t = term(t, k)
        total += t
        k += 1
    return total


@functools.cache
def _erfcx_taylor(centre: float) -> tuple:
    """Coefficients of erfcx(centre + t) in powers of t, highest first, as floats."""
    c = Fraction(centre)
    c2 = c * c
    exp_c2 = _series(lambda t, k: t * c2 / k, Fraction(1))
    scaled_erf = _series(lambda t, k: t * 2 * c2 / (2 * k + 1), c)     # sum 2^k c^(2k+1) / (2k+1)!!
    two_over_root_pi = 2 / _sqrt_pi()
    a = [exp_c2 - two_over_root_pi * scaled_erf]
    a.append(2 * c * a[0] - two_over_root_pi)
    for k in range(1, _DEGREE):
        a.append((2 * c * a[k] + 2 * a[k - 1]) / (k + 1))
    return tuple(float(v) for v in reversed(a))


@functools.cache
def _erf_taylor() -> tuple:
    """2/sqrt(pi) (-1)^k / (k! (2k+1)), k = 12 .. 0: erf x / x in powers of x^2, highest first."""
    two_over_root_pi = 2 / _sqrt_pi()
    return tuple(float(two_over_root_pi * (-1) ** k / (math.factorial(k) * (2 * k + 1))) for k in range(12, -1, -1))


def _erf_small(b, x):
    """erf x for |x| < 1/2 (and -0 stays -0)."""
    return b.mul(b.horner(b.mul(x, x), _erf_taylor()), x)


def _erfcx(b, a):
    """e^(a^2) erfc a for a >= 1/2 (finite; the caller clamps)."""
    centre = b.c(_INTERVALS[0][1])
    coefficients = [b.c(v) for v in _erfcx_taylor(_INTERVALS[0][1])]
    for start, mid in _INTERVALS[1:]:
        inside = b.fcmp(_OGE, a, b.c(start))
        centre = b.select(inside, b.c(mid), centre)
        coefficients = [b.select(inside, b.c(v), old) for v, old in zip(_erfcx_taylor(mid), coefficients)]
    t = b.sub(a, centre)
    near = coefficients[0]
    for k in coefficients[1:]:
        near = b.fma(near, t, k)
    # Laplace's continued fraction, evaluated from the deepest level up
    level = a
    for k in range(_FRACTION_LEVELS, 0, -1):
        level = b.add(a, b.div(b.c(k / 2), level))
    far = b.div(b.c(float(1 / _sqrt_pi())), level)
    return b.select(b.fcmp(_OLT, a, b.c(4.0)), near, far)


def _erfc_positive(b, a):
    """erfc a for a >= 1/2 (NaN passes; inf gives 0)."""
    a = b.clamp_above(a, 30.0)                                     # erfc is 0 from 27.3
    square, square_error = f64.two_product(b, a, a)
    scaled = f64.exp(b, b.op("arith.negf", [square], b.f), b.op("arith.negf", [square_error], b.f), shift=64)
    return b.mul(b.mul(scaled, _erfcx(b, a)), b.c(2.0 ** -64))


def erf(b, x):
    a = b.abs(x)
    large = b.copysign(b.sub(b.c(1.0), _erfc_positive(b, a)), x)
    r = b.select(b.fcmp(_OLT, a, b.c(0.5)), _erf_small(b, x), large)
    return b.select(b.fcmp(_UNO, x, x), x, r)


def erfc(b, x):
    a = b.abs(x)
    tail = _erfc_positive(b, a)
    one = b.c(1.0)
    r = b.select(b.fcmp(_OLT, x, b.c(0.0)), b.sub(b.c(2.0), tail), tail)
    r = b.select(b.fcmp(_OLT, a, b.c(0.5)), b.sub(one, _erf_small(b, x)), r)
    return b.select(b.fcmp(_UNO, x, x), x, r)


EXPANSIONS = {"math.erf": erf, "math.erfc": erfc}
