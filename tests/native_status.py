"""How many corpus test functions that lower to llvm also run natively and equal the interpreter.

    PYTHONPATH=. python -m tests.native_status [--files GLOB]... [-v] [--approx]

The functions are those of `tests.lowering_status` (split from their checks,
lowered level by level, passing at every level). Each llvm-level module is
translated to LLVM IR, compiled for the host at O3, loaded and called; its
outputs are compared with the interpreter's on the same llvm-level module
(integers and booleans bit-exact, floats within `FLOAT_ULPS` units in the last
place, NaN where NaN), and the test's own checks are run on the native outputs.
With --approx the llvm level is re-derived with the native pipeline (polynomial
approximation of math functions before convert-loops-to-llvm) and the floats may
differ by the approximation's bound too.
"""
from __future__ import annotations

import argparse
import time
from collections import Counter

from mlirtext.sweeps import native_suite
from mlirtext.sweeps.native_suite import (APPROX_ULPS, FLOAT_ULPS, compare, run_natively,  # noqa: F401 - shared
                                          ulp_distance)

from . import corpus
from .lowering_status import collect


def native_outcome(outcome, approx: bool = False) -> str:
    """'' when the function runs natively, equals the interpreter and passes its checks; else why not."""
    return native_suite.native_outcome(outcome, str(corpus.CORPUS), approx)


def _collect(globs, cache):
    import os
    import pickle
    if cache and os.path.exists(cache):
        with open(cache, "rb") as f:
            return pickle.load(f)
    outcomes = [o for o in collect(globs) if o.reached == "llvm"]
    if cache:
        with open(cache, "wb") as f:
            pickle.dump(outcomes, f)
    return outcomes


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="append", metavar="GLOB", help="glob over corpus file paths (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list each function that fails, and why")
    ap.add_argument("--approx", action="store_true",
                    help="compile with polynomial approximation of math functions (the native pipeline)")
    ap.add_argument("--top", type=int, default=25, help="reasons to show (0 = all)")
    ap.add_argument("--cache", metavar="FILE",
                    help="keep the lowered functions in FILE (a pickle): later runs skip lowering")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    outcomes = _collect(args.files, args.cache)
    lowered_s = time.perf_counter() - start
    reasons = Counter()
    failing = []
    for o in outcomes:
        why = native_outcome(o, args.approx)
        if why:
            reasons[why if len(why) < 100 else why[:100]] += 1
            failing.append((o, why))
    passed = len(outcomes) - len(failing)
    pct = 100.0 * passed / len(outcomes) if outcomes else 0.0
    print(f"{passed}/{len(outcomes)} run natively and equal the interpreter ({pct:.1f}%)"
          f"{' [with polynomial approximation]' if args.approx else ''} "
          f"(lowering {lowered_s:.0f} s, native {time.perf_counter() - start - lowered_s:.0f} s)")
    from .check_status import GROUPS, group_of
    bad = {id(o) for o, _ in failing}
    for group, _ in GROUPS + (("other", ""),):
        mine = [o for o in outcomes if group_of(o.file) == group]
        if mine:
            print(f"  {group}: {sum(id(o) not in bad for o in mine)}/{len(mine)}")
    if reasons:
        print("\nwhy the others do not:")
        for reason, n in reasons.most_common(args.top or None):
            print(f"  {n:5d}  {reason}")
    if args.verbose:
        for o, why in failing:
            print(f"{o.file} @{o.function}: {why}")


if __name__ == "__main__":
    main()
