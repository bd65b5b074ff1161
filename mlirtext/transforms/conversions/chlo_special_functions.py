"""chlo -> stablehlo for the error functions, as `chlo-legalize-to-stablehlo` approximates them
in f32 (polynomials evaluated by Horner's rule), f16 and bf16 computed in f32 as upstream does
(f64 has its own approximations: chlo_special_functions_f64.py):

- `erf`: Eigen's rational approximation x * alpha(x^2) / beta(x^2) on x clamped to [-4, 4],
  clamped to [-1, 1];
- `erfc`: 1 - x T(x^2) for |x| < 1 (Cephes), else exp(-x^2) / |x| * (P | R)(1 / x^2) (P below
  2, R above), 0 once -x^2 < -maxlog, mirrored as 2 - erfc(-x) for negative x;
- `erf_inv`: Giles' single-precision polynomials in w = -log1p(-x^2) (below and above 5),
  +-inf at +-1;
- `bessel_i1e`: Cephes' Chebyshev series, |x| * A(|x| / 2 - 2) up to 8 and B(32 / |x| - 2) /
  sqrt|x| beyond, with x's sign.
"""
from __future__ import annotations

from ...ir import types as T
from ..rewriter import RewritePattern
from .build import all_static, short_name
from .chlo_decompositions import Formulas, with_upcast
from .hlo_decompositions import HloBuilder

_ALPHA = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
          -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02)
_BETA = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
         -1.42647390514189e-02)
_ERF_T = (7.853861353153693e-5, -8.010193625184903e-4, 5.188327685732524e-3, -2.685381193529856e-2,
          1.128358514861418e-1, -3.761262582423300e-1, 1.128379165726710e+0)
_ERFC_P = (2.326819970068386e-2, -1.387039388740657e-1, 3.687424674597105e-1, -5.824733027278666e-1,
           6.210004621745983e-1, -4.944515323274145e-1, 3.404879937665872e-1, -2.741127028184656e-1,
           5.638259427386472e-1)
_ERFC_R = (-1.047766399936249e+1, 1.297719955372516e+1, -7.495518717768503e+0, 2.921019019210786e+0,
           -1.015265279202700e+0, 4.218463358204948e-1, -2.820767439740514e-1, 5.641895067754075e-1)
_MAXLOG = 88.72283905206835
_W_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
            -0.00417768164, 0.246640727, 1.50140941)
_W_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
            0.00943887047, 1.00167406, 2.83297682)
_I1E_A = (9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
          -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
          4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
          -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
          2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
          -1.76416518357834055153e-1, 2.52587186443633654823e-1)
_I1E_B = (-3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
          -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
          7.78576235018280120474e-1)


def chebyshev(f: Formulas, x, coefficients):
    """Clenshaw's recurrence for a Chebyshev series (Cephes' chbevl)."""
    b0 = b1 = b2 = f.c(0.0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = f.add(f.subtract(f.multiply(x, b1), b2), f.c(c))
    return f.multiply(f.subtract(b0, b2), f.c(0.5))


def bessel_i1e(f: Formulas, x, near_series=_I1E_A, far_series=_I1E_B):
    z = f.abs(x)
    near = f.multiply(z, chebyshev(f, f.subtract(f.multiply(f.c(0.5), z), f.c(2.0)), near_series))
    far = f.divide(chebyshev(f, f.subtract(f.divide(f.c(32.0), z), f.c(2.0)), far_series), f.sqrt(z))
    return f.multiply(f.sign(x), f.select(f.compare("LE", z, f.c(8.0)), near, far))


def horner(f: Formulas, x, coefficients):
    p = f.c(coefficients[0])
    for c in coefficients[1:]:
        p = f.add(f.multiply(p, x), f.c(c))
    return p


def _clamp(f: Formulas, lo: float, x, hi: float):
    return f.h.op("clamp", [f.c(lo), x, f.c(hi)], f.t)


def _erf(f: Formulas, x):
    x = _clamp(f, -4.0, x, 4.0)
    square = f.multiply(x, x)
    out = f.divide(f.multiply(x, horner(f, square, _ALPHA)), horner(f, square, _BETA))
    return _clamp(f, -1.0, out, 1.0)


def _erfc(f: Formulas, x):
    square = f.multiply(x, x)
    z = f.negate(square)
    ax = f.abs(x)
    reciprocal = f.divide(f.c(1.0), square)
    scaled = f.multiply(f.exponential(z), f.divide(f.c(1.0), ax))
    poly = f.select(f.compare("LT", ax, f.c(2.0)), horner(f, reciprocal, _ERFC_P), horner(f, reciprocal, _ERFC_R))
    tail = f.select(f.compare("LT", z, f.c(-_MAXLOG)), f.c(0.0), f.multiply(scaled, poly))
    tail = f.select(f.compare("LT", x, f.c(0.0)), f.subtract(f.c(2.0), tail), tail)
    near = f.subtract(f.c(1.0), f.multiply(x, horner(f, square, _ERF_T)))
    return f.select(f.compare("LT", ax, f.c(1.0)), near, tail)


def _erf_inv(f: Formulas, x):
    w = f.negate(f.log_plus_one(f.multiply(x, f.negate(x))))
    small = f.compare("LT", w, f.c(5.0))
    w = f.select(small, f.subtract(w, f.c(2.5)), f.subtract(f.sqrt(w), f.c(3.0)))
    p = f.select(small, f.c(_W_SMALL[0]), f.c(_W_LARGE[0]))
    for a, b in zip(_W_SMALL[1:], _W_LARGE[1:]):
        p = f.add(f.select(small, f.c(a), f.c(b)), f.multiply(p, w))
    edge = f.compare("EQ", f.abs(x), f.c(1.0))
    return f.select(edge, f.multiply(x, f.c(float("inf"))), f.multiply(p, x))


_FUNCTIONS = {"erf": _erf, "erfc": _erfc, "erf_inv": _erf_inv, "bessel_i1e": bessel_i1e}


class ErrorFunctions(RewritePattern):
    ops = tuple(f"chlo.{name}" for name in _FUNCTIONS)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if len(op.operands) != 1 or not all_static(t) or t.element not in (T.f32, T.f16, T.bf16):
            return False
        rw.replace_op(op, [with_upcast(HloBuilder(rw, op), _FUNCTIONS[short_name(op)], op.operand("operand"))])
        return True


PATTERNS = [ErrorFunctions()]
