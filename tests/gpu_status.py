"""How many of the programs `tests/vm_status.py` runs also compile for each GPU target, pass their
vendor's validation, and (vulkan-spirv, opencl-spirv) give the interpreter's results on the
`vulkan` / `opencl` device.

    PYTHONPATH=. python -m tests.gpu_status [--files GLOB]... [--targets cuda,rocm,vulkan-spirv,opencl-spirv]
                                            [-j N] [--time-limit S] [--cache FILE] [-v]

Each corpus function that lowering_status takes to llvm is compiled as vm_status does (no
canonicalize), once for dispatch formation; its reference kernels (linalg on tensors) are then
compiled for each target and validated (ptxas sm_80 + sm_90; ld.lld + llvm-readelf for gfx942;
spirv-val vulkan1.3 or opencl1.2). The vulkan-spirv executable is packed and run on the `vulkan`
device (Mesa lavapipe here), the opencl-spirv one on the `opencl` device (pocl's CPU driver here);
it matches when every result equals the interpreter's within float tolerance (1e-4 relative +
1e-5 absolute: GPU code is not bit-identical to the CPU's) and integers exactly. (opencl-spirv
is not among the default targets: name it with --targets.)

Functions run in `-j` worker processes. A function's GPU work gets `--time-limit` seconds (its
lowering has its own, longer limit): over it, its worker is killed (codegen child included), the
targets it had finished still count, the rest fail with "time limit", and the run goes on.
"""
from __future__ import annotations

import argparse
import functools
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

TARGETS = ("cuda", "rocm", "vulkan-spirv")
KNOWN_TARGETS = (*TARGETS, "opencl-spirv")
#: The device each SPIR-V target's executable runs on, against the interpreter.
DEVICES = {"vulkan-spirv": "vulkan", "opencl-spirv": "opencl"}


@dataclass
class GpuOutcome:
    file: str
    function: str
    why: dict = field(default_factory=dict)        # stage ("compile", "cuda", ..., "vulkan run") -> reason
    compiled: set = field(default_factory=set)
    validated: set = field(default_factory=set)
    matched: bool = False                          # on `vulkan`
    matched_opencl: bool = False                   # on `opencl`


def compare(got, want, rtol: float = 1e-4, atol: float = 1e-5) -> str:
    """'' when `got` equals `want` (floats within tolerance, NaN where NaN), else how they differ."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype:
        return f"element type {got.dtype} != {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f" or "float" in want.dtype.name:
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~((np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= atol + rtol * np.abs(w)))
        return f"{int(bad.sum())} elements differ (max |diff| {np.nanmax(np.abs(g - w)):.3g})" if bad.any() else ""
    if not np.array_equal(got, want):
        return f"{int((got != want).sum())} elements differ"
    return ""


def reference_kernels(source_text: str, name: str = "<program>"):
    """(Compiled for the reference target, its kernels module parsed back): dispatch formation
    once, then any GPU target can be compiled from the kernels (as `compile --target=...` does)."""
    from mlirtext.api import parse_and_verify
    from mlirtext.compiler.driver import compile_module
    compiled = compile_module(parse_and_verify(source_text, name).module, "reference", fold=False)
    return compiled, parse_and_verify(compiled.reference_mlir, "kernels.mlir").module


@functools.lru_cache(maxsize=None)
def program_kernels(path) -> tuple:
    """(kernels module, kernel names) of a program file (for the tests: formed once per file)."""
    compiled, module = reference_kernels(path.read_text(), str(path))
    return module, list(compiled.kernels)


def need_tools(*tools) -> None:
    """Skip the calling test when a validation tool is missing."""
    import pytest
    from mlirtext.targets.gpu.validate import find_tool
    missing = [t for t in tools if find_tool(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not found (`make gpu-deps` installs them; ptxas comes with CUDA)")


def check_function(rel: str, name: str, source_text: str, targets=TARGETS, step=None) -> GpuOutcome:
    """The function's outcome; `step(outcome)` after each target (so far)."""
    from mlirtext.api import parse_and_verify
    from mlirtext.interpreter import Interpreter
    from mlirtext.targets.gpu import GpuCompileError, compile_gpu
    from mlirtext.compiler.driver import CompileFailed
    out = GpuOutcome(rel, name)
    try:
        want = Interpreter(parse_and_verify(source_text, rel).module).call(name, [])
        compiled, kernels_mod = reference_kernels(source_text, rel)
    except CompileFailed as e:
        out.why["compile"] = f"compile: {e.diagnostics[0].message}"
        return out
    except Exception as e:  # noqa: BLE001 - a bug is a reason, never a crash of the tool
        out.why["compile"] = f"internal error: {type(e).__name__}: {e}"
        return out
    for spec in targets:
        target, _, arch = spec.partition(":")
        exe = None
        try:
            exe = compile_gpu(kernels_mod, list(compiled.kernels), target, arch or None)
            out.compiled.add(spec)
            from mlirtext.targets.gpu.validate import validate_executable
            validate_executable(exe)
            out.validated.add(spec)
        except GpuCompileError as e:
            out.why[spec] = str(e) if exe is None else f"validation: {e}"
        except Exception as e:  # noqa: BLE001
            out.why[spec] = f"internal error: {type(e).__name__}: {e}"
        if target in DEVICES and exe is not None:
            compiled.gpu[target] = exe
            matched = _run_on_device(DEVICES[target], out, compiled, name, want)
            if target == "vulkan-spirv":
                out.matched = matched
            else:
                out.matched_opencl = matched
        if step:
            step(out)
    return out


