"""Convolution dispatches as the CPU kernels read them: a zero `linalg.fill`, then the 7-loop
convolution generic that hlo_contraction_to_linalg makes (and channels_last lays out): NHWC input,
HWCF filter, NHWC output, any strides and dilations, no padding (a pad is a dispatch of its own),
dense or grouped; whatever follows it is the kernel's epilogue (epilogues.py).

    out[n, oh, ow, oc] += x[n, oh*sh + kh*dh, ow*sw + kw*dw, (oc floordiv OCg) * ICg + ic] * w[kh, kw, ic, oc]

(a dense convolution has one group: its input channel is `ic`). Shared by the implicit-GEMM
micro-kernel (ukernels.py, one group) and the grouped kernel (grouped_conv.py, depthwise included).

The image may come through a zero pad in the same kernel (compiler/pads.py merges a pad dispatch into
the grouped convolution that reads it): `Conv.padding` then says how many zero rows and columns
surround the kernel's input (`zero_pad`: a generic that only moves data, checked on a probe). The
result may go through a pad too, the last op of the kernel (pads.py merges a pad dispatch into the
dense convolution that makes its image, for the micro-kernel to write into the padded buffer's
interior): `Conv.out_padding` and `Conv.out_pad_value` then say which rows, columns and value
surround the result (`constant_pad`). Or the image may be a kernel argument times a scale per channel
(channel_scales.py merges squeeze-and-excitation's scale into the 1x1 convolution after it):
`Conv.x_scale` then names the scale's input (`channel_scale`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..dialects.affine_maps import evaluate
from ..dialects.linalg import segments
from ..interpreter import Interpreter
from ..interpreter.machine import InterpreterError
from ..ir import types as T
from ..ir.arrays import attr_to_array
from ..ir.core import Operation
from ..transforms.conversions.linalg_to_loops import structured
from ..transforms.extract import op_module, outside_values
from .packed_weights import packed_argument


@dataclass(frozen=True)
class Conv:
    """A convolution dispatch's shapes and where its operands are."""
    conv: Operation
    rest: list                  # the ops after the convolution (its epilogue, if any)
    x_arg: int                  # kernel inputs: the image, the filter
    w_arg: int
    num_inputs: int
    input: tuple                # (N, H, W, IC)
    filter: tuple               # (KH, KW, ICg, OC)
    output: tuple               # (N, OH, OW, OC)
    strides: tuple              # (sh, sw)
    dilations: tuple            # (dh, dw)
    groups: int
    padding: tuple = ((0, 0), (0, 0))   # zero rows (top, bottom) and columns (left, right) around `input`
    w_packed: bool = False              # the filter input is packed at compile time (packed_weights.py)
    #: The pad the result goes through, the kernel's last op (None: the kernel returns `output`), and the
    #: rows (top, bottom) and columns (left, right) of `out_pad_value` it puts around `output`.
    out_pad: Optional[Operation] = None
    out_padding: tuple = ((0, 0), (0, 0))
    out_pad_value: float = 0.0
    #: The kernel input s when the image is read as x[n, h, w, c] * s[0, 0, 0, c] (squeeze-and-excitation's
    #: scale of a batch of one: `channel_scale`), else None.
    x_scale: Optional[int] = None

    @property
    def oc_per_group(self) -> int:
        return self.output[3] // self.groups


def zero_fill(op: Operation) -> bool:
    """`op` is a `linalg.fill` of the constant 0.0."""
    value = getattr(op.operands[0], "op", None) if op.name == "linalg.fill" else None
    return value is not None and value.name == "arith.constant" and \
        getattr(value.attributes.get("value"), "value", None) == 0.0


