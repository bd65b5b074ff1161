"""The native and VM corpus figures, kept from sliding back per test: `tests/expected/native.tsv` and
`tests/expected/vm.tsv` hold the expected status of every function of the stablehlo interpret and
testdata groups and of the IREE e2e group's stablehlo and tosa ops files (`mlirtext sweep native|vm
--files ... --write-expected`; README, "Figures"). A fixed sample of those files (four stablehlo ones,
the native test's files before these expected files: add, exponential, exponential_minus_one, tanh;
five quick IREE e2e ones) is lowered here once, run natively (the stablehlo exponential and tanh files
also with the polynomial approximation of math functions) and on the VM, and any function worse than its
entry fails the test, named."""
from __future__ import annotations

from pathlib import Path

import pytest

from mlirtext.sweeps import expectations, native_suite, vm_suite
from mlirtext.sweeps.lowering_suite import lower_file
from mlirtext.sweeps.runner import SweepOptions

from . import corpus

EXPECTED = Path(__file__).parent / "expected"
SAMPLE = ("stablehlo/stablehlo__tests__interpret__add.mlir", "stablehlo/stablehlo__tests__interpret__exponential.mlir",
          "stablehlo/stablehlo__tests__interpret__exponential_minus_one.mlir",
          "stablehlo/stablehlo__tests__interpret__tanh.mlir",
          # functions that do not reach llvm among them (a scatter's update region, tosa.if)
          "iree/tests__e2e__stablehlo_ops__dynamic_slice.mlir", "iree/tests__e2e__stablehlo_ops__scatter.mlir",
          "iree/tests__e2e__tosa_ops__if.mlir", "iree/tests__e2e__tosa_ops__reduce.mlir",
          "iree/tests__e2e__tosa_ops__while.mlir")
#: Of those, the files run with the polynomial approximation too (their own tolerances still hold).
APPROX = ("exponential", "tanh")


@pytest.fixture(scope="module")
def lowered():
    if not corpus.available():
        pytest.skip("the corpus is not next to the project")
    return {rel: lower_file(str(corpus.CORPUS), rel) for rel in SAMPLE}


def _check(results, name: str) -> None:
    path = str(EXPECTED / name)
    expected = expectations.read(path)
    comparison = expectations.compare(results, expected)
    assert not comparison.worse, expectations.describe(comparison, path)
    assert not comparison.new, f"regenerate {path}: " + expectations.describe(comparison, path)
    ran = {r.test for r in results}
    missing = [t for t in expected if t.partition("@")[0] in SAMPLE and t not in ran]
    assert not missing, f"{len(missing)} tests of {path} did not run: {', '.join(missing[:10])}"


def test_no_sampled_function_runs_natively_worse_than_expected(lowered):
    options = SweepOptions("native", str(corpus.CORPUS))
    results = [r for rel, outcomes in lowered.items() for r in native_suite.results_of(rel, outcomes, options)]
    assert sum(r.status == "pass" for r in results) >= 12
    _check(results, "native.tsv")
    approx = SweepOptions("native", str(corpus.CORPUS), extra={"approx": True})
    with_approx = [r for rel, outcomes in lowered.items() if any(f"__{a}" in rel for a in APPROX)
                   for r in native_suite.results_of(rel, outcomes, approx)]
    assert with_approx and not [(r.test, r.error) for r in with_approx if r.status not in ("pass", "skip")]


def test_no_sampled_function_runs_on_the_vm_worse_than_expected(lowered):
    options = SweepOptions("vm", str(corpus.CORPUS))
    results = [r for rel, outcomes in lowered.items() for r in vm_suite.results_of(rel, outcomes, options)]
    _check(results, "vm.tsv")


def test_a_function_gone_wrong_on_the_vm_is_named_alone(lowered, monkeypatch):
    """A deliberate regression of one function (its VM results said to differ) is the one test worse
    than the file expects."""
    rel, victim = SAMPLE[0], "add_op_test_si4"
    check = vm_suite.check_function

    def wrong_for_victim(file, name, source, device):
        out = check(file, name, source, device)
        if name == victim:
            out.ok, out.why = False, "result 0: 1 elements differ"
        return out

    monkeypatch.setattr(vm_suite, "check_function", wrong_for_victim)
    results = vm_suite.results_of(rel, lowered[rel], SweepOptions("vm", str(corpus.CORPUS)))
    comparison = expectations.compare(results, expectations.read(str(EXPECTED / "vm.tsv")))
    assert [(r.test, r.status, status) for r, status, _ in comparison.worse] == [
        (f"{rel}@{victim} [local-sync]", "mismatch", "pass")]