def _run_on_device(device: str, out: GpuOutcome, compiled, name: str, want) -> bool:
    from mlirtext.compiler.module_writer import pack
    from mlirtext.vm.vm import LoadedModule, VMError
    stage = f"{device} run"
    try:
        got = LoadedModule(pack(compiled), device).function(name)()
    except VMError as e:
        out.why[stage] = f"vm: {e}"
        return False
    except Exception as e:  # noqa: BLE001
        out.why[stage] = f"internal error: {type(e).__name__}: {e}"
        return False
    if len(got) != len(want):
        out.why[stage] = f"{len(got)} results, expected {len(want)}"
        return False
    for i, (g, w) in enumerate(zip(got, want)):
        why = compare(g, w)
        if why:
            out.why[stage] = f"result {i}: {why}"
            return False
    return True


def _lowered_source(rel: str, chunk_index: int, name: str):
    """The function's lowering outcome (lowering_status's), or None when it does not reach llvm."""
    from .lowering_status import lower_function
    outcome = lower_function(rel, _chunks(rel)[chunk_index].module, name)
    return outcome if outcome.reached == "llvm" else None


@functools.lru_cache(maxsize=4)   # a worker mostly takes a file's functions one after another
def _chunks(rel: str) -> list:
    from mlirtext.api import parse_chunks
    from . import corpus
    from .check_status import needs_split
    text = corpus.file_text(rel)
    return list(parse_chunks(text, rel, needs_split(text)))


def _test_functions(rel: str) -> list[tuple]:
    """(file, chunk index, function) of each test function in a corpus file."""
    from mlirtext.checking import test_functions
    from mlirtext.diagnostics import has_errors
    return [(rel, i, fn.sym_name) for i, chunk in enumerate(_chunks(rel))
            if chunk.module is not None and not has_errors(chunk.diagnostics)
            for fn in test_functions(chunk.module)]


def _worker(conn, targets) -> None:
    """Answers tasks until told to stop: ("list", file) -> its test functions; ("lower", file, chunk,
    function) -> "lowered" (with the lowering outcome) then the GPU outcome, or None when it does not
    reach llvm; ("gpu", file, function, source) -> the GPU outcome."""
    import os
    os.setsid()   # its own process group: a worker over the limit is killed with its codegen child
    while (task := conn.recv()) is not None:
        if task[0] == "list":
            conn.send(_test_functions(task[1]))
            continue
        if task[0] == "lower":
            lowered = _lowered_source(*task[1:])
            conn.send(("lowered", lowered))
            if lowered is None:
                continue
            rel, name, source = lowered.file, lowered.function, lowered.texts["source"]
        else:
            rel, name, source = task[1:]
        conn.send(check_function(rel, name, source, targets, lambda so_far: conn.send(("so far", so_far))))


