"""The VM: a loaded module file, its exported functions, and the loop that runs a host program.

Loading checks the file (modfile.read_module_file), then every host program against the kernels'
bindings (each buffer a dispatch reads or writes has the kernel's shape and type), and only then
links native code. A call checks its inputs against the signature (count, shape, element type,
naming the argument), takes its transient buffers from the memory plan's pool (one arena per
function, reused between calls), fresh buffers for its results (or the caller's, `out=`), and
hands the dispatches to the device.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from .devices import DeviceError, make_device
from .modfile import InMemoryModule, ModuleFile, ModuleFileError, open_module_file, read_module_file, verify_signature
from ..ir import types as T
from ..ir.arrays import narrow_ints_as_storage, wrap_to_width
from .. import limits
from .program import describe, record_dtype, record_type, storage
from .thread_choice import ThreadChoice


class VMError(Exception):
    """A call or a load that cannot proceed, with a message for the user."""


def exported_function(functions: dict, name: str):
    """`functions[name]` (`@name` too), or a VMError listing the exports."""
    f = functions.get(name.lstrip("@"))
    if f is None:
        raise VMError(f"the module has no exported function @{name.lstrip('@')} "
                      f"(exports: {', '.join('@' + n for n in functions) or 'none'})")
    return f


def entry_function(functions: dict, name: str | None):
    """The function `name`, or with no name the module's only export (VMError when it has several)."""
    if name is not None:
        return exported_function(functions, name)
    if len(functions) != 1:
        raise VMError(f"--function is needed: the module exports {len(functions)} functions "
                      f"({', '.join('@' + n for n in functions) or 'none'})")
    return next(iter(functions.values()))


@dataclass
class Statistics:
    calls: int = 0
    dispatches: int = 0
    seconds: float = 0.0