def match_conv(fn: Operation) -> Optional[Conv]:
    """Kernel `fn` (linalg on tensors) as a zero-filled f32 convolution, or None."""
    body = fn.regions[0].blocks[0]
    ops = [op for op in body.ops if op.name not in ("tensor.empty", "arith.constant", "func.return")]
    args = list(body.arguments)
    packed = packed_argument(ops, args)   # the filter, packed at compile time
    ops = ops[packed[2]:] if packed else ops
    lead = ops.pop(0) if len(ops) > 2 and ops[0].name == "linalg.generic" and zero_fill(ops[1]) else None
    # (a generic before the convolution: a pad, which reads the image through tensor.extract, or a
    # channel scale, which takes it and the scale as inputs)
    pad, scale = (lead, None) if lead is None or not segments(lead)[0] else (None, lead)
    if len(ops) < 2 or not zero_fill(ops[0]) or ops[1].name != "linalg.generic":
        return None
    fill, conv, rest = ops[0], ops[1], ops[2:]
    ins, outs = segments(conv)
    filter_type = ins[1].type if len(ins) == 2 else None
    if packed:
        if len(ins) != 2 or ins[1] is not packed[1]:
            return None
        ins = [ins[0], packed[0]]
    padding, source, x_scale = ((0, 0), (0, 0)), None, None
    if scale is not None:   # the image times a scale per channel, both kernel arguments
        scaled = channel_scale(scale, args)
        if scaled is None or len(ins) != 2 or ins[0] is not scale.results[0] or len(scale.results[0].uses) != 1:
            return None
        ins, x_scale = [args[scaled[0]], ins[1]], scaled[1]
    if pad is not None:   # the image through a zero pad of a kernel argument
        padded = zero_pad(pad, args)
        if padded is None or len(ins) != 2 or ins[0] is not pad.results[0] or len(pad.results[0].uses) != 1:
            return None
        source, padding = padded
        ins = [args[source], ins[1]]
    if len(ins) != 2 or outs[0] is not fill.results[0] or len(fill.results[0].uses) != 1 or \
            not all(any(v is a for a in args) for v in ins) or \
            any(not isinstance(t, T.ShapedType) or t.rank != 4 or T.element_type(t) != T.f32
                for t in (ins[0].type, filter_type, outs[0].type)):
        return None
    try:
        s = structured(conv)
    except Exception:  # noqa: BLE001
        return None
    if s.num_dims != 7 or s.reductions != {4, 5, 6} or not is_multiply_add(s.body):
        return None
    window = conv_window(s.maps[0])
    if window is None:
        return None
    sh, dh, sw, dw = window
    (nb, H, W, IC), (KH, KW, ICg, OC), (nb2, OH, OW, OC2) = (t.shape for t in (ins[0].type, filter_type, outs[0].type))
    (pt, pb), (pl, pr) = padding
    H, W = H + pt + pb, W + pl + pr   # (the window reads the padded image)
    groups = _groups(s.maps[0], IC, ICg, OC)
    if groups is None:
        return None
    spatial = lambda d: (d[0], d[1] * sh + d[5] * dh, d[2] * sw + d[6] * dw)  # noqa: E731
    if not same_affine(s.maps[0], spatial, 7, results=3) or \
            not same_affine(s.maps[1], lambda d: (d[5], d[6], d[4], d[3]), 7) or \
            not same_affine(s.maps[2], lambda d: (d[0], d[1], d[2], d[3]), 7):
        return None
    if (nb, OC) != (nb2, OC2) or H < (OH - 1) * sh + (KH - 1) * dh + 1 or W < (OW - 1) * sw + (KW - 1) * dw + 1:
        return None
    index = [next(i for i, a in enumerate(args) if a is v) for v in ins]
    out_pad, out_padding, value = _output_pad(conv, rest)
    return Conv(conv, rest[:-1] if out_pad else rest, index[0], index[1], len(args),
                (nb, H - pt - pb, W - pl - pr, IC), (KH, KW, ICg, OC), (nb, OH, OW, OC), (sh, sw), (dh, dw), groups,
                padding, packed is not None, out_pad, out_padding, value, x_scale)


def _output_pad(conv: Operation, rest: list) -> tuple:
    """(the pad, its rows and columns, its value) when the last op of `rest` pads the convolution's
    result (or what the ops before it make of it) with a constant; (None, no padding, 0.0) else."""
    if not rest or rest[-1].name != "linalg.generic" or segments(rest[-1])[0]:
        return None, ((0, 0), (0, 0)), 0.0
    image = (rest[-2] if len(rest) > 1 else conv).results[0]
    padded = constant_pad(rest[-1], [image])
    if padded is None or len(image.uses) != 1:
        return None, ((0, 0), (0, 0)), 0.0
    return rest[-1], padded[1], padded[2]


#: Ops a pure data movement's body may hold: index arithmetic and comparisons, then the element
#: read (`tensor.extract`) and the choice between it and the pad value.
_MOVEMENT = {"linalg.index", "linalg.yield", "arith.constant", "arith.addi", "arith.subi", "arith.muli",
             "arith.divsi", "arith.remsi", "arith.floordivsi", "arith.maxsi", "arith.minsi", "arith.cmpi",
             "arith.andi", "arith.ori", "arith.select", "tensor.extract"}
