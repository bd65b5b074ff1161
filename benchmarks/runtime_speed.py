"""Runtime speed: the issue's five workloads compiled by mlirtext and run on its VM, against the
real IREE runtime (iree-compile for llvm-cpu with the host CPU, then `iree.runtime` in process) and
plain numpy (one BLAS thread), at matched thread counts, calls interleaved round by round.

Thread counts (`--threads`, default both): 1 = mlirtext local-sync vs IREE local-sync; 2 =
mlirtext local-task with 2 workers vs IREE local-task with 2 workers
(`--task_topology_max_group_count=2`). numpy always runs on one BLAS thread.

Two views of each runtime, side by side:
- numpy: numpy arrays in and out on every call, as an application hands them over (IREE copies
  each input that is not 64-byte aligned, and each result back to the host; mlirtext reads the
  inputs where they are and returns a fresh array per result);
- staged: IREE's inputs staged on its device once (`iree.runtime.asdevicearray`) and the results
  left there, as iree-benchmark-module measures; mlirtext's CPU devices compute on host memory,
  so its staged view is the same inputs with the results written into buffers the caller keeps
  from call to call (`out=`).

Reported per workload and thread count: the median time of each (on 2 threads also the CPU time
per call of all the process's threads: what the second thread costs the machine), the medians of
the per-round ratios (speedup over numpy = numpy time / time; mlirtext vs IREE = IREE time / mlirtext time, > 1
means mlirtext is faster), compile time, module file size and mlirtext's planned peak memory.
Also the per-call overhead on a tiny function (4 floats). Results are checked against numpy before
timing. First line: the threads, the clock and the load average, since the machine is shared.

`--clock cpu` (with `--threads 1`) times every call by the process's CPU time instead of the wall
clock: on a shared machine whose load is well above its cores, one-thread wall times are mostly
time spent waiting for a core. Two-thread rows need the wall clock (CPU time adds the threads up).

    PYTHONPATH=. python benchmarks/runtime_speed.py [--rounds 7] [--only NAME]... [--threads 1 2] [--clock cpu]
"""
from __future__ import annotations

import os

# One BLAS thread, set before numpy loads: the honest baseline on a shared machine.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from mlirtext import runtime  # noqa: E402 - after the path is set
from mlirtext.bench import iree  # noqa: E402
from mlirtext.vm.modfile import read_module_file  # noqa: E402

#: threads -> (mlirtext device, IREE driver)
DEVICES = {1: ("local-sync", "local-sync"), 2: ("local-task", "local-task")}
TASK_WORKERS = 2

ELEMENTWISE = """
func.func @main(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %ca = stablehlo.constant dense<0.5> : tensor<f32>
  %cb = stablehlo.constant dense<0.25> : tensor<f32>
  %a = stablehlo.broadcast_in_dim %ca, dims = [] : (tensor<f32>) -> tensor<1048576xf32>
  %b = stablehlo.broadcast_in_dim %cb, dims = [] : (tensor<f32>) -> tensor<1048576xf32>
  %0 = stablehlo.multiply %x, %a : tensor<1048576xf32>
  %1 = stablehlo.add %0, %b : tensor<1048576xf32>
  %2 = stablehlo.tanh %1 : tensor<1048576xf32>
  %3 = stablehlo.logistic %x : tensor<1048576xf32>
  %4 = stablehlo.multiply %2, %3 : tensor<1048576xf32>
  return %4 : tensor<1048576xf32>
}
"""

CONV = """
func.func @main(%x: tensor<1x56x56x64xf32>, %w: tensor<3x3x64x64xf32>, %bias: tensor<64xf32>) -> tensor<1x56x56x64xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x56x56x64xf32>
  %1 = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<64xf32>) -> tensor<1x56x56x64xf32>
  %2 = stablehlo.add %0, %1 : tensor<1x56x56x64xf32>
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<1x56x56x64xf32>
  %3 = stablehlo.maximum %2, %z : tensor<1x56x56x64xf32>
  return %3 : tensor<1x56x56x64xf32>
}
"""

TINY = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def np_mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, np.float32(0))
    return np.maximum(h @ w2 + b2, np.float32(0))


def np_elementwise(x):
    return np.tanh(x * np.float32(0.5) + np.float32(0.25)) * (np.float32(1) / (np.float32(1) + np.exp(-x)))


