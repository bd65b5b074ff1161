"""The lowering service (`transforms/lowering_service.py`) and IR extraction by cloning
(`transforms/extract.py`): what every user of lowering gets from them."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mlirtext.api import parse_and_verify
from mlirtext.ir.symbols import symbols_in
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.conversions.levels import lowering_pipeline
from mlirtext.transforms.extract import function_module, op_module
from mlirtext.transforms.lowering_service import Cancelled, LoweringStopped, lower_by_level, lower_to
from mlirtext.transforms.pass_manager import PassManager, Timing
from mlirtext.transforms.pipeline import parse_pipeline
from mlirtext.verifier import verify

MLP = (Path(__file__).resolve().parent.parent / "examples" / "mlp_stablehlo.mlir").read_text()

CALLS = """\
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x : tensor<4xf32>
  %1 = func.call @leaf(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @leaf(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.abs %x : tensor<4xf32>
  %1 = func.call @helper(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @unused() {
  return
}
"""


def module_of(text: str):
    result = parse_and_verify(text, "t.mlir")
    assert result.ok, [d.message for d in result.diagnostics]
    return result.module


def test_each_level_in_order_with_its_text_counts_passes_and_origins():
    module = module_of(MLP)
    source = module.span.source
    levels = []
    for level in lower_by_level(module):
        levels.append((level.level, level.text, level.op_counts, level.passes, level.origins))
    assert [l[0] for l in levels] == ["hlo", "tosa", "linalg", "loops", "llvm"]
    (_, hlo_text, hlo_counts, hlo_passes, _), (_, tosa_text, _, tosa_passes, tosa_origins) = levels[:2]
    assert hlo_passes == [] and hlo_counts["stablehlo"]["stablehlo.dot_general"] == 2
    assert [name for name, _ in tosa_passes][:3] == ["convert-hlo-to-tosa", "canonicalize", "cse"]
    assert all(seconds >= 0 for *_, passes, _ in levels for _, seconds in passes)
    assert not hlo_text.startswith("module") and "tosa.matmul" in tosa_text
    assert "llvm" in levels[-1][2] and "stablehlo" not in levels[-1][2]
    # Each printed op that came from a source op points at that op's text in the source.
    matmuls = [span for line, span in zip(tosa_text.split("\n"), tosa_origins) if "tosa.matmul" in line]
    assert len(matmuls) == 2 and all(span.source is source for span in matmuls)
    assert all("stablehlo.dot_general" in source.text[span.start:span.end].split("\n")[0] for span in matmuls)
    assert len(tosa_origins) == len(tosa_text.rstrip("\n").split("\n"))


def test_the_last_level_is_what_opt_lower_to_gives():
    """`opt --lower-to` runs the same steps in one pipeline: the same module comes out, and the
    instrumentations it is given see every pass."""
    for level in ("tosa", "linalg", "loops", "llvm"):
        by_service, by_pipeline = module_of(MLP), module_of(MLP)
        timing = Timing()
        assert lower_to(by_service, level, [timing]) == []
        assert not PassManager(parse_pipeline(lowering_pipeline(by_pipeline, level))).run(by_pipeline)
        assert print_module(by_service) == print_module(by_pipeline), level
        assert "(convert-hlo-to-tosa)" in timing.report()


def test_a_module_of_no_level_stays_as_it_is():
    text = "func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {\n  %0 = arith.addi %x, %x : tensor<4xi32>\n" \
           "  return %0 : tensor<4xi32>\n}\n"
    alone = list(lower_by_level(module_of(text)))
    assert [l.level for l in alone] == [None]
    shown = [(l.level, l.text, l.passes) for l in lower_by_level(module_of(text), start="linalg")]
    assert [l[0] for l in shown] == ["linalg", "loops", "llvm"]
    assert len({l[1] for l in shown}) == 1 and all(l[2] == [] for l in shown)


def test_what_cannot_be_done_is_said_before_any_work_or_names_the_op():
    module = module_of(MLP)
    lower_to(module, "loops")
    with pytest.raises(ValueError, match="the input is at the loops level, below linalg"):
        lower_by_level(module, "linalg")
    with pytest.raises(ValueError, match="unknown level 'gpu'"):
        lower_by_level(module, "gpu")
    fft = module_of("func.func @f(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
                    "  %0 = stablehlo.fft %x, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> "
                    "tensor<4xcomplex<f32>>\n  return %0 : tensor<4xcomplex<f32>>\n}\n")
    levels = lower_by_level(fft)
    assert next(levels).level == "hlo"
    with pytest.raises(LoweringStopped) as stopped:
        next(levels)
    assert stopped.value.level == "tosa" and "stablehlo.fft" in str(stopped.value)
    assert str(stopped.value).startswith("lowering to tosa stops: ")


def test_a_cancel_stops_between_passes():
    stop = threading.Event()
    levels = lower_by_level(module_of(MLP), cancelled=stop)
    assert next(levels).level == "hlo"
    stop.set()
    with pytest.raises(Cancelled):
        next(levels)


def test_a_function_is_cloned_with_what_it_needs_and_keeps_its_spans():
    module = module_of(CALLS)
    table = symbols_in(module)
    main = table["main"]
    alone, declared = function_module(main, table.get)
    assert declared == {"helper"}
    ops = alone.regions[0].blocks[0].ops
    assert [op.sym_name for op in ops] == ["helper", "main"] and not ops[0].regions[0].blocks
    assert verify(alone) == []
    assert ops[1].span is main.span and ops[1] is not main           # a clone, its span kept
    assert [op.span for op in ops[1].walk()] == [op.span for op in main.walk()]
    whole, declared = function_module(main, table.get, bodies=True)
    assert declared == set()
    assert sorted(op.sym_name for op in whole.regions[0].blocks[0].ops) == ["helper", "leaf", "main"]
    assert verify(whole) == []
    assert print_module(module) == print_module(module_of(CALLS))   # the source IR is untouched


def test_an_op_alone_takes_the_values_it_uses_as_arguments():
    """Operands, and values its regions capture from around it, become the function's arguments."""
    text = ("func.func @f(%m: memref<4xf32>, %v: f32) {\n"
            "  %c0 = arith.constant 0 : index\n  %c4 = arith.constant 4 : index\n"
            "  %c1 = arith.constant 1 : index\n"
            "  scf.for %i = %c0 to %c4 step %c1 {\n    memref.store %v, %m[%i] : memref<4xf32>\n  }\n"
            "  return\n}\n")
    module = module_of(text)
    loop = next(op for op in module.walk() if op.name == "scf.for")
    alone = op_module(loop)
    assert verify(alone) == []
    fn = alone.regions[0].blocks[0].ops[0]
    assert fn.sym_name == "scf_for"
    assert [str(a.type) for a in fn.regions[0].blocks[0].arguments] == ["index"] * 3 + ["f32", "memref<4xf32>"]
    assert [l.level for l in lower_by_level(alone)] == ["loops", "llvm"]
