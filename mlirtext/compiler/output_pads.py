"""A convolution that writes its result straight into the padded buffer its consumer reads: the
micro-kernel's part of merging a pad into its producer (pads.py), as IREE pads inside the producer's
dispatch instead of copying the image into a bigger buffer.

The kernel's output is the padded image. Each workgroup stores its GEMM's rows (output pixels) at
their place inside the border (`c_batch_base`, `c_row_offset`), and writes the border pixels of its
own lines and panel of columns (`border_fill`; the first and last GEMMs of an image the rows above
and below too), so the border is the pad's value on every call whatever the buffer held before, and
the workgroups together write the whole output once. An epilogue's residual (the unpadded result's
shape) is read at the unpadded place (`residual_offsets`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from . import vector_ir as V
from .vector_body import splat


@dataclass(frozen=True)
class PaddedOutput:
    """Where the result's pixels go: an image of `lines` x `width` pixels of `N` channels, `gemm_lines`
    lines per GEMM, inside `padding` ((top, bottom), (left, right)) pixels of `value`."""
    lines: int
    width: int
    N: int
    gemm_lines: int
    padding: tuple
    value: float

    @property
    def padded_lines(self) -> int:
        return self.lines + sum(self.padding[0])

    @property
    def padded_width(self) -> int:
        return self.width + sum(self.padding[1])

    @property
    def line_floats(self) -> int:
        return self.padded_width * self.N

    @property
    def image_floats(self) -> int:
        return self.padded_lines * self.line_floats

    @property
    def description(self) -> str:
        (pt, pb), (pl, pr) = self.padding
        return f"result written inside a padded buffer ({pt}+{pb} rows, {pl}+{pr} columns of {self.value:g})"


def c_batch_base(pad: PaddedOutput) -> list[str]:
    """`%c.base0`: where GEMM `%bat` (image `%bat.o`, group of lines `%bat.i`) puts its first pixel."""
    (pt, _), (pl, _) = pad.padding
    return [f"  %c.img = mul i64 %bat.o, {pad.image_floats}",
            f"  %c.grp = mul i64 %bat.i, {pad.gemm_lines * pad.line_floats}",
            "  %c.ig = add i64 %c.img, %c.grp", f"  %c.base0 = add i64 %c.ig, {(pt * pad.padded_width + pl) * pad.N}"]


def c_row_offset(p: str, i: int, pad: PaddedOutput) -> list[str]:
    """`{p}.cr{i}`: where row `{p}.row{i}` of the GEMM (line row // width, pixel row % width) goes,
    past the GEMM's first pixel."""
    return [f"  {p}.cl{i} = udiv i64 {p}.row{i}, {pad.width}", f"  {p}.cc{i} = urem i64 {p}.row{i}, {pad.width}",
            f"  {p}.cla{i} = mul i64 {p}.cl{i}, {pad.line_floats}", f"  {p}.cca{i} = mul i64 {p}.cc{i}, {pad.N}",
            f"  {p}.cr{i} = add i64 {p}.cla{i}, {p}.cca{i}"]


def residual_offsets(M: int, N: int) -> list[str]:
    """`%e.base`: where the workgroup's block starts in an unpadded tile input (a residual)."""
    return [f"  %e.base0 = mul i64 %bat, {M * N}", "  %e.base = add i64 %e.base0, %n"]


def border_fill(pad: PaddedOutput, groups: int, masks: list, W: int, done: str) -> list[str]:
    """Blocks from `bf.head` (entered from `w.body`) to a branch to `done`: the pad's value stored
    at the workgroup's panel of columns (`%n`, vectors of W under `masks`) of each border pixel of its
    lines, and of the rows above (its image's first GEMM) and below (its last; `groups` per image)."""
    (pt, _), (pl, _) = pad.padding
    rows, OWp, value = pad.gemm_lines, pad.padded_width, splat(pad.value, T.f32, W)
    lines = ["bf.head:", "  %bf.first = icmp eq i64 %bat.i, 0", f"  %bf.last = icmp eq i64 %bat.i, {groups - 1}",
             f"  %bf.l0 = mul i64 %bat.i, {rows}", f"  %bf.y0i = add i64 %bf.l0, {pt}",
             "  %bf.y0 = select i1 %bf.first, i64 0, i64 %bf.y0i", f"  %bf.y1i = add i64 %bf.l0, {pt + rows}",
             f"  %bf.y1 = select i1 %bf.last, i64 {pad.padded_lines}, i64 %bf.y1i",
             f"  %bf.img = mul i64 %bat.o, {pad.image_floats}", "  %bf.ibase = add i64 %bf.img, %n",
             "  br label %bf.y.head",
             "bf.y.head:", "  %bf.y = phi i64 [ %bf.y0, %bf.head ], [ %bf.y.next, %bf.x.exit ]",
             "  %bf.y.more = icmp slt i64 %bf.y, %bf.y1", f"  br i1 %bf.y.more, label %bf.y.body, label %{done}",
             # A line of the padding is all border; an image line only its first and last pixels.
             "bf.y.body:", f"  %bf.top = icmp slt i64 %bf.y, {pt}", f"  %bf.bottom = icmp sge i64 %bf.y, {pt + pad.lines}",
             "  %bf.padrow = or i1 %bf.top, %bf.bottom", "  %bf.inrow = xor i1 %bf.padrow, true",
             f"  %bf.x0 = select i1 %bf.padrow, i64 0, i64 {0 if pl else pl + pad.width}",
             f"  %bf.yrow = mul i64 %bf.y, {pad.line_floats}", "  %bf.ybase = add i64 %bf.ibase, %bf.yrow",
             "  br label %bf.x.head",
             "bf.x.head:", "  %bf.x = phi i64 [ %bf.x0, %bf.y.body ], [ %bf.x.next, %bf.x.body ]",
             f"  %bf.x.more = icmp slt i64 %bf.x, {OWp}", "  br i1 %bf.x.more, label %bf.x.body, label %bf.x.exit",
             "bf.x.body:", f"  %bf.xo = mul i64 %bf.x, {pad.N}", "  %bf.o = add i64 %bf.ybase, %bf.xo",
             "  %bf.p0 = getelementptr inbounds float, ptr %C, i64 %bf.o"]
    for j, mask in enumerate(masks):
        if j:
            lines.append(f"  %bf.p{j} = getelementptr inbounds float, ptr %bf.p0, i64 {W * j}")
        lines.append(V.store(value, f"%bf.p{j}", mask, W))
    return lines + ["  %bf.x1 = add i64 %bf.x, 1", f"  %bf.atleft = icmp eq i64 %bf.x1, {pl}",
                    "  %bf.skip = and i1 %bf.atleft, %bf.inrow",   # (past the left border: on to the right one)
                    f"  %bf.x.next = select i1 %bf.skip, i64 {pl + pad.width}, i64 %bf.x1", "  br label %bf.x.head",
                    "bf.x.exit:", "  %bf.y.next = add i64 %bf.y, 1", "  br label %bf.y.head"]
