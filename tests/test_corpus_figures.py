"""The dialects issue's corpus figures, over the whole corpus, in one pass (see tests/corpus_status.py).

    PYTHONPATH=. python -m tests.corpus_status      # the same figures, with --per-file -v for the failures

Each figure must meet the issue's floor and must not fall more than a small
margin below what it is today (so a regression shows here, not only in the README).
The pass is shared with tests/test_corpus_roundtrip.py (computed once per process):
about 35 s on the 2-core development machine, iree-opt running three times in all.
"""
from __future__ import annotations

import pytest

from . import corpus, corpus_status

pytestmark = [pytest.mark.oracle, pytest.mark.slow,
              pytest.mark.skipif(not corpus.available(), reason="no corpus")]

#: kind -> (the issue's floor in percent, today's count minus a small margin, cases in the corpus)
FLOORS = {
    "valid-accepted": (97.0, 1477, 1482),   # today 1,482
    "valid-rejected": (80.0, 864, 871),     # today 869
    "invalid": (97.0, 1164, 1187),          # today 1,169 (annotations read as MLIR reads them)
}


def _failures(kind: str, limit: int = 15) -> str:
    bad = [o for o in corpus_status.whole_corpus()[kind] if not o.passed]
    return "\n".join(f"{o.case.case_id}: {o.detail.splitlines()[0] if o.detail else ''}" for o in bad[:limit])


@pytest.mark.parametrize("kind", list(FLOORS))
def test_figure(kind):
    fig = corpus_status.figures(corpus_status.whole_corpus())[kind]
    floor_percent, floor_count, total = FLOORS[kind]
    assert fig.total == total, f"{kind}: the corpus has {fig.total} cases, expected {total}"
    assert fig.percent >= floor_percent, f"{kind}: {fig.passed}/{fig.total} below the issue's {floor_percent}%\n" + _failures(kind)
    assert fig.passed >= floor_count, f"{kind}: {fig.passed}/{fig.total} fell below {floor_count}\n" + _failures(kind)


def test_no_exception_anywhere():
    crashed = [o for outs in corpus_status.whole_corpus().values() for o in outs if o.crashed]
    assert not crashed, "\n".join(f"{o.case.case_id}: {o.detail}" for o in crashed[:10])


def test_message_matches_are_counted():
    """The README quotes how many invalid cases also match MLIR's message text."""
    assert corpus_status.figures(corpus_status.whole_corpus())["invalid"].matched >= 1142  # today 1,150