#: The largest image checked on a probe (its values, 1, 2, 3, ..., must be exact in f32).
_PROBE_ELEMENTS = 1 << 24


def zero_pad(op: Operation, args: list) -> Optional[tuple]:
    """(the kernel argument, ((top, bottom), (left, right))) when generic `op` is an NHWC image
    (a kernel argument) padded with zero rows and columns (+0.0), else None."""
    padded = constant_pad(op, args)
    if padded is None or np.float32(padded[2]).view(np.uint32) != 0:
        return None
    return next(i for i, a in enumerate(args) if a is padded[0]), padded[1]


def constant_pad(op: Operation, images: list, channels_first: bool = False) -> Optional[tuple]:
    """(the image, ((top, bottom), (left, right)), the value around it) when generic `op` is an NHWC
    image (one of `images`: values outside `op`) padded with rows and columns of one constant, else
    None; with `channels_first`, an NCHW image laid out as NHWC on the way (x[b, c, h, w] at
    [b, top + h, left + w, c]). The body may only move data (no float arithmetic: which element
    lands where cannot depend on the values), so one run of it on a probe whose elements are all
    different (+-1, 2, 3, ...) shows every element's place, and every other element is the constant."""
    ins, outs = segments(op)
    t = op.results[0].type
    if ins or len(outs) != 1 or not isinstance(t, T.RankedTensorType) or t.rank != 4 or T.element_type(t) != T.f32:
        return None
    block = op.regions[0].blocks[0]
    if block.arguments[0].uses or any(inner.name not in _MOVEMENT or (
            inner.name not in ("tensor.extract", "arith.select", "linalg.yield", "arith.constant") and
            any(T.is_float(x) for x in (*inner.operand_types, *inner.result_types))) for inner in block.ops):
        return None
    outside = outside_values(op)
    sources = [v for v in outside if any(v is a for a in images)]
    if len(sources) != 1 or not isinstance(sources[0].type, T.RankedTensorType) or \
            sources[0].type.rank != 4 or sources[0].type.num_elements > _PROBE_ELEMENTS:
        return None
    x = sources[0].type
    nhwc = (x.shape[0], x.shape[2], x.shape[3], x.shape[1]) if channels_first else tuple(x.shape)
    low = [0, 0, 0, 0]
    high = [a - b for a, b in zip(t.shape, nhwc)]
    if high[0] or high[3] or min(high) < 0:
        return None
    probe = np.arange(1, x.num_elements + 1, dtype=np.float32).reshape(x.shape)
    probe[..., 1::2] *= -1
    values = []
    for v in outside:
        if v is sources[0]:
            values.append(probe)
        elif getattr(v, "op", None) is not None and v.op.name == "tensor.empty":
            values.append(np.zeros(v.type.shape, np.float32))
        elif getattr(v, "op", None) is not None and v.op.name == "arith.constant":
            values.append(attr_to_array(v.op.attr("value"), v.type))
        else:
            return None
    module = op_module(op)
    try:
        got = np.asarray(Interpreter(module).call(module.regions[0].blocks[0].ops[0].sym_name, values,
                                                  reflect=False)[0])
    except (InterpreterError, ValueError, TypeError, IndexError):
        return None
    first = np.argwhere(got == 1.0)
    if len(first) != 1:
        return None
    low = [int(i) for i in first[0]]
    high = [h - lo for h, lo in zip(high, low)]
    if low[0] or low[3] or min(high) < 0:
        return None
    # (a corner is padding, if there is any)
    value = got.flat[0] if low[1] or low[2] else got.flat[-1] if high[1] or high[2] else np.float32(0)
    expected = np.full_like(got, value)
    expected[:, low[1]:low[1] + nhwc[1], low[2]:low[2] + nhwc[2], :] = \
        probe.transpose(0, 2, 3, 1) if channels_first else probe
    if not np.array_equal(got.view(np.uint32), expected.view(np.uint32)):
        return None
    return sources[0], ((low[1], high[1]), (low[2], high[2])), float(value)


