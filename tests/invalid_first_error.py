"""How often the FIRST error of an invalid corpus case is on an annotated line: issue 20's figure.

    PYTHONPATH=. python -m tests.invalid_first_error [--files GLOB] [--per-file] [-v] [--unmatched] [--cross-check N]

Each invalid case of `../shared/corpus/CASES.tsv` is one `// -----` chunk, run alone as
`mlirtext opt` runs it (in process here: parse, then verify when it parsed). What the user
reads first is the first diagnostic of severity error; the case passes when that error is
on a line an `expected-error` or `expected-error-re` annotation names (its own line,
`@+N`, `@-N`, `@above`, `@below`). A case that expects no error (only warnings) passes
when no error is reported.

This is stricter than the `invalid` figure of `tests/corpus_status.py`, which counts a case
when ANY reported error is on an annotated line (as `--verify-diagnostics` would find the
expected error somewhere in the list), and which does not read `-re` annotations.

`--cross-check N` also runs N cases, spread over the selection, through `python -m mlirtext
opt` as a process, and reports any whose first error (line and message) differs from the
in-process one.
"""
from __future__ import annotations

import argparse
import fnmatch
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from mlirtext.api import parse_chunks
from mlirtext.verify_diagnostics import expectations

from . import corpus

#: (line, message) of a reported error, line 0 when it has no place.
Error = tuple[int, str]


@dataclass
class Outcome:
    case: corpus.Case
    passed: bool
    first: Optional[Error]            # the first error reported, None when there is none
    wanted: list[int] = field(default_factory=list)   # the annotated lines, in order
    crashed: str = ""                 # an exception out of mlirtext (counted as a miss)
    matched: bool = False             # passed, and its message is one annotated for that line

    def describe(self) -> str:
        got = "no error" if self.first is None else f"line {self.first[0]}: {self.first[1]}"
        return self.crashed or f"wanted line(s) {sorted(set(self.wanted))}; first error {got}"


def first_error(text: str, name: str) -> tuple[Optional[Error], list]:
    """The first error `mlirtext opt` reports for `text` alone, and the expected errors
    annotated in it."""
    result = parse_chunks(text, name, False)[0]
    wanted = [e for e in expectations(result.source, result.start, result.end) if e.severity == "error"]
    for d in result.diagnostics:
        if d.severity == "error":
            return (d.line_col[0], d.message), wanted
    return None, wanted


def check(case: corpus.Case) -> Outcome:
    try:
        first, wanted = first_error(case.text, case.case_id)
    except Exception as e:  # counted, never hidden
        return Outcome(case, False, None, crashed=f"EXCEPTION {type(e).__name__}: {e}")
    on_line = [e for e in wanted if first is not None and e.line == first[0]]
    passed = first is None if not wanted else bool(on_line)
    return Outcome(case, passed, first, [e.line for e in wanted], matched=any(e.matches(first[1]) for e in on_line))


def invalid_cases(files_glob: Optional[str] = None) -> list[corpus.Case]:
    return [c for c in corpus.cases() if not c.valid and (not files_glob or fnmatch.fnmatch(c.file, files_glob))]


def run(files_glob: Optional[str] = None) -> list[Outcome]:
    return [check(c) for c in invalid_cases(files_glob)]


def process_first_error(text: str) -> Optional[Error]:
    """The first error of `python -m mlirtext opt` on `text` saved alone in a file (with
    --allow-unregistered-dialect, as the corpus files' RUN lines have it)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.mlir"
        path.write_text(text)
        proc = subprocess.run([sys.executable, "-m", "mlirtext", "opt", "--allow-unregistered-dialect", str(path)], capture_output=True,
                              text=True, timeout=300, cwd=corpus.ROOT)
    header = re.compile(rf"^(?:{re.escape(str(path))}:(\d+):\d+|mlirtext): error: (.*)$", re.M)
    m = header.search(proc.stderr)
    return None if m is None else (int(m.group(1) or 0), m.group(2))


def cross_check(outcomes: list[Outcome], n: int) -> list[str]:
    """Run `n` cases spread over `outcomes` as a process: the ones whose first error differs."""
    step = max(1, len(outcomes) // max(1, n))
    differ = []
    for o in outcomes[::step][:n]:
        got = process_first_error(o.case.text)
        if got != o.first:
            differ.append(f"{o.case.case_id}: in process {o.first}, as a process {got}")
    return differ


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", help="glob over corpus file paths, e.g. 'stablehlo/*'")
    ap.add_argument("-v", "--verbose", action="store_true", help="say why each miss missed")
    ap.add_argument("--per-file", action="store_true", help="passed/total for every file with a miss")
    ap.add_argument("--unmatched", action="store_true",
                    help="also list the cases whose first error is on the line but says something else")
    ap.add_argument("--cross-check", type=int, default=0, metavar="N",
                    help="also run N cases as `mlirtext opt` processes and compare")
    args = ap.parse_args()
    outcomes = run(args.files)
    passed = sum(o.passed for o in outcomes)
    crashed = sum(bool(o.crashed) for o in outcomes)
    print(f"invalid cases, first error on an annotated line: {passed}/{len(outcomes)} "
          f"({100 * passed / max(1, len(outcomes)):.1f}%), message matched too {sum(o.matched for o in outcomes)}, "
          f"exceptions {crashed}")
    per_file = defaultdict(list)
    for o in outcomes:
        per_file[o.case.file].append(o)
    for name, outs in sorted(per_file.items(), key=lambda kv: sum(not o.passed for o in kv[1]), reverse=True):
        misses = [o for o in outs if not o.passed]
        if not misses:
            continue
        counts = f"{len(outs) - len(misses)}/{len(outs)} " if args.per_file else ""
        print(f"  {counts}{name}: {len(misses)} missed")
        for o in misses:
            print(f"    {o.case.case_id} (line {o.case.first_line})" + (f": {o.describe()}" if args.verbose else ""))
    if args.unmatched:
        unmatched = [o for o in outcomes if o.passed and o.wanted and not o.matched]
        print(f"first error on the line, other text: {len(unmatched)}")
        for o in unmatched:
            print(f"    {o.case.case_id}: {o.first[1]}")
    if args.cross_check:
        differ = cross_check(outcomes, args.cross_check)
        print(f"cross-check as a process: {min(args.cross_check, len(outcomes)) - len(differ)} agree, "
              f"{len(differ)} differ")
        for line in differ:
            print("  " + line)
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