class Function:
    """One exported function: `f(*arrays)` returns its results (a list)."""

    def __init__(self, export: dict, program: dict, module: "LoadedModule"):
        self.name = export["name"]
        self.inputs = program["inputs"]
        self.results = program["results"]
        self.program = program
        self.plan = program["plan"]
        self.module = module
        self.stats = Statistics()
        self._arena = None
        self._arena_lock = threading.Lock()
        self._prepare()

    # -- load time --------------------------------------------------------------------------------
    def _prepare(self) -> None:
        """Check the program against the kernels' bindings; precompute the per-call work."""
        kernels = self.module.manifest["kernels"]
        device = self.module.device
        self._slots = {i["dst"]: i["slot"] for i in self.program["instructions"] if i["op"] == "alloc"}
        recs: dict = {i: (tuple(storage(r)["shape"] or ()), record_dtype(storage(r)))
                      for i, r in enumerate(self.inputs)}
        self.setup = []            # (kind, dst, payload) for constants, allocs and views
        self.dispatches = []       # (kernel callable, input regs, output regs, name)
        self.dispatch_outputs = []  # per dispatch, (shape, dtype) of each output
        root, writer = {}, {}
        slot_users: dict = {}
        self.returns = []          # (register, copy?) per result
        self._out_allocs = {}      # result alloc register -> result index: written in place with out=
        fresh = []                 # (bytes, what) of each buffer a call allocates outside the pool
        deps = []
        for ins in self.program["instructions"]:
            op = ins["op"]
            if op == "constant":
                array = self.module.constants[ins["name"]]
                recs[ins["dst"]] = (array.shape, array.dtype)
                self.setup.append(("constant", ins["dst"], array))
            elif op == "alloc":
                shape, dtype = tuple(ins["shape"]), record_dtype(ins)
                recs[ins["dst"]] = (shape, dtype)
                root[ins["dst"]] = ins["dst"]
                offset = self.plan["offsets"][ins["slot"]] if ins["slot"] >= 0 else -1
                if offset < 0:
                    fresh.append((math.prod(shape) * dtype.itemsize, describe(ins)))
                self.setup.append(("alloc", ins["dst"], (shape, dtype, offset, ins["slot"])))
            elif op == "view":
                shape, dtype = recs[ins["src"]]
                new = tuple(ins["shape"])
                if math.prod(new) != math.prod(shape):
                    raise VMError(f"module file: @{self.name}: a view changes the element count")
                recs[ins["dst"]] = (new, dtype)
                if ins["src"] in root:
                    root[ins["dst"]] = root[ins["src"]]
                self.setup.append(("view", ins["dst"], (ins["src"], new)))
            elif op == "dispatch":
                spec = kernels[ins["kernel"]]
                for regs, want, what in ((ins["ins"], spec["inputs"], "input"), (ins["outs"], spec["outputs"], "output")):
                    for j, (r, rec) in enumerate(zip(regs, want)):
                        if recs[r] != (tuple(rec["shape"] or ()), record_dtype(rec)):
                            raise VMError(f"module file: @{self.name}: {what} {j} of @{ins['kernel']} is "
                                          f"{recs[r]}, the kernel takes {describe(rec)}")
                index = len(self.dispatches)
                mine = set()
                for r in ins["ins"]:
                    if r in root:
                        mine.add(writer.get(root[r]))
                        slot = self._slot_of(root[r])
                        if slot >= 0:
                            slot_users.setdefault(slot, set()).add(index)
                for r in ins["outs"]:
                    writer[r] = index
                    slot = self._slot_of(r)
                    if slot >= 0:  # the slot's previous occupants must be done with it
                        mine |= slot_users.get(slot, set())
                        slot_users[slot] = {index}
                mine.discard(None)
                mine.discard(index)
                deps.append(mine)
                self.dispatches.append((device.kernel(ins["kernel"]), ins["ins"], ins["outs"], ins["kernel"]))
                self.dispatch_outputs.append([recs[r] for r in ins["outs"]])
            elif op == "return":
                seen = set()
                for r in ins["values"]:
                    own = r in root and self._slot_of(root[r]) < 0 and root[r] not in seen
                    if own:
                        seen.add(root[r])
                    self.returns.append((r, not own))
                # A result the kernels write in its caller's type (no conversion after the call) can
                # be written straight into a buffer the caller gives (`out=`); the others are copied there.
                self._out_allocs = {root[r]: i for i, (r, copy) in enumerate(self.returns)
                                    if not copy and recs[root[r]][1] == record_dtype(self.results[i])
                                    and not _narrow_int(self.results[i])}
        self._copied_out = [i for i in range(len(self.returns)) if i not in self._out_allocs.values()]
        self.largest_fresh = max(fresh, default=(0, ""))  # checked against the memory limit per call
        self.waves = _waves(deps)
        workers = getattr(device, "workers", 1)
        self.grains = []
        for kernel, ins, outs, _ in self.dispatches:
            nbytes = sum(math.prod(recs[r][0]) * recs[r][1].itemsize for r in (*ins, *outs))
            shared = getattr(kernel, "shared", None) is not None
            self.grains.append(_grain(kernel.workgroups, workers, nbytes) if shared else 0)
        # (local-task: whether helpers join a call is measured, thread_choice.py)
        sharing = any(self.grains) or any(len(w) > 1 for w in self.waves)
        self.thread_choice = ThreadChoice() if workers > 1 and sharing else None
        self.registers = self.program["registers"]
        self.in_views = [_storage_view(r) for r in self.inputs]
        self._input_types = [(tuple(r["shape"]) if r["shape"] is not None else None, record_dtype(r))
                             for r in self.inputs]
        self.out_views = [_result_view(r) for r in self.results]
        self._result_types = [(tuple(r["shape"] or ()), record_dtype(r)) for r in self.results]
        self._split_setup()

    def _split_setup(self) -> None:
        """Which setup entries give the same array at every call that uses the held pool (constants,
        the pool's views, views of those: `_fixed`, kept from one such call to the next) and which
        are per call (`_call_setup`: views of the caller's inputs, buffers returned to the caller)."""
        self._fixed: set = set()
        self._call_setup = []
        for kind, dst, payload in self.setup:
            if kind == "constant" or (kind == "alloc" and payload[2] >= 0) or \
                    (kind == "view" and payload[0] in self._fixed):
                self._fixed.add(dst)
            else:
                self._call_setup.append((kind, dst, payload))
        self._fixed_regs = None
        own = set(range(len(self.inputs))) | {dst for _, dst, _ in self._call_setup}
        # the dispatches that touch a call's own arrays (the caller's, views of them, fresh results)
        self._call_dispatches = [i for i, (_, ins, outs, _) in enumerate(self.dispatches)
                                 if any(r in own for r in (*ins, *outs))]
        self._last_steps = None   # of the last call that used the held pool

    @staticmethod
    def _run_setup(entries, regs: list, arena: np.ndarray, given: dict | None = None) -> None:
        """`given`: alloc register -> the caller's buffer (`out=`) that stands for it."""
        for kind, dst, payload in entries:
            if kind == "view":
                regs[dst] = regs[payload[0]].reshape(payload[1])
            elif kind == "alloc":
                shape, dtype, offset, _slot = payload
                if given and dst in given:
                    regs[dst] = given[dst].reshape(shape)
                elif offset < 0:
                    regs[dst] = np.empty(shape, dtype)
                else:
                    count = math.prod(shape)
                    regs[dst] = arena[offset:offset + count * dtype.itemsize].view(dtype).reshape(shape)
            else:
                regs[dst] = payload

    def _slot_of(self, alloc_reg: int) -> int:
        return self._slots.get(alloc_reg, -1)

    # -- call time --------------------------------------------------------------------------------
    def check_inputs(self, args) -> list:
        if len(args) != len(self.inputs):
            raise VMError(f"@{self.name} takes {len(self.inputs)} argument(s) "
                          f"({', '.join(describe(r) for r in self.inputs) or 'none'}), got {len(args)}")
        out = []
        for i, (value, rec) in enumerate(zip(args, self.inputs)):
            shape, dtype = self._input_types[i]
            if type(value) is np.ndarray and value.shape == shape and value.dtype == dtype:  # the common case
                out.append(self.in_views[i](np.require(value, requirements="C")))
                continue
            what = f"argument {i}" + (f" (%{rec['name']})" if rec.get("name") else "") + f" of @{self.name}"
            if rec["shape"] is None:
                a = np.asarray(value)
                if a.ndim != 0:
                    raise VMError(f"{what}: expected a scalar {rec['element']}, got shape "
                                  f"{'x'.join(map(str, a.shape))}")
                if a.dtype != dtype:
                    if a.dtype.kind in "biu" and dtype.kind in "biu" or a.dtype.kind == dtype.kind == "f" or \
                            (a.dtype.kind in "biu" and dtype.kind == "f" and isinstance(value, (int, float))):
                        a = a.astype(dtype)
                    else:
                        raise VMError(f"{what}: expected {rec['element']}, got {a.dtype}")
                out.append(self.in_views[i](a))
                continue
            if not isinstance(value, np.ndarray):
                raise VMError(f"{what}: expected a numpy array ({describe(rec)}), got {type(value).__name__}")
            value = narrow_ints_as_storage(value)
            if tuple(value.shape) != tuple(rec["shape"]):
                raise VMError(f"{what}: expected {describe(rec)}, got shape "
                              f"{'x'.join(map(str, value.shape)) or 'a scalar'}")
            if value.dtype != dtype:
                raise VMError(f"{what}: expected element type {rec['element']} ({dtype.name}), got {value.dtype.name}")
            out.append(self.in_views[i](np.require(value, requirements="C")))
        return out

    def _take_arena(self):
        if not self._arena_lock.acquire(blocking=False):
            return self._new_arena(), False   # a concurrent call: its own arena
        if self._arena is None:
            try:
                self._arena = self._new_arena()
            except VMError:
                self._arena_lock.release()
                raise
        return self._arena, True

    def _new_arena(self) -> np.ndarray:
        nbytes = self.plan["pool_bytes"]
        _check_memory(nbytes, f"@{self.name}'s buffer pool")
        return _new_arena(nbytes)

    def __call__(self, *args, out=None):
        """The results (a list). With `out` (an array per result, or one array for a function with
        one result), the results are written into those arrays, which are returned: C-contiguous,
        writable, of the result's shape and element type, and overlapping no argument. Repeated
        calls then reuse the caller's buffers, as IREE's staged device buffers are reused, instead
        of a fresh array per result per call."""
        return self._call(args, self._execute, out)

    def check_outputs(self, out, args) -> list:
        if isinstance(out, np.ndarray):
            out = (out,)
        if not isinstance(out, (list, tuple)) or len(out) != len(self.results):
            raise VMError(f"@{self.name}: out= takes {len(self.results)} array(s), one per result")
        for i, (a, rec, (shape, dtype)) in enumerate(zip(out, self.results, self._result_types)):
            fits = type(a) is np.ndarray and a.shape == shape and a.dtype == dtype and \
                a.flags.c_contiguous and a.flags.writeable   # (the common case, checked first: per-call cost)
            if not fits:
                what = f"out[{i}] of @{self.name}"
                if not isinstance(a, np.ndarray):
                    raise VMError(f"{what}: expected a numpy array ({describe(rec)}), got {type(a).__name__}")
                if a.shape != shape or a.dtype != dtype:
                    raise VMError(f"{what}: expected {describe(rec)} ({dtype.name}), got shape "
                                  f"{'x'.join(map(str, a.shape)) or 'a scalar'} of {a.dtype.name}")
                if not (a.flags.c_contiguous and a.flags.writeable):
                    raise VMError(f"{what}: must be C-contiguous and writable")
            for j, arg in enumerate(args):
                if isinstance(arg, np.ndarray) and np.may_share_memory(a, arg):
                    raise VMError(f"out[{i}] of @{self.name} overlaps argument {j}: the kernels would read "
                                  "what they write")
            for k in range(i):
                if np.may_share_memory(a, out[k]):
                    raise VMError(f"out[{i}] of @{self.name} overlaps out[{k}]")
        return out

    def traced(self, args, observe):
        """Call with `args`, running the dispatches one at a time, in program order, on the device;
        `observe(index, kernel name, inputs, outputs, seconds)` sees copies of each one's inputs
        taken before it ran and its output buffers right after (copy what is to be kept: the
        memory plan reuses them)."""
        def execute(steps, regs) -> None:
            for index, (step, (_, ins, outs, kernel)) in enumerate(zip(steps, self.dispatches)):
                inputs = [np.array(regs[r], copy=True) for r in ins]
                begin = time.perf_counter()
                try:
                    self.module.device.execute([step], [[0]])
                except DeviceError as e:
                    raise VMError(str(e)) from None
                seconds = time.perf_counter() - begin
                observe(index, kernel, inputs, [regs[r] for r in outs], seconds)
        return self._call(args, execute)

    def profiled(self, args, profile):
        """Call with `args`, recorded by `profile` (vm/profile.py): the dispatches run one at a
        time in program order, each timed; a dispatch split into workgroups is shared by the
        device's threads as in a plain call, but its ranges are taken in Python, one range per
        take, so that each range is timed on the thread that ran it."""
        device = self.module.device
        workers = getattr(device, "workers", 1)

        def execute(steps, regs) -> None:
            profile.buffers_made(self.allocations(), self.plan["pool_bytes"])
            for index, ((kernel, ins, outs, name), grain) in enumerate(zip(self.dispatches, self.grains)):
                inputs, outputs = [regs[r] for r in ins], [regs[r] for r in outs]
                count = getattr(kernel, "workgroups", 0)
                begin = time.perf_counter()
                try:
                    if grain and workers > 1:
                        _share_ranges(kernel, inputs, outputs, count, grain, device.pool(workers), workers,
                                      lambda first, last, b, e, i=index: profile.workgroups(i, first, last, b, e))
                    else:
                        kernel(inputs, outputs)
                        if count:
                            profile.workgroups(index, 0, count, begin, time.perf_counter())
                except DeviceError as e:
                    raise VMError(str(e)) from None
                profile.dispatch(index, name, begin, time.perf_counter(), count, grain if workers > 1 else 0)
        profile.begin_call()
        results = self._call(args, execute)
        profile.end_call()
        return results

    def allocations(self) -> list[dict]:
        """The buffers a call makes: register, bytes, and whether they are views of the pool."""
        out = []
        for kind, dst, payload in self.setup:
            if kind == "alloc":
                shape, dtype, offset, _slot = payload
                out.append({"register": dst, "bytes": math.prod(shape) * dtype.itemsize, "pooled": offset >= 0})
        return out

    def replay(self, index: int, inputs: list) -> list:
        """Run dispatch `index` alone on the device on `inputs` (as a traced call saw them),
        into fresh output buffers, which it returns."""
        kernel = self.dispatches[index][0]
        outputs = [np.zeros(shape, dtype) for shape, dtype in self.dispatch_outputs[index]]
        ins = [np.require(a, requirements="C") for a in inputs]
        try:
            self.module.device.execute([lambda: kernel(ins, outputs)], [[0]])
        except DeviceError as e:
            raise VMError(str(e)) from None
        return outputs

    def _execute(self, steps, regs) -> None:
        try:
            if self.thread_choice is None:
                self.module.device.execute(steps, self.waves)
            else:
                helpers = self.thread_choice.pick()
                begin = time.perf_counter()
                self.module.device.execute(steps, self.waves, helpers)
                self.thread_choice.record(helpers, time.perf_counter() - begin)
        except DeviceError as e:
            raise VMError(str(e)) from None

    def _call(self, args, execute, out=None):
        start = time.perf_counter()
        if not self.module.ready:
            self.module.verify()
        inputs = self.check_inputs(args)
        given = None
        if out is not None:
            out = self.check_outputs(out, args)
            given = {reg: out[i] for reg, i in self._out_allocs.items()}
        regs = [None] * self.registers
        regs[:len(inputs)] = inputs
        if self.largest_fresh[0] > limits.max_memory():
            _check_memory(*self.largest_fresh)
        arena, held = self._take_arena()
        try:
            if held and self._fixed_regs is not None:   # the pool's views and the constants: as last call
                regs[len(inputs):] = self._fixed_regs[len(inputs):]
                self._run_setup(self._call_setup, regs, arena, given)
            else:
                self._run_setup(self.setup, regs, arena, given)
                if held:
                    self._fixed_regs = [regs[r] if r in self._fixed else None for r in range(self.registers)]
            execute(self._steps(regs, held), regs)
            if out is None:
                results = [view(np.array(regs[r], copy=True) if copy else regs[r])
                           for (r, copy), view in zip(self.returns, self.out_views)]
            else:   # (those not written in place: copied, converted, into the caller's)
                for i in self._copied_out:
                    np.copyto(out[i], self.out_views[i](regs[self.returns[i][0]]))
                results = list(out)
        finally:
            if held:
                self._arena_lock.release()
        self.stats.calls += 1
        self.stats.dispatches += len(self.dispatches)
        self.stats.seconds += time.perf_counter() - start
        return results

    def _steps(self, regs: list, held: bool) -> list:
        """The call's steps. With the held pool, a dispatch that touches none of the call's own
        arrays reads and writes the same arrays as at the last such call (the constants, the pool's
        views): its step is that call's, and a kept native program's entry made for it stays
        (call_program.py); only the others are made (mobilenet_v3_small: 2 of 65)."""
        last = self._last_steps if held else None
        steps = list(last) if last is not None else [None] * len(self.dispatches)
        for i in self._call_dispatches if last is not None else range(len(steps)):
            k, ins, outs, _ = self.dispatches[i]
            steps[i] = _step(k, [regs[r] for r in ins], [regs[r] for r in outs], self.grains[i])
        if held:
            self._last_steps = steps
        return steps


