"""local-task's helper threads, handed work in native code.

Handing each wave of a call to a `ThreadPoolExecutor` cost about 18 us a dispatch (waking a
thread, a future, the GIL handed over and back), more than a small dispatch takes to run. As
IREE's task system does, the helpers here wait for work in native code: each spins (with the
CPU's pause hint) on a generation counter; the calling thread publishes a wave (a pointer to its
descriptor, then the generation bumped) and works on it too, then spins until the wave's done
counters say it is finished. A helper that has found nothing for a while returns to Python and
parks on a condition, which a caller notifies when it publishes while some helper is parked: for
SPIN_SECONDS without work, within a call (its next wave comes after a dispatch the caller runs
alone) or after it (a program calling in a loop calls again after ~0.1 ms of Python: a helper
that parked after 20 us had to be woken at every call, mobilenet_v3_small at 2 threads 1.38-1.63
ms a call, spinning 200 us 1.27-1.29). Spinning helpers (and a
caller waiting for a wave) yield their core every YIELD_EVERY hints: on a loaded machine a helper
that only spins takes CPU time from the caller's own thread (mobilenet_v3_small with the helpers
forced, load 2.2-2.6 on 2 cores: 1.85x the time of its calls alone; yielding, 1.1x).
Nothing waits for a helper: the caller alone can finish any wave (work sharing through counters,
compiler/work_queue.py), so a helper that is late, descheduled or parked only does less.
A call runs as one program (`Program`, `NativePool.run_program`): its waves and the dispatches the
caller runs whole between them, in order, in native code; it returns to Python only to wake a
parked helper (through the condition) for the next wave. Made wave by wave from Python, a shared
dispatch cost ~16 us of Python in a call (mobilenet_v3_small: 40 of them, ~0.65 ms of a 1.9 ms call,
more than the second core saved), as the kernels between evicted Python's caches.

Native code cannot call a kernel of any signature, so every call goes through a trampoline that
takes one pointer to an item: `[trampoline, function, argument slots...]` (8 bytes a slot; the
trampoline for those argument types loads each slot and calls the function). The worker loop
and the trampolines of up to PLAIN_ARGUMENTS integer or pointer arguments are compiled by llvmlite
at O0 once per process, when the helpers are first used (about 7 ms); one with a float argument
when first needed (about 2 ms).

Lifetimes: a helper reads the wave pointer after the generation, so it may run a wave (finding
nothing left in it) after the caller has returned. Each helper publishes the generation it last
read (`seen`, set to NEVER while parked); a wave, with its counters and the object code its items
call, is kept (`NativePool.kept`) until every helper has read a later generation. A parked helper
may still read the current wave: woken for it, it reads the generation, then publishes it as
`seen`, then reads the wave pointer, and a caller may look at `seen` between the first two (a
kept program's last wave was reset or remade under such a helper: a segfault in about one run in
ten of tests/test_native_pool.py). So the oldest generation a helper may still read is never
newer than the current one (`oldest_seen`), and the current wave is kept until another is
published.

Wave descriptor (int64 slots): [0] whole items, [8] next whole item, [16] whole items done,
[24] shared items, [25...] item pointers (whole then shared), then per shared item its done
counter's address and workgroup count. Pool (int64 slots, a cache line apart): [0] generation,
[8] wave, [16] stop, [17] spins before parking, [24 + 8 i] helper i's `seen`.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import threading
import time

#: How long an idle helper spins before it parks (IREE's workers likewise spin, then sleep):
#: during a call, and after it.
SPIN_SECONDS = 200e-6
#: An idle helper yields its core every this many pause hints (a power of two).
YIELD_EVERY = 64
#: A generation no helper has read: a parked helper's `seen`.
NEVER = (1 << 63) - 1
_LINE = 8   # int64 slots in a cache line

#: ctypes argument type -> LLVM type of its slot, for floats; integers and pointers are i64 (sign- or
#: zero-extended: what a callee of a narrower type reads of its register is the same value).
FLOAT_TYPES = {ctypes.c_float: "float", ctypes.c_double: "double"}
#: Trampolines for this many arguments, all i64, are compiled with the worker loop (others on demand).
PLAIN_ARGUMENTS = 24


def _pause_ir(triple: str) -> tuple[str, str]:
    """(declaration, call) of the CPU's spin-wait hint."""
    arch = triple.split("-")[0]
    if arch in ("x86_64", "i686", "i386"):
        return "declare void @llvm.x86.sse2.pause()", "call void @llvm.x86.sse2.pause()"
    if arch in ("aarch64", "arm64"):
        return "", 'call void asm sideeffect "yield", ""()'
    return "", ""


