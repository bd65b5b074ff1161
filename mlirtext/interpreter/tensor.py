"""tensor semantics for the ops the core dialect set has."""
from __future__ import annotations

import numpy as np

from ..ir.arrays import check_allocation, dtype_of
from .registry import impl


@impl("tensor.empty")
def _empty(interp, op, args):
    t = op.results[0].type
    sizes = iter(int(a) for a in args)
    shape = tuple(next(sizes) if d is None else d for d in t.shape)
    check_allocation(t, shape)
    return [np.zeros(shape, dtype=dtype_of(t))]


@impl("tensor.dim")
def _dim(interp, op, args):
    source, index = args
    return [np.array(source.shape[int(index)], dtype=np.int64)]


@impl("tensor.cast")
def _cast(interp, op, args):
    return [args[0]]


@impl("tensor.extract")
def _extract(interp, op, args):
    source, *indices = args
    if any(np.ndim(i) for i in indices):  # in a linalg body run on arrays: a gather
        return [np.asarray(np.asarray(source)[tuple(np.asarray(i, dtype=np.intp) for i in indices)])]
    return [np.asarray(source[tuple(int(i) for i in indices)])]


@impl("tensor.insert")
def _insert(interp, op, args):
    scalar, dest, *indices = args
    out = dest.copy()
    out[tuple(int(i) for i in indices)] = scalar
    return [out]


@impl("tensor.from_elements")
def _from_elements(interp, op, args):
    t = op.results[0].type
    return [np.array([np.asarray(a) for a in args], dtype=dtype_of(t)).reshape(t.shape)]


@impl("tensor.splat")
def _splat(interp, op, args):
    scalar, *sizes = args
    t = op.results[0].type
    it = iter(int(s) for s in sizes)
    shape = tuple(next(it) if d is None else d for d in t.shape)
    check_allocation(t, shape)
    return [np.full(shape, scalar, dtype=dtype_of(t))]


# ---- slices, reshapes, padding (linalg helper) ---------------------------------------------------
def _slice_parts(op, args):
    from .memref import offsets_sizes_strides
    return offsets_sizes_strides(op, args, 0)


@impl("tensor.extract_slice")
def _extract_slice(interp, op, args):
    from .memref import slice_view
    offsets, sizes, strides = _slice_parts(op, args)
    return [slice_view(np.asarray(args[0]), offsets, sizes, strides, list(op.results[0].type.shape))]


@impl("tensor.insert_slice", "tensor.parallel_insert_slice")
def _insert_slice(interp, op, args):
    from .memref import slice_view
    source, dest = np.asarray(args[0]), np.asarray(args[1])
    offsets, sizes, strides = _slice_parts(op, args)
    out = dest.copy()
    view = slice_view(out, offsets, sizes, strides, list(sizes))
    view[...] = source.reshape(sizes)
    return [out] if op.results else []


def _reassociation(op):
    return [[int(getattr(i, "value", i)) for i in g.items] for g in op.attr("reassociation").items]


@impl("tensor.collapse_shape")
def _collapse_shape(interp, op, args):
    src = np.asarray(args[0])
    shape = tuple(int(np.prod([src.shape[i] for i in g], dtype=np.int64)) for g in _reassociation(op))
    return [src.reshape(shape)]


@impl("tensor.expand_shape")
def _expand_shape(interp, op, args):
    src, *dyn = args
    from .memref import DYNAMIC
    it = iter(int(d) for d in dyn)
    shape = tuple(next(it) if s == DYNAMIC else int(s) for s in op.attr("static_output_shape").values)
    return [np.asarray(src).reshape(shape)]


@impl("tensor.reshape")
def _reshape(interp, op, args):
    src, shape = args
    return [np.asarray(src).reshape(tuple(int(d) for d in np.asarray(shape).reshape(-1)))]


@impl("tensor.concat")
def _concat(interp, op, args):
    parts = [np.asarray(a) for a in args]
    dim = op.attr("dim").value
    if parts and parts[0].ndim > dim:   # numpy reports a bad dim or operand itself
        shape = list(parts[0].shape)
        shape[dim] = sum(p.shape[dim] for p in parts if p.ndim > dim)
        check_allocation(op.results[0].type, tuple(shape))
    return [np.concatenate(parts, axis=dim)]


@impl("tensor.bitcast")
def _bitcast(interp, op, args):
    return [np.asarray(args[0]).view(dtype_of(op.results[0].type))]


@impl("tensor.rank")
def _rank(interp, op, args):
    return [np.array(np.ndim(args[0]), dtype=np.int64)]


@impl("tensor.yield")
def _yield(interp, op, args):
    from .machine import Return
    return Return(list(args))


def _index_iotas(shape):
    n = len(shape)
    return [np.arange(s, dtype=np.int64).reshape([s if k == i else 1 for k in range(n)])
            for i, s in enumerate(shape)]


def _region_over(interp, region, shape, dtype):
    """The region (block arguments: one index per dim) evaluated over the whole shape at once,
    or element by element when it branches on the indices (scf.if on an array condition)."""
    from .linalg import NotVectorizable
    try:
        (value,) = interp.run_region(region, _index_iotas(shape))
        return np.broadcast_to(np.asarray(value).astype(dtype, copy=False), shape)
    except NotVectorizable:
        out = np.empty(shape, dtype)
        for point in np.ndindex(*shape):
            (out[point],) = interp.run_region(region, [np.array(i, dtype=np.int64) for i in point])
        return out


@impl("tensor.pad")
def _pad(interp, op, args):
    from .memref import DYNAMIC
    src = np.asarray(args[0])
    dyn = iter(int(a) for a in args[1:])
    low = [next(dyn) if v == DYNAMIC else int(v) for v in op.attr("static_low").values]
    high = [next(dyn) if v == DYNAMIC else int(v) for v in op.attr("static_high").values]
    shape = tuple(s + lo + hi for s, lo, hi in zip(src.shape, low, high))
    check_allocation(op.results[0].type, shape)
    dtype = dtype_of(op.results[0].type)
    out = np.array(_region_over(interp, op.regions[0], shape, dtype))
    # negative low/high padding crops the source
    src_index, out_index = [], []
    for s, lo, hi in zip(src.shape, low, high):
        a0 = max(0, -lo)
        a1 = s - max(0, -hi)
        src_index.append(slice(a0, max(a0, a1)))
        out_index.append(slice(max(lo, 0), max(lo, 0) + max(0, a1 - a0)))
    out[tuple(out_index)] = src[tuple(src_index)]
    return [out]


@impl("tensor.generate")
def _generate(interp, op, args):
    t = op.results[0].type
    sizes = iter(int(a) for a in args)
    shape = tuple(next(sizes) if d is None else d for d in t.shape)
    check_allocation(t, shape)
    return [np.array(_region_over(interp, op.regions[0], shape, dtype_of(t)))]
