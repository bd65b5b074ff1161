"""llvm.intr.* semantics: elementwise math, integer bit tricks, saturation, vector reductions,
memory intrinsics. Floats narrower than f32 compute in f32 and round back; poison cases
(ctlz of zero with is_zero_poison, abs of INT_MIN) give the value LLVM's non-poison form gives.
"""
from __future__ import annotations

import functools

import numpy as np

from . import math as M
from ..ir.arrays import dtype_of, signed_view, unsigned_view
from .llvm_memory import Pointer
from .machine import InterpreterError
from .registry import impl, semantics_of


def _mem(interp):
    from .llvm import memory_of
    return memory_of(interp)


def _wide(x: np.ndarray) -> np.ndarray:
    """f16, bf16 and f8 kinds as f32 (computed there, rounded back by the caller)."""
    if x.dtype.kind in "iub" or (x.dtype.kind == "f" and x.dtype.itemsize >= 4):
        return x
    return x.astype(np.float32)


def _float(fn):
    def run(interp, op, args):
        dtype = dtype_of(op.results[0].type)
        with np.errstate(all="ignore"):
            out = fn(*[_wide(np.asarray(a)) for a in args])
        return [np.asarray(out).astype(dtype, copy=False)]
    return run


def round_half_away(x):
    """Round half away from zero, exactly (no x + 0.5 rounding error), keeping -0."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t).astype(x.dtype)


def _minimum(a, b):
    r = np.where(a == b, np.where(np.signbit(a), a, b), np.where(a < b, a, b))
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r).astype(np.result_type(a, b))


def _maximum(a, b):
    r = np.where(a == b, np.where(np.signbit(a), b, a), np.where(a > b, a, b))
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r).astype(np.result_type(a, b))


_FLOAT = {
    "fabs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x)
    .astype(x.dtype), "log": np.log, "log2": np.log2, "log10": np.log10, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "pow": np.power,
    "fma": lambda a, b, c: (a.astype(np.float64) * b + c) if a.dtype != np.float64 else M.fma64(a, b, c),
    "fmuladd": lambda a, b, c: a * b + c,
    "floor": np.floor, "ceil": np.ceil, "round": round_half_away, "roundeven": np.rint, "trunc": np.trunc,
    "rint": np.rint, "nearbyint": np.rint, "copysign": np.copysign, "minnum": np.fmin, "maxnum": np.fmax,
    "minimum": _minimum, "maximum": _maximum,
    "powi": lambda a, b: np.power(a, b.astype(a.dtype)), "ldexp": lambda a, b: np.ldexp(a, b.astype(np.int32)),
}


for _name, _fn in _FLOAT.items():
    impl(f"llvm.intr.{_name}")(_float(_fn))


def _constrained(kind):
    fns = {"fadd": np.add, "fsub": np.subtract, "fmul": np.multiply, "fdiv": np.divide, "frem": np.fmod,
           "fma": _FLOAT["fma"], "fmuladd": _FLOAT["fmuladd"]}

    def run(interp, op, args):
        mode = op.attr("roundingmode")
        if mode is not None and mode.value not in (1, 7):  # tonearest, dynamic
            raise InterpreterError(f"'{op.name}': only round-to-nearest is supported")
        dtype = dtype_of(op.results[0].type)
        with np.errstate(all="ignore"):
            if kind in fns:
                out = fns[kind](*[_wide(np.asarray(a)) for a in args])
            elif kind == "uitofp":
                out = unsigned_view(args[0]) if args[0].dtype != np.bool_ else args[0].astype(np.uint8)
            else:
                out = args[0]
        return [np.asarray(out).astype(dtype)]
    return run


for _name in ("fadd", "fsub", "fmul", "fdiv", "frem", "fma", "fmuladd", "fptrunc", "fpext", "sitofp", "uitofp"):
    impl(f"llvm.intr.experimental.constrained.{_name}")(_constrained(_name))


def _to_int(rounder):
    def run(interp, op, args):
        dtype = dtype_of(op.results[0].type)
        info = np.iinfo(dtype)
        with np.errstate(all="ignore"):
            x = np.nan_to_num(rounder(args[0].astype(np.float64)), nan=0.0)
        return [np.clip(x, info.min, info.max).astype(dtype)]
    return run


for _name, _r in (("lrint", np.rint), ("llrint", np.rint), ("lround", round_half_away), ("llround", round_half_away)):
    impl(f"llvm.intr.{_name}")(_to_int(_r))


@impl("llvm.intr.frexp")
def _frexp(interp, op, args):
    m, e = np.frexp(_wide(args[0]))
    t = op.results[0].type
    return [(m.astype(args[0].dtype), e.astype(dtype_of(t.body[1])))]


@impl("llvm.intr.sincos")
def _sincos(interp, op, args):
    x = _wide(args[0])
    return [(np.sin(x).astype(args[0].dtype), np.cos(x).astype(args[0].dtype))]


@impl("llvm.intr.is.fpclass")
def _is_fpclass(interp, op, args):
    x = np.asarray(args[0])
    bits = op.attr("bit").value
    f = _wide(x) if x.dtype.kind != "f" or x.dtype.itemsize >= 2 else x
    nan, neg = np.isnan(f), np.signbit(f)
    tiny = np.finfo(x.dtype).tiny if x.dtype.kind == "f" else np.finfo(np.float32).tiny
    raw = unsigned_view(x.view(f"i{x.dtype.itemsize}")) if x.dtype.kind == "f" else None
    mant_bits = np.finfo(x.dtype).nmant if x.dtype.kind == "f" else 22
    quiet = ((raw >> (mant_bits - 1)) & 1).astype(bool) if raw is not None else np.ones(x.shape, bool)
    inf, zero = np.isinf(f), f == 0
    sub = ~nan & ~inf & ~zero & (np.abs(f) < tiny)
    normal = ~nan & ~inf & ~zero & ~sub
    classes = [nan & ~quiet, nan & quiet, inf & neg, normal & neg, sub & neg, zero & neg, zero & ~neg,
               sub & ~neg, normal & ~neg, inf & ~neg]
    out = np.zeros(x.shape, bool)
    for i, c in enumerate(classes):
        if bits & (1 << i):
            out |= c
    return [out]


# ---- integers ----------------------------------------------------------------------------------
def _int(fn):
    def run(interp, op, args):
        dtype = dtype_of(op.results[0].type)
        with np.errstate(all="ignore"):
            out = fn(*[np.asarray(a) for a in args])
        return [np.asarray(out).astype(dtype, copy=False)]
    return run


def _width(a: np.ndarray) -> int:
    return 1 if a.dtype == np.bool_ else a.dtype.itemsize * 8


def _objects(fn):
    """An elementwise op on Python ints (unsigned views), for the rare bit tricks."""
    def run(*xs):
        bits = _width(xs[0])
        mask = (1 << bits) - 1
        us = [unsigned_view(x).astype(object) if x.dtype != np.bool_ else x.astype(object) for x in xs]
        out = np.vectorize(lambda *v: fn(bits, *[int(i) & mask for i in v]) & mask, otypes=[object])(*us)
        if xs[0].dtype == np.bool_:
            return np.asarray(out.astype(bool))
        udtype = unsigned_view(np.zeros(0, xs[0].dtype)).dtype
        return np.asarray(out.astype(np.uint64).astype(udtype)).view(xs[0].dtype)
    return run


def _bitreverse(bits, v):
    return int(format(v, f"0{bits}b")[::-1], 2)


def _bswap(bits, v):
    return int.from_bytes(v.to_bytes(bits // 8, "little"), "big")


def _fshl(bits, a, b, c):
    c %= bits
    return ((a << c) | (b >> (bits - c))) if c else a


def _fshr(bits, a, b, c):
    c %= bits
    return ((b >> c) | (a << (bits - c))) if c else b


def _sat(kind):
    def fn(bits, a, b):
        sa = a - (1 << bits) if a >> (bits - 1) else a
        sb = b - (1 << bits) if b >> (bits - 1) else b
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if kind == "sadd":
            return max(lo, min(hi, sa + sb))
        if kind == "ssub":
            return max(lo, min(hi, sa - sb))
        if kind == "uadd":
            return min((1 << bits) - 1, a + b)
        if kind == "usub":
            return max(0, a - b)
        if kind == "ushl":
            return a << b if b < bits and (a << b) >> b == a and (a << b) < (1 << bits) else (1 << bits) - 1
        if kind == "sshl":  # b is a shift amount
            if b >= bits:
                return 0 if sa == 0 else (lo if sa < 0 else hi)
            r = sa << b
            return r if lo <= r <= hi else (lo if sa < 0 else hi)
        raise ValueError(kind)
    return fn


_INT = {
    "bitreverse": _objects(_bitreverse), "bswap": _objects(_bswap), "fshl": _objects(_fshl),
    "fshr": _objects(_fshr),
    "ctpop": M.UNARY["ctpop"],
    "smax": np.maximum, "smin": np.minimum,
    "umax": lambda a, b: np.where(unsigned_view(a) >= unsigned_view(b), a, b),
    "umin": lambda a, b: np.where(unsigned_view(a) <= unsigned_view(b), a, b),
}
for _kind in ("sadd", "uadd", "ssub", "usub", "sshl", "ushl"):
    _INT[f"{_kind}.sat"] = _objects(_sat(_kind))
for _name, _fn in _INT.items():
    impl(f"llvm.intr.{_name}")(_int(_fn))


@impl("llvm.intr.abs")
def _abs(interp, op, args):
    a = args[0]
    with np.errstate(all="ignore"):
        return [np.abs(signed_view(a)).view(a.dtype)]  # INT_MIN stays INT_MIN


@impl("llvm.intr.ctlz")
def _ctlz(interp, op, args):
    return [np.asarray(M.count_leading_zeros(args[0])).astype(args[0].dtype)]


@impl("llvm.intr.cttz")
def _cttz(interp, op, args):
    return [np.asarray(M.count_trailing_zeros(args[0])).astype(args[0].dtype)]


@impl("llvm.intr.expect", "llvm.intr.expect.with.probability")
def _expect(interp, op, args):
    return [args[0]]


@impl("llvm.intr.ptrmask")
def _ptrmask(interp, op, args):
    ptr, mask = args
    memory = _mem(interp)
    addr = memory.address_of(ptr) & (int(unsigned_view(np.asarray(mask))) & ((1 << 64) - 1))
    return [Pointer(ptr.alloc, ptr.offset + addr - memory.address_of(ptr))]


# ---- vectors ---------------------------------------------------------------------------------------
@impl("llvm.intr.stepvector")
def _stepvector(interp, op, args):
    t = op.results[0].type
    return [np.arange(t.shape[0]).astype(dtype_of(t))]


@impl("llvm.intr.vector.extract")
def _vector_extract(interp, op, args):
    pos = op.attr("pos").value
    n = op.results[0].type.shape[0]
    return [args[0][pos:pos + n].copy()]


@impl("llvm.intr.vector.insert")
def _vector_insert(interp, op, args):
    vec, sub = args
    pos = op.attr("pos").value
    out = vec.copy()
    out[pos:pos + sub.shape[0]] = sub
    return [out]


def _ordered(fn):
    """A reduction applied in lane order (what LLVM does without `reassoc`)."""
    def run(start, v):
        acc = start
        for x in v.reshape(-1):
            acc = fn(acc, x)
        return acc
    return run


_REDUCE = {
    "add": lambda v: np.add.reduce(v, dtype=v.dtype), "mul": lambda v: np.multiply.reduce(v, dtype=v.dtype),
    "and": np.bitwise_and.reduce, "or": np.bitwise_or.reduce, "xor": np.bitwise_xor.reduce,
    "smax": np.max, "smin": np.min,
    "umax": lambda v: unsigned_view(v).max().astype(unsigned_view(v).dtype).view(v.dtype),
    "umin": lambda v: unsigned_view(v).min().astype(unsigned_view(v).dtype).view(v.dtype),
    "fmax": np.fmax.reduce, "fmin": np.fmin.reduce,
    "fmaximum": lambda v: functools.reduce(_maximum, v.reshape(-1)),
    "fminimum": lambda v: functools.reduce(_minimum, v.reshape(-1)),
}


def _reduce(kind):
    def run(interp, op, args):
        dtype = dtype_of(op.results[0].type)
        with np.errstate(all="ignore"):
            if kind in ("fadd", "fmul"):
                start, v = args
                fn = np.add if kind == "fadd" else np.multiply
                out = _ordered(lambda a, b: fn(a, b))(np.asarray(start), v)
            else:
                v = args[0]
                if v.dtype == np.bool_ and kind in ("add", "xor"):
                    out = np.bitwise_xor.reduce(v)
                elif v.dtype == np.bool_ and kind in ("mul", "and", "umin", "smax"):
                    out = v.all()
                elif v.dtype == np.bool_:
                    out = v.any()
                else:
                    out = _REDUCE[kind](v)
        return [np.asarray(out).astype(dtype)]
    return run


for _kind in list(_REDUCE) + ["fadd", "fmul"]:
    impl(f"llvm.intr.vector.reduce.{_kind}")(_reduce(_kind))


# ---- memory ----------------------------------------------------------------------------------------
def _length(op, args, i):
    if op.name.endswith(".inline"):
        return int(op.attr("len").value)
    return int(unsigned_view(np.asarray(args[i])))


@impl("llvm.intr.memcpy", "llvm.intr.memmove", "llvm.intr.memcpy.inline")
def _memcpy(interp, op, args):
    _mem(interp).copy(args[0], args[1], _length(op, args, 2), f"'{op.name}'")
    return []


@impl("llvm.intr.memset", "llvm.intr.memset.inline")
def _memset(interp, op, args):
    _mem(interp).fill(args[0], int(args[1]), _length(op, args, 2), f"'{op.name}'")
    return []


# ---- calls by intrinsic name ---------------------------------------------------------------------
@impl("llvm.call_intrinsic")
def _call_intrinsic(interp, op, args):
    """`llvm.call_intrinsic "llvm.smax.i32"(...)`: the matching llvm.intr.* op, type suffixes dropped."""
    name = op.attr("intrin").value
    parts = name.split(".")
    while len(parts) > 1:
        fn = semantics_of(interp).impls.get("llvm.intr." + ".".join(parts[1:]))
        if fn is not None and "llvm.intr." + ".".join(parts[1:]) != "llvm.intr.call_intrinsic":
            return fn(interp, op, args[:len(op.operands_named("args"))])  # (the operand bundles follow)
        parts.pop()
    raise InterpreterError(f"'llvm.call_intrinsic': intrinsic {name} has no semantics in the interpreter")

