"""tosa semantics, part 4: the block-scaled (MX) operators of TOSA 1.1, for values
and scales held in separate tensors (f4/f6/f8 values, f8E8M0FNU scales, from
ml_dtypes). A block-scaled tensor is computed as its dequantised f32 value
(value * scale of its block along the last axis); `!tosa.mxint8` and the combined
`!tosa.block_scaled<...>` element types have no runtime form yet."""
from __future__ import annotations

import numpy as np

from .machine import InterpreterError
from .registry import impl
from .tosa_common import enum, finish, out_dtype
from .tosa_nn import _pad_spatial, _windows, static_dims
from .tosa_tensor import _reshape, _row_gather


def _block(op) -> int:
    return 32 if enum(op, "block_size", "BLOCK_SIZE_1") == "BLOCK_SIZE_32" else 1


def dequantize(data, scale, block: int) -> np.ndarray:
    """data * scale, with each scale covering `block` consecutive values of the last axis."""
    values = np.asarray(data).astype(np.float32)
    if block == 1 and scale is None:
        return values
    scales = np.repeat(np.asarray(scale).astype(np.float32), block, axis=-1)
    return values * scales


@impl("tosa.reshape_block_scaled")
def _reshape_block_scaled(interp, op, args):
    if len(op.results) == 1:
        return _reshape(interp, op, [args[0], args[-1]])
    data, scale, shape = args
    shape = [int(v) for v in np.asarray(shape).ravel()]
    block = _block(op)
    scale_shape = shape[:-1] + [shape[-1] // block]
    return [np.asarray(data).reshape(shape), np.asarray(scale).reshape(scale_shape)]


@impl("tosa.row_gather_block_scaled")
def _row_gather_block_scaled(interp, op, args):
    if len(op.results) == 1:
        return _row_gather(interp, op, args)
    values, scales, indices, rows = args
    return _row_gather(interp, op, [values, indices, rows]) + _row_gather(interp, op, [scales, indices, rows])


@impl("tosa.cast_from_block_scaled")
def _cast_from_block_scaled(interp, op, args):
    return [finish(op, dequantize(args[0], args[1], _block(op)))]


def _normal_max(dtype: np.dtype) -> float:
    import ml_dtypes
    return float(ml_dtypes.finfo(dtype).max)


@impl("tosa.cast_to_block_scaled")
def _cast_to_block_scaled(interp, op, args):
    x = np.asarray(args[0]).astype(np.float64)
    block = _block(op)
    if x.ndim == 0 or x.shape[-1] % block:
        raise InterpreterError(f"tosa.cast_to_block_scaled: the last dimension is not a multiple of {block}")
    data_t, scale_t = out_dtype(op, 0), out_dtype(op, 1)
    blocks = x.reshape(x.shape[:-1] + (x.shape[-1] // block, block))
    max_abs = np.abs(blocks).max(axis=-1)
    import ml_dtypes
    info = ml_dtypes.finfo(scale_t)
    with np.errstate(all="ignore"):
        ratio = np.log2(max_abs / _normal_max(data_t))
        exp = np.ceil(ratio) if data_t == np.dtype(ml_dtypes.float8_e4m3fn) else np.floor(ratio) + 1
        scale = np.clip(np.exp2(exp), float(info.smallest_normal), float(info.max))
    scale = np.where(max_abs == 0, float(info.smallest_normal), scale)
    scale = np.where(~np.isfinite(max_abs), np.nan, scale)
    with np.errstate(all="ignore"):
        data = x / np.repeat(scale, block, axis=-1)
    return [finish(op, data, 0), finish(op, scale, 1)]


@impl("tosa.matmul_t_block_scaled")
def _matmul_t_block_scaled(interp, op, args):
    block = _block(op)
    a = dequantize(args[0], args[1], block)
    b = dequantize(args[2], args[3], block)
    return [finish(op, np.matmul(a, np.swapaxes(b, -1, -2)))]


@impl("tosa.conv2d_block_scaled")
def _conv2d_block_scaled(interp, op, args):
    block = _block(op)
    x = dequantize(args[0], args[1], block)
    w = dequantize(args[2], args[3], block)
    bias = np.asarray(args[4]).astype(np.float32)
    pads, stride, dilation = ([int(v) for v in np.asarray(a).ravel()] for a in args[5:8])
    win = _windows(_pad_spatial(x, pads), w.shape[1:3], stride, dilation, static_dims(op, 1, 3))
    acc = np.tensordot(win, w, axes=([3, 4, 5], [3, 1, 2]))
    return [finish(op, acc + bias)]
