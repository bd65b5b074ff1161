"""tosa semantics (TOSA 1.0 spec), part 1: elementwise ops, casts, rescale, table,
constants and control flow. `tosa_common.py` has the shared helpers (and the
spec's apply_scale_32/16), `tosa_tensor.py` reductions, data layout,
gather/scatter, shape values and variables, `tosa_nn.py` matmul, convolutions,
pooling, resize and FFTs, `tosa_block.py` the block-scaled (MX) operators.

Integers are computed in int64 and wrapped to the result width (bit exact with
the spec's pseudo-code where it defines a result; where it only REQUIREs no
overflow we wrap, as IREE's code does). Floats narrower than f32 are computed
in f32 and rounded back.
"""
from __future__ import annotations

import numpy as np

from ..ir.attributes import FloatAttr, IntegerAttr
from ..ir import types as T
from ..ir.arrays import attr_to_array, unsigned_view
from ..ir.dense import DenseElementsAttr, SelfTypedDenseAttr
from .machine import InterpreterError, Return
from .registry import impl
from .tosa_common import (apply_scale_16, apply_scale_32, attr, attr_value, clz, compute_float, enum, finish,
                          first_attr, flag, int_attr, int_range, ints_attr, is_float, out_dtype, out_is_unsigned,
                          out_type, out_width, scalar_int, signed_range)


# ---- elementwise binary ---------------------------------------------------------------
def _binary(fn):
    def run(interp, op, args):
        a, b = (np.asarray(x) for x in args)
        with np.errstate(all="ignore"):
            return [finish(op, fn(a, b))]
    return run


def _ints(fn):
    """An integer op computed in int64 (floats pass straight through)."""
    def run(a, b):
        if a.dtype.kind in "iu":
            return fn(a.astype(np.int64), b.astype(np.int64))
        return fn(a, b)
    return run


def _intdiv(a, b):
    a, b = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(safe) * np.sign(a) * np.sign(safe)   # truncates toward zero
    return np.where(b == 0, 0, q)  # division by zero is unpredictable in TOSA; we give 0


def _max(nan_mode):
    def run(a, b):
        if a.dtype.kind in "iub":
            return np.maximum(a, b)
        return np.fmax(a, b) if nan_mode == "IGNORE" else np.maximum(a, b)
    return run


def _min(nan_mode):
    def run(a, b):
        if a.dtype.kind in "iub":
            return np.minimum(a, b)
        return np.fmin(a, b) if nan_mode == "IGNORE" else np.minimum(a, b)
    return run


def _lshift(a, b):
    bits = a.dtype.itemsize * 8
    amount = b.astype(np.int64)
    out = np.left_shift(a.astype(np.int64), np.clip(amount, 0, 63))
    return np.where((amount < 0) | (amount >= bits), 0, out)


def _rshift_logical(a, b):
    bits = a.dtype.itemsize * 8
    ua = unsigned_view(a).astype(np.uint64)
    amount = b.astype(np.int64)
    out = np.right_shift(ua, np.clip(amount, 0, 63).astype(np.uint64))
    return np.where((amount < 0) | (amount >= bits), 0, out.astype(np.int64))


for _name, _fn in {
    "add": _ints(np.add), "sub": _ints(np.subtract), "pow": np.power,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
    "logical_left_shift": _lshift, "logical_right_shift": _rshift_logical, "intdiv": _intdiv,
    "equal": np.equal, "greater": np.greater, "greater_equal": np.greater_equal,
}.items():
    impl(f"tosa.{_name}")(_binary(_fn))


@impl("tosa.maximum", "tosa.minimum")
def _maximum_minimum(interp, op, args):
    mode = enum(op, "nan_mode", "PROPAGATE")
    fn = _max(mode) if op.name == "tosa.maximum" else _min(mode)
    a, b = (np.asarray(x) for x in args)
    if a.dtype.kind not in "iub":
        a, b = compute_float(a), compute_float(b)
    with np.errstate(all="ignore"):
        return [finish(op, fn(a, b))]


@impl("tosa.arithmetic_right_shift")
def _arithmetic_right_shift(interp, op, args):
    a, b = (np.asarray(x).astype(np.int64) for x in args)
    bits = np.asarray(args[0]).dtype.itemsize * 8
    # Amounts outside [0, width) are unpredictable in TOSA: we fill with the sign bit.
    amount = np.where((b < 0) | (b >= bits), 63, b)
    out = a >> amount
    if flag(op, "round"):
        # Round: add one when the last bit shifted out was set (spec: value2 > 0).
        last = (a >> np.maximum(amount - 1, 0)) & 1
        out = out + np.where((amount > 0) & (last != 0), 1, 0)
    return [finish(op, out)]


@impl("tosa.mul")
def _mul(interp, op, args):
    a, b = np.asarray(args[0]), np.asarray(args[1])
    shift = scalar_int(args[2]) if len(args) > 2 else int_attr(op, "shift", 0)
    if a.dtype.kind not in "iu":
        with np.errstate(all="ignore"):
            return [finish(op, a * b)]
    product = a.astype(np.int64) * b.astype(np.int64)
    if shift > 0:
        product = (product + (1 << (shift - 1))) >> shift
    return [finish(op, product)]


