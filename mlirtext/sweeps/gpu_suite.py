"""`mlirtext sweep gpu`: the corpus functions that lower to llvm (`lowering_suite`), compiled as the VM
suite compiles them (no canonicalize), dispatch formation once, then their kernels compiled for each GPU
target and checked by the vendor's tool (ptxas sm_80 + sm_90; ld.lld + llvm-readelf; spirv-val for
vulkan1.3 or opencl1.2); the executable of a target that a device runs (vulkan-spirv on `vulkan`,
opencl-spirv on `opencl`, cuda on `cuda`) is packed and run there against the interpreter (floats within
1e-4 relative + 1e-5 absolute: GPU code is not bit-identical to the CPU's; integers exactly).

Two results per function and target: `FILE@FUNCTION [TARGET]` (compiled and validated: pass;
fail-compile; skip when the validation tool is missing here) and, for a target a device runs,
`FILE@FUNCTION [TARGET on DEVICE]` (pass, mismatch, fail-run; fail-compile when the target did not
compile). The device run happens only where the task was placed for that device: the sweep's task
needs the device's resource (`device:vulkan`, which `mlirtext worker --devices vulkan` advertises) when
a node of the cluster offers it, and where none does the run is a skip that says so, never a run on
whatever this machine happens to have (lavapipe, pocl: the CPU).
"""
from __future__ import annotations

import importlib

import numpy as np

from .corpus_files import suite_files, unique_names
from .lowering_suite import lower_file
from .results import Result, with_device

TARGETS = ("cuda", "rocm", "vulkan-spirv")
KNOWN_TARGETS = (*TARGETS, "opencl-spirv")
#: The device that runs each target's executable, against the interpreter (rocm: compile-only).
RUNS_ON = {"vulkan-spirv": "vulkan", "opencl-spirv": "opencl", "cuda": "cuda"}
#: The tools each target's validation needs.
VALIDATORS = {"cuda": ("ptxas",), "rocm": ("ld.lld", "llvm-readelf"), "vulkan-spirv": ("spirv-val",),
              "opencl-spirv": ("spirv-val",)}


def targets(options) -> tuple:
    """TARGET or TARGET:ARCH (rocm:gfx90a, cuda:sm_90), as `--targets` gave them."""
    return tuple(options.extra.get("targets") or TARGETS)


def devices_of(specs) -> tuple:
    """The devices that run the executables of these targets, in order."""
    return tuple(dict.fromkeys(RUNS_ON[t.partition(":")[0]] for t in specs if t.partition(":")[0] in RUNS_ON))


def run_label(spec: str) -> str:
    return f"{spec} on {RUNS_ON[spec.partition(':')[0]]}"


def labels(specs) -> list[str]:
    """The bracketed part of each result of one function, in order."""
    out = []
    for spec in specs:
        out.append(spec)
        if spec.partition(":")[0] in RUNS_ON:
            out.append(run_label(spec))
    return out


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
    from ..api import parse_and_verify
    from ..compiler.driver import compile_module
    compiled = compile_module(parse_and_verify(source_text, name).module, "reference", fold=False)
    return compiled, parse_and_verify(compiled.reference_mlir, "kernels.mlir").module


def check_function(label: str, name: str, source_text: str, specs, placed=()) -> list[Result]:
    """The results of function @`name` (source-level text) for each target of `specs`, named
    `label [...]`; the device runs only on the devices of `placed` (those the task holds)."""
    from ..api import parse_and_verify
    from ..compiler.driver import CompileFailed
    from ..interpreter import Interpreter
    try:
        want = Interpreter(parse_and_verify(source_text, label).module).call(name, [])
        compiled, kernels = reference_kernels(source_text, label)
    except CompileFailed as e:
        return [Result(with_device(label, t), "fail-compile", f"compile: {e.diagnostics[0].message}")
                for t in labels(specs)]
    except Exception as e:  # noqa: BLE001 - a bug is a reason, never a crash of the sweep
        return [Result(with_device(label, t), "fail-compile", f"internal error: {type(e).__name__}: {e}")
                for t in labels(specs)]
    results = []
    for spec in specs:
        exe, result = _compile_and_validate(kernels, compiled, spec)
        results.append(Result(with_device(label, spec), *result))
        target = spec.partition(":")[0]
        if target not in RUNS_ON:
            continue
        device = RUNS_ON[target]
        if exe is None:
            run = ("fail-compile", f"{spec} did not compile")
        elif device not in placed:
            run = ("skip", f"no node of the sweep's Ray offers device '{device}' (start one with `mlirtext worker "
                           f"--devices {device}`)")
        else:
            compiled.gpu[target] = exe
            run = _run_on_device(device, compiled, name, want)
        results.append(Result(with_device(label, run_label(spec)), *run))
    return results


