"""Runtime speed: the issue's five workloads compiled by mlirtext and run on its VM (local-task),
against the real IREE runtime (iree-compile for llvm-cpu with the host CPU, then `iree.runtime`
in process, local-task) and plain numpy (one BLAS thread), calls interleaved round by round.

Reported per workload: the median time of each, the medians of the per-round ratios
(speedup over numpy = numpy time / time; mlirtext vs IREE = IREE time / mlirtext time, > 1 means
mlirtext is faster), compile time, module file size and mlirtext's planned peak memory. Also the
per-call overhead on a tiny function (4 floats) on each device. Results are checked against numpy
before timing. First line: who runs on how many threads (numpy: one BLAS thread; mlirtext local-task:
one per CPU, taking each dispatch's workgroups from a shared counter, the helpers joining a call
only while that is measured to be faster (vm/thread_choice.py); IREE local-task: its default task
topology) and the load average, since the machine is shared.

    PYTHONPATH=. python benchmarks/runtime_speed.py [--rounds 7] [--only NAME]... [--device local-task]
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

from mlirtext.bench import iree  # noqa: E402 - after the path is set
from mlirtext.bench.iree import iree_compile  # noqa: E402

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


def iree_function(vmfb: bytes, driver: str = "local-task"):
    """IREE's @main on `driver`, returning its one result."""
    call = iree.iree_function(vmfb, driver, "main")
    return lambda *args: call(*args)[0]


def timed(fn, args, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn(*args)
    return (time.perf_counter() - start) / repeat


def bench_workload(name, text, np_fn, args, rounds: int, device: str) -> dict:
    from mlirtext import runtime
    from mlirtext.vm.modfile import read_module_file
    start = time.perf_counter()
    data = runtime.compile_text(text, filename=name)
    ours_compile = time.perf_counter() - start
    plan = read_module_file(data).json("host/main.json")["plan"]
    ours = runtime.load_module(data, device=device).main
    vmfb, iree_seconds = iree_compile(text)
    theirs = iree_function(vmfb)
    want = np_fn(*args)
    for label, fn in (("mlirtext", ours), ("iree", theirs)):
        got = fn(*args)
        scale = max(1.0, float(np.max(np.abs(want))))
        err = float(np.max(np.abs(got - want)))
        if err > 1e-3 * scale:
            raise SystemExit(f"{name}: {label} differs from numpy (max |diff| {err})")
    once = min(timed(np_fn, args, 1), timed(ours, args, 1))
    repeat = max(1, min(50, int(0.05 / max(once, 1e-6))))
    times = {"mlirtext": [], "iree": [], "numpy": []}
    for _ in range(rounds):
        for label, fn in (("mlirtext", ours), ("iree", theirs), ("numpy", np_fn)):
            times[label].append(timed(fn, args, repeat))
    ratio = lambda a, b: statistics.median(x / y for x, y in zip(times[a], times[b]))  # noqa: E731
    return {"name": name, "ms": {k: statistics.median(v) * 1e3 for k, v in times.items()},
            "ours_vs_numpy": ratio("numpy", "mlirtext"), "iree_vs_numpy": ratio("numpy", "iree"),
            "ours_vs_iree": ratio("iree", "mlirtext"), "compile": (ours_compile, iree_seconds),
            "size": (len(data), len(vmfb)), "peak": (plan["peak_bytes"], plan["without_reuse_bytes"])}


def per_call_overhead(rounds: int) -> dict:
    from mlirtext import runtime
    data = runtime.compile_text(TINY, filename="tiny")
    x = np.arange(4, dtype=np.float32)
    vmfb, _ = iree_compile(TINY)
    fns = {"mlirtext local-sync": runtime.load_module(data, device="local-sync").main,
           "mlirtext local-task": runtime.load_module(data, device="local-task").main,
           "iree local-sync": iree_function(vmfb, "local-sync"),
           "iree local-task": iree_function(vmfb, "local-task")}
    times = {k: [] for k in fns}
    for _ in range(rounds):
        for k, fn in fns.items():
            times[k].append(timed(fn, [x], 2000))
    return {k: statistics.median(v) * 1e6 for k, v in times.items()}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", action="append", help="run only this workload (repeatable)")
    ap.add_argument("--device", default="local-task", choices=("local-task", "local-sync"))
    args = ap.parse_args(argv)
    from mlirtext.vm.devices import LocalTaskDevice
    workers = LocalTaskDevice.default_workers() if args.device == "local-task" else 1
    print(f"threads: numpy 1 (OPENBLAS_NUM_THREADS=1); mlirtext {args.device} {workers}; iree local-task its "
          f"default task topology; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}", flush=True)
    rng = np.random.default_rng(0)
    rows = []
    for name, (text, np_fn, inputs) in workloads(rng).items():
        if args.only and name not in args.only:
            continue
        rows.append(bench_workload(name, text, np_fn, inputs, args.rounds, args.device))
        r = rows[-1]
        print(f"{name:12s} mlirtext {r['ms']['mlirtext']:9.3f} ms  iree {r['ms']['iree']:9.3f} ms  "
              f"numpy {r['ms']['numpy']:9.3f} ms | speedup over numpy: mlirtext {r['ours_vs_numpy']:.2f}, "
              f"iree {r['iree_vs_numpy']:.2f} | mlirtext vs iree {r['ours_vs_iree']:.2f} | compile "
              f"{r['compile'][0]:.2f} s vs {r['compile'][1]:.2f} s | size {r['size'][0]} B vs {r['size'][1]} B | "
              f"peak {r['peak'][0]} B (no reuse {r['peak'][1]} B)", flush=True)
    if not args.only:
        overhead = per_call_overhead(max(3, args.rounds // 2))
        print("per-call overhead (tiny function, 4 floats): " +
              ", ".join(f"{k} {v:.1f} us" for k, v in overhead.items()))
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
