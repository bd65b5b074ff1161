"""convert-conv-to-channels-last: 2-D convolutions in PyTorch's and ONNX's layout (NCHW input, OIHW
filter) become NHWC x HWIO convolutions between transposes, as IREE's
`convert-conv-to-channels-last`, so the compiler's convolution micro-kernel (which reads each
output pixel's window as one contiguous run of channels) takes them. Then the transposes are
moved out of the way:

- a transpose of a constant (a filter) is folded, whatever its size: it costs no more memory than
  the constant it replaces, and it is otherwise a copy on every call;
- a transpose feeding an elementwise op (a bias, a batch norm's scale, a relu, a residual add)
  goes after it instead, when every other operand is a transpose the same way, a broadcast or a
  constant (re-laid out to match); a reduce_window (pooling) and batch_norm_inference take it the
  same way;
- two transposes in a row become one, and none when they cancel.

So between two convolutions the NHWC -> NCHW transpose of the first meets the NCHW -> NHWC
transpose of the second and both go: the network runs in NHWC, with one transpose where an image
comes in and one where a feature map leaves (into a pooling reduce or a reshape).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dialects.hlo_attrs import conv_dims, int_list
from ..ir import types as T
from ..ir.arrays import array_to_attr, array_to_bytes_attr, attr_to_array
from ..ir.attributes import DenseArrayAttr, IntegerAttr, OpaqueAttr
from ..ir.core import Operation
from ..ir.dense import DenseElementsAttr
from .constants import constant_value
from .driver import GreedyDriver
from .passes import Pass
from .rewriter import PatternRewriter, RewritePattern

CHANNELS_LAST = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"

#: Elementwise ops a transpose moves through (their operands and result share one shape).
ELEMENTWISE = {f"{d}.{n}" for d in ("stablehlo", "mhlo") for n in (
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder", "negate", "abs",
    "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "tanh", "sqrt", "rsqrt", "cbrt",
    "sine", "cosine", "floor", "ceil", "sign", "convert", "select", "compare", "and", "or", "xor", "not")}


def _perm(op: Operation) -> list[int]:
    return int_list(op.attr("permutation")) or []


def _inverse(perm: list[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _permuted_type(t: T.RankedTensorType, perm: list[int]) -> T.RankedTensorType:
    """The type of `t` transposed by `perm` (result dim i is operand dim perm[i])."""
    return T.RankedTensorType(tuple(t.shape[p] for p in perm), t.element, t.encoding)


def transpose(rw: PatternRewriter, before: Operation, value, perm: list[int]):
    """`value` transposed by `perm` (itself when `perm` is the identity)."""
    if perm == list(range(len(perm))):
        return value
    dialect = before.name.split(".")[0]
    return rw.create(before, f"{dialect}.transpose", [value], [_permuted_type(value.type, perm)],
                     {"permutation": DenseArrayAttr(T.i64, tuple(perm))}).result


def _is_transpose(value) -> bool:
    op = getattr(value, "op", None)
    return isinstance(op, Operation) and op.name in ("stablehlo.transpose", "mhlo.transpose")


class ConvToChannelsLast(RewritePattern):
    """conv(x, w) in any other 2-D layout -> transpose(conv_nhwc(transpose(x), transpose(w)))."""
    ops = ("stablehlo.convolution", "mhlo.convolution")

    def match_and_rewrite(self, op: Operation, rw: PatternRewriter) -> bool:
        dn = conv_dims(op.attr("dimension_numbers"))
        x, w = op.operands
        t = op.results[0].type
        if dn is None or dn.layout_error or len(dn.input_spatial) != 2 or \
                not all(isinstance(v, T.RankedTensorType) for v in (x.type, w.type, t)):
            return False
        into_x = [dn.input_batch, *dn.input_spatial, dn.input_feature]
        into_w = [*dn.kernel_spatial, dn.kernel_input_feature, dn.kernel_output_feature]
        from_out = [dn.output_batch, *dn.output_spatial, dn.output_feature]
        if into_x == [0, 1, 2, 3] and into_w == [0, 1, 2, 3] and from_out == [0, 1, 2, 3]:
            return False
        attrs = dict(op.attributes)
        attrs["dimension_numbers"] = OpaqueAttr(f"#{op.dialect}.conv<{CHANNELS_LAST}>")
        conv = rw.create(op, op.name, [transpose(rw, op, x, into_x), transpose(rw, op, w, into_w)],
                         [_permuted_type(t, from_out)], attrs)
        rw.replace_op(op, [transpose(rw, op, conv.result, _inverse(from_out))])
        return True


class FoldTransposeOfConstant(RewritePattern):
    """transpose(constant) -> the transposed constant, at any size; transpose(transpose(x)) -> one
    transpose (or x)."""
    ops = ("stablehlo.transpose", "mhlo.transpose")

    def match_and_rewrite(self, op: Operation, rw: PatternRewriter) -> bool:
        source, perm = op.operand("operand"), _perm(op)
        value = constant_value(source)
        if isinstance(value, DenseElementsAttr):
            t = op.results[0].type
            if value.splat and not value.is_raw:
                folded = DenseElementsAttr(t, value.values, splat=True)
            else:
                array = np.ascontiguousarray(np.transpose(attr_to_array(value, source.type), perm))
                if value.is_raw and not value.splat and T.element_type(t) != T.i1:
                    # raw bytes in, raw bytes out: an imported model's weights stay as compact as
                    # the importer wrote them (not a decimal per element)
                    folded = array_to_bytes_attr(array, t)
                else:
                    folded = array_to_attr(array, t)
            const = rw.create(op, source.op.name, [], [t], {"value": folded})
            rw.replace_op(op, [const.result])
            return True
        if _is_transpose(source):
            inner = _perm(source.op)
            rw.replace_op(op, [transpose(rw, op, source.op.operand("operand"), [inner[p] for p in perm])])
            return True
        if perm == list(range(len(perm))):
            rw.replace_op(op, [source])
            return True
        return False


class SinkTranspose(RewritePattern):
    """op(transpose(a, P), ...) -> transpose(op(a, ...), P) for an elementwise op, a pooling
    reduce_window or batch_norm_inference, when every other operand can be laid out as `a` is."""

    def match_and_rewrite(self, op: Operation, rw: PatternRewriter) -> bool:
        if op.name in ELEMENTWISE:
            operands = op.operands
        elif op.name.endswith((".reduce_window", ".batch_norm_inference")) and op.operands:
            operands = op.operands[:1]   # the rest: init values, or per-channel vectors
        else:
            return False
        if len(op.results) != 1 or not isinstance(op.results[0].type, T.RankedTensorType):
            return False
        perms = [_perm(v.op) for v in operands if _is_transpose(v)]
        if not perms or any(p != perms[0] for p in perms) or op.name.endswith(".reduce_window") and \
                len(op.operands) != 2:
            return False
        perm, rank = perms[0], op.results[0].type.rank
        inv = _inverse(perm)
        new = []
        for v in operands:
            if not isinstance(v.type, T.RankedTensorType) or v.type.rank != rank:
                return False
            if _is_transpose(v):
                new.append(v.op.operand("operand"))
            elif getattr(v, "op", None) is not None and v.op.name.endswith(".broadcast_in_dim"):
                dims = int_list(v.op.attr("broadcast_dimensions")) or []
                new.append(self._broadcast(rw, op, v.op, [perm[d] for d in dims], _permuted_type(v.type, inv)))
            elif constant_value(v) is not None:
                new.append(transpose(rw, op, v, inv))   # folded by FoldTransposeOfConstant
            else:
                return False
        attrs = dict(op.attributes)
        if op.name.endswith(".reduce_window"):
            for key in ("window_dimensions", "window_strides", "base_dilations", "window_dilations"):
                if key in attrs:
                    values = int_list(attrs[key])
                    attrs[key] = DenseArrayAttr(T.i64, tuple(values[p] for p in inv))
            if "padding" in attrs:
                pads = np.asarray(int_list(attrs["padding"]), dtype=np.int64).reshape(rank, 2)[inv]
                attrs["padding"] = array_to_attr(pads, T.RankedTensorType((rank, 2), T.i64))
        elif op.name.endswith(".batch_norm_inference"):
            feature = attrs["feature_index"]
            attrs["feature_index"] = IntegerAttr(perm[feature.value], feature.type)
        mapping: dict = {}
        sunk = rw.create(op, op.name, [*new, *op.operands[len(new):]], [_permuted_type(op.results[0].type, inv)],
                         attrs, [r.clone(mapping) for r in op.regions])
        rw.replace_op(op, [transpose(rw, op, sunk.result, perm)])
        return True

    @staticmethod
    def _broadcast(rw: PatternRewriter, before: Operation, broadcast: Operation, dims: list[int], t):
        """`broadcast` re-laid out: its operand's dims go to `dims` of `t`. A bias shaped for NCHW
        (C x 1 x 1) would go to dims out of order, which the lowering makes a transpose of its own:
        its unit dims are reshaped away first, leaving the channels in order."""
        source = broadcast.operand("operand")
        keep = [k for k, size in enumerate(source.type.shape) if size != 1]
        kept = [dims[k] for k in keep]
        if dims != sorted(dims) and kept == sorted(kept):
            shape = tuple(source.type.shape[k] for k in keep)
            source = rw.create(before, f"{broadcast.dialect}.reshape", [source],
                               [T.RankedTensorType(shape, source.type.element)]).result
            dims = kept
        attrs = dict(broadcast.attributes)
        attrs["broadcast_dimensions"] = DenseArrayAttr(T.i64, tuple(dims))
        return rw.create(before, broadcast.name, [source], [t], attrs).result


@dataclass(frozen=True)
class ConvertConvToChannelsLast(Pass):
    name = "convert-conv-to-channels-last"
    summary = "Rewrite 2-D convolutions to NHWC x HWIO between transposes, fold the filters' and cancel the rest"

    def run(self, op: Operation) -> None:
        # (no constant folding here: canonicalize decides that, with its own size limit)
        GreedyDriver([ConvToChannelsLast(), FoldTransposeOfConstant(), SinkTranspose()], fold=False).run(op)