def worker_ir(triple: str) -> str:
    declare, pause = _pause_ir(triple)
    return f"""
{declare}
declare i32 @sched_yield()

; One turn of a spin-wait, the %n-th: the CPU's pause hint and, every {YIELD_EVERY}th turn, the
; core given away (a helper holding a grain may have been descheduled: let it have this core).
define void @mlirtext.relax(i64 %n) {{
entry:
  {pause}
  %rem = and i64 %n, {YIELD_EVERY - 1}
  %polite = icmp eq i64 %rem, 0
  br i1 %polite, label %yield, label %exit
yield:
  %y = call i32 @sched_yield()
  br label %exit
exit:
  ret void
}}

define void @mlirtext.run_wave(ptr %w) {{
entry:
  %nwhole = load i64, ptr %w
  %nextp = getelementptr i64, ptr %w, i64 8
  %donep = getelementptr i64, ptr %w, i64 16
  %nsharedp = getelementptr i64, ptr %w, i64 24
  %nshared = load i64, ptr %nsharedp
  %items = getelementptr i64, ptr %w, i64 25
  br label %whole
whole:
  %i = atomicrmw add ptr %nextp, i64 1 monotonic, align 8
  %more = icmp slt i64 %i, %nwhole
  br i1 %more, label %call_whole, label %shared
call_whole:
  %ip = getelementptr ptr, ptr %items, i64 %i
  %item = load ptr, ptr %ip
  %tramp = load ptr, ptr %item
  call void %tramp(ptr %item)
  %d = atomicrmw add ptr %donep, i64 1 release, align 8
  br label %whole
shared:
  %j = phi i64 [0, %whole], [%j1, %call_shared]
  %smore = icmp slt i64 %j, %nshared
  br i1 %smore, label %call_shared, label %exit
call_shared:
  %k = add i64 %nwhole, %j
  %sp = getelementptr ptr, ptr %items, i64 %k
  %sitem = load ptr, ptr %sp
  %stramp = load ptr, ptr %sitem
  call void %stramp(ptr %sitem)
  %j1 = add i64 %j, 1
  br label %shared
exit:
  ret void
}}

define i1 @mlirtext.wave_done(ptr %w) {{
entry:
  %nwhole = load i64, ptr %w
  %donep = getelementptr i64, ptr %w, i64 16
  %done = load atomic i64, ptr %donep acquire, align 8
  %wok = icmp eq i64 %done, %nwhole
  br i1 %wok, label %shared_entry, label %no
shared_entry:
  %nsharedp = getelementptr i64, ptr %w, i64 24
  %nshared = load i64, ptr %nsharedp
  %n = add i64 %nwhole, %nshared
  %base = add i64 %n, 25
  %counts = getelementptr i64, ptr %w, i64 %base
  br label %shared
shared:
  %j = phi i64 [0, %shared_entry], [%j1, %next]
  %smore = icmp slt i64 %j, %nshared
  br i1 %smore, label %check, label %yes
check:
  %two = shl i64 %j, 1
  %cp = getelementptr ptr, ptr %counts, i64 %two
  %counter = load ptr, ptr %cp
  %cntp = getelementptr i64, ptr %cp, i64 1
  %count = load i64, ptr %cntp
  %sdone = load atomic i64, ptr %counter acquire, align 8
  %sok = icmp eq i64 %sdone, %count
  br i1 %sok, label %next, label %no
next:
  %j1 = add i64 %j, 1
  br label %shared
yes:
  ret i1 1
no:
  ret i1 0
}}

; The caller's side: publish wave %w (then wake parked helpers), then finish it.
define void @mlirtext.publish(ptr %pool, ptr %w) {{
entry:
  %wavep = getelementptr i64, ptr %pool, i64 8
  store atomic ptr %w, ptr %wavep seq_cst, align 8
  %g = atomicrmw add ptr %pool, i64 1 seq_cst, align 8
  ret void
}}

; Work on the published wave %w and wait for it to be finished; returns the oldest generation a
; helper may still read (read after the publication: see the module's docstring).
define i64 @mlirtext.finish(ptr %pool, ptr %w, i64 %helpers) {{
entry:
  call void @mlirtext.run_wave(ptr %w)
  br label %wait
wait:
  %spins = phi i64 [0, %entry], [%spins1, %spin]
  %ok = call i1 @mlirtext.wave_done(ptr %w)
  br i1 %ok, label %oldest, label %spin
spin:
  %spins1 = add i64 %spins, 1
  call void @mlirtext.relax(i64 %spins1)
  br label %wait
oldest:
  %low = call i64 @mlirtext.oldest_seen(ptr %pool, i64 %helpers)
  ret i64 %low
}}

; The oldest generation a helper may still read: the helpers' lowest `seen`, or the current
; generation if that is older (a parked helper, woken, reads the current wave).
define i64 @mlirtext.oldest_seen(ptr %pool, i64 %helpers) {{
entry:
  %gen = load atomic i64, ptr %pool seq_cst, align 8
  br label %seen
seen:
  %h = phi i64 [0, %entry], [%h1, %each]
  %low = phi i64 [%gen, %entry], [%low1, %each]
  %more = icmp slt i64 %h, %helpers
  br i1 %more, label %each, label %done
each:
  %slot = mul i64 %h, {_LINE}
  %slot1 = add i64 %slot, 24
  %sp = getelementptr i64, ptr %pool, i64 %slot1
  %s = load atomic i64, ptr %sp seq_cst, align 8
  %lt = icmp slt i64 %s, %low
  %low1 = select i1 %lt, i64 %s, i64 %low
  %h1 = add i64 %h, 1
  br label %seen
done:
  ret i64 %low
}}

; Whether some helper is parked (its `seen` NEVER).
define i1 @mlirtext.any_parked(ptr %pool, i64 %helpers) {{
entry:
  br label %loop
loop:
  %h = phi i64 [0, %entry], [%h1, %each]
  %more = icmp slt i64 %h, %helpers
  br i1 %more, label %each, label %no
each:
  %slot = mul i64 %h, {_LINE}
  %slot1 = add i64 %slot, 24
  %sp = getelementptr i64, ptr %pool, i64 %slot1
  %s = load atomic i64, ptr %sp seq_cst, align 8
  %h1 = add i64 %h, 1
  %never = icmp eq i64 %s, {NEVER}
  br i1 %never, label %yes, label %loop
yes:
  ret i1 1
no:
  ret i1 0
}}

; A whole call's program, from step %start: [0] steps, then per step (pointer, kind): kind 0 an item
; the caller runs itself, 1 a wave published to the helpers (run by the caller alone when %helpers
; is 0). Returns the number of steps when all have run, or the index of the first wave not
; published because a helper is parked (its `seen` NEVER: the caller wakes it from Python).
define i64 @mlirtext.run_program(ptr %pool, ptr %prog, i64 %start, i64 %helpers) {{
entry:
  %n = load i64, ptr %prog
  br label %loop
loop:
  %i = phi i64 [%start, %entry], [%i1, %next]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %step, label %exit
step:
  %two = shl i64 %i, 1
  %pslot = add i64 %two, 1
  %pp = getelementptr i64, ptr %prog, i64 %pslot
  %ptr = load ptr, ptr %pp
  %kp = getelementptr i64, ptr %pp, i64 1
  %kind = load i64, ptr %kp
  %solo = icmp eq i64 %kind, 0
  br i1 %solo, label %item, label %wave
item:
  %tramp = load ptr, ptr %ptr
  call void %tramp(ptr %ptr)
  br label %next
wave:
  %alone = icmp eq i64 %helpers, 0
  br i1 %alone, label %run_alone, label %check
run_alone:
  call void @mlirtext.run_wave(ptr %ptr)
  br label %next
check:
  %parked = call i1 @mlirtext.any_parked(ptr %pool, i64 %helpers)
  br i1 %parked, label %exit, label %publish
publish:
  call void @mlirtext.publish(ptr %pool, ptr %ptr)
  %o = call i64 @mlirtext.finish(ptr %pool, ptr %ptr, i64 %helpers)
  br label %next
next:
  %i1 = add i64 %i, 1
  br label %loop
exit:
  ret i64 %i
}}

; A helper: runs each wave published after generation %seen until it has spun the pool's spin
; count without work (returns the last generation it read; it has set its `seen` to NEVER) or the
; pool is stopped (returns -1).
define i64 @mlirtext.worker(ptr %pool, i64 %index, i64 %seen0) {{
entry:
  %slot = mul i64 %index, {_LINE}
  %slot1 = add i64 %slot, 24
  %seenp = getelementptr i64, ptr %pool, i64 %slot1
  %stopp = getelementptr i64, ptr %pool, i64 16
  %wavep = getelementptr i64, ptr %pool, i64 8
  %spinsp = getelementptr i64, ptr %pool, i64 17
  br label %loop
loop:
  %seen = phi i64 [%seen0, %entry], [%g, %work], [%seen, %count]
  %n = phi i64 [0, %entry], [0, %work], [%n1, %count]
  %stop = load atomic i64, ptr %stopp monotonic, align 8
  %stopping = icmp ne i64 %stop, 0
  br i1 %stopping, label %stopped, label %look
look:
  %g = load atomic i64, ptr %pool acquire, align 8
  %new = icmp ne i64 %g, %seen
  br i1 %new, label %work, label %idle
work:
  store atomic i64 %g, ptr %seenp seq_cst, align 8
  %w = load atomic ptr, ptr %wavep seq_cst, align 8
  call void @mlirtext.run_wave(ptr %w)
  br label %loop
idle:
  %n1 = add i64 %n, 1
  call void @mlirtext.relax(i64 %n1)
  br label %count
count:
  %spins = load atomic i64, ptr %spinsp monotonic, align 8
  %tired = icmp uge i64 %n1, %spins
  br i1 %tired, label %park, label %loop
park:
  store atomic i64 {NEVER}, ptr %seenp seq_cst, align 8
  ret i64 %seen
stopped:
  store atomic i64 {NEVER}, ptr %seenp seq_cst, align 8
  ret i64 -1
}}

; (for calibrating the spin count: %n pause hints)
define void @mlirtext.spin(i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%i1, %loop]
  %i1 = add i64 %i, 1
  call void @mlirtext.relax(i64 %i1)
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}}
"""


