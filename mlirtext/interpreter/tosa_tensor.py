"""tosa semantics, part 2: reductions, argmax, data layout, gather/scatter, shape
values (`!tosa.shape<N>` is a 1-d int64 array) and variables."""
from __future__ import annotations

import warnings

import numpy as np

from ..ir import types as T
from ..ir.arrays import shape_of
from .machine import InterpreterError
from .registry import impl
from .tosa_common import (attr_value, compute_float, dense_attr, enum, finish, first_attr, flag, int_attr,
                          ints_attr, out_type, scalar_value)


def _axis(op, x) -> int:
    axis = int_attr(op, "axis", 0)
    return axis + x.ndim if axis < 0 else axis


# ---- reductions -------------------------------------------------------------------------
@impl("tosa.reduce_sum", "tosa.reduce_product")
def _reduce_arith(interp, op, args):
    x = np.asarray(args[0])
    fn = np.sum if op.name == "tosa.reduce_sum" else np.prod
    if x.dtype.kind in "iu":
        out = fn(x.astype(np.int64), axis=_axis(op, x), keepdims=True)  # wraps below
    else:
        out = fn(compute_float(x), axis=_axis(op, x), keepdims=True)
    return [finish(op, out)]


@impl("tosa.reduce_max", "tosa.reduce_min")
def _reduce_max_min(interp, op, args):
    x = np.asarray(args[0])
    is_max = op.name == "tosa.reduce_max"
    axis = _axis(op, x)
    if x.dtype.kind not in "iub":
        x = compute_float(x)   # numpy's own NaN rules, also for bf16/f8
    if x.dtype.kind in "iub" or enum(op, "nan_mode", "PROPAGATE") == "PROPAGATE":
        out = (np.max if is_max else np.min)(x, axis=axis, keepdims=True)
    else:  # IGNORE: NaNs are skipped; an all-NaN slice gives NaN
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out = (np.nanmax if is_max else np.nanmin)(x, axis=axis, keepdims=True)
    return [finish(op, out)]


@impl("tosa.reduce_all", "tosa.reduce_any")
def _reduce_bool(interp, op, args):
    x = np.asarray(args[0])
    fn = np.all if op.name == "tosa.reduce_all" else np.any
    return [finish(op, fn(x, axis=_axis(op, x), keepdims=True))]