def collect(globs=None, targets=TARGETS, cache=None, progress=None, jobs: int = 1,
            time_limit: float = 120.0, lowering_time_limit: float = 600.0) -> tuple[list[GpuOutcome], list[str]]:
    """(The GPU outcomes of the functions that lower to llvm, the functions whose lowering ran over
    `lowering_time_limit`). Each function runs in a worker process; one whose GPU work (compile,
    validate, vulkan run) takes over `time_limit` seconds fails with "time limit" for the targets it
    had not finished, and the run goes on. With `cache` (vm_status's pickle of lowered functions):
    read when present, else written with what lowering found."""
    import multiprocessing as mp
    import os
    import pickle
    from fnmatch import fnmatch
    from multiprocessing.connection import wait
    from .check_status import corpus_files
    from .worker_slot import WorkerSlot
    have_cache = bool(cache) and os.path.exists(cache)
    if have_cache:
        with open(cache, "rb") as f:
            lowered = [o for o in pickle.load(f) if o.reached == "llvm"]
        pending = [("gpu", o.file, o.function, o.texts["source"]) for o in lowered
                   if not globs or any(fnmatch(o.file, g) for g in globs)]   # (a cache holds every file)
    else:
        lowered, pending = [], [("list", rel) for rel in corpus_files(globs)]
    pending.reverse()
    outcomes, lowering_over = [], []
    ctx = mp.get_context("fork")
    slots = [WorkerSlot(ctx, _worker, targets) for _ in range(max(1, jobs))]

    def finish(slot, outcome):
        slot.task = None
        outcomes.append(outcome)
        if progress:
            opencl = f" matched on opencl {outcome.matched_opencl}" if "opencl-spirv" in targets else ""
            progress(f"{outcome.file} @{outcome.function}: compiled {sorted(outcome.compiled)} validated "
                     f"{sorted(outcome.validated)} matched {outcome.matched}{opencl} {outcome.why or ''}")

    try:
        while pending or any(s.task for s in slots):
            for slot in slots:
                if slot.task is None and pending:
                    slot.give(pending.pop())
            ready = wait([s.conn for s in slots if s.task], timeout=1.0)
            for slot in slots:
                task = slot.task
                if task is None:
                    continue
                if slot.conn in ready:
                    try:
                        message = slot.conn.recv()
                    except (EOFError, OSError):
                        message = None
                    if message is None:
                        _crashed(slot, task, outcomes, lowering_over, progress)
                    elif task[0] == "list":
                        slot.task = None
                        pending += [("lower", *t) for t in reversed(message)]   # next: they share the parse
                    elif isinstance(message, tuple) and message[0] == "so far":
                        slot.extra = message[1]   # (the targets finished so far)
                    elif isinstance(message, tuple) and message[0] == "lowered":
                        if message[1] is None:
                            slot.task = None
                        else:   # the GPU work's own clock starts now
                            lowered.append(message[1])
                            slot.task, slot.started = ("gpu", message[1].file, message[1].function), time.monotonic()
                    else:
                        finish(slot, message)
                elif not slot.process.is_alive():
                    _crashed(slot, task, outcomes, lowering_over, progress)
                elif task[0] == "lower" and slot.over(lowering_time_limit):
                    slot.replace()
                    lowering_over.append(f"{task[1]} @{task[3]}")
                    if progress:
                        progress(f"{task[1]} @{task[3]}: lowering over the {lowering_time_limit:g} s limit")
                elif task[0] == "gpu" and slot.over(time_limit):
                    out = slot.extra or GpuOutcome(task[1], task[2])   # the targets it finished count
                    out.why["time limit"] = f"over the {time_limit:g} s time limit"
                    slot.replace()
                    finish(slot, out)
    except KeyboardInterrupt:   # Ctrl-C: what finished is still reported (and no partial cache kept)
        print(f"interrupted: {len(outcomes)} functions finished, {len(pending)} tasks not started",
              file=sys.stderr)
        cache = None
    finally:
        for slot in slots:
            slot.kill()
    if cache and not have_cache:
        with open(cache, "wb") as f:
            pickle.dump(lowered, f)
    return outcomes, lowering_over


