"""CI's sample of the hostile-input suite (tests/hostile_suite.py; `make hostile` is the full run):
a few cases of each family, each in a child process, with no traceback, signal, hang, unanswered
request, file lost or replaced, or exit status other than 0 and 1. MLIRTEXT_HOSTILE_CASES sets how
many per family (10 in CI); MLIRTEXT_HOSTILE_SEED varies them."""
from __future__ import annotations

import os

import pytest

from tests.hostile_suite import CORPUS, FAMILIES, Case, link_to, run_case, run_family

CASES = int(os.environ.get("MLIRTEXT_HOSTILE_CASES", "10"))
SEED = int(os.environ.get("MLIRTEXT_HOSTILE_SEED", "0"))


@pytest.mark.parametrize("family", FAMILIES)
def test_hostile_family_has_no_bad_case(family):
    if family == "mutated" and not (CORPUS / "CASES.tsv").exists():
        pytest.skip(f"no corpus at {CORPUS} (MLIRTEXT_CORPUS)")
    tally = run_family(family, CASES, SEED, jobs=2)
    assert tally.tried == CASES
    assert not any(tally.bad.values()), (tally.bad, tally.examples)


@pytest.mark.parametrize("script, files, outputs, problem", [
    ("import os; os.remove('a')", {"a": b"x"}, (), "files lost"),
    ("import os; os.remove('out'); open('out', 'w')", {"t": b"x", "out": link_to("t")}, ("out",), "files lost"),
    ("open('out', 'w').write('new')", {"t": b"x", "out": link_to("t")}, ("out",), None),   # through the link
    ("open('.out.tmp', 'w')", {}, ("out",), "files lost"),   # a temporary left behind
    ("import os; os.kill(os.getpid(), 11)", {}, (), "signals"),
    ("raise SystemExit(2)", {}, (), "other exits"),
    ("1 / 0", {}, (), "tracebacks"),
], ids=["input removed", "link replaced", "written through a link", "temporary left", "signal", "exit 2",
        "traceback"])
def test_the_suite_sees_each_kind_of_bad_case(script, files, outputs, problem):
    problems, _ = run_case(Case("self-test", ["-c", script], files, outputs))
    assert problems == ([problem] if problem else []), problems