def trampoline_ir(types: tuple[str, ...]) -> str:
    """`@<trampoline_name(types)>(ptr %item)`: calls item[1] with the arguments in item[2...]."""
    loads, args = [], []
    for i, t in enumerate(types):
        loads += [f"  %p{i} = getelementptr i64, ptr %item, i64 {i + 2}", f"  %a{i} = load {t}, ptr %p{i}"]
        args.append(f"{t} %a{i}")
    return "\n".join([
        f"define void @{trampoline_name(types)}(ptr %item) {{", "entry:",
        "  %fp = getelementptr i64, ptr %item, i64 1", "  %fn = load ptr, ptr %fp", *loads,
        f"  call void %fn({', '.join(args)})", "  ret void", "}", ""])


def trampoline_name(types: tuple[str, ...]) -> str:
    return "mlirtext.trampoline." + "_".join(types)


class _Native:
    """The JIT-compiled worker loop and trampolines of this process (compiled once, kept for its
    lifetime: helpers run this code until the process exits)."""

    def __init__(self):
        # (imported here: llvmlite and the target add ~25 ms to importing the devices, which the
        # reference device and processes that never start the helpers do not need)
        import llvmlite.binding as llvm
        from ..targets.llvm_cpu import jit_ir
        self.jit = jit_ir
        self.lock = threading.Lock()
        plain = [("i64",) * n for n in range(PLAIN_ARGUMENTS + 1)]
        lib = jit_ir(worker_ir(llvm.get_process_triple()) + "".join(trampoline_ir(t) for t in plain))
        self.libraries = [lib]
        self.publish = lib.function("mlirtext.publish", None, ctypes.c_void_p, ctypes.c_void_p)
        self.finish = lib.function("mlirtext.finish", ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_int64)
        self.worker = lib.function("mlirtext.worker", ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
                                   ctypes.c_int64)
        self.spin = lib.function("mlirtext.spin", None, ctypes.c_int64)
        self.run_program = lib.function("mlirtext.run_program", ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_int64, ctypes.c_int64)
        self.oldest_seen = lib.function("mlirtext.oldest_seen", ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64)
        self.trampolines: dict[tuple, tuple[int, object]] = {t: self._entry(lib, t) for t in plain}

    @staticmethod
    def _entry(lib, types) -> tuple[int, object]:
        address = lib.address(trampoline_name(types))
        return address, ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)

    def trampoline(self, argtypes) -> tuple[int, object]:
        """(address, ctypes function taking an item) of the trampoline for these ctypes argument types."""
        types = tuple(FLOAT_TYPES.get(t, "i64") for t in argtypes)
        found = self.trampolines.get(types)
        if found is None:
            with self.lock:
                found = self.trampolines.get(types)
                if found is None:
                    lib = self.jit(trampoline_ir(types))
                    self.libraries.append(lib)
                    found = self.trampolines[types] = self._entry(lib, types)
        return found

    def spins_for(self, seconds: float) -> int:
        """Pause hints that take about `seconds` on this CPU (the hint's latency varies tenfold
        between CPU generations)."""
        n, best = 20000, float("inf")
        for _ in range(3):   # (the least: a run the scheduler interrupted reads too slow)
            begin = time.perf_counter()
            self.spin(n)
            best = min(best, time.perf_counter() - begin)
        return max(int(seconds / max(best, 1e-6) * n), 100)


