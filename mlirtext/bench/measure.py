"""Measuring a module on every requested target and device.

For each target: compile the text (parse, verify, compile, pack: the module file's bytes). For each
device that runs what the target produced: load the module file. A target that compiles but that no
device here runs is a row of its own ("not run", with its size and compile time). Then the rows are
called and timed (timing.py), the baseline first.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Optional

import numpy as np

from ..diagnostics import Diagnostic
from .blas_threads import one_blas_thread
from .compare import TOLERANCE_TEXT
from .progress import Progress
from .rows import BASELINE, FAILED, NOT_RUN, OK, Row, speedup_over
from .timing import first_calls, method_text, timed_rounds

BASELINE_TARGET = BASELINE_DEVICE = "reference"

class BenchError(Exception):
    """A bench that cannot start (bad file, function, input or request), with its diagnostics."""

    def __init__(self, diagnostics: list):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass
class Settings:
    targets: list
    devices: list
    function: Optional[str] = None
    inputs: list = field(default_factory=list)     # --input specs; none: seeded random values
    rounds: int = 7
    warmup: int = 2
    seed: int = 0
    compare_iree: bool = False
    profile: bool = False           # profile `rounds` more calls on each VM device (vm/profile.py)


@dataclass
class Report:
    filename: str
    function: str
    inputs: list                    # their types, e.g. "tensor<64x512xf32>"
    rows: list                      # Row: the baseline first, then the others; targets not run last
    settings: Settings
    modules: dict                   # target -> module file bytes (its LLVM IR kept, for the page)
    compile_phases: dict            # target -> {phase: seconds} (parse, dispatch formation, codegen, ...)
    method: str = ""
    tolerance: str = TOLERANCE_TEXT
    profiles: list = field(default_factory=list)   # vm.profile.Profile per VM row, with settings.profile

    @property
    def baseline(self) -> Row:
        return self.rows[0]

    @property
    def input_source(self) -> str:
        s = self.settings
        return "given (--input)" if s.inputs else f"seeded random values (seed {s.seed}; floats in [-1, 1), " \
            "integers in [-8, 8])"


def _compile(text: str, filename: str, target: str) -> tuple[bytes, float, dict, bytes]:
    """(module file bytes, seconds, seconds per compile phase, the module file with its LLVM IR
    kept for the report page's dispatches) of `text` compiled for `target`."""
    from ..api import parse_and_verify
    from ..compiler.driver import CompileFailed, compile_module
    from ..compiler.module_writer import pack
    start = time.perf_counter()
    result = parse_and_verify(text, filename)
    if not result.ok:
        raise BenchError([d for d in result.diagnostics if d.severity == "error"] or result.diagnostics)
    parsed = time.perf_counter()
    try:
        compiled = compile_module(result.module, target)
    except CompileFailed as e:
        raise BenchError(e.diagnostics) from None
    packing = time.perf_counter()
    data = pack(compiled)
    end = time.perf_counter()
    phases = {"parse + verify": parsed - start, **compiled.timings, "packing": end - packing}
    return data, end - start, phases, pack(compiled, keep_llvm_ir=True) if compiled.llvm_ir else data


def _inputs(fn, settings: Settings) -> tuple[list, list]:
    """(arrays, their types as text) for `fn`: the --input values, else seeded random ones."""
    from ..analysis.commands import random_input
    from ..values import parse_inputs
    from ..vm.program import describe, record_type
    types = [record_type(r) for r in fn.inputs]
    if settings.inputs:
        arrays = parse_inputs(settings.inputs, fn.name, types)
    else:
        rng = np.random.default_rng(settings.seed)
        arrays = [random_input(t, rng) for t in types]
    return arrays, [describe(r) for r in fn.inputs]


def device_target(device: str) -> str:
    """The target whose code `device` runs: reference kernels on the reference device, native CPU
    code on local-sync and local-task, a GPU target's executables on its GPU device."""
    from ..vm import devices
    gpu = getattr(devices, "GPU_DEVICES", {})   # (GPU devices are newer than this module)
    return gpu.get(device) or (BASELINE_TARGET if device == BASELINE_DEVICE else "llvm-cpu")


def check_names(settings: Settings) -> None:
    from ..compiler.target_names import TARGETS
    from ..vm.devices import DEVICES
    problems = []
    for what, asked, known in (("target", settings.targets, TARGETS), ("device", settings.devices, DEVICES)):
        for name in asked:
            if name not in known:
                problems.append(Diagnostic("error", f"unknown {what} '{name}' ({what}s: {', '.join(known)})"))
    if settings.rounds < 1:
        problems.append(Diagnostic("error", f"--rounds must be at least 1 (got {settings.rounds})"))
    if settings.warmup < 0:
        problems.append(Diagnostic("error", f"--warmup cannot be negative (got {settings.warmup})"))
    if problems:
        raise BenchError(problems)


def run_bench(text: str, filename: str, settings: Settings, progress: Optional[Progress] = None,
              wrap_device=None) -> Report:
    """Measure `text` as `settings` ask, BLAS held to one thread (the baseline is one core's numpy:
    blas_threads.py). `wrap_device(row, call)` may replace a row's call (tests inject a faulty
    device through it). BenchError when the bench cannot start."""
    with one_blas_thread() as blas:
        measured = _measure(text, filename, settings, progress, wrap_device)
    measured.method += f"; the baseline: {blas}"
    return measured


def _measure(text: str, filename: str, settings: Settings, progress: Optional[Progress], wrap_device) -> Report:
    check_names(settings)
    progress = progress or Progress(enabled=False)
    targets = [BASELINE_TARGET] + [t for t in dict.fromkeys(settings.targets) if t != BASELINE_TARGET]
    runs = {t: [d for d in dict.fromkeys([BASELINE_DEVICE] * (t == BASELINE_TARGET) + settings.devices)
                if device_target(d) == t] for t in targets}
    progress.add(1 + len(targets) + 2 * sum(map(len, runs.values())) + settings.rounds)
    progress.step("loading the compiler and the VM")
    # Untimed: the first compile and load import the passes, the interpreter and the VM (a second
    # or more), a one-off cost of this process that is no target's or device's.
    warm, _, _, _ = _compile(text, filename, BASELINE_TARGET)
    _warm_load(warm)
    rows, unrun = [], []
    state = SimpleNamespace(fn_name=None, args=[], described=[], result_dtypes=[], modules={}, phases={})
    for target in targets:
        progress.step(f"compiling for {target}")
        try:
            data, seconds, state.phases[target], inspected = _compile(text, filename, target)
        except BenchError as e:
            if target == BASELINE_TARGET:
                raise
            unrun.append(Row(target, "-", status=FAILED, message="compile failed: " + e.diagnostics[0].message))
            continue
        why = []
        for device in runs[target]:
            progress.step(f"loading {target} on {device}")
            row = _load(data, seconds, target, device, settings, state, filename, why)
            if row is not None:
                if wrap_device is not None:
                    row.call = wrap_device(row, row.call)
                rows.append(row)
        if not any(r.target == target for r in rows):
            unrun.append(Row(target, "-", artifact_bytes=len(data), compile_s=seconds, status=NOT_RUN,
                             message="; ".join(why) or "no device in --devices runs it (devices for it: "
                             f"{', '.join(_devices_for(target)) or 'none yet'})"))
        state.modules[target] = inspected
    if settings.compare_iree:
        rows.extend(_iree_rows(text, state, settings, progress))
    first_calls(rows, state.args, settings.warmup, progress)
    timed_rounds(rows, state.args, settings.rounds, progress)
    baseline = rows[0]
    for row in rows[1:]:
        row.speedup = speedup_over(row, baseline)
    baseline.speedup = 1.0 if baseline.measured else None
    profiles = _profiles(rows, state.args, settings.rounds) if settings.profile else []
    progress.close()
    return Report(filename, state.fn_name, state.described, rows + unrun, settings, state.modules,
                  state.phases, method_text(settings.warmup, settings.rounds, settings.compare_iree), profiles=profiles)


def _profiles(rows: list, args: list, calls: int) -> list:
    """A profile of `calls` calls on each row that runs on the VM (after the timed rounds)."""
    from ..debugging.dispatch_trace import kernel_sources
    from ..vm.profile import Profile
    out = []
    for row in rows:
        fn = row.call
        if not row.measured or not hasattr(fn, "profiled"):
            continue
        profile = Profile(fn.name, row.label, kernel_sources(fn.module.file.reference_kernels()), pid=len(out) + 1)
        for _ in range(calls):
            fn.profiled(args, profile)
        out.append(profile)
    return out


def _warm_load(data: bytes) -> None:
    from ..vm.vm import LoadedModule, VMError
    try:
        LoadedModule(data, BASELINE_DEVICE)
    except VMError:
        pass   # reported by the baseline's own, timed, load


def _devices_for(target: str) -> list:
    from ..vm.devices import DEVICES
    return [d for d in DEVICES if device_target(d) == target]


def _load(data: bytes, compile_s: float, target: str, device: str, settings: Settings, state, filename: str,
          why: list) -> Optional[Row]:
    """The row of `target` on `device`, or None with the reason added to `why` (a device this
    machine lacks, for one). The baseline, the first row, also picks the function and its inputs."""
    from ..values import ValueError_
    from ..vm.devices import DeviceError
    from ..vm.program import record_dtype
    from ..vm.vm import LoadedModule, VMError
    is_baseline = state.fn_name is None
    try:
        start = time.perf_counter()
        module = LoadedModule(data, device)
        load_s = time.perf_counter() - start
        fn = module.entry_function(state.fn_name or settings.function)
        if is_baseline:
            state.fn_name = fn.name
            state.args, state.described = _inputs(fn, settings)
            state.result_dtypes = [record_dtype(r) for r in fn.results]
    except (VMError, ValueError_, DeviceError) as e:
        if is_baseline:
            raise BenchError([Diagnostic("error", f"{filename}: {e}")]) from None
        why.append(f"{device}: {e}")
        return None
    except Exception as e:  # noqa: BLE001 - a device that breaks while loading is reported, not fatal
        if is_baseline:
            raise
        why.append(f"{device}: failed to load ({type(e).__name__}: {e})")
        return None
    return Row(target, device, call=fn, artifact_bytes=len(data), compile_s=compile_s, load_s=load_s,
               peak_bytes=fn.plan["peak_bytes"], status=BASELINE if is_baseline else OK)


def _iree_rows(text: str, state, settings: Settings, progress: Progress) -> list:
    """IREE's rows: the same text through iree-compile, on IREE's drivers among --devices."""
    from . import iree
    missing = iree.available()
    if missing:
        raise BenchError([Diagnostic("error", f"--compare-iree: {missing}")])
    drivers = [d for d in settings.devices if d in iree.DRIVERS] or ["local-task"]
    progress.add(1 + len(drivers))
    progress.step("compiling with iree-compile")
    try:
        vmfb, seconds = iree.iree_compile(text)
    except iree.IreeUnavailable as e:
        return [Row("iree llvm-cpu", "-", status=FAILED, message=str(e))]
    rows = []
    for driver in drivers:
        progress.step(f"loading the IREE module on {driver}")
        try:
            start = time.perf_counter()
            call = iree.iree_function(vmfb, driver, state.fn_name, state.result_dtypes)
            load_s = time.perf_counter() - start
        except iree.IreeUnavailable as e:
            rows.append(Row("iree llvm-cpu", driver, status=FAILED, message=str(e)))
            continue
        rows.append(Row("iree llvm-cpu", driver, call=call, artifact_bytes=len(vmfb), compile_s=seconds,
                        load_s=load_s))
    return rows