def _share_ranges(kernel, inputs, outputs, count: int, grain: int, pool, workers: int, ran) -> None:
    """Run `kernel`'s workgroups [0, count) in ranges of `grain`, taken by `workers` threads (the
    calling one and helpers from `pool`); `ran(first, last, begin, end)` on the thread that ran
    each range."""
    ranges = iter([(b, min(b + grain, count)) for b in range(0, count, grain)])   # (next() is atomic)

    def take() -> None:
        for first, last in ranges:
            begin = time.perf_counter()
            kernel(inputs, outputs, (first, last))
            ran(first, last, begin, time.perf_counter())
    futures = [pool.submit(take) for _ in range(workers - 1)]
    take()
    for f in futures:
        f.result()


def _identity(a):
    return a


def _storage_view(rec: dict):
    """Caller's value -> the kernels' (same bits: a signless view, a reshape)."""
    if "storage" not in rec:
        return _identity
    dtype, shape = record_dtype(rec["storage"]), tuple(rec["storage"]["shape"] or ())
    return lambda a: a.view(dtype).reshape(shape) if a.dtype.itemsize == dtype.itemsize else a.astype(dtype).reshape(shape)


def _narrow_int(rec: dict) -> bool:
    """An integer type narrower than its storage (i2, i4, ...)."""
    elt = T.element_type(record_type(rec))
    return isinstance(elt, T.IntegerType) and elt.width not in (1, 8, 16, 32, 64)


