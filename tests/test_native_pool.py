"""local-task's native hand-off (vm/native_pool.py): helpers that wait for waves in native code."""
from __future__ import annotations

import ctypes
import gc
import subprocess
import sys
import threading
import time
import weakref

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.targets.llvm_cpu import jit_ir
from mlirtext.vm import native_pool
from mlirtext.vm.native_pool import NativeCall, Program, Wave
from mlirtext.vm.thread_choice import ThreadChoice

from .test_vm_programs import ROOT, inputs_for, module_file

# Two halves of a rendezvous: each sets its own flag, then waits (boundedly) for the other's;
# it writes 1 to %ok only if it saw the other's flag, which needs the other run at the same time
# on another thread: a wave of both finishes with both oks set only if a helper took one.
RENDEZVOUS_IR = """
define void @meet(ptr %mine, ptr %other, ptr %ok) {
entry:
  store atomic i64 1, ptr %mine seq_cst, align 8
  br label %wait
wait:
  %n = phi i64 [0, %entry], [%n1, %wait]
  %seen = load atomic i64, ptr %other seq_cst, align 8
  %n1 = add i64 %n, 1
  %met = icmp ne i64 %seen, 0
  %gave_up = icmp ugt i64 %n, 2000000000
  %stop = or i1 %met, %gave_up
  br i1 %stop, label %done, label %wait
done:
  %r = zext i1 %met to i64
  store i64 %r, ptr %ok, align 8
  ret void
}
"""


class Fixed(ThreadChoice):
    def __init__(self, helpers: bool):
        super().__init__()
        self.helpers = helpers

    def pick(self) -> bool:
        return self.helpers


def _rendezvous_wave():
    lib = jit_ir(RENDEZVOUS_IR)
    meet = NativeCall([ctypes.c_void_p] * 3, lib.address("meet"))
    flags = (ctypes.c_int64 * 32)()
    a = ctypes.addressof(flags)
    items = [meet.item((a, a + 64, a + 128)), meet.item((a + 64, a, a + 192))]
    return Wave(items, [], lib), flags


def _run(pool, wave) -> None:
    """`wave` as a program of its own."""
    pool.run_program(Program([wave], wave.keep))


def test_a_helper_picks_up_a_published_wave_then_parks_and_wakes():
    pool = native_pool.pool(1)
    wave, flags = _rendezvous_wave()
    _run(pool, wave)
    assert (flags[16], flags[24]) == (1, 1), "the two items did not run at the same time"
    _wait_parked(pool)
    wave, flags = _rendezvous_wave()
    _run(pool, wave)   # publishing wakes it
    assert (flags[16], flags[24]) == (1, 1)


# Appends %value to a log: [0] the count, then the values in the order they came.
MARK_IR = """
define void @mark(ptr %log, i64 %value) {
entry:
  %n = load i64, ptr %log
  %n1 = add i64 %n, 1
  %slot = getelementptr i64, ptr %log, i64 %n1
  store i64 %value, ptr %slot
  store i64 %n1, ptr %log
  ret void
}
"""


def _marks():
    lib = jit_ir(MARK_IR)
    mark = NativeCall([ctypes.c_void_p, ctypes.c_int64], lib.address("mark"))
    log = (ctypes.c_int64 * 8)()
    return lib, log, lambda value: mark.item((ctypes.addressof(log), value))


def _wait_parked(pool) -> None:
    deadline = time.monotonic() + 10
    while pool.parked < 1 and time.monotonic() < deadline:   # idle: it parks after SPIN_SECONDS
        time.sleep(0.01)
    assert pool.parked == 1


def test_a_program_runs_its_steps_in_order_and_shares_its_waves_with_a_parked_helper():
    pool = native_pool.pool(1)
    lib, log, mark = _marks()
    (first, first_flags), (second, second_flags) = _rendezvous_wave(), _rendezvous_wave()
    _wait_parked(pool)   # (the first wave goes through Python, which wakes it; the second is published natively)
    pool.run_program(Program([mark(1), first, mark(2), second, mark(3)], lib))
    assert list(log[:4]) == [3, 1, 2, 3]
    assert (first_flags[16], first_flags[24]) == (1, 1), "the helper did not take the first wave"
    assert (second_flags[16], second_flags[24]) == (1, 1), "the helper did not take the second wave"


def test_a_program_runs_alone_while_another_caller_has_the_helpers():
    pool = native_pool.pool(1)
    lib, log, mark = _marks()
    with pool.owner:
        pool.run_program(Program([mark(1), Wave([mark(2), mark(3)], [], lib), mark(4)], lib))
    assert list(log[:5]) == [4, 1, 2, 3, 4]


