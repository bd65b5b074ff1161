"""The pass engine: pipelines as text, the greedy driver, canonicalize, cse, dce,
symbol-dce, inline, and `mlirtext opt`'s pass flags and instrumentation."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.cli import main
from mlirtext.interpreter import Interpreter
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.passes import Pass, builtin_passes
from mlirtext.transforms.pipeline import PipelineError, parse_pipeline

from .oracle import generic_forms


def run_pipeline(text: str, pipeline: str) -> str:
    result = parse_and_verify(text)
    assert result.ok, [d.message for d in result.diagnostics]
    problems = PassManager(parse_pipeline(pipeline)).run(result.module)
    assert not problems, [d.message for d in problems]
    return to_text(result)


def body_ops(text: str) -> list[str]:
    result = parse_and_verify(text)
    return [op.name for op in result.module.walk()][1:]


# ---- pipeline text ------------------------------------------------------------------------
def test_pipeline_round_trips_its_spelling():
    items = parse_pipeline(" builtin.module( func.func(canonicalize{max-num-rewrites=7}, cse), symbol-dce)")
    assert [i.spelling() for i in items] == \
        ["builtin.module(func.func(canonicalize{max-num-rewrites=7},cse),symbol-dce)"]


@pytest.mark.parametrize("text, message, column", [
    ("cse,bogus", "'bogus' does not refer to a registered pass", 4),
    ("func.func(cse", "expected ')' or ','", 13),
    ("canonicalize{max-num-rewrites=many}", "expects an integer, got 'many'", 0),
    ("cse{aggressive=1}", "pass 'cse' has no option 'aggressive'", 0),
    ("canonicalize{max-num-rewrites=1", "unterminated options", 12),
    ("cse)", "unexpected ')'", 3),
])
def test_bad_pipelines_point_at_the_problem(text, message, column):
    with pytest.raises(PipelineError) as info:
        parse_pipeline(text)
    assert message in str(info.value)
    assert info.value.column == column
    assert info.value.format().splitlines()[-1] == "  " + " " * column + "^"


# ---- canonicalize -------------------------------------------------------------------------
ARITH = """
func.func @f(%x: i32, %y: f32) -> (i32, i32, f32, i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %five = arith.addi %c2, %c3 : i32
  %a = arith.addi %x, %c0 : i32
  %b = arith.muli %c1, %a : i32
  %m = arith.muli %b, %five : i32
  %one = arith.constant 1.0 : f32
  %z = arith.mulf %y, %one : f32
  %t = arith.constant true
  %s = arith.select %t, %m, %x : i32
  %wrap = arith.constant 2147483647 : i32
  %w = arith.addi %wrap, %c1 : i32
  return %s, %b, %z, %w : i32, i32, f32, i32
}
"""


def test_canonicalize_folds_constants_and_identities_and_keeps_meaning():
    out = run_pipeline(ARITH, "canonicalize")
    assert body_ops(out) == ["func.func", "arith.constant", "arith.muli", "arith.constant", "func.return"]
    assert "arith.constant 5 : i32" in out
    assert "arith.constant -2147483648 : i32" in out  # folding wraps like the ops do
    args = [np.array(7, np.int32), np.array(2.5, np.float32)]
    before = Interpreter(parse_and_verify(ARITH).module).call("f", args)
    after = Interpreter(parse_and_verify(out).module).call("f", args)
    for a, b in zip(before, after, strict=True):
        assert a.dtype == b.dtype and a == b


def test_canonicalize_keeps_float_ops_that_are_not_identities():
    text = """
func.func @f(%y: f32) -> (f32, f32) {
  %zero = arith.constant 0.0 : f32
  %a = arith.mulf %y, %zero : f32
  %b = arith.addf %y, %zero : f32
  return %a, %b : f32, f32
}"""
    # y*0 is NaN for y=inf and -0 for y<0; y+0.0 is 0.0 for y=-0.0: neither folds.
    assert body_ops(run_pipeline(text, "canonicalize")).count("arith.mulf") == 1
    assert body_ops(run_pipeline(text, "canonicalize")).count("arith.addf") == 1


def test_max_num_rewrites_stops_early():
    out = run_pipeline(ARITH, "canonicalize{max-num-rewrites=1}")
    assert 1 < body_ops(out).count("arith.constant")


def test_dead_pure_ops_go_but_side_effects_stay():
    text = """
func.func @f(%x: tensor<4xf32>) {
  %a = arith.addf %x, %x : tensor<4xf32>
  %b = arith.mulf %a, %a : tensor<4xf32>
  check.expect_almost_eq(%x, %x) : tensor<4xf32>
  return
}"""
    for pipeline in ("canonicalize", "dce"):
        assert body_ops(run_pipeline(text, pipeline)) == ["func.func", "check.expect_almost_eq", "func.return"]


# ---- cse ----------------------------------------------------------------------------------
def test_cse_merges_equal_ops_within_their_scope():
    text = """
func.func @f(%x: i32, %c: i1) -> (i32, i32, i32) {
  %a = arith.addi %x, %x : i32
  %b = arith.addi %x, %x : i32
  %d = arith.subi %a, %b : i32
  %r = scf.if %c -> (i32) {
    %in = arith.addi %x, %x : i32
    scf.yield %in : i32
  } else {
    scf.yield %x : i32
  }
  %e = arith.addi %x, %x {tag} : i32
  return %d, %r, %e : i32, i32, i32
}"""
    out = run_pipeline(text, "cse")
    ops = body_ops(out)
    assert ops.count("arith.addi") == 2  # %a (also replacing %b and %in) and %e (other attributes)
    assert "arith.subi %a, %a" in out
    assert "scf.yield %a" in out


def test_cse_does_not_cross_isolated_regions_or_merge_side_effects():
    text = """
