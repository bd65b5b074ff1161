"""Devices: where the kernels of a module run.

- `reference`: the kernels (linalg on tensors, as IR: parsed once from a file) on mlirtext's
  interpreter; slow, obviously right.
- `local-sync`: the native kernels (llvm-cpu), one after another on the calling thread.
- `local-task`: the native kernels on the calling thread and helper threads that wait for work in
  native code (native_pool.py): dispatches whose inputs are ready and whose buffers are free run
  at the same time, and a dispatch split into workgroups is shared by all the threads.

A device turns each kernel into a callable `(inputs, outputs) -> None` that writes the outputs in
place; `execute(steps, waves)` runs a host program's dispatches, in order or wave by wave.
"""
from __future__ import annotations

import ctypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import limits
from ..interpreter import Interpreter, InterpreterError
from ..ir.core import Operation
from .device_names import DEVICES, GPU_DEVICES
from .modfile import ModuleFileError
from . import native_pool
from .native_pool import NativeCall, Wave
from .call_program import CallProgram


SCALAR_CTYPES = {
    "i1": ctypes.c_bool, "i8": ctypes.c_int8, "i16": ctypes.c_int16, "i32": ctypes.c_int32,
    "i64": ctypes.c_int64, "index": ctypes.c_int64, "f32": ctypes.c_float, "f64": ctypes.c_double,
    "ui8": ctypes.c_uint8, "ui16": ctypes.c_uint16, "ui32": ctypes.c_uint32, "ui64": ctypes.c_uint64,
    "si8": ctypes.c_int8, "si16": ctypes.c_int16, "si32": ctypes.c_int32, "si64": ctypes.c_int64}


class DeviceError(Exception):
    """A device cannot run this module (and why)."""


def check_device_buffers(device: str, kernel: str, sizes, capacity: int | None) -> None:
    """Before a GPU dispatch allocates its buffers in device memory (a copy of each input, its
    outputs and the scratch buffers the executable declares, `sizes` in bytes, all held at once):
    DeviceError when their total is above the memory limit (--max-memory) or above `capacity`,
    the device's own memory where its driver reports it, instead of a failed allocation halfway
    through the buffers or a driver that pages."""
    total = sum(int(n) for n in sizes)
    what = f"{device} kernel @{kernel} (its buffers on the device)"
    try:
        limits.check(total, what)
    except limits.MemoryLimitError as e:
        raise DeviceError(str(e)) from None
    if capacity is not None and total > capacity:
        raise DeviceError(f"{what} needs {limits.format_size(total)}, above the {limits.format_size(capacity)} "
                          "of the device's memory")


def _address(a: np.ndarray) -> int:
    try:   # (a few times faster than building __array_interface__: this is per-call overhead)
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    except (TypeError, ValueError):   # read-only or empty
        return a.__array_interface__["data"][0]


class _ReadOnlyAddresses:
    """A kernel's input addresses, remembered per position for read-only arrays: the module's
    constants (read-only views, vm.py) come back at every call as the same objects, and a read-only
    array's address costs ~1.3 us to read (`__array_interface__`; ~0.3 us for a writable one), a
    dispatch's weights and biases ~0.15 ms of each mobilenet_v3_small call. A slot holds an
    (array, address) pair, replaced whole, so a thread never reads one array's address for another;
    holding the array keeps its buffer (and so the address) alive. Writable arrays (the call's
    buffers, which may be large and fresh at every call) are not held."""

    def __init__(self, count: int):
        self.slots = [(None, 0)] * count

    def address(self, i: int, a: np.ndarray) -> int:
        held = self.slots[i]
        if held[0] is a:
            return held[1]
        if a.flags.writeable:
            return _address(a)
        self.slots[i] = held = (a, _address(a))
        return held[1]


class ReferenceDevice:
    name = "reference"

    def __init__(self, kernels_module: Operation, kernels: dict):
        self.interp = Interpreter(kernels_module)
        self.kernels = kernels
        self.lock = threading.Lock()  # the interpreter keeps per-run state

    def kernel(self, name: str):
        interp, lock = self.interp, self.lock

        def run(inputs, outputs) -> None:
            with lock:
                try:
                    results = interp.call(name, [np.asarray(a) for a in inputs])
                except InterpreterError as e:
                    raise DeviceError(f"reference kernel @{name}: {e}") from None
            for out, value in zip(outputs, results):
                np.copyto(out, np.asarray(value).reshape(out.shape), casting="unsafe")
        return run

    def execute(self, steps, waves) -> None:
        for step in steps:
            step()


