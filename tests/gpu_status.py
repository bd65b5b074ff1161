"""GPU figures: `mlirtext sweep gpu` (the corpus functions that lower to llvm, compiled for each GPU target,
validated, and run on the device of each target that has one; see mlirtext/sweeps/gpu_suite.py) summed
up as the README quotes them: compiled, validated and matched per target.

    PYTHONPATH=. python -m tests.gpu_status [--files GLOB]... [--targets cuda,rocm,vulkan-spirv,opencl-spirv]
                                            [--devices vulkan,opencl] [-j N] [--time-limit S] [--tsv FILE] [--db FILE]

The device runs happen only on a device the sweep's Ray offers: `--devices vulkan,opencl` has the
local Ray instance offer them (this machine's lavapipe and pocl, on the CPU); without it they are
skips. Also the helpers the GPU tests share.
"""
from __future__ import annotations

import argparse
import functools
import sys
import time
from collections import Counter

from mlirtext.cluster import ClusterError
from mlirtext.sweeps import gpu_suite, store
from mlirtext.sweeps.gpu_suite import TARGETS, compare, reference_kernels  # noqa: F401 - shared with the tests
from mlirtext.sweeps.progress import StatusLine
from mlirtext.sweeps.runner import SweepOptions, run_sweep

from . import corpus


@functools.lru_cache(maxsize=None)
def program_kernels(path) -> tuple:
    """(kernels module, kernel names) of a program file (for the tests: formed once per file)."""
    compiled, module = reference_kernels(path.read_text(), str(path))
    return module, list(compiled.kernels)


def need_tools(*tools) -> None:
    """Skip the calling test when a validation tool is missing."""
    import pytest
    from mlirtext.targets.gpu.validate import find_tool
    missing = [t for t in tools if find_tool(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not found (`make gpu-deps` installs them; ptxas comes with CUDA)")


#: Skips that stand for no function that lowers to llvm: one that does not, a file without test functions.
NOT_FUNCTIONS = ("does not lower to llvm", "no test functions")


def summary(results, specs) -> str:
    """Per target: compiled, validated and (where a device runs it) matched, of the functions that reach llvm."""
    by_label: dict = {}
    for r in results:
        by_label.setdefault(r.test.rpartition(" [")[2].rstrip("]"), []).append(r)
    results = [r for r in results if r.error not in NOT_FUNCTIONS]
    functions = {r.test.rpartition(" [")[0] for r in results}
    lines = [f"{len(functions)} corpus functions that lower to llvm"]
    for spec in specs:
        mine = [r for r in by_label.get(spec, []) if r.error not in NOT_FUNCTIONS]
        compiled = [r for r in mine if r.status == "pass" or r.error.startswith(("compiled;", "validation:"))]
        line = f"  {spec:13s} compiled {len(compiled)}/{len(mine)}, validated {sum(r.status == 'pass' for r in mine)}"
        if spec.partition(":")[0] in gpu_suite.RUNS_ON:
            runs = [r for r in by_label.get(gpu_suite.run_label(spec), []) if r.error not in NOT_FUNCTIONS]
            skipped = sum(r.status == "skip" for r in runs)
            line += (f", matched on {gpu_suite.RUNS_ON[spec.partition(':')[0]]} "
                     f"{sum(r.status == 'pass' for r in runs)}" + (f" ({skipped} not run: no such device)"
                                                                    if skipped else ""))
        lines.append(line)
    reasons = Counter((r.test.rpartition(" [")[2].rstrip("]"), r.status, r.error[:160]) for r in results
                      if r.status != "pass")
    if reasons:
        lines.append("reasons (target: status: why):")
        lines += [f"  {n:5d}  {label}: {status}: {why}" for (label, status, why), n in reasons.most_common(25)]
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.gpu_status", description=__doc__.split("\n\n")[0])
    p.add_argument("--files", action="append", default=[], metavar="GLOB", help="corpus files (repeatable)")
    p.add_argument("--targets", default=",".join(TARGETS),
                   help="comma-separated GPU targets, each TARGET or TARGET:ARCH (rocm:gfx90a, cuda:sm_90)")
    p.add_argument("--devices", default="", help="devices the local Ray instance offers (vulkan,opencl)")
    p.add_argument("-j", "--jobs", type=int, default=0, help="CPUs of the local Ray instance (default: all)")
    p.add_argument("--time-limit", type=float, default=600.0, help="seconds per corpus file (default 600)")
    p.add_argument("--tsv", help="write one line per result: test [target], status, error, ...")
    p.add_argument("--db", help="the sweep database (default: mlirtext sweep's)")
    args = p.parse_args(argv)
    specs = tuple(t for t in args.targets.split(",") if t)
    unknown = [t for t in specs if t.partition(":")[0] not in gpu_suite.KNOWN_TARGETS]
    if unknown or not specs:
        print(f"error: unknown target {unknown[0] if unknown else ''!r} (known: {', '.join(gpu_suite.KNOWN_TARGETS)})",
              file=sys.stderr)
        return 1
    devices = tuple(d for d in args.devices.split(",") if d)
    options = SweepOptions("gpu", str(corpus.CORPUS), devices or gpu_suite.devices_of(specs),
                           time_limit=args.time_limit, extra={"targets": specs}, files=tuple(args.files))
    started = time.monotonic()
    try:
        db = store.open_db(args.db)
        results, _ = run_sweep(options, num_cpus=args.jobs or None, progress=StatusLine(), local_devices=devices)
    except (ClusterError, ValueError, store.StoreError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    seconds = time.monotonic() - started
    store.save_run(db, "gpu", results, seconds, vars(args))
    if args.tsv:
        with open(args.tsv, "w", encoding="utf-8") as f:
            f.write("test\tstatus\terror\tseconds\tnode\n")
            for r in sorted(results, key=lambda r: r.test):
                f.write("\t".join(str(x).replace("\t", " ").replace("\n", " ")
                                  for x in (r.test, r.status, r.error, r.seconds, r.node)) + "\n")
    print(summary(results, specs))
    print(f"({seconds:.0f} s on a local Ray instance)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
