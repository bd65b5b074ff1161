"""How many corpus test functions the reference interpreter passes: the figures of issue 4.

    PYTHONPATH=. python -m tests.check_status [--files GLOB]... [-v] [--time-limit S]

Runs `mlirtext check` (split on `// -----` where the file has such lines) over
the three groups of runnable test files in `../shared/corpus/` and prints
passed/total per group, then a histogram of why the others did not pass
(e.g. "no semantics for 'stablehlo.gather'": 12). With -v it lists each failing
function with its first reason. Never crashes: a file that cannot be read or
checked counts as one errored function, and each function has a time limit.
"""
from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass

from mlirtext.checking import reason_key
from mlirtext.sweeps import check_suite
from mlirtext.sweeps import corpus_files as files
from mlirtext.sweeps.corpus_files import GROUPS, group_of, needs_split  # noqa: F401 - the figures' groups

from . import corpus

#: Seconds a single function may run in a status run.
TIME_LIMIT = check_suite.FUNCTION_TIME_LIMIT


@dataclass
class Entry:
    group: str
    file: str
    result: object   # mlirtext.checking.FunctionResult


def corpus_files(globs=None) -> list[str]:
    """Corpus files (paths relative to the corpus) in the groups, or matching any of `globs`."""
    return files.corpus_files(str(corpus.CORPUS), globs)


def check_corpus_file(rel: str, time_limit: float = TIME_LIMIT) -> list:
    """The results of one corpus file; never raises."""
    return check_suite.check_corpus_file(str(corpus.CORPUS), rel, time_limit)


def upstream_disabled(rel: str) -> bool:
    """Whether upstream disabled running this file's interpreter RUN line (`// RUN-DISABLED...`)."""
    try:
        return "RUN-DISABLED" in corpus.file_text(rel)
    except OSError:
        return False


def collect(globs=None, time_limit: float = TIME_LIMIT, progress=None) -> list[Entry]:
    entries = []
    for rel in corpus_files(globs):
        if progress:
            progress(rel)
        for r in check_corpus_file(rel, time_limit):
            entries.append(Entry(group_of(rel), rel, r))
    return entries


def figures(entries: list[Entry]) -> dict:
    """group -> (passed, total)."""
    out: dict[str, list[int]] = {}
    for e in entries:
        c = out.setdefault(e.group, [0, 0])
        c[1] += 1
        c[0] += e.result.passed
    return {g: tuple(v) for g, v in out.items()}


def histogram(entries: list[Entry]) -> Counter:
    return Counter(reason_key(e.result) for e in entries if not e.result.passed)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="append", metavar="GLOB",
                    help="glob over corpus file paths, e.g. 'stablehlo/*add*' (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list each failing function and its reason")
    ap.add_argument("--time-limit", type=float, default=TIME_LIMIT, help="seconds per function")
    ap.add_argument("--top", type=int, default=25, help="histogram lines to show (0 = all)")
    ap.add_argument("--per-file", action="store_true", help="passed/total per file")
    ap.add_argument("--slowest", type=int, default=0, metavar="N", help="list the N slowest functions")
    args = ap.parse_args(argv)

    start = time.perf_counter()
    entries = collect(args.files, args.time_limit)
    elapsed = time.perf_counter() - start
    figs = figures(entries)
    order = [g for g, _ in GROUPS if g in figs] + sorted(g for g in figs if g not in dict(GROUPS))
    for g in order:
        passed, total = figs[g]
        files = len({e.file for e in entries if e.group == g})
        statuses = Counter(e.result.status for e in entries if e.group == g)
        pct = 100.0 * passed / total if total else 0.0
        print(f"{g}: {passed}/{total} passed ({pct:.1f}%) in {files} files"
              f"  [failed {statuses.get('failed', 0)}, errored {statuses.get('error', 0)}]")
    print(f"({elapsed:.0f} s)")
    if args.slowest:
        print(f"\nslowest {args.slowest} functions:")
        for e in sorted(entries, key=lambda e: -e.result.seconds)[:args.slowest]:
            print(f"  {e.result.seconds:7.2f} s  {e.file} @{e.result.name} [{e.result.status}]")
    if args.per_file:
        print()
        per: dict[str, list[int]] = {}
        for e in entries:
            c = per.setdefault(e.file, [0, 0])
            c[0] += e.result.passed
            c[1] += 1
        for f, (p, t) in per.items():
            print(f"  {p:4}/{t:<4} {f}")
    disabled = [e for e in entries if not e.result.passed and upstream_disabled(e.file)]
    if disabled:
        names = ", ".join(sorted({e.file.split("/")[-1] for e in disabled}))
        print(f"of those not passing, {len(disabled)} are in files whose interpreter RUN line is disabled "
              f"upstream (RUN-DISABLED: the reference fails them too): {names}")
    hist = histogram(entries)
    if hist:
        print("\nwhy the others did not pass:")
        items = hist.most_common(args.top or None)
        for key, n in items:
            print(f"  {n:5}  {key}")
        if args.top and len(hist) > args.top:
            print(f"  ... {len(hist) - args.top} more reasons (--top 0 shows all)")
    if args.verbose:
        print("\nfailing functions:")
        for e in entries:
            r = e.result
            if r.passed:
                continue
            line = r.error_line or r.line
            where = f"{e.file}:{line}" if line else e.file
            print(f"  {where} @{r.name} [{r.status}]: {r.reason}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # `| head`
        pass
