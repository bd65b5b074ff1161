"""Dispatch formation, destination-passing kernels, loop interchange and workgroups."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.api import parse_and_verify
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline
from mlirtext.vm.thread_choice import COLD, WARMUP, ThreadChoice

from .test_vm_programs import ROOT, inputs_for, module_file


def run_passes(text: str, pipeline: str):
    result = parse_and_verify(text)
    assert result.ok, result.diagnostics
    problems = PassManager(parse_pipeline(pipeline)).run(result.module)
    assert not problems, [p.message for p in problems]
    return result.module


def test_host_keeps_only_calls_views_constants_and_return():
    from mlirtext.compiler.driver import form_dispatches
    result = parse_and_verify((ROOT / "benchmarks" / "programs" / "mlp.mlir").read_text())
    form_dispatches(result.module)
    host = [op for op in result.module.regions[0].blocks[0].ops if op.sym_name == "main"][0]
    kinds = {op.name for op in host.regions[0].blocks[0].ops}
    assert kinds <= {"func.call", "tensor.collapse_shape", "tensor.expand_shape", "arith.constant", "func.return"}
    callees = [str(op.attributes["callee"]) for op in host.regions[0].blocks[0].ops if op.name == "func.call"]
    assert callees == ["@main_dispatch_0", "@main_dispatch_1", "@main_dispatch_2", "@main_dispatch_3"]
    text = print_module(result.module)
    # The matmul's zero fill is in its dispatch; the relu's broadcast zero constant is recomputed there.
    matmul = text[text.index("func.func private @main_dispatch_0("):text.index("func.func private @main_dispatch_1(")]
    assert "linalg.fill" in matmul and "linalg.batch_matmul" in matmul


def test_results_to_out_params_writes_in_place():
    text = """func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, f32) {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = arith.constant 1.5 : f32
  return %s, %c : tensor<4xf32>, f32
}"""
    module = run_passes(text, "convert-linalg-to-loops,results-to-out-params")
    out = print_module(module)
    assert "%out0: memref<4xf32>, %out1: memref<f32>) attributes" in out  # no results left
    assert "memref.alloc" not in out  # the sum is computed straight into %out0
    assert "memref.store %c, %out1[]" in out and "    return\n" in out
    assert "mlirtext.out_params = 2" in out
    llvm = print_module(run_passes(text, "convert-linalg-to-loops,results-to-out-params,convert-loops-to-llvm"))
    assert "mlirtext.out_params = 2" in llvm and "llvm.func @f(%a: !llvm.ptr, %b: !llvm.ptr, %out0: !llvm.ptr, %out1: !llvm.ptr) attributes" in llvm


def test_interchange_makes_the_matmul_loop_vectorise_and_keeps_results_exact():
    from mlirtext.compiler.driver import compile_source
    path = ROOT / "benchmarks" / "programs" / "mlp.mlir"
    ir = compile_source(path.read_text(), str(path)).llvm_ir
    matmul = ir[ir.index("@main_dispatch_0("):]
    matmul = matmul[:matmul.index("\n}\n")]
    assert "x float>" in matmul, "the matmul kernel has no vector loop"
    # Integer-valued floats: every partial sum is exact, so any summation order gives the same bits.
    rng = np.random.default_rng(0)
    x = rng.integers(-4, 5, (4, 8)).astype(np.float32)
    w = rng.integers(-4, 5, (8, 16)).astype(np.float32)
    b = rng.integers(-4, 5, 16).astype(np.float32)
    data = module_file(ROOT / "examples" / "dense_linalg.mlir")
    got = runtime.load_module(data, device="local-sync").dense(x, w, b)
    assert np.array_equal(got, np.maximum(x @ w + b, 0))


@pytest.mark.parametrize("name", ["mlp", "conv", "softmax", "attention"])
def test_workgroups_split_dispatches_and_give_identical_bits(name):
    from mlirtext.vm.modfile import read_module_file
    path = ROOT / "benchmarks" / "programs" / f"{name}.mlir"
    data = module_file(path)
    kernels = read_module_file(data).manifest["kernels"]
    assert any(k.get("workgroups") for k in kernels.values())
    task = runtime.load_module(data, device="local-task")
    fn = task.vm_module.functions["main"]
    assert any(fn.grains), "no dispatch is shared between threads"
    args = inputs_for(fn, seed=3)
    want = runtime.load_module(data, device="local-sync").main(*args)
    # The first COLD + WARMUP calls share their dispatches with the helper threads, the next
    # COLD + WARMUP run alone (thread_choice.py tries both ways, the first calls of each not
    # counted): the same bits.
    fn.thread_choice = ThreadChoice()
    for _ in range(2 * (COLD + WARMUP)):
        assert np.array_equal(task.main(*args), want)
    assert {h: len(t) for h, t in fn.thread_choice.times.items()} == {True: WARMUP, False: WARMUP}


def test_independent_dispatches_share_a_wave():
    text = """func.func @two(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.exponential %a : tensor<256x256xf32>
  %1 = stablehlo.tanh %b : tensor<256x256xf32>
  %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %2 : tensor<256x256xf32>
}"""
    m = runtime.load_module(runtime.compile_text(text), device="local-task")
    fn = m.vm_module.functions["two"]
    assert [len(w) for w in fn.waves][0] == 2  # exp and tanh run side by side
    a = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32) * 0.1
    ref = runtime.load_module(runtime.compile_text(text), device="reference").two(a, a)
    got = m.two(a, a)
    assert np.allclose(got, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("batch,m,n,k", [(0, 13, 32, 7), (3, 10, 48, 16), (1, 9, 16, 1)])
def test_matmul_micro_kernel_over_any_row_range(batch, m, n, k):
    from mlirtext.vm.modfile import read_module_file
    from mlirtext.compiler.ukernels import DESCRIPTION, host_tiles
    if batch:
        a_t, b_t, c_t = f"tensor<{batch}x{m}x{k}xf32>", f"tensor<{batch}x{k}x{n}xf32>", f"tensor<{batch}x{m}x{n}xf32>"
        dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]"
    else:
        a_t, b_t, c_t = f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>", f"tensor<{m}x{n}xf32>"
        dims = "contracting_dims = [1] x [0]"
    text = f"""func.func @mm(%a: {a_t}, %b: {b_t}) -> {c_t} {{
  %0 = stablehlo.dot_general %a, %b, {dims} : ({a_t}, {b_t}) -> {c_t}
  return %0 : {c_t}
}}"""
    data = runtime.compile_text(text)
    kernels = read_module_file(data).manifest["kernels"]
    assert [k_["implementation"] for k_ in kernels.values() if k_.get("implementation")] == [DESCRIPTION + ", " + host_tiles(n)]
    rng = np.random.default_rng(0)
    a = rng.integers(-3, 4, ([batch] if batch else []) + [m, k]).astype(np.float32)
    b = rng.integers(-3, 4, ([batch] if batch else []) + [k, n]).astype(np.float32)
    module = runtime.load_module(data, device="local-sync")
    assert np.array_equal(module.mm(a, b), a @ b)  # integer-valued: exact in any order
    # The kernel run piecewise over its workgroup range gives the same (each piece its own rows).
    fn = module.vm_module.functions["mm"]
    (kernel, ins, outs, name), = [d for d in fn.dispatches if kernels[d[3]].get("implementation")]
    count = kernels[name]["workgroups"]["count"]
    out = np.full(a.shape[:-1] + (n,), np.nan, np.float32)
    bounds = [0, count // 3, count // 3 + 1, count]
    for lo, hi in zip(bounds, bounds[1:]):
        kernel([a.reshape(fn.inputs[0]["shape"]), b.reshape(fn.inputs[1]["shape"])],
               [out.reshape(kernels[name]["outputs"][0]["shape"])], (lo, hi))
    assert np.array_equal(out, a @ b)


class TimedCalls:
    """Calls made through a ThreadChoice, each way taking `seconds[way]`; the first call after a
    switch runs cold (10 ms): it must not decide anything."""

    def __init__(self, seconds: dict):
        self.choice, self.seconds, self.picks, self.last = ThreadChoice(), seconds, [], None

    def run(self, calls: int) -> list:
        start = len(self.picks)
        for _ in range(calls):
            helpers = self.choice.pick()
            self.picks.append(helpers)
            self.choice.record(helpers, self.seconds[helpers] if helpers == self.last else 0.010)
            self.last = helpers
        return self.picks[start:]


def tries(picks: list, way: bool) -> int:
    """How many runs of `way` calls `picks` holds."""
    return sum(1 for i, p in enumerate(picks) if p == way and (i == 0 or picks[i - 1] != way))


def test_thread_choice_uses_the_faster_way_and_keeps_trying_the_other():
    from mlirtext.vm.thread_choice import EXPLORE_SHARE, MAX_GAP
    calls = TimedCalls({True: 0.002, False: 0.001})   # alone is faster here (a loaded machine)
    warm = 2 * (COLD + WARMUP)
    picks = calls.run(warm + 4 * MAX_GAP)
    assert picks[:warm] == [True] * (COLD + WARMUP) + [False] * (COLD + WARMUP)   # each way, warmed up, first
    later = picks[warm:]
    assert tries(later, True) >= 4, "the helpers are never tried again"
    # each try is WARMUP + 1 calls; the time they lose is at most EXPLORE_SHARE of the calls'
    lost = later.count(True) * (0.002 - 0.001)
    assert later.count(True) == tries(later, True) * (WARMUP + 1)
    assert lost <= EXPLORE_SHARE * len(later) * 0.001 * 1.1
    calls.seconds = {True: 0.0005, False: 0.001}   # the load went away: helpers win once tried again
    calls.run(MAX_GAP)
    after = calls.run(MAX_GAP)
    assert after.count(False) <= tries(after, False) * (WARMUP + 1) and after.count(True) > 0.9 * MAX_GAP


def test_a_much_slower_way_is_tried_more_rarely_than_a_close_one():
    close = TimedCalls({True: 0.0010, False: 0.0011})
    far = TimedCalls({True: 0.0010, False: 0.0020})
    assert tries(close.run(4000), False) > 3 * tries(far.run(4000), False) >= 3


def test_a_wrong_first_choice_is_measured_again_soon():
    """The helpers' warm-up calls ran slow (another runtime's threads still spinning on the other
    core): the first choice is alone, and the helpers, tried again MIN_GAP calls later, win."""
    from mlirtext.vm.thread_choice import MIN_GAP
    calls = TimedCalls({True: 0.0019, False: 0.00175})
    calls.run(2 * (COLD + WARMUP) + 1)
    assert calls.choice.faster() is False
    calls.seconds[True] = 0.0013
    picks = calls.run(MIN_GAP + WARMUP + 2)
    assert picks[-1] is True and calls.choice.faster() is True


def test_calls_slowed_now_and_then_do_not_swap_the_choice():
    """Every other call with the helpers slowed (another process on the other core, a helper
    woken after an idle while) and the helpers are still the choice: a way's time is its second
    fastest recent call, not the median, which those calls move past the time alone."""
    calls = TimedCalls({True: 0.0013, False: 0.0018})
    calls.run(2 * (COLD + WARMUP) + 1)
    slowed = iter([0.0013, 0.0030, 0.0014, 0.0026] * 50)
    picks = []
    for _ in range(200):
        helpers = calls.choice.pick()
        picks.append(helpers)
        calls.choice.record(helpers, next(slowed) if helpers else 0.0018)
    assert picks.count(False) <= tries(picks, False) * (WARMUP + 1) and picks[-1] is True


def test_threads_share_a_dispatch_through_its_counter_and_a_late_one_finds_nothing():
    """Several threads call the native take-wrapper of one dispatch at once; every workgroup is
    run exactly once (the output matches local-sync's bits and the done count is the workgroup
    count), and a thread that comes after the end takes nothing."""
    import threading
    data = module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir")
    task = runtime.load_module(data, device="local-task").vm_module
    fn = task.functions["main"]
    kernel, ins, outs, name = fn.dispatches[0]
    assert task.manifest["kernels"][name]["workgroups"]["take"] == name + ".take"
    args = inputs_for(fn, seed=5)
    x, w = (a.reshape(r["shape"]) for a, r in zip(args[:2], task.manifest["kernels"][name]["inputs"]))
    b = args[2].reshape(task.manifest["kernels"][name]["inputs"][2]["shape"])
    want = np.empty(task.manifest["kernels"][name]["outputs"][0]["shape"], np.float32)
    kernel([x, w, b], [want])
    got = np.full_like(want, np.nan)
    shared = kernel.shared([x, w, b], [got], 1)
    threads = [threading.Thread(target=shared.work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert shared.counters[8] == kernel.workgroups   # (every workgroup done)
    assert np.array_equal(got, want)
    got[...] = np.nan   # a late thread must not run any workgroup again
    shared.work()
    assert np.isnan(got).all()
    got2 = np.full_like(want, np.nan)
    kernel.shared([x, w, b], [got2], 3).work()
    assert np.array_equal(got2, want)


def test_a_late_thread_may_call_a_dispatch_after_its_module_is_gone():
    """A helper thread that starts after the call returned still calls the dispatch's take-wrapper
    (it finds nothing left); by then the caller may have dropped the module. The dispatch keeps the
    object code alive, so that call is not into unmapped code (it was a segfault under load)."""
    import gc
    import weakref
    data = module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir")
    task = runtime.load_module(data, device="local-task").vm_module
    fn = task.functions["main"]
    kernel, ins, outs, name = fn.dispatches[0]
    shapes = task.manifest["kernels"][name]
    args = [a.reshape(r["shape"]) for a, r in zip(inputs_for(fn, seed=5), shapes["inputs"])]
    got = np.empty(shapes["outputs"][0]["shape"], np.float32)
    shared = kernel.shared(args, [got], 1)
    shared.work()
    library = weakref.ref(shared.library)
    del task, fn, kernel, ins, outs
    gc.collect()
    assert library() is not None
    shared.work()   # the late thread: nothing left to take, and its code still mapped
    assert shared.counters[8] == shared.count
    del shared
    gc.collect()
    assert library() is None


def test_a_kernel_reads_each_read_only_input_at_its_own_address():
    """A kernel remembers a read-only input's address per argument (the constants: the same
    objects at every call); another read-only array in that place, or a writable one, is read at
    its own address: the results are those of fresh copies of the same values."""
    data = module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir")
    sync = runtime.load_module(data, device="local-sync").vm_module
    fn = sync.functions["main"]
    kernel, ins, outs, name = fn.dispatches[0]
    spec = sync.manifest["kernels"][name]
    out_shape = spec["outputs"][0]["shape"]

    def run(arrays) -> np.ndarray:
        got = np.full(out_shape, np.nan, np.float32)
        kernel(arrays, [got])
        return got

    def read_only(a):
        a = np.array(a, copy=True)
        a.setflags(write=False)
        return a
    first = [read_only(a.reshape(r["shape"])) for a, r in zip(inputs_for(fn, seed=5), spec["inputs"])]
    second = [read_only(a.reshape(r["shape"])) for a, r in zip(inputs_for(fn, seed=6), spec["inputs"])]
    want_first = run([np.array(a) for a in first])      # (writable copies: nothing remembered)
    want_second = run([np.array(a) for a in second])
    assert not np.array_equal(want_first, want_second)
    assert np.array_equal(run(first), want_first)
    assert np.array_equal(run(second), want_second)    # new read-only arrays in the same places
    assert np.array_equal(run(first), want_first)
    assert np.array_equal(run([first[0], *second[1:]]), run([np.array(first[0]), *[np.array(a) for a in second[1:]]]))


def test_a_call_the_calling_thread_runs_alone_makes_no_shared_dispatch():
    """On local-task, a split dispatch's SharedDispatch (its counters, its item) is made only when
    the helpers share the call; run alone, the step is called whole, with the same results."""
    from mlirtext.vm import vm as vm_module

    class Alone(ThreadChoice):
        def pick(self):
            return False
    data = module_file(ROOT / "benchmarks" / "programs" / "mlp.mlir")
    task = runtime.load_module(data, device="local-task").vm_module
    sync = runtime.load_module(data, device="local-sync").vm_module
    fn = task.functions["main"]
    args = inputs_for(fn, seed=5)
    made = []
    for kernel, *_ in fn.dispatches:
        if getattr(kernel, "shared", None) is not None:
            real = kernel.shared
            kernel.shared = lambda *a, real=real: made.append(1) or real(*a)
    fn.grains = [vm_module._grain(k.workgroups, 2, 1 << 30) if getattr(k, "shared", None) else 0
                 for k, *_ in fn.dispatches]
    assert any(fn.grains)
    fn.thread_choice = Alone()
    want = sync.functions["main"](*args)
    assert np.array_equal(fn(*args), want) and not made
    fn.thread_choice = None   # (the device's own way: the helpers share the split dispatches)
    if task.device.workers > 1:
        assert np.array_equal(fn(*args), want) and made


def test_one_disturbed_call_in_the_warm_up_does_not_decide():
    """A helpers call slowed by another process (its threads still spinning on the other core)
    is outvoted by the other warm-up calls: the choice is still the helpers."""
    choice = ThreadChoice()
    helper_times = iter([0.030] * COLD + [0.010] + [0.005] * 100)   # cold, then one disturbed
    for _ in range(2 * (COLD + WARMUP)):
        helpers = choice.pick()
        choice.record(helpers, next(helper_times) if helpers else 0.008)
    assert choice.pick() is True
