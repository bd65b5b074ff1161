"""StableHLO / MHLO shape and data-movement ops: broadcasts, reshape, transpose, slices,
concatenate, iota, pad, reverse, tuples, tokens, replica / partition ids.

Results are numpy views of their operand where that is a pure read (reshape, transpose,
slice, reverse, broadcast); operands are never written.
"""
from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..ir.arrays import TOKEN, check_allocation
from .hlo_common import fit, int_attr, ints, np_dtype
from .machine import InterpreterError
from .registry import impl


def _result_shape(op, index: int = 0) -> tuple:
    t = op.results[index].type
    if not isinstance(t, T.ShapedType) or any(d is None for d in t.shape):
        return None
    return tuple(t.shape)


def _shape_operand(v) -> tuple:
    return tuple(int(x) for x in np.asarray(v).reshape(-1))


def broadcast_in_dim(a: np.ndarray, dims: list, shape: tuple) -> np.ndarray:
    a = np.asarray(a)
    if len(dims) != a.ndim:
        raise InterpreterError(f"broadcast_dimensions {dims} do not match operand rank {a.ndim}")
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    if order != list(range(len(dims))):
        a = np.transpose(a, order)
        dims = [dims[i] for i in order]
    view = [1] * len(shape)
    for i, d in enumerate(dims):
        view[d] = a.shape[i]
    return np.broadcast_to(a.reshape(view), shape)


@impl("stablehlo.broadcast_in_dim", "mhlo.broadcast_in_dim")
def _broadcast_in_dim(interp, op, args):
    shape = _result_shape(op)
    if shape is None:
        raise InterpreterError("broadcast_in_dim with a dynamic result shape")
    return [broadcast_in_dim(args[0], ints(op, "broadcast_dimensions", []), shape)]


@impl("stablehlo.dynamic_broadcast_in_dim", "mhlo.dynamic_broadcast_in_dim")
def _dynamic_broadcast_in_dim(interp, op, args):
    a, shape = args
    shape = _shape_operand(shape)
    check_allocation(op.results[0].type, shape)
    return [broadcast_in_dim(a, ints(op, "broadcast_dimensions", []), shape)]


@impl("stablehlo.broadcast", "mhlo.broadcast")
def _broadcast(interp, op, args):
    a = np.asarray(args[0])
    sizes = tuple(ints(op, "broadcast_sizes", []))
    return [np.broadcast_to(a, sizes + a.shape)]


@impl("stablehlo.reshape", "mhlo.reshape")
def _reshape(interp, op, args):
    shape = _result_shape(op)
    if shape is None:
        raise InterpreterError("reshape with a dynamic result shape")
    return [np.asarray(args[0]).reshape(shape)]


@impl("stablehlo.dynamic_reshape", "mhlo.dynamic_reshape")
def _dynamic_reshape(interp, op, args):
    return [np.asarray(args[0]).reshape(_shape_operand(args[1]))]


@impl("stablehlo.transpose", "mhlo.transpose")
def _transpose(interp, op, args):
    return [np.transpose(args[0], ints(op, "permutation"))]


@impl("stablehlo.slice", "mhlo.slice")
def _slice(interp, op, args):
    a = np.asarray(args[0])
    start = ints(op, "start_indices")
    limit = ints(op, "limit_indices")
    strides = ints(op, "strides", [1] * a.ndim)
    return [a[tuple(slice(s, l, k) for s, l, k in zip(start, limit, strides))]]


@impl("stablehlo.real_dynamic_slice", "mhlo.real_dynamic_slice")
def _real_dynamic_slice(interp, op, args):
    a, start, limit, strides = args
    return [a[tuple(slice(s, l, k) for s, l, k in zip(_shape_operand(start), _shape_operand(limit),
                                                        _shape_operand(strides)))]]


def _clamped_starts(a, starts, sizes):
    return [min(max(int(s), 0), d - z) for s, d, z in zip(starts, a.shape, sizes)]


def _start_values(op, rest):
    """Start indices: one scalar operand per dimension, or (old mhlo) one 1-d tensor."""
    if len(rest) == 1 and np.asarray(rest[0]).ndim == 1:
        return [int(x) for x in np.asarray(rest[0])]
    return [int(np.asarray(x)) for x in rest]


@impl("stablehlo.dynamic_slice", "mhlo.dynamic_slice")
def _dynamic_slice(interp, op, args):
    a, *rest = args
    sizes = ints(op, "slice_sizes")
    starts = _clamped_starts(a, _start_values(op, rest), sizes)
    return [a[tuple(slice(s, s + z) for s, z in zip(starts, sizes))]]


@impl("stablehlo.dynamic_update_slice", "mhlo.dynamic_update_slice")
def _dynamic_update_slice(interp, op, args):
    a, update, *rest = args
    update = np.asarray(update)
    starts = _clamped_starts(a, _start_values(op, rest), update.shape)
    out = np.array(a, copy=True)
    out[tuple(slice(s, s + z) for s, z in zip(starts, update.shape))] = update
    return [out]


@impl("stablehlo.concatenate", "mhlo.concatenate")
def _concatenate(interp, op, args):
    axis = int_attr(op, "dimension")
    return [fit(op, np.concatenate([np.asarray(a) for a in args], axis=axis))]


