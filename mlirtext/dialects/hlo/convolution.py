"""convolution and dynamic_conv: declarations, convolution's custom syntax
(`dim_numbers = [b, 0, 1, f]x[...]->[...], window = {...}`), and checks.
"""
from __future__ import annotations

import re
from typing import Optional

from ...ir import types as T
from ...ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr
from ...ir.dense import DenseElementsAttr, parse_dense
from ...ir.source import Span
from .. import hlo_attrs as A
from ..quant_types import uniform
from .declare import HloOp
from .shared import (compatible_dims, compatible_elements, elt, fail, int_attr, ints_attr, is_quant, padding_pairs,
                     q_dims, quant_conv_common, shape_of, verify_window, window_output)
from .syntax import arr, custom, hlo_create, i64_array, list_text, need, prefix_of, sig_func


_CONV_ATTRS = ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal",
               "dimension_numbers", "feature_group_count", "batch_group_count", "precision_config")


def _dim_word(item, ctx) -> str:
    if isinstance(item, tuple) and item[0] == "bare":
        return item[1].value
    if isinstance(item, tuple) and isinstance(item[0], str):
        return item[0]
    raise ctx.fail("unexpected item in convolution dimension numbers")


def _hlo_conv_dims(ctx, children):
    lhs, x, rhs, out = children
    if x.value != "x":
        raise ctx.fail("expected 'x' between input and kernel dimensions", x)
    parts = ["[" + ", ".join(_dim_word(i, ctx) for i in side) + "]" for side in (lhs, rhs, out)]
    return f"{parts[0]}x{parts[1]}->{parts[2]}"


def _window_key_span(ctx, key: str):
    """Where `key` is written inside the op's `window = {...}` (the dictionary's spans are gone)."""
    text, span = ctx.source.text, ctx.span()
    start = text.find("window", span.start, span.end)
    at = re.compile(rf"\b{re.escape(key)}\s*=").search(text, start if start >= 0 else span.start, span.end)
    return Span(ctx.source, at.start(), at.start() + len(key)) if at else None


def _window_attrs(ctx, window: dict, n_spatial: int) -> dict:
    out = {}
    unknown = set(window) - {"stride", "lhs_dilate", "rhs_dilate", "pad", "reverse"}
    if unknown:
        key = sorted(unknown)[0]
        raise ctx.fail(f"Unexpected keyword {key} (window keys: stride, pad, lhs_dilate, rhs_dilate, reverse)",
                       _window_key_span(ctx, key))
    for key, attr in (("stride", "window_strides"), ("lhs_dilate", "lhs_dilation"),
                      ("rhs_dilate", "rhs_dilation"), ("pad", "padding"), ("reverse", "window_reversal")):
        value = window.get(key)
        if value is None:
            continue
        if not isinstance(value, ArrayAttr):
            raise ctx.fail(f"expected a list for window '{key}'")
        if key == "pad":
            rows = []
            for row in value.items:
                if not isinstance(row, ArrayAttr) or not all(isinstance(v, IntegerAttr) for v in row.items):
                    raise ctx.fail("expected `pad = [[lo, hi], ...]`")
                rows.append([v.value for v in row.items])
            bad = [len(r) for r in rows if len(r) != 2]
            if bad:
                raise ctx.fail(f"Expected array with 2 elements, got {bad[0]} elements instead "
                               "(`pad = [[lo, hi], ...]`)", _window_key_span(ctx, key))
            ptype = T.RankedTensorType((len(rows), 2), T.i64)
            text = "[" + ", ".join("[" + ", ".join(map(str, r)) + "]" for r in rows) + "]"
            out[attr] = parse_dense(text, ptype) if rows else DenseElementsAttr(ptype, ())
        elif key == "reverse":
            out[attr] = DenseArrayAttr(T.i1, tuple(bool(v.value) for v in value.items))
        else:
            if not all(isinstance(v, IntegerAttr) for v in value.items):
                raise ctx.fail(f"expected integers for window '{key}'")
            out[attr] = i64_array(v.value for v in value.items)
    return out