def _crashed(slot, task, outcomes, lowering_over, progress) -> None:
    """A worker that died mid-task: the task's function is a failure, the run goes on."""
    slot.replace()
    if task[0] == "gpu":
        out = GpuOutcome(task[1], task[2])
        out.why["crash"] = "the worker process died"
        outcomes.append(out)
    elif task[0] == "lower":
        lowering_over.append(f"{task[1]} @{task[3]} (crashed)")
    else:
        lowering_over.append(f"{task[1]} (crashed while reading it)")
    if progress:
        progress(f"{task[1]}: worker died on {task[0]}")


def report(outcomes: list, targets, seconds: float, time_limit: float, lowering_over=()) -> str:
    n = len(outcomes)
    over = sum("time limit" in o.why for o in outcomes)
    lines = [f"{n} programs (those tests/vm_status.py runs), {seconds:.0f} s; {over} over the "
             f"{time_limit:g} s time limit per function"]
    if lowering_over:
        lines.append(f"  not counted: {len(lowering_over)} whose lowering ran over its limit or crashed: "
                     + ", ".join(lowering_over))
    for t in targets:
        line = (f"  {t:13s} compiled {sum(t in o.compiled for o in outcomes)}/{n}, "
                f"validated {sum(t in o.validated for o in outcomes)}/{n}")
        if t == "vulkan-spirv":
            line += f", matched on vulkan {sum(o.matched for o in outcomes)}/{n}"
        if t == "opencl-spirv":
            line += f", matched on opencl {sum(o.matched_opencl for o in outcomes)}/{n}"
        lines.append(line)
    reasons = Counter((stage, why.split("\n")[0][:160]) for o in outcomes for stage, why in o.why.items())
    if reasons:
        lines.append("reasons (stage: why):")
        lines += [f"  {count:5d}  {stage}: {why}" for (stage, why), count in reasons.most_common(25)]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="append", metavar="GLOB", help="glob over corpus file paths (repeatable)")
    ap.add_argument("--targets", default=",".join(TARGETS),
                    help="comma-separated GPU targets, each TARGET or TARGET:ARCH (rocm:gfx90a, cuda:sm_90)")
    ap.add_argument("--cache", metavar="FILE", help="the lowered functions as vm_status.py --cache keeps them")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per function")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--time-limit", type=float, default=120.0,
                    help="seconds for one function's GPU work: compile, validate, device runs (default 120)")
    ap.add_argument("--lowering-time-limit", type=float, default=600.0,
                    help="seconds to lower one function to llvm first (default 600)")
    args = ap.parse_args(argv)
    targets = tuple(t for t in args.targets.split(",") if t)
    unknown = [t for t in targets if t.partition(":")[0] not in KNOWN_TARGETS]
    if unknown or args.jobs < 1 or args.time_limit <= 0 or args.lowering_time_limit <= 0:
        ap.error(f"unknown target {unknown[0]!r} (known: {', '.join(KNOWN_TARGETS)})" if unknown
                 else "-j and the time limits must be positive")
    start = time.perf_counter()
    outcomes, lowering_over = collect(
        args.files, targets, args.cache,
        (lambda line: print(line, file=sys.stderr, flush=True)) if args.verbose else None,
        args.jobs, args.time_limit, args.lowering_time_limit)
    print(report(outcomes, targets, time.perf_counter() - start, args.time_limit, lowering_over))


if __name__ == "__main__":
    main()