module {
  func.func @f(%x: tensor<2xf32>) {
    check.expect_almost_eq(%x, %x) : tensor<2xf32>
    check.expect_almost_eq(%x, %x) : tensor<2xf32>
    return
  }
  func.func @g(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}"""
    assert body_ops(run_pipeline(text, "cse")).count("check.expect_almost_eq") == 2


# ---- symbol-dce and inline ------------------------------------------------------------------
CALLS = """
module {
  func.func private @relu(%x: tensor<4xf32>) -> tensor<4xf32> {
    %z = arith.constant dense<0.0> : tensor<4xf32>
    %r = arith.maximumf %x, %z : tensor<4xf32>
    return %r : tensor<4xf32>
  }
  func.func private @twice(%x: tensor<4xf32>) -> tensor<4xf32> {
    %a = call @relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
    %b = arith.addf %a, %a : tensor<4xf32>
    return %b : tensor<4xf32>
  }
  func.func private @unused() {
    return
  }
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = call @twice(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}"""


def test_symbol_dce_erases_only_unreferenced_private_symbols():
    out = run_pipeline(CALLS, "symbol-dce")
    assert "@unused" not in out and "@relu" in out and "@twice" in out and "@main" in out


@pytest.mark.oracle
def test_inline_flattens_calls_keeps_meaning_and_iree_opt_accepts_it():
    out = run_pipeline(CALLS, "inline,canonicalize,cse")
    assert "call" not in out and "@relu" not in out and "@twice" not in out
    x = np.array([-1.5, 0.0, 2.0, -0.0], np.float32)
    want = Interpreter(parse_and_verify(CALLS).module).call("main", [x])
    got = Interpreter(parse_and_verify(out).module).call("main", [x])
    np.testing.assert_array_equal(want[0], got[0])
    assert generic_forms([out]) is not None


def test_inline_leaves_recursion_alone():
    text = """
func.func @f(%x: i32) -> i32 {
  %0 = call @f(%x) : (i32) -> i32
  return %0 : i32
}"""
    assert "call @f" in run_pipeline(text, "inline")


# ---- mlirtext opt ----------------------------------------------------------------------------
@pytest.fixture
def arith_file(tmp_path):
    path = tmp_path / "a.mlir"
    path.write_text(ARITH)
    return str(path)


def test_opt_short_flags_run_in_command_line_order(arith_file, capsys):
    assert main(["opt", arith_file, "--canonicalize", "--cse", "--print-ir-after-all"]) == 0
    err = capsys.readouterr().err
    first = err.index("IR Dump After Canonicalizer (canonicalize)")
    assert first < err.index("IR Dump After CSE (cse)")


def test_opt_pass_options_and_after_change(arith_file, capsys):
    assert main(["opt", arith_file, "--canonicalize=max-num-rewrites=100", "--cse",
                 "--print-ir-after-change"]) == 0
    err = capsys.readouterr().err
    assert "After Canonicalizer" in err and "After CSE" not in err  # cse found nothing left to do


def test_opt_timing_and_list_passes(arith_file, capsys):
    assert main(["opt", arith_file, "--pass-pipeline=builtin.module(func.func(canonicalize))", "--timing"]) == 0
    err = capsys.readouterr().err
    assert "Execution time report" in err and "Canonicalizer (canonicalize)" in err
    assert main(["opt", "--list-passes"]) == 0
    out = capsys.readouterr().out
    for name in ("canonicalize", "cse", "dce", "symbol-dce", "inline"):
        assert f"--{name}" in out


def test_opt_bad_pipeline_is_a_clear_error(arith_file, capsys):
    assert main(["opt", arith_file, "--pass-pipeline=builtin.module(nope)"]) == 1
    err = capsys.readouterr().err
    assert "'nope' does not refer to a registered pass" in err and "Traceback" not in err


# ---- --check-semantics ------------------------------------------------------------------------
@builtin_passes().register  # (the command line reads pipelines against the built-in registry)
@dataclass(frozen=True)
class BreakAddf(Pass):
    """A wrong rewrite (addf -> subf) that --check-semantics must catch."""
    name = "test-break-addf"
    summary = "test only: turns addf into subf"

    def run(self, op):
        for o in op.walk():
            if o.name == "arith.addf":
                o.name = "arith.subf"


def test_check_semantics_passes_good_passes_and_names_the_bad_one(arith_file, capsys):
    assert main(["opt", arith_file, "--canonicalize", "--cse", "--check-semantics", "-o", arith_file + ".out"]) == 0
    err = capsys.readouterr().err
    assert "check-semantics: canonicalize: @f: max |diff| 0, 0 ulp: ok" in err
    path = arith_file.replace("a.mlir", "b.mlir")
    with open(path, "w") as f:
        f.write("func.func @g(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
                "  %y = arith.addf %x, %x : tensor<3xf32>\n  return %y : tensor<3xf32>\n}\n")
    assert main(["opt", path, "--pass-pipeline=test-break-addf", "--check-semantics"]) == 1
    err = capsys.readouterr().err
    assert "error: pass 'test-break-addf' changed the results of @g" in err


def test_float_difference_counts_ulps_and_matches_nans():
    from mlirtext.transforms.semantics_check import float_difference
    a = np.array([1.0, np.nan, -0.0, np.inf], np.float32)
    b = np.array([np.nextafter(np.float32(1), np.float32(2)), np.nan, 0.0, np.inf], np.float32)
    assert float_difference(a, b)[1:] == (1, True)
    c = np.array([1.0, 2.0], np.float32)
    assert float_difference(c, c * np.float32(1.001))[2] is False
    assert float_difference(np.array([np.nan], np.float32), np.array([1.0], np.float32))[2] is False
