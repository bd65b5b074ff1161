"""The GEMV kernel: a matmul with one row of A (M == 1: a classifier's 1 x 1024 @ 1024 x 1000, a
language model's last token), as LLVM IR behind the micro-kernel's interface (ukernels.py).

The micro-kernel's 1-row tile is a poor fit there: one 16-column accumulator, so each multiply-add
waits for the one before it, and B, read in 16-column panels N floats apart, streams 64 bytes a
row. Here a workgroup takes a group of up to `GROUP` panels (128 columns: eight 16-float
accumulators with AVX-512, sixteen 8-float ones without) and runs down k once: A's element
broadcast, each panel's 16 floats multiplied in, every accumulator independent of the others. B
is read where it lies: packed at compile time (its panels contiguous, zeros past N: packed_weights.py)
or a row of B (the group's columns are adjacent). Each element still sums its products in k order
from zero, as the micro-kernel and the reference do.

Workgroups: one per (batch, group); with several batches and a row that is not whole groups, one per
batch (workgroups write equal blocks). A last group with fewer panels has its own loop; the last
panel's columns past N are neither read (unless packed: zeros) nor written (lane masks).
"""
from __future__ import annotations

from ..targets.ir_types import quote_name
from . import vector_ir as V
from .packed_weights import PANEL

#: Panels of 16 columns a workgroup accumulates at once.
GROUP = 8


def group_panels(plan) -> int:
    return min(GROUP, plan.panels)


