"""ONNX conformance figures: `mlirtext sweep onnx` (the ONNX node tests through torch-mlir to StableHLO,
one Ray task each; see mlirtext/sweeps/onnx_suite.py) summed up as the README quotes them: converted,
ran and matched per device.

    python -m tests.onnx_status [-j N] [--time-limit S] [--filter SUBSTR] [--limit N] [--budget S]
                                [--tsv FILE] [--expect FILE] [--db FILE]

With --expect (`make onnx-status` gives tests/expected/onnx.tsv) a test worse than expected fails the
run (exit status 1), named; tests better than expected are listed.
"""
from __future__ import annotations

import argparse
import sys
import time

from mlirtext.cluster import ClusterError
from mlirtext.sweeps import expectations, store
from mlirtext.sweeps.onnx_suite import DEVICES
from mlirtext.sweeps.progress import StatusLine
from mlirtext.sweeps.runner import SweepOptions, run_sweep

RAN = ("pass", "mismatch")


def summary(results, devices=DEVICES) -> str:
    """converted / ran / matched per device, from the sweep's results (`test [device]`)."""
    tests: dict = {}
    for r in results:
        test, _, device = r.test.rpartition(" [")
        tests.setdefault(test, {"details": r.details})[device.rstrip("]")] = r.status
    converted = [t for t in tests.values() if t["details"].get("converted")]
    bound = [t for t in converted if t["details"].get("bound")]
    lines = [f"ONNX node tests: {len(tests)}; converted to StableHLO by torch-mlir: {len(converted)}",
             f"  of which {len(bound)} only with their scalar and integer-vector inputs as constants"]
    for device in devices:
        ran = [t for t in converted if t.get(device) in RAN]
        matched = [t for t in converted if t.get(device) == "pass"]
        lines.append(f"  {device:<10} ran {len(ran)}, matched {len(matched)} (of {len(converted)} converted; "
                     f"{sum(1 for t in matched if t['details'].get('bound'))} of them with constant inputs)")
    if len(devices) > 1:
        every = [t for t in converted if all(t.get(d) == "pass" for d in devices)]
        lines.append(f"  matched on every device: {len(every)}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.onnx_status", description=__doc__.split("\n\n")[0])
    p.add_argument("-j", "--jobs", type=int, default=0, help="CPUs of the local Ray instance (default: all)")
    p.add_argument("--time-limit", type=float, default=120.0, help="seconds per test (default 120)")
    p.add_argument("--filter", default="", help="only tests whose name contains this")
    p.add_argument("--limit", type=int, default=0, help="only the first N tests (after --filter)")
    p.add_argument("--devices", default=",".join(DEVICES), help=f"comma-separated (default {','.join(DEVICES)})")
    p.add_argument("--budget", type=float, default=0.0,
                   help="start no test after this many seconds (0: no budget); the summary says how many ran")
    p.add_argument("--tsv", help="write one line per result: test [device], status, error, ...")
    p.add_argument("--expect", help="expected statuses (tests/expected/onnx.tsv): a test worse fails the run")
    p.add_argument("--db", help="the sweep database the results go to (default: mlirtext sweep's, "
                                "~/.cache/mlirtext/sweeps.sqlite; `mlirtext sweep report` reads it)")
    args = p.parse_args(argv)
    devices = tuple(d for d in args.devices.split(",") if d)
    unknown = [d for d in devices if d not in DEVICES]
    if unknown or not devices:
        print(f"error: unknown device {unknown[0] if unknown else ''!r}: choose from {', '.join(DEVICES)}",
              file=sys.stderr)
        return 1
    started = time.monotonic()
    options = SweepOptions("onnx", devices=devices, filter=args.filter, limit=args.limit, time_limit=args.time_limit)
    try:
        expected = expectations.read(args.expect) if args.expect else None
        db = store.open_db(args.db)
        results, not_run = run_sweep(options, num_cpus=args.jobs or None, budget=args.budget, progress=StatusLine())
    except (ClusterError, ValueError, expectations.ExpectationError, store.StoreError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    store.save_run(db, "onnx", results, time.monotonic() - started, vars(args))
    if args.tsv:
        with open(args.tsv, "w", encoding="utf-8") as f:
            f.write("test\tstatus\terror\tmax_error\tseconds\tsize\tnode\n")
            for r in sorted(results, key=lambda r: r.test):
                f.write("\t".join(str("" if x is None else x).replace("\t", " ").replace("\n", " ") for x in (
                    r.test, r.status, r.error, r.max_error, r.seconds, r.size, r.node)) + "\n")
    print(summary(results, devices))
    if not_run:
        print(f"budget of {args.budget:g} s spent: {len(not_run)} tests not run (partial figures)")
    print(f"({time.monotonic() - started:.0f} s on a local Ray instance)")
    if expected is not None:
        comparison = expectations.compare(results, expected)
        if expectations.describe(comparison, args.expect):
            print(expectations.describe(comparison, args.expect))
        return 0 if comparison.ok else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
