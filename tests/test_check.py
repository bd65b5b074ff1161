"""`mlirtext check`: the check ops' semantics, the command, and the corpus figures it reaches."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.checking import check_text
from mlirtext.cli import main
from mlirtext.interpreter import Interpreter
from mlirtext.interpreter.check import (bytes_equal, hlo_almost_equal, iree_almost_equal,
                                        ulp_difference)
from mlirtext.interpreter import builtin_semantics

from . import corpus

PASSING = """\
func.func @adds() {
  %0 = util.unfoldable_constant dense<[1, 2, 3]> : tensor<3xi32>
  %1 = arith.addi %0, %0 : tensor<3xi32>
  check.expect_eq_const(%1, dense<[2, 4, 6]> : tensor<3xi32>) : tensor<3xi32>
  return
}

func.func @floats() {
  %0 = util.unfoldable_constant dense<[1.0, 2.5]> : tensor<2xf32>
  %1 = arith.mulf %0, %0 : tensor<2xf32>
  check.expect_almost_eq_const(%1, dense<[1.00001, 6.25]> : tensor<2xf32>) : tensor<2xf32>
  check.expect_almost_eq(%1, %1) : tensor<2xf32>
  return
}

func.func private @helper() -> tensor<2xf32>
"""

FAILING = """\
func.func @wrong() {
  %0 = util.unfoldable_constant dense<[1, 2, 3]> : tensor<3xi32>
  %1 = arith.addi %0, %0 : tensor<3xi32>
  check.expect_eq_const(%1, dense<[2, 5, 7]> : tensor<3xi32>) : tensor<3xi32>
  return
}

func.func @right() {
  %0 = util.unfoldable_constant dense<7> : tensor<i32>
  check.expect_eq_const(%0, dense<7> : tensor<i32>) : tensor<i32>
  return
}
"""

SPLIT = """\
// RUN: stablehlo-translate --interpret -split-input-file %s

func.func @first() {
  %0 = arith.constant dense<[1.0, -2.0]> : tensor<2xf32>
  check.expect_almost_eq_const %0, dense<[1.0, -2.00001]> : tensor<2xf32>
  func.return
}

// -----

func.func @second() {
  %0 = arith.constant dense<[1, 2]> : tensor<2xi8>
  check.expect_eq_const %0, dense<[1, 3]> : tensor<2xi8>
  func.return
}

// -----

func.func @third() {
  %0 = arith.constant dense<1.0> : tensor<f32>
  check.expect_close %0, %0, max_ulp_difference = 0 : tensor<f32>, tensor<f32>
  func.return
}
"""

UNKNOWN_OP = """\
func.func @uses_unknown() {
  %0 = "foo.frobnicate"() : () -> tensor<2xi32>
  check.expect_eq_const(%0, dense<[1, 2]> : tensor<2xi32>) : tensor<2xi32>
  return
}

