"""tosa semantics, part 4: the block-scaled (MX) operators and types of TOSA 1.1.

Values and scales held in separate tensors use ml_dtypes' f4/f6/f8 types and
f8E8M0FNU scales; `!tosa.mxint8` is held as its int8 storage (value = int8 * 2^-6).
A tensor of the combined `!tosa.block_scaled<V:S:BLOCK_SHAPE_n, {scales}>` element
type is held dequantised, as f32 (each value times the scale of its block along
the last axis). Computation on block-scaled operands runs on the dequantised f32
values, which is what the spec's per-block accumulate-then-scale computes.
"""
from __future__ import annotations

import re

import numpy as np

from ..ir import types as T
from ..ir.arrays import attr_to_array, dtype_of
from .machine import InterpreterError
from .registry import impl
from .tosa_common import enum, finish, out_dtype, out_type
from .tosa_nn import pad_spatial, conv_windows, static_dims
from .tosa_tensor import tosa_reshape, tosa_row_gather

MXINT8_UNIT = 2.0 ** -6


def _block(op) -> int:
    return 32 if enum(op, "block_size", "BLOCK_SIZE_1") == "BLOCK_SIZE_32" else 1


def _element_text(t) -> str:
    e = T.element_type(t)
    return e.text if isinstance(e, T.DialectType) else ""


def is_mxint8(t) -> bool:
    return _element_text(t) == "tosa.mxint8"


def block_scaled_parts(t):
    """(value type name, scale type name, block size, scales or None) of a block_scaled type, else None."""
    text = _element_text(t)
    if not text.startswith("tosa.block_scaled<"):
        return None
    body = text[len("tosa.block_scaled<"):-1]
    head, _, scales = body.partition(",")
    parts = [p.strip() for p in head.split(":")]
    block = int(parts[2].rsplit("_", 1)[1]) if len(parts) > 2 and parts[2][-1:].isdigit() else 32
    values = None
    if "{" in scales:
        inner = scales[scales.index("{") + 1:scales.rindex("}")]
        values = [float(item.split(":")[0]) for item in inner.split(",") if item.strip()]
    return parts[0], parts[1], block, values


def _dtype(name: str):
    if name in ("!tosa.mxint8", "tosa.mxint8"):
        return np.dtype(np.int8)
    t = T.scalar_type_from_name(name)
    if t is None:
        raise InterpreterError(f"unknown block-scaled element type {name}")
    return dtype_of(t)


def dequantize(data, scale, block: int, mxint8: bool = False) -> np.ndarray:
    """data * scale, with each scale covering `block` consecutive values of the last axis."""
    values = np.asarray(data).astype(np.float32) * (np.float32(MXINT8_UNIT) if mxint8 else np.float32(1))
    if scale is None:
        return values
    return values * np.repeat(np.asarray(scale).astype(np.float32), block, axis=-1)


