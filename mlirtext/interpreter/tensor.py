"""tensor semantics for the ops the core dialect set has."""
from __future__ import annotations

import numpy as np

from .dtypes import dtype_of
from .registry import impl


@impl("tensor.empty")
def _empty(interp, op, args):
    t = op.results[0].type
    sizes = iter(int(a) for a in args)
    shape = tuple(next(sizes) if d is None else d for d in t.shape)
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
    return [np.full(shape, scalar, dtype=dtype_of(t))]
