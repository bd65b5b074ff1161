"""Layered lowering: hlo -> tosa -> linalg -> loops -> llvm. At every level the module verifies,
iree-opt accepts it, and --check-semantics finds the same numbers as the level above."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.cli import main
from mlirtext.interpreter import Interpreter
from mlirtext.transforms.conversions.levels import level_of, lowering_pipeline
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline
from mlirtext.transforms.semantics_check import CheckSemantics

from .oracle import generic_forms

ELEMENTWISE = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %v: tensor<3xf32>, %i: tensor<2x3xi32>)
    -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<3x2xf32>, tensor<2x3xi32>, tensor<6xf32>) {
  %c = stablehlo.constant dense<1.5> : tensor<2x3xf32>
  %0 = stablehlo.add %a, %c : tensor<2x3xf32>
  %1 = stablehlo.multiply %0, %b : tensor<2x3xf32>
  %2 = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %3 = stablehlo.maximum %1, %2 : tensor<2x3xf32>
  %4 = stablehlo.compare LT, %3, %a, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %5 = stablehlo.select %4, %3, %a : tensor<2x3xi1>, tensor<2x3xf32>
  %6 = stablehlo.transpose %5, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %7 = stablehlo.exponential %6 : tensor<3x2xf32>
  %lo = stablehlo.constant dense<-2> : tensor<i32>
  %hi = stablehlo.constant dense<3> : tensor<i32>
  %8 = stablehlo.clamp %lo, %i, %hi : (tensor<i32>, tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
  %9 = stablehlo.negate %8 : tensor<2x3xi32>
  %10 = stablehlo.convert %9 : (tensor<2x3xi32>) -> tensor<2x3xf32>
  %11 = stablehlo.reshape %10 : (tensor<2x3xf32>) -> tensor<6xf32>
  %12 = stablehlo.reverse %11, dims = [0] : tensor<6xf32>
  return %5, %4, %7, %9, %12 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<3x2xf32>, tensor<2x3xi32>, tensor<6xf32>
}
"""

CONTRACTIONS = """
func.func @main(%a: tensor<2x4x3xf32>, %b: tensor<2x3x5xf32>, %x: tensor<4x8xf32>, %w: tensor<8x6xf32>)
    -> (tensor<2x4x5xf32>, tensor<4xf32>, tensor<4x6xf32>, tensor<8xf32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]
     : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %1 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1]
     : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = stablehlo.dot %x, %w : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %m = stablehlo.constant dense<1.0> : tensor<f32>
  %3 = stablehlo.reduce(%x init: %m) applies stablehlo.maximum across dimensions = [0]
     : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  return %0, %1, %2, %3 : tensor<2x4x5xf32>, tensor<4xf32>, tensor<4x6xf32>, tensor<8xf32>
}
"""

SOFTMAX = """
func.func @softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]
       : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
  %maxb = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<4xf32>) -> tensor<4x16xf32>
  %shift = stablehlo.subtract %x, %maxb : tensor<4x16xf32>
  %e = stablehlo.exponential %shift : tensor<4x16xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
       : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
  %sumb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<4xf32>) -> tensor<4x16xf32>
  %r = stablehlo.divide %e, %sumb : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
"""

PROGRAMS = {"elementwise": ELEMENTWISE, "contractions": CONTRACTIONS}


def lower(text: str, level: str):
    """(printed module, check-semantics report) after lowering `text` to `level`."""
    result = parse_and_verify(text)
    assert result.ok, [d.message for d in result.diagnostics]
    lines = []
    checker = CheckSemantics(lines.append, seed=3)
    pm = PassManager(parse_pipeline(lowering_pipeline(result.module, level)), instrumentations=[checker])
    problems = pm.run(result.module)
    assert not problems, [d.format() for d in problems]
    assert checker.differences and all(d.ok for d in checker.differences)
    return to_text(result), lines


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_level_keeps_meaning_and_is_valid_mlir(name):
    texts = {}
    for level, gone in (("tosa", "stablehlo."), ("linalg", "tosa."), ("loops", "linalg."),
                        ("llvm", "memref.")):
        text, _ = lower(PROGRAMS[name], level)
        assert gone not in text, f"{gone} ops left at the {level} level"
        assert level_of(parse_and_verify(text).module) in (level, None)
        texts[level] = text
    forms = generic_forms(list(texts.values()))
    assert forms is not None, "iree-opt rejected a lowered module"


@pytest.mark.parametrize("level", ["loops", "llvm"])
def test_lowered_levels_run_on_the_same_inputs(level):
    text, _ = lower(CONTRACTIONS, level)
    if level == "loops":
        assert "memref.alloc" in text and "scf.for" in text and "tensor.empty" not in text
    else:
        assert "llvm.call @malloc" in text and "mlirtext.abi = (tensor<2x4x3xf32>" in text
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in ((2, 4, 3), (2, 3, 5), (4, 8), (8, 6))]
    want = Interpreter(parse_and_verify(CONTRACTIONS).module).call("main", [a.copy() for a in args])
    got = Interpreter(parse_and_verify(text).module).call("main", [a.copy() for a in args])
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_run_command_runs_the_llvm_level_with_tensor_inputs(tmp_path, capsys):
    path = tmp_path / "m.ll.mlir"
    path.write_text(lower(CONTRACTIONS, "llvm")[0])
    inputs = ["--input=2x4x3xf32=1", "--input=2x3x5xf32=2", "--input=4x8xf32=0.5", "--input=8x6xf32=1"]
    assert main(["run", str(path), *inputs]) == 0
    out = capsys.readouterr().out
    assert "result[1]: hal.buffer_view\n4xf32=4 4 4 4\n" in out and "8xf32=1 1 1 1 1 1 1 1" in out