def channel_scale(op: Operation, args: list) -> Optional[tuple]:
    """(the image's kernel input, the scale's) when generic `op` is x[0, h, w, c] * s[0, 0, 0, c] (either
    order) over an NHWC image of one batch, both kernel arguments, f32; else None."""
    ins, outs = segments(op)
    block = op.regions[0].blocks[0]
    if len(ins) != 2 or len(outs) != 1 or len(block.ops) != 2 or block.ops[0].name != "arith.mulf" or \
            block.ops[1].name != "linalg.yield" or block.ops[1].operands[0] is not block.ops[0].results[0] or \
            set(map(id, block.ops[0].operands)) != {id(block.arguments[0]), id(block.arguments[1])}:
        return None
    try:
        maps = structured(op).maps
    except Exception:  # noqa: BLE001
        return None
    t = outs[0].type
    if not isinstance(t, T.RankedTensorType) or t.rank != 4 or t.shape[0] != 1 or T.element_type(t) != T.f32:
        return None
    image = lambda d: (d[0], d[1], d[2], d[3])   # noqa: E731
    row = lambda d: (d[0], 0, 0, d[3])          # noqa: E731
    index = [next((i for i, a in enumerate(args) if a is v), None) for v in ins]
    if None in index or not same_affine(maps[2], image, 4) or \
            any(tuple(v.type.shape) not in (tuple(t.shape), (1, 1, 1, t.shape[3])) for v in ins):
        return None
    for x, s_ in ((0, 1), (1, 0)):
        if tuple(ins[x].type.shape) == tuple(t.shape) and same_affine(maps[x], image, 4) and \
                tuple(ins[s_].type.shape) == (1, 1, 1, t.shape[3]) and same_affine(maps[s_], row, 4):
            return index[x], index[s_]
    return None


def _groups(m, IC: int, ICg: int, OC: int) -> Optional[int]:
    """How many groups the input map's channel result makes: 1 for `ic` itself (IC == ICg), G for
    `(oc floordiv OC/G) * ICg + ic` with IC == G * ICg; None for anything else."""
    if len(m.results) != 4:
        return None
    kind, value = m.results[3]
    if kind == "dim":
        return 1 if value == 4 and IC == ICg else None
    if kind != "expr":
        return None
    oc, ic = (re.escape(m.dims[i]) for i in (3, 4))
    found = re.fullmatch(rf"\(\s*{oc}\s+floordiv\s+(\d+)\s*\)\s*\*\s*(\d+)\s*\+\s*{ic}", value.strip())
    if found is None:
        return None
    per_group, stride = int(found.group(1)), int(found.group(2))
    groups = OC // per_group if per_group else 0
    return groups if groups >= 1 and groups * per_group == OC and stride == ICg and groups * ICg == IC else None


def conv_window(m) -> Optional[tuple]:
    """(row stride, row dilation, column stride, column dilation) of a convolution's input map
    `(n, oh*sh + kh*dh, ow*sw + kw*dw, ...)` over loops (n, oh, ow, oc, ic, kh, kw): its second and
    third results' coefficients, read off at unit vectors (`same_affine` then checks the whole map)."""
    if len(m.results) != 4:
        return None
    coefficients = []
    for j in (1, 5, 2, 6):
        point = [int(i == j) for i in range(7)]
        kind, value = m.results[1 if j in (1, 5) else 2]
        got = point[value] if kind == "dim" else None if kind == "const" else \
            evaluate(m, value, dict(enumerate(point)))
        if not isinstance(got, int) or got < 1:
            return None
        coefficients.append(got)
    return tuple(coefficients)


def is_multiply_add(block) -> bool:
    """`yield out + in * filter` (either order of the sum), f32."""
    x, w, o = block.arguments
    if len(block.ops) != 3:
        return False
    mul, add, ret = block.ops
    return mul.name == "arith.mulf" and set(map(id, mul.operands)) == {id(x), id(w)} and \
        add.name == "arith.addf" and set(map(id, add.operands)) == {id(o), id(mul.results[0])} and \
        ret.name == "linalg.yield" and ret.operands[0] is add.results[0]


def same_affine(m, f, num_dims: int, results: Optional[int] = None) -> bool:
    """Whether indexing map `m` (its first `results` results: all by default) is the affine function
    `f` (checked at 0 and each unit vector, which determine an affine function)."""
    chosen = m.results if results is None else m.results[:results]
    for point in [[0] * num_dims] + [[int(i == j) for i in range(num_dims)] for j in range(num_dims)]:
        got = []
        for kind, value in chosen:
            got.append(point[value] if kind == "dim" else value if kind == "const" else
                       evaluate(m, value, dict(enumerate(point))))
        if tuple(got) != tuple(f(point)):
            return False
    return True