def quantize(x, block: int, data_dtype: np.dtype, scale_dtype: np.dtype, mxint8: bool = False):
    """The spec's CAST_TO_BLOCK_SCALED: per-block scale from the block's max |x|, then x / scale."""
    import ml_dtypes
    x = np.asarray(x).astype(np.float64)
    if x.ndim == 0 or x.shape[-1] % block:
        raise InterpreterError(f"the last dimension of a block-scaled tensor must be a multiple of {block}")
    max_abs = np.abs(x.reshape(x.shape[:-1] + (x.shape[-1] // block, block))).max(axis=-1)
    info = ml_dtypes.finfo(scale_dtype)
    normal_max = 127 * MXINT8_UNIT if mxint8 else float(ml_dtypes.finfo(data_dtype).max)
    with np.errstate(all="ignore"):
        ratio = np.log2(max_abs / normal_max)
        exp = np.ceil(ratio) if data_dtype == np.dtype(ml_dtypes.float8_e4m3fn) else np.floor(ratio) + 1
        scale = np.clip(np.exp2(exp), float(info.smallest_normal), float(info.max))
        scale = np.where(max_abs == 0, float(info.smallest_normal), scale)
        scale = np.where(np.isfinite(max_abs), scale, np.nan).astype(scale_dtype)
        data = x / np.repeat(scale.astype(np.float64), block, axis=-1)
        if mxint8:
            data = np.clip(np.nan_to_num(np.rint(data / MXINT8_UNIT)), -128, 127).astype(np.int8)
        else:
            data = data.astype(data_dtype)
    return data, scale


def const_value(attr, result_type):
    """A tosa.const of an MX type: `dense<...>` or the self-typed `dense<TYPE : values>` form."""
    t = attr.type
    parts = block_scaled_parts(t)
    if hasattr(attr, "text"):   # dense<tensor<...> : [1 : i8, ...]>: drop the per-element types
        body = attr.text[attr.text.index(str(t)) + len(str(t)):-1].strip().lstrip(":")
        body = re.sub(r"\s*:\s*[!\w.]+", "", body)
        flat = [float(v) for v in body.replace("[", " ").replace("]", " ").replace(",", " ").split()]
        shape = tuple(t.shape)
        values = np.full(shape, flat[0]) if len(flat) == 1 else np.array(flat).reshape(shape)
    else:
        values = attr_to_array(attr, t)
    if parts is None:
        return np.asarray(values).astype(dtype_of(result_type))
    vname, _, block, scales = parts
    out = dequantize(values, None, block, vname.endswith("mxint8"))
    if scales:
        s = np.asarray(scales, np.float32)
        shape = out.shape[:-1] + (out.shape[-1] // block,)
        s = np.broadcast_to(s, shape) if s.size == 1 else s.reshape(shape)
        out = out * np.repeat(s, block, axis=-1)
    return out.astype(np.float32)


def cast_block_scaled(op, x):
    """tosa.cast into a block_scaled element type: quantise per block, held dequantised."""
    vname, sname, block, _ = block_scaled_parts(out_type(op))
    mx = vname.endswith("mxint8")
    data, scale = quantize(np.asarray(x).astype(np.float32), block, _dtype(vname), _dtype(sname), mx)
    return dequantize(data, scale, block, mx)


@impl("tosa.reshape_block_scaled")
def _reshape_block_scaled(interp, op, args):
    if len(op.results) == 1:
        return tosa_reshape(interp, op, [args[0], args[-1]])
    data, scale, shape = args
    shape = [int(v) for v in np.asarray(shape).ravel()]
    block = _block(op)
    scale_shape = shape[:-1] + [shape[-1] // block]
    return [np.asarray(data).reshape(shape), np.asarray(scale).reshape(scale_shape)]


@impl("tosa.row_gather_block_scaled")
def _row_gather_block_scaled(interp, op, args):
    if len(op.results) == 1:
        return tosa_row_gather(interp, op, args)
    values, scales, indices, rows = args
    return tosa_row_gather(interp, op, [values, indices, rows]) + tosa_row_gather(interp, op, [scales, indices, rows])


@impl("tosa.cast_from_block_scaled")
def _cast_from_block_scaled(interp, op, args):
    return [finish(op, dequantize(args[0], args[1], _block(op), is_mxint8(op.operand("input_data").type)))]


@impl("tosa.cast_to_block_scaled")
def _cast_to_block_scaled(interp, op, args):
    mx = is_mxint8(out_type(op, 0))
    data, scale = quantize(args[0], _block(op), out_dtype(op, 0), out_dtype(op, 1), mx)
    return [finish(op, data, 0), finish(op, scale, 1)]


@impl("tosa.matmul_t_block_scaled")
def _matmul_t_block_scaled(interp, op, args):
    block = _block(op)
    a = dequantize(args[0], args[1], block, is_mxint8(op.operand("a_data").type))
    b = dequantize(args[2], args[3], block, is_mxint8(op.operand("b_data").type))
    return [finish(op, np.matmul(a, np.swapaxes(b, -1, -2)))]


@impl("tosa.conv2d_block_scaled")
def _conv2d_block_scaled(interp, op, args):
    block = _block(op)
    x = dequantize(args[0], args[1], block, is_mxint8(op.operand("input_data").type))
    w = dequantize(args[2], args[3], block, is_mxint8(op.operand("weight_data").type))
    bias = np.asarray(args[4]).astype(np.float32)
    pads, stride, dilation = ([int(v) for v in np.asarray(a).ravel()] for a in args[5:8])
    win = conv_windows(pad_spatial(x, pads), w.shape[1:3], stride, dilation, static_dims(op, 1, 3))
    acc = np.tensordot(win, w, axes=([3, 4, 5], [3, 1, 2]))
    return [finish(op, acc + bias)]
