"""How far the corpus's runnable test functions lower, and whether they still pass: issue 5's figures.

    PYTHONPATH=. python -m tests.lowering_status [--files GLOB]... [-v] [--iree]

Each test function (those `mlirtext check` runs) is split as IREE splits a test:
the computation becomes a function that returns the values the checks look at
(compiled and lowered), and the checks run on the host against what it returns.
The computation is inlined, then lowered one level at a time (conversion
passes and cse only: canonicalize would fold the constant inputs away and
leave nothing to lower). At every level the function must convert completely,
verify, run on the interpreter and pass its checks; with --iree, iree-opt must
also accept every level's module. Functions that do not pass at the source
level are not counted (that is the interpreter's figure, not lowering's).
"""
from __future__ import annotations

import argparse
import time
from collections import Counter

from mlirtext.sweeps.lowering_suite import (LEVELS, Outcome, is_check, lower_file,  # noqa: F401 - shared
                                             lower_function, run_checks, split_checks)

from . import corpus
from .check_status import GROUPS, corpus_files, group_of


def collect(globs=None, progress=None) -> list[Outcome]:
    """The outcomes of the functions that pass at the source level at least."""
    outcomes = []
    for rel in corpus_files(globs):
        if progress:
            progress(rel)
        outcomes += [o for o in lower_file(str(corpus.CORPUS), rel) if o.reached]
    return outcomes


def iree_rejections(outcomes: list[Outcome]) -> list[tuple[str, Outcome, str]]:
    """(level, outcome, iree-opt's first error) for every lowered module iree-opt rejects
    (one iree-opt run per module, so that one rejection does not hide another)."""
    from .oracle import generic_form
    rejected = []
    for level, _ in LEVELS:
        for o in outcomes:
            if level in o.texts:
                accepted, stderr = generic_form(o.texts[level])
                if accepted is None:
                    first = next((line for line in stderr.splitlines() if "error" in line), stderr[:200])
                    rejected.append((level, o, first.strip()))
    return rejected


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="append", metavar="GLOB", help="glob over corpus file paths (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list each function that stops, and why")
    ap.add_argument("--iree", action="store_true", help="also check that iree-opt accepts every level")
    ap.add_argument("--top", type=int, default=25, help="reasons to show (0 = all)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    outcomes = collect(args.files)
    names = [level for level, _ in LEVELS]
    print(f"{len(outcomes)} test functions pass at the source level "
          f"({time.perf_counter() - start:.0f} s)")
    for group, _ in GROUPS + (("other", ""),):
        mine = [o for o in outcomes if group_of(o.file) == group]
        if not mine:
            continue
        counts = [sum(names.index(o.reached) >= i for o in mine) for i in range(len(names))]
        print(f"{group}: " + ", ".join(f"{n} {c}" for n, c in zip(names[1:], counts[1:])) + f" (of {len(mine)})")
    if args.iree:
        rejected = iree_rejections(outcomes)
        per_level = Counter(level for level, _, _ in rejected)
        print("iree-opt rejects: " + (", ".join(f"{k} {v}" for k, v in per_level.items()) or "none"))
        for level, o, error in rejected:
            print(f"  {level}: {o.file} @{o.function}: {error}")
    reasons = Counter(o.stopped_by for o in outcomes if o.reached != "llvm")
    print("\nwhat stops the others:")
    for reason, n in reasons.most_common(args.top or None):
        print(f"  {n:5d}  {reason}")
    if args.verbose:
        for o in outcomes:
            if o.reached != "llvm":
                print(f"{o.file} @{o.function}: reached {o.reached}; {o.stopped_by}")


if __name__ == "__main__":
    main()
