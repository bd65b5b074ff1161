"""Linear algebra and signal ops: batch_norm_grad/inference/training, fft, cholesky,
triangular_solve: declarations and checks.
"""
from __future__ import annotations

from ...ir import types as T
from .. import hlo_attrs as A
from .declare import HloOp
from .shared import (KDYN, bool_attr, check_inferred, compatible_dims, compatible_shapes, dim_text, elt, fail,
                     first_operand_shape, int_attr, ints_attr, nonneg_attr, rank_of, raw_dims, shape_of, tensor)
from .syntax import FUNCTIONAL, I64S, Bool, EnumWord, HloFormat, same_types, same_types_format


def _cholesky(op):
    t, s = first_operand_shape(op)
    if s is None:
        return
    if len(s) < 2:
        fail(f"argument 'a' must have rank >= 2, got shape {raw_dims(s)}.")
    if not compatible_dims(s[-2], s[-1]):
        fail(f"minor dimensions of 'a' must have equal size, got shape {raw_dims(s)}.")
    check_inferred(op, [t])


def _batch_norm(op, multi, single, n_results_single):
    nonneg_attr(op, "feature_index")
    fi = int_attr(op, "feature_index", 0)
    mt = [t for t in multi]
    st = [t for t in single]

    def pairwise(ts):
        return all(rank_of(a) in (None, rank_of(b)) and compatible_shapes(a, b) for a in ts for b in ts
                   if rank_of(b) is not None)
    if not pairwise(mt):
        fail("expects multi-dimensional operands to have compatible shapes.")
    if not pairwise(st):
        fail("expects single-dimensional operands to have compatible shapes.")
    ms = shape_of(mt[0])
    if ms is None:
        return
    if fi >= len(ms):
        fail(f"expects featureIndex to be smaller than the rank of multi-dimensional operands; got featureIndex "
             f"{fi}, and rank {len(ms)}.")
    ss = shape_of(st[0])
    if ss is None or not ss:
        return
    if not compatible_dims(ss[0], ms[fi]):
        fail(f"expects the size of single-dimensional operands to be compatible with feature count, but the size "
             f"of single-dimensional operands is {dim_text(ss[0])} and the feature count is {dim_text(ms[fi])}.")
    inferred = [mt[0]] + [tensor([ms[fi]], elt(mt[0]))] * n_results_single
    check_inferred(op, inferred)


def _bn_grad(op):
    if len(op.operands) == 5:
        o = op.operand_types
        if op.results and len({str(elt(t)) for t in [o[0]] + op.result_types}) > 1:
            fail("failed to verify that all of {operand, grad_operand, grad_scale, grad_offset} have same "
                 "element type")
        _batch_norm(op, [o[0], o[4]], [o[1], o[2], o[3]], 2)


def _bn_training(op):
    if len(op.operands) == 3:
        o = op.operand_types
        _batch_norm(op, [o[0]], [o[1], o[2]], 2)


def _bn_inference(op):
    if len(op.operands) == 5:
        o = op.operand_types
        _batch_norm(op, [o[0]], list(o[1:]), 0)


