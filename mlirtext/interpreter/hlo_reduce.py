"""StableHLO / MHLO reductions: reduce, reduce_window, select_and_scatter.

A body that is one commutative op (add, multiply, maximum, minimum, and, or, xor)
becomes the numpy ufunc's `.reduce`; any other body is run on whole slices, pairing
neighbours, in log2(n) region calls (the spec leaves the reduction tree to the
implementation).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .hlo_regions import as_result, ints, padding, reducer_ufunc, run_body, tree_reduce
from .hlo_structured import pad_axes
from .registry import impl


_NATIVE_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def _dilate_fill(x: np.ndarray, factors: list, fill) -> np.ndarray:
    if all(f == 1 for f in factors):
        return x
    shape = [(s - 1) * f + 1 if s else 0 for s, f in zip(x.shape, factors)]
    out = np.full(shape, fill, x.dtype)
    out[tuple(slice(None, None, f) for f in factors)] = x
    return out


def reduce_axes(interp, region, inputs: list, inits: list, axes: tuple) -> list:
    """Reduce `inputs` over `axes` with the body, starting from `inits` (scalars)."""
    n = len(inputs)
    dtype = inputs[0].dtype
    ufunc = reducer_ufunc(region, dtype) if n == 1 else None
    if ufunc is not None:
        x, init = inputs[0], np.asarray(inits[0])
        if dtype.kind == "f" and dtype not in _NATIVE_FLOATS:
            x, init = x.astype(np.float32), init.astype(np.float32)  # bf16: ml_dtypes reduces slowly
        with np.errstate(all="ignore"):
            if x.size and axes:  # (without `initial`, numpy keeps its SIMD loops)
                r = ufunc(ufunc.reduce(x, axis=axes), init.astype(x.dtype)[()])
            else:
                r = ufunc.reduce(x, axis=axes, initial=init[()])
        return [np.asarray(r).astype(dtype, copy=False)]
    # general body: move the reduced axes first, flatten them, pairwise-reduce
    keep = [d for d in range(inputs[0].ndim) if d not in axes]
    kshape = [inputs[0].shape[d] for d in keep]
    k = int(np.prod([inputs[0].shape[d] for d in axes], dtype=np.int64))
    flat = [np.transpose(x, list(axes) + keep).reshape([k] + kshape) for x in inputs]
    if k == 0:
        return [np.full(kshape, init, x.dtype) for init, x in zip(inits, inputs)]
    reduced = tree_reduce(interp, region, flat, k)
    out = run_body(interp, region, [np.broadcast_to(np.asarray(i, x.dtype), kshape) for i, x in zip(inits, inputs)]
                   + reduced)
    return [np.broadcast_to(v, kshape).astype(x.dtype, copy=False) for v, x in zip(out[:n], inputs)]


@impl("stablehlo.reduce", "mhlo.reduce")
def _reduce(interp, op, args):
    n = len(args) // 2
    inputs, inits = [np.asarray(a) for a in args[:n]], [np.asarray(a) for a in args[n:]]
    axes = tuple(sorted(ints(op, "dimensions") or []))
    out = reduce_axes(interp, op.regions[0], inputs, inits, axes)
    return [as_result(op, v, i) for i, v in enumerate(out)]


def windows(x: np.ndarray, init, dims, strides, base_dil, win_dil, pads) -> np.ndarray:
    """A view of x's windows: shape out... + window..., padded with `init`."""
    x = _dilate_fill(x, base_dil, init)
    x = pad_axes(x, pads, 0, init)
    eff = [(w - 1) * d + 1 for w, d in zip(dims, win_dil)]
    if any(s < e for s, e in zip(x.shape, eff)):
        out_shape = [max((s - e) // st + 1, 0) if s >= e else 0 for s, e, st in zip(x.shape, eff, strides)]
        return np.zeros(out_shape + list(dims), x.dtype)
    v = sliding_window_view(x, eff)
    return v[tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in win_dil)]


def _window_params(op, rank):
    dims = ints(op, "window_dimensions")
    strides = ints(op, "window_strides") or [1] * rank
    base = ints(op, "base_dilations") or [1] * rank
    wdil = ints(op, "window_dilations") or [1] * rank
    pads = padding(op, "padding", rank)
    return dims, strides, base, wdil, pads


@impl("stablehlo.reduce_window", "mhlo.reduce_window")
def _reduce_window(interp, op, args):
    n = len(args) // 2
    inputs, inits = [np.asarray(a) for a in args[:n]], [np.asarray(a) for a in args[n:]]
    rank = inputs[0].ndim
    dims, strides, base, wdil, pads = _window_params(op, rank)
    if n == 1:
        scanned = _prefix_scan(op, inputs[0], inits[0], dims, strides, base, wdil, pads)
        if scanned is not None:
            return [as_result(op, scanned)]
    views = [windows(x, i, dims, strides, base, wdil, pads) for x, i in zip(inputs, inits)]
    axes = tuple(range(rank, 2 * rank))
    out = reduce_axes(interp, op.regions[0], views, inits, axes)
    return [as_result(op, v, i) for i, v in enumerate(out)]


_IDEMPOTENT = (np.maximum, np.minimum, np.bitwise_and, np.bitwise_or, np.logical_and, np.logical_or)


def _prefix_scan(op, x, init, dims, strides, base, wdil, pads):
    """A cumulative reduction (how JAX writes cumsum / cummax: a window as long as one
    axis, padded by length - 1 on one side) as `ufunc.accumulate`, O(n) instead of O(n^2)."""
    if any(s != 1 for s in strides) or any(b != 1 for b in base) or any(d != 1 for d in wdil):
        return None
    axes = [a for a, w in enumerate(dims) if w != 1]
    if len(axes) != 1 or any(p != (0, 0) for a, p in enumerate(pads) if a != axes[0]):
        return None
    a = axes[0]
    length = x.shape[a]
    if length < 2 or dims[a] != length or pads[a] not in ((length - 1, 0), (0, length - 1)):
        return None
    ufunc = reducer_ufunc(op.regions[0], x.dtype)
    if ufunc is None:
        return None
    # padding holds init values: harmless when init is the identity or the op is idempotent
    if ufunc not in _IDEMPOTENT and (ufunc.identity is None or np.asarray(init) != ufunc.identity):
        return None
    work = x.astype(np.float32) if x.dtype.kind == "f" and x.dtype not in _NATIVE_FLOATS else x
    reverse = pads[a] == (0, length - 1)
    if reverse:
        work = np.flip(work, axis=a)
    with np.errstate(all="ignore"):
        out = ufunc(np.asarray(init).astype(work.dtype)[()], ufunc.accumulate(work, axis=a))
    if reverse:
        out = np.flip(out, axis=a)
    return out.astype(x.dtype, copy=False)


@impl("stablehlo.select_and_scatter", "mhlo.select_and_scatter")
def _select_and_scatter(interp, op, args):
    operand, source, init = (np.asarray(a) for a in args)
    rank = operand.ndim
    dims, strides, _, _, pads = _window_params(op, rank)
    select, scatter = op.regions
    # positions of the operand, windowed the same way (-1 marks padding)
    pos = np.arange(operand.size, dtype=np.int64).reshape(operand.shape)
    pos_w = windows(pos, -1, dims, strides, [1] * rank, [1] * rank, pads)
    val_w = windows(operand, np.zeros((), operand.dtype), dims, strides, [1] * rank, [1] * rank, pads)
    out_shape = pos_w.shape[:rank]
    k = int(np.prod(dims, dtype=np.int64))
    pos_f = pos_w.reshape(out_shape + (k,))
    val_f = val_w.reshape(out_shape + (k,))
    # scan each window in order: keep the current pick unless select(current, e) is false
    best_val = val_f[..., 0]
    best_pos = pos_f[..., 0]
    for j in range(1, k):
        e_val, e_pos = val_f[..., j], pos_f[..., j]
        keep = np.broadcast_to(run_body(interp, select, [best_val, e_val])[0], out_shape).astype(bool)
        take = (~keep | (best_pos < 0)) & (e_pos >= 0)
        best_val = np.where(take, e_val, best_val)
        best_pos = np.where(take, e_pos, best_pos)
    result = np.full(operand.size, init, operand.dtype)
    targets = best_pos.reshape(-1)
    values = source.reshape(-1)
    valid = targets >= 0
    scatter_into(interp, scatter, [result], targets[valid], [values[valid]])
    return [as_result(op, result.reshape(operand.shape))]


def scatter_into(interp, region, outs: list, targets: np.ndarray, updates: list) -> None:
    """outs[t] = body(outs[t], update) for each (t, update) in order, in place on flat arrays.
    A one-op body uses ufunc.at; else one region call per rank of repeated targets."""
    if targets.size == 0:
        return
    from .hlo_regions import binary_body, returned_arg
    n = len(outs)
    found = binary_body(region) if n == 1 else None
    back = returned_arg(region) if n == 1 else None
    if back is not None:
        if back == 1:
            outs[0][targets] = updates[0]  # replace: the last update wins
        return
    if found is not None:
        ufunc = reducer_ufunc(region, outs[0].dtype)
        if ufunc is not None:
            with np.errstate(all="ignore"):
                ufunc.at(outs[0], targets, updates[0].astype(outs[0].dtype, copy=False))
            return
    order = np.argsort(targets, kind="stable")
    t_sorted = targets[order]
    starts = np.r_[0, np.flatnonzero(np.diff(t_sorted)) + 1]
    rank = np.arange(t_sorted.size) - np.repeat(starts, np.diff(np.r_[starts, t_sorted.size]))
    for r in range(int(rank.max()) + 1):
        sel = order[rank == r]
        t = targets[sel]
        new = run_body(interp, region, [o[t] for o in outs] + [u[sel] for u in updates])
        for o, v in zip(outs, new[:n]):
            o[t] = np.broadcast_to(v, t.shape)