def _result_view(rec: dict):
    """Kernels' result -> the caller's type; integers narrower than their storage (i2, i4, ...)
    get their upper bits from the sign (or zero) as the interpreter keeps them."""
    dtype, shape = record_dtype(rec), tuple(rec["shape"] or ())
    elt = record_type(rec)
    odd = _narrow_int(rec)

    def view(a):
        if a.dtype != dtype:
            a = a.view(dtype) if a.dtype.itemsize == dtype.itemsize else a.astype(dtype)
        if a.shape != shape:
            a = a.reshape(shape)
        return wrap_to_width(a, elt) if odd else a
    return view


def _step(kernel, ins, outs, grain):
    def step() -> None:
        kernel(ins, outs)
    step.arrays = ins + outs   # (what a kept native program's entry was made for: call_program.py)
    if grain:   # (made only when the helpers share the call: devices.LocalTaskDevice.execute)
        step.share = lambda: kernel.shared(ins, outs, grain)
    elif hasattr(kernel, "item"):   # (local-sync and local-task: the call, for a native program)
        step.item = lambda: kernel.item(ins, outs)
    return step


#: A dispatch touching fewer bytes than this runs whole on one thread: sharing it costs more than it
#: saves. Sharing one costs ~8 us of Python on the calling thread (its SharedDispatch and its Wave
#: made, at load 3) besides the native hand-off (~1.5 us, native_pool.py); a CNN's dispatches run at
#: ~7 KiB per us (mobilenet_v3_small: 122-234 KiB in 17-25 us), so 128 KiB is ~18 us of work, the
#: size from which two threads finish it sooner (256 KiB was chosen when a hand-off cost ~18 us).
SPLIT_BYTES = 128 * 1024
#: Takes per thread, so that a thread slowed by other work on the machine leaves the rest to the
#: others; a take costs an atomic add, but each touches TAKE_BYTES at least (a few microseconds
#: of work, so the threads do not queue on the counter's cache line).
TAKES_PER_WORKER = 8
TAKE_BYTES = 64 * 1024