def test_a_wave_and_its_code_are_kept_until_every_helper_has_read_a_later_one():
    pool = native_pool.pool(1)
    wave, flags = _rendezvous_wave()
    library = weakref.ref(wave.keep)
    _run(pool, wave)
    del wave
    gc.collect()
    assert library() is not None   # the newest wave: what a helper reads next
    for _ in range(3):
        later, later_flags = _rendezvous_wave()
        _run(pool, later)
    del later, later_flags
    gc.collect()
    assert library() is None
    assert len(pool.kept) <= 2


def test_with_every_helper_parked_the_current_wave_may_still_be_read():
    """A parked helper, woken, reads the current wave (native_pool.py, Lifetimes): the oldest
    generation a helper may still read is the current one, so the program that published it is
    not reusable (its waves would be reset or remade under that helper) until a later wave is out."""
    from mlirtext.vm.call_program import CallProgram
    pool = native_pool.pool(1)
    wave, _ = _rendezvous_wave()
    program = Program([wave], wave.keep)
    pool.run_program(program)
    _wait_parked(pool)
    assert pool.oldest_seen() == program.last_generation == pool.shared[0]
    kept = CallProgram.__new__(CallProgram)
    kept.program = program
    assert not kept.reusable(pool.oldest_seen)
    later, later_flags = _rendezvous_wave()   # (the flags its items write: held while it runs)
    _run(pool, later)
    _wait_parked(pool)
    assert kept.reusable(pool.oldest_seen)


def test_two_python_threads_calling_at_once_get_local_syncs_bits():
    data = module_file(ROOT / "benchmarks" / "programs" / "conv.mlir")
    task = runtime.load_module(data, device="local-task")
    sync = runtime.load_module(data, device="local-sync")
    fn = task.vm_module.functions["main"]
    assert any(fn.grains)
    fn.thread_choice = Fixed(True)
    cases = [inputs_for(fn, seed=s) for s in range(4)]
    wants = [sync.main(*args) for args in cases]
    assert wrong_from_two_threads(task.main, cases, wants, 24) == []