_native: _Native | None = None
_native_lock = threading.Lock()
_pools_lock = threading.Lock()


def native() -> _Native:
    global _native
    if _native is None:
        with _native_lock:
            if _native is None:
                _native = _Native()
    return _native


class NativeCall:
    """Items (and direct calls through the trampoline) for one native function of ctypes
    argument types `argtypes`. (The trampoline is looked up at the first call, not when a module
    loads: the worker loop's code is compiled at the first use of the helpers.)"""

    def __init__(self, argtypes, function: int):
        self.function, self.argtypes = function, tuple(argtypes)
        self.block = ctypes.c_int64 * (2 + len(argtypes))
        self.plain = all(t not in FLOAT_TYPES for t in argtypes)
        self.trampoline = self._call = None

    def _resolve(self) -> None:
        self.trampoline, self._call = native().trampoline(self.argtypes)

    def item(self, values) -> ctypes.Array:
        """An item calling the function with `values`: ints (addresses, integers) or ctypes scalars."""
        if self.trampoline is None:
            self._resolve()
        if self.plain:
            try:
                return self.block(self.trampoline, self.function, *values)
            except TypeError:   # (a scalar argument, as a ctypes value)
                return self.block(self.trampoline, self.function, *[getattr(v, "value", v) for v in values])
        block = self.block(self.trampoline, self.function)
        base = ctypes.addressof(block) + 16
        for i, (t, v) in enumerate(zip(self.argtypes, values)):
            v = getattr(v, "value", v)   # (a ctypes scalar, or a number)
            if t in FLOAT_TYPES:
                t.from_address(base + 8 * i).value = v
            else:
                block[2 + i] = v
        return block

    def call(self, item: ctypes.Array) -> None:
        """Run `item` on this thread."""
        self._call(ctypes.addressof(item))


