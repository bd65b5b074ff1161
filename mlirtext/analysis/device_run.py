"""Run a function on a device, timed: the one place that picks the engine.

- `reference`: the interpreter, on the function as written (any level);
- `local-sync`, `local-task`: the module compiled for llvm-cpu (`mlirtext.compiler`), in memory,
  and loaded for that device by `mlirtext.vm` (native kernels one by one, or on a thread pool).

A compiled module is cached per module text (LRU), so running the same function again, or
on the other native device, skips the compile. The time is the median of a few calls after
a warm-up call (the first call of a loaded module allocates its memory pool).
"""
from __future__ import annotations

import statistics
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

DEVICES = ("reference", "local-sync", "local-task")

#: Timed calls after the warm-up: at most this many, no more than fit in TIME_BUDGET_S, at least one.
MAX_CALLS = 5
TIME_BUDGET_S = 0.5
#: A warm-up call slower than this is the time reported (no second call of a long run).
LONE_CALL_S = 2.0
#: Compiled modules kept (in memory, and each loaded for a device).
CACHE_SIZE = 16

#: Outputs "match" the reference when |got - ref| <= RTOL * (max(1, max |ref|) + |ref|)
#: elementwise: native kernels sum in another order than numpy, and expand transcendentals
#: into polynomials (the bound the VM's own tests use). Integers and booleans must be equal.
RTOL = 1e-5


class DeviceRunError(Exception):
    """A run that cannot be done, with a message for the user."""


@dataclass
class Timed:
    device: str
    outputs: list
    seconds: float                  # the median of the timed calls
    calls: int                      # how many calls the median is over
    warmed_up: bool                 # False when the first call took over LONE_CALL_S (then timed alone)
    compile_seconds: Optional[float]  # set when this run compiled the module (None: cached, or interpreted)

    @property
    def timing(self) -> str:
        if not self.warmed_up:
            return f"one call (it took over {LONE_CALL_S:g} s, so no warm-up)"
        return f"median of {self.calls} call{'s' if self.calls != 1 else ''} after a warm-up"


_lock = threading.Lock()
_compiled: "OrderedDict[str, object]" = OrderedDict()
_loaded: "OrderedDict[tuple, object]" = OrderedDict()


def _remember(cache: OrderedDict, key, value) -> None:
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > CACHE_SIZE:
        cache.popitem(last=False)


def _compiled_module(text: str, filename: str) -> tuple[object, Optional[float]]:
    """`text` compiled for llvm-cpu (a vm.modfile.InMemoryModule), and the compile time when it
    was not cached."""
    # (the compiler is imported on the first native run: importing it at start-up would take the
    # language server 0.35 s instead of 0.08 s to import this package)
    from ..compiler.driver import CompileFailed, compile_source
    from ..compiler.module_writer import in_memory
    module = _compiled.get(text)
    if module is not None:
        _compiled.move_to_end(text)
        return module, None
    started = time.perf_counter()
    try:
        module = in_memory(compile_source(text, filename, "llvm-cpu"))
    except CompileFailed as e:
        first = e.diagnostics[0].message if e.diagnostics else str(e)
        raise DeviceRunError(f"cannot compile for llvm-cpu: {first}") from None
    _remember(_compiled, text, module)
    return module, time.perf_counter() - started


def _native_function(text: str, filename: str, name: str, device: str) -> tuple[Callable, Optional[float]]:
    fn, compile_seconds = loaded_function(text, filename, name, device)
    return (lambda args: fn(*args)), compile_seconds


def loaded_function(text: str, filename: str, name: str, device: str):
    """(the VM's function `name` of `text` compiled for llvm-cpu and loaded on `device`, the
    compile time when it was not cached). DeviceRunError when it cannot be."""
    from ..vm.vm import LoadedModule, VMError
    with _lock:  # one compile at a time: two requests for the same text compile it once
        compiled, compile_seconds = _compiled_module(text, filename)
        key = (text, device)
        loaded = _loaded.get(key)
        if loaded is None:
            try:
                loaded = LoadedModule(compiled, device)
            except VMError as e:
                raise DeviceRunError(str(e)) from None
            _remember(_loaded, key, loaded)
        else:
            _loaded.move_to_end(key)
    try:
        return loaded.function(name), compile_seconds
    except VMError as e:
        raise DeviceRunError(str(e)) from None


def _interpreted_function(module, name: str) -> Callable:
    from ..interpreter import Interpreter
    return lambda args: Interpreter(module).call(name, args)


def run_on_device(text: str, name: str, args: list, device: str = "reference", *,
                  module=None, filename: str = "<input>") -> Timed:
    """Run function `name` of the MLIR module `text` on `device` with numpy `args`, timed.

    `module` (the parsed, verified `text`) saves a parse for the reference device. Raises
    DeviceRunError for an unknown device, a module that does not compile, or a failed call
    (the interpreter's and the VM's errors keep their own types: InterpreterError, VMError)."""
    if device not in DEVICES:
        raise DeviceRunError(f"unknown device '{device}' (devices: {', '.join(DEVICES)})")
    compile_seconds = None
    if device == "reference":
        if module is None:
            from .. import api
            result = api.parse_and_verify(text, filename)
            if not result.ok:
                raise DeviceRunError(result.diagnostics[0].format())
            module = result.module
        call = _interpreted_function(module, name)
    else:
        call, compile_seconds = _native_function(text, filename, name, device)
    outputs, seconds, calls, warmed = _timed_calls(call, args)
    return Timed(device, outputs, seconds, calls, warmed, compile_seconds)


def _timed_calls(call: Callable, args: list) -> tuple[list, float, int, bool]:
    started = time.perf_counter()
    outputs = call(args)
    first = time.perf_counter() - started
    if first > LONE_CALL_S:
        return outputs, first, 1, False
    count = max(1, min(MAX_CALLS, int(TIME_BUDGET_S / max(first, 1e-9))))
    times = []
    for _ in range(count):
        started = time.perf_counter()
        outputs = call(args)
        times.append(time.perf_counter() - started)
    return outputs, statistics.median(times), count, True


def compare(outputs: list, reference: list) -> tuple[bool, Optional[float], Optional[str]]:
    """(match, largest |difference| over all outputs, why not comparable) against the reference."""
    if len(outputs) != len(reference):
        return False, None, f"{len(outputs)} outputs, the reference has {len(reference)}"
    largest = 0.0
    match = True
    for i, (got, want) in enumerate(zip(outputs, reference)):
        got, want = np.asarray(got), np.asarray(want)
        if got.shape != want.shape:
            return False, None, f"result[{i}] has shape {got.shape}, the reference {want.shape}"
        if got.size == 0:
            continue
        if want.dtype.kind in "fc" or got.dtype.kind in "fc":
            wide = np.complex128 if "c" in (got.dtype.kind, want.dtype.kind) else np.float64
            g, w = got.astype(wide), want.astype(wide)
            same = (g == w) | (np.isnan(g) & np.isnan(w))   # equal infinities and NaNs count as equal
            with np.errstate(invalid="ignore"):   # inf - inf: NaN, then "same" decides
                diff = np.where(same, 0.0, np.abs(g - w))
            finite = np.abs(w[np.isfinite(w)])
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            if not np.all(diff <= RTOL * (scale + np.where(np.isfinite(w), np.abs(w), 0.0))):
                match = False
        else:
            diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
            if np.any(diff != 0):
                match = False
        worst = float(np.nanmax(np.where(np.isnan(diff), np.inf, diff)))
        largest = max(largest, worst)
    return match, largest, None
