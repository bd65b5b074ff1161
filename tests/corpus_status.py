"""How much of the corpus mlirtext handles, per file: the figures the dialects issue asks for.

    PYTHONPATH=. python -m tests.corpus_status [--files GLOB] [--kind valid-accepted|valid-rejected|invalid] [-v]

valid-accepted: cases iree-opt accepts. Pass = mlirtext parses and verifies,
  and iree-opt prints the same generic form for our print as for the original.
  mhlo cases (iree-opt reads mhlo only in generic form): our pretty print reads
  back to the same IR (`ir_key`), and iree-opt gives the same generic form for our
  generic print as for the original. iree-opt runs once for all originals and once
  for all our prints (its start-up dominates small runs); the whole corpus takes
  about 35 s. `whole_corpus()` is that pass, once per process (tests/test_corpus_figures.py).
valid-rejected: valid cases iree-opt rejects (older syntax, mhlo, ...). Pass =
  parses and verifies, and our print parses and verifies again.
invalid: cases with expected-error annotations (read as MLIR's verifier reads them, `-re`
  included). Flagged = mlirtext reports an error on an annotated line (any of its errors,
  as `--verify-diagnostics` would find it; tests/invalid_first_error.py asks that the
  FIRST be there); matched = the annotation's text (or pattern) matches that message.
"""
from __future__ import annotations

import argparse
import fnmatch
import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from mlirtext.api import parse_and_verify, to_text
from mlirtext.ir.dense import DenseElementsAttr
from mlirtext.verify_diagnostics import expectations

from . import corpus
from .oracle import iree_opt_path


@dataclass
class Outcome:
    case: corpus.Case
    passed: bool
    detail: str = ""
    matched: bool = False      # invalid cases: message text matched too
    crashed: bool = False
    generic_ok: bool | None = None  # valid-accepted with_generic: our generic print agrees too
    generic_detail: str = ""


def _first_problem(result) -> str:
    return result.diagnostics[0].format() if result.diagnostics else "no module"


def _parse(case: corpus.Case):
    try:
        return parse_and_verify(case.text, case.case_id), None
    except Exception as e:  # counted, never hidden
        return None, f"EXCEPTION {type(e).__name__}: {e}"


def _iree_generic(texts: list[str]) -> tuple[list[str] | None, str]:
    """One iree-opt run over `texts` joined with `// -----`: each text's generic form ("" where
    iree-opt rejects that text), or None when the output cannot be split back (a crash)."""
    joined = "\n// -----\n".join(texts)
    proc = subprocess.run([iree_opt_path(), "--allow-unregistered-dialect", "--split-input-file",
                           "--mlir-print-op-generic", "-"], input=joined, capture_output=True, text=True,
                          timeout=900)
    parts = proc.stdout.split("// -----\n")
    if proc.returncode not in (0, 1) or len(parts) != len(texts):
        return None, proc.stderr
    return parts, proc.stderr


def generic_forms(texts: list[str]) -> list[tuple[str | None, str]]:
    """iree-opt's generic form of every text, as (form or None, why not), in as few runs as possible.

    All texts go through one iree-opt process (its start-up, ~0.4 s, dominates small runs);
    a rejected text gives an empty chunk, and only those are run again alone for the message.
    If the output cannot be split back (iree-opt crashed), the batch is halved.
    """
    if not texts:
        return []
    parts, err = _iree_generic(texts)
    if parts is None:
        if len(texts) == 1:
            return [(None, err.strip()[:2000] or "iree-opt failed")]
        half = len(texts) // 2
        return generic_forms(texts[:half]) + generic_forms(texts[half:])
    out = []
    for text, part in zip(texts, parts):
        if part:
            out.append((part, ""))
        else:
            _, why = _iree_generic([text]) if len(texts) > 1 else (None, err)
            out.append((None, why.strip()[:2000] or "iree-opt rejects it"))
    return out


def ir_key(module) -> list:
    """The meaning of `module` as a comparable value: op names, operands (numbered by first
    appearance), types, attributes (sorted; whitespace inside their text ignored; inherent or
    not), successors and regions. Spelling choices (pretty or generic form, value and block
    names, attribute order, line breaks in verbatim attributes) do not show."""
    numbers: dict = {}

    def num(x) -> int:
        return numbers.setdefault(id(x), len(numbers))

    def attr(a):
        if isinstance(a, DenseElementsAttr) and not a.is_raw:  # `dense<1>` = `dense<[1]>` : tensor<1xi64>
            n = 1
            for d in a.shape:
                n *= d
            return str(a.type), tuple(a.values) * n if a.splat else tuple(a.values)
        return re.sub(r"\s+", "", str(a))

    def visit(op) -> tuple:
        return (op.name, tuple(num(v) for v in op.operands),
                tuple((num(r), str(r.type)) for r in op.results),
                tuple(sorted((k, attr(a)) for k, a in op.attributes.items())),
                tuple(num(b) for b in op.successors),
                tuple(tuple((num(b), tuple((num(a), str(a.type)) for a in b.arguments),
                             tuple(visit(inner) for inner in b.ops))
                            for b in region.blocks) for region in op.regions))
    return [visit(module)]


