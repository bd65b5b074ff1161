"""bufferization.alloc_tensor: its custom form read and printed as MLIR does, MLIR's verifier
checks, and the interpreter's values (the memory limit: tests/test_hostile_limits.py)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.interpreter import Interpreter

TEXT = """func.func @main(%t: tensor<3xf32>, %n: index) -> (tensor<3xf32>, tensor<?x2xi32>, tensor<2xi8>) {
  %0 = bufferization.alloc_tensor() copy(%t) : tensor<3xf32>
  %1 = bufferization.alloc_tensor(%n) size_hint=%n {note = 1 : i32} : tensor<?x2xi32>
  %2 = bufferization.alloc_tensor() : tensor<2xi8>
  return %0, %1, %2 : tensor<3xf32>, tensor<?x2xi32>, tensor<2xi8>
}
"""


def parsed(text: str):
    result = parse_and_verify(text, "t.mlir")
    return result, [d.message for d in result.diagnostics if d.severity == "error"]


def test_the_custom_form_prints_as_it_reads_and_the_generic_form_reads_back():
    result, errors = parsed(TEXT)
    assert not errors
    printed = to_text(result)
    assert all(line.strip() in printed for line in TEXT.splitlines()[1:4])
    generic = to_text(result, generic=True)
    assert '"bufferization.alloc_tensor"(%t) <{operandSegmentSizes = array<i32: 0, 1, 0>}>' in generic
    again, errors = parsed(generic)
    assert not errors and to_text(again) == printed


@pytest.mark.parametrize("op, message", [
    ("bufferization.alloc_tensor(%n) copy(%t) : tensor<3xf32>", "dynamic sizes not needed when copying a tensor"),
    ("bufferization.alloc_tensor() : tensor<?x2xi32>", "expected 1 dynamic sizes"),
    ("bufferization.alloc_tensor(%n, %n) : tensor<?x2xi32>", "expected 1 dynamic sizes"),
    ('"bufferization.alloc_tensor"(%t) <{operandSegmentSizes = array<i32: 0, 1, 0>}> : (tensor<3xf32>) -> '
     "tensor<4xf32>", "expected that `copy` and return type match"),
    ('"bufferization.alloc_tensor"(%n) <{operandSegmentSizes = array<i32: 0, 2, 0>}> : (index) -> tensor<2xf32>',
     "operand count does not match the 'operandSegmentSizes' attribute"),
    ('"bufferization.alloc_tensor"() : () -> memref<2xf32>', "must be ranked tensor"),
])
def test_mlir_s_verifier_checks(op, message):
    _, errors = parsed(f"func.func @f(%t: tensor<3xf32>, %n: index) {{\n  %0 = {op}\n  return\n}}\n")
    assert any(message in e for e in errors), errors


def test_the_interpreter_allocates_zeros_or_copies():
    result, _ = parsed(TEXT)
    source = np.array([1, 2, 3], np.float32)
    copied, sized, static = Interpreter(result.module).call("main", [source, np.int64(4)])
    assert copied.tolist() == [1, 2, 3] and copied is not source
    assert sized.shape == (4, 2) and sized.dtype == np.int32 and not sized.any()
    assert static.tolist() == [0, 0] and static.dtype == np.int8
