"""StableHLO / MHLO linear algebra: dot, dot_general, convolution, fft, triangular_solve,
cholesky and batch norm. Products accumulate in a wide type (int64 for integers,
float32 for f16/bf16/f8, the type itself for f32/f64/complex) and are converted to
the result type at the end, as the spec's `preferred_element_type` rule allows.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..dialects.hlo_attrs import conv_dims, dot_dims
from ..ir.attributes import FloatAttr, OpaqueAttr
from .hlo_regions import as_result, bools, enum, flag, integer, ints, padding
from .machine import InterpreterError
from .registry import impl


def wide(a: np.ndarray) -> np.ndarray:
    """`a` in the type products of its elements accumulate in."""
    a = np.asarray(a)
    k = a.dtype.kind
    if k == "b":
        return a.astype(np.int64)
    if k == "i":
        return a.astype(np.int64, copy=False)
    if k == "u":
        return a.astype(np.uint64, copy=False)
    if k == "f" and a.dtype.itemsize >= 4 and a.dtype in (np.float32, np.float64):
        return a
    if k == "c":
        return a
    return a.astype(np.float32)  # f16, bf16, f8 kinds


def _common(a: np.ndarray, b: np.ndarray):
    a, b = wide(a), wide(b)
    if a.dtype != b.dtype:
        t = np.result_type(a.dtype, b.dtype)
        if t.kind == "f" and t.itemsize > 8:
            t = np.dtype(np.float64)
        a, b = a.astype(t, copy=False), b.astype(t, copy=False)
    return a, b


_to_result = as_result


@functools.lru_cache(maxsize=1024)
def _dot_dims(text: str):
    d = dot_dims(OpaqueAttr(text))
    return None if d is None else tuple(tuple(d[k]) for k in (
        "lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
        "rhs_contracting_dimensions"))


@functools.lru_cache(maxsize=1024)
def _conv_dims(text: str):
    return conv_dims(OpaqueAttr(text))


# ---- dot ---------------------------------------------------------------------------------
def dot_general(lhs, rhs, lb, rb, lc, rc) -> np.ndarray:
    """Result dims: batch, lhs free, rhs free (spec order)."""
    lhs, rhs = _common(lhs, rhs)
    lf = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    bshape = [lhs.shape[d] for d in lb]
    lfs = [lhs.shape[d] for d in lf]
    rfs = [rhs.shape[d] for d in rf]
    k = math.prod(lhs.shape[d] for d in lc)
    B, M, N = math.prod(bshape), math.prod(lfs), math.prod(rfs)
    a = lhs.transpose(lb + lf + lc).reshape(B, M, k)
    b = rhs.transpose(rb + rc + rf).reshape(B, k, N)
    if B == 1:
        out = np.matmul(a[0], b[0])
    else:
        out = np.matmul(a, b)
    return out.reshape(bshape + lfs + rfs)


@impl("stablehlo.dot_general", "mhlo.dot_general")
def _dot_general(interp, op, args):
    lhs, rhs = args[0], args[1]
    attr = op.attr("dot_dimension_numbers")
    dims = _dot_dims(attr.text) if isinstance(attr, OpaqueAttr) else None
    if dims is None:
        raise InterpreterError("missing or unreadable dot_dimension_numbers")
    with np.errstate(all="ignore"):
        out = dot_general(lhs, rhs, *[list(d) for d in dims])
    return [_to_result(op, out)]


@impl("stablehlo.dot", "mhlo.dot")
def _dot(interp, op, args):
    lhs, rhs = _common(args[0], args[1])
    with np.errstate(all="ignore"):
        out = np.dot(lhs, rhs) if lhs.ndim and rhs.ndim else lhs * rhs
    return [_to_result(op, out)]


# ---- convolution ---------------------------------------------------------------------
def _dilate(x: np.ndarray, factors: list, first_axis: int) -> np.ndarray:
    if all(f == 1 for f in factors):
        return x
    shape = list(x.shape)
    index = [slice(None)] * x.ndim
    for i, f in enumerate(factors):
        ax = first_axis + i
        shape[ax] = (x.shape[ax] - 1) * f + 1 if x.shape[ax] else 0
        index[ax] = slice(None, None, f)
    out = np.zeros(shape, x.dtype)
    out[tuple(index)] = x
    return out


def pad_axes(x: np.ndarray, pads: list, first_axis: int, value=0) -> np.ndarray:
    """Pad (or crop, for negative amounts) axes first_axis.. by (lo, hi) pairs."""
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for i, (lo, hi) in enumerate(pads):
        ax = first_axis + i
        widths[ax] = (max(lo, 0), max(hi, 0))
        crop[ax] = slice(max(-lo, 0), x.shape[ax] + max(lo, 0) + max(hi, 0) - max(-hi, 0))
    if any(w != (0, 0) for w in widths):
        x = np.pad(x, widths, constant_values=value)
    if any(lo < 0 or hi < 0 for lo, hi in pads):
        x = x[tuple(crop)]
    return x


def convolution(op, lhs, rhs, pads) -> np.ndarray:
    attr = op.attr("dimension_numbers")
    d = _conv_dims(attr.text) if isinstance(attr, OpaqueAttr) else None
    if d is None:
        raise InterpreterError("missing or unreadable convolution dimension_numbers")
    n = len(d.input_spatial)
    strides = ints(op, "window_strides") or [1] * n
    lhs_dil = ints(op, "lhs_dilation") or [1] * n
    rhs_dil = ints(op, "rhs_dilation") or [1] * n
    reversal = bools(op, "window_reversal") or [False] * n
    fgc = integer(op, "feature_group_count", 1)
    bgc = integer(op, "batch_group_count", 1)
    lhs, rhs = _common(lhs, rhs)
    # channels last (N, S..., C), as numpy code for NHWC would lay it out
    x = lhs.transpose([d.input_batch, *d.input_spatial, d.input_feature])
    w = rhs.transpose([d.kernel_output_feature, d.kernel_input_feature, *d.kernel_spatial])  # O I K...
    if any(reversal):
        w = np.flip(w, axis=tuple(2 + i for i, r in enumerate(reversal) if r))
    x = pad_axes(_dilate(x, lhs_dil, 1), pads, 1)
    eff = [(k - 1) * r + 1 for k, r in zip(w.shape[2:], rhs_dil)]
    out_sizes = [max((s - e) // st + 1, 0) if s >= e else 0 for s, e, st in zip(x.shape[1:1 + n], eff, strides)]
    N, C, O = x.shape[0], x.shape[-1], w.shape[0]
    if any(s == 0 for s in out_sizes) or N == 0 or O == 0:
        result = np.zeros([N // bgc] + out_sizes + [O], np.result_type(x, w))
    else:
        win = sliding_window_view(x, eff, axis=tuple(range(1, 1 + n)))  # N, out..., C, K...
        win = win[(slice(None),) + tuple(slice(None, None, s) for s in strides) + (slice(None),)
                  + tuple(slice(None, None, r) for r in rhs_dil)]
        caxes = list(range(1 + n, 2 + 2 * n))
        waxes = list(range(1, 2 + n))

        def contract(xw, ww):
            return np.tensordot(xw, ww, axes=(caxes, waxes))  # N, out..., O
        if bgc > 1:
            nb, og = N // bgc, O // bgc
            result = np.concatenate([contract(win[g * nb:(g + 1) * nb], w[g * og:(g + 1) * og])
                                     for g in range(bgc)], axis=-1)
        elif fgc > 1:
            cg, og = C // fgc, O // fgc
            csel = (slice(None),) * (1 + n)
            result = np.concatenate([contract(win[csel + (slice(g * cg, (g + 1) * cg),)], w[g * og:(g + 1) * og])
                                     for g in range(fgc)], axis=-1)
        else:
            result = contract(win, w)
    result = np.moveaxis(result, -1, 1)  # N, O, out...
    perm = [d.output_batch, d.output_feature, *d.output_spatial]
    return np.transpose(result, np.argsort(perm))


@impl("stablehlo.convolution", "mhlo.convolution")
def _convolution(interp, op, args):
    n = np.asarray(args[0]).ndim - 2
    with np.errstate(all="ignore"):
        out = convolution(op, args[0], args[1], padding(op, "padding", n))
    return [_to_result(op, out)]


@impl("stablehlo.dynamic_conv", "mhlo.dynamic_conv")
def _dynamic_conv(interp, op, args):
    pads = [(int(lo), int(hi)) for lo, hi in np.asarray(args[2]).reshape(-1, 2)]
    with np.errstate(all="ignore"):
        out = convolution(op, args[0], args[1], pads)
    return [_to_result(op, out)]


# ---- fft -------------------------------------------------------------------------------
@impl("stablehlo.fft", "mhlo.fft")
def _fft(interp, op, args):
    x = np.asarray(args[0])
    kind = enum(op, "fft_type")
    lengths = ints(op, "fft_length")
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    if kind == "FFT":
        out = np.fft.fftn(x, s=lengths, axes=axes)
    elif kind == "IFFT":
        out = np.fft.ifftn(x, s=lengths, axes=axes)
    elif kind == "RFFT":
        out = np.fft.rfftn(x, s=lengths, axes=axes)
    elif kind == "IRFFT":
        out = np.fft.irfftn(x, s=lengths, axes=axes)
    else:
        raise InterpreterError(f"unknown fft_type {kind}")
    return [as_result(op, out)]


# ---- linear algebra ------------------------------------------------------------------
@impl("stablehlo.triangular_solve", "mhlo.triangular_solve")
def _triangular_solve(interp, op, args):
    a, b = np.asarray(args[0]), np.asarray(args[1])
    left, lower = flag(op, "left_side"), flag(op, "lower")
    unit = flag(op, "unit_diagonal")
    trans = enum(op, "transpose_a", "NO_TRANSPOSE")
    work = np.complex128 if a.dtype.kind == "c" else np.float64
    A = (np.tril(a) if lower else np.triu(a)).astype(work)
    if unit:
        idx = np.arange(A.shape[-1])
        A[..., idx, idx] = 1
    if trans in ("TRANSPOSE", "ADJOINT"):
        A = np.swapaxes(A, -1, -2)
        lower = not lower
        if trans == "ADJOINT":
            A = A.conj()
    B = b.astype(work)
    if not left:  # X A = B  <=>  A^T X^T = B^T
        A, B, lower = np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2), not lower
    X = _substitute(A, B, lower)
    if not left:
        X = np.swapaxes(X, -1, -2)
    return [as_result(op, X)]


def _substitute(A, B, lower):
    """Solve A X = B for triangular A by substitution, vectorised over batch and columns
    (a loop over the M rows; division by a zero diagonal gives inf/nan as IEEE says)."""
    m = A.shape[-1]
    X = np.zeros(np.broadcast_shapes(A.shape[:-2], B.shape[:-2]) + B.shape[-2:], B.dtype)
    rows = range(m) if lower else range(m - 1, -1, -1)
    with np.errstate(all="ignore"):
        for i in rows:
            acc = B[..., i, :] - np.einsum("...k,...kn->...n", A[..., i, :], X)
            X[..., i, :] = acc / A[..., i, i][..., None]
    return X


@impl("stablehlo.cholesky", "mhlo.cholesky")
def _cholesky(interp, op, args):
    a = np.asarray(args[0])
    lower = flag(op, "lower")
    work = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    flat = work.reshape((-1,) + a.shape[-2:])
    out = np.full_like(flat, np.nan)
    for i, m in enumerate(flat):  # one matrix at a time, so a bad one only spoils itself
        h = np.tril(m) + np.swapaxes(np.tril(m, -1), -1, -2).conj() if lower else \
            np.triu(m) + np.swapaxes(np.triu(m, 1), -1, -2).conj()
        try:
            L = np.linalg.cholesky(h)
        except np.linalg.LinAlgError:
            continue
        out[i] = L if lower else np.swapaxes(L, -1, -2).conj()
    return [as_result(op, out.reshape(a.shape))]


# ---- batch norm ----------------------------------------------------------------------
def _epsilon(op) -> float:
    attr = op.attr("epsilon")
    return float(attr.value) if isinstance(attr, FloatAttr) else float(getattr(attr, "value", 0.0))


def _feature_view(op, x, v):
    fi = integer(op, "feature_index")
    shape = [1] * x.ndim
    shape[fi] = -1
    return np.asarray(v).reshape(shape), tuple(d for d in range(x.ndim) if d != fi)


def _wide_float(a):
    a = np.asarray(a)
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float32)


@impl("stablehlo.batch_norm_inference", "mhlo.batch_norm_inference")
def _batch_norm_inference(interp, op, args):
    x, scale, offset, mean, var = (_wide_float(a) for a in args)
    eps = _epsilon(op)
    s, _ = _feature_view(op, x, scale)
    o, _ = _feature_view(op, x, offset)
    m, _ = _feature_view(op, x, mean)
    v, _ = _feature_view(op, x, var)
    with np.errstate(all="ignore"):
        out = s * (x - m) / np.sqrt(v + np.asarray(eps, x.dtype)) + o
    return [as_result(op, out)]


@impl("stablehlo.batch_norm_training", "mhlo.batch_norm_training")
def _batch_norm_training(interp, op, args):
    x, scale, offset = (_wide_float(a) for a in args)
    eps = _epsilon(op)
    s, axes = _feature_view(op, x, scale)
    o, _ = _feature_view(op, x, offset)
    with np.errstate(all="ignore"):
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        out = s * (x - mean) / np.sqrt(var + np.asarray(eps, x.dtype)) + o
    return [as_result(op, out, 0), as_result(op, mean.reshape(-1), 1), as_result(op, var.reshape(-1), 2)]


@impl("stablehlo.batch_norm_grad", "mhlo.batch_norm_grad")
def _batch_norm_grad(interp, op, args):
    x, scale, mean, var, grad = (_wide_float(a) for a in args)
    eps = _epsilon(op)
    s, axes = _feature_view(op, x, scale)
    m, _ = _feature_view(op, x, mean)
    v, _ = _feature_view(op, x, var)
    count = x.size // max(x.shape[integer(op, "feature_index")], 1)
    with np.errstate(all="ignore"):
        centered = x - m
        stddev = np.sqrt(v + np.asarray(eps, x.dtype))
        normalized = centered / stddev
        sum_grad = grad.sum(axis=axes, keepdims=True)
        sum_grad_centered = (grad * centered).sum(axis=axes, keepdims=True)
        i5 = sum_grad_centered * centered / (v + np.asarray(eps, x.dtype))
        i7 = grad * count - sum_grad - i5
        grad_operand = s / stddev / count * i7
        grad_scale = (grad * normalized).sum(axis=axes)
        grad_offset = grad.sum(axis=axes)
    return [as_result(op, grad_operand, 0), as_result(op, grad_scale, 1), as_result(op, grad_offset, 2)]


# ---- einsum (legacy) -------------------------------------------------------------------
def _einsum_config(op) -> str:
    attr = op.attr("einsum_config")
    config = getattr(attr, "value", None)
    if not isinstance(config, str):
        raise InterpreterError("missing einsum_config")
    return config.replace(" ", "")


@impl("stablehlo.einsum", "mhlo.einsum")
def _einsum(interp, op, args):
    lhs, rhs = _common(args[0], args[1])
    with np.errstate(all="ignore"):
        out = np.einsum(_einsum_config(op), lhs, rhs, optimize=True)
    return [as_result(op, out)]


@impl("stablehlo.unary_einsum", "mhlo.unary_einsum")
def _unary_einsum(interp, op, args):
    config = _einsum_config(op)
    if config.startswith(","):
        config = config[1:]
    with np.errstate(all="ignore"):
        out = np.einsum(config, wide(args[0]))
    return [as_result(op, out)]