@impl("tosa.select")
def _select(interp, op, args):
    cond, a, b = (np.asarray(x) for x in args)
    return [finish(op, np.where(cond, a, b))]


# ---- elementwise unary ----------------------------------------------------------------
def _erf(x):
    try:
        from scipy.special import erf
        return erf(x)
    except ImportError:  # no vectorised erf without scipy: one call per element
        from math import erf
        return np.vectorize(erf, otypes=[np.float64])(x)


_FLOAT_UNARY = {
    "ceil": np.ceil, "floor": np.floor, "exp": np.exp, "log": np.log, "reciprocal": lambda x: 1.0 / x,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "erf": _erf,
}


def _float_unary(fn):
    def run(interp, op, args):
        x = np.asarray(args[0])
        with np.errstate(all="ignore"):
            return [finish(op, fn(compute_float(x)))]
    return run


for _name, _fn in _FLOAT_UNARY.items():
    impl(f"tosa.{_name}")(_float_unary(_fn))


@impl("tosa.abs")
def _abs(interp, op, args):
    x = np.asarray(args[0])
    return [finish(op, np.abs(x.astype(np.int64)) if x.dtype.kind in "iu" else np.abs(x))]


@impl("tosa.bitwise_not")
def _bitwise_not(interp, op, args):
    return [finish(op, np.invert(np.asarray(args[0])))]


@impl("tosa.logical_not")
def _logical_not(interp, op, args):
    return [finish(op, np.logical_not(args[0]))]


@impl("tosa.clz")
def _clz_op(interp, op, args):
    return [finish(op, clz(np.asarray(args[0])))]


@impl("tosa.negate")
def _negate(interp, op, args):
    x = np.asarray(args[0])
    if x.dtype.kind not in "iu":
        return [finish(op, np.negative(x))]
    izp = scalar_int(args[1]) if len(args) > 1 else int_attr(op, "input1_zp", 0)
    ozp = scalar_int(args[2]) if len(args) > 2 else int_attr(op, "output_zp", 0)
    value = -(x.astype(np.int64) - izp) + ozp
    bits = out_width(op)
    if bits < 32:  # acc_t is i32: the result is clipped to the i8/i16 range
        value = np.clip(value, *signed_range(bits))
    return [finish(op, value)]


@impl("tosa.clamp")
def _clamp(interp, op, args):
    x = np.asarray(args[0])
    lo_attr = first_attr(op, "min_val", "min_fp" if is_float(x) else "min_int")
    hi_attr = first_attr(op, "max_val", "max_fp" if is_float(x) else "max_int")
    if lo_attr is None or hi_attr is None:
        raise InterpreterError("tosa.clamp needs min_val and max_val")
    if x.dtype.kind in "iub":
        lo, hi = int(attr_value(lo_attr, 'min_val')), int(attr_value(hi_attr, 'max_val'))
        info = np.iinfo(x.dtype) if x.dtype.kind != "b" else None
        if info is not None:  # bounds written for the signless type's bits
            lo, hi = max(lo, info.min), min(hi, info.max)
        return [finish(op, np.clip(x, lo, hi))]
    lo, hi = float(attr_value(lo_attr, 'min_val')), float(attr_value(hi_attr, 'max_val'))
    xf = compute_float(x)
    with np.errstate(all="ignore"):
        if enum(op, "nan_mode", "PROPAGATE") == "IGNORE":
            out = np.fmin(np.fmax(xf, xf.dtype.type(lo)), xf.dtype.type(hi))  # NaN -> min_val
        else:
            out = np.minimum(np.maximum(xf, xf.dtype.type(lo)), xf.dtype.type(hi))
    return [finish(op, out)]


# ---- cast, rescale, table ---------------------------------------------------------------
@impl("tosa.cast")
def _cast(interp, op, args):
    x = np.asarray(args[0])
    if tosa_block.is_mxint8(op.operand("input").type):
        x = tosa_block.dequantize(x, None, 1, True)
    if tosa_block.block_scaled_parts(out_type(op)) is not None:
        return [tosa_block.cast_block_scaled(op, x)]
    dtype = out_dtype(op)
    if dtype.kind == "b":
        return [np.asarray(x != 0)]
    if x.dtype.kind == "b":
        return [finish(op, x.astype(np.int64) if dtype.kind in "iu" else x.astype(np.float32))]
    if dtype.kind in "iu":
        if x.dtype.kind in "iu":  # sign extend or truncate
            return [finish(op, x.astype(np.int64))]
        # float -> int: round to nearest (ties to even), then saturate; NaN gives 0.
        lo, hi = int_range(op)
        with np.errstate(all="ignore"):
            r = np.rint(x.astype(np.float64))
            r = np.nan_to_num(np.clip(r, lo, hi), nan=0.0)
        return [finish(op, r.astype(np.int64))]
    # to float: round to nearest; integers wider than the mantissa round too
    with np.errstate(all="ignore"):
        if x.dtype.kind in "iu":
            return [finish(op, x.astype(np.float64))]
        return [finish(op, x)]


