"""Grouped convolutions (depthwise ones included) as a direct kernel: LLVM IR that computes output
pixels a vector of channels at a time (16 with AVX-512, else 8: `GroupedConvPlan.lanes`), in
registers, over the filter's taps, with an optional elementwise epilogue (a bias, an activation:
epilogues.py).

The matmul micro-kernel does not fit them: a depthwise convolution, as a GEMM, has one output
channel per group and K = KH x KW, so a 16-column panel of B has nothing to reuse. Computed
directly instead, as XNNPACK's and IREE's depthwise kernels are:

- workgroups: one per output row (n, oh); the VM shares them between threads;
- register tile: P adjacent output pixels of the row x one vector of channels (P accumulators,
  P = 8, then 4, 2 and 1 for the pixels left over), summed over the filter's taps (kh, kw) and the
  group's input channels; each tap's filter vector is loaded once per tile;
- inputs: output channel c reads input channels `(c floordiv OCg) * ICg + i`. In a depthwise
  convolution (one each) the vector's channels' inputs are adjacent: one vector load; when OCg is
  a multiple of the vector's lanes they share one group: one scalar, broadcast; otherwise each of
  8 lanes loads its own (a gather);
- channels left over (OC not a multiple of the lanes) are read and written under a lane mask;
- epilogue: on the finished tile, before it is stored.

Each output sums its products in (kh, kw, i) order from zero (multiply-adds may fuse: `contract`),
so results differ from the reference only by rounding. ABI: the kernel's inputs in order, the
workgroup range `[lo, hi)`, the output.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ir.core import Operation
from ..targets.ir_types import quote_name
from ..targets.llvm_cpu import host_vector_floats
from . import vector_ir as V
from .conv_patterns import Conv, match_conv
from .epilogues import Epilogue, trailing_epilogue

#: Output pixels per register tile, largest first.
PIXEL_TILES = (8, 4, 2, 1)


@dataclass
class GroupedConvPlan:
    conv: Conv
    epilogue: Optional[Epilogue] = None
    kind: str = "grouped conv"
    workgroup_axis: int = 1     # (output rows)

    @property
    def depthwise(self) -> bool:
        return self.conv.filter[2] == 1 and self.conv.oc_per_group == 1

    @property
    def inputs(self) -> str:
        """How a tile's 8 channels read their input: adjacent, broadcast or gather."""
        return "adjacent" if self.depthwise else "broadcast" if self.conv.oc_per_group % self.lanes == 0 else "gather"

    @property
    def lanes(self) -> int:
        """Channels per vector: the host's width (16 with AVX-512) where a vector's channels read
        adjacent inputs or share one group, else 8 (a gather's lanes)."""
        wide = host_vector_floats()
        return wide if self.depthwise or self.conv.oc_per_group % wide == 0 else V.LANES

    @property
    def masked(self) -> bool:
        return self.conv.output[3] % self.lanes != 0

    @property
    def description(self) -> str:
        what = "depthwise" if self.depthwise else f"grouped ({self.conv.groups} groups)"
        return (f"direct kernel: {what} convolution f32, {PIXEL_TILES[0]} pixels x {self.lanes} channels per register "
                f"tile, inputs {self.inputs} (a workgroup per output row)"
                + (", channels masked at the edge" if self.masked else "")
                + (", zero padding read in place" if self.conv.padding != ((0, 0), (0, 0)) else "")
                + (f", {self.epilogue.description} epilogue" if self.epilogue else ""))

    @property
    def intrinsics(self) -> set[str]:
        """Declarations of the LLVM intrinsics the kernel calls."""
        out = self.epilogue.intrinsics if self.epilogue else set()
        if self.masked or self.inputs == "gather":
            out |= V.declarations(self.lanes, gather=self.inputs == "gather")
        return out

    @property
    def workgroups(self) -> tuple[int, int]:
        """(count, output elements each writes): one per output row."""
        nb, OH, OW, OC = self.conv.output
        return nb * OH, OW * OC


