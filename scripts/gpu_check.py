"""On a machine with an NVIDIA GPU: the five benchmark workloads on the `cuda` device, checked
against the reference device, with their latency.

    PYTHONPATH=. python scripts/gpu_check.py [--repeat N] [--arch sm_80] [--programs DIR]

Each program of benchmarks/programs/ is compiled for cuda (PTX for --arch, JIT-compiled by the
driver for the GPU it finds) and llvm-cpu, run on `cuda` and on the reference device with the
same random inputs, and compared (1e-4 relative, 1e-5 of the output's scale). Latency is the
median of --repeat calls (each dispatch copies its buffers to and from the GPU: it measures the
VM's round trips as much as the kernels). Exit code 0 when every workload matches, 1 otherwise;
without a GPU or driver it says so and exits 1.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    from mlirtext.api import parse_and_verify
    from mlirtext.compiler.driver import CompileFailed, compile_module
    from mlirtext.compiler.module_writer import pack
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.vm import LoadedModule, VMError
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--arch", default="sm_80", help="PTX architecture (sm_80 PTX also runs on sm_90)")
    ap.add_argument("--programs", default=str(ROOT / "benchmarks" / "programs"))
    args = ap.parse_args(argv)
    try:
        from mlirtext.vm.cuda_device import driver
        _, _, gpu = driver()
    except DeviceError as e:
        print(f"gpu_check: {e}", file=sys.stderr)
        return 1
    print(f"device: {gpu}")
    failures = 0
    for path in sorted(Path(args.programs).glob("*.mlir")):
        try:
            compiled = compile_module(parse_and_verify(path.read_text(), str(path)).module, "llvm-cpu,cuda",
                                      gpu_arch={"cuda": args.arch})
            data = pack(compiled)
            gpu_mod, ref_mod = LoadedModule(data, "cuda"), LoadedModule(data, "reference")
            (name,) = gpu_mod.functions
            fn = gpu_mod.function(name)
            rng = np.random.default_rng(0)
            inputs = [rng.standard_normal(r["shape"] or ()).astype(r["dtype"]) for r in fn.inputs]
            want = ref_mod.function(name)(*inputs)
            times, got = [], None
            for _ in range(max(1, args.repeat)):
                start = time.perf_counter()
                got = fn(*inputs)
                times.append(time.perf_counter() - start)
        except (CompileFailed, VMError, DeviceError) as e:
            print(f"{path.stem:12s} FAILED: {e}")
            failures += 1
            continue
        worst = max(float(np.max(np.abs(g.astype(np.float64) - w))) for g, w in zip(got, want))
        ok = all(np.all(np.abs(g.astype(np.float64) - w) <= 1e-5 * max(1.0, float(np.max(np.abs(w))))
                        + 1e-4 * np.abs(w)) for g, w in zip(got, want))
        failures += not ok
        print(f"{path.stem:12s} {'ok  ' if ok else 'DIFF'} max |diff| {worst:.3g}  median {statistics.median(times) * 1e3:.2f} ms "
              f"({len(fn.dispatches)} dispatches)")
    print(f"{'all match' if not failures else f'{failures} workloads failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