def _hlo_conv(ctx, children):
    name, uses, dims, window, attrs, ftype = children
    prefix = prefix_of(name.value)
    attributes = {"dimension_numbers": OpaqueAttr(f"#{prefix}.conv<{dims}>")}
    attributes.update(_window_attrs(ctx, window or {}, 0))
    attributes.update(attrs or {})
    for key in ("batch_group_count", "feature_group_count"):
        a = attributes.get(key)
        if isinstance(a, IntegerAttr) and a.value < 1:
            # as MLIR's custom parser: reported where the attribute dictionary opens
            at = _window_key_span(ctx, key)
            brace = ctx.source.text.rfind("{", ctx.start, at.start) if at is not None else -1
            raise ctx.fail(f"'{name.value}' op attribute '{key}' failed to satisfy constraint: 64-bit signless "
                           "integer attribute whose value is positive",
                           Span(ctx.source, brace, brace + 1) if brace >= 0 else None)
    return hlo_create(ctx, name.value, ctx.resolve_all(uses, ftype.inputs), list(ftype.results), attributes)


@custom
def _print_convolution(p, op) -> None:
    prefix = prefix_of(op.name)
    dims = op.attr("dimension_numbers")
    need(isinstance(dims, OpaqueAttr) and dims.text.startswith(f"#{prefix}.conv<["))
    need(len(op.operands) == 2)
    window = []
    used = ["dimension_numbers"]
    for word, key in (("stride", "window_strides"), ("pad", "padding"), ("lhs_dilate", "lhs_dilation"),
                      ("rhs_dilate", "rhs_dilation"), ("reverse", "window_reversal")):
        a = op.attr(key)
        if a is None:
            continue
        used.append(key)
        if key == "padding":
            need(isinstance(a, DenseElementsAttr) and len(a.shape) == 2 and a.shape[1] == 2 and not a.is_raw)
            n = a.shape[0]
            vals = list(a.values) * (2 * n) if a.splat else list(a.values)
            need(len(vals) == 2 * n)
            rows = ", ".join(f"[{int(vals[2 * i])}, {int(vals[2 * i + 1])}]" for i in range(n))
            window.append(f"pad = [{rows}]")
        elif key == "window_reversal":
            need(isinstance(a, DenseArrayAttr) and a.element_type == T.i1)
            window.append("reverse = [" + ", ".join("true" if v else "false" for v in a.values) + "]")
        else:
            window.append(f"{word} = {list_text(arr(op, key))}")
    p.write(op.name, "(", p.values(op.operands), ") dim_numbers = ", dims.text[len(prefix) + 7:-1],
            ", window = {", ", ".join(window), "}", p.op_attr_dict(op, elide=used), " : ", sig_func(p, op))


def _quant_axis(e) -> Optional[int]:
    q = uniform(e)
    return None if q is None else q.axis


