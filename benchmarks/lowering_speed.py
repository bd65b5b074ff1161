"""Compile-time speed: lowering each workload of `benchmarks/programs/` to the llvm level,
timed per pass and in total, beside `iree-compile` on the same file (llvm-cpu), in one run.

Rounds are interleaved (mlirtext, then iree-compile, for each program, round after
round) so that both sides see the same machine load; the report gives medians and the
ratio mlirtext/iree-compile. mlirtext is timed in process (parse + verify + every pass
of `--lower-to=llvm`, printing excluded); iree-compile as a process (its start-up
included, as a user would wait for it). The two do not do the same work: iree-compile
goes on to machine code and a .vmfb, mlirtext stops at the LLVM dialect.

    PYTHONPATH=. python benchmarks/lowering_speed.py [--rounds 5] [--only NAME]...
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from mlirtext.api import parse_and_verify  # noqa: E402
from mlirtext.transforms.conversions.levels import lowering_pipeline  # noqa: E402
from mlirtext.transforms.pass_manager import PassManager, Timing  # noqa: E402
from mlirtext.transforms.pipeline import parse_pipeline  # noqa: E402

PROGRAMS = ("mlp", "elementwise", "conv", "softmax", "attention")


def lower_once(text: str) -> tuple[float, dict]:
    """Seconds to parse, verify and lower `text` to llvm, and seconds per pass."""
    start = time.perf_counter()
    result = parse_and_verify(text)
    if not result.ok:
        raise RuntimeError(result.diagnostics[0].message)
    timing = Timing()
    pm = PassManager(parse_pipeline(lowering_pipeline(result.module, "llvm")), instrumentations=[timing])
    problems = pm.run(result.module)
    if problems:
        raise RuntimeError(problems[0].message)
    return time.perf_counter() - start, dict(timing.totals)


def iree_compile_once(path: Path, out: Path) -> float:
    exe = shutil.which("iree-compile") or str(Path(sys.executable).parent / "iree-compile")
    start = time.perf_counter()
    subprocess.run([exe, str(path), "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu", "-o", str(out)],
                   check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", action="append", choices=PROGRAMS)
    args = ap.parse_args()
    names = args.only or PROGRAMS
    ours, theirs = defaultdict(list), defaultdict(list)
    passes: dict = defaultdict(lambda: defaultdict(list))
    failed = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for name in names:
                if name in failed:
                    continue
                path = ROOT / "programs" / f"{name}.mlir"
                try:
                    seconds, per_pass = lower_once(path.read_text())
                except RuntimeError as e:
                    failed[name] = str(e)
                    continue
                ours[name].append(seconds)
                for p, s in per_pass.items():
                    passes[name][p].append(s)
                theirs[name].append(iree_compile_once(path, Path(tmp) / f"{name}.vmfb"))
    print(f"{'program':<12} {'mlirtext -> llvm':>17} {'iree-compile':>13} {'ratio':>7}")
    for name in names:
        if name in failed:
            print(f"{name:<12} not lowered: {failed[name]}")
            continue
        a, b = statistics.median(ours[name]), statistics.median(theirs[name])
        print(f"{name:<12} {a * 1000:14.0f} ms {b * 1000:10.0f} ms {a / b:7.2f}")
    print("\nper pass (median ms):")
    for name in names:
        if name in failed:
            continue
        row = ", ".join(f"{p.split(' (')[1].rstrip(')')} {statistics.median(v) * 1000:.0f}"
                        for p, v in passes[name].items())
        print(f"  {name}: {row}")


if __name__ == "__main__":
    main()
