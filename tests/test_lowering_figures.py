"""Issue 5's corpus figures, kept from sliding back: how far the runnable corpus test functions lower,
and whether they still pass their checks at every level (see mlirtext/sweeps/lowering_suite.py).

The stablehlo interpret and testdata groups have an expected status per function and level,
`tests/expected/lowering.tsv` (`mlirtext sweep lowering --write-expected`): a fixed sample of their
files is lowered here and any function worse than its entry at any level fails the test, named. The
IREE e2e group is not in that file (its sweep takes about 25 minutes: its large pack tests run
interpreted at every level), so it keeps an aggregate floor.

Every function counted at a level converted completely, verified, ran on the interpreter and passed its
checks at that level, so this is also --check-semantics over the corpus."""
from __future__ import annotations

from pathlib import Path

import pytest

from mlirtext.sweeps import expectations, lowering_suite
from mlirtext.sweeps.corpus_files import corpus_files
from mlirtext.sweeps.runner import SweepOptions

from . import corpus, lowering_status
from .check_status import group_of

#: Every stablehlo interpret and testdata function's expected status at each level (`mlirtext sweep
#: lowering --files ... --write-expected`; README, "Figures").
EXPECTED = Path(__file__).parent / "expected" / "lowering.tsv"
#: The groups EXPECTED covers (globs relative to the corpus).
EXPECTED_GROUPS = ("stablehlo/stablehlo__tests__interpret__*.mlir", "stablehlo/stablehlo__testdata__*.mlir")
#: Every SAMPLE_STRIDE-th of those files (sorted, so always the same ones) is lowered here.
SAMPLE_STRIDE = 2
#: The IREE e2e group -> minimum number of functions reaching (tosa, linalg, loops, llvm); measured
#: figures minus a small margin.
IREE_FLOORS = (346, 346, 319, 319)   # measured 350, 350, 323, 323 of 370
LEVELS = [name for name, _ in lowering_status.LEVELS]


def sample_files() -> list[str]:
    return corpus_files(str(corpus.CORPUS), EXPECTED_GROUPS)[::SAMPLE_STRIDE]


@pytest.mark.slow
@pytest.mark.skipif(not corpus.available(), reason="the corpus is not next to the project")
def test_no_sampled_function_lowers_worse_than_expected():
    options = SweepOptions("lowering", str(corpus.CORPUS))
    files = sample_files()
    results = [r for rel in files for r in lowering_suite.run(rel, options)]
    expected = expectations.read(str(EXPECTED))
    comparison = expectations.compare(results, expected)
    assert not comparison.worse, expectations.describe(comparison, str(EXPECTED))
    assert not comparison.new, f"regenerate {EXPECTED}: " + expectations.describe(comparison, str(EXPECTED))
    # a function that vanished (its file no longer splits into the same test functions) hides nothing
    ran = {r.test for r in results}
    missing = [t for t in expected if t.partition("@")[0] in files and t not in ran]
    assert not missing, f"{len(missing)} tests of {EXPECTED} did not run: {', '.join(missing[:10])}"


@pytest.mark.slow
@pytest.mark.skipif(not corpus.available(), reason="the corpus is not next to the project")
def test_iree_e2e_functions_keep_reaching_their_levels():
    outcomes = lowering_status.collect(["iree/tests__e2e__*"])
    mine = [o for o in outcomes if group_of(o.file) == "iree e2e"]
    reached = [sum(LEVELS.index(o.reached) >= LEVELS.index(level) for o in mine) for level in LEVELS[1:]]
    for level, got, floor in zip(LEVELS[1:], reached, IREE_FLOORS):
        assert got >= floor, f"iree e2e: {got} functions reach {level}, fewer than {floor}"