def groups_per_batch(plan) -> int:
    return -(-plan.panels // group_panels(plan))


def groups_per_workgroup(plan) -> int:
    """1, or every group of a batch where there are several batches and a row is not whole groups."""
    whole = plan.N % (group_panels(plan) * PANEL) == 0
    return 1 if plan.batch == 1 or whole else groups_per_batch(plan)


def gemv_workgroups(plan) -> tuple[int, int]:
    """(count, output elements each writes, the last one's fewer)."""
    if groups_per_workgroup(plan) > 1:
        return plan.batch, plan.N
    return plan.batch * groups_per_batch(plan), min(group_panels(plan) * PANEL, plan.N)


def gemv_ir(name: str, plan) -> str:
    """The GEMV kernel of `plan` (a MatmulPlan with M == 1, B not transposed), as LLVM IR text."""
    N, K, W = plan.N, plan.K, plan.vec
    group, groups, per = group_panels(plan), groups_per_batch(plan), groups_per_workgroup(plan)
    tail = plan.panels % group
    b_batch = plan.panels * K * PANEL if plan.b_packed else K * N
    params = [f"ptr noalias readonly %in{i}" for i in range(plan.num_inputs)]
    count = plan.batch * groups
    out = [f"define void @{quote_name(name)}({', '.join(params)}, i64 %lo, i64 %hi, ptr noalias %C) #100 {{", "entry:",
           # The range, in (batch, group) pairs, is clamped to [0, count).
           f"  %lo.p = mul i64 %lo, {per}", f"  %hi.p = mul i64 %hi, {per}",
           "  %lo.neg = icmp slt i64 %lo.p, 0", "  %lo.c = select i1 %lo.neg, i64 0, i64 %lo.p",
           f"  %hi.big = icmp sgt i64 %hi.p, {count}", f"  %hi.c = select i1 %hi.big, i64 {count}, i64 %hi.p",
           "  br label %w.head",
           "w.head:", "  %w = phi i64 [ %lo.c, %entry ], [ %w.next, %w.latch ]",
           "  %w.more = icmp slt i64 %w, %hi.c", "  br i1 %w.more, label %w.body, label %exit",
           "w.body:", f"  %bat = udiv i64 %w, {groups}", f"  %grp = urem i64 %w, {groups}",
           f"  %n0 = mul i64 %grp, {group * PANEL}", f"  %a.base = mul i64 %bat, {K}",
           f"  %b.bat = mul i64 %bat, {b_batch}", f"  %b.grp = mul i64 %n0, {K if plan.b_packed else 1}",
           "  %b.base = add i64 %b.bat, %b.grp", f"  %c.bat = mul i64 %bat, {N}", "  %c.base = add i64 %c.bat, %n0"]
    if tail:
        out += [f"  %is.tail = icmp eq i64 %grp, {groups - 1}", "  br i1 %is.tail, label %t.pre, label %f.pre"]
    else:
        out += ["  br label %f.pre"]
    out += _group("f", group, plan, holds_last=plan.edge and not tail)
    if tail:
        out += _group("t", tail, plan, holds_last=plan.edge)
    out += ["w.latch:", "  %w.next = add i64 %w, 1", "  br label %w.head", "exit:", "  ret void", "}",
            'attributes #100 = { nounwind "frame-pointer"="none" }']
    return "\n".join(out) + "\n"


def _group(p: str, R: int, plan, holds_last: bool) -> list[str]:
    """The loop of a group of R panels (block labels `p`.*): R x 16 columns accumulate in registers
    over all of k, then go through the epilogue into C. `holds_last`: the group's last panel may be
    the row's last, narrower one (its vectors under lane masks)."""
    N, K, W = plan.N, plan.K, plan.vec
    J, vec = PANEL // W, f"<{W} x float>"
    L = [f"{p}.pre:"]
    masks = {}
    for g in range(R):
        for j in range(J):
            L.append(f"  %{p}.n{g}{j} = add i64 %n0, {g * PANEL + W * j}")   # (the vector's first column)
            if holds_last and g == R - 1:
                masks[g, j] = f"%{p}.m{j}"
                L += V.lane_mask(masks[g, j], f"%{p}.n{g}{j}", N, W)
    L += [f"  br label %{p}.k", f"{p}.k:", f"  %{p}.kk = phi i64 [ 0, %{p}.pre ], [ %{p}.kk.next, %{p}.k ]"]
    for g in range(R):
        for j in range(J):
            L.append(f"  %{p}.acc{g}{j} = phi {vec} [ zeroinitializer, %{p}.pre ], [ %{p}.new{g}{j}, %{p}.k ]")
    L += [f"  %{p}.ai = add i64 %a.base, %{p}.kk",
          f"  %{p}.ap = getelementptr inbounds float, ptr %in{plan.a_arg}, i64 %{p}.ai",
          f"  %{p}.as = load float, ptr %{p}.ap, align 4",
          f"  %{p}.ins = insertelement {vec} poison, float %{p}.as, i64 0",
          f"  %{p}.av = shufflevector {vec} %{p}.ins, {vec} poison, <{W} x i32> zeroinitializer"]
    # Row kk of the group: packed, panel g's row is 16 floats at g * K * 16 + kk * 16; in place, the
    # group's columns are adjacent in row kk of B.
    row = f"%{p}.kk16" if plan.b_packed else f"%{p}.kkN"
    L += [f"  {row} = mul i64 %{p}.kk, {PANEL if plan.b_packed else N}", f"  %{p}.bi = add i64 %b.base, {row}",
          f"  %{p}.brow = getelementptr inbounds float, ptr %in{plan.b_arg}, i64 %{p}.bi"]
    for g in range(R):
        for j in range(J):
            offset = g * K * PANEL + W * j if plan.b_packed else g * PANEL + W * j
            L += [f"  %{p}.bp{g}{j} = getelementptr inbounds float, ptr %{p}.brow, i64 {offset}",
                  V.load(f"%{p}.bv{g}{j}", f"%{p}.bp{g}{j}", None if plan.b_packed else masks.get((g, j)), W),
                  f"  %{p}.mul{g}{j} = fmul contract {vec} %{p}.av, %{p}.bv{g}{j}",
                  f"  %{p}.new{g}{j} = fadd contract {vec} %{p}.acc{g}{j}, %{p}.mul{g}{j}"]
    L += [f"  %{p}.kk.next = add i64 %{p}.kk, 1", f"  %{p}.kmore = icmp slt i64 %{p}.kk.next, {K}",
          f"  br i1 %{p}.kmore, label %{p}.k, label %{p}.store", f"{p}.store:",
          f"  %{p}.cp = getelementptr inbounds float, ptr %C, i64 %c.base"]
    for g in range(R):
        for j in range(J):
            mask, value, at = masks.get((g, j)), f"%{p}.new{g}{j}", g * PANEL + W * j
            if plan.epilogue:
                inputs = {}
                for arg in plan.epilogue.column_inputs:   # (a bias: by column of the row)
                    inputs[arg] = f"%{p}.col{arg}.{g}{j}"
                    L += [f"  %{p}.colp{arg}.{g}{j} = getelementptr inbounds float, ptr %in{arg}, i64 %{p}.n{g}{j}",
                          V.load(inputs[arg], f"%{p}.colp{arg}.{g}{j}", mask, W)]
                for arg in plan.epilogue.tile_inputs:     # (a residual: at C's place)
                    inputs[arg] = f"%{p}.tile{arg}.{g}{j}"
                    L += [f"  %{p}.tb{arg}.{g}{j} = getelementptr inbounds float, ptr %in{arg}, i64 %c.base",
                          f"  %{p}.tp{arg}.{g}{j} = getelementptr inbounds float, ptr %{p}.tb{arg}.{g}{j}, i64 {at}",
                          V.load(inputs[arg], f"%{p}.tp{arg}.{g}{j}", mask, W)]
                lines, value = plan.epilogue.apply(f"{p}.e{g}{j}", value, j, inputs)
                L += lines
            L += [f"  %{p}.cq{g}{j} = getelementptr inbounds float, ptr %{p}.cp, i64 {at}",
                  V.store(value, f"%{p}.cq{g}{j}", mask, W)]
    return L + ["  br label %w.latch"]