class LocalSyncDevice:
    name = "local-sync"

    def __init__(self, object_code: bytes, kernels: dict):
        from ..targets.llvm_cpu import load_object
        try:
            self.library = load_object(object_code)
        except Exception as e:  # noqa: BLE001 - a bad object is refused, never a crash
            raise DeviceError(f"the llvm-cpu executable cannot be loaded: {e}") from None
        self.kernels = kernels
        self._programs: dict[int, list] = {}   # id(waves) -> CallPrograms ready for a call

    def kernel(self, name: str):
        spec = self.kernels[name]
        argtypes = []
        converters = []   # per input: None (a buffer: its address) or a ctypes scalar type
        for rec in spec["inputs"]:
            if rec["shape"] is None:
                ctype = SCALAR_CTYPES.get(rec["element"])
                if ctype is None:
                    raise DeviceError(f"kernel @{name}: scalar {rec['element']} arguments are not supported "
                                      "natively (run it with --device=reference)")
                argtypes.append(ctype)
                converters.append(ctype)
            else:
                argtypes.append(ctypes.c_void_p)
                converters.append(None)
        groups = spec.get("workgroups")
        if groups:  # the row range [begin, end) of the split axis
            argtypes += [ctypes.c_int64, ctypes.c_int64]
        argtypes += [ctypes.c_void_p] * len(spec["outputs"])
        try:
            fn = ctypes.CFUNCTYPE(None, *argtypes)(self.library.address(name))
        except KeyError:
            raise DeviceError(f"the llvm-cpu executable has no kernel @{name}") from None
        count = groups["count"] if groups else 0
        whole = (0, count) if groups else ()

        known = _ReadOnlyAddresses(len(converters))
        buffers_only = all(c is None for c in converters)

        def arguments(inputs) -> list:
            if buffers_only:
                return [known.address(i, a) for i, a in enumerate(inputs)]
            return [known.address(i, a) if c is None else c(np.asarray(a)[()].item())
                    for i, (a, c) in enumerate(zip(inputs, converters))]

        def run(inputs, outputs, rows=None) -> None:
            fn(*arguments(inputs), *(rows if rows is not None else whole), *[_address(o) for o in outputs])
        whole_call = NativeCall(argtypes, self.library.address(name))
        run.workgroups = count
        run.arguments = arguments
        run.argtypes = argtypes
        run.item = lambda inputs, outputs: whole_call.item(
            (*arguments(inputs), *whole, *[_address(o) for o in outputs]))   # (the call, for a native program)
        return run

    def execute(self, steps, waves) -> None:
        """The steps in order; from the second call of a function of PROGRAM_STEPS dispatches or
        more, as one native program kept for its next calls (call_program.py, native_pool.py: no
        Python between the kernels, ~3 us less a dispatch; mobilenet_v3_small 1.80 ms a call of CPU
        time, was 2.00). A first call, or a small function's, calls each step: a process that makes
        one call does not compile the native runner (~7 ms)."""
        if len(steps) >= PROGRAM_STEPS:
            if id(waves) in self._programs:
                program = self._kept_program(steps, waves)
                native_pool.native().run_program(None, program.program.address, 0, 0)
                self._keep(waves, program)
                return
            self._programs[id(waves)] = []   # (a program from its next call on)
        for step in steps:
            step()

    def _kept_program(self, steps, waves) -> CallProgram:
        """A kept program of `waves` readied for `steps`, or a new one."""
        if len(self._programs) > PROGRAMS_FUNCTIONS:   # (a traced call's waves are new at every call)
            self._programs.clear()
        kept = self._programs.setdefault(id(waves), [])
        try:   # (pop is atomic: two threads calling at once get one each, or none)
            program = kept.pop(0)
        except IndexError:
            program = None
        if program is not None and program.waves is waves and program.reusable(self._oldest_seen):
            program.update(steps)
            return program
        if program is not None and program.waves is waves:   # (a helper may still be in it: next time)
            kept.insert(0, program)
        return CallProgram(steps, waves, self.library)

    def _keep(self, waves, program: CallProgram) -> None:
        kept = self._programs.setdefault(id(waves), [])
        if len(kept) < PROGRAMS_KEPT:
            kept.append(program)

    def _oldest_seen(self) -> int:
        """The oldest generation a helper thread may still read (call_program.py): none here."""
        return native_pool.NEVER


