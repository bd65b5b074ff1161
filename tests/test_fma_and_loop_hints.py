"""math.fma rounds once everywhere (interpreter, llvm.intr.fma in native code), the polynomial
approximations use it, and long generated loops carry LLVM's interleave hint."""
from __future__ import annotations

import numpy as np

from mlirtext import api
from mlirtext.interpreter import Interpreter
from mlirtext.syntax.printer import print_module
from mlirtext.targets.loop_hints import LONG_BODY, add_loop_hints
from mlirtext.targets.native import compile_module, load_module_functions
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

FMA = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                       affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%a : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32, %o: f32):
    %r = math.fma %x, %y, %z : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""

TANH = FMA.replace("math.fma %x, %y, %z", "math.tanh %x")


def parse(text: str):
    result = api.parse_and_verify(text, "kernel.mlir")
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.module


def _inputs():
    # (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the f32 product rounds the 2^-24 away (a tie, to even),
    # so mul-then-add gives 0 where one rounding keeps 2^-24.
    a = np.full(4, 1 + 2.0 ** -12, np.float32)
    c = np.full(4, -(1 + 2.0 ** -11), np.float32)
    return [a, a.copy(), c]


def test_interpreter_fma_rounds_once():
    (got,) = Interpreter(parse(FMA)).call("main", _inputs())
    assert (np.asarray(got) == np.float32(2.0 ** -24)).all()


def test_native_fma_is_llvm_intrinsic_and_agrees():
    module = parse(FMA)
    native = compile_module(module)
    assert "llvm.fma." in native.native.llvm_ir
    (got,) = load_module_functions(parse(FMA))["main"](*_inputs())
    assert (np.asarray(got) == np.float32(2.0 ** -24)).all()


def test_polynomial_approximation_emits_fma():
    module = parse(TANH)
    assert not PassManager(parse_pipeline("math-polynomial-approximation")).run(module)
    text = print_module(module)
    assert "math.fma" in text and "math.tanh" not in text


def _function(body_lines: int, nested: bool = False) -> str:
    body = "\n".join(f"  %v{i} = fadd float %x, 1.0" for i in range(body_lines))
    inner = f"""inner:
{body}
  br label %inner""" if nested else ""
    return f"""define void @k(float %x) {{
entry:
  br label %loop
loop:
{body}
{inner}
  br label %loop
exit:
  ret void
}}
"""


def test_only_long_innermost_loops_get_the_hint():
    short = _function(LONG_BODY - 1)
    assert add_loop_hints(short) == short
    long = add_loop_hints(_function(LONG_BODY))
    assert "br label %loop, !llvm.loop !0" in long
    assert '!1 = !{!"llvm.loop.interleave.count", i32 2}' in long and "!0 = distinct !{!0, !1}" in long
    nested = add_loop_hints(_function(LONG_BODY, nested=True))
    assert "br label %inner, !llvm.loop" in nested and "br label %loop\n" in nested


def test_hint_numbers_after_existing_metadata():
    text = _function(LONG_BODY) + '!0 = !{!"x"}\n'
    assert "!llvm.loop !1" in add_loop_hints(text)



def _counted(bound: int, body_lines: int = 3) -> str:
    """A loop as the llvm dialect's translation writes one: its header compares the index with the bound."""
    return _function(body_lines).replace("loop:\n", f"loop:\n  %done = icmp slt i64 %i, {bound}\n", 1)


def test_short_loops_are_kept_rolled():
    """An innermost loop of 16-64 iterations gets unroll.disable (LLVM would unroll it whole and
    vectorise the loop around it with gathers); shorter and longer ones are left alone, and a
    short loop with a long body gets both hints."""
    hinted = add_loop_hints(_counted(32))
    assert "br label %loop, !llvm.loop !0" in hinted
    assert "!0 = distinct !{!0, !1}" in hinted and '!1 = !{!"llvm.loop.unroll.disable"}' in hinted
    for bound in (8, 1024):
        assert add_loop_hints(_counted(bound)) == _counted(bound)
    both = add_loop_hints(_counted(64, LONG_BODY))
    assert "!0 = distinct !{!0, !1, !2}" in both
    assert '!"llvm.loop.interleave.count", i32 2' in both and '!"llvm.loop.unroll.disable"' in both
