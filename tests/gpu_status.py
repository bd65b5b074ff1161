"""How many of the programs `tests/vm_status.py` runs also compile for each GPU target, pass their
vendor's validation, and (vulkan-spirv) give the interpreter's results on the `vulkan` device.

    PYTHONPATH=. python -m tests.gpu_status [--files GLOB]... [--targets cuda,rocm,vulkan-spirv]
                                            [--cache FILE] [-v]

Each corpus function that lowering_status takes to llvm is compiled as vm_status does (no
canonicalize), once for dispatch formation; its reference kernels (linalg on tensors) are then
compiled for each target and validated (ptxas sm_80 + sm_90; ld.lld + llvm-readelf for gfx942;
spirv-val vulkan1.3). The vulkan-spirv executable is packed and run on the `vulkan` device (Mesa
lavapipe here); it matches when every result equals the interpreter's within float tolerance
(1e-4 relative + 1e-5 absolute: GPU code is not bit-identical to the CPU's) and integers exactly.
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


@dataclass
class GpuOutcome:
    file: str
    function: str
    why: dict = field(default_factory=dict)        # stage ("compile", "cuda", ..., "vulkan run") -> reason
    compiled: set = field(default_factory=set)
    validated: set = field(default_factory=set)
    matched: bool = False


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
    from mlirtext.vm.compiler import compile_module
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


def check_function(rel: str, name: str, source_text: str, targets=TARGETS) -> GpuOutcome:
    from mlirtext.api import parse_and_verify
    from mlirtext.interpreter import Interpreter
    from mlirtext.targets.gpu import GpuCompileError, compile_gpu
    from mlirtext.vm.compiler import CompileFailed
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
    for target in targets:
        exe = None
        try:
            exe = compile_gpu(kernels_mod, list(compiled.kernels), target)
            out.compiled.add(target)
            from mlirtext.targets.gpu.validate import validate_executable
            validate_executable(exe)
            out.validated.add(target)
        except GpuCompileError as e:
            out.why[target] = str(e) if exe is None else f"validation: {e}"
        except Exception as e:  # noqa: BLE001
            out.why[target] = f"internal error: {type(e).__name__}: {e}"
        if target == "vulkan-spirv" and exe is not None:
            compiled.gpu[target] = exe
            out.matched = _run_on_vulkan(out, compiled, name, want)
    return out


def _run_on_vulkan(out: GpuOutcome, compiled, name: str, want) -> bool:
    from mlirtext.vm.modfile import pack
    from mlirtext.vm.vm import LoadedModule, VMError
    try:
        got = LoadedModule(pack(compiled), "vulkan").function(name)()
    except VMError as e:
        out.why["vulkan run"] = f"vm: {e}"
        return False
    except Exception as e:  # noqa: BLE001
        out.why["vulkan run"] = f"internal error: {type(e).__name__}: {e}"
        return False
    if len(got) != len(want):
        out.why["vulkan run"] = f"{len(got)} results, expected {len(want)}"
        return False
    for i, (g, w) in enumerate(zip(got, want)):
        why = compare(g, w)
        if why:
            out.why["vulkan run"] = f"result {i}: {why}"
            return False
    return True


def collect(globs=None, targets=TARGETS, cache=None, progress=None) -> list[GpuOutcome]:
    from fnmatch import fnmatch
    from .vm_status import lowered_functions
    outcomes = []
    for o in lowered_functions(globs, cache, progress):
        if globs and not any(fnmatch(o.file, g) for g in globs):   # (a cache holds every file)
            continue
        outcomes.append(check_function(o.file, o.function, o.texts["source"], targets))
        if progress:
            last = outcomes[-1]
            progress(f"{o.file} @{o.function}: compiled {sorted(last.compiled)} validated {sorted(last.validated)} "
                     f"matched {last.matched} {last.why or ''}")
    return outcomes


def report(outcomes: list, targets, seconds: float) -> str:
    n = len(outcomes)
    lines = [f"{n} programs (those tests/vm_status.py runs), {seconds:.0f} s"]
    for t in targets:
        line = (f"  {t:13s} compiled {sum(t in o.compiled for o in outcomes)}/{n}, "
                f"validated {sum(t in o.validated for o in outcomes)}/{n}")
        if t == "vulkan-spirv":
            line += f", matched on vulkan {sum(o.matched for o in outcomes)}/{n}"
        lines.append(line)
    reasons = Counter((stage, why.split("\n")[0][:160]) for o in outcomes for stage, why in o.why.items())
    if reasons:
        lines.append("reasons (stage: why):")
        lines += [f"  {count:5d}  {stage}: {why}" for (stage, why), count in reasons.most_common(25)]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="append", metavar="GLOB", help="glob over corpus file paths (repeatable)")
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated GPU targets")
    ap.add_argument("--cache", metavar="FILE", help="the lowered functions as vm_status.py --cache keeps them")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per function")
    args = ap.parse_args(argv)
    targets = tuple(t for t in args.targets.split(",") if t)
    start = time.perf_counter()
    outcomes = collect(args.files, targets, args.cache,
                       (lambda line: print(line, file=sys.stderr, flush=True)) if args.verbose else None)
    print(report(outcomes, targets, time.perf_counter() - start))


if __name__ == "__main__":
    main()
