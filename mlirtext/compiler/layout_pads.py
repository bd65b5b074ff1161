"""The stem's pad of an NCHW image, laid out as NHWC on the way: a kernel of its own for the
dispatch that pads.fuse_transposes_into_pads makes (one generic that reads the NCHW input at the
permuted place and writes the padded NHWC image the first convolution reads), as ONNX Runtime's
ReorderInput moves an image into its blocked layout.

The generated loops run that generic one element at a time: its innermost axis is the image's few
channels (3), which does not vectorise (0.11 ms of mobilenet_v3_small's 1.7 ms a call, 0.13 ms of
a ResNet's stem). This kernel reads `vec` pixels of each channel's row at once (one vector load per
channel), interleaves them in registers into `vec` NHWC pixels (shuffles) and stores those as
`channels` vectors; the border rows and columns are stores of the pad value. A workgroup is one
output row (of every image); pixels past the last whole vector of a row are moved one by one.

Eligible (`plan_layout_pad`): a kernel of one generic that `conv_patterns.constant_pad` reads, with
`channels_first`, as an NCHW argument padded with rows and columns of one constant into NHWC, f32,
2 to MAX_CHANNELS channels (more vectorise along the channels as they are; one channel's layout
change is a reshape, no transpose).
ABI: the input, the workgroup range `[lo, hi)`, the output.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ir import types as T
from ..ir.core import Operation
from ..targets.ir_types import float_literal, quote_name
from ..targets.llvm_cpu import host_vector_floats
from .conv_patterns import constant_pad

#: Channels up to which the kernel interleaves channel rows into pixels (one shuffle of `channels` vectors).
MAX_CHANNELS = 4


@dataclass
class LayoutPadPlan:
    """out[b, top + h, left + w, c] = x[b, c, h, w]; `value` in the border."""
    batch: int
    channels: int
    height: int
    width: int
    padding: tuple          # ((top, bottom), (left, right))
    value: float
    workgroup_axis: int = 1  # (output rows)
    vec: int = field(default_factory=lambda: host_vector_floats())

    @property
    def padded_height(self) -> int:
        return self.height + sum(self.padding[0])

    @property
    def padded_width(self) -> int:
        return self.width + sum(self.padding[1])

    @property
    def workgroups(self) -> tuple[int, int]:
        """(count, output elements each writes): one output row of one image each."""
        return self.batch * self.padded_height, self.padded_width * self.channels

    @property
    def intrinsics(self) -> set[str]:
        return set()

    @property
    def description(self) -> str:
        (t, b), (l_, r) = self.padding
        return (f"layout pad: NCHW to NHWC, {self.channels} channel rows of {self.vec} pixels interleaved in "
                f"registers, padded ({t}+{b} rows, {l_}+{r} columns of {self.value:g})")


def plan_layout_pad(fn: Operation) -> Optional[LayoutPadPlan]:
    """How kernel `fn` runs as the layout pad kernel, or None."""
    body = fn.regions[0].blocks[0]
    ops = [op for op in body.ops if op.name not in ("tensor.empty", "arith.constant", "func.return")]
    args = list(body.arguments)
    if len(ops) != 1 or ops[0].name != "linalg.generic" or len(args) != 1 or \
            list(body.ops[-1].operands) != list(ops[0].results):   # (it returns the generic's result)
        return None
    x = args[0].type
    if not isinstance(x, T.RankedTensorType) or T.element_type(x) != T.f32 or x.rank != 4 or \
            not 2 <= x.shape[1] <= MAX_CHANNELS:
        return None
    padded = constant_pad(ops[0], args, channels_first=True)
    if padded is None:
        return None
    n, c, h, w = x.shape
    return LayoutPadPlan(n, c, h, w, padded[1], padded[2])


def layout_pad_ir(name: str, plan: LayoutPadPlan) -> str:
    """The kernel's definition, as LLVM IR text."""
    C, H, W, V = plan.channels, plan.height, plan.width, plan.vec
    (top, _), (left, right) = plan.padding
    Hp, row = plan.padded_height, plan.padded_width * C
    count = plan.workgroups[0]
    value = float_literal(plan.value, T.f32)
    out = [f"define void @{quote_name(name)}(ptr noalias readonly %in0, i64 %lo, i64 %hi, ptr noalias %C) #100 {{",
           "entry:", "  %lo.neg = icmp slt i64 %lo, 0", "  %lo.c = select i1 %lo.neg, i64 0, i64 %lo",
           f"  %hi.big = icmp sgt i64 %hi, {count}", f"  %hi.c = select i1 %hi.big, i64 {count}, i64 %hi",
           "  br label %r.head",
           "r.head:", "  %r = phi i64 [ %lo.c, %entry ], [ %r.next, %r.latch ]",
           "  %r.more = icmp slt i64 %r, %hi.c", "  br i1 %r.more, label %r.body, label %exit",
           "r.body:", f"  %b = udiv i64 %r, {Hp}", f"  %rr = urem i64 %r, {Hp}",
           f"  %o.row = mul i64 %r, {row}", "  %o = getelementptr inbounds float, ptr %C, i64 %o.row",
           f"  %h = sub i64 %rr, {top}", "  %h.low = icmp sge i64 %rr, " + str(top),
           f"  %h.high = icmp slt i64 %rr, {top + H}", "  %inside = and i1 %h.low, %h.high",
           "  br i1 %inside, label %row.in, label %row.pad", "row.pad:"]
    out += _fill("rp", "%o", 0, row, V, value) + ["  br label %r.latch", "row.in:"]
    out += _fill("fl", "%o", 0, left * C, V, value) + _fill("fr", "%o", (left + W) * C, right * C, V, value)
    out += [f"  %x.img = mul i64 %b, {C * H * W}", f"  %x.h = mul i64 %h, {W}", "  %x.row = add i64 %x.img, %x.h"]
    whole = W // V * V
    if whole:   # (vectors of V pixels: one load per channel, interleaved into C stores)
        vec, wide = f"<{V} x float>", f"<{V * C} x float>"
        body = []
        for c in range(C):
            body += [f"  %v.i{c} = add i64 %x.row, {c * H * W}", f"  %v.j{c} = add i64 %v.i{c}, %w0",
                     f"  %v.p{c} = getelementptr inbounds float, ptr %in0, i64 %v.j{c}",
                     f"  %v.{c} = load {vec}, ptr %v.p{c}, align 4"]
        lines, pixels = _interleave("%v", C, V)
        body += lines + [f"  %v.ow = add i64 %w0, {left}", f"  %v.oc = mul i64 %v.ow, {C}",
                         "  %v.op = getelementptr inbounds float, ptr %o, i64 %v.oc",
                         f"  store {wide} {pixels}, ptr %v.op, align 4"]
        out += _loop("w0", 0, whole, V, body)
    if whole < W:   # (the pixels after the last whole vector, one by one)
        body = []
        for c in range(C):
            body += [f"  %s.i{c} = add i64 %x.row, {c * H * W}", f"  %s.j{c} = add i64 %s.i{c}, %w1",
                     f"  %s.p{c} = getelementptr inbounds float, ptr %in0, i64 %s.j{c}",
                     f"  %s.{c} = load float, ptr %s.p{c}, align 4",
                     f"  %s.ow{c} = add i64 %w1, {left}", f"  %s.oc{c} = mul i64 %s.ow{c}, {C}",
                     f"  %s.od{c} = add i64 %s.oc{c}, {c}", f"  %s.op{c} = getelementptr inbounds float, ptr %o, i64 %s.od{c}",
                     f"  store float %s.{c}, ptr %s.op{c}, align 4"]
        out += _loop("w1", whole, W, 1, body)
    out += ["  br label %r.latch", "r.latch:", "  %r.next = add i64 %r, 1", "  br label %r.head",
            "exit:", "  ret void", "}", 'attributes #100 = { nounwind "frame-pointer"="none" }']
    return "\n".join(out) + "\n"