def _compile_and_validate(kernels, compiled, spec: str) -> tuple:
    """(the executable or None, (status, why)) of one target."""
    from ..targets.gpu import GpuCompileError, compile_gpu
    from ..targets.gpu.validate import find_tool, validate_executable
    target, _, arch = spec.partition(":")
    try:
        exe = compile_gpu(kernels, list(compiled.kernels), target, arch or None)
    except GpuCompileError as e:
        return None, ("fail-compile", str(e))
    except Exception as e:  # noqa: BLE001
        return None, ("fail-compile", f"internal error: {type(e).__name__}: {e}")
    missing = [t for t in VALIDATORS[target] if find_tool(t) is None]
    if missing:
        return exe, ("skip", f"compiled; not validated: {', '.join(missing)} not found (`make gpu-deps`)")
    try:
        validate_executable(exe)
    except GpuCompileError as e:
        return exe, ("fail-compile", f"validation: {e}")
    except Exception as e:  # noqa: BLE001
        return exe, ("fail-compile", f"validation: internal error: {type(e).__name__}: {e}")
    return exe, ("pass", "")



def _run_on_device(device: str, compiled, name: str, want) -> tuple:
    from ..compiler.module_writer import pack
    from ..vm.vm import LoadedModule, VMError
    try:
        got = LoadedModule(pack(compiled), device).function(name)()
    except VMError as e:
        return "fail-run", f"vm: {e}"
    except Exception as e:  # noqa: BLE001
        return "fail-run", f"internal error: {type(e).__name__}: {e}"
    if len(got) != len(want):
        return "mismatch", f"{len(got)} results, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        why = compare(g, w)
        if why:
            return "mismatch", f"result {i}: {why}"
    return "pass", ""


def tests(options) -> list[str]:
    return suite_files(options)


def result_names(test: str, options) -> list[str]:
    return [with_device(f"{test}@<file>", t) for t in labels(targets(options))]


#: The Python binding each device's runtime imports (loading its library, opening no device).
BINDINGS = {"vulkan": "vulkan", "opencl": "pyopencl"}


def warm(options) -> None:
    from ..compiler import driver, module_writer  # noqa: F401 - imported once, not in every test's process
    from ..targets.gpu import llvm_gpu, spirv, validate  # noqa: F401
    from ..vm import devices, vm  # noqa: F401
    from .lowering_suite import warm as warm_lowering
    warm_lowering(options)
    # The bindings of the devices this worker runs on, imported but not opened: a device opened
    # before the fork of a test would be shared, unsafely, by every test's process.
    for device in options.extra.get("placed_devices", ()):
        if device in BINDINGS:
            try:
                importlib.import_module(BINDINGS[device])
            except (ImportError, OSError):
                pass   # the test's run says what is missing, in its own words


def run(test: str, options) -> list[Result]:
    specs, placed = targets(options), tuple(options.extra.get("placed_devices", ()))
    outcomes = lower_file(options.path, test)
    results = []
    for name, o in zip(unique_names([o.function for o in outcomes]), outcomes):
        label = f"{test}@{name}"
        if o.reached != "llvm":
            results += [Result(with_device(label, t), "skip", "does not lower to llvm") for t in labels(specs)]
            continue
        results += check_function(label, o.function, o.texts["source"], specs, placed)
    return results or [Result(f"{test}@<file>", "skip", "no test functions")]
