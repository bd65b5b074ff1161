"""How long a module file takes to load, and what its first call adds: mlirtext's `.vmpack`
(`runtime.load_module(path)`, local-sync) and, given one, IREE's `.vmfb` of the same model
(`VmModule.mmap`, local-sync), each the median of `--rounds` loads with the file in the page cache.

    PYTHONPATH=. python benchmarks/module_load.py model.vmpack [model.vmfb] [--rounds 5]

The first call's extra time is the first call less the second, on zeros of the signature: for
mlirtext it includes checking the weights' checksum (vm/modfile.py), which a load leaves to it.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mlirtext import runtime  # noqa: E402


def mlirtext_times(path: str, rounds: int) -> tuple[float, float]:
    """(median load seconds, median first-call extra seconds) of a .vmpack."""
    loads, extras = [], []
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        fn = runtime.load_module(path, device="local-sync").vm_module.entry_function(None)
        loaded = time.perf_counter()
        inputs = [np.zeros(r["shape"] or (), r["dtype"]) for r in fn.inputs]
        begin = time.perf_counter()
        fn(*inputs)
        first = time.perf_counter()
        fn(*inputs)
        loads.append(loaded - start)
        extras.append((first - begin) - (time.perf_counter() - first))
        del fn
    return statistics.median(loads), statistics.median(extras)


def iree_times(path: str, rounds: int) -> tuple[float, float]:
    """The same for a .vmfb, through iree.runtime (its one export)."""
    import iree.runtime as ireert
    loads, extras = [], []
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        config = ireert.Config("local-sync")
        context = ireert.SystemContext(config=config)
        vm_module = ireert.VmModule.mmap(context.instance, path)
        context.add_vm_module(vm_module)
        module = context.modules[vm_module.name]   # the MLIR module's name (JAX's: `@jit_<function>`)
        fn = module[next(n for n in module.vm_module.function_names if not n.startswith("__"))]
        loaded = time.perf_counter()
        signature = fn.vm_function.reflection.get("iree.abi.declaration", "")
        inputs = _iree_inputs(signature)
        begin = time.perf_counter()
        fn(*inputs)
        first = time.perf_counter()
        fn(*inputs)
        loads.append(loaded - start)
        extras.append((first - begin) - (time.perf_counter() - first))
        del fn, module, vm_module, context
    return statistics.median(loads), statistics.median(extras)


def _iree_inputs(declaration: str) -> list:
    """Zeros for each `tensor<AxBxT>` argument of an IREE function declaration."""
    import re
    arguments = declaration.split("->")[0]
    dtypes = {"f32": np.float32, "f16": np.float16, "i64": np.int64, "i32": np.int32, "i8": np.int8, "i1": np.bool_}
    out = []
    for dims, element in re.findall(r"tensor<((?:\d+x)*)(\w+)>", arguments):
        out.append(np.zeros([int(d) for d in dims.split("x") if d], dtypes[element]))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("vmpack")
    ap.add_argument("vmfb", nargs="?")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    for path in (args.vmpack, args.vmfb):
        if path:
            with open(path, "rb") as f:   # (in the page cache: what is timed is the load, not the disk)
                f.read()
    load, extra = mlirtext_times(args.vmpack, args.rounds)
    print(f"{args.vmpack}: {os.path.getsize(args.vmpack) / 1e6:.1f} MB, mlirtext load {load:.3f} s, "
          f"first call +{extra:.3f} s (load average {os.getloadavg()[0]:.1f})")
    if args.vmfb:
        load, extra = iree_times(args.vmfb, args.rounds)
        print(f"{args.vmfb}: {os.path.getsize(args.vmfb) / 1e6:.1f} MB, IREE load {load:.3f} s, "
              f"first call +{extra:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
