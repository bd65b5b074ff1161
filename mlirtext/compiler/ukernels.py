"""Matmul micro-kernel: register-tiled LLVM IR for `fill(0) + (batch_)matmul` dispatches on f32,
and for NHWC convolutions, strided or not (the same kernel over taps: `MatmulPlan`), with an optional
elementwise epilogue (a bias, a relu: see epilogues.py).

The generated loops of a matmul vectorise along `n` but load and store the output row at every
step of `k`. As IREE does with its matmul micro-kernels, such a dispatch gets a hand-shaped kernel
behind the same interface instead, shaped as BLIS/IREE's are:

- workgroups: one per (batch, 16-column panel of C); the VM shares them between threads;
- packing: a block of KC rows of the panel of B is copied into a contiguous KC x 16 buffer on the
  stack (rows of B are N floats apart: a power-of-two stride that maps every row of an unpacked
  panel to the same few L1 sets); the packed block stays in L1 while every row tile of A uses it.
  With a single row tile there is no reuse and B is read in place. A B that the kernel gets as
  B^T (attention's K, transposed only for this matmul) is read in place too: the packing loads
  8 x 8 blocks of B^T and transposes them in registers (`_pack_transposed`), so the transpose
  never becomes a dispatch and a buffer of its own (epilogues.fuse_transposed_operands). A B that
  is a constant of the module (a weight, a filter) is packed at compile time instead (prepack.py):
  the kernel reads its panels where they lie and copies nothing on any call;
- register blocking: a 6x16 tile of C (twelve 8-float registers) accumulates over the block of k,
  with A broadcast one element at a time and B loaded 16 floats at a time (FMA); rows left over
  use 4-, 2- and 1-row tiles. With AVX-512 (32 registers of 16 floats) the tile is 12x16, twelve
  16-float registers (`WIDE_ROW_TILES`): twice the multiply-adds per instruction, as IREE's and
  ONNX Runtime's AVX-512 kernels do; and where N is a multiple of 32, 12x32 (two panels a
  workgroup, 24 registers: `MatmulPlan.tile_n`), which halves the loads of A per multiply-add;
- taps: a convolution's filter rows are the outer loop (C carries the sums from one to the next),
  or, where the packed filter's panel fits in L1 (a CNN's first convolution: 7 rows of 21 floats),
  the register tile sums every tap before it is stored (`MatmulPlan.inner_taps`);
- epilogue: after the last block of k, the tile goes through the epilogue before it is stored; a
  residual it adds may be C's own buffer where C holds no partial sums before (`in_place_input`);
- N not a multiple of 16: the last panel is narrower. Its columns past N are neither read nor
  written: B is packed (or, with one row tile, read in place) and C loaded and stored under lane
  masks, zeros past N in the registers. With several batches (a convolution's output rows) each
  workgroup then takes every panel of its batch, so workgroups write equal blocks.

Each element still sums its products in `k` order starting from zero (multiply-adds may fuse:
`contract`), so results differ from the reference only by FMA rounding.

One row of A (M == 1) runs the GEMV kernel instead (gemv.py), behind the same plan and interface.

Eligible (`plan_kernel`): a zero `linalg.fill` and a `linalg.matmul` / `linalg.batch_matmul` with
the standard maps, or a convolution generic (`plan_conv`), f32 throughout, both inputs function
arguments (or B a `linalg.transpose` of one that swaps its last two axes, with K and N multiples
of 8 and 16, or B unpacked from an argument packed at compile time: packed_weights.py), K >= 1;
then views and an epilogue generic, when
`epilogues.epilogue_of` accepts them. ABI: the kernel's inputs in order, the workgroup range
`[lo, hi)`, the output.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..dialects.linalg import segments
from ..ir import types as T
from ..ir.core import Operation
from ..targets.ir_types import quote_name
from ..targets.llvm_cpu import host_vector_floats
from ..transforms.conversions.linalg_to_loops import structured
from . import vector_ir as V
from .conv_patterns import match_conv, zero_fill
from .epilogues import Epilogue, trailing_epilogue
from .gemv import GROUP, gemv_ir, gemv_workgroups
from .grouped_conv import GroupedConvPlan, grouped_conv_ir, plan_grouped_conv
from .output_pads import PaddedOutput, border_fill, c_batch_base, c_row_offset, residual_offsets
from .packed_weights import packed_argument

TILE_N = 16
#: Row tiles, largest first: 6 rows x 16 columns is twelve 8-float accumulators (of 16 AVX registers).
ROW_TILES = (6, 4, 2, 1)
#: With 16-float vectors: 12 rows x 16 columns is twelve accumulators (of 32 AVX-512 registers).
WIDE_ROW_TILES = (12, 8, 4, 2, 1)
#: A convolution's output rows are merged into GEMMs of at least this many rows where they can be.
MERGED_ROWS = 48
#: ... and of this many where the image still makes MIN_GEMMS of them (work for the threads): each
#: GEMM packs its panels of B again and ends in a partial row tile, which more rows amortise (a
#: 56x56x64 3x3 convolution: 1.70-1.74 ms in GEMMs of one line, 56 rows; 1.55-1.60 ms in 4 lines).
GEMM_ROWS = 192
MIN_GEMMS = 8
#: Filters of more floats than this (1 MB, half of a 2 MB L2) are read once per image, not per GEMM.
FILTER_IN_L2 = 1 << 18
#: Rows of k per packed block of a panel (256 x 16 floats: 16 KiB, half of L1).
KC = 256
#: A filter whose panel (every tap, `tile_n` columns) is at most this many floats sums its taps
#: inside the register tile (`MatmulPlan.inner_taps`): 32 KiB, in L1 beside the rows of A.
TAPS_IN_L1 = 8192
#: An A of more floats than this (1 MiB, half of a 2 MiB L2) is not kept in L2 from one workgroup to
#: the next: its workgroups then take several panels each (`MatmulPlan.panel_group`) ...
A_IN_L2 = 1 << 18
#: ... leaving at least this many workgroups to share between threads.
MIN_PANEL_GROUPS = 4
DESCRIPTION = "micro-kernel: matmul f32, B packed in 16-column panels (a workgroup per batch and panel)"
GEMV_DESCRIPTION = f"micro-kernel: GEMV f32 (one row of A), {GROUP} 16-column panels of B per workgroup"


@dataclass
class MatmulPlan:
    """C[bat] (M x N, rows N apart) = sum over taps t of A[bat, t] (M x K) @ B[bat, t] (K x N).

    A matmul has one tap. A convolution is the same loop nest over its input in place (an implicit
    GEMM, no im2col copy): for output row `oh` and filter row `t`, the rows of A are the input
    pixels of row oh*sh + t*dh, `a_row` floats apart (sw * IC), each with its KW x IC window contiguous,
    and B is filter row t, (KW * IC) x OC. Several output lines make one GEMM (`a_wrap`)."""
    batch: int
    M: int
    N: int
    K: int                              # per tap
    a_arg: int                          # which kernel input is A, which is B
    b_arg: int
    num_inputs: int
    epilogue: Optional[Epilogue] = None
    taps: int = 1
    a_row: int = 0                      # floats between rows of A (0: K)
    #: Rows of A per image line (a convolution's OW; 0: A's rows are evenly `a_row` apart): row r of
    #: a GEMM of several output lines reads (r // a_wrap) * a_line + (r % a_wrap) * a_row.
    a_wrap: int = 0
    a_line: int = 0
    a_tap: int = 0                      # floats between taps of A, of B
    b_tap: int = 0
    a_batch: tuple = ()                 # A of batch b starts at (b // d) * s1 + (b % d) * s2: (d, s1, s2)
    b_batch: Optional[int] = None       # floats between batches of B (None: K * N)
    kind: str = "matmul"
    b_transposed: bool = False          # the kernel input is B^T (N x K): B[k, n] is input[n, k]
    b_packed: bool = False              # the kernel input is B packed at compile time (P x K x 16 per batch)
    #: Taps as (row, column) pairs, `tap_columns` per row and `a_column` floats apart in A (a filter
    #: with dilated columns: each tap is one filter pixel, K = IC); 1: each tap is a whole filter row.
    tap_columns: int = 1
    a_column: int = 0
    #: A convolution's result written inside the padded buffer its consumer reads (output_pads.py).
    c_pad: Optional[PaddedOutput] = None
    #: The kernel input s that scales A's columns (a 1x1 convolution of x * s per channel: channel_scales.py):
    #: each block of B is packed with its row k times s[k], so A is read as it is.
    a_scale: Optional[int] = None
    #: Panels of C per workgroup, walked inside each block of k (1: one panel, all of k). A matmul
    #: whose A outgrows L2 reads A once per workgroup from L3 or memory (ViT's MLP down-projection,
    #: 197 x 3072: 2.4 MB, once for each of its 24 panels); with a group of panels each block of
    #: A's columns is read from memory once and then from L2 for the group's other panels.
    panel_group: int = 1

    workgroup_axis: int = -1            # (panels of columns)
    #: Floats per vector register (the host's: 16 with AVX-512, else 8).
    vec: int = field(default_factory=lambda: host_vector_floats())

    @property
    def row_tiles(self) -> tuple:
        return WIDE_ROW_TILES if self.vec == 16 else ROW_TILES

    @property
    def intrinsics(self) -> set[str]:
        """Declarations of the LLVM intrinsics the kernel calls."""
        out = self.epilogue.intrinsics if self.epilogue else set()
        return out | V.declarations(self.vec) if self.edge else out

    @property
    def tile_n(self) -> int:
        """Columns of C per register tile and workgroup: two 16-column panels with 16-float vectors
        when N is a multiple of 32 (twelve rows x 32 columns: 24 accumulators, two loads of B and
        twelve broadcasts of A per 24 multiply-adds, where a 16-column tile needs 13 loads for 12),
        else one panel."""
        wide = self.vec == 16 and self.N % (2 * TILE_N) == 0 and not self.b_transposed and not self.gemv and \
            self.a_scale is None
        return 2 * TILE_N if wide else TILE_N

    @property
    def inner_taps(self) -> bool:
        """The register tile sums over every tap before it is stored (one block of k per tap, B packed
        at compile time, its panel small enough for L1: a convolution of few input channels, as a
        CNN's first one is). Else the taps are the outer loop: C is loaded and stored once per tap
        (7 times for a 7x7 filter's rows of 21 floats, and each row tile's offsets made again)."""
        return self.taps > 1 and self.K <= KC and self.b_packed and self.tap_columns == 1 and \
            self.a_scale is None and self.taps * self.K * self.tile_n <= TAPS_IN_L1

    @property
    def in_place_input(self) -> Optional[int]:
        """The kernel input (a residual) whose buffer C may be (planner.py): the epilogue reads each
        of its elements once, for the element of C at the same place and before storing it, and C
        holds no partial sums before that (one block of k and one pass over the taps), so the
        result can overwrite it as it goes, as ONNX Runtime's convolution accumulates into its Sum
        input: one stream of memory fewer (ResNet-50's conv3 + residual). None where not."""
        tiles = self.epilogue.tile_inputs if self.epilogue else []
        one_pass = self.K <= KC and (self.taps == 1 or self.inner_taps)
        if len(tiles) != 1 or not one_pass or self.c_pad or self.gemv or tiles[0] in (self.a_arg, self.b_arg):
            return None
        return tiles[0]

    @property
    def panels(self) -> int:
        """Column tiles of C per batch (`tile_n` wide; the last one narrower when N is not a
        multiple of 16)."""
        return -(-self.N // self.tile_n)

    @property
    def packed_panels(self) -> int:
        """16-column panels of B packed at compile time, per batch (prepack.py's layout)."""
        return -(-self.N // TILE_N)

    @property
    def edge(self) -> bool:
        """The last panel is narrower: its columns past N are neither read nor written (lane masks)."""
        return self.N % TILE_N != 0

    @property
    def gemv(self) -> bool:
        """One row of A and B not transposed: the GEMV kernel (gemv.py) runs it."""
        return self.M == 1 and self.kind == "matmul" and not self.b_transposed

    @property
    def panels_per_workgroup(self) -> int:
        """1, or every panel of a batch when the last panel is narrower and there are several
        batches (the workgroups then write whole batches: equal blocks of the output)."""
        return self.panels if self.edge and self.batch > 1 else 1

    @property
    def groups(self) -> int:
        """Workgroups per batch with `panel_group` panels each (a divisor of `panels`)."""
        return self.panels // self.panel_group

    @property
    def workgroups(self) -> tuple[int, int]:
        """(count, output elements each writes, the last one's fewer): M rows of a panel each, of a
        group of panels (`panel_group`) or of every panel of a batch (`panels_per_workgroup`); the
        GEMV kernel's groups of panels."""
        if self.gemv:
            return gemv_workgroups(self)
        if self.panel_group > 1:
            return self.batch * self.groups, self.M * self.tile_n * self.panel_group
        count = self.batch if self.panels_per_workgroup > 1 else self.batch * self.panels
        if self.c_pad:   # (each writes its block and its share of the border: about an equal part)
            size = self.batch // self.a_batch[0] * self.c_pad.image_floats
            return count, -(-size // count)
        return count, self.M * self.N if self.panels_per_workgroup > 1 else min(self.M * self.tile_n, self.M * self.N)

    @property
    def tiles(self) -> str:
        return f"{self.row_tiles[0]}x{self.tile_n} register tiles"

    @property
    def description(self) -> str:
        if self.gemv:
            return GEMV_DESCRIPTION + (", B packed at compile time" if self.b_packed else "") + \
                (f", last panel {self.N % TILE_N} columns (masked)" if self.edge else "") + \
                (f", {self.epilogue.description} epilogue" if self.epilogue else "")
        what = DESCRIPTION if self.kind == "matmul" else \
            DESCRIPTION.replace("matmul f32", f"convolution f32 as implicit GEMM over {self.taps} filter "
                                f"{'rows' if self.tap_columns == 1 else 'pixels'}")
        what += f", {self.tiles}"
        what += ", taps summed in registers" if self.inner_taps else ""
        what += f", {self.panel_group} panels a workgroup inside each block of k" if self.panel_group > 1 else ""
        what += ", B transposed while packed" if self.b_transposed else ""
        what += ", B's rows scaled by A's channel scale while packed" if self.a_scale is not None else ""
        what += ", B packed at compile time" if self.b_packed else ""
        what += f", last panel {self.N % TILE_N} columns (masked)" if self.edge else ""
        what += f", {self.epilogue.description} epilogue" if self.epilogue else ""
        return what + (f", {self.c_pad.description}" if self.c_pad else "")


def host_tile_columns(N: int) -> int:
    """Columns per register tile (and workgroup) of this host's micro-kernel for a C of N columns
    (more than one row, B not transposed)."""
    return MatmulPlan(1, 2, N, 1, 0, 1, 2).tile_n


def host_tiles(N: int = TILE_N) -> str:
    """The register tiles of this host's micro-kernels for a C of N columns (B not transposed), as
    their descriptions say them."""
    return MatmulPlan(1, 2, N, 1, 0, 1, 2).tiles


def _vector_epilogue(epilogue):
    """The micro-kernel's epilogue works on its vectors (the host's width); False and None pass."""
    if epilogue:
        epilogue.width = host_vector_floats()
    return epilogue


def plan_matmul(fn: Operation) -> Optional[MatmulPlan]:
    """How kernel `fn` (linalg on tensors) runs as the micro-kernel, or None when it cannot."""
    body = fn.regions[0].blocks[0]
    ops = [op for op in body.ops if op.name not in ("tensor.empty", "arith.constant", "func.return")]
    args = list(body.arguments)
    packed = packed_argument(ops, args)   # B packed at compile time (packed_weights.py): read in place
    ops = ops[packed[2]:] if packed else ops
    transpose = ops[0] if not packed and ops and ops[0].name == "linalg.transpose" else None
    ops = ops[1:] if transpose else ops
    if len(ops) < 2 or not zero_fill(ops[0]) or ops[1].name not in ("linalg.matmul", "linalg.batch_matmul"):
        return None
    fill, mm, rest = ops[0], ops[1], ops[2:]
    ins, outs = segments(mm)
    if outs[0] is not fill.results[0] or len(fill.results[0].uses) != 1:
        return None
    if packed:
        if ins[1] is not packed[1]:
            return None
        ins = [ins[0], packed[0]]
    if transpose is not None:   # B^T, an argument, transposed only for the matmul: read in place
        if not _swaps_last_two(transpose, ins[1], args):
            return None
        ins = [ins[0], transpose.operand("input")]
    if not all(any(v is a for a in args) for v in ins):
        return None
    if any(T.element_type(v.type) != T.f32 for v in (*ins, *outs)):
        return None
    try:
        s = structured(mm)
    except Exception:  # noqa: BLE001
        return None
    batched = mm.name == "linalg.batch_matmul"
    dims = [("dim", i) for i in range(4 if batched else 3)]
    b, m, n, k = (dims if batched else [None, *dims])
    want = [[x for x in (b, m, k) if x], [x for x in (b, k, n) if x], [x for x in (b, m, n) if x]]
    if [list(mp.results) for mp in s.maps] != want:
        return None
    shape_c = outs[0].type.shape
    batch, M, N = (shape_c if batched else (1, *shape_c))
    if packed and list(packed[0].type.shape[:-3]) != ([batch] if batched else []):
        return None
    K = ins[0].type.shape[-1]
    if K < 1 or M < 1 or (transpose is not None and (K % 8 or N % TILE_N)):
        return None
    epilogue = _vector_epilogue(trailing_epilogue(body, mm, rest, N))
    if epilogue is False:
        return None
    index = [next(i for i, a in enumerate(args) if a is v) for v in ins]
    plan = MatmulPlan(batch, M, N, K, index[0], index[1], len(args), epilogue, b_transposed=transpose is not None,
                      b_packed=packed is not None)
    plan.panel_group = panel_group(plan)
    return plan


def panel_group(plan: MatmulPlan) -> int:
    """Panels per workgroup for `plan` (see `MatmulPlan.panel_group`): 1 while A (one batch's) stays
    in L2, else the most that divide the panels and leave MIN_PANEL_GROUPS workgroups a batch."""
    if plan.gemv or plan.M * plan.K <= A_IN_L2 or plan.panels_per_workgroup > 1:
        return 1
    # (a divisor of the panels: equal workgroups, which cover the batches' outputs in equal blocks)
    return max(g for g in range(1, plan.panels // MIN_PANEL_GROUPS + 1) if plan.panels % g == 0)


def _swaps_last_two(transpose: Operation, b, args: list) -> bool:
    """`transpose` makes the matmul's B (and nothing else) from a kernel argument by swapping its
    last two axes."""
    perm = list(getattr(transpose.attr("permutation"), "values", ()))
    rank = len(perm)
    return rank >= 2 and perm == [*range(rank - 2), rank - 1, rank - 2] and transpose.results[0] is b and \
        len(b.uses) == 1 and any(transpose.operand("input") is a for a in args)


def plan_kernel(fn: Operation) -> Optional[MatmulPlan | GroupedConvPlan]:
    """The plan of a matmul or convolution kernel's hand-written kernel (the micro-kernel, or the
    direct kernel of a grouped convolution), or None."""
    return plan_matmul(fn) or plan_conv(fn) or plan_grouped_conv(fn)


def kernel_ir(name: str, plan: MatmulPlan | GroupedConvPlan) -> str:
    """The LLVM IR definition of `plan`'s kernel."""
    if isinstance(plan, GroupedConvPlan):
        return grouped_conv_ir(name, plan)
    return gemv_ir(name, plan) if plan.gemv else matmul_ir(name, plan)


def in_place_input(fn: Operation) -> Optional[int]:
    """The input of kernel `fn` whose buffer its result may take (`MatmulPlan.in_place_input`), or None."""
    plan = plan_matmul(fn) or plan_conv(fn)
    return plan.in_place_input if plan else None


def plan_conv(fn: Operation) -> Optional[MatmulPlan]:
    """A dense convolution (conv_patterns.py: one group), as an implicit GEMM over its filter rows."""
    conv = match_conv(fn)
    if conv is None or conv.groups != 1 or conv.padding != ((0, 0), (0, 0)):
        return None
    if conv.x_scale is not None and (conv.filter[:2] != (1, 1) or conv.input[0] != 1):
        return None   # (a scale per input channel is a scale of B's rows only where a tap is one pixel)
    (nb, H, W, IC), (KH, KW, _, OC), (_, OH, OW, _) = conv.input, conv.filter, conv.output
    (sh, sw), (dh, dw) = conv.strides, conv.dilations
    epilogue = _vector_epilogue(trailing_epilogue(fn.regions[0].blocks[0], conv.conv, conv.rest, OC, conv.out_pad))
    if epilogue is False:
        return None
    # A filter row's window is one run of KW x IC floats when its columns are adjacent; with
    # dilated columns every filter pixel is a tap of its own (IC floats).
    per_row = dw == 1 or KW == 1
    # Several output lines are one GEMM (rows of A wrap from one line's input pixels to the next's):
    # a small image's lines fill whole row tiles, and each panel of B is read once for all of them
    # (with one line per GEMM, 7x7x512's 9 MB filter streamed from L3 once per output line).
    rows = merged_lines(OH, OW, KH * KW * IC * OC)
    c_pad = PaddedOutput(OH, OW, OC, rows, conv.out_padding, conv.out_pad_value) if conv.out_pad else None
    plan = MatmulPlan(nb * OH // rows, rows * OW, OC, KW * IC if per_row else IC, conv.x_arg, conv.w_arg,
                      conv.num_inputs, epilogue, taps=KH if per_row else KH * KW, a_row=sw * IC, a_tap=dh * W * IC,
                      b_tap=(KW if per_row else 1) * IC * OC, a_batch=(OH // rows, H * W * IC, rows * sh * W * IC),
                      b_batch=0, kind="conv", tap_columns=1 if per_row else KW, a_column=dw * IC,
                      b_packed=conv.w_packed, a_wrap=OW if rows > 1 and sh * W != sw * OW else 0, a_line=sh * W * IC,
                      c_pad=c_pad, a_scale=conv.x_scale)
    if c_pad:   # (the VM's check: `count` workgroups of `block` elements cover the output, no fewer)
        count, block = plan.workgroups
        if -(-nb * c_pad.image_floats // block) != count:
            return None
    return plan


def merged_lines(OH: int, OW: int, filter_floats: int) -> int:
    """Output lines per GEMM: the fewest (a divisor of OH) that make GEMM_ROWS rows in MIN_GEMMS
    GEMMs or more, else the fewest that make MERGED_ROWS rows; or, when the filter outgrows L2
    (`FILTER_IN_L2` floats), the whole image, so that it is streamed once."""
    if filter_floats > FILTER_IN_L2:
        return OH
    divisors = [g for g in range(1, OH + 1) if OH % g == 0]
    return next((g for g in divisors if g * OW >= GEMM_ROWS and OH // g >= MIN_GEMMS), None) or \
        next((g for g in divisors if g * OW >= MERGED_ROWS), OH)


def matmul_ir(name: str, plan: MatmulPlan) -> str:
    """The micro-kernel's definition, as LLVM IR text (intrinsics it calls: `plan.epilogue.intrinsics`)."""
    M, N, K = plan.M, plan.N, plan.K
    panels, kc, tile_n = plan.panels, min(K, KC), plan.tile_n
    # (several row tiles reuse each panel; read in place, a narrower last panel is read under the masks)
    tiles, W = plan.row_tiles, plan.vec
    # (a constant B packed at compile time is read where it lies: never copied)
    packed = (M > tiles[0] or plan.b_transposed) and not plan.b_packed or plan.a_scale is not None
    grouped = plan.panel_group > 1   # (the panel loop inside each block of k: `panel_group`)
    div, a_outer, a_inner = plan.a_batch or (1, M * K, 0)
    b_batch = plan.b_batch if plan.b_batch is not None else plan.packed_panels * K * TILE_N if plan.b_packed else K * N
    # (C and an input it may be in place of are not `noalias`: the host may pass one buffer as both)
    shared = plan.in_place_input
    params = [f"ptr {'' if i == shared else 'noalias '}readonly %in{i}" for i in range(plan.num_inputs)]
    out = [f"define void @{quote_name(name)}({', '.join(params)}, i64 %lo, i64 %hi, "
           f"ptr {'' if shared is not None else 'noalias '}%C) #100 {{", "entry:"]
    if packed:
        out.append(f"  %pack = alloca float, i64 {kc * tile_n}, align 64")
    # The range, in (batch, panel) pairs (or panel groups), is clamped to [0, count): no caller can make
    # the kernel touch other panels.
    per_batch = plan.groups if grouped else panels
    count, per = plan.batch * per_batch, plan.panels_per_workgroup
    out += [f"  %lo.p = mul i64 %lo, {per}", f"  %hi.p = mul i64 %hi, {per}",
            "  %lo.neg = icmp slt i64 %lo.p, 0", "  %lo.c = select i1 %lo.neg, i64 0, i64 %lo.p",
            f"  %hi.big = icmp sgt i64 %hi.p, {count}", f"  %hi.c = select i1 %hi.big, i64 {count}, i64 %hi.p",
            "  br label %w.head",
            "w.head:", "  %w = phi i64 [ %lo.c, %entry ], [ %w.next, %t.exit ]",
            "  %w.more = icmp slt i64 %w, %hi.c", "  br i1 %w.more, label %w.body, label %exit",
            "w.body:", f"  %bat = udiv i64 %w, {per_batch}"]
    if grouped:   # (the group's panels [pan.lo, pan.hi): the group size divides the panels)
        out += [f"  %grp = urem i64 %w, {per_batch}", f"  %pan.lo = mul i64 %grp, {plan.panel_group}",
                f"  %pan.hi = add i64 %pan.lo, {plan.panel_group}"]
    else:
        out.append(f"  %pan = urem i64 %w, {panels}")
    out += [f"  %bat.o = udiv i64 %bat, {div}", f"  %bat.i = urem i64 %bat, {div}",
            f"  %a.o = mul i64 %bat.o, {a_outer}", f"  %a.i = mul i64 %bat.i, {a_inner}", "  %a.base = add i64 %a.o, %a.i",
            f"  %b.base0 = mul i64 %bat, {b_batch}",
            *(c_batch_base(plan.c_pad) if plan.c_pad else [f"  %c.base0 = mul i64 %bat, {M * N}"])]
    masks = [f"%cm{j}" for j in range(tile_n // W)] if plan.edge else [None] * (tile_n // W)
    # Where panel %pan starts in B and C, its lanes and its columns of the epilogue's row vectors:
    # once per workgroup, or once per panel and block of k in a group.
    panel = [f"  %n = mul i64 %pan, {tile_n}",
             f"  %b.col = mul i64 %n, {K * plan.taps if plan.b_transposed or plan.b_packed else 1}",
             "  %b.base1 = add i64 %b.base0, %b.col", "  %c.base = add i64 %c.base0, %n"]
    if plan.c_pad and plan.epilogue and plan.epilogue.tile_inputs:
        panel += residual_offsets(M, N)
    if plan.edge:   # (the panel's lanes inside the row; all of them but in the last panel)
        for j, mask in enumerate(masks):
            panel += [f"  %n.{j} = add i64 %n, {W * j}"] + V.lane_mask(mask, f"%n.{j}", N, W)
    if plan.epilogue:
        panel += plan.epilogue.column_loads("%n", masks)
    if not grouped:
        out += panel
    outer_taps = 1 if plan.inner_taps else plan.taps   # (the tile's own loop sums them otherwise)
    if plan.c_pad:   # (the border around the workgroup's block first)
        out += ["  br label %bf.head"] + border_fill(plan.c_pad, plan.a_batch[0], masks, W, "bf.done") + ["bf.done:"]
    b_base = ["  %b.base = add i64 %b.base1, %b.tap"]
    out += ["  br label %t.head",
            # Taps (a matmul has one), then blocks of k in each: sums carry through C between them.
            "t.head:", f"  %t = phi i64 [ 0, %{'bf.done' if plan.c_pad else 'w.body'} ], [ %t.next, %k0.exit ]",
            f"  %t.more = icmp slt i64 %t, {outer_taps}", "  br i1 %t.more, label %t.body, label %t.exit",
            "t.body:", f"  %t.row = udiv i64 %t, {plan.tap_columns}", f"  %t.col = urem i64 %t, {plan.tap_columns}",
            f"  %a.trow = mul i64 %t.row, {plan.a_tap}", f"  %a.tcol = mul i64 %t.col, {plan.a_column}",
            "  %a.tap = add i64 %a.trow, %a.tcol", "  %a.tbase = add i64 %a.base, %a.tap",
            f"  %b.tap = mul i64 %t, {K * TILE_N if plan.b_packed else plan.b_tap}",
            *([] if grouped else b_base),
            "  %t.first = icmp eq i64 %t, 0", f"  %t.last = icmp eq i64 %t, {outer_taps - 1}", "  br label %k0.head",
            "k0.head:", "  %k0 = phi i64 [ 0, %t.body ], [ %k0.next, %k0.step ]",
            f"  %k0.more = icmp slt i64 %k0, {K}", "  br i1 %k0.more, label %k0.body, label %k0.exit",
            "k0.body:", f"  %left = sub i64 {K}, %k0", f"  %short = icmp slt i64 %left, {kc}",
            f"  %kc = select i1 %short, i64 %left, i64 {kc}", "  %k.first = icmp eq i64 %k0, 0",
            "  %first = and i1 %t.first, %k.first", "  %k.last = icmp eq i64 %kc, %left",
            "  %last = and i1 %t.last, %k.last"]
    entry = "k0.body"
    if grouped:
        out += ["  br label %g.head", "g.head:", "  %pan = phi i64 [ %pan.lo, %k0.body ], [ %pan.next, %m.done ]",
                "  %g.more = icmp slt i64 %pan, %pan.hi", "  br i1 %g.more, label %g.body, label %k0.step",
                "g.body:", *panel, *b_base]
        entry = "g.body"
    if packed:
        out += ["  br label %pk"] + (_pack_transposed(f"%in{plan.b_arg}", K, f"m{tiles[0]}.head", entry)
                                     if plan.b_transposed else
                                     _pack_panel(f"%in{plan.b_arg}", TILE_N if plan.b_packed else N,
                                                 f"m{tiles[0]}.head", masks, W,
                                                 None if plan.a_scale is None else f"%in{plan.a_scale}", entry))
        entry, stride = "pk", tile_n
    else:   # B in place (packed or not): the block starts at row k0 of the panel
        stride = TILE_N if plan.b_packed else N
        out += [f"  %bk = mul i64 %k0, {stride}", "  %bk.base = add i64 %b.base, %bk",
                f"  %panel = getelementptr inbounds float, ptr %in{plan.b_arg}, i64 %bk.base",
                f"  br label %m{tiles[0]}.head"]
    for index, rows in enumerate(tiles):   # a big row tile while it fits, then smaller ones
        after = f"m{tiles[index + 1]}.pre" if index + 1 < len(tiles) else "m.done"
        start = f"[ 0, %{entry} ]" if index == 0 else f"[ %m{tiles[index - 1]}, %m{rows}.pre ]"
        out += _row_tiles(rows, index == 0, start, after, plan, stride, packed, masks)
    out += ["m.done:", *(["  %pan.next = add i64 %pan, 1", "  br label %g.head"] if grouped else ["  br label %k0.step"]),
            "k0.step:", f"  %k0.next = add i64 %k0, {kc}", "  br label %k0.head",
            "k0.exit:", "  %t.next = add i64 %t, 1", "  br label %t.head",
            "t.exit:", "  %w.next = add i64 %w, 1", "  br label %w.head", "exit:", "  ret void", "}",
            'attributes #100 = { nounwind "frame-pointer"="none" }']
    return "\n".join(out) + "\n"


def _pack_panel(B: str, N: int, done: str, masks: list, W: int = 8, scale: Optional[str] = None,
                entry: str = "k0.body") -> list[str]:
    """Copy rows k0 .. k0+kc of the tile's columns (a vector per mask, N apart in B) next to each
    other (under `masks`: zeros past the row's end); with `scale`, row k times scale[k]. `entry`:
    the block the copy is entered from."""
    lines = ["pk:", f"  %pk.i = phi i64 [ 0, %{entry} ], [ %pk.next, %pk ]", "  %pk.k = add i64 %k0, %pk.i",
             f"  %pk.row = mul i64 %pk.k, {N}", "  %pk.src = add i64 %b.base, %pk.row",
             f"  %pk.s0 = getelementptr inbounds float, ptr {B}, i64 %pk.src",
             f"  %pk.dst = mul i64 %pk.i, {W * len(masks)}", "  %pk.d0 = getelementptr inbounds float, ptr %pack, i64 %pk.dst"]
    if scale:
        lines += [f"  %pk.sp = getelementptr inbounds float, ptr {scale}, i64 %pk.k", "  %pk.sc = load float, ptr %pk.sp, align 4",
                  f"  %pk.si = insertelement <{W} x float> poison, float %pk.sc, i64 0",
                  f"  %pk.sv = shufflevector <{W} x float> %pk.si, <{W} x float> poison, <{W} x i32> zeroinitializer"]
    for j in range(len(masks)):   # (vectors of the micro-kernel's width, as its masks are)
        if j:
            lines += [f"  %pk.s{j} = getelementptr inbounds float, ptr %pk.s0, i64 {W * j}",
                      f"  %pk.d{j} = getelementptr inbounds float, ptr %pk.d0, i64 {W * j}"]
        lines.append(V.load(f"%pk.v{j}", f"%pk.s{j}", masks[j], W))
        if scale:
            lines.append(f"  %pk.w{j} = fmul <{W} x float> %pk.v{j}, %pk.sv")
        lines.append(f"  store <{W} x float> %pk.{'w' if scale else 'v'}{j}, ptr %pk.d{j}, align 32")
    return lines + ["  %pk.next = add i64 %pk.i, 1", "  %pk.more = icmp slt i64 %pk.next, %kc",
                    f"  br i1 %pk.more, label %pk, label %{done}"]


def _pack_transposed(Bt: str, K: int, done: str, entry: str = "k0.body") -> list[str]:
    """Copy rows k0 .. k0+kc of the panel of B out of B^T (the panel's 16 columns are rows of B^T,
    K floats apart): 8 x 8 blocks, each loaded as 8 rows of B^T, transposed in registers (three
    rounds of shuffles) and stored as 8 rows of the packed panel. kc is a multiple of 8. `entry`:
    the block the copy is entered from."""
    lines = ["pk:", f"  %pk.i = phi i64 [ 0, %{entry} ], [ %pk.next, %pk ]", "  %pk.k = add i64 %k0, %pk.i",
             "  %pk.src = add i64 %b.base, %pk.k", f"  %pk.s = getelementptr inbounds float, ptr {Bt}, i64 %pk.src",
             f"  %pk.dst = mul i64 %pk.i, {TILE_N}", "  %pk.d = getelementptr inbounds float, ptr %pack, i64 %pk.dst"]
    rounds = [  # (pairs of inputs, the two masks): unpack low/high, then pairs of pairs, then halves
        ([(0, 1), (2, 3), (4, 5), (6, 7)], ([0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15])),
        ([(0, 2), (1, 3), (4, 6), (5, 7)], ([0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15])),
        ([(0, 4), (1, 5), (2, 6), (3, 7)], ([0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]))]
    for half in range(TILE_N // 8):
        p = f"%pk.h{half}"
        row = [f"{p}.r{r}" for r in range(8)]
        for r in range(8):
            lines += [f"  {p}.a{r} = getelementptr inbounds float, ptr %pk.s, i64 {(8 * half + r) * K}",
                      f"  {row[r]} = load <8 x float>, ptr {p}.a{r}, align 4"]
        for step, (pairs, masks) in enumerate(rounds):
            new = [""] * 8
            for x, y in pairs:
                for which, mask in enumerate(masks):
                    name = f"{p}.t{step}.{x}{y}{which}"
                    vec = ", ".join(f"i32 {m}" for m in mask)
                    lines.append(f"  {name} = shufflevector <8 x float> {row[x]}, <8 x float> {row[y]}, <8 x i32> <{vec}>")
                    new[(x, y)[which]] = name
            row = new
        # Now row[c] holds column c' of the block ([B^T[r, c'] for r in 0..7]), where the second
        # round has swapped columns 1 and 2, 5 and 6.
        row = [row[c] for c in (0, 2, 1, 3, 4, 6, 5, 7)]
        for c in range(8):
            lines += [f"  {p}.d{c} = getelementptr inbounds float, ptr %pk.d, i64 {c * TILE_N + 8 * half}",
                      f"  store <8 x float> {row[c]}, ptr {p}.d{c}, align 32"]
    return lines + ["  %pk.next = add i64 %pk.i, 8", "  %pk.more = icmp slt i64 %pk.next, %kc",
                    f"  br i1 %pk.more, label %pk, label %{done}"]


def _row_tiles(R: int, first_tile: bool, start: str, done: str, plan: MatmulPlan, stride: int,
               packed: bool, masks: list) -> list[str]:
    """Row tiles of R rows over the panel (`stride` floats between its rows): R x 16 floats
    accumulate in registers over the block of k (from zero in the first block, from C after),
    and the last block's sums go through the epilogue; C is read and written under `masks`."""
    W = plan.vec
    p, J, N, K, vec = f"m{R}", plan.tile_n // W, plan.N, plan.K, f"<{W} x float>"
    panel, align = ("%pack", 32) if packed else ("%panel", 4)
    whole = packed or plan.b_packed   # (packed panels hold zeros past N: read without masks)
    L = [] if first_tile else [f"{p}.pre:", f"  br label %{p}.head"]
    L += [f"{p}.head:", f"  %{p} = phi i64 {start}, [ %{p}.next, %{p}.stored ]",
          f"  %{p}.end = add i64 %{p}, {R}", f"  %{p}.fits = icmp sle i64 %{p}.end, {plan.M}",
          f"  br i1 %{p}.fits, label %{p}.init, label %{done}", f"{p}.init:"]
    # (a tile input, a residual, is read where C's tile is; with C padded, at the unpadded place)
    residual = "eb" if plan.c_pad and plan.epilogue and plan.epilogue.tile_inputs else "cb"
    for i in range(R):
        L += [f"  %{p}.row{i} = add i64 %{p}, {i}",
              *(c_row_offset(f"%{p}", i, plan.c_pad) if plan.c_pad else [f"  %{p}.cr{i} = mul i64 %{p}.row{i}, {N}"]),
              f"  %{p}.cb{i} = add i64 %c.base, %{p}.cr{i}",
              *([f"  %{p}.er{i} = mul i64 %{p}.row{i}, {N}", f"  %{p}.eb{i} = add i64 %e.base, %{p}.er{i}"]
                if residual == "eb" else []),
              *_a_row_offset(f"%{p}", i, plan), f"  %{p}.ab{i} = add i64 %a.tbase, %{p}.ar{i}",
              f"  %{p}.ak{i} = add i64 %{p}.ab{i}, %k0",
              f"  %{p}.ap{i} = getelementptr inbounds float, ptr %in{plan.a_arg}, i64 %{p}.ak{i}",
              f"  %{p}.cp{i} = getelementptr inbounds float, ptr %C, i64 %{p}.cb{i}"]
        for j in range(J):
            L += [f"  %{p}.cq{i}{j} = getelementptr inbounds float, ptr %{p}.cp{i}, i64 {W * j}",
                  V.load(f"%{p}.old{i}{j}", f"%{p}.cq{i}{j}", masks[j], W),
                  f"  %{p}.init{i}{j} = select i1 %first, {vec} zeroinitializer, {vec} %{p}.old{i}{j}"]
    k_entry, tap_a, tap_b = f"{p}.init", "", ""
    if plan.inner_taps:   # (tap t: A `a_tap` floats on, B's packed panel K x 16 floats on)
        L += [f"  br label %{p}.tap", f"{p}.tap:", f"  %{p}.t = phi i64 [ 0, %{p}.init ], [ %{p}.t.next, %{p}.tl ]"]
        L += [f"  %{p}.tacc{i}{j} = phi {vec} [ %{p}.init{i}{j}, %{p}.init ], [ %{p}.new{i}{j}, %{p}.tl ]"
              for i in range(R) for j in range(J)]
        L += [f"  %{p}.ta = mul i64 %{p}.t, {plan.a_tap}", f"  %{p}.tb = mul i64 %{p}.t, {K * TILE_N}"]
        k_entry, tap_a, tap_b = f"{p}.tap", f"%{p}.ta", f"%{p}.tb"
    L += [f"  br label %{p}.k", f"{p}.k:", f"  %{p}.kk = phi i64 [ 0, %{k_entry} ], [ %{p}.kk.next, %{p}.k ]"]
    for i in range(R):
        for j in range(J):
            start = f"%{p}.tacc{i}{j}" if plan.inner_taps else f"%{p}.init{i}{j}"
            L.append(f"  %{p}.acc{i}{j} = phi {vec} [ {start}, %{k_entry} ], [ %{p}.new{i}{j}, %{p}.k ]")
    L += [f"  %{p}.bo = mul i64 %{p}.kk, {stride}"]
    if plan.inner_taps:
        L += [f"  %{p}.bot = add i64 %{p}.bo, {tap_b}", f"  %{p}.ka = add i64 %{p}.kk, {tap_a}"]
    L += [f"  %{p}.bp0 = getelementptr inbounds float, ptr {panel}, i64 %{p}.bo{'t' if plan.inner_taps else ''}"]
    for j in range(J):
        if j:   # (a tile's second panel of B packed at compile time is the next panel: K x taps rows on)
            column = W * j if not plan.b_packed else W * j % TILE_N + W * j // TILE_N * TILE_N * K * plan.taps
            L.append(f"  %{p}.bp{j} = getelementptr inbounds float, ptr %{p}.bp0, i64 {column}")
        L.append(f"  %{p}.bv{j} = load {vec}, ptr %{p}.bp{j}, align {align}" if whole else
                 V.load(f"%{p}.bv{j}", f"%{p}.bp{j}", masks[j], W))
    for i in range(R):
        L += [f"  %{p}.aq{i} = getelementptr inbounds float, ptr %{p}.ap{i}, i64 %{p}.{'ka' if plan.inner_taps else 'kk'}",
              f"  %{p}.as{i} = load float, ptr %{p}.aq{i}, align 4",
              f"  %{p}.ins{i} = insertelement {vec} poison, float %{p}.as{i}, i64 0",
              f"  %{p}.av{i} = shufflevector {vec} %{p}.ins{i}, {vec} poison, <{W} x i32> zeroinitializer"]
        for j in range(J):
            L += [f"  %{p}.mul{i}{j} = fmul contract {vec} %{p}.av{i}, %{p}.bv{j}",
                  f"  %{p}.new{i}{j} = fadd contract {vec} %{p}.acc{i}{j}, %{p}.mul{i}{j}"]
    L += [f"  %{p}.kk.next = add i64 %{p}.kk, 1", f"  %{p}.kmore = icmp slt i64 %{p}.kk.next, %kc",
          f"  br i1 %{p}.kmore, label %{p}.k, label %{p}.{'tl' if plan.inner_taps else 'store'}"]
    if plan.inner_taps:
        L += [f"{p}.tl:", f"  %{p}.t.next = add i64 %{p}.t, 1", f"  %{p}.tmore = icmp slt i64 %{p}.t.next, {plan.taps}",
              f"  br i1 %{p}.tmore, label %{p}.tap, label %{p}.store"]
    L += [f"{p}.store:"]
    if plan.epilogue:   # (sums of an earlier block or tap are stored as they are: the epilogue runs once, on the last)
        L += [f"  br i1 %last, label %{p}.epi, label %{p}.raw", f"{p}.raw:"]
        L += [V.store(f"%{p}.new{i}{j}", f"%{p}.cq{i}{j}", masks[j], W) for i in range(R) for j in range(J)]
        L += [f"  br label %{p}.stored", f"{p}.epi:"]
    for i in range(R):
        for j in range(J):
            value = f"%{p}.new{i}{j}"
            if plan.epilogue:
                tiles = {}
                for arg in plan.epilogue.tile_inputs:   # (the same place as C's tile)
                    tiles[arg] = f"%{p}.r{arg}.{i}{j}"
                    L += [f"  %{p}.rp{arg}.{i}{j} = getelementptr inbounds float, ptr %in{arg}, i64 %{p}.{residual}{i}",
                          f"  %{p}.rq{arg}.{i}{j} = getelementptr inbounds float, ptr %{p}.rp{arg}.{i}{j}, i64 {W * j}",
                          V.load(tiles[arg], f"%{p}.rq{arg}.{i}{j}", masks[j], W)]
                lines, value = plan.epilogue.apply(f"{p}.e{i}{j}", value, j, tiles)
                L += lines
            L.append(V.store(value, f"%{p}.cq{i}{j}", masks[j], W))
    L += [f"  br label %{p}.stored", f"{p}.stored:", f"  %{p}.next = add i64 %{p}, {R}", f"  br label %{p}.head"]
    return L


def _a_row_offset(p: str, i: int, plan: MatmulPlan) -> list[str]:
    """`{p}.ar{i}`: where row `{p}.row{i}` of A starts, past the tap's base (rows wrap from one image
    line to the next every `a_wrap` rows; computed once per row tile and block of k)."""
    if not plan.a_wrap:
        return [f"  {p}.ar{i} = mul i64 {p}.row{i}, {plan.a_row or plan.K}"]
    return [f"  {p}.line{i} = udiv i64 {p}.row{i}, {plan.a_wrap}", f"  {p}.col{i} = urem i64 {p}.row{i}, {plan.a_wrap}",
            f"  {p}.al{i} = mul i64 {p}.line{i}, {plan.a_line}", f"  {p}.ac{i} = mul i64 {p}.col{i}, {plan.a_row}",
            f"  {p}.ar{i} = add i64 {p}.al{i}, {p}.ac{i}"]
