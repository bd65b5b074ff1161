"""arith semantics, on scalars (0-d arrays) and tensors/vectors alike.

Integers wrap at their width. Where MLIR leaves a result undefined (poison:
division by zero, shifts by the width or more, float-to-int overflow) the
interpreter returns a fixed value (0, or the saturated value for casts) so
runs are deterministic; lowerings must not rely on it.
"""
from __future__ import annotations

import numpy as np

from ..dialects.arith import CMPF_PREDICATES, CMPI_PREDICATES
from ..ir import types as T
from ..ir.arrays import attr_to_array, dtype_of, signed_view, unsigned_view, wrap_to_width
from .registry import impl


def result_value(op, value, index: int = 0) -> np.ndarray:
    t = op.results[index].type
    return wrap_to_width(np.asarray(value).astype(dtype_of(t), copy=False), t)


def _binary(fn, name: str = ""):
    def run(interp, op, args):
        a, b = (np.asarray(x) for x in args)
        width = _narrow_width(op.results[0].type)
        with np.errstate(all="ignore"):
            if width and name in _NARROW_FORMS:
                return [result_value(op, _NARROW_FORMS[name](a.astype(np.int64), b.astype(np.int64), width))]
            return [result_value(op, fn(a, b))]
    return run


def _narrow_width(t):
    """The width of an integer element type numpy has no dtype for (i4, i17), else None."""
    e = T.element_type(t)
    return e.width if isinstance(e, T.IntegerType) and e.width not in (1, 8, 16, 32, 64) else None


def _low_bits(a, width):
    """The unsigned value of a narrow integer held sign-extended (ui4 9 is held as -7)."""
    return (a & ((1 << width) - 1)).astype(np.uint64)


