"""Tiled GPU kernels against the thread-per-element mapping, on the `vulkan` device (lavapipe
where there is no GPU): each workload is compiled twice for vulkan-spirv, with tiling and with
MLIRTEXT_GPU_TILING=0, both are checked against the reference device, and their calls are
interleaved round by round. Reported: each one's median time per call and the median of the
per-round ratios (untiled time / tiled time: > 1 means the tiled kernels are faster).

    PYTHONPATH=. python benchmarks/gpu_tiling.py [--rounds 5] [--only mlp|softmax|attention|conv]...
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

WORKLOADS = ("mlp", "softmax", "attention", "conv")


def compiled(text: str, path: str, tiling: bool) -> bytes:
    from mlirtext.api import parse_and_verify
    from mlirtext.compiler.driver import compile_module
    from mlirtext.compiler.module_writer import pack
    os.environ["MLIRTEXT_GPU_TILING"] = "1" if tiling else "0"   # read when the kernels are generated
    try:
        return pack(compile_module(parse_and_verify(text, path).module, "vulkan-spirv"))
    finally:
        del os.environ["MLIRTEXT_GPU_TILING"]


def main() -> int:
    from mlirtext.vm.vm import LoadedModule
    from tests.test_vm_programs import inputs_for
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", action="append", choices=WORKLOADS)
    opts = parser.parse_args()
    print(f"vulkan device, load average {os.getloadavg()[0]:.2f}; {opts.rounds} rounds, calls interleaved")
    for workload in opts.only or WORKLOADS:
        path = HERE / "programs" / f"{workload}.mlir"
        text = path.read_text()
        modules = {how: LoadedModule(compiled(text, str(path), how == "tiled"), "vulkan")
                   for how in ("tiled", "untiled")}
        reference = LoadedModule(compiled(text, str(path), True), "reference")
        (name,) = reference.functions
        args = inputs_for(reference.function(name))
        want = reference.function(name)(*args)
        calls = {how: m.function(name) for how, m in modules.items()}
        for how, call in calls.items():   # (also the warm-up: pipelines are created on first use)
            for g, w in zip(call(*args), want):
                scale = max(1.0, float(np.max(np.abs(w))))
                if not np.all(np.abs(g.astype(np.float64) - w) <= 1e-5 * scale + 1e-4 * np.abs(w)):
                    print(f"{workload}: {how} does not match the reference device")
                    return 1
        times = {how: [] for how in calls}
        for _ in range(opts.rounds):
            for how, call in calls.items():
                start = time.perf_counter()
                call(*args)
                times[how].append(time.perf_counter() - start)
        ratio = statistics.median(u / t for u, t in zip(times["untiled"], times["tiled"]))
        print(f"{workload:10s} tiled {statistics.median(times['tiled']) * 1e3:9.1f} ms   untiled "
              f"{statistics.median(times['untiled']) * 1e3:9.1f} ms   untiled/tiled {ratio:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
