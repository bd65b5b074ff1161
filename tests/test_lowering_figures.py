"""Issue 5's corpus figures, kept from sliding back: how far the runnable corpus test functions lower,
and whether they still pass their checks at every level (see mlirtext/sweeps/lowering_suite.py).

Every function of the three groups has an expected status per level, `tests/expected/lowering.tsv`
(`mlirtext sweep lowering --write-expected`; all but the IREE e2e group's softmax file, which ran over the
sweep's time limit on a loaded machine): a fixed sample of their files is lowered here and any
function worse than its entry at any level fails the test, named. The IREE e2e group's sample is a few
of its quick files: its large linalg tests (pack, unpack, a 131072-element argmax) run interpreted at
every level, minutes each under load.

Every function counted at a level converted completely, verified, ran on the interpreter and passed its
checks at that level, so this is also --check-semantics over the corpus."""
from __future__ import annotations

from pathlib import Path

import pytest

from mlirtext.sweeps import expectations, lowering_suite
from mlirtext.sweeps.corpus_files import corpus_files
from mlirtext.sweeps.runner import SweepOptions

from . import corpus

#: Every function's expected status at each level (`mlirtext sweep lowering --files ...
#: --write-expected`, one run per group; README, "Figures").
EXPECTED = Path(__file__).parent / "expected" / "lowering.tsv"
#: The stablehlo groups (globs relative to the corpus): every SAMPLE_STRIDE-th of their files (sorted,
#: so always the same ones) is lowered here.
STABLEHLO_GROUPS = ("stablehlo/stablehlo__tests__interpret__*.mlir", "stablehlo/stablehlo__testdata__*.mlir")
SAMPLE_STRIDE = 2
#: The IREE e2e group's files lowered here (`iree/tests__e2e__NAME.mlir`): quick ones (2-8 s each in the
#: sweep at load 10-18, where pack, unpack, index and argmax took 70-210 s), with functions that stop
#: before tosa (complex numbers, a scatter whose update region does not legalize), some that stop after
#: linalg (dynamic tile sizes) and some that fail at the source level.
IREE_SAMPLE = ("linalg__narrow_n_matmuls", "linalg__pack_dynamic_inner_tiles", "linalg__subbyte_to_fp",
               "stablehlo_ops__compare", "stablehlo_ops__complex", "stablehlo_ops__convolution",
               "stablehlo_ops__dynamic_slice", "stablehlo_ops__gather", "stablehlo_ops__reduce",
               "stablehlo_ops__scatter", "tosa_ops__if", "tosa_ops__reduce", "tosa_ops__table", "tosa_ops__while")


def sample_files() -> list[str]:
    return (corpus_files(str(corpus.CORPUS), STABLEHLO_GROUPS)[::SAMPLE_STRIDE]
            + [f"iree/tests__e2e__{name}.mlir" for name in IREE_SAMPLE])


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

