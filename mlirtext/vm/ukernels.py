"""Matmul micro-kernel: register-tiled LLVM IR for `fill(0) + (batch_)matmul` dispatches on f32.

The generated loops of a matmul (after `linalg-interchange-for-vectors`) vectorise along `n`
but load and store the output row at every step of `k`. As IREE does with its matmul
micro-kernels, such a dispatch is given a hand-shaped kernel behind the same interface instead:
a 6x16 tile of C (twelve 8-float registers) accumulates over all of `k` in registers, with A
broadcast one element at a time and B loaded 16 floats at a time; one 16-column panel of B
serves every row block in turn, so it stays in cache. Rows left over (a workgroup's range that
is not a multiple of 6) use 4x16 and 1x16 tiles. Each element still sums its products in `k`
order starting from zero (multiply-adds may fuse: `contract`).

Eligible: the kernel is exactly a zero `linalg.fill` and a `linalg.matmul` / `linalg.batch_matmul`
with the standard maps, f32 throughout, both inputs function arguments, N a multiple of 16, K >= 1.
The kernel keeps its ABI (inputs, the workgroup range when it has one, the output).
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.core import Operation

TILE_N = 16
#: Row tiles, largest first: 6 rows x 16 columns is twelve 8-float accumulators (of 16 AVX registers).
ROW_TILES = (6, 4, 1)
DESCRIPTION = "micro-kernel: matmul f32, 6x16 register tiles"


def matmul_shape(fn: Operation):
    """(batch, M, N, K) when kernel `fn` (linalg on tensors) can use the micro-kernel, else None."""
    from ..dialects.linalg import segments
    from ..transforms.conversions.linalg_to_loops import structured
    body = fn.regions[0].blocks[0]
    ops = [op for op in body.ops if op.name not in ("tensor.empty", "arith.constant", "func.return")]
    if len(ops) != 2 or ops[0].name != "linalg.fill" or ops[1].name not in ("linalg.matmul", "linalg.batch_matmul"):
        return None
    fill, mm = ops
    value = getattr(fill.operands[0], "op", None)
    if value is None or value.name != "arith.constant" or getattr(value.attributes.get("value"), "value", None) != 0.0:
        return None
    ins, outs = segments(mm)
    if outs[0] is not fill.results[0] or body.ops[-1].operands[0] is not mm.results[0] or len(body.ops[-1].operands) != 1:
        return None
    args = set(id(a) for a in body.arguments)
    if not all(id(v) in args for v in ins):
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
    K = ins[0].type.shape[-1]
    if N % TILE_N or K < 1 or M < 1:
        return None
    return batch, M, N, K


def is_batched(fn: Operation) -> bool:
    return any(op.name == "linalg.batch_matmul" for op in fn.walk())


def split_of(batched: bool, workgroups: dict | None) -> str | None:
    """What a workgroup range of a (batch_)matmul kernel runs over: "batch" or "m" ("n": not supported)."""
    if not workgroups:
        return None
    axis = workgroups["axis"] - (1 if batched else 0)
    return "batch" if axis < 0 else "m" if axis == 0 else "n"


def matmul_ir(name: str, batch: int, M: int, N: int, K: int, split: str | None) -> str:
    """The micro-kernel's definition, as LLVM IR text; `split`: the axis of its workgroup range."""
    params = ["ptr noalias readonly %A", "ptr noalias readonly %B"]
    if split:
        params += ["i64 %lo", "i64 %hi"]
    params.append("ptr noalias %C")
    blo, bhi = ("%lo", "%hi") if split == "batch" else ("0", str(batch))
    mlo, mhi = ("%lo", "%hi") if split == "m" else ("0", str(M))
    out = [f"define void @{name}({', '.join(params)}) #100 {{", "entry:", "  br label %b.head", "b.head:",
           f"  %b = phi i64 [ {blo}, %entry ], [ %b.next, %n.exit ]",
           f"  %b.more = icmp slt i64 %b, {bhi}", "  br i1 %b.more, label %b.body, label %exit", "b.body:",
           f"  %a.base = mul i64 %b, {M * K}", f"  %bb.base = mul i64 %b, {K * N}", f"  %c.base = mul i64 %b, {M * N}",
           "  br label %n.head",
           # Columns outside rows: one 16-column panel of B (K x 64 bytes) serves every row block.
           "n.head:", "  %n = phi i64 [ 0, %b.body ], [ %n.next, %m.done ]", f"  br label %m{ROW_TILES[0]}.head"]
    start, prev = f"[ {mlo}, %n.head ]", None
    for rows in ROW_TILES:   # a big row tile while it fits, then smaller ones for what is left
        p = f"m{rows}"
        if prev is not None:
            out += [f"{p}.pre:", f"  br label %{p}.head"]
            start = f"[ %{prev}, %{p}.pre ]"
        nxt = f"m{ROW_TILES[ROW_TILES.index(rows) + 1]}.pre" if rows != ROW_TILES[-1] else "m.done"
        out += _rows(rows, p, start, mhi, nxt, K, N)
        prev = p
    out += ["m.done:", f"  %n.next = add i64 %n, {TILE_N}", f"  %n.more = icmp slt i64 %n.next, {N}",
            "  br i1 %n.more, label %n.head, label %n.exit",
            "n.exit:", "  %b.next = add i64 %b, 1", "  br label %b.head", "exit:", "  ret void", "}",
            'attributes #100 = { nounwind "frame-pointer"="none" }']
    return "\n".join(out) + "\n"