func.func @fine() {
  return
}
"""


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---- the command ------------------------------------------------------------------------------
def test_passing_file_exits_0(tmp_path, capsys):
    code, out, err = _run(["check", _write(tmp_path, "ok.mlir", PASSING)], capsys)
    assert code == 0, out + err
    assert "PASS @adds (line 1)" in out and "PASS @floats (line 8)" in out
    assert "@helper" not in out  # a declaration is no test
    assert out.strip().endswith("2 functions: 2 passed, 0 failed")


def test_failing_file_reports_first_mismatch(tmp_path, capsys):
    code, out, err = _run(["check", _write(tmp_path, "bad.mlir", FAILING)], capsys)
    assert code == 1
    line = next(l for l in out.splitlines() if l.startswith("FAIL"))
    assert line.startswith("FAIL @wrong (line 1): check.expect_eq_const (line 4): element [1]: got 4, expected 5")
    assert "(2 of 3 elements differ)" in line
    assert "PASS @right" in out
    assert "1 passed, 1 failed" in out


def test_split_input_file(tmp_path, capsys):
    path = _write(tmp_path, "split.mlir", SPLIT)
    code, out, err = _run(["check", "--split-input-file", path], capsys)
    assert code == 1
    assert "PASS @first (line 3)" in out
    assert "FAIL @second (line 11): check.expect_eq_const (line 13): element [1]: got 2, expected 3" in out
    assert "PASS @third" in out
    assert "3 functions: 2 passed, 1 failed" in out
    # without the flag the file is one module: it still runs, every function in it
    code, out, err = _run(["check", path], capsys)
    assert code == 1 and "3 functions" in out


def test_quiet_prints_only_failures(tmp_path, capsys):
    code, out, _ = _run(["check", "-q", _write(tmp_path, "bad.mlir", FAILING)], capsys)
    assert "FAIL @wrong" in out and "PASS" not in out


def test_op_without_semantics_is_an_error_of_that_function(tmp_path, capsys):
    code, out, err = _run(["check", _write(tmp_path, "unknown.mlir", UNKNOWN_OP)], capsys)
    assert code == 1
    assert "ERROR @uses_unknown (line 1): 'foo.frobnicate' has no semantics in the interpreter (line 2)" in out
    assert "PASS @fine" in out
    assert "1 passed, 0 failed, 1 errored" in out
    assert "Traceback" not in out + err


def test_bad_file_prints_diagnostics(tmp_path, capsys):
    path = _write(tmp_path, "syntax.mlir", "func.func @f() {\n  %0 = arith.addi %x : i32\n  return\n}\n")
    code, out, err = _run(["check", path], capsys)
    assert code == 1
    assert f"{path}:2:" in err and "error:" in err
    assert "Traceback" not in out + err
    code, out, err = _run(["check", str(tmp_path / "missing.mlir")], capsys)
    assert code == 1 and "could not open input file" in err


def test_bad_chunk_does_not_stop_the_others(tmp_path, capsys):
    text = SPLIT.replace("check.expect_eq_const %0, dense<[1, 3]>", "check.expect_eq_const %0, dense<[1, 3, 4]>")
    code, out, err = _run(["check", "--split-input-file", _write(tmp_path, "chunk.mlir", text)], capsys)
    assert code == 1
    assert "error:" in err
    assert "PASS @first" in out and "PASS @third" in out
    assert "ERROR @second" in out and "does not parse/verify" in out


def test_runs_as_a_program(tmp_path):
    path = _write(tmp_path, "bad.mlir", FAILING)
    proc = subprocess.run([sys.executable, "-m", "mlirtext", "check", path], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and "FAIL @wrong" in proc.stdout, proc.stderr
    assert "Traceback" not in proc.stderr


def test_time_limit_stops_a_function():
    builtin_semantics().impls["test.sleep"] = lambda interp, op, args: time.sleep(3) or []
    try:
        report = check_text('func.func @slow() {\n  "test.sleep"() : () -> ()\n  return\n}\n', "t", False,
                            time_limit=0.2)
    finally:
        del builtin_semantics().impls["test.sleep"]
    (r,) = report.results
    assert r.status == "error" and r.reason.startswith("time limit") and r.seconds < 2


def test_internal_errors_are_reported_not_raised():
    def broken(interp, op, args):
        raise KeyError("oops")
    builtin_semantics().impls["test.broken"] = broken
    try:
        report = check_text('func.func @f() {\n  "test.broken"() : () -> ()\n  return\n}\n', "t", False)
    finally:
        del builtin_semantics().impls["test.broken"]
    assert report.results[0].status == "error" and "internal error: KeyError" in report.results[0].reason


def test_main_is_the_test_when_present():
    text = """