def plan_grouped_conv(fn: Operation) -> Optional[GroupedConvPlan]:
    """The direct kernel's plan for a grouped convolution dispatch, or None."""
    conv = match_conv(fn)
    # (a packed filter, a result written into a padded buffer, a scaled image: the micro-kernel's)
    if conv is None or conv.groups == 1 or conv.w_packed or conv.out_pad is not None or conv.x_scale is not None:
        return None
    epilogue = trailing_epilogue(fn.regions[0].blocks[0], conv.conv, conv.rest, conv.output[3])
    if epilogue is False:
        return None
    plan = GroupedConvPlan(conv, epilogue)
    if epilogue:
        epilogue.width = plan.lanes
    return plan


def _segments(plan: GroupedConvPlan) -> list[tuple[int, int, int, bool]]:
    """The row's pixels as runs of tiles (tile size, first pixel, tiles, border): the largest tile
    while it fits, then one of each smaller size the rest needs; a border tile has a window that
    reaches into the left or right padding (its loads are checked), the others do not."""
    c = plan.conv
    OW, W, (pl, _) = c.output[2], c.input[2], c.padding[1]
    sw, KW, dw = c.strides[1], c.filter[1], c.dilations[1]
    tiles, at = [], 0
    for size in PIXEL_TILES:
        count = (OW - at) // size if size == PIXEL_TILES[0] else int(OW - at >= size)
        tiles += [(size, at + i * size) for i in range(count)]
        at += size * count
    out: list = []
    for size, first in tiles:
        border = first * sw - pl < 0 or (first + size - 1) * sw - pl + (KW - 1) * dw > W - 1
        if out and out[-1][0] == size and out[-1][3] == border:
            out[-1] = (size, out[-1][1], out[-1][2] + 1, border)
        else:
            out.append((size, first, 1, border))
    return out


def grouped_conv_ir(name: str, plan: GroupedConvPlan) -> str:
    """The kernel's definition, as LLVM IR text (the intrinsics it calls: `plan.intrinsics`)."""
    c = plan.conv
    _, H, W, IC = c.input
    _, OH, OW, OC = c.output
    count, _ = plan.workgroups
    params = [f"ptr noalias readonly %in{i}" for i in range(c.num_inputs)]
    out = [f"define void @{quote_name(name)}({', '.join(params)}, i64 %lo, i64 %hi, ptr noalias %C) #100 {{", "entry:"]
    # (accumulators in memory: SROA makes them registers, carried through the loops over taps)
    out += [f"  %acc{t} = alloca <{plan.lanes} x float>, align 64" for t in range(PIXEL_TILES[0])]
    out += ["  %lo.neg = icmp slt i64 %lo, 0", "  %lo.c = select i1 %lo.neg, i64 0, i64 %lo",
            f"  %hi.big = icmp sgt i64 %hi, {count}", f"  %hi.c = select i1 %hi.big, i64 {count}, i64 %hi"]
    # (the window's top row, ih0, is above the image by the top padding: rows outside are skipped)
    row = [f"  %img = udiv i64 %w, {OH}", f"  %oh = urem i64 %w, {OH}",
           f"  %x.img = mul i64 %img, {H * W * IC}", f"  %ih0.s = mul i64 %oh, {c.strides[0]}",
           f"  %ih0 = sub i64 %ih0.s, {c.padding[0][0]}", f"  %x.oh = mul i64 %ih0, {W * IC}",
           "  %x.row = add i64 %x.img, %x.oh", f"  %c.row = mul i64 %w, {OW * OC}"]
    for k, (size, first, tiles, border) in enumerate(_segments(plan)):
        row += V.counted_loop(f"s{k}.j", "0", tiles, _tile(f"s{k}", size, first, border, plan))
    out += V.counted_loop("w", "%lo.c", "%hi.c", row)
    out += ["  ret void", "}", 'attributes #100 = { nounwind "frame-pointer"="none" }']
    return "\n".join(out) + "\n"