class LocalTaskDevice(LocalSyncDevice):
    name = "local-task"
    _pool = None
    _pool_lock = threading.Lock()

    def __init__(self, object_code: bytes, kernels: dict, workers: int | None = None):
        super().__init__(object_code, kernels)
        self.workers = workers or self.default_workers()

    def kernel(self, name: str):
        """As local-sync's, plus for a kernel split into workgroups,
        `run.shared(inputs, outputs, grain)`: its dispatch as a `SharedDispatch`
        (compiler/work_queue.py)."""
        run = super().kernel(name)
        count = run.workgroups
        arguments = run.arguments
        groups = self.kernels[name].get("workgroups") or {}
        if groups.get("take"):
            inputs = len(self.kernels[name]["inputs"])
            argtypes = run.argtypes[:inputs] + [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64] + \
                run.argtypes[inputs + 2:]
            try:
                take = NativeCall(argtypes, self.library.address(groups["take"]))
            except KeyError:
                raise DeviceError(f"the llvm-cpu executable has no kernel @{groups['take']}") from None
            library = self.library
            run.shared = lambda inputs, outputs, grain: SharedDispatch(
                take, arguments(inputs), [_address(o) for o in outputs], grain, count, library)
        return run

    @staticmethod
    def default_workers() -> int:
        """One thread per CPU this process may run on."""
        try:
            return len(os.sched_getaffinity(0)) or 1
        except AttributeError:   # (not on Linux)
            return os.cpu_count() or 1

    @classmethod
    def pool(cls, workers: int) -> ThreadPoolExecutor:
        with cls._pool_lock:
            if cls._pool is None:
                cls._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mlirtext-task")
            return cls._pool

    def execute(self, steps, waves, helpers: bool = True) -> None:
        """Wave by wave (`helpers=False`: all on the calling thread, thread_choice.py): the
        dispatches of one wave do not depend on each other. The calling thread publishes a wave
        to the helper threads, which wait for it in native code (native_pool.py), and works on it
        too: whole dispatches are taken one at a time from a counter; a dispatch split into
        workgroups (`steps[i].share()` makes its SharedDispatch) is worked on by every thread at
        once, each taking workgroups from its counter (work sharing, as IREE's task system steals
        work): on a loaded machine a thread that is not scheduled does less, instead of the call
        waiting for its fixed share. The waves and the dispatches between them run as one native
        program (native_pool.py: no Python between them), kept for the function's next calls. A
        call whose waves are all single dispatches run whole, or one the calling thread runs alone,
        runs as local-sync's."""
        if not helpers or self.workers == 1 or not any(
                len(wave) > 1 or getattr(steps[wave[0]], "share", None) is not None for wave in waves):
            super().execute(steps, waves)
            return
        pool = native_pool.pool(self.workers - 1)
        program = self._kept_program(steps, waves)
        pool.run_program(program.program)
        self._keep(waves, program)

    def _oldest_seen(self) -> int:
        # (asked only of a program the helpers ran: their pool exists)
        return native_pool.pool(self.workers - 1).oldest_seen() if self.workers > 1 else native_pool.NEVER


#: Programs kept per function, used in turn (call_program.py), for up to this many functions.
PROGRAMS_KEPT = 2
PROGRAMS_FUNCTIONS = 64
#: A function of fewer dispatches calls each from Python (making a program costs more than it saves).
PROGRAM_STEPS = 4