def iota(shape: tuple, dim: int, t) -> np.ndarray:
    dt = np_dtype(t)
    n = shape[dim]
    if dt.kind == "c":
        base = np.arange(n, dtype=np.float64).astype(dt)
    elif dt.kind == "b":
        base = np.arange(n) != 0
    elif dt.kind in "iu":
        base = np.arange(n, dtype=np.int64)
    else:
        base = np.arange(n, dtype=np.float64)
    view = [1] * len(shape)
    view[dim] = n
    return np.broadcast_to(base.reshape(view), shape)


@impl("stablehlo.iota", "mhlo.iota")
def _iota(interp, op, args):
    shape = _result_shape(op)
    if shape is None:
        raise InterpreterError("iota with a dynamic result shape")
    return [fit(op, np.ascontiguousarray(iota(shape, int_attr(op, "iota_dimension"), op.results[0].type)))]


@impl("stablehlo.dynamic_iota", "mhlo.dynamic_iota")
def _dynamic_iota(interp, op, args):
    shape = _shape_operand(args[0])
    check_allocation(op.results[0].type, shape)
    return [fit(op, np.ascontiguousarray(iota(shape, int_attr(op, "iota_dimension"), op.results[0].type)))]


def pad(a: np.ndarray, value, low, high, interior) -> np.ndarray:
    """Edge padding (negative: cropping) and interior padding, as the spec defines."""
    a = np.asarray(a)
    if a.ndim == 0:
        return a
    inner = [d + max(d - 1, 0) * i for d, i in zip(a.shape, interior)]
    full = [max(lo, 0) + n + max(hi, 0) for lo, n, hi in zip(low, inner, high)]
    out = np.full(full, value, dtype=a.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + n, i + 1) for lo, n, i in zip(low, inner, interior))] = a
    crop = tuple(slice(max(-lo, 0), f - max(-hi, 0)) for lo, hi, f in zip(low, high, full))
    return out[crop]


@impl("stablehlo.pad", "mhlo.pad")
def _pad(interp, op, args):
    a, value = args
    n = np.asarray(a).ndim
    return [pad(a, value, ints(op, "edge_padding_low"), ints(op, "edge_padding_high"),
                ints(op, "interior_padding", [0] * n))]


@impl("stablehlo.dynamic_pad", "mhlo.dynamic_pad")
def _dynamic_pad(interp, op, args):
    a, value, low, high, interior = args
    low, high, interior = _shape_operand(low), _shape_operand(high), _shape_operand(interior)
    shape = [lo + d + max(d - 1, 0) * i + hi for d, lo, hi, i in zip(np.shape(a), low, high, interior)]
    check_allocation(op.results[0].type, shape)
    return [pad(a, value, low, high, interior)]


@impl("stablehlo.reverse", "mhlo.reverse")
def _reverse(interp, op, args):
    dims = ints(op, "dimensions", [])
    return [np.flip(args[0], axis=tuple(dims)) if dims else args[0]]


@impl("stablehlo.get_dimension_size", "mhlo.get_dimension_size")
def _get_dimension_size(interp, op, args):
    return [fit(op, np.asarray(args[0]).shape[int_attr(op, "dimension")])]


@impl("stablehlo.set_dimension_size", "mhlo.set_dimension_size")
def _set_dimension_size(interp, op, args):
    # Bounded dynamism: the size is an annotation here; the data keeps its static shape.
    return [args[0]]


@impl("stablehlo.tuple", "mhlo.tuple")
def _tuple(interp, op, args):
    return [tuple(args)]


@impl("stablehlo.get_tuple_element", "mhlo.get_tuple_element")
def _get_tuple_element(interp, op, args):
    return [args[0][int_attr(op, "index")]]


@impl("stablehlo.after_all", "mhlo.after_all", "stablehlo.create_token", "mhlo.create_token")
def _after_all(interp, op, args):
    return [TOKEN]


def _process_ids(interp):
    proc = getattr(interp, "process", None)
    if proc is None:
        return 0, 0
    return proc.replica_id, proc.partition_id


@impl("stablehlo.replica_id", "mhlo.replica_id")
def _replica_id(interp, op, args):
    return [fit(op, _process_ids(interp)[0])]


@impl("stablehlo.partition_id", "mhlo.partition_id")
def _partition_id(interp, op, args):
    return [fit(op, _process_ids(interp)[1])]


@impl("mhlo.copy")
def _copy(interp, op, args):
    return [args[0]]


@impl("mhlo.bitcast")
def _layout_bitcast(interp, op, args):
    # mhlo.bitcast reinterprets the layout; logically it reshapes when element counts agree.
    a = np.asarray(args[0])
    shape = _result_shape(op)
    if shape is None or int(np.prod(shape, dtype=np.int64)) != a.size:
        raise InterpreterError("mhlo.bitcast between shapes with different element counts")
    return [a.reshape(shape)]


@impl("mhlo.add_dependency")
def _add_dependency(interp, op, args):
    return [args[0]]


@impl("mhlo.domain")
def _domain(interp, op, args):
    return [args[0]]
