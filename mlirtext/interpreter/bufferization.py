"""bufferization semantics: `alloc_tensor` (zeros, as `tensor.empty`, or a copy), its size
checked against the memory limit before the array is made."""
from __future__ import annotations

import numpy as np

from ..dialects.bufferization import segments
from ..ir.arrays import check_allocation, dtype_of
from .registry import impl


@impl("bufferization.alloc_tensor")
def _alloc_tensor(interp, op, args):
    t = op.results[0].type
    sizes, copy, _hint = segments(op)
    if copy:
        source = args[len(sizes)]
        check_allocation(t, source.shape)
        return [np.array(source, copy=True)]
    given = iter(int(a) for a in args[:len(sizes)])
    shape = tuple(next(given) if d is None else d for d in t.shape)
    check_allocation(t, shape)
    return [np.zeros(shape, dtype=dtype_of(t))]