class SharedDispatch:
    """One call's dispatch of a kernel split into workgroups, shared by the threads that run its
    item (the wrapper: compiler/work_queue.py, called through native_pool.py's trampoline): its
    counters (next workgroup, workgroups done; a cache line apart, as every thread writes them)
    live as long as a thread may still look at them. It also holds the loaded object code
    (`library`): a helper thread that comes after the call has returned still calls the wrapper
    (which finds no workgroup left), and the module may be gone by then; its code unmapped under
    that thread was a segfault."""

    def __init__(self, take: NativeCall, arguments: list, outputs: list, grain: int, count: int, library):
        self.counters = (ctypes.c_int64 * 16)()
        base = ctypes.addressof(self.counters)
        self.item = take.item((*arguments, base, base + 64, grain, *outputs))
        self.take, self.done_address = take, base + 64
        self.count, self.library = count, library

    def work(self) -> None:
        self.take.call(self.item)

    def reset(self) -> None:
        """Ready to run again (no thread may be in it): no workgroup taken or done."""
        self.counters[0] = self.counters[8] = 0


def make_device(name: str, module_file):
    manifest = module_file.manifest
    kernels = manifest["kernels"]
    executables = manifest["executables"]
    if name == "reference":
        ref = executables.get("reference")
        if ref is None:
            raise DeviceError("the module file has no reference executable")
        try:
            return ReferenceDevice(module_file.reference_kernels(), kernels)
        except ModuleFileError as e:
            raise DeviceError(str(e)) from None
    if name in ("local-sync", "local-task"):
        exe = executables.get("llvm-cpu")
        if exe is None:
            if not kernels:
                return _NoKernels()
            raise DeviceError(f"the module file has no llvm-cpu executable (compiled for target "
                              f"'{manifest.get('target')}'); use --device=reference or recompile with "
                              "--target=llvm-cpu")
        _check_cpu(exe)
        code = module_file.entry(exe["object"])
        return (LocalTaskDevice if name == "local-task" else LocalSyncDevice)(code, kernels)
    if name in GPU_DEVICES:
        return _gpu_device(name, module_file)
    raise DeviceError(f"unknown device '{name}' (devices: {', '.join(DEVICES)})")


def _gpu_device(name: str, module_file):
    manifest = module_file.manifest
    target = GPU_DEVICES[name]
    exe = manifest["executables"].get(target)
    if exe is None:
        if not manifest["kernels"]:
            return _NoKernels()
        raise DeviceError(f"the module file has no {target} executable (compiled for target "
                          f"'{manifest.get('target')}'); recompile with --target={target} (targets can be "
                          "combined: --target=llvm-cpu,cuda,rocm,vulkan-spirv,opencl-spirv)")
    code = {kernel: module_file.entry(info["code"]) for kernel, info in exe["kernels"].items()}
    if name == "vulkan":
        from .vulkan_device import VulkanDevice
        return VulkanDevice(exe, code, manifest["kernels"])
    if name == "opencl":
        from .opencl_device import OpenCLDevice
        return OpenCLDevice(exe, code, manifest["kernels"])
    from .cuda_device import CudaDevice
    return CudaDevice(exe, code, manifest["kernels"])


class _NoKernels:
    """A module whose functions dispatch nothing (they only reshape or return their inputs)."""
    name = "local-sync"

    def kernel(self, name):
        raise DeviceError(f"no kernel @{name}")

    def execute(self, steps, waves) -> None:
        for step in steps:
            step()


def _check_cpu(exe: dict) -> None:
    """Native code built for features this CPU lacks would die on an illegal instruction: refuse it."""
    import llvmlite.binding as llvm
    from ..targets.llvm_cpu import host_target_machine
    host_target_machine()  # initialises LLVM's native target
    if exe.get("triple") and exe["triple"].split("-")[0] != llvm.get_process_triple().split("-")[0]:
        raise DeviceError(f"the llvm-cpu executable is for {exe['triple']}, this machine is "
                          f"{llvm.get_process_triple()}")
    have = {k for k, v in llvm.get_host_cpu_features().items() if v}
    missing = sorted(set(exe.get("features", [])) - have)
    if missing:
        raise DeviceError(f"the llvm-cpu executable was built for a CPU with features this one lacks "
                          f"({', '.join(missing[:6])}{'...' if len(missing) > 6 else ''}); recompile it here "
                          "or use --device=reference")