def _grain(count: int, workers: int, nbytes: int) -> int:
    """Workgroups per take for a dispatch the threads share (0: it runs whole)."""
    if count < 2 or workers < 2 or nbytes < SPLIT_BYTES:
        return 0
    takes = min(workers * TAKES_PER_WORKER, count, max(workers, nbytes // TAKE_BYTES))
    return -(-count // takes)


def _check_memory(nbytes: int, what: str) -> None:
    try:
        limits.check(nbytes, what)
    except limits.MemoryLimitError as e:
        raise VMError(str(e)) from None


def _new_arena(nbytes: int) -> np.ndarray:
    raw = np.empty(nbytes + 64, np.uint8)
    skip = (-raw.__array_interface__["data"][0]) % 64
    return raw[skip:skip + nbytes]


def _read_only(array: np.ndarray) -> np.ndarray:
    """A read-only, C-contiguous view of a constant (the kernels read it; no call may write it)."""
    view = np.require(array, requirements="C").view()
    view.setflags(write=False)
    return view


def _waves(deps: list) -> list:
    """Dispatches grouped by depth in the dependency graph: each wave only needs earlier waves."""
    depth = []
    for mine in deps:
        depth.append(1 + max((depth[d] for d in mine), default=-1))
    waves: dict = {}
    for i, d in enumerate(depth):
        waves.setdefault(d, []).append(i)
    return [waves[d] for d in sorted(waves)]


class LoadedModule:
    """A module loaded for one device; exported functions by name. `source`: a module file (its
    path, which is mapped, or its bytes; checked here), or a module compiled in this process
    (compiler.in_memory). `trusted_keys` (Ed25519 public keys, vm/signing.load_public_keys): a
    module file that none of them signed is refused before any of its code is mapped. Without
    them a module file is trusted as the native code it is.

    The constants are views of the file's weights, mapped, not read (vm/modfile.py); their
    checksum is checked before the first call runs (`verify` checks it at once)."""

    def __init__(self, source: "str | os.PathLike | bytes | ModuleFile", device: str = "local-task",
                 trusted_keys: list | None = None):
        try:
            if isinstance(source, ModuleFile):   # (read already; one compiled here is trusted as this process is)
                self.file = source
                if trusted_keys is not None and not isinstance(source, InMemoryModule):
                    verify_signature(source, trusted_keys)
            elif isinstance(source, (str, os.PathLike)):
                self.file = open_module_file(source, trusted_keys, lazy=True)
            else:
                self.file = read_module_file(source, trusted_keys, lazy=True)
            self.manifest = self.file.manifest
            self.constants = {name: _read_only(self.file.constant(name)) for name in self.manifest["constants"]}
        except ModuleFileError as e:
            raise VMError(str(e)) from None
        self.ready = self.file.weights_checked
        try:
            self.device = make_device(device, self.file)
        except DeviceError as e:
            raise VMError(str(e)) from None
        except ModuleFileError as e:   # (the device's code is read, and checked, when it is made)
            raise VMError(str(e)) from None
        self.functions = {}
        for export in self.manifest["exports"]:
            try:
                self.functions[export["name"]] = Function(export, self.file.json(export["program"]), self)
            except DeviceError as e:
                raise VMError(str(e)) from None
            except (KeyError, IndexError, TypeError, ValueError) as e:
                raise VMError(f"module file: the host program of @{export.get('name')} is malformed "
                              f"({type(e).__name__}: {e})") from None

    def verify(self) -> None:
        """Check the weights against their checksum (once; VMError when they do not match)."""
        try:
            self.file.verify_weights()
        except ModuleFileError as e:
            raise VMError(str(e)) from None
        self.ready = True

    def function(self, name: str) -> Function:
        return exported_function(self.functions, name)

    def entry_function(self, name: str | None) -> Function:
        """The function `name`, or with no name the module's only export (VMError when it has several)."""
        return entry_function(self.functions, name)
