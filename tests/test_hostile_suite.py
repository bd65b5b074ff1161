"""CI's sample of the hostile-input suite (tests/hostile_suite.py; `make hostile` is the full run):
a few cases of each family, each in a child process, with no traceback, signal, hang, unanswered
request, file lost or replaced, or exit status other than 0 and 1. MLIRTEXT_HOSTILE_CASES sets how
many per family (10 in CI); MLIRTEXT_HOSTILE_SEED varies them."""
from __future__ import annotations

import os

import pytest

from tests.hostile_suite import CORPUS, FAMILIES, run_family

CASES = int(os.environ.get("MLIRTEXT_HOSTILE_CASES", "10"))
SEED = int(os.environ.get("MLIRTEXT_HOSTILE_SEED", "0"))


@pytest.mark.parametrize("family", FAMILIES)
def test_hostile_family_has_no_bad_case(family):
    if family == "mutated" and not (CORPUS / "CASES.tsv").exists():
        pytest.skip(f"no corpus at {CORPUS} (MLIRTEXT_CORPUS)")
    tally = run_family(family, CASES, SEED, jobs=2)
    assert tally.tried == CASES
    assert not any(tally.bad.values()), (tally.bad, tally.examples)