def _tile(p: str, size: int, first: int, border: bool, plan: GroupedConvPlan) -> list[str]:
    """One tile of `size` pixels (the j-th of its run, from pixel `first`), every channel vector;
    a `border` tile reads 0 for the columns of its window in the padding."""
    c, n = plan.conv, plan.lanes
    _, H, W, IC = c.input
    KH, KW, ICg, OC = c.filter
    sw, (dh, dw) = c.strides[1], c.dilations
    vectors = -(-OC // n)
    L = [f"  %{p}.jw = mul i64 %{p}.j, {size}", f"  %{p}.ow = add i64 %{p}.jw, {first}",
         f"  %{p}.iw0.s = mul i64 %{p}.ow, {sw}", f"  %{p}.iw0 = sub i64 %{p}.iw0.s, {c.padding[1][0]}",
         f"  %{p}.c.ow = mul i64 %{p}.ow, {OC}", f"  %{p}.c.base = add i64 %c.row, %{p}.c.ow"]
    v = f"{p}.v"
    body = [f"  %{v}.c0 = mul i64 %{v}, {n}"]
    mask = f"%{v}.mask" if plan.masked else None
    if mask:
        body += V.lane_mask(mask, f"%{v}.c0", OC, n)
    if plan.inputs == "gather":   # each lane's first input channel, (c floordiv OCg) * ICg
        body += V.lanes(f"%{v}.lane", f"%{v}.c0") + [
            f"  %{v}.group = udiv <{n} x i64> %{v}.lane, {_splat_i64(c.oc_per_group)}",
            f"  %{v}.ch = mul <{n} x i64> %{v}.group, {_splat_i64(ICg)}"]
        gather_mask = mask or "<" + ", ".join(["i1 true"] * V.LANES) + ">"
    elif plan.inputs == "broadcast":
        body += [f"  %{v}.group = udiv i64 %{v}.c0, {c.oc_per_group}", f"  %{v}.ch = mul i64 %{v}.group, {ICg}"]
    body += [f"  store <{n} x float> zeroinitializer, ptr %acc{t}, align 64" for t in range(size)]
    # The taps: filter row kh, column kw, the group's input channel i.
    tap = [f"  %{p}.kwc = mul i64 %{p}.kw, {dw}", f"  %{p}.iwk = add i64 %{p}.iw0, %{p}.kwc",
           f"  %{p}.kww = mul i64 %{p}.kw, {ICg * OC}", f"  %{p}.w.tap = add i64 %{p}.w.kh, %{p}.kww"]
    channel = [f"  %{p}.io = mul i64 {'%' + p + '.i' if ICg > 1 else 0}, {OC}",
               f"  %{p}.w.i = add i64 %{p}.w.tap, %{p}.io", f"  %{p}.w.at = add i64 %{p}.w.i, %{v}.c0",
               f"  %{p}.w.p = getelementptr inbounds float, ptr %in{c.w_arg}, i64 %{p}.w.at",
               V.load(f"%{p}.wv", f"%{p}.w.p", mask, n)]
    i = f"%{p}.i" if ICg > 1 else "0"
    for t in range(size):
        x = f"%{p}.x{t}"
        channel += [f"  {x}.iw = add i64 %{p}.iwk, {t * sw}"]
        if border:   # (a column in the padding reads column 0 or W - 1, then takes 0)
            channel += [f"  {x}.lt = icmp slt i64 {x}.iw, 0", f"  {x}.ge = icmp sge i64 {x}.iw, {W}",
                        f"  {x}.out = or i1 {x}.lt, {x}.ge", f"  {x}.iw.lo = select i1 {x}.lt, i64 0, i64 {x}.iw",
                        f"  {x}.iw.c = select i1 {x}.ge, i64 {W - 1}, i64 {x}.iw.lo"]
        channel += [f"  {x}.col = mul i64 {x}.iw{'.c' if border else ''}, {IC}", f"  {x}.at = add i64 %{p}.x.kh, {x}.col"]
        if plan.inputs == "adjacent":
            channel += [f"  {x}.c = add i64 {x}.at, %{v}.c0",
                        f"  {x}.p = getelementptr inbounds float, ptr %in{c.x_arg}, i64 {x}.c",
                        V.load(x, f"{x}.p", mask, n)]
        elif plan.inputs == "broadcast":
            channel += [f"  {x}.ci = add i64 %{v}.ch, {i}", f"  {x}.c = add i64 {x}.at, {x}.ci",
                        f"  {x}.p = getelementptr inbounds float, ptr %in{c.x_arg}, i64 {x}.c",
                        f"  {x}.s = load float, ptr {x}.p, align 4",
                        f"  {x}.ins = insertelement <{n} x float> poison, float {x}.s, i64 0",
                        f"  {x} = shufflevector <{n} x float> {x}.ins, <{n} x float> poison, <{n} x i32> zeroinitializer"]
        else:
            channel += V.splat_i64(f"{x}.off", f"{x}.at") + [f"  {x}.ci = add <{n} x i64> %{v}.ch, {x}.off"]
            if ICg > 1:
                channel += V.splat_i64(f"{x}.iv", i) + [f"  {x}.idx = add <{n} x i64> {x}.ci, {x}.iv"]
            channel += V.gather(x, f"%in{c.x_arg}", f"{x}.idx" if ICg > 1 else f"{x}.ci", gather_mask)
        value = x
        if border:
            value = f"{x}.v"
            channel += [f"  {value} = select i1 {x}.out, <{n} x float> zeroinitializer, <{n} x float> {x}"]
        channel += [f"  {x}.acc = load <{n} x float>, ptr %acc{t}, align 64",
                    f"  {x}.mul = fmul contract <{n} x float> {value}, %{p}.wv",
                    f"  {x}.sum = fadd contract <{n} x float> {x}.acc, {x}.mul",
                    f"  store <{n} x float> {x}.sum, ptr %acc{t}, align 64"]
    if ICg > 1:
        tap += V.counted_loop(f"{p}.i", "0", ICg, channel)
    else:
        tap += channel
    taps = []
    if c.padding[0] != (0, 0):   # a filter row in the top or bottom padding adds nothing
        taps += [f"  %{p}.ihk = mul i64 %{p}.kh, {dh}", f"  %{p}.ih = add i64 %ih0, %{p}.ihk",
                 f"  %{p}.ih.lt = icmp slt i64 %{p}.ih, 0", f"  %{p}.ih.ge = icmp sge i64 %{p}.ih, {H}",
                 f"  %{p}.ih.out = or i1 %{p}.ih.lt, %{p}.ih.ge",
                 f"  br i1 %{p}.ih.out, label %{p}.kh.latch, label %{p}.kh.in", f"{p}.kh.in:"]
    taps += [f"  %{p}.khx = mul i64 %{p}.kh, {dh * W * IC}", f"  %{p}.x.kh = add i64 %x.row, %{p}.khx",
             f"  %{p}.w.kh = mul i64 %{p}.kh, {KW * ICg * OC}"] + V.counted_loop(f"{p}.kw", "0", KW, tap)
    body += V.counted_loop(f"{p}.kh", "0", KH, taps)
    body += _finish(p, v, size, plan, mask)
    return L + V.counted_loop(v, "0", vectors, body)


def _finish(p: str, v: str, size: int, plan: GroupedConvPlan, mask: Optional[str]) -> list[str]:
    """The tile through the epilogue, stored."""
    OC, n = plan.conv.output[3], plan.lanes
    L, columns = [], {}
    for arg in plan.epilogue.column_inputs if plan.epilogue else ():
        name = f"%{v}.col{arg}"
        L += [f"  {name}.p = getelementptr inbounds float, ptr %in{arg}, i64 %{v}.c0", V.load(name, f"{name}.p", mask, n)]
        columns[arg] = name
    for t in range(size):
        value = f"%{p}.out{t}"
        L += [f"  {value} = load <{n} x float>, ptr %acc{t}, align 64",
              f"  %{p}.st{t}.at0 = add i64 %{p}.c.base, {t * OC}", f"  %{p}.st{t}.at = add i64 %{p}.st{t}.at0, %{v}.c0"]
        if plan.epilogue:
            inputs = dict(columns)
            for arg in plan.epilogue.tile_inputs:   # (the same place as the output's)
                inputs[arg] = f"%{p}.r{arg}.{t}"
                L += [f"  {inputs[arg]}.p = getelementptr inbounds float, ptr %in{arg}, i64 %{p}.st{t}.at",
                      V.load(inputs[arg], f"{inputs[arg]}.p", mask, n)]
            lines, value = plan.epilogue.apply(f"{p}.e{t}", value, 0, inputs)
            L += lines
        L += [f"  %{p}.st{t}.p = getelementptr inbounds float, ptr %C, i64 %{p}.st{t}.at",
              V.store(value, f"%{p}.st{t}.p", mask, n)]
    return L


def _splat_i64(value: int) -> str:
    return "<" + ", ".join([f"i64 {value}"] * V.LANES) + ">"