UNLOWERABLE = """
func.func @f(%a: tensor<3x3xf32>, %k: tensor<?xi32>) -> (tensor<3x3xf32>, tensor<?xi32>, tensor<3x3xf32>) {
  %0 = stablehlo.cholesky %a, lower = true : tensor<3x3xf32>
  %1 = stablehlo.add %k, %k : tensor<?xi32>
  %2 = stablehlo.add %a, %a : tensor<3x3xf32>
  return %0, %1, %2 : tensor<3x3xf32>, tensor<?xi32>, tensor<3x3xf32>
}
"""


def test_ops_without_a_lowering_are_all_reported_and_nothing_is_printed(tmp_path, capsys):
    path = tmp_path / "u.mlir"
    path.write_text(UNLOWERABLE)
    out = tmp_path / "out.mlir"
    assert main(["opt", str(path), "--lower-to=tosa", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "u.mlir:3:8: error: failed to legalize 'stablehlo.cholesky' to tosa" in err
    assert "u.mlir:4:8: error: failed to legalize 'stablehlo.add' to tosa" in err  # dynamic: no lowering
    assert err.count("failed to legalize") == 2 and "Traceback" not in err
    assert not out.exists()


def test_ops_without_an_exact_tosa_form_go_straight_to_linalg():
    text, _ = lower(SOFTMAX, "tosa")  # float divide: TOSA only has a reciprocal
    assert "tosa.reduce_max" in text and "arith.divf" in text and "linalg.generic" in text
    lower(SOFTMAX, "llvm")


def test_lower_to_a_level_above_the_input_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "l.mlir"
    path.write_text(lower(ELEMENTWISE, "loops")[0])
    assert main(["opt", str(path), "--lower-to=tosa"]) == 1
    assert "the input is at the loops level, below tosa" in capsys.readouterr().err


def test_buffers_are_reused_in_place_only_when_safe():
    text = """
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.add ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%f : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.add ins(%x, %a : tensor<4xf32>, tensor<4xf32>) outs(%x : tensor<4xf32>) -> tensor<4xf32>
  return %a, %b : tensor<4xf32>, tensor<4xf32>
}"""
    lowered, _ = lower(text, "loops")
    # %f's buffer is written in place by %a (its only user); %x is an argument: %b copies it first.
    assert lowered.count("memref.alloc") == 2
    assert lowered.count("memref.copy") == 1


CHAIN = """
func.func @chain(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<8x16xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<8x16xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x16xf32>
  %3 = stablehlo.tanh %2 : tensor<8x16xf32>
  %4 = stablehlo.exponential %3 : tensor<8x16xf32>
  return %4 : tensor<8x16xf32>
}
"""


@pytest.mark.oracle
def test_elementwise_chains_fuse_into_one_generic():
    text, _ = lower(CHAIN, "linalg")
    assert text.count("linalg.generic") == 1
    body = text[text.index("^bb0"):]
    for op in ("arith.mulf", "arith.addf", "math.tanh", "math.exp"):
        assert op in body
    assert generic_forms([text]) is not None
    lower(CHAIN, "llvm")  # and the fused op lowers all the way, with the same numbers


EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.mlir"))


@pytest.mark.oracle
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_bundled_examples_are_valid_and_lower_to_llvm_with_the_same_numbers(path):
    text = path.read_text()
    assert generic_forms([text]) is not None
    lowered, report = lower(text, "llvm")
    assert any("convert-loops-to-llvm" in line for line in report)


def test_lower_to_the_level_the_input_is_at_changes_nothing(tmp_path, capsys):
    path = tmp_path / "d.mlir"
    path.write_text(lower(CONTRACTIONS, "linalg")[0])
    assert main(["opt", str(path), "--lower-to=linalg"]) == 0
    assert "linalg.batch_matmul" in capsys.readouterr().out


EMPTY_TENSORS = """
func.func @main(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x0xf32>) {
  %e = stablehlo.constant dense<> : tensor<2x0xf32>
  %c = stablehlo.concatenate %e, %a, %e, dim = 1 : (tensor<2x0xf32>, tensor<2x3xf32>, tensor<2x0xf32>) -> tensor<2x3xf32>
  %n = stablehlo.negate %e : tensor<2x0xf32>
  return %c, %n : tensor<2x3xf32>, tensor<2x0xf32>
}
"""


@pytest.mark.oracle
def test_empty_tensors_never_reach_tosa():
    """TOSA has no empty tensors (iree-opt rejects them): an empty result is a tensor.empty,
    and concatenate drops its empty operands."""
    text, _ = lower(EMPTY_TENSORS, "tosa")
    assert "tosa.concat" not in text and "tensor<2x0xf32>" in text and "tensor.empty" in text
    assert generic_forms([text]) is not None