def _rounding(op) -> str:
    if "double_round" in op.attributes:  # the pre-1.0 spelling
        return "DOUBLE_ROUND" if flag(op, "double_round") else "SINGLE_ROUND"
    return enum(op, "rounding_mode", "SINGLE_ROUND")


@impl("tosa.rescale")
def _rescale(interp, op, args):
    x = np.asarray(args[0])
    if len(args) >= 5:
        multiplier, shift = np.asarray(args[1]).astype(np.int64), np.asarray(args[2]).astype(np.int64)
        izp, ozp = scalar_int(args[3]), scalar_int(args[4])
    else:  # pre-1.0: multiplier, shift and zero points are attributes
        multiplier = np.array(ints_attr(op, "multiplier"), np.int64)
        shift = np.array(ints_attr(op, "shift"), np.int64)
        izp, ozp = int_attr(op, "input_zp", 0), int_attr(op, "output_zp", 0)
    in_unsigned, out_unsigned = flag(op, "input_unsigned"), flag(op, "output_unsigned")
    bits_in = x.dtype.itemsize * 8
    if in_unsigned or x.dtype.kind == "u":
        value = unsigned_view(x).astype(np.int64)
        izp &= (1 << bits_in) - 1
    else:
        value = x.astype(np.int64)
    value = value - izp
    if not flag(op, "per_channel"):
        multiplier, shift = multiplier.ravel()[:1], shift.ravel()[:1]
    if flag(op, "scale32", True):
        result = apply_scale_32(value, multiplier, shift, _rounding(op) == "DOUBLE_ROUND")
    else:
        result = apply_scale_16(value, multiplier, shift)
    bits = out_width(op)
    if out_unsigned or out_is_unsigned(op):
        ozp &= (1 << bits) - 1
        out = np.clip(result + ozp, 0, (1 << bits) - 1)
    else:
        out = np.clip(result + ozp, *signed_range(bits))
    return [finish(op, out)]


@impl("tosa.apply_scale")
def _apply_scale(interp, op, args):
    value, multiplier, shift = (np.asarray(a).astype(np.int64) for a in args)
    dr = enum(op, "rounding_mode", "SINGLE_ROUND") == "DOUBLE_ROUND" or flag(op, "double_round")
    return [finish(op, apply_scale_32(value, multiplier, shift, dr))]


@impl("tosa.table")
def _table(interp, op, args):
    x, table = np.asarray(args[0]), np.asarray(args[1]).astype(np.int64)
    if x.dtype.itemsize == 1:
        return [finish(op, table[x.astype(np.int64) + 128])]
    v = x.astype(np.int64)
    index = (v + 32768) >> 7
    fraction = v & 0x7F
    base = table[index]
    nxt = table[np.minimum(index + 1, table.size - 1)]
    return [finish(op, (base << 7) + (nxt - base) * fraction)]


# ---- constants, identity, control flow --------------------------------------------------
def is_mx_type(t) -> bool:
    e = T.element_type(t) if t is not None else None
    return isinstance(e, T.DialectType) and e.text.startswith(("tosa.mxint8", "tosa.block_scaled"))


@impl("tosa.const")
def _const(interp, op, args):
    value = first_attr(op, "values", "value")
    if isinstance(value, SelfTypedDenseAttr) or is_mx_type(out_type(op)) or is_mx_type(getattr(value, "type", None)):
        return [tosa_block.const_value(value, out_type(op))]
    if not isinstance(value, (DenseElementsAttr, IntegerAttr, FloatAttr)):
        raise InterpreterError(f"{op.name}: cannot read the value {value}")
    return [attr_to_array(value, out_type(op))]


@impl("tosa.identity")
def _identity(interp, op, args):
    return list(args)


@impl("tosa.yield")
def _yield(interp, op, args):
    return Return(list(args))


def _region_args(region, values):
    n = len(region.blocks[0].arguments) if region.blocks else 0
    return list(values[:n])


@impl("tosa.cond_if")
def _cond_if(interp, op, args):
    cond = bool(np.asarray(args[0]).ravel()[0])
    region = op.regions[0] if cond else op.regions[1]
    return interp.run_region(region, _region_args(region, args[1:]))


@impl("tosa.while_loop")
def _while_loop(interp, op, args):
    cond_region, body_region = op.regions
    values = list(args)
    while True:
        (c,) = interp.run_region(cond_region, _region_args(cond_region, values))
        if not bool(np.asarray(c).ravel()[0]):
            return values
        values = interp.run_region(body_region, _region_args(body_region, values))


@impl("tosa.custom")
def _custom(interp, op, args):
    name = attr(op, "operator_name")
    raise InterpreterError(f"tosa.custom {getattr(name, 'value', name)!s}: custom operators have no "
                           "semantics in the interpreter")


from . import tosa_block, tosa_nn, tosa_tensor  # noqa: E402,F401  (register the rest of the dialect)