func.func public @main() -> tensor<i32> {
  %0 = call @inputs() : () -> tensor<i32>
  %1 = arith.addi %0, %0 : tensor<i32>
  %e = arith.constant dense<4> : tensor<i32>
  stablehlo.custom_call @check.expect_eq(%1, %e) {has_side_effect = true} : (tensor<i32>, tensor<i32>) -> ()
  return %1 : tensor<i32>
}
func.func public @other() {
  %0 = "foo.never"() : () -> i32
  return
}
func.func private @inputs() -> tensor<i32> {
  %0 = arith.constant dense<2> : tensor<i32>
  return %0 : tensor<i32>
}
"""
    report = check_text(text, "t", False)
    assert [(r.name, r.status) for r in report.results] == [("main", "passed")]


# ---- the check ops ------------------------------------------------------------------------------
def _failures(body: str, decls: str = "") -> list:
    module = parse_and_verify(f"func.func @t() {{\n{body}\n  return\n}}\n{decls}").module
    assert module is not None
    interp = Interpreter(module)
    interp.call("t", [])
    return interp.failures


def test_stablehlo_almost_eq_rules():
    f = np.array
    # equal, both NaN, within tolerance with the same sign
    ok = hlo_almost_equal(f([1.0, np.nan, 0.5, 0.0, np.inf]), f([1.0, np.nan, 0.50005, -0.0, np.inf]), 1e-4)
    assert ok.tolist() == [True, True, True, True, True]
    # different signs never match (even within tolerance), NaN vs number, inf vs -inf, inf vs big
    bad = hlo_almost_equal(f([1e-6, np.nan, np.inf, np.inf, 1.0]), f([-1e-6, 1.0, -np.inf, 1e300, 1.001]), 1e-4)
    assert bad.tolist() == [False, False, False, False, False]
    c = np.array([1 + 2j, 1 + 2j], np.complex64)
    assert hlo_almost_equal(c, np.array([1 + 2.00001j, 1 + 2.1j], np.complex64), 1e-4).tolist() == [True, False]


def test_iree_almost_eq_rules():
    f32 = np.float32
    lhs = np.array([1.0, np.nan, np.inf, 100.0, 0.0], f32)
    rhs = np.array([1.00005, np.nan, np.inf, 100.5, -0.0], f32)
    assert iree_almost_equal(lhs, rhs, 1e-4, 0.0).tolist() == [True, True, True, False, True]
    assert iree_almost_equal(lhs, rhs, 1e-4, 1e-2).tolist() == [True, True, True, True, True]
    # NaN is tolerated only against NaN; an infinite expectation only matches itself
    assert iree_almost_equal(np.array([np.nan, 1e30], f32), np.array([1.0, np.inf], f32), 1e-4, 0).tolist() \
        == [False, False]


def test_ulp_difference():
    one = np.float32(1.0)
    nxt = np.nextafter(one, np.float32(2))
    a = np.array([one, nxt, 0.0, -0.0, np.nan, np.inf, np.inf, 1e-45], np.float32)
    b = np.array([one, one, -0.0, 0.0, np.nan, np.inf, 3e38, -1e-45], np.float32)
    got = ulp_difference(a, b).tolist()
    assert got[:6] == [0, 1, 0, 0, 0, 0]
    assert got[6] == np.iinfo(np.uint64).max   # finite vs infinite
    assert got[7] == 2                          # smallest subnormals across zero
    h = np.array([1.0], np.float16)
    assert ulp_difference(np.nextafter(h, np.float16(0)), h).tolist() == [1]


def test_iree_expect_eq_compares_bits():
    nan, negz = np.array([np.nan], np.float32), np.array([-0.0], np.float32)
    assert bytes_equal(nan, nan.copy()).all()
    assert not bytes_equal(negz, np.array([0.0], np.float32)).any()


def test_expect_eq_spellings_differ_on_negative_zero():
    iree = _failures("  %0 = arith.constant dense<-0.0> : tensor<f32>\n"
                     "  check.expect_eq_const(%0, dense<0.0> : tensor<f32>) : tensor<f32>")
    hlo = _failures("  %0 = arith.constant dense<-0.0> : tensor<f32>\n"
                    "  check.expect_eq_const %0, dense<0.0> : tensor<f32>")
    assert len(iree) == 1 and "got -0.0, expected 0.0" in iree[0].message
    assert hlo == []


def test_tolerance_attributes():
    body = ("  %0 = arith.constant dense<[1.0, 2.0]> : tensor<2xf64>\n"
            "  check.expect_almost_eq_const %0, dense<[1.05, 2.0]> : tensor<2xf64>\n"
            "  check.expect_almost_eq_const %0, dense<[1.05, 2.0]>, tolerance = 1.000000e-01 : tensor<2xf64>\n"
            "  %1 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
            "  check.expect_almost_eq_const(%1, dense<[1.05, 2.0]> : tensor<2xf32>, atol 1.0e-1) : tensor<2xf32>\n"
            "  check.expect_almost_eq_const(%1, dense<[1.0, 2.1]> : tensor<2xf32>, rtol 1.0e-1) : tensor<2xf32>")
    failures = _failures(body)
    assert len(failures) == 1
    f = failures[0]
    assert f.line == 3 and f.index == (0,) and "tolerance 0.0001" in f.message


def test_expect_close_and_custom_calls():
    body = """\
  %0 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = arith.constant dense<[1.00000012, 2.0]> : tensor<2xf32>
  %2 = arith.constant dense<[1.0000005, 2.0]> : tensor<2xf32>
  check.expect_close %0, %1, max_ulp_difference = 0 : tensor<2xf32>, tensor<2xf32>
  check.expect_close %0, %1, max_ulp_difference = 1 : tensor<2xf32>, tensor<2xf32>
  check.expect_close %0, %0, max_ulp_difference = 3, min_ulp_difference = 1 : tensor<2xf32>, tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%0, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  stablehlo.custom_call @check.expect_close(%0, %2) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  stablehlo.custom_call @check.expect_almost_eq(%0, %2) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  stablehlo.custom_call @check.expect_eq(%0, %1) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()"""
    failures = _failures(body)
    assert [f.line for f in failures] == [5, 7, 9, 11]
    assert "1 ULP apart (max 0)" in failures[0].message
    assert "0 ULP apart (max 3, min 1)" in failures[1].message
    assert failures[2].check == "stablehlo.custom_call @check.expect_close" and "4 ULP apart (max 3)" in failures[2].message
    assert failures[3].check == "stablehlo.custom_call @check.expect_eq"


def test_truth_checks_and_all_true():
    body = """\
  %t = arith.constant 1 : i32
  %f = arith.constant 0 : i32
  check.expect_true(%t) : i32
  check.expect_false(%f) : i32
  check.expect_true(%f) : i32
  %v = arith.constant dense<[1, 1, 0]> : tensor<3xi32>
  check.expect_all_true(%v) : tensor<3xi32>"""
    failures = _failures(body)
    assert [f.line for f in failures] == [6, 8]
    assert "expected non-zero" in failures[0].message and "element [2]" in failures[1].message


def test_serialized_eq_compares_with_the_probe():
    body = """\
  %0 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<2xf32>
  check.expect_serialized_eq %1, probe_id = "p" : tensor<2xf32>
  %2 = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  check.expect_serialized_eq %2, probe_id = "p" : tensor<2xf32>
  check.expect_serialized_eq %2, probe_id = "never" : tensor<2xf32>
  check.expect_serialized_eq %2, probe_id = "p", iter = 1 : tensor<2xf32>
  %3 = arith.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_serialized_eq %3, probe_id = "p" : tensor<2xi32>"""
    failures = _failures(body)
    assert [f.line for f in failures] == [6, 7, 8, 10]
    assert "element [1]: got 3.0, expected 2.0" in failures[0].message
    assert "no value was recorded by probe 'never'" in failures[1].message
    assert "at iteration 1" in failures[2].message
    assert "serialized types don't match: tensor<2xi32> (actual) vs tensor<2xf32> (expected)" in failures[3].message


def test_a_value_in_the_wrong_runtime_form_fails_the_check():
    builtin_semantics().impls["test.wrong_dtype"] = lambda interp, op, args: [np.zeros(2, np.float64)]
    try:
        failures = _failures('  %0 = "test.wrong_dtype"() : () -> tensor<2xf32>\n'
                             '  check.expect_almost_eq_const(%0, dense<0.0> : tensor<2xf32>) : tensor<2xf32>')
    finally:
        del builtin_semantics().impls["test.wrong_dtype"]
    assert len(failures) == 1 and "float64" in failures[0].message and "tensor<2xf32>" in failures[0].message


def test_unknown_custom_call_is_an_error():
    report = check_text('func.func @g() {\n  %0 = arith.constant dense<1.0> : tensor<f32>\n'
                        '  stablehlo.custom_call @my.kernel(%0) : (tensor<f32>) -> ()\n  return\n}\n', "t", False)
    assert report.results[0].status == "error" and "'@my.kernel'" in report.results[0].reason


def test_householder_product_is_lapack_orgqr():
    a = np.random.default_rng(1).standard_normal((2, 5, 3))
    raw = [np.linalg.qr(m, mode="raw") for m in a]   # LAPACK geqrf: reflectors (transposed) and taus
    h = np.array([r[0].T for r in raw])
    taus = np.array([r[1] for r in raw])
    text = """func.func @f(%a: tensor<2x5x3xf64>, %t: tensor<2x3xf64>) -> tensor<2x5x3xf64> {
  %0 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%a, %t) : (tensor<2x5x3xf64>, tensor<2x3xf64>) -> tensor<2x5x3xf64>
  return %0 : tensor<2x5x3xf64>
}"""
    (q,) = Interpreter(parse_and_verify(text).module).call("f", [h, taus])
    np.testing.assert_allclose(q, np.array([np.linalg.qr(m)[0] for m in a]), atol=1e-12)


# ---- the corpus figures ----------------------------------------------------------------------------
#: Every corpus test function's expected status (`mlirtext sweep check --write-expected`, from the run that
#: measured stablehlo interpret 522/522, testdata 114/117, IREE e2e 372/374): a function worse than its
#: entry fails, named, where an aggregate floor let one regression hide behind another's fix.
EXPECTED = Path(__file__).parent / "expected" / "check.tsv"


@pytest.mark.slow
@pytest.mark.skipif(not corpus.available(), reason="no ../shared/corpus")
def test_no_corpus_test_function_is_worse_than_expected():
    from mlirtext.sweeps import check_suite, expectations
    from mlirtext.sweeps.runner import SweepOptions
    options = SweepOptions("check", str(corpus.CORPUS))
    results = [r for rel in check_suite.tests(options) for r in check_suite.run(rel, options)]
    comparison = expectations.compare(results, expectations.read(str(EXPECTED)))
    assert not comparison.worse, expectations.describe(comparison, str(EXPECTED))


def test_check_operands_have_both_dialects_names():
    """IREE's `$device? $lhs $rhs` and StableHLO's `$lhs $rhs` (`$actual $expected` for
    expect_close, `$expected` for expect_serialized_eq): the optional device goes by the count."""
    result = parse_and_verify("""\