def _interleave(p: str, C: int, V: int) -> tuple[list[str], str]:
    """(lines, name) of the C vectors `{p}.0` .. (V pixels of one channel each) as V pixels of C
    channels: lane w * C + c is lane w of vector c. Pairs of vectors are joined first (a shuffle
    takes two)."""
    vec = f"<{V} x float>"
    lines, halves = [], []
    for k in range(0, C, 2):   # (a lone last vector is joined with lanes of nothing)
        other = f"{p}.{k + 1}" if k + 1 < C else "poison"
        lines.append(f"  {p}.pair{k} = shufflevector {vec} {p}.{k}, {vec} {other}, <{2 * V} x i32> <" +
                     ", ".join(f"i32 {i}" for i in range(2 * V)) + ">")
        halves.append(f"{p}.pair{k}")
    order = [c * V + w for w in range(V) for c in range(C)]   # (lane of the joined vectors)
    pair = f"<{2 * V} x float>"
    second = halves[1] if len(halves) > 1 else "poison"
    return lines + [f"  {p}.all = shufflevector {pair} {halves[0]}, {pair} {second}, <{C * V} x i32> <" +
                    ", ".join(f"i32 {i}" for i in order) + ">"], f"{p}.all"


def _fill(p: str, base: str, start: int, n: int, V: int, value: str) -> list[str]:
    """Store `value` in the n floats from `base` + `start`: vectors of V, then one at a time."""
    lines = []
    vectors = n // V
    if vectors:
        splat = "<" + ", ".join([f"float {value}"] * V) + ">"
        lines += _loop(f"{p}.v", 0, vectors, 1, [
            f"  %{p}.vo = mul i64 %{p}.v, {V}", f"  %{p}.va = add i64 %{p}.vo, {start}",
            f"  %{p}.vp = getelementptr inbounds float, ptr {base}, i64 %{p}.va",
            f"  store <{V} x float> {splat}, ptr %{p}.vp, align 4"])
    for i in range(vectors * V, n):
        lines += [f"  %{p}.s{i} = getelementptr inbounds float, ptr {base}, i64 {start + i}",
                  f"  store float {value}, ptr %{p}.s{i}, align 4"]
    return lines


def _loop(name: str, start: int, end: int, step: int, body: list[str]) -> list[str]:
    """`%name` from `start` up to `end` (exclusive) by `step` around `body` (one block)."""
    return [f"  br label %{name}.pre", f"{name}.pre:", f"  br label %{name}.head", f"{name}.head:",
            f"  %{name} = phi i64 [ {start}, %{name}.pre ], [ %{name}.next, %{name}.body ]",
            f"  %{name}.more = icmp slt i64 %{name}, {end}",
            f"  br i1 %{name}.more, label %{name}.body, label %{name}.exit", f"{name}.body:", *body,
            f"  %{name}.next = add i64 %{name}, {step}", f"  br label %{name}.head", f"{name}.exit:"]
