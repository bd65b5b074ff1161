"""Expected statuses per test, in the manner of iree-test-suites' per-backend configs.

Two spellings, chosen by the file's name:

- JSON (`.json`): `{"suite": "onnx", "tests": {"test_abs [reference]": {"status": "pass"},
  "test_scan9_sum [reference]": {"status": "fail-compile", "reason": "torch-mlir: ..."}}}`;
- TSV (anything else): `test<TAB>status<TAB>reason` per line, `#` comments.

A sweep compared with one fails on any test worse than expected and lists those better than expected
(the file can be tightened). A test the file does not name is new (listed, not a failure); a test the
file names that did not run (a filter, a limit or a budget left it out) is not compared.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .results import STATUSES, Result, better, worse


class ExpectationError(Exception):
    """A one-line reason an expected-status file cannot be read."""


@dataclass
class Comparison:
    worse: list = field(default_factory=list)     # (result, expected status, expected reason)
    better: list = field(default_factory=list)    # (result, expected status)
    new: list = field(default_factory=list)       # results the file does not name

    @property
    def ok(self) -> bool:
        return not self.worse


def read(path: str) -> dict[str, tuple[str, str]]:
    """test -> (status, reason)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise ExpectationError(f"cannot read expected statuses '{path}': {e.strerror}") from None
    table = _read_json(path, text) if path.endswith(".json") else _read_tsv(path, text)
    for test, (status, _) in table.items():
        if status not in STATUSES:
            raise ExpectationError(f"{path}: test {test!r}: unknown status {status!r} "
                                   f"(one of {', '.join(STATUSES)})")
    return table


def _read_json(path: str, text: str) -> dict:
    try:
        data = json.loads(text)
        return {test: (e["status"], e.get("reason", "")) for test, e in data["tests"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ExpectationError(f"{path}: not an expected-status file ({type(e).__name__}: {e})") from None


def _read_tsv(path: str, text: str) -> dict:
    table = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        if len(cells) < 2:
            raise ExpectationError(f"{path}:{number}: expected 'test<TAB>status[<TAB>reason]'")
        table[cells[0]] = (cells[1], cells[2] if len(cells) > 2 else "")
    return table


def dumps(path: str, suite: str, results: list[Result]) -> str:
    """The results as an expected-status file named `path` (JSON or TSV by its name; the reason:
    each non-pass's error line)."""
    ordered = sorted(results, key=lambda r: r.test)
    if path.endswith(".json"):
        tests = {r.test: {"status": r.status, **({"reason": r.error} if r.status != "pass" else {})}
                 for r in ordered}
        text = json.dumps({"suite": suite, "tests": tests}, indent=1, sort_keys=True) + "\n"
    else:
        text = f"# expected statuses of `mlirtext sweep {suite}`: test, status, reason\n" + "".join(
            f"{r.test}\t{r.status}\t{r.error if r.status != 'pass' else ''}".replace("\n", " ") + "\n"
            for r in ordered)
    return text


def whole_file(results: list[Result], expected: dict) -> list[Result]:
    """The results, with a whole file's result (`FILE@<file>`: the task ran over its limit or crashed
    before it could name the file's functions) standing for each function of the file that `expected`
    names."""
    out = []
    for r in results:
        prefix = r.test[:-len("<file>")] if r.test.endswith("@<file>") else None
        named = [t for t in expected if prefix and t.startswith(prefix)] if prefix else []
        out += [Result(t, r.status, r.error, seconds=r.seconds, node=r.node) for t in named] or [r]
    return out


def compare(results: list[Result], expected: dict) -> Comparison:
    out = Comparison()
    for r in sorted(whole_file(results, expected), key=lambda r: r.test):
        if r.test not in expected:
            out.new.append(r)
            continue
        status, reason = expected[r.test]
        if worse(r.status, status):
            out.worse.append((r, status, reason))
        elif better(r.status, status):
            out.better.append((r, status))
    return out


def describe(comparison: Comparison, expect_path: str) -> str:
    lines = []
    if comparison.worse:
        lines.append(f"{len(comparison.worse)} tests worse than expected ({expect_path}):")
        lines += [f"  {r.test}: {r.status} (expected {status}): {r.error}" for r, status, _ in comparison.worse]
    if comparison.better:
        lines.append(f"{len(comparison.better)} tests better than expected (tighten {expect_path}):")
        lines += [f"  {r.test}: {r.status} (expected {status})" for r, status in comparison.better]
    if comparison.new:
        lines.append(f"{len(comparison.new)} tests not in {expect_path}: "
                     + ", ".join(f"{r.test} ({r.status})" for r in comparison.new[:20])
                     + (" ..." if len(comparison.new) > 20 else ""))
    return "\n".join(lines)
