"""`mlirtext sweep SUITE|DIR` and `mlirtext sweep report`: a suite's tests as Ray tasks, a summary
table, the results kept, and the run checked against expected statuses."""
from __future__ import annotations

import os
import sys
import time
from collections import Counter

from .. import diagnostics
from ..cluster import ClusterError
from ..sweeps import expectations, gpu_suite, report, store
from ..sweeps.progress import StatusLine
from ..sweeps.results import STATUSES
from ..sweeps.runner import SUITES, SweepOptions, run_sweep
from .debug_switches import make_faults
from .io import write_output

#: Where the benchmark workloads are, beside the package in a checkout.
CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_PROGRAMS = os.path.join(CHECKOUT, "benchmarks", "programs")
CORPUS = os.path.join(os.path.dirname(CHECKOUT), "shared", "corpus")


def _fail(message: str) -> int:
    print(f"mlirtext sweep: error: {message}", file=sys.stderr)
    return 1


def main(args) -> int:
    if args.suite == "report":
        return _report(args)
    suite, path = args.suite, ""
    if suite == "bench":
        path = BENCH_PROGRAMS
    elif suite not in SUITES:
        if not os.path.isdir(suite):
            return _fail(f"unknown suite {suite!r}: choose from {', '.join(SUITES)}, 'report', or a directory "
                         "of .mlir or .onnx files")
        suite, path = "files", os.path.abspath(suite)
    elif suite in ("check", "lowering", "native", "vm", "gpu"):
        path = os.path.abspath(args.corpus or os.environ.get("MLIRTEXT_CORPUS") or CORPUS)
    targets = tuple(args.targets or ())
    if targets and suite != "gpu":
        return _fail("--targets is for the gpu suite")
    if args.approx and suite != "native":
        return _fail("--approx is for the native suite")
    unknown = [t for t in targets if t.partition(":")[0] not in gpu_suite.KNOWN_TARGETS]
    if unknown:
        return _fail(f"unknown GPU target {unknown[0]!r} (known: {', '.join(gpu_suite.KNOWN_TARGETS)})")
    devices = tuple(args.devices or ())
    if suite == "gpu" and not devices:
        devices = gpu_suite.devices_of(targets or gpu_suite.TARGETS)
    if args.timeout <= 0 or args.memory <= 0 or args.limit < 0:
        return _fail("--timeout, --memory and --limit must be positive")
    try:
        expected = expectations.read(args.expect) if args.expect else None
        db = store.open_db(args.db)
    except (expectations.ExpectationError, store.StoreError) as e:
        return _fail(str(e))
    faults = make_faults(args)
    if faults is None:
        return 1
    if faults and suite not in ("files", "bench"):
        return _fail("the --debug-* faults strike in the compiler of the files and bench suites only")
    options = SweepOptions(suite, path, devices, args.filter, args.limit, args.timeout, args.memory,
                           {"faults": [(f.flag().partition("=")[0], str(f.spec)) for f in faults],
                            "targets": targets, "approx": args.approx},
                           tuple(args.files))
    started = time.monotonic()
    try:
        results, not_run = run_sweep(options, args.cluster, args.num_cpus or None, args.budget,
                                     None if args.no_progress else StatusLine(), local_devices=tuple(args.devices or ()))
    except (ClusterError, ValueError, OSError) as e:
        return _fail(str(e))
    seconds = time.monotonic() - started
    run = store.save_run(db, args.suite if suite != "files" else path, results, seconds,
                         {k: v for k, v in vars(args).items() if k not in ("handler",)})
    print(summary(results, seconds))
    if not_run:
        print(f"budget of {args.budget:g} s spent: {len(not_run)} tests not started (partial figures)")
    print(f"(run {run} in {args.db or store.default_path()})")
    if args.tsv and _write(args.tsv, "test\tstatus\terror\tmax_error\tseconds\tsize\tnode\n" + "".join(
            "\t".join(str(x if x is not None else "") for x in (
                r.test, r.status, r.error.replace("\t", " ").replace("\n", " "), r.max_error, r.seconds, r.size,
                r.node)) + "\n" for r in sorted(results, key=lambda r: r.test))):
        return 1
    if args.write_expected and _write(args.write_expected, expectations.dumps(args.write_expected, args.suite,
                                                                              results)):
        return 1
    if expected is not None:
        comparison = expectations.compare(results, expected)
        described = expectations.describe(comparison, args.expect)
        if described:
            print(described)
        if not comparison.ok:
            return 1
        print(f"no test worse than expected ({args.expect})")
    return 0


def summary(results, seconds: float) -> str:
    """A table: per device (the bracketed part of a test's name, where there is one), each status's count."""
    groups: dict[str, Counter] = {}
    for r in results:
        device = r.test.rpartition(" [")[2].rstrip("]") if r.test.endswith("]") else "all"
        groups.setdefault(device, Counter())[r.status] += 1
    shown = [s for s in STATUSES if any(c[s] for c in groups.values())]
    width = max([len(g) for g in groups] + [6])
    lines = [f"{'':<{width}}  " + "  ".join(f"{s:>12}" for s in shown) + f"  {'total':>7}"]
    for group, counts in sorted(groups.items()):
        lines.append(f"{group:<{width}}  " + "  ".join(f"{counts[s]:>12}" for s in shown)
                     + f"  {sum(counts.values()):>7}")
    lines.append(f"({len(results)} results in {seconds:.0f} s)")
    return "\n".join(lines)


def _report(args) -> int:
    try:
        db = store.open_db(args.db, create=False)
        rep = report.build(db, args.only_suite)
    except store.StoreError as e:
        return _fail(str(e))
    print(report.text(rep))
    if args.html:
        return _write(args.html, report.page(rep))
    return 0


def _write(path: str, text: str) -> int:
    problem = write_output(path, text)
    if problem is not None:
        diagnostics.report([problem])
        return 1
    return 0
