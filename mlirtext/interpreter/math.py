"""math semantics (elementwise, numpy)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..ir.arrays import dtype_of
from .registry import impl


def _erf(x):
    from math import erf
    return np.vectorize(erf, otypes=[np.float64])(x)


def _erfc(x):
    """math.erfc, not 1 - erf: that is 0 from x = 6, where erfc is still 2e-17 (down to 5e-324)."""
    from math import erfc
    return np.vectorize(erfc, otypes=[np.float64])(x)


def _round_away(x):
    """Round half away from zero, exactly: |x| + 0.5 would round up 0.49999997 in f32."""
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t).astype(np.asarray(x).dtype)


UNARY = {
    "absf": np.abs, "absi": np.abs, "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin,
    "asinh": np.arcsinh, "atan": np.arctan, "atanh": np.arctanh, "cbrt": np.cbrt, "ceil": np.ceil,
    "cos": np.cos, "cosh": np.cosh, "erf": _erf, "erfc": _erfc, "exp": np.exp,
    "exp2": np.exp2, "expm1": np.expm1, "floor": np.floor, "log": np.log, "log10": np.log10,
    "log1p": np.log1p, "log2": np.log2, "round": _round_away, "roundeven": np.rint,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sin": np.sin, "sinh": np.sinh, "sqrt": np.sqrt,
    "tan": np.tan, "tanh": np.tanh, "trunc": np.trunc,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
    "isnormal": lambda x: np.isfinite(x) & (np.abs(x) >= np.finfo(x.dtype).tiny),
    "ctpop": lambda x: np.vectorize(lambda v: bin(int(v) & ((1 << (x.dtype.itemsize * 8)) - 1)).count("1"))(x),
}
_BINARY = {"atan2": np.arctan2, "copysign": np.copysign, "powf": np.power,
           "fpowi": lambda a, b: np.power(a, b.astype(a.dtype)), "ipowi": lambda a, b: np.power(a, b)}


def _unary(fn):
    def run(interp, op, args):
        with np.errstate(all="ignore"):
            out = fn(args[0])
        return [np.asarray(out).astype(dtype_of(op.results[0].type), copy=False)]
    return run


def _binary(fn):
    def run(interp, op, args):
        with np.errstate(all="ignore"):
            out = fn(*args)
        return [np.asarray(out).astype(dtype_of(op.results[0].type), copy=False)]
    return run


for _name, _fn in UNARY.items():
    impl(f"math.{_name}")(_unary(_fn))
for _name, _fn in _BINARY.items():
    impl(f"math.{_name}")(_binary(_fn))


def fma64(a, b, c):
    """A fused multiply-add in f64: exact through Python's fractions where numpy has no fma."""
    def one(x, y, z):
        if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            return x * y + z
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        try:
            return float(exact)
        except OverflowError:        # beyond the largest double: rounds to an infinity
            return float("inf") if exact > 0 else float("-inf")
    return np.vectorize(one, otypes=[np.float64])(a, b, c)


@impl("math.fma")
def _fma(interp, op, args):
    """a*b + c with one rounding, as llvm.intr.fma computes it. For f32 (and narrower) the product
    is exact in f64 (24 + 24 bits <= 53), so the only roundings are the f64 sum and the final
    cast; the double rounding can differ from a true fma only when the exact sum is not an f64 and
    its f64 rounding lands exactly halfway between two f32s (then off by one ulp) - rare enough
    that the approximations' ulp bounds and numpy-based checks are unaffected. f64 uses exact
    rationals (numpy has no fma)."""
    a, b, c = args
    dtype = dtype_of(op.results[0].type)
    if np.dtype(dtype) == np.float64:
        return [np.asarray(fma64(*np.broadcast_arrays(a, b, c))).astype(dtype, copy=False)]
    with np.errstate(all="ignore"):
        out = np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)
        return [out.astype(dtype, copy=False)]


@impl("math.sincos")
def _sincos(interp, op, args):
    dtype = dtype_of(op.operand("operand").type)
    with np.errstate(all="ignore"):
        return [np.asarray(np.sin(args[0])).astype(dtype, copy=False),
                np.asarray(np.cos(args[0])).astype(dtype, copy=False)]


def count_leading_zeros(x):
    bits = x.dtype.itemsize * 8
    return np.vectorize(lambda v: bits - (int(v) & ((1 << bits) - 1)).bit_length())(x)


def count_trailing_zeros(x):
    bits = x.dtype.itemsize * 8

    def one(v):
        v = int(v) & ((1 << bits) - 1)
        return bits if v == 0 else (v & -v).bit_length() - 1
    return np.vectorize(one)(x)


impl("math.ctlz")(_unary(count_leading_zeros))
impl("math.cttz")(_unary(count_trailing_zeros))
