"""chlo -> stablehlo for `zeta` (Hurwitz) and `polygamma`, as `chlo-legalize-to-stablehlo` computes
them (f16 / bf16 in f32):

- zeta(x, q): ten terms of the series, sum_{k<10} (q + k)^-x, then Euler-Maclaurin's tail with
  twelve Bernoulli terms evaluated by Horner's rule, each term's rising factorial growing by
  (x + 2j - 3)(x + 2j - 2) (upstream writes (x - 2j + 3)(x - 2j + 2) there, which zeroes the
  tail beyond its first term for integer x and leaves about 1e-7 relative error in f64; this
  one agrees with scipy to a few ulp); the series alone when its last term is
  below epsilon of the sum; NaN for x < 1 or (q <= 0 and x not an integer); at the poles (q an
  integer <= 0) +inf for even integer x, else NaN; +inf at x = 1;
- polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for natural n > 0 (n! as exp(lgamma(n + 1))),
  digamma(x) for n = 0, NaN for any other n. lgamma, digamma and zeta stay chlo ops here and are
  lowered in turn.
"""
from __future__ import annotations

import numpy as np

from ...ir import types as T
from ..rewriter import RewritePattern
from .build import all_static, short_name
from .chlo_decompositions import Formulas, with_upcast
from .hlo_decompositions import HloBuilder

#: (2k)! / B_2k for k = 12 down to 1 (B: the Bernoulli numbers), for Horner's rule.
_ZETA_COEFFICIENTS = (-7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
                      1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10,
                      -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0, -720.0, 12.0)
_EPSILON = {T.f32: float(np.finfo(np.float32).eps), T.f64: float(np.finfo(np.float64).eps)}


def _and(f: Formulas, a, b):
    return f.h.binary("and", a, b)


def _is_integer(f: Formulas, x):
    return f.compare("EQ", x, f.floor(x))


def _zeta(f: Formulas, x, q):
    minus_x = f.negate(x)
    a = q
    series = f.power(q, minus_x)
    for _ in range(9):
        a = f.add(a, f.c(1.0))
        series = f.add(series, f.power(a, minus_x))
    a = f.add(a, f.c(1.0))
    term = f.power(a, minus_x)
    out = f.add(series, f.divide(f.multiply(term, a), f.subtract(x, f.c(1.0))))
    inverse_square = f.divide(f.c(1.0), f.multiply(a, a))
    horner = f.c(0.0)
    for i, c in enumerate(_ZETA_COEFFICIENTS[:-1]):
        factor = f.multiply(f.add(x, f.c(22.0 - 2 * i)), f.add(x, f.c(21.0 - 2 * i)))
        horner = f.multiply(factor, f.multiply(inverse_square, f.add(horner, f.c(1.0 / c))))
    tail = f.multiply(f.divide(x, a), f.add(f.c(1.0 / _ZETA_COEFFICIENTS[-1]), horner))
    out = f.add(out, f.multiply(term, f.add(f.c(0.5), tail)))
    converged = f.compare("LT", f.abs(term), f.multiply(f.abs(series), f.c(_EPSILON[f.t.element])))
    out = f.select(converged, series, out)
    nan, inf = f.c(float("nan")), f.c(float("inf"))
    out = f.select(f.compare("LT", x, f.c(1.0)), nan, out)
    q_not_positive = f.compare("LE", q, f.c(0.0))
    out = f.select(_and(f, q_not_positive, f.compare("NE", x, f.floor(x))), nan, out)
    x_even = _and(f, _is_integer(f, x), f.compare("EQ", f.remainder(x, f.c(2.0)), f.c(0.0)))
    out = f.select(_and(f, q_not_positive, _is_integer(f, q)), f.select(x_even, inf, nan), out)
    return f.select(f.compare("EQ", x, f.c(1.0)), inf, out)


def _chlo(f: Formulas, name: str, *operands):
    return f.h.rw.create(f.h.anchor, f"chlo.{name}", list(operands), [f.t]).result


def _polygamma(f: Formulas, n, x):
    one = f.c(1.0)
    sign = f.subtract(f.multiply(f.c(2.0), f.remainder(n, f.c(2.0))), one)
    n_plus_one = f.add(n, one)
    factorial = f.exponential(_chlo(f, "lgamma", n_plus_one))
    out = f.multiply(f.multiply(sign, factorial), _chlo(f, "zeta", n_plus_one, x))
    out = f.select(f.compare("EQ", n, f.c(0.0)), _chlo(f, "digamma", x), out)
    natural = _and(f, _is_integer(f, n), f.compare("GE", n, f.c(0.0)))
    return f.select(natural, out, f.c(float("nan")))


_FUNCTIONS = {"zeta": _zeta, "polygamma": _polygamma}


class ZetaFunctions(RewritePattern):
    ops = tuple(f"chlo.{name}" for name in _FUNCTIONS)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if not all_static(t) or t.element not in (T.f16, T.bf16, T.f32, T.f64) or \
                any(v.type != t for v in op.operands):
            return False
        rw.replace_op(op, [with_upcast(HloBuilder(rw, op), _FUNCTIONS[short_name(op)], *op.operands)])
        return True


PATTERNS = [ZetaFunctions()]
