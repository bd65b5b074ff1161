"""tosa semantics, part 3: matmul, convolutions, pooling, resize and FFTs.

Convolutions are whole-array: pad, take the strided/dilated windows with
`sliding_window_view` and contract them with the weights (`tensordot`/`einsum`).
Integer inputs have their zero points subtracted and are accumulated in int64,
then wrapped to the accumulator width (i32 or i48) as the spec's acc_t does.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..ir import types as T
from .machine import InterpreterError
from .registry import impl
from .tosa_common import (apply_scale_32, clz, compute_float, enum, finish, int_range, ints_attr, out_type,
                          out_width, scalar_int, wrap_bits)


def _acc_bits(op, default: int = 32) -> int:
    a = op.attr("acc_type")
    t = getattr(a, "type", None)
    return t.width if isinstance(t, T.IntegerType) else default


def _zero_points(args, first: int):
    """Input and weight (or output) zero points from operands `first`, `first+1` if present."""
    zps = [scalar_int(args[i]) if len(args) > i and np.asarray(args[i]).dtype.kind in "iu" else 0
           for i in (first, first + 1)]
    return zps


def _operands(op, x, w, izp, wzp):
    """Inputs with zero points subtracted, in the type the accumulation runs in."""
    if np.asarray(x).dtype.kind in "iu":
        return np.asarray(x).astype(np.int64) - izp, np.asarray(w).astype(np.int64) - wzp, True
    return compute_float(x), compute_float(w), False


def _exact_in_f64(a, b, terms: int) -> bool:
    """Whether every partial sum of `terms` products of a and b is exact in float64."""
    if a.dtype.kind != "i":
        return False
    return int(np.abs(a).max(initial=0)) * int(np.abs(b).max(initial=0)) * max(terms, 1) < 2 ** 53


def _via_f64(a, b, terms: int):
    """Integer operands as float64 when contracting them there is exact (BLAS is much faster
    than numpy's int64 loops); returns (a, b, converted)."""
    if _exact_in_f64(a, b, terms):
        return a.astype(np.float64), b.astype(np.float64), True
    return a, b, False


def _from_f64(acc, converted: bool):
    return np.rint(acc).astype(np.int64) if converted else acc


def _accumulated(op, acc, integer: bool):
    if integer:  # acc_t wraps at its width (i32 or i48), then the result type's
        bits = _acc_bits(op, 48 if out_width(op) == 48 else 32)
        return wrap_bits(acc, bits)
    return acc


def static_dims(op, lo: int, hi: int):
    """Result dims lo..hi when the result type gives them all, else None."""
    t = out_type(op)
    if isinstance(t, T.RankedTensorType) and len(t.shape) >= hi:
        dims = t.shape[lo:hi]
        if all(d is not None for d in dims):
            return list(dims)
    return None


def conv_windows(xp, kernel, stride, dilation, out_sizes):
    """(N, *O, C, *K) windows of a padded (N, *S, C) array (O from the spec's formula if not given)."""
    nsp = len(kernel)
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    if out_sizes is None:
        out_sizes = [(xp.shape[1 + i] - span[i]) // stride[i] + 1 for i in range(nsp)]
    v = sliding_window_view(xp, span, axis=tuple(range(1, 1 + nsp)))
    index = ((slice(None),) + tuple(slice(0, o * s, s) for o, s in zip(out_sizes, stride))
             + (slice(None),) + tuple(slice(None, None, d) for d in dilation))
    return v[index]


def pad_spatial(x, pads, value=0):
    widths = [(0, 0)] + [(pads[2 * i], pads[2 * i + 1]) for i in range(len(pads) // 2)] + [(0, 0)]
    return np.pad(x, widths, constant_values=value)


def _add_bias(op, acc, bias, integer: bool):
    out = acc + (np.asarray(bias).astype(np.int64) if integer else compute_float(bias))
    return finish(op, out)


@impl("tosa.conv2d", "tosa.conv3d")
def _conv(interp, op, args):
    x, w, bias = (np.asarray(a) for a in args[:3])
    izp, wzp = _zero_points(args, 3)
    nsp = 3 if op.name == "tosa.conv3d" else 2
    xs, ws, integer = _operands(op, x, w, izp, wzp)
    pads = ints_attr(op, "pad")
    stride, dilation = ints_attr(op, "stride"), ints_attr(op, "dilation")
    xs, ws, converted = _via_f64(xs, ws, int(np.prod(w.shape[1:])))
    win = conv_windows(pad_spatial(xs, pads), w.shape[1:1 + nsp], stride, dilation, static_dims(op, 1, 1 + nsp))
    # win: (N, *O, IC, *K); weights (OC, *K, IC)
    axes = (list(range(1 + nsp, 2 + 2 * nsp)), [nsp + 1] + list(range(1, 1 + nsp)))
    acc = _from_f64(np.tensordot(win, ws, axes=axes), converted)
    return [_add_bias(op, _accumulated(op, acc, integer), bias, integer)]


@impl("tosa.depthwise_conv2d")
def _depthwise(interp, op, args):
    x, w, bias = (np.asarray(a) for a in args[:3])
    izp, wzp = _zero_points(args, 3)
    xs, ws, integer = _operands(op, x, w, izp, wzp)
    xs, ws, converted = _via_f64(xs, ws, w.shape[0] * w.shape[1])
    win = conv_windows(pad_spatial(xs, ints_attr(op, "pad")), w.shape[:2], ints_attr(op, "stride"),
                   ints_attr(op, "dilation"), static_dims(op, 1, 3))
    acc = _from_f64(np.einsum("nhwcyx,yxcm->nhwcm", win, ws), converted)
    acc = acc.reshape(acc.shape[:3] + (-1,))
    return [_add_bias(op, _accumulated(op, acc, integer), bias, integer)]


@impl("tosa.transpose_conv2d")
def _transpose_conv(interp, op, args):
    x, w, bias = (np.asarray(a) for a in args[:3])
    izp, wzp = _zero_points(args, 3)
    xs, ws, integer = _operands(op, x, w, izp, wzp)
    top, bottom, left, right = ints_attr(op, "out_pad")
    sy, sx = ints_attr(op, "stride")
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    xs, ws, converted = _via_f64(xs, ws, x.shape[3] * kh * kw)
    full = np.zeros((n, (ih - 1) * sy + kh, (iw - 1) * sx + kw, oc), dtype=xs.dtype)
    for ky in range(kh):          # one contraction per kernel tap, scattered at its offset
        for kx in range(kw):
            full[:, ky:ky + (ih - 1) * sy + 1:sy, kx:kx + (iw - 1) * sx + 1:sx, :] += \
                np.tensordot(xs, ws[:, ky, kx, :], axes=([3], [1]))
    # out[oy] = full[oy - top]: positive out_pad adds zero rows, negative crops
    full = full[:, max(-top, 0):full.shape[1] - max(-bottom, 0), max(-left, 0):full.shape[2] - max(-right, 0)]
    acc = _from_f64(np.pad(full, [(0, 0), (max(top, 0), max(bottom, 0)), (max(left, 0), max(right, 0)), (0, 0)]),
                    converted)
    return [_add_bias(op, _accumulated(op, acc, integer), bias, integer)]


@impl("tosa.matmul", "tosa.matmul_t")
def _matmul(interp, op, args):
    a, b = np.asarray(args[0]), np.asarray(args[1])
    azp, bzp = _zero_points(args, 2)
    if op.name == "tosa.matmul_t":
        b = np.swapaxes(b, -1, -2)
    if a.dtype.kind in "iu":
        a, b, converted = _via_f64(a.astype(np.int64) - azp, b.astype(np.int64) - bzp, a.shape[-1])
        acc = _from_f64(np.matmul(a, b), converted)
        return [finish(op, wrap_bits(acc, 48 if out_width(op) == 48 else 32))]
    return [finish(op, np.matmul(compute_float(a), compute_float(b)))]


# ---- pooling ---------------------------------------------------------------------------------
def reciprocal_scale(count: np.ndarray):
    """The spec's reciprocal_scale on an array of window sizes: (multiplier, shift)."""
    count = count.astype(np.int64)
    k = 32 - clz((count - 1).astype(np.int32))
    multiplier = (((1 << 30) + 1) << k) // count
    return multiplier, 30 + k


def _pool_params(op, args, first: int):
    """kernel, stride, pad as attributes (avg/max_pool2d) or shape operands (the adaptive ops)."""
    if op.name.endswith("_adaptive"):
        return [[int(v) for v in np.asarray(args[i]).ravel()] for i in range(first, first + 3)]
    return ints_attr(op, "kernel"), ints_attr(op, "stride"), ints_attr(op, "pad")


@impl("tosa.avg_pool2d", "tosa.avg_pool2d_adaptive")
def _avg_pool(interp, op, args):
    x = np.asarray(args[0])
    izp, ozp = _zero_points(args, 1)
    kernel, stride, pads = _pool_params(op, args, 3)
    out_sizes = static_dims(op, 1, 3)
    ones = np.ones((1,) + x.shape[1:3] + (1,), np.int64)
    count = conv_windows(pad_spatial(ones, pads), kernel, stride, [1, 1], out_sizes).sum(axis=(-2, -1))
    if x.dtype.kind in "iu":
        acc = conv_windows(pad_spatial(x.astype(np.int64) - izp, pads), kernel, stride, [1, 1],
                       out_sizes).sum(axis=(-2, -1))
        acc = wrap_bits(acc, 32)
        multiplier, shift = reciprocal_scale(count)
        out = apply_scale_32(acc, multiplier, shift, False) + ozp
        return [finish(op, np.clip(out, *int_range(op)))]
    acc = conv_windows(pad_spatial(compute_float(x), pads), kernel, stride, [1, 1], out_sizes).sum(axis=(-2, -1))
    return [finish(op, acc / count.astype(acc.dtype))]


@impl("tosa.max_pool2d", "tosa.max_pool2d_adaptive")
def _max_pool(interp, op, args):
    x = np.asarray(args[0])
    kernel, stride, pads = _pool_params(op, args, 1)
    out_sizes = static_dims(op, 1, 3)
    if x.dtype.kind in "iu":
        fill, reduce = np.iinfo(x.dtype).min, np.max
    elif enum(op, "nan_mode", "PROPAGATE") == "IGNORE":
        fill, reduce, x = np.nan, np.fmax.reduce, compute_float(x)
    else:
        fill, reduce, x = -np.inf, np.max, compute_float(x)
    win = conv_windows(pad_spatial(x, pads, fill), kernel, stride, [1, 1], out_sizes)
    flat = win.reshape(win.shape[:4] + (-1,))
    return [finish(op, reduce(flat, axis=-1))]


# ---- resize -----------------------------------------------------------------------------------
def _resize_params(op, args):
    if len(args) >= 4:
        return [[int(v) for v in np.asarray(a).ravel()] for a in args[1:4]]
    return ints_attr(op, "scale"), ints_attr(op, "offset"), ints_attr(op, "border")


def _axis_coords(out_size, in_size, n, d, offset):
    pos = np.arange(out_size, dtype=np.int64) * d + offset
    i = np.floor_divide(pos, n)
    r = pos - i * n
    i0 = np.clip(i, 0, in_size - 1)
    i1 = np.clip(i + 1, 0, in_size - 1)
    return i0, i1, r


@impl("tosa.resize")
def _resize(interp, op, args):
    x = np.asarray(args[0])
    (yn, yd, xn, xd), (oy, ox), _border = _resize_params(op, args)
    oh, ow = static_dims(op, 1, 3) or [((x.shape[1] - 1) * yn - oy + _border[0]) // yd + 1,
                                       ((x.shape[2] - 1) * xn - ox + _border[1]) // xd + 1]
    y0, y1, ry = _axis_coords(oh, x.shape[1], yn, yd, oy)
    x0, x1, rx = _axis_coords(ow, x.shape[2], xn, xd, ox)
    mode = enum(op, "mode", "NEAREST_NEIGHBOR")
    if mode == "NEAREST_NEIGHBOR":
        yi = np.where(2 * ry >= yn, y1, y0)
        xi = np.where(2 * rx >= xn, x1, x0)
        return [finish(op, x[:, yi[:, None], xi[None, :], :])]
    if mode != "BILINEAR":
        raise InterpreterError(f"tosa.resize: unknown mode {mode}")
    if x.dtype.kind in "iu":
        v = x.astype(np.int64)
        uy, ux, dy, dx = yn, xn, ry[:, None, None], rx[None, :, None]
    else:
        v = compute_float(x)
        uy = ux = v.dtype.type(1.0)
        dy = (ry.astype(v.dtype) / v.dtype.type(yn))[:, None, None]
        dx = (rx.astype(v.dtype) / v.dtype.type(xn))[None, :, None]
    v00 = v[:, y0[:, None], x0[None, :], :]
    v01 = v[:, y0[:, None], x1[None, :], :]
    v10 = v[:, y1[:, None], x0[None, :], :]
    v11 = v[:, y1[:, None], x1[None, :], :]
    acc = v00 * (uy - dy) * (ux - dx) + v01 * (uy - dy) * dx + v10 * dy * (ux - dx) + v11 * dy * dx
    return [finish(op, acc)]


# ---- FFTs (computed in f64, rounded to the result type) ----------------------------------------
@impl("tosa.fft2d")
def _fft2d(interp, op, args):
    z = np.asarray(args[0], np.float64) + 1j * np.asarray(args[1], np.float64)
    inverse = bool(getattr(op.attr("inverse"), "value", False))
    # TOSA's inverse has no 1/(H*W) normalisation.
    out = np.fft.ifft2(z, axes=(1, 2)) * (z.shape[1] * z.shape[2]) if inverse else np.fft.fft2(z, axes=(1, 2))
    return [finish(op, out.real, 0), finish(op, out.imag, 1)]


@impl("tosa.rfft2d")
def _rfft2d(interp, op, args):
    out = np.fft.rfft2(np.asarray(args[0], np.float64), axes=(1, 2))
    return [finish(op, out.real, 0), finish(op, out.imag, 1)]
