"""Round trip against the real MLIR: parse, verify, print; iree-opt must agree.

For every valid corpus case that iree-opt accepts and that uses only the core
dialects (other dialects only in generic form), mlirtext's custom and generic
prints must be accepted by iree-opt and give the same generic form as the
original. The work is the whole-corpus pass of tests/corpus_status.py (shared
with tests/test_corpus_figures.py, done once per process, iree-opt batched over
all cases); this file reports its core cases per corpus file.
"""
from __future__ import annotations

from collections import defaultdict

import pytest

from . import corpus, corpus_status

pytestmark = [pytest.mark.oracle, pytest.mark.skipif(not corpus.available(), reason="no corpus")]

#: Cases we knowingly do not read yet, with the reason.
KNOWN_GAPS: set[str] = set()


def _batches():
    by_file = defaultdict(list)
    for case in corpus.core_cases():
        if case.case_id not in KNOWN_GAPS:
            by_file[case.file].append(case)
    return sorted(by_file.items())


BATCHES = _batches() if corpus.available() else []


def test_core_case_count_is_stable():
    """The README quotes this count; it must not silently shrink."""
    assert sum(len(b) for _, b in BATCHES) >= 900


@pytest.mark.parametrize("file,cases", BATCHES, ids=[f for f, _ in BATCHES])
def test_round_trip(file, cases):
    outcomes = {o.case.case_id: o for o in corpus_status.whole_corpus()["valid-accepted"]}
    for case in cases:
        o = outcomes[case.case_id]
        assert o.passed, f"{case.case_id}: our custom print:\n{o.detail}"
        assert o.generic_ok, f"{case.case_id}: our generic print:\n{o.generic_detail}"