#: Ops whose result depends on bits above a narrow value's width in its holder: given the
#: values (int64) and the width. The others (add, shifts left, compares, ...) are right once wrapped.
_NARROW_FORMS = {
    "divui": lambda a, b, w: _udiv(_low_bits(a, w), _low_bits(b, w)),
    "remui": lambda a, b, w: _urem(_low_bits(a, w), _low_bits(b, w)),
    "ceildivui": lambda a, b, w: np.where(_low_bits(b, w) == 0, 0, -(-_low_bits(a, w).astype(np.int64)
                                                                     // np.maximum(_low_bits(b, w), 1).astype(np.int64))),
    "shrui": lambda a, b, w: np.where(_low_bits(b, w) >= w, 0, _low_bits(a, w) >> np.minimum(_low_bits(b, w), 63)),
}


def _int_div(a, b, rounding):
    a, b = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b == 0, 1, b)
    q = np.floor_divide(a, safe)
    r = a - q * safe
    if rounding == "trunc":
        q = np.where((r != 0) & ((a < 0) != (safe < 0)), q + 1, q)
    elif rounding == "ceil":
        q = np.where(r != 0, q + 1, q)
    return np.where(b == 0, 0, q)


def _udiv(a, b):
    ua, ub = unsigned_view(a), unsigned_view(b)
    return np.where(ub == 0, 0, ua // np.where(ub == 0, 1, ub)).astype(ua.dtype).view(a.dtype)


def _urem(a, b):
    ua, ub = unsigned_view(a), unsigned_view(b)
    return np.where(ub == 0, 0, ua % np.where(ub == 0, 1, ub)).astype(ua.dtype).view(a.dtype)


def _srem(a, b):
    safe = np.where(b == 0, 1, b)
    return np.where(b == 0, 0, np.fmod(a, safe))


def _shift(kind):
    def run(a, b):
        bits = a.dtype.itemsize * 8
        amount = unsigned_view(b).astype(np.uint64)
        big = amount >= bits
        amount = np.where(big, 0, amount)
        if kind == "shli":
            out = np.left_shift(a, amount.astype(a.dtype))
        elif kind == "shrsi":
            sa = signed_view(a)
            out = np.right_shift(sa, amount.astype(sa.dtype)).view(a.dtype)
        else:
            ua = unsigned_view(a)
            out = np.right_shift(ua, amount.astype(ua.dtype)).view(a.dtype)
        # Shifting by the width or more is poison in MLIR; we give what IREE's CPU code
        # gives: zero, or the sign for arithmetic right shifts.
        fill = np.where(signed_view(a) < 0, -1, 0).astype(a.dtype) if kind == "shrsi" else np.zeros_like(a)
        return np.where(big, fill, out)
    return run


def umax(a, b):
    return np.where(unsigned_view(a) >= unsigned_view(b), a, b)


def umin(a, b):
    return np.where(unsigned_view(a) <= unsigned_view(b), a, b)


def _mulhi(signed):
    def run(a, b):
        bits = a.dtype.itemsize * 8
        if signed:
            prod = signed_view(a).astype(object) * signed_view(b).astype(object)
        else:
            prod = unsigned_view(a).astype(object) * unsigned_view(b).astype(object)
        hi = np.vectorize(lambda p: (int(p) >> bits) & ((1 << bits) - 1), otypes=[object])(prod)
        return np.array(hi.astype(np.uint64), dtype=np.uint64).astype(f"u{bits // 8}").view(a.dtype)
    return run


INT_BINARY = {
    "addi": np.add, "subi": np.subtract, "muli": np.multiply,
    "divsi": lambda a, b: _int_div(a, b, "trunc"), "divui": _udiv,
    "ceildivsi": lambda a, b: _int_div(a, b, "ceil"),
    "ceildivui": lambda a, b: np.where(unsigned_view(b) == 0, 0, -(-unsigned_view(a).astype(object)
                                                                   // np.where(unsigned_view(b) == 0, 1, unsigned_view(b)).astype(object))).astype(np.uint64).astype(unsigned_view(a).dtype).view(a.dtype),
    "floordivsi": lambda a, b: _int_div(a, b, "floor"),
    "remsi": _srem, "remui": _urem,
    "andi": np.bitwise_and, "ori": np.bitwise_or, "xori": np.bitwise_xor,
    "shli": _shift("shli"), "shrsi": _shift("shrsi"), "shrui": _shift("shrui"),
    "maxsi": np.maximum, "minsi": np.minimum, "maxui": umax, "minui": umin,
}
FLOAT_BINARY = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide, "remf": np.fmod,
    "maximumf": np.maximum, "minimumf": np.minimum, "maxnumf": np.fmax, "minnumf": np.fmin,
}
#: i1 is a one-bit integer: sums wrap (xor) and, signed, true is -1 (so max is `and`).
_I1 = {"addi": np.logical_xor, "subi": np.logical_xor, "muli": np.logical_and,
       "maxsi": np.logical_and, "minsi": np.logical_or, "maxui": np.logical_or, "minui": np.logical_and}


def _with_i1(name, fn):
    on_bool = _I1.get(name)
    if on_bool is None:
        return fn
    return lambda a, b: on_bool(a, b) if a.dtype == np.bool_ else fn(a, b)


for _name, _fn in {**INT_BINARY, **FLOAT_BINARY}.items():
    impl(f"arith.{_name}")(_binary(_with_i1(_name, _fn), _name))


@impl("arith.negf")
def _negf(interp, op, args):
    return [result_value(op, np.negative(args[0]))]


@impl("arith.constant")
def _constant(interp, op, args):
    return [attr_to_array(op.attr("value"), op.result_named("result").type)]


@impl("arith.select")
def _select(interp, op, args):
    cond, a, b = args
    return [result_value(op, np.where(cond, a, b))]


def _signed(a):
    """The signed value of each element; an i1 (a numpy bool) true is -1, as in LLVM's icmp."""
    return -a.astype(np.int8) if a.dtype == np.bool_ else signed_view(a)


CMPI_FUNCTIONS = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "slt": lambda a, b: _signed(a) < _signed(b), "sle": lambda a, b: _signed(a) <= _signed(b),
    "sgt": lambda a, b: _signed(a) > _signed(b), "sge": lambda a, b: _signed(a) >= _signed(b),
    "ult": lambda a, b: unsigned_view(a) < unsigned_view(b), "ule": lambda a, b: unsigned_view(a) <= unsigned_view(b),
    "ugt": lambda a, b: unsigned_view(a) > unsigned_view(b), "uge": lambda a, b: unsigned_view(a) >= unsigned_view(b),
}


def _unordered(a, b):
    return np.isnan(a) | np.isnan(b)


CMPF_FUNCTIONS = {
    "false": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool),
    "true": lambda a, b: np.ones(np.broadcast(a, b).shape, bool),
    "oeq": lambda a, b: a == b, "ogt": lambda a, b: a > b, "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b, "ole": lambda a, b: a <= b,
    "one": lambda a, b: (a != b) & ~_unordered(a, b), "ord": lambda a, b: ~_unordered(a, b),
    "ueq": lambda a, b: (a == b) | _unordered(a, b), "ugt": lambda a, b: (a > b) | _unordered(a, b),
    "uge": lambda a, b: (a >= b) | _unordered(a, b), "ult": lambda a, b: (a < b) | _unordered(a, b),
    "ule": lambda a, b: (a <= b) | _unordered(a, b), "une": lambda a, b: (a != b),
    "uno": _unordered,
}


@impl("arith.cmpi", "arith.cmpf")
def _cmp(interp, op, args):
    a, b = args
    names, table = (CMPI_PREDICATES, CMPI_FUNCTIONS) if op.name == "arith.cmpi" else (CMPF_PREDICATES, CMPF_FUNCTIONS)
    with np.errstate(invalid="ignore"):
        return [np.asarray(table[names[op.attr("predicate").value]](a, b))]


def _float_to_int(a, dtype, unsigned):
    info = np.iinfo(dtype)
    clipped = np.clip(np.nan_to_num(np.trunc(a.astype(np.float64)), nan=0.0), info.min, info.max)
    return clipped.astype(dtype)


def _mask_narrow(u, t):
    """Unsigned bits of an integer of a width numpy lacks (i2, i4, i17): the low `width` bits."""
    from ..ir import types as T
    e = T.element_type(t)
    if isinstance(e, T.IntegerType) and e.width not in (1, 8, 16, 32, 64) and u.dtype.kind == "u":
        return u & u.dtype.type((1 << e.width) - 1)
    return u


@impl("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui",
      "arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui",
      "arith.bitcast")
def _cast(interp, op, args):
    (a,) = args
    kind = op.name.split(".", 1)[1]
    dtype = dtype_of(op.results[0].type)
    with np.errstate(all="ignore"):
        if kind in ("extui", "index_castui", "uitofp"):
            src = unsigned_view(a) if a.dtype.kind != "b" else a.astype(np.uint8)
            src = _mask_narrow(src, op.operand("in").type)
            return [result_value(op, src.astype(dtype))]
        if kind in ("fptosi", "fptoui"):
            target = np.dtype(f"{'u' if kind == 'fptoui' else 'i'}{dtype.itemsize}") if dtype.kind != "b" else dtype
            return [result_value(op, _float_to_int(a, target, kind == "fptoui").view(dtype) if dtype.kind != "b"
                         else a != 0)]
        if kind == "bitcast":
            a = np.asarray(a)
            if a.dtype.kind in "iu":  # i4 -> f4E2M1FN: only the low bits are the value
                a = _mask_narrow(unsigned_view(a), op.operand("in").type)
            out = a.view(dtype) if a.dtype.itemsize == dtype.itemsize else a.astype(dtype)
            return [result_value(op, out) if dtype.kind in "iu" else out]
        if kind == "trunci" and dtype.kind == "b":
            return [np.asarray((a & 1) != 0)]
        return [result_value(op, a.astype(dtype))]


@impl("arith.addui_extended")
def _addui_extended(interp, op, args):
    a, b = (unsigned_view(x) for x in args)
    with np.errstate(all="ignore"):
        s = a + b
    return [result_value(op, s.view(args[0].dtype)), np.asarray(s < a)]


@impl("arith.mulsi_extended", "arith.mului_extended")
def _mul_extended(interp, op, args):
    a, b = args
    with np.errstate(all="ignore"):
        low = np.multiply(a, b)
    high = _mulhi(op.name == "arith.mulsi_extended")(a, b)
    return [result_value(op, low), result_value(op, high, 1)]


@impl("arith.scaling_extf", "arith.scaling_truncf")
def _scaling(interp, op, args):
    """OCP microscaling casts: scaling_extf = extf(x) * extf(scale); scaling_truncf =
    truncf(x / extf(scale)) (the scale is a power of two, e.g. f8E8M0FNU)."""
    x, scale = (np.asarray(a) for a in args)
    dtype = dtype_of(op.results[0].type)
    with np.errstate(all="ignore"):
        if op.name == "arith.scaling_extf":
            wide = np.float64 if dtype == np.float64 else np.float32
            return [(x.astype(wide) * scale.astype(wide)).astype(dtype)]
        wide = np.float64 if x.dtype == np.float64 else np.float32
        return [(x.astype(wide) / scale.astype(wide)).astype(x.dtype).astype(dtype)]
