"""Start-up cost: `import mlirtext` plus building the parser, with its disk cache warm.

    python benchmarks/startup.py

Runs a fresh interpreter per sample (so nothing is warm in-process) and
reports the median; the target is under 0.5 s once the cache exists.
"""
from __future__ import annotations

import statistics
import subprocess
import sys

PROBE = """
import time
t0 = time.perf_counter()
import mlirtext.api
from mlirtext.syntax.parser import _driver
_driver()
print(time.perf_counter() - t0)
"""


def sample() -> float:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    sample()  # make sure the parser cache exists
    times = [sample() for _ in range(5)]
    print(f"import + parser build (cache warm): median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s over {len(times)} runs (target < 0.5 s)")


if __name__ == "__main__":
    main()
