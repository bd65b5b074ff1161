"""Issue 5's corpus figures, kept from sliding back: how many runnable corpus test functions
lower to each level and still pass their checks there (see tests/lowering_status.py).

Every function counted at a level converted completely, verified, ran on the interpreter
and passed its checks at that level, so this is also --check-semantics over the corpus."""
from __future__ import annotations

import pytest

from . import corpus, lowering_status
from .check_status import group_of

#: group -> minimum number of functions reaching (tosa, linalg, loops, llvm); measured
#: figures minus a small margin (README, "Figures").
FLOORS = {
    "stablehlo interpret": (394, 394, 394, 394),   # measured 398, 398, 398, 398 of 482
    "stablehlo testdata": (103, 103, 103, 103),    # measured 106, 106, 106, 106 of 114
    "iree e2e": (346, 346, 319, 319),              # measured 350, 350, 323, 323 of 370
}
LEVELS = [name for name, _ in lowering_status.LEVELS]


@pytest.mark.slow
@pytest.mark.skipif(not corpus.available(), reason="the corpus is not next to the project")
def test_corpus_functions_keep_reaching_their_levels():
    outcomes = lowering_status.collect()
    for group, floors in FLOORS.items():
        mine = [o for o in outcomes if group_of(o.file) == group]
        reached = [sum(LEVELS.index(o.reached) >= LEVELS.index(level) for o in mine) for level in LEVELS[1:]]
        for level, got, floor in zip(LEVELS[1:], reached, floors):
            assert got >= floor, f"{group}: {got} functions reach {level}, fewer than {floor}"
