"""flow (IREE) tensor ops the e2e tests use: dynamic constants, shape ties, bitcasts."""
from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..ir.arrays import attr_to_array, dtype_of
from .registry import impl


@impl("flow.tensor.dynamic_constant")
def _dynamic_constant(interp, op, args):
    value = op.attr("value")
    return [attr_to_array(value, value.type)]


@impl("flow.tensor.tie_shape")
def _tie_shape(interp, op, args):
    return [args[0]]


def bit_width(t) -> int:
    e = T.element_type(t)
    if isinstance(e, T.IntegerType):
        return e.width
    if isinstance(e, T.IndexType):
        return 64
    name = getattr(e, "name", "")
    for prefix, bits in (("f4", 4), ("f6", 6), ("f8", 8), ("bf16", 16), ("f16", 16), ("f32", 32), ("f64", 64)):
        if name.startswith(prefix):
            return bits
    return dtype_of(t).itemsize * 8


def bitcast(src: np.ndarray, src_type, dst_type, shape) -> np.ndarray:
    """Reinterpret the bits of `src` (elements of `src_type`) as `shape` elements of `dst_type`;
    sub-byte elements are packed little-endian (the first element in the low bits)."""
    sb, db = bit_width(src_type), bit_width(dst_type)
    dtype = dtype_of(dst_type)
    src = np.ascontiguousarray(src)
    if sb % 8 == 0 and db % 8 == 0:
        return src.reshape(-1).view(np.uint8).view(dtype).reshape(shape)
    # to a flat bit array
    codes = src.reshape(-1).view(np.dtype(f"u{src.dtype.itemsize}")).astype(np.uint64) & np.uint64((1 << sb) - 1)
    bits = ((codes[:, None] >> np.arange(sb, dtype=np.uint64)) & np.uint64(1)).astype(np.uint64).reshape(-1)
    groups = bits.reshape(-1, db)
    out_codes = (groups << np.arange(db, dtype=np.uint64)).sum(axis=1).astype(np.uint64)
    if dtype.kind in "iu" and db < dtype.itemsize * 8 and dtype.kind == "i":
        signed = out_codes.astype(np.int64)
        signed = np.where(signed >= (1 << (db - 1)), signed - (1 << db), signed)
        return signed.astype(dtype).reshape(shape)
    return out_codes.astype(np.dtype(f"u{dtype.itemsize}")).view(dtype).reshape(shape)


@impl("flow.tensor.bitcast")
def _bitcast(interp, op, args):
    src = np.asarray(args[0])
    seg = op.attr("operandSegmentSizes")
    dst_type = op.results[0].type
    n_src_dims = seg.values[1] if seg is not None else 0
    dyn = iter(int(a) for a in args[1 + n_src_dims:])
    shape = tuple(next(dyn) if d is None else d for d in dst_type.shape)
    return [bitcast(src, op.operand("source").type, dst_type, shape)]