def _convolution(op):
    d = A.conv_dims(op.attr("dimension_numbers"))
    if d is None or len(op.operands) < 2:
        return
    lt, rt = op.operand_types[0], op.operand_types[1]
    ls, rs = shape_of(lt), shape_of(rt)
    if ls is None or rs is None:
        return
    n = len(ls)
    if n < 2:
        fail(f"expects convolution arguments to have >= 2 dimensions. Got: '{lt}' and '{rt}'.")
    if n != len(rs):
        fail(f"expects convolution arguments to have same number of dimensions. Got: '{lt}' and '{rt}'.")
    if not (is_quant(lt) or is_quant(rt)) and not compatible_elements(lt, rt):
        fail(f"expects lhs and rhs to have compatible element type. Got: {elt(lt)} and {elt(rt)}")
    ns = len(d.input_spatial)
    if ns != len(d.kernel_spatial) or ns != len(d.output_spatial):
        fail(f"expects the same size for input, kernel and output spatial-dimensions, but got {ns}, "
             f"{len(d.kernel_spatial)}, and {len(d.output_spatial)} resp.")
    ins = [d.input_batch, d.input_feature] + d.input_spatial
    ker = [d.kernel_input_feature, d.kernel_output_feature] + d.kernel_spatial
    out = [d.output_batch, d.output_feature] + d.output_spatial
    if not all(0 <= x < n for x in ins + ker + out):
        fail(f"expects input, kernel, and output dimension-numbers to be in-range [0, {n}).")
    for name, dims in (("input", ins), ("kernel", ker), ("output", out)):
        if len(set(dims)) != len(dims):
            fail(f"expects {name} dimension-numbers to be unique, got {{{', '.join(map(str, dims))}}}.")
    fgc = int_attr(op, "feature_group_count", 1)
    bgc = int_attr(op, "batch_group_count", 1)
    if fgc <= 0:
        fail("attribute 'feature_group_count' failed to satisfy constraint: 64-bit signless integer attribute "
             "whose value is positive")
    if bgc <= 0:
        fail("attribute 'batch_group_count' failed to satisfy constraint: 64-bit signless integer attribute "
             "whose value is positive")
    if bgc > 1 and fgc > 1:
        fail(f"expects batch_group_count and feature_group_count not to be both greater than 1. Got {bgc} and "
             f"{fgc} resp.")
    in_f, in_b = ls[d.input_feature], ls[d.input_batch]
    k_in, k_out = rs[d.kernel_input_feature], rs[d.kernel_output_feature]
    if in_b is not None and in_b % bgc != 0:
        fail(f"expects input batch dimension ({in_b}) to be divisible by batch_group_count. Got batch_group_count "
             f"= {bgc}.")
    if in_f is not None:
        if in_f % fgc != 0:
            fail(f"expects input feature dimension ({in_f}) to be a multiple of feature_group_count. Got "
                 f"feature_group_count = {fgc}.")
        if k_in is not None and in_f // fgc != k_in:
            fail(f"expects input feature dimension ({in_f}) / feature_group_count = kernel input feature dimension "
                 f"({k_in}). Got feature_group_count = {fgc}.")
    if k_out is not None:
        if k_out % bgc != 0:
            fail(f"expects output feature dimension size ({k_out}) to be a multiple of batch_group_count. Got "
                 f"batch_group_count = {bgc}.")
        if k_out % fgc != 0:
            fail(f"expects kernel output feature dimension ({k_out}) to be divisible by feature_group_count. For "
                 f"feature_group_count = {fgc}.")
    pc = op.attr("precision_config")
    if isinstance(pc, ArrayAttr) and len(pc.items) > 2:
        fail("expects precision config to be empty or have <= 2 elements.")
    if n != ns + 2 and op.name.startswith("stablehlo."):
        fail(f"expects convolution arguments to have {ns + 2} dimensions. Got: {n}")
    window = [rs[k] for k in d.kernel_spatial]
    if op.name.endswith("dynamic_conv"):
        return
    pads = padding_pairs(op)
    win = verify_window(window, ints_attr(op, "window_strides"), pads, ints_attr(op, "lhs_dilation"),
                        ints_attr(op, "rhs_dilation"), ints_attr(op, "window_reversal"))
    dims = [None] * n
    spatial = window_output([ls[k] for k in d.input_spatial], win)
    for k, v in zip(d.output_spatial, spatial):
        dims[k] = v
    dims[d.output_batch] = None if in_b is None else in_b // bgc
    dims[d.output_feature] = k_out
    if op.results:
        res = op.result_types[0]
        r = shape_of(res)
        if r is not None and (len(r) != len(dims) or not all(compatible_dims(a, b) for a, b in zip(dims, r))):
            fail(f"inferred shape '{q_dims(dims)}' is incompatible with return type of operation '{res}'")
        if any(is_quant(t) for t in (lt, rt, res)):
            ax = _quant_axis(elt(rt))
            if ax is not None and ax != d.kernel_output_feature:
                fail("quantization dimension of rhs should be same with kernel_output_feature_dimension")
            ax = _quant_axis(elt(res))
            if ax is not None and ax != d.output_feature:
                fail("quantization dimension of result should be same with output_feature_dimension")
            quant_conv_common(elt(lt), elt(rt), elt(res))


#: Grammar callbacks of convolution's custom syntax.
RULES = {"hlo_conv_dims": _hlo_conv_dims, "hlo_conv": _hlo_conv}

OPS = (
    HloOp("convolution", "Convolution.", _CONV_ATTRS, verify=_convolution, print=_print_convolution),
    HloOp("dynamic_conv", "Convolution with padding given as a tensor.",
          tuple(a for a in _CONV_ATTRS if a != "padding"), verify=_convolution),
)