class Wave:
    """One wave's descriptor: `whole` items each run by one thread, `shared` (SharedDispatch-like:
    `.item`, `.done_address`, `.count`, `.library`) run by every thread. Holds what its items
    reference (their blocks, counters, object code) for as long as the wave is."""

    def __init__(self, whole: list, shared: list, keep):
        n = len(whole) + len(shared)
        self.block = (ctypes.c_int64 * (25 + n + 2 * len(shared)))()
        b = self.block
        b[0], b[24] = len(whole), len(shared)
        for i, it in enumerate([*whole, *(s.item for s in shared)]):
            b[25 + i] = ctypes.addressof(it)
        for j, s in enumerate(shared):
            b[25 + n + 2 * j], b[26 + n + 2 * j] = s.done_address, s.count
        self.whole, self.shared, self.keep = whole, shared, keep
        self.address = ctypes.addressof(b)

    def reset(self) -> None:
        """Ready to run again (no thread may be in it): its counters and its shared items' zeroed."""
        self.block[8] = self.block[16] = 0
        for s in self.shared:
            s.reset()


class Program:
    """A call's steps, in order, for `NativePool.run_program`: each an item (NativeCall.item) the
    caller runs itself or a `Wave` shared with the helpers. Holds them (and `keep`: the object code
    their items call) for as long as the program is."""

    def __init__(self, entries: list, keep):
        self.steps = len(entries)
        self.last_generation = None   # of its last wave published (NativePool.run_program)
        self.block = (ctypes.c_int64 * (1 + 2 * self.steps))()
        self.block[0] = self.steps
        self.entries, self.keep = list(entries), keep
        for i, e in enumerate(entries):
            self.replace(i, e)
        self.address = ctypes.addressof(self.block)

    def replace(self, i: int, entry) -> None:
        """Step `i` becomes `entry` (no thread may be in the program)."""
        self.entries[i] = entry
        if isinstance(entry, Wave):
            self.block[1 + 2 * i], self.block[2 + 2 * i] = entry.address, 1
        else:
            self.block[1 + 2 * i], self.block[2 + 2 * i] = ctypes.addressof(entry), 0


