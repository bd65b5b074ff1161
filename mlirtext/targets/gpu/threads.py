"""The kernels at the loops level, with their iteration space mapped onto GPU threads.

Tiled kernels first: a matmul-class kernel (fill + matmul / batch_matmul / matmul-like generic,
or a convolution read as an implicit GEMM, possibly with an elementwise epilogue such as a bias
and a relu) becomes a 2-D tiled kernel
(tiling.py: 16x16-thread workgroups, each computing a 64x64 block of the output, 4x4 outputs per
thread, K in slices of 16 staged through workgroup memory between barriers, bounds checked at the
edges; a 3-D grid when batched); a reduction of a kernel argument along its innermost axis (a
row sum, a row max, with an epilogue) becomes one workgroup per row with a tree reduction in
workgroup memory (reductions.py), and so does a chain of such reductions and elementwise maps
over the same rows (softmax, layer norm: fused_rows.py). Their Launch carries the workgroup
shape and the grid.
MLIRTEXT_GPU_TILING=0 turns both off (for side-by-side measurements).

Every other kernel: one thread per output element of the leading parallel axes: the kernels that `targets/workgroups.py`
can split into row ranges for the CPU's thread pool get, the same way, a `[begin, end)` range
on that axis (p); when every structured op of the kernel also has the next output axes as
parallel loops, in order, with nothing else at their loop levels, those loops get ranges too
(`[begin, end)` pairs after the first, before the outputs). A GPU kernel calls it with
`[i, i + 1)` per axis, the indices taken from its global thread id (after a bounds check): those
loops run once per thread and the rest of the nest (reductions included) runs serially in that
thread. A kernel that cannot be split (a reduction to a scalar of a short vector, ops that read
each other's whole results) runs in a single thread: correct, not fast. Not tiled yet:
grouped and depthwise convolutions.

Transcendentals are expanded into polynomials (`math-polynomial-approximation{gpu=true}`: f64,
sin/cos/tan/atan2/pow/cbrt and ctpop/ctlz/isfinite too) before any target sees them: NVPTX and
AMDGPU have no libcalls, GLSL.std.450 has no f64, and LLVM aborts on what it cannot select.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Operation

#: After the linalg -> loops step and the thread mapping: the loops-level pipeline.
LOOPS_PIPELINE = "canonicalize,cse,results-to-out-params,math-polynomial-approximation{gpu=true},canonicalize,cse"


@dataclass
class Launch:
    """How a kernel runs: `threads` threads, one per element of the mapped output axes, or one
    thread when not split; or, when `workgroup` is set, a tiled kernel (tiling.py): a `grid` of
    workgroups of workgroup[0] x workgroup[1] threads, each computing a `block` of the output."""
    threads: int
    split: bool              # the kernel takes [begin, end) ranges (after its inputs), one per axis
    axes: tuple = ()         # the extents of the mapped axes, outermost first (threads = their product)
    workgroup: tuple = ()    # (x, y): the workgroup's threads of a tiled kernel, else ()
    grid: tuple = ()         # (x, y, z): a tiled kernel's workgroups
    block: tuple = ()        # (rows, columns): the outputs each workgroup of a tiled kernel computes
    tiling: str = ""         # what a tiled kernel is: "matmul", "convolution", "row reduction", "fused rows"


def tiling_enabled() -> bool:
    """MLIRTEXT_GPU_TILING=0 turns tiled kernels off (to measure them against the thread-per-
    element mapping side by side)."""
    return os.environ.get("MLIRTEXT_GPU_TILING", "1") != "0"


def kernels_at_loops_level(kernels_mod: Operation, names) -> tuple[Operation, dict]:
    """(loops-level copy of `kernels_mod`, {kernel name: Launch}). Raises GpuCompileError."""
    from ..workgroups import distribute, plan
    from .executable import GpuCompileError
    module = kernels_mod.clone()
    functions = {op.sym_name: op for op in module.regions[0].blocks[0].ops
                 if op.name == "func.func" and op.sym_name in names}
    from .tiling import replace_with_tiled
    tiled = {name: how for name, fn in functions.items()
             if tiling_enabled() and (how := _tiled_plan(fn)) is not None}
    n_inputs = {name: len(fn.regions[0].blocks[0].arguments) for name, fn in functions.items()}
    splits = {name: plan(fn) for name, fn in functions.items()}
    deeper = {name: _parallel_extents(fn, splits[name][0]) if splits[name] else () for name, fn in functions.items()}
    run_pipeline(module, "convert-linalg-to-loops", GpuCompileError)
    launches = {}
    for name, fn in functions.items():
        split = splits[name]
        if split is not None and distribute(fn, *split):
            axes = (split[1],) + _map_deeper_axes(fn, split[0], deeper[name])
            launches[name] = Launch(int(math.prod(axes)), True, axes)
        else:
            launches[name] = Launch(1, False)
    run_pipeline(module, LOOPS_PIPELINE, GpuCompileError)
    loops_functions = {op.sym_name: op for op in module.regions[0].blocks[0].ops if op.name == "func.func"}
    replaced = [name for name, how in tiled.items() if replace_with_tiled(module, loops_functions[name], how, n_inputs[name])]
    for name in replaced:
        launches[name] = tiled[name].launch()
    if replaced:   # (a fused row kernel's exp, an epilogue's tanh: the tiled text has math ops again)
        run_pipeline(module, "math-polynomial-approximation{gpu=true},canonicalize,cse", GpuCompileError)
    return module, launches


def _tiled_plan(fn: Operation):
    """How kernel `fn` (linalg) runs tiled: a tiling.Matmul, a reductions.RowReduction, a
    fused_rows.FusedRows, or None."""
    from .fused_rows import match_fused_rows
    from .reductions import match_row_reduction
    from .tiling import match_matmul
    return match_matmul(fn) or match_row_reduction(fn) or match_fused_rows(fn)


def _parallel_extents(fn: Operation, p: int) -> tuple:
    """Extents of the output axes p+1, p+2, ... that every structured op of kernel `fn` (linalg)
    iterates as parallel loops p+1, p+2, ... in order (the axes a thread can own, after p)."""
    from ...dialects.linalg import segments
    from ...transforms.conversions.linalg_to_loops import structured
    from ...transforms.dispatch import is_structured
    prefixes = []
    structured_names = {op.name for op in fn.regions[0].blocks[0].ops if is_structured(op)}
    for op in fn.regions[0].blocks[0].ops:
        if not is_structured(op):
            continue
        try:
            s, (ins, outs) = structured(op), segments(op)
        except Exception:  # noqa: BLE001 - an op the loops step cannot take: no deeper mapping
            return ()
        shape, out_map = outs[0].type.shape, s.maps[-1].results
        # An input computed in the kernel (a row chain) must be read at the thread's own index
        # on each mapped axis, straight from the op that wrote it.
        chained = [(v, m.results) for v, m in zip(ins, s.maps) if not _from_outside(v)]
        if any(getattr(getattr(v, "op", None), "name", "") not in structured_names for v, _ in chained):
            return ()
        found = []
        for q in range(p + 1, len(shape)):
            if q >= len(out_map) or out_map[q] != ("dim", q) or q in s.reductions:
                break
            if any(q >= len(r) or r[q] != ("dim", q) for _, r in chained):
                break
            found.append(shape[q])
        prefixes.append(found)
    common = []
    for column in zip(*prefixes):   # the axes every op has, with the same extents
        if len(set(column)) != 1:
            break
        common.append(column[0])
    return tuple(common)


def _from_outside(value) -> bool:
    """A kernel argument or a constant (not computed by the kernel's ops)."""
    owner = getattr(value, "op", None)
    return owner is None or owner.name in ("arith.constant", "tensor.empty")


def _map_deeper_axes(fn: Operation, p: int, extents: tuple) -> tuple:
    """After `distribute` gave the loop at depth p its range: give the loops at depths p+1, ...
    ranges of their own (new index arguments before the outputs), as far as every loop nest
    under it has them with constant bounds [0, extent), each the only thing that runs at its
    level (so one thread per index owns all that happens there). Returns the extents mapped."""
    from ...dialects.func import function_type
    from ...ir.attributes import TypeAttr
    from ..workgroups import bounds_are
    body = fn.regions[0].blocks[0]
    nests = [op for op in body.ops if op.name == "scf.for"]
    per_nest = []   # per loop nest inside the distributed loop: its loops on axes p+1, p+2, ...
    for nest in nests:
        loop = nest
        for _ in range(p):
            loop = _only_loop(loop)
            if loop is None:
                return ()
        level = loop.regions[0].blocks[0].ops   # (the loops-level form keeps a fill and its
        if any(o.name not in _INERT + ("scf.for",) for o in level):   # matmul in one row loop)
            return ()
        for child in (o for o in level if o.name == "scf.for"):
            chain, current = [], child
            for extent in extents:
                if current is None or not bounds_are(current, extent):
                    break
                chain.append(current)
                current = _only_loop(current, strict=True)
            per_nest.append(chain)
    depth = min((len(c) for c in per_nest), default=0)
    if depth == 0:
        return ()
    added = []
    for k in range(depth):   # (appended after distribute's pair: the outputs come later)
        begin = body.add_argument(T.index, name=f"wg{k + 1}_begin")
        end = body.add_argument(T.index, name=f"wg{k + 1}_end")
        for chain in per_nest:
            chain[k].set_operand(0, begin)
            chain[k].set_operand(1, end)
        added += [T.index, T.index]
    ftype = function_type(fn)
    fn.attributes["function_type"] = TypeAttr(T.FunctionType(tuple(ftype.inputs) + tuple(added), ftype.results))
    return tuple(extents[:depth])


#: Ops a loop level may hold besides its inner loop and still be owned by a thread.
_INERT = ("scf.yield", "arith.constant")


def _only_loop(loop: Operation, strict: bool = False):
    """The one scf.for in `loop`'s body; with `strict`, None unless the body holds nothing else
    that runs (constants and the terminator aside)."""
    ops = loop.regions[0].blocks[0].ops
    inner = [o for o in ops if o.name == "scf.for"]
    if len(inner) != 1:
        return None
    if strict and any(o.name not in _INERT + ("scf.for",) for o in ops):
        return None
    return inner[0]


def run_pipeline(module: Operation, pipeline: str, error) -> None:
    from ...transforms.pass_manager import PassManager
    from ...transforms.pipeline import parse_pipeline
    problems = PassManager(parse_pipeline(pipeline)).run(module)
    if problems:
        raise error("; ".join(d.message for d in problems))
