"""LLVM IR lines for float vectors (8 lanes, or `w` of them: 16 where the micro-kernel uses AVX-512)
that a kernel's edge needs: a lane mask, and loads, stores and gathers under it (the columns or
channels past the end of a row are neither read nor written), as the hand-written kernels
(ukernels.py, grouped_conv.py) emit them."""
from __future__ import annotations

LANES = 8


def load_intrinsic(w: int = LANES) -> str:
    return f"llvm.masked.load.v{w}f32.p0"


def store_intrinsic(w: int = LANES) -> str:
    return f"llvm.masked.store.v{w}f32.p0"


def gather_intrinsic(w: int = LANES) -> str:
    return f"llvm.masked.gather.v{w}f32.v{w}p0"


def declarations(w: int = LANES, gather: bool = False) -> set[str]:
    """The declarations of the masked load and store (and gather) on `w` lanes."""
    out = {f"declare <{w} x float> @{load_intrinsic(w)}(ptr, i32 immarg, <{w} x i1>, <{w} x float>)",
           f"declare void @{store_intrinsic(w)}(<{w} x float>, ptr, i32 immarg, <{w} x i1>)"}
    if gather:
        out.add(f"declare <{w} x float> @{gather_intrinsic(w)}(<{w} x ptr>, i32 immarg, <{w} x i1>, <{w} x float>)")
    return out


def splat_i64(name: str, scalar: str, w: int = LANES) -> list[str]:
    """`name` = <w x i64> with every lane `scalar`."""
    return [f"  {name}.ins = insertelement <{w} x i64> poison, i64 {scalar}, i64 0",
            f"  {name} = shufflevector <{w} x i64> {name}.ins, <{w} x i64> poison, <{w} x i32> zeroinitializer"]


def lanes(name: str, first: str, w: int = LANES) -> list[str]:
    """`name` = <w x i64> <first, first + 1, ..., first + w - 1>."""
    indices = "<" + ", ".join(f"i64 {i}" for i in range(w)) + ">"
    return splat_i64(f"{name}.base", first, w) + [f"  {name} = add <{w} x i64> {name}.base, {indices}"]


def lane_mask(name: str, first: str, limit: int | str, w: int = LANES) -> list[str]:
    """`name` = <w x i1>: lane i is on when `first` + i < `limit` (the lanes inside a row)."""
    return lanes(f"{name}.at", first, w) + splat_i64(f"{name}.end", str(limit), w) + \
        [f"  {name} = icmp slt <{w} x i64> {name}.at, {name}.end"]


def load(name: str, pointer: str, mask: str | None, w: int = LANES) -> str:
    """`name` = the w floats at `pointer` (under `mask`: the lanes off read nothing and are 0)."""
    if mask is None:
        return f"  {name} = load <{w} x float>, ptr {pointer}, align 4"
    return f"  {name} = call <{w} x float> @{load_intrinsic(w)}(ptr {pointer}, i32 4, <{w} x i1> {mask}, " \
        f"<{w} x float> zeroinitializer)"


def store(value: str, pointer: str, mask: str | None, w: int = LANES) -> str:
    """Store the w floats `value` at `pointer` (under `mask`: only the lanes on)."""
    if mask is None:
        return f"  store <{w} x float> {value}, ptr {pointer}, align 4"
    return f"  call void @{store_intrinsic(w)}(<{w} x float> {value}, ptr {pointer}, i32 4, <{w} x i1> {mask})"


def gather(name: str, base: str, indices: str, mask: str) -> list[str]:
    """`name` = the floats at `base` + each lane of the <8 x i64> `indices` (lanes off: 0)."""
    return [f"  {name}.ptrs = getelementptr inbounds float, ptr {base}, <8 x i64> {indices}",
            f"  {name} = call <8 x float> @{gather_intrinsic()}(<8 x ptr> {name}.ptrs, i32 4, <8 x i1> {mask}, "
            "<8 x float> zeroinitializer)"]


def counted_loop(name: str, start: str, end: str | int, body: list[str]) -> list[str]:
    """`%name` from `start` up to `end` (exclusive) around `body` (lines that may hold blocks of
    their own; the last falls through to the next step)."""
    return [f"  br label %{name}.pre", f"{name}.pre:", f"  br label %{name}.head", f"{name}.head:",
            f"  %{name} = phi i64 [ {start}, %{name}.pre ], [ %{name}.next, %{name}.latch ]",
            f"  %{name}.more = icmp slt i64 %{name}, {end}",
            f"  br i1 %{name}.more, label %{name}.body, label %{name}.exit", f"{name}.body:",
            *body, f"  br label %{name}.latch", f"{name}.latch:", f"  %{name}.next = add i64 %{name}, 1",
            f"  br label %{name}.head", f"{name}.exit:"]