func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>, %i: i32, %d: !hal.device) {
  check.expect_eq<%d>(%a, %b) : tensor<2xf32>
  check.expect_eq(%a, %b) : tensor<2xf32>
  check.expect_almost_eq %b, %a, tolerance = 0.1 : tensor<2xf32>
  check.expect_close %a, %b, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>
  check.expect_eq_const %b, dense<1.0> : tensor<2xf32>
  check.expect_serialized_eq %a, probe_id = "p" : tensor<2xf32>
  check.expect_true(%i) : i32
  return
}
""")
    assert result.ok, [d.message for d in result.diagnostics]
    fn = result.module.regions[0].blocks[0].ops[0]
    iree, plain, almost, close, const, serialized, true = fn.regions[0].blocks[0].ops[:7]
    a, b, i, d = fn.regions[0].blocks[0].arguments
    assert (iree.operand("device"), iree.operand("lhs"), iree.operand("rhs")) == (d, a, b)
    assert plain.operands_named("device") == [] and (plain.operand("lhs"), plain.operand("rhs")) == (a, b)
    assert (almost.operand("lhs"), almost.operand("rhs")) == (b, a)
    assert (close.operand("actual"), close.operand("expected")) == (a, b)
    assert const.operand("lhs") is b and serialized.operand("expected") is a and true.operand("operand") is i
