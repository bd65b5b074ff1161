"""The ONNX node-test sweep on a local Ray instance (`mlirtext sweep onnx`) against the status run it
replaces (`tests/onnx_status.py` on its own worker pool, as of LEGACY_REV), same tests, same number of
CPUs, one after the other in one run: the per-test statuses of both and the wall-time ratio.

    python benchmarks/sweep_speed.py [-j 2] [--limit N] [--filter SUBSTR] [--write-expected FILE]

The old runner's per-device outcomes read as statuses: matched = pass, "ran: ..." = mismatch, a
CompileFailed or a parse/verify error or no conversion = fail-compile, another error = fail-run,
"crashed" = crash, "over the ... limit" = timeout.
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: The last commit whose tests/onnx_status.py ran its own worker pool (tests/worker_slot.py).
LEGACY_REV = "7825f9e"
DEVICES = ("reference", "local-task")


def legacy_status(converted: bool, outcome: str, why: str) -> str:
    if not converted:
        return "crash" if why == "crashed" else "timeout" if why.startswith("over the") else "fail-compile"
    if outcome == "matched":
        return "pass"
    if outcome.startswith("ran:"):
        return "mismatch"
    if outcome.startswith(("parse/verify", "error: CompileFailed")):
        return "fail-compile"
    if outcome == "crashed":
        return "crash"
    if outcome.startswith("over the"):
        return "timeout"
    return "fail-run"


def run_legacy(tmp: str, jobs: int, selection: list[str], tsv: str) -> float:
    package = os.path.join(tmp, "legacy")
    os.makedirs(package)
    open(os.path.join(package, "__init__.py"), "w").close()
    for name in ("onnx_status.py", "worker_slot.py"):
        source = subprocess.run(["git", "-C", ROOT, "show", f"{LEGACY_REV}:tests/{name}"], check=True,
                                capture_output=True, text=True).stdout
        with open(os.path.join(package, name), "w") as f:
            f.write(source)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tmp, ROOT, os.path.join(ROOT, "server")]))
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "legacy.onnx_status", "-j", str(jobs), "--tsv", tsv, *selection],
                   check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def run_sweep(tmp: str, jobs: int, selection: list[str], tsv: str, expected: str | None) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "server")]))
    command = [sys.executable, "-m", "mlirtext", "sweep", "onnx", "--num-cpus", str(jobs), "--tsv", tsv,
               "--db", os.path.join(tmp, "sweeps.sqlite"), "--no-progress", *selection]
    if expected:
        command += ["--write-expected", expected]
    started = time.monotonic()
    subprocess.run(command, check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="CPUs for both (default all)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N tests")
    ap.add_argument("--filter", default="", help="only tests whose name contains this")
    ap.add_argument("--write-expected", metavar="FILE", help="keep the sweep's statuses as an expected file")
    args = ap.parse_args(argv)
    selection = (["--limit", str(args.limit)] if args.limit else []) + (["--filter", args.filter] if args.filter else [])
    with tempfile.TemporaryDirectory() as tmp:
        old_tsv, new_tsv = os.path.join(tmp, "old.tsv"), os.path.join(tmp, "new.tsv")
        old_s = run_legacy(tmp, args.jobs, selection, old_tsv)
        new_s = run_sweep(tmp, args.jobs, selection, new_tsv,
                          os.path.abspath(args.write_expected) if args.write_expected else None)
        with open(old_tsv) as f:
            old = {}
            for row in csv.DictReader(f, delimiter="\t"):
                for d in DEVICES:
                    old[f"{row['test']} [{d}]"] = legacy_status(row["converted"] == "True", row[d], row["why"])
        with open(new_tsv) as f:
            new = {row["test"]: row["status"] for row in csv.DictReader(f, delimiter="\t")}
    differ = sorted(t for t in old.keys() | new.keys() if old.get(t) != new.get(t))
    print(f"ONNX node tests, {len(old) // len(DEVICES)} tests x {len(DEVICES)} devices, {args.jobs} CPUs")
    print(f"  tests/onnx_status.py ({LEGACY_REV}, own worker pool): {old_s:.0f} s")
    print(f"  mlirtext sweep onnx (local Ray):                     {new_s:.0f} s")
    print(f"  wall time, sweep / old: {new_s / old_s:.2f}")
    print(f"  same status: {len(old.keys() | new.keys()) - len(differ)} "
          f"of {len(old.keys() | new.keys())}; differ: {len(differ)}")
    for t in differ:
        print(f"    {t}: old {old.get(t, '-')}, sweep {new.get(t, '-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
