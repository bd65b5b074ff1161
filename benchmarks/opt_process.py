"""`mlirtext opt` against `xdsl-opt` as processes: CPU time (user+sys) of each, start-up and printing included.

    python benchmarks/opt_process.py [--rounds 5] [--lines 20000]

Both read the same file and write it back (`-o`), once on a small function (start-up is most of
it) and once on the 20,000-line function of `parse_speed.py`. Rounds alternate the two tools, so a
change in the machine's load hits both; the figure is the ratio of the medians of CPU time (the
machine is shared: waiting for a core is not work), with the range of the per-round ratios. Caches
are warm, as after installing: the LALR tables, and bytecode (kept under a temporary folder,
PYTHONPYCACHEPREFIX, so it is measured even where PYTHONDONTWRITEBYTECODE is set). xDSL (`pip
install xdsl`) is a benchmark-only dependency; its `xdsl-opt` is looked for beside this Python.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

from parse_speed import generate


def cpu_seconds(command: list[str], env: dict) -> float:
    """User + system CPU time of one run of `command` (which must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(label: str, path: str, rounds: int, xdsl_opt: str, env: dict, scratch: str) -> None:
    ours = [sys.executable, "-m", "mlirtext", "opt", path, "-o", os.path.join(scratch, "ours.mlir")]
    theirs = [xdsl_opt, path, "-o", os.path.join(scratch, "xdsl.mlir")]
    for command in (ours, theirs):  # warm: tables, bytecode, the file in the page cache
        cpu_seconds(command, env)
    a, b = [], []
    for _ in range(rounds):
        a.append(cpu_seconds(ours, env))
        b.append(cpu_seconds(theirs, env))
    per_round = [y / x for x, y in zip(a, b)]
    print(f"{label}: mlirtext {statistics.median(a):.3f} s ({min(a):.3f}-{max(a):.3f}), "
          f"xdsl-opt {statistics.median(b):.3f} s ({min(b):.3f}-{max(b):.3f}): "
          f"{statistics.median(b) / statistics.median(a):.2f}x less CPU "
          f"(rounds {min(per_round):.2f}-{max(per_round):.2f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lines", type=int, default=20000)
    args = ap.parse_args()
    xdsl_opt = shutil.which("xdsl-opt", path=os.path.dirname(sys.executable)) or shutil.which("xdsl-opt")
    if xdsl_opt is None:
        sys.exit("xdsl-opt not found: pip install xdsl")
    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(tempfile.gettempdir(), "mlirtext-opt-process-pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as scratch:
        for label, lines in (("small file", 20), (f"{args.lines}-line file", args.lines)):
            path = os.path.join(scratch, f"in{lines}.mlir")
            with open(path, "w") as f:
                f.write(generate(lines))
            compare(label, path, args.rounds, xdsl_opt, env, scratch)
    print("target: at least 4x less CPU than xdsl-opt on the large file")


if __name__ == "__main__":
    main()