def np_conv(x, w, bias):
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))
    return np.maximum(np.tensordot(windows, w, axes=([4, 5, 3], [0, 1, 2])) + bias, np.float32(0))


def np_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_attention(q, k, v):
    s = (q @ k.transpose(0, 2, 1)) * np.float32(0.125)
    e = np.exp(s - s.max(axis=2, keepdims=True))
    return (e / e.sum(axis=2, keepdims=True)) @ v


def workloads(rng):
    f = lambda *shape: rng.standard_normal(shape, dtype=np.float32)  # noqa: E731
    programs = HERE / "programs"
    return {
        "mlp": ((programs / "mlp.mlir").read_text(), np_mlp,
                [f(64, 512), f(512, 512) * np.float32(0.05), f(512), f(512, 512) * np.float32(0.05), f(512)]),
        "elementwise": (ELEMENTWISE, np_elementwise, [f(1048576)]),
        "conv": (CONV, np_conv, [f(1, 56, 56, 64), f(3, 3, 64, 64) * np.float32(0.05), f(64)]),
        "softmax": ((programs / "softmax.mlir").read_text(), np_softmax, [f(256, 1024)]),
        "attention": ((programs / "attention.mlir").read_text(), np_attention, [f(8, 128, 64) for _ in range(3)]),
    }


#: --clock: what a call's time is measured by
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def timed(fn, args, repeat: int, clock=time.perf_counter) -> float:
    return timed_both(fn, args, repeat, clock)[0]


def timed_both(fn, args, repeat: int, clock=time.perf_counter) -> tuple:
    """Seconds per call by `clock`, and the process's CPU seconds per call (all its threads)."""
    start, cpu = clock(), time.process_time()
    for _ in range(repeat):
        fn(*args)
    return (clock() - start) / repeat, (time.process_time() - cpu) / repeat


class Contenders:
    """mlirtext and IREE on one thread count: (label, function, its arguments) each."""

    def __init__(self, data: bytes, vmfb: bytes, threads: int, args: list):
        ours_device, driver = DEVICES[threads]
        module = runtime.load_module(data, device=ours_device)
        if threads > 1:
            module.vm_module.device.workers = threads   # not one per CPU: the same count as IREE's
        numpy_view = iree.iree_function(vmfb, driver, "main")
        stage, staged_call = iree.iree_staged_function(vmfb, driver, "main")
        kept = module.main(*args)   # the staged view's result buffers, reused by every call
        self.calls = [(f"mlirtext {ours_device}", module.main, args),
                      (f"mlirtext {ours_device} staged", lambda *a: module.main(*a, out=kept), args),
                      (f"iree {driver}", lambda *a: numpy_view(*a)[0], args),
                      (f"iree {driver} staged", staged_call, stage(*args))]

    def check(self, name: str, want) -> None:
        scale = max(1.0, float(np.max(np.abs(want))))
        for label, fn, args in self.calls:
            got = fn(*args)
            got = got.to_host() if hasattr(got, "to_host") else got
            err = float(np.max(np.abs(np.asarray(got) - want)))
            if err > 1e-3 * scale:
                raise SystemExit(f"{name}: {label} differs from numpy (max |diff| {err})")


def bench_workload(name, text, np_fn, args, rounds: int, thread_counts, clock=time.perf_counter) -> dict:
    start = time.perf_counter()
    data = runtime.compile_text(text, filename=name)
    ours_compile = time.perf_counter() - start
    plan = read_module_file(data).json("host/main.json")["plan"]
    vmfb, iree_seconds = iree.iree_compile(text)
    want = np_fn(*args)
    calls = [("numpy", np_fn, args)]
    for threads in thread_counts:
        contenders = Contenders(data, vmfb, threads, args)
        contenders.check(name, want)
        calls += contenders.calls
    once = min(timed(fn, a, 1, clock) for _, fn, a in calls)
    repeat = max(1, min(50, int(0.05 / max(once, 1e-6))))
    times = {label: [] for label, _, _ in calls}
    cpu = {label: [] for label, _, _ in calls}
    for i in range(rounds):
        order = calls[i % len(calls):] + calls[:i % len(calls)]   # who goes first moves round by round
        for label, fn, a in order:
            seconds, cpu_seconds = timed_both(fn, a, repeat, clock)
            times[label].append(seconds)
            cpu[label].append(cpu_seconds)
    ratio = lambda a, b: statistics.median(x / y for x, y in zip(times[a], times[b]))  # noqa: E731
    return {"name": name, "ms": {k: statistics.median(v) * 1e3 for k, v in times.items()}, "ratio": ratio,
            "cpu_ms": {k: statistics.median(v) * 1e3 for k, v in cpu.items()},
            "compile": (ours_compile, iree_seconds), "size": (len(data), len(vmfb)),
            "peak": (plan["peak_bytes"], plan["without_reuse_bytes"])}