def _valid_accepted_prints(case: corpus.Case, with_generic: bool):
    """Parse, verify and print one accepted case; an Outcome on failure, else (text for iree-opt,
    generic print).

    mhlo cases: iree-opt does not know mhlo, so it cannot read our pretty mhlo. Our pretty
    print must parse again to the same IR (same normalized generic form), and iree-opt
    compares our generic print (which keeps the source's property split) with the original.
    """
    result, crash = _parse(case)
    if crash:
        return Outcome(case, False, crash, crashed=True)
    if not result.ok:
        return Outcome(case, False, _first_problem(result))
    try:
        custom = to_text(result)
        generic = to_text(result, generic=True) if with_generic or "mhlo" in case.dialects else None
        if "mhlo" not in case.dialects:
            return custom, generic
        again = parse_and_verify(custom, case.case_id + " (printed)")
        if not again.ok:
            return Outcome(case, False, "our print does not parse again: " + _first_problem(again) + "\n" + custom)
        if ir_key(again.module) != ir_key(result.module):
            return Outcome(case, False, "our print, read again, means something else:\n" + custom[:3000])
        return generic, generic
    except Exception as e:
        return Outcome(case, False, f"EXCEPTION in printer {type(e).__name__}: {e}", crashed=True)


def check_valid_accepted(cases: list[corpus.Case], with_generic: bool = False) -> list[Outcome]:
    """Accepted cases (any number of files): iree-opt runs once for the originals and once for our
    prints (and once for our generic prints with `with_generic`), whatever the number of cases."""
    outcomes: list[Outcome | None] = [None] * len(cases)
    printed, generic = {}, {}
    for i, case in enumerate(cases):
        got = _valid_accepted_prints(case, with_generic)
        if isinstance(got, Outcome):
            outcomes[i] = got
        else:
            printed[i], generic[i] = got
    idx = sorted(printed)
    want = generic_forms([cases[i].text for i in idx])
    got = generic_forms([printed[i] for i in idx])
    got_generic = generic_forms([generic[i] for i in idx]) if with_generic else [(None, "")] * len(idx)
    for (w, werr), (g, gerr), (gg, ggerr), i in zip(want, got, got_generic, idx):
        if w is None:
            outcome = Outcome(cases[i], False, "iree-opt rejects the original: " + werr)
        elif g is None:
            outcome = Outcome(cases[i], False, gerr + "\n" + printed[i][:3000])
        else:
            outcome = Outcome(cases[i], w == g, "" if w == g else "generic forms differ:\n" + printed[i][:3000])
        if with_generic:
            outcome.generic_ok = gg is not None and gg == w
            if not outcome.generic_ok:
                outcome.generic_detail = (ggerr if gg is None else "generic forms differ") + "\n" + generic[i][:3000]
        outcomes[i] = outcome
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


def check_invalid(case: corpus.Case) -> Outcome:
    """Annotations read as MLIR's verifier reads them (mlirtext.verify_diagnostics: `-re`,
    `expected-error @+1`, `// @expected-error`); a case expecting no error (only warnings)
    passes when none is reported."""
    result, crash = _parse(case)
    if crash:
        return Outcome(case, False, crash, crashed=True)
    wanted = [e for e in expectations(result.source, result.start, result.end) if e.severity == "error"]
    errors = [(d.span.line_col[0] if d.span else 0, d.message) for d in result.diagnostics if d.severity == "error"]
    if not wanted:
        return Outcome(case, not errors, "no expected-error annotation; got " + "; ".join(m for _, m in errors))
    lines = {e.line for e in wanted}
    flagged = any(line in lines for line, _ in errors)
    matched = flagged and any(line == e.line and e.matches(msg) for e in wanted for line, msg in errors)
    detail = "" if flagged else (f"wanted error on line(s) {sorted(lines)}: {[e.text for e in wanted]}; got "
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


def run(files_glob=None, kind=None, with_generic: bool = False) -> dict[str, list[Outcome]]:
    groups = select(files_glob, kind)
    return {
        "valid-accepted": check_valid_accepted(groups.get("valid-accepted", []), with_generic),
        "valid-rejected": [check_valid_rejected(c) for c in groups.get("valid-rejected", [])],
        "invalid": [check_invalid(c) for c in groups.get("invalid", [])],
    }


@lru_cache(maxsize=None)
def whole_corpus() -> dict[str, list[Outcome]]:
    """One pass over the whole corpus (generic prints of accepted cases checked too), once per
    process: the figures test and the round-trip test share it."""
    return run(with_generic=True)


@dataclass
class Figures:
    passed: int
    total: int
    crashed: int
    matched: int = 0

    @property
    def percent(self) -> float:
        return 100 * self.passed / self.total if self.total else 100.0


def figures(results: dict[str, list[Outcome]]) -> dict[str, Figures]:
    """The counts the README and the issue quote, per kind."""
    return {kind: Figures(sum(o.passed for o in outs), len(outs), sum(o.crashed for o in outs),
                          sum(o.matched for o in outs))
            for kind, outs in results.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", help="glob over corpus file paths, e.g. 'stablehlo/*'")
    ap.add_argument("--kind", choices=["valid-accepted", "valid-rejected", "invalid"])
    ap.add_argument("-v", "--verbose", action="store_true", help="show each failing case")
    ap.add_argument("--per-file", action="store_true", help="counts per corpus file")
    args = ap.parse_args()
    results = run(args.files, args.kind)
    for kind, fig in figures(results).items():
        outcomes = results[kind]
        if not outcomes:
            continue
        extra = f", message matched {fig.matched}" if kind == "invalid" else ""
        print(f"{kind}: {fig.passed}/{fig.total} ({fig.percent:.1f}%){extra}, exceptions {fig.crashed}")
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