class NativePool:
    """`helpers` threads (daemons, stopped at exit) that run the waves a caller publishes."""

    def __init__(self, helpers: int):
        self.native = native()
        self.helpers = helpers
        self.shared = (ctypes.c_int64 * (24 + _LINE * max(helpers, 1)))()
        for h in range(helpers):
            self.shared[24 + _LINE * h] = NEVER
        self.address = ctypes.addressof(self.shared)
        self.shared[17] = self.native.spins_for(SPIN_SECONDS)
        self.owner = threading.Lock()   # one caller at a time publishes; others run alone
        self.kept: list[tuple[int, Wave]] = []
        self.wake = threading.Condition()
        self.parked = 0
        self.stopped = False
        self.threads = [threading.Thread(target=self._helper, args=(h,), name=f"mlirtext-task-{h}", daemon=True)
                        for h in range(helpers)]
        for t in self.threads:
            t.start()

    def run_program(self, program: Program) -> None:
        """Run a call's `program` (its steps in order, its waves shared with the helpers; all on
        this thread while another caller has them); returns when it is finished. The waves are
        published from native code, one after another, without coming back to Python (~16 us a
        shared dispatch of Python in a call, where the kernels between evict Python's caches), but
        for a wave due while a helper is parked: that one goes through Python, which wakes it."""
        if not self.owner.acquire(blocking=False):
            self.native.run_program(self.address, program.address, 0, 0)
            return
        try:
            step = 0
            while True:
                step = self.native.run_program(self.address, program.address, step, self.helpers)
                if step >= program.steps:
                    break
                self._share(program.entries[step])
                step += 1
            # (the program's waves are kept until every helper has read a later generation than its last)
            program.last_generation = self.shared[0]
            self.kept.append((program.last_generation, program))
            self._forget(self.oldest_seen())
        finally:
            self.owner.release()

    def _share(self, wave: Wave) -> None:
        """Publish `wave`, wake parked helpers, work on it until it is finished (the caller holds `owner`)."""
        self.kept.append((self.shared[0] + 1, wave))   # (the generation its publication makes)
        self.native.publish(self.address, wave.address)
        # (after the publication: a helper counts itself parked, then looks at the generation,
        # both under the GIL, so either it sees the new generation or it is counted here)
        if self.parked:
            with self.wake:
                self.wake.notify_all()
        self._forget(self.native.finish(self.address, wave.address, self.helpers))

    def _forget(self, oldest: int) -> None:
        """Drop the waves no helper may read any more: those before generation `oldest` (the newest
        stays: it is the one a helper reads next)."""
        self.kept = [(g, w) for g, w in self.kept[:-1] if g >= oldest] + self.kept[-1:]

    def oldest_seen(self) -> int:
        """The oldest generation a helper may still read (at most the current one)."""
        return self.native.oldest_seen(self.address, self.helpers)

    def _helper(self, index: int) -> None:
        seen = 0
        worker, address = self.native.worker, self.address
        while True:
            seen = worker(address, index, seen)
            if seen < 0:
                return
            with self.wake:
                self.parked += 1
                while self.shared[0] == seen and not self.stopped:
                    self.wake.wait()
                self.parked -= 1
            if self.stopped:
                return

    def stop(self) -> None:
        """Stop the helpers and wait for them (at exit: none may be in native code, or in the
        kernels' code, while the interpreter unloads it)."""
        self.stopped = True
        self.shared[16] = 1
        with self.wake:
            self.wake.notify_all()
        for t in self.threads:
            t.join(timeout=1.0)


_pools: dict[int, NativePool] = {}


def pool(helpers: int) -> NativePool:
    """The process's pool of `helpers` helper threads (one per size asked for)."""
    found = _pools.get(helpers)
    if found is None:
        with _pools_lock:
            found = _pools.get(helpers)
            if found is None:
                found = _pools[helpers] = NativePool(helpers)
    return found


@atexit.register
def _stop_all() -> None:
    for p in list(_pools.values()):
        p.stop()


def _after_fork() -> None:   # (the child has none of the parent's threads)
    _pools.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