@impl("tosa.argmax")
def _argmax(interp, op, args):
    x = np.asarray(args[0])
    axis = _axis(op, x)
    if x.dtype.kind not in "iub":
        x = compute_float(x)
    if x.dtype.kind in "iub" or enum(op, "nan_mode", "PROPAGATE") == "PROPAGATE":
        # numpy's argmax gives the first maximum, and the first NaN when there is one: the spec's.
        return [finish(op, np.argmax(x, axis=axis))]
    xf = x
    nan = np.isnan(xf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        best = np.nanmax(xf, axis=axis, keepdims=True)
    hit = ~nan & (xf == best)
    return [finish(op, np.where(hit.any(axis=axis), np.argmax(hit, axis=axis), 0))]


# ---- data layout ------------------------------------------------------------------------
def _shape_operand(op, args, index: int, attr_name: str):
    """A shape given as a `!tosa.shape` operand (TOSA 1.0) or an attribute (older)."""
    if len(args) > index:
        return [int(v) for v in np.asarray(args[index]).ravel()]
    values = ints_attr(op, attr_name)
    if values is None:
        raise InterpreterError(f"{op.name}: missing '{attr_name}'")
    return values


@impl("tosa.reshape")
def tosa_reshape(interp, op, args):
    x = np.asarray(args[0])
    t = out_type(op)
    shape = shape_of(t) if isinstance(t, T.RankedTensorType) else (None,)
    if any(d is None for d in shape):
        shape = _shape_operand(op, args, 1, "new_shape")
    return [x.reshape(shape)]


@impl("tosa.transpose")
def _transpose(interp, op, args):
    perms = _shape_operand(op, args, 1, "perms") if "perms" not in op.attributes else ints_attr(op, "perms")
    return [np.transpose(args[0], perms)]


@impl("tosa.slice")
def _slice(interp, op, args):
    x = np.asarray(args[0])
    start = _shape_operand(op, args, 1, "start")
    size = _shape_operand(op, args, 2, "size")
    index = tuple(slice(s, x.shape[i] if n == -1 else s + n) for i, (s, n) in enumerate(zip(start, size)))
    return [x[index]]


@impl("tosa.pad")
def _pad(interp, op, args):
    x = np.asarray(args[0])
    pads = _shape_operand(op, args, 1, "padding")
    if len(args) > 2:
        value = scalar_value(args[2])
    else:
        pad_const = first_attr(op, "pad_const", "pad_const_fp", "pad_const_int")
        value = attr_value(pad_const, 'pad_const') if pad_const is not None else 0
    widths = [(pads[2 * i], pads[2 * i + 1]) for i in range(x.ndim)]
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        raise InterpreterError("tosa.pad: negative padding")
    return [finish(op, np.pad(x, widths, constant_values=np.asarray(value).astype(x.dtype)))]


@impl("tosa.concat")
def _concat(interp, op, args):
    return [finish(op, np.concatenate([np.asarray(a) for a in args], axis=_axis(op, np.asarray(args[0]))))]


@impl("tosa.tile")
def _tile(interp, op, args):
    return [np.tile(args[0], _shape_operand(op, args, 1, "multiples"))]


@impl("tosa.reverse")
def _reverse(interp, op, args):
    x = np.asarray(args[0])
    return [np.flip(x, axis=_axis(op, x))]


# ---- gather / scatter ----------------------------------------------------------------------
@impl("tosa.gather")
def _gather(interp, op, args):
    values, indices = np.asarray(args[0]), np.asarray(args[1]).astype(np.int64)
    if indices.size and (indices.min() < 0 or indices.max() >= values.shape[1]):
        raise InterpreterError(f"tosa.gather: index out of range [0, {values.shape[1]})")
    return [np.take_along_axis(values, indices[:, :, None], axis=1)]


@impl("tosa.row_gather")
def tosa_row_gather(interp, op, args):
    values, indices = np.asarray(args[0]), np.asarray(args[1]).astype(np.int64)
    rows = int(np.asarray(args[2]).ravel()[0])
    if rows < 1:
        raise InterpreterError(f"tosa.row_gather: row_count must be at least 1, got {rows}")
    if indices.size and (indices.min() < 0 or indices.max() + rows > values.shape[1]):
        raise InterpreterError(f"tosa.row_gather: rows out of range [0, {values.shape[1]})")
    index = (indices[:, :, None] + np.arange(rows)).reshape(indices.shape[0], -1)   # (N, W*rows)
    return [np.take_along_axis(values, index[:, :, None], axis=1)]


@impl("tosa.scatter")
def _scatter(interp, op, args):
    values_in, indices, source = np.asarray(args[0]), np.asarray(args[1]).astype(np.int64), np.asarray(args[2])
    if indices.size and (indices.min() < 0 or indices.max() >= values_in.shape[1]):
        raise InterpreterError(f"tosa.scatter: index out of range [0, {values_in.shape[1]})")
    out = values_in.copy()
    n = np.arange(values_in.shape[0])[:, None]
    out[n, indices] = source
    return [out]


# ---- shape values -------------------------------------------------------------------------
@impl("tosa.const_shape")
def _const_shape(interp, op, args):
    return [np.asarray(dense_attr(op, "values"), np.int64).ravel()]


def _div_floor(a, b):
    return np.floor_divide(a, np.where(b == 0, 1, b))


_SHAPE_BINARY = {
    "add_shape": np.add, "sub_shape": np.subtract, "mul_shape": np.multiply,
    "mod_shape": lambda a, b: np.mod(a, np.where(b == 0, 1, b)),
    "div_floor_shape": _div_floor, "div_ceil_shape": lambda a, b: -_div_floor(-a, b),
    "max_shape": np.maximum, "min_shape": np.minimum,
}


def _shape_binary(fn):
    def run(interp, op, args):
        return [np.asarray(fn(np.asarray(args[0], np.int64), np.asarray(args[1], np.int64)), np.int64)]
    return run


for _name, _fn in _SHAPE_BINARY.items():
    impl(f"tosa.{_name}")(_shape_binary(_fn))


def _log2(a, ceil: bool):
    a = np.asarray(a, np.int64)
    floor = np.array([max(int(v), 1).bit_length() - 1 for v in a.ravel()], np.int64).reshape(a.shape)
    return floor + ((1 << floor) < a) if ceil else floor


impl("tosa.exp2_shape")(lambda interp, op, args: [np.left_shift(np.int64(1), np.asarray(args[0], np.int64))])
impl("tosa.log2_ceil_shape")(lambda interp, op, args: [_log2(args[0], True)])
impl("tosa.log2_floor_shape")(lambda interp, op, args: [_log2(args[0], False)])


@impl("tosa.concat_shape")
def _concat_shape(interp, op, args):
    return [np.concatenate([np.asarray(a, np.int64).ravel() for a in args])]


@impl("tosa.slice_shape")
def _slice_shape(interp, op, args):
    shape, start, size = (np.asarray(a, np.int64).ravel() for a in args)
    return [shape[int(start[0]):int(start[0]) + int(size[0])]]


@impl("tosa.dim")
def _dim(interp, op, args):
    x = np.asarray(args[0])
    return [np.array([x.shape[_axis(op, x)]], np.int64)]


@impl("tosa.assert_equal_shape")
def _assert_equal_shape(interp, op, args):
    a, b = (np.asarray(x) for x in args)
    ok = a.shape == b.shape or (flag(op, "allow_broadcast") and _broadcastable(a.shape, b.shape))
    if not ok:
        raise InterpreterError(f"tosa.assert_equal_shape: shapes {a.shape} and {b.shape} differ")
    return []


def _broadcastable(a, b) -> bool:
    return len(a) == len(b) and all(x == y or x == 1 or y == 1 for x, y in zip(a, b))


# ---- variables: state lives on the interpreter, by name -------------------------------------
def _variables(interp) -> dict:
    store = getattr(interp, "tosa_variables", None)
    if store is None:
        store = interp.tosa_variables = {}
    return store


def _var_name(op) -> str:
    a = first_attr(op, "name", "sym_name")
    return getattr(a, "root", None) or getattr(a, "value", None) or str(a)


@impl("tosa.variable")
def _variable(interp, op, args):
    if "initial_value" in op.attributes:
        _variables(interp)[_var_name(op)] = dense_attr(op, "initial_value")
    return []


@impl("tosa.variable_read")
def _variable_read(interp, op, args):
    store = _variables(interp)
    name = _var_name(op)
    if name not in store:  # declared at module level: take its initial value on first use
        for decl in interp.module.walk():
            if decl.name == "tosa.variable" and _var_name(decl) == name:
                _variable(interp, decl, [])
    if name not in store:
        raise InterpreterError(f"tosa.variable_read: variable '{name}' has no value")
    return [store[name]]


@impl("tosa.variable_write")
def _variable_write(interp, op, args):
    _variables(interp)[_var_name(op)] = np.asarray(args[0])
    return []
