"""Start-up cost: `import mlirtext` plus building the parser, with its disk cache warm.

    python benchmarks/startup.py [--runs 7]

Runs a fresh interpreter per sample (so nothing is warm in-process) and
reports the median; the target is under 0.5 s once the cache exists.

"Cache" means both of mlirtext's caches: the LALR tables (~/.cache/mlirtext)
and Python's bytecode, as after `pip install` (which compiles the modules).
The samples keep their bytecode under a temporary folder (PYTHONPYCACHEPREFIX),
so they measure that even where PYTHONDONTWRITEBYTECODE is set. For
comparison, a second line reports the same with no bytecode at all (every
module compiled from source at each start: PYTHONDONTWRITEBYTECODE=1 and
nothing cached).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

PROBE = """
import time
t0 = time.perf_counter()
import mlirtext.api
t1 = time.perf_counter()
from mlirtext.syntax.parser import _driver, builtin_grammar
builtin_grammar()  # the tables and which dialect owns each rule: no dialect module is imported
t2 = time.perf_counter()
_driver()
t3 = time.perf_counter()
print(t3 - t0, t1 - t0, t2 - t1, t3 - t2)
"""


def sample(bytecode: bool) -> list[float]:
    env = dict(os.environ)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "mlirtext-startup-pycache")
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "mlirtext-startup-nopycache")
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, env=env)
    return [float(x) for x in out.stdout.split()]


def report(label: str, samples: list[list[float]]) -> None:
    total, imp, tables, driver = (statistics.median(s[i] for s in samples) for i in range(4))
    print(f"{label}: median {total:.3f} s, min {min(s[0] for s in samples):.3f} s over {len(samples)} runs "
          f"(import {imp:.3f}, tables {tables:.3f}, driver {driver:.3f})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    sample(True)  # make sure the table cache and the bytecode exist
    report("import + parser build (caches warm)", [sample(True) for _ in range(args.runs)])
    print("target < 0.5 s")
    report("same, no bytecode (every module compiled)", [sample(False) for _ in range(max(3, args.runs // 2))])


if __name__ == "__main__":
    main()
