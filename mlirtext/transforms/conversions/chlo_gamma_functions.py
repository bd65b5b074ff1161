"""chlo -> stablehlo for `lgamma` and `digamma`, as `chlo-legalize-to-stablehlo` computes them:
Lanczos' approximation (g = 7, 9 coefficients) of gamma(z + 1) with z = x - 1, and Euler's
reflection for x < 1/2 (z = -x):

- lgamma(z + 1) = (log 2 + log pi) / 2 + (z + 1/2 - t / log t) * log t + log a(z), with
  t = z + g + 1/2, log t = log(g + 1/2) + log1p(z / (g + 1/2)), a(z) = c0 + sum c_k / (z + k);
  reflected: log pi - log|sin(pi frac|x|)| - lgamma(1 - x) (the sine's log wins when it is
  infinite); +inf at +-inf;
- digamma(z + 1) = log t + a'(z) / a(z) - g / t; reflected: - pi cos(pi r) / sin(pi r) with x
  shifted into [-1/2, 1/2] (r); NaN at the poles (integers <= 0).
f16 and bf16 are computed in f32, as upstream does (in their own type lgamma loses ~70 ulp of f16
near its zeros).
"""
from __future__ import annotations

import math

from ..rewriter import RewritePattern
from .build import all_static, short_name
from .chlo_decompositions import FLOAT_MAX, Formulas, with_upcast
from .hlo_decompositions import HloBuilder

_G = 7.0
_BASE = 0.99999999999980993227684700473478
_COEFFICIENTS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                 771.3234287776530788486528258894, -176.61502916214059906584551354,
                 12.507343278686904814458936853, -0.13857109526572011689554707,
                 9.984369578019570859563e-6, 1.50563273514931155834e-7)


def _reflect_and_z(f: Formulas, x):
    reflect = f.compare("LT", x, f.c(0.5))
    return reflect, f.select(reflect, f.negate(x), f.subtract(x, f.c(1.0)))


def _log_t(f: Formulas, z):
    t = f.add(f.c(_G + 0.5), z)
    return t, f.add(f.c(math.log(_G + 0.5)), f.log_plus_one(f.divide(z, f.c(_G + 0.5))))


def _lgamma(f: Formulas, x):
    reflect, z = _reflect_and_z(f, x)
    a = f.c(_BASE)
    for k, c in enumerate(_COEFFICIENTS, 1):
        a = f.add(a, f.divide(f.c(c), f.add(z, f.c(float(k)))))
    t, log_t = _log_t(f, z)
    r = f.multiply(f.subtract(f.add(z, f.c(0.5)), f.divide(t, log_t)), log_t)
    lgamma = f.add(f.add(f.c((math.log(2) + math.log(math.pi)) / 2), r), f.log(a))
    ax = f.abs(x)
    frac = f.subtract(ax, f.floor(ax))
    frac = f.select(f.compare("LT", f.c(0.5), frac), f.subtract(f.c(1.0), frac), frac)
    denominator = f.log(f.sine(f.multiply(f.c(math.pi), frac)))
    reflected = f.subtract(f.subtract(f.c(math.log(math.pi)), denominator), lgamma)
    finite = f.compare("LT", f.abs(denominator), f.c(float("inf")))
    reflected = f.select(finite, reflected, f.negate(denominator))
    lgamma = f.select(reflect, reflected, lgamma)
    return f.select(f.compare("EQ", ax, f.c(float("inf"))), f.c(float("inf")), lgamma)


def _digamma(f: Formulas, x):
    reflect, z = _reflect_and_z(f, x)
    a, a_prime = f.c(_BASE), f.c(0.0)
    for k, c in enumerate(_COEFFICIENTS, 1):
        term = f.add(z, f.c(float(k)))
        a_prime = f.subtract(a_prime, f.divide(f.c(c), f.multiply(term, term)))
        a = f.add(a, f.divide(f.c(c), term))
    t, log_t = _log_t(f, z)
    digamma = f.subtract(f.add(log_t, f.divide(a_prime, a)), f.divide(f.c(_G), t))
    reduced = f.add(x, f.abs(f.floor(f.add(x, f.c(0.5)))))
    angle = f.multiply(f.c(math.pi), reduced)
    reflected = f.subtract(digamma, f.divide(f.multiply(f.c(math.pi), f.cosine(angle)), f.sine(angle)))
    digamma = f.select(reflect, reflected, digamma)
    pole = f.h.binary("and", f.compare("LE", x, f.c(0.0)), f.compare("EQ", x, f.floor(x)))
    return f.select(pole, f.c(float("nan")), digamma)


_FUNCTIONS = {"lgamma": _lgamma, "digamma": _digamma}


class GammaFunctions(RewritePattern):
    ops = tuple(f"chlo.{name}" for name in _FUNCTIONS)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if len(op.operands) != 1 or not all_static(t) or t.element not in FLOAT_MAX:
            return False
        rw.replace_op(op, [with_upcast(HloBuilder(rw, op), _FUNCTIONS[short_name(op)], op.operand("operand"))])
        return True


PATTERNS = [GammaFunctions()]
