"""Native kernels vs numpy: the elementwise workload tanh(x*a+b)*sigmoid(x) on 1M f32.

    PYTHONPATH=. python benchmarks/native_kernels.py [--rounds 30]

The program is lowered with polynomial approximation of tanh and exp (the
native pipeline of `mlirtext.targets.native`), translated to LLVM IR, compiled
at O3 for the host CPU and called through ctypes. numpy runs the same formula
(one thread: `OPENBLAS_NUM_THREADS=1`, though nothing here uses BLAS). Calls are
interleaved round by round; the figure is the median of per-round ratios
(numpy time / native time: above 1 means native is faster). The script also
checks that the optimised IR has vector loops (`<N x float>`) and reports the
largest error against numpy in float64.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

N = 1 << 20
PROGRAM = f"""// tanh(x * a + b) * sigmoid(x) on 1M f32 (issue 6's elementwise workload)
func.func @main(%x: tensor<{N}xf32>, %a: tensor<f32>, %b: tensor<f32>) -> tensor<{N}xf32> {{
  %ab = stablehlo.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<{N}xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [] : (tensor<f32>) -> tensor<{N}xf32>
  %0 = stablehlo.multiply %x, %ab : tensor<{N}xf32>
  %1 = stablehlo.add %0, %bb : tensor<{N}xf32>
  %2 = stablehlo.tanh %1 : tensor<{N}xf32>
  %3 = stablehlo.logistic %x : tensor<{N}xf32>
  %4 = stablehlo.multiply %2, %3 : tensor<{N}xf32>
  return %4 : tensor<{N}xf32>
}}
"""


def numpy_version(x, a, b):
    return np.tanh(x * a + b) * (np.float32(1) / (np.float32(1) + np.exp(-x)))


def compile_native():
    from mlirtext import api
    from mlirtext.targets.llvm_cpu import compile_llvm_ir, load_object
    from mlirtext.targets.llvm_ir import translate_module
    from mlirtext.targets.native import lower_for_native
    from mlirtext.targets.native_call import native_functions
    result = api.parse_and_verify(PROGRAM, "elementwise.mlir")
    assert result.ok, result.diagnostics
    module = result.module
    start = time.perf_counter()
    lower_for_native(module)
    ir = translate_module(module)
    native = compile_llvm_ir(ir)
    fn = native_functions(load_object(native.object_code), module)["main"]
    return fn, native, time.perf_counter() - start


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args(argv)
    fn, native, compile_s = compile_native()
    widths = sorted(set(re.findall(r"<(\d+) x float>", native.llvm_ir)), key=int)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N).astype(np.float32) * 3
    a, b = np.float32(0.7), np.float32(0.2)
    got = fn(x, np.array(a), np.array(b))[0]
    want = numpy_version(x.astype(np.float64), float(a), float(b))
    err = float(np.max(np.abs(got - want)))
    ratios, t_np, t_native = [], [], []
    for _ in range(args.rounds):
        s = time.perf_counter()
        numpy_version(x, a, b)
        tn = time.perf_counter() - s
        s = time.perf_counter()
        fn(x, np.array(a), np.array(b))
        tc = time.perf_counter() - s
        t_np.append(tn)
        t_native.append(tc)
        ratios.append(tn / tc)
    print(f"compile (lower + translate + O3 + load): {compile_s:.2f} s")
    print(f"vector widths in the optimised IR: {', '.join(f'<{w} x float>' for w in widths) or 'none (not vectorised)'}")
    print(f"max |native - float64 reference|: {err:.2e}")
    print(f"numpy  median {statistics.median(t_np) * 1e3:.2f} ms")
    print(f"native median {statistics.median(t_native) * 1e3:.2f} ms")
    print(f"speedup over numpy (median of per-round ratios, {args.rounds} rounds): {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