def _rows(R: int, p: str, start: str, mhi: str, done: str, K: int, N: int) -> list[str]:
    """A loop over row blocks of R rows of the panel at column %n: R x 16 accumulated in registers."""
    J = TILE_N // 8
    L = [f"{p}.head:", f"  %{p} = phi i64 {start}, [ %{p}.next, %{p}.store ]",
         f"  %{p}.end = add i64 %{p}, {R}", f"  %{p}.fits = icmp sle i64 %{p}.end, {mhi}",
         f"  br i1 %{p}.fits, label %{p}.kpre, label %{done}",
         f"{p}.kpre:", f"  br label %{p}.k"]
    L.append(f"{p}.k:")
    L.append(f"  %{p}.kk = phi i64 [ 0, %{p}.kpre ], [ %{p}.kk.next, %{p}.k ]")
    for i in range(R):
        for j in range(J):
            L.append(f"  %{p}.acc{i}{j} = phi <8 x float> [ zeroinitializer, %{p}.kpre ], [ %{p}.new{i}{j}, %{p}.k ]")
    L.append(f"  %{p}.brow = mul i64 %{p}.kk, {N}")
    L.append(f"  %{p}.b0 = add i64 %bb.base, %{p}.brow")
    L.append(f"  %{p}.b1 = add i64 %{p}.b0, %n")
    for j in range(J):
        L.append(f"  %{p}.bi{j} = add i64 %{p}.b1, {8 * j}")
        L.append(f"  %{p}.bp{j} = getelementptr inbounds float, ptr %B, i64 %{p}.bi{j}")
        L.append(f"  %{p}.bv{j} = load <8 x float>, ptr %{p}.bp{j}, align 4")
    for i in range(R):
        L.append(f"  %{p}.row{i} = add i64 %{p}, {i}")
        L.append(f"  %{p}.ar{i} = mul i64 %{p}.row{i}, {K}")
        L.append(f"  %{p}.ab{i} = add i64 %a.base, %{p}.ar{i}")
        L.append(f"  %{p}.ai{i} = add i64 %{p}.ab{i}, %{p}.kk")
        L.append(f"  %{p}.ap{i} = getelementptr inbounds float, ptr %A, i64 %{p}.ai{i}")
        L.append(f"  %{p}.as{i} = load float, ptr %{p}.ap{i}, align 4")
        L.append(f"  %{p}.ins{i} = insertelement <8 x float> poison, float %{p}.as{i}, i64 0")
        L.append(f"  %{p}.av{i} = shufflevector <8 x float> %{p}.ins{i}, <8 x float> poison, <8 x i32> zeroinitializer")
        for j in range(J):
            L.append(f"  %{p}.mul{i}{j} = fmul contract <8 x float> %{p}.av{i}, %{p}.bv{j}")
            L.append(f"  %{p}.new{i}{j} = fadd contract <8 x float> %{p}.acc{i}{j}, %{p}.mul{i}{j}")
    L += [f"  %{p}.kk.next = add i64 %{p}.kk, 1", f"  %{p}.kmore = icmp slt i64 %{p}.kk.next, {K}",
          f"  br i1 %{p}.kmore, label %{p}.k, label %{p}.store", f"{p}.store:"]
    for i in range(R):
        L.append(f"  %{p}.crow{i} = add i64 %{p}, {i}")
        L.append(f"  %{p}.cr{i} = mul i64 %{p}.crow{i}, {N}")
        L.append(f"  %{p}.cb{i} = add i64 %c.base, %{p}.cr{i}")
        L.append(f"  %{p}.cn{i} = add i64 %{p}.cb{i}, %n")
        for j in range(J):
            L.append(f"  %{p}.ci{i}{j} = add i64 %{p}.cn{i}, {8 * j}")
            L.append(f"  %{p}.cp{i}{j} = getelementptr inbounds float, ptr %C, i64 %{p}.ci{i}{j}")
            L.append(f"  store <8 x float> %{p}.new{i}{j}, ptr %{p}.cp{i}{j}, align 4")
    L += [f"  %{p}.next = add i64 %{p}, {R}", f"  br label %{p}.head"]
    return L