def wrong_from_two_threads(call, cases: list, wants: list, each: int) -> list:
    """The cases whose results were not `wants`' when two Python threads call `call` at once,
    `each` calls each, in turn over the cases."""
    wrong = []

    def calls(offset: int) -> None:
        for i in range(each):
            k = (i + offset) % len(cases)
            got, want = call(*cases[k]), wants[k]
            if not all(np.array_equal(g, w) for g, w in zip(*(v if isinstance(v, (list, tuple)) else [v] for v in (got, want)))):
                wrong.append(k)
    threads = [threading.Thread(target=calls, args=(o,)) for o in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    return wrong


@pytest.mark.parametrize("n,split", [(64, False), (256, True)])
def test_a_wave_of_two_dispatches_whole_or_split_gives_local_syncs_bits(n, split):
    text = f"""func.func @two(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
  %0 = stablehlo.exponential %a : tensor<{n}x{n}xf32>
  %1 = stablehlo.tanh %b : tensor<{n}x{n}xf32>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  return %2 : tensor<{n}x{n}xf32>
}}"""
    data = runtime.compile_text(text)
    task, sync = (runtime.load_module(data, device=d) for d in ("local-task", "local-sync"))
    fn = task.vm_module.functions["two"]
    assert fn.waves[0] == [0, 1] and all(bool(fn.grains[i]) == split for i in (0, 1))
    fn.thread_choice = Fixed(True)
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = (rng.standard_normal((n, n)).astype(np.float32) * 0.1 for _ in range(2))
        assert np.array_equal(task.two(a, b), sync.two(a, b))


def test_a_kept_program_remakes_only_what_reads_or_writes_the_callers_arrays_and_gives_local_syncs_bits():
    data = module_file(ROOT / "benchmarks" / "programs" / "attention.mlir")
    task = runtime.load_module(data, device="local-task")
    sync = runtime.load_module(data, device="local-sync")
    if task.vm_module.device.workers < 2:
        pytest.skip("one CPU: no helpers")
    fn = task.vm_module.functions["main"]
    shared = sum(1 for g in fn.grains if g)
    assert shared == 3
    made = []
    for kernel, *_ in fn.dispatches:
        real = kernel.shared
        kernel.shared = lambda *a, real=real: made.append(1) or real(*a)
    fn.thread_choice = Fixed(True)
    calls = 12
    for seed in range(calls):
        args = inputs_for(fn, seed=seed)
        want = sync.main(*args)
        out = [np.empty_like(w) for w in (want if isinstance(want, (list, tuple)) else [want])]
        got = task.main(*args, out=out if seed % 2 else None)
        time.sleep(0.002)   # (the helper moves on: parks, so no wave of the call before is in use)
        assert all(np.array_equal(g, w) for g, w in zip(got if isinstance(got, (list, tuple)) else [got],
                                                           want if isinstance(want, (list, tuple)) else [want]))
    # the first two calls make every dispatch (two programs, used in turn); later ones only those of
    # the caller's arrays (the middle dispatch reads and writes the buffer pool only)
    assert len(made) < shared * calls


EXIT_SCRIPT = """
import sys, time
from mlirtext import runtime
from mlirtext.vm.thread_choice import ThreadChoice
from tests.test_vm_programs import ROOT, inputs_for, module_file
class Fixed(ThreadChoice):
    def pick(self): return True
m = runtime.load_module(module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir"), device="local-task")
fn = m.vm_module.functions["main"]
fn.thread_choice = Fixed()
args = inputs_for(fn, seed=1)
for _ in range(20):
    m.main(*args)
if sys.argv[1] == "parked":
    time.sleep(0.2)
print("done")
"""


def test_the_process_exits_with_helpers_spinning_or_parked():
    for state in ("spinning", "parked"):
        done = subprocess.run([sys.executable, "-c", EXIT_SCRIPT, state], capture_output=True, text=True,
                              timeout=120, cwd=ROOT)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "done"


def test_a_trampoline_passes_integer_float_and_pointer_arguments():
    lib = jit_ir("""
define void @mix(i32 %a, float %b, double %c, i8 %d, i1 %e, ptr %out) {
entry:
  %a1 = sitofp i32 %a to double
  %b1 = fpext float %b to double
  %d1 = sitofp i8 %d to double
  %e1 = uitofp i1 %e to double
  %s1 = fadd double %a1, %b1
  %s2 = fadd double %s1, %c
  %s3 = fadd double %s2, %d1
  %s4 = fadd double %s3, %e1
  store double %s4, ptr %out
  ret void
}
""")
    types = [ctypes.c_int32, ctypes.c_float, ctypes.c_double, ctypes.c_int8, ctypes.c_bool, ctypes.c_void_p]
    call = NativeCall(types, lib.address("mix"))
    out = np.zeros(1)
    item = call.item((ctypes.c_int32(-7), ctypes.c_float(0.5), 1e10, ctypes.c_int8(-3), ctypes.c_bool(True),
                      out.ctypes.data))
    call.call(item)
    assert out[0] == -7 + 0.5 + 1e10 - 3 + 1


CHAIN = """func.func @chain(%a: tensor<48x48xf32>, %b: tensor<48x48xf32>) -> (tensor<48x48xf32>, tensor<48xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<48x48xf32>, tensor<48x48xf32>) -> tensor<48x48xf32>
  %1 = stablehlo.tanh %0 : tensor<48x48xf32>
  %2 = stablehlo.dot_general %1, %b, contracting_dims = [1] x [0] : (tensor<48x48xf32>, tensor<48x48xf32>) -> tensor<48x48xf32>
  %3 = stablehlo.dot_general %2, %a, contracting_dims = [1] x [1] : (tensor<48x48xf32>, tensor<48x48xf32>) -> tensor<48x48xf32>
  %4 = stablehlo.dot_general %3, %1, contracting_dims = [0] x [0] : (tensor<48x48xf32>, tensor<48x48xf32>) -> tensor<48x48xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %5 = stablehlo.reduce(%4 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<48x48xf32>, tensor<f32>) -> tensor<48xf32>
  return %4, %5 : tensor<48x48xf32>, tensor<48xf32>
}"""


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_a_call_run_alone_is_a_kept_native_program_from_the_functions_second_call_with_the_same_bits(device):
    """local-sync, and local-task when the caller runs alone: the first call calls each step from
    Python, the later ones run the kept program (devices.LocalSyncDevice.execute); every call, with
    new inputs, with `out=`, from two threads at once, gives the bits of a first call."""
    from mlirtext.vm.devices import PROGRAM_STEPS
    data = runtime.compile_text(CHAIN)
    module = runtime.load_module(data, device=device)
    fn = module.vm_module.functions["chain"]
    assert len(fn.dispatches) >= PROGRAM_STEPS
    if fn.thread_choice is not None:
        fn.thread_choice = Fixed(False)
    rng = np.random.default_rng(1)
    cases = [[rng.standard_normal((48, 48)).astype(np.float32) * 0.2 for _ in range(2)] for _ in range(4)]

    def first_call(args):   # (a fresh module's only call runs step by step)
        return runtime.load_module(data, device="local-sync").chain(*args)
    wants = [first_call(args) for args in cases]
    native, ran = native_pool.native(), []
    real = native.run_program
    native.run_program = lambda *a: ran.append(a[1]) or real(*a)
    try:
        for i in range(8):
            k = i % len(cases)
            out = [np.empty_like(w) for w in wants[k]] if i % 3 == 2 else None
            got = module.chain(*cases[k], out=out)
            assert all(np.array_equal(g, w) for g, w in zip(got, wants[k]))
            assert len(ran) == i   # a native program from the second call on
    finally:
        native.run_program = real
    assert len(set(ran)) <= 2   # (two kept programs, used in turn)
    assert wrong_from_two_threads(module.chain, cases, wants, 16) == []
