"""Parse + verify speed: mlirtext vs iree-opt on stablehlo's op test file (7,205 lines, 608 splits).

Everything runs in one invocation, in interleaved rounds (so machine noise hits
all three alike); the report is the median of each and the ratios:

- mlirtext in process: `api.parse_chunks(text, split=True)` (parse and verify every
  `// -----` chunk) plus the `--verify-diagnostics` check of its annotations, after
  a warm-up run (parser tables loaded, caches warm);
- mlirtext as a process: `python -m mlirtext opt --split-input-file --verify-diagnostics FILE`
  (wall time, start-up included);
- iree-opt as a process: `iree-opt --allow-unregistered-dialect --split-input-file
  --verify-diagnostics FILE` (wall time, start-up included; the flag only lets the
  one `#sparse_tensor` chunk through, it does not change the work).

The printed output of both tools goes to /dev/null (both print every chunk that verifies).

    python benchmarks/verify_speed.py [--rounds 5] [--file PATH]
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT.parent / "shared" / "corpus" / "stablehlo" / "stablehlo__tests__ops_stablehlo.mlir"
sys.path.insert(0, str(ROOT))


def iree_opt() -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    from oracle import iree_opt_path
    return iree_opt_path()


def mlirtext_in_process(path: Path) -> tuple[float, int]:
    """Seconds to parse, verify and check annotations of every chunk; chunks with mismatches."""
    from mlirtext import api
    from mlirtext.verify_diagnostics import check
    text = path.read_text()
    start = time.perf_counter()
    results = api.parse_chunks(text, str(path), True)
    mismatched = sum(bool(check(r.source, r.start, r.end, r.diagnostics)) for r in results)
    return time.perf_counter() - start, mismatched


def process(cmd: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - start, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--file", type=Path, default=DEFAULT)
    args = ap.parse_args()
    path = args.file.resolve()
    ours_cli = [sys.executable, "-m", "mlirtext", "opt", "--split-input-file", "--verify-diagnostics", str(path)]
    theirs = [iree_opt(), "--allow-unregistered-dialect", "--split-input-file", "--verify-diagnostics", str(path)]

    _, mismatched = mlirtext_in_process(path)  # warm-up: tables loaded, caches filled
    inproc, cli, iree = [], [], []
    cli_rc = iree_rc = None
    for _ in range(args.rounds):
        inproc.append(mlirtext_in_process(path)[0])
        t, cli_rc = process(ours_cli)
        cli.append(t)
        t, iree_rc = process(theirs)
        iree.append(t)

    text = path.read_text()
    lines, chunks = text.count("\n"), text.count("\n// -----\n") + 1
    a, b, c = (statistics.median(x) for x in (inproc, cli, iree))
    print(f"file: {path.name}: {lines} lines, {chunks} chunks; {args.rounds} interleaved rounds, medians")
    print(f"mlirtext in process (parse+verify+check): {a:7.3f} s  ({lines / a:,.0f} lines/s)"
          f"  [{mismatched} chunks whose annotations we do not all reproduce]")
    print(f"mlirtext opt (process, wall):              {b:7.3f} s  (exit {cli_rc})")
    print(f"iree-opt (process, wall):                  {c:7.3f} s  (exit {iree_rc})")
    print(f"ratio mlirtext/iree-opt: in process {a / c:.2f}x, process {b / c:.2f}x (below 1 = mlirtext faster)")


if __name__ == "__main__":
    main()