def report(r: dict, thread_counts) -> str:
    ms, ratio = r["ms"], r["ratio"]
    lines = [f"{r['name']:12s} numpy {ms['numpy']:9.3f} ms | compile {r['compile'][0]:.2f} s vs "
             f"{r['compile'][1]:.2f} s | size {r['size'][0]} B vs {r['size'][1]} B | peak {r['peak'][0]} B "
             f"(no reuse {r['peak'][1]} B)"]
    for threads in thread_counts:
        ours, driver = (f"mlirtext {DEVICES[threads][0]}", f"iree {DEVICES[threads][1]}")
        staged, driver_staged = ours + " staged", driver + " staged"
        lines.append(f"  {threads} thread{'s' if threads > 1 else ' '}: {ours} {ms[ours]:.3f} / {ms[staged]:.3f} ms, "
                     f"{driver} {ms[driver]:.3f} / {ms[driver_staged]:.3f} ms (numpy in/out / staged) | mlirtext "
                     f"vs iree: {ratio(driver, ours):.2f} (numpy in/out), {ratio(driver_staged, staged):.2f} "
                     f"(staged) | speedup over numpy: mlirtext {ratio('numpy', ours):.2f} / "
                     f"{ratio('numpy', staged):.2f}, iree {ratio('numpy', driver):.2f} / "
                     f"{ratio('numpy', driver_staged):.2f}")
        if threads > 1:   # (a runtime whose idle workers spin takes more CPU than the work needs)
            cpu = r["cpu_ms"]
            lines.append(f"             CPU time per call, all threads: mlirtext {cpu[ours]:.3f} / {cpu[staged]:.3f} ms, "
                         f"iree {cpu[driver]:.3f} / {cpu[driver_staged]:.3f} ms (numpy in/out / staged)")
    return "\n".join(lines)


def per_call_overhead(rounds: int, thread_counts, clock=time.perf_counter) -> dict:
    data = runtime.compile_text(TINY, filename="tiny")
    x = np.arange(4, dtype=np.float32)
    vmfb, _ = iree.iree_compile(TINY)
    calls = []
    for threads in thread_counts:
        calls += Contenders(data, vmfb, threads, [x]).calls
    times = {label: [] for label, _, _ in calls}
    for _ in range(rounds):
        for label, fn, args in calls:
            times[label].append(timed(fn, args, 2000, clock))
    return {k: statistics.median(v) * 1e6 for k, v in times.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", action="append", help="run only this workload (repeatable)")
    ap.add_argument("--threads", type=int, nargs="+", choices=sorted(DEVICES), default=sorted(DEVICES),
                    help="thread counts to compare at (default: 1 and 2)")
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                    help="time calls by the wall clock or by the process's CPU time (with --threads 1 only)")
    args = ap.parse_args(argv)
    if args.clock == "cpu" and args.threads != [1]:
        ap.error("--clock cpu needs --threads 1 (CPU time adds up the threads of a 2-thread call)")
    clock = CLOCKS[args.clock]
    iree.set_task_workers(TASK_WORKERS)   # before IREE's first local-task device
    print(f"threads: numpy 1 (OPENBLAS_NUM_THREADS=1); 1 = mlirtext local-sync vs iree local-sync; {TASK_WORKERS} = "
          f"mlirtext local-task with {TASK_WORKERS} workers vs iree local-task with {TASK_WORKERS} workers; "
          f"calls timed by the {'CPU time' if args.clock == 'cpu' else 'wall clock'}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    rng = np.random.default_rng(0)
    for name, (text, np_fn, inputs) in workloads(rng).items():
        if args.only and name not in args.only:
            continue
        print(report(bench_workload(name, text, np_fn, inputs, args.rounds, args.threads, clock), args.threads),
              flush=True)
    if not args.only:
        overhead = per_call_overhead(max(3, args.rounds // 2), args.threads, clock)
        print("per-call overhead (tiny function, 4 floats): " +
              ", ".join(f"{k} {v:.1f} us" for k, v in overhead.items()))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
