"""How much of the corpus mlirtext handles, per file: the figures the dialects issue asks for.

    PYTHONPATH=. python -m tests.corpus_status [--files GLOB] [--kind valid-accepted|valid-rejected|invalid] [-v]

valid-accepted: cases iree-opt accepts. Pass = mlirtext parses and verifies,
  and iree-opt prints the same generic form for our print as for the original.
valid-rejected: valid cases iree-opt rejects (older syntax, mhlo, ...). Pass =
  parses and verifies, and our print parses and verifies again.
invalid: cases with expected-error annotations. Flagged = mlirtext reports an
  error on an annotated line; matched = the annotated text is in that message.
"""
from __future__ import annotations

import argparse
import fnmatch
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field

from mlirtext.api import parse_and_verify, to_text

from . import corpus
from .oracle import iree_opt_path


@dataclass
class Outcome:
    case: corpus.Case
    passed: bool
    detail: str = ""
    matched: bool = False      # invalid cases: message text matched too
    crashed: bool = False


def _first_problem(result) -> str:
    return result.diagnostics[0].format() if result.diagnostics else "no module"


def _parse(case: corpus.Case):
    try:
        return parse_and_verify(case.text, case.case_id), None
    except Exception as e:  # counted, never hidden
        return None, f"EXCEPTION {type(e).__name__}: {e}"


def _generic_forms(texts):
    joined = "\n// -----\n".join(texts)
    proc = subprocess.run([iree_opt_path(), "--allow-unregistered-dialect", "--split-input-file",
                           "--mlir-print-op-generic", "-"], input=joined, capture_output=True, text=True,
                          timeout=600)
    if proc.returncode != 0:
        return None, proc.stderr
    parts = proc.stdout.split("// -----\n")
    return (parts if len(parts) == len(texts) else None), proc.stderr


def check_valid_accepted(cases: list[corpus.Case]) -> list[Outcome]:
    """One file's accepted cases; iree-opt runs once per batch (per case only on failure)."""
    outcomes: list[Outcome | None] = [None] * len(cases)
    printed = {}
    for i, case in enumerate(cases):
        result, crash = _parse(case)
        if crash:
            outcomes[i] = Outcome(case, False, crash, crashed=True)
        elif not result.ok:
            outcomes[i] = Outcome(case, False, _first_problem(result))
        else:
            try:
                printed[i] = to_text(result)
            except Exception as e:
                outcomes[i] = Outcome(case, False, f"EXCEPTION in printer {type(e).__name__}: {e}", crashed=True)
    idx = sorted(printed)
    if idx:
        want, _ = _generic_forms([cases[i].text for i in idx])
        got, _ = _generic_forms([printed[i] for i in idx])
        if want is None or got is None:  # find the failing ones one by one
            for i in idx:
                w, _ = _generic_forms([cases[i].text])
                g, err = _generic_forms([printed[i]])
                ok = w is not None and g is not None and w == g
                outcomes[i] = Outcome(cases[i], ok, "" if ok else (err.strip()[:2000] or "generic forms differ"))
        else:
            for k, i in enumerate(idx):
                ok = want[k] == got[k]
                outcomes[i] = Outcome(cases[i], ok, "" if ok else "generic forms differ:\n" + printed[i][:3000])
    return outcomes


def check_valid_rejected(case: corpus.Case) -> Outcome:
    result, crash = _parse(case)
    if crash:
        return Outcome(case, False, crash, crashed=True)
    if not result.ok:
        return Outcome(case, False, _first_problem(result))
    try:
        again = parse_and_verify(to_text(result), case.case_id + " (printed)")
    except Exception as e:
        return Outcome(case, False, f"EXCEPTION on reprint {type(e).__name__}: {e}", crashed=True)
    if not again.ok:
        return Outcome(case, False, "our print does not parse again: " + _first_problem(again))
    return Outcome(case, True)


_ANNOTATION = re.compile(r"//\s*expected-error(?:@(?P<where>[-+]\d+|above|below))?\s*(?:\*|\d+)?\s*\{\{(?P<text>.*?)\}\}")


def check_invalid(case: corpus.Case) -> Outcome:
    result, crash = _parse(case)
    if crash:
        return Outcome(case, False, crash, crashed=True)
    wanted = []
    for n, line in enumerate(case.text.split("\n"), start=1):
        for m in _ANNOTATION.finditer(line):
            where = m.group("where")
            target = n if where is None else n - 1 if where == "above" else n + 1 if where == "below" else n + int(where)
            wanted.append((target, m.group("text").strip()))
    if not wanted:
        return Outcome(case, True, "no expected-error annotation")
    errors = [(d.span.line_col[0] if d.span else 0, d.message) for d in result.diagnostics if d.severity == "error"]
    lines = {t for t, _ in wanted}
    flagged = any(line in lines for line, _ in errors)
    matched = flagged and any(line == t and text in msg for t, text in wanted for line, msg in errors)
    detail = "" if flagged else (f"wanted error on line(s) {sorted(lines)}: {[t for _, t in wanted]}; got "
                                 + ("; ".join(f"{l}: {m}" for l, m in errors) or "no error"))
    return Outcome(case, flagged, detail, matched=matched)


def select(files_glob: str | None, kind: str | None):
    groups = defaultdict(list)
    for case in corpus.cases():
        if files_glob and not fnmatch.fnmatch(case.file, files_glob):
            continue
        k = "invalid" if not case.valid else "valid-accepted" if case.iree_accepts else "valid-rejected"
        if kind and k != kind:
            continue
        groups[k].append(case)
    return groups


def run(files_glob=None, kind=None) -> dict[str, list[Outcome]]:
    groups = select(files_glob, kind)
    out: dict[str, list[Outcome]] = {}
    by_file = defaultdict(list)
    for case in groups.get("valid-accepted", []):
        by_file[case.file].append(case)
    out["valid-accepted"] = [o for f in sorted(by_file) for o in check_valid_accepted(by_file[f])]
    out["valid-rejected"] = [check_valid_rejected(c) for c in groups.get("valid-rejected", [])]
    out["invalid"] = [check_invalid(c) for c in groups.get("invalid", [])]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", help="glob over corpus file paths, e.g. 'stablehlo/*'")
    ap.add_argument("--kind", choices=["valid-accepted", "valid-rejected", "invalid"])
    ap.add_argument("-v", "--verbose", action="store_true", help="show each failing case")
    ap.add_argument("--per-file", action="store_true", help="counts per corpus file")
    args = ap.parse_args()
    results = run(args.files, args.kind)
    for kind, outcomes in results.items():
        if not outcomes:
            continue
        passed = sum(o.passed for o in outcomes)
        crashed = sum(o.crashed for o in outcomes)
        extra = f", message matched {sum(o.matched for o in outcomes)}" if kind == "invalid" else ""
        print(f"{kind}: {passed}/{len(outcomes)} ({100 * passed / len(outcomes):.1f}%){extra}, exceptions {crashed}")
        if args.per_file:
            per = defaultdict(lambda: [0, 0])
            for o in outcomes:
                per[o.case.file][0] += o.passed
                per[o.case.file][1] += 1
            for f, (p, n) in sorted(per.items(), key=lambda kv: kv[1][0] - kv[1][1]):
                if p < n:
                    print(f"    {p:4d}/{n:<4d} {f}")
        if args.verbose:
            for o in outcomes:
                if not o.passed:
                    print(f"--- {o.case.case_id} (line {o.case.first_line})\n{o.detail}\n")


if __name__ == "__main__":
    main()