def _fft(op):
    length = ints_attr(op, "fft_length")
    kind = A.enum_word(op.attr("fft_type"))
    if length is None:
        return
    n = len(length)
    if n > 3 or n < 1:
        fail(f"rank must be between 1 and 3, but got {n}.")
    t = op.operand("operand").type
    e = elt(t)
    rfft, irfft = kind == "RFFT", kind == "IRFFT"
    if rfft:
        if e not in (T.f32, T.f64):
            fail(f"RFFT requires f32 or f64 input type, but is given '{e}'.")
    elif not isinstance(e, T.ComplexType):
        fail(f"FFT/IFFT/IRFFT take a complex tensor as input, but is given '{t}'.")
    re_ = T.ComplexType(e) if rfft else (e.element if irfft else e)
    s = shape_of(t)
    if s is None:
        return
    if len(s) < n:
        fail(f"operand rank must not be less than fft rank of {n} for operand of type '{t}'.")
    out = list(s)
    if rfft:
        for a, b in zip(s[-n:], length):
            if not compatible_dims(a, b):
                fail(f"RFFT requires innermost dimensions to be compatible with fft_length. Got: {raw_dims(s)} "
                     f"but wanted {', '.join(map(str, length))}.")
        if length[-1] != 0:
            out[-1] = length[-1] // 2 + 1
    if irfft:
        for a, b in zip(s[-n:][:-1], length):
            if not compatible_dims(a, b):
                fail(f"IRFFT requires non-final dimensions to be compatible with fft_length. Got: {raw_dims(s)} "
                     f"but wanted {', '.join(map(str, length))}, and {KDYN if a is None else a} != {b}.")
        last = s[-1]
        if (not compatible_dims(last, 0) or length[-1] != 0) and not compatible_dims(last, length[-1] // 2 + 1):
            fail(f"IRFFT requires innermost dimension to be compatible with fft_length[-1]/2+1. Got: {last} but "
                 f"fft_length is {', '.join(map(str, length))}.")
        out[-1] = length[-1]
    check_inferred(op, [tensor(out, re_)])


def _triangular_solve(op):
    if len(op.operands) != 2:
        return
    a, b = op.operand_types
    sa, sb = shape_of(a), shape_of(b)
    if sa is None or sb is None:
        return
    if len(sa) < 2:
        fail(f"operand 'a' must have rank >= 2, but got '{a}'")
    if not compatible_dims(sa[-2], sa[-1]):
        fail(f"two minor dimensions of operand 'a' must be compatible, but got '{a}'")
    if len(sa) != len(sb):
        fail(f"operands must have equal rank, but got '{a}' and '{b}'")
    left = bool_attr(op, "left_side")
    if not compatible_dims(sa[-1], sb[-2 if left else -1]):
        fail(f"shared dimension of operands 'a' and 'b' must be compatible, but got '{a}' and '{b}'")
    if not all(compatible_dims(x, y) for x, y in zip(sa[:-2], sb[:-2])):
        fail(f"batch dimensions of the operands must be compatible, but got '{a}' and '{b}'")
    ta = A.enum_word(op.attr("transpose_a"))
    if ta is not None and ta not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        fail("Invalid transpose option value for triangular solve")
    check_inferred(op, [b])


OPS = (
    HloOp("batch_norm_grad", "Gradients of batch normalization.", ("epsilon", "feature_index"), verify=_bn_grad,
          operands=("operand", "scale", "mean", "variance", "grad_output"),
          results=("grad_operand", "grad_scale", "grad_offset")),
    HloOp("batch_norm_inference", "Batch normalization with given statistics.", ("epsilon", "feature_index"),
          verify=_bn_inference, operands=("operand", "scale", "offset", "mean", "variance")),
    HloOp("batch_norm_training", "Batch normalization computing statistics.", ("epsilon", "feature_index"),
          verify=_bn_training, operands=("operand", "scale", "offset"), results=("output", "batch_mean", "batch_var")),
    HloOp("fft", "Fast Fourier transform.", ("fft_type", "fft_length"), verify=_fft,
          format=HloFormat("fft", "$operand `,` `type` `=` $fft_type `,` `length` `=` $fft_length " + FUNCTIONAL,
                           ("operand",), {"fft_type": lambda prefix: EnumWord(prefix, "fft_type"),
                                          "fft_length": I64S})),
    HloOp("cholesky", "Cholesky decomposition.", ("lower",), verify=_cholesky,
          format=HloFormat("cholesky", "$a (`,` `lower` `=` $lower^)? " + same_types_format("a"), ("a",),
                           {"lower": Bool()}, {"SameTypes": same_types(1)})),
    HloOp("triangular_solve", "Solves triangular systems.", ("left_side", "lower", "unit_diagonal", "transpose_a"),
          verify=_triangular_solve),
)
