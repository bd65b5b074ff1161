"""fold-dot-general-broadcasts: a dot_general operand broadcast along batch dims is contracted
unbroadcast (the batch joins the other operand's free dims), the result's order restored by a
transpose where it moves; the interpreter's numbers before and after. And ONNX's MatMul of a
rank-3 activation by a 2-D weight (a ViT's attention projection, which torch-mlir lowers as the
weight broadcast along the sequence and a batched matmul) compiled from the importer's output: one
GEMM on the micro-kernel, the broadcast weight never materialised, the numbers ONNX Runtime's."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline


def _program(x: str, w: str, broadcast: str, dims: str, out: str, batch: tuple, contract: tuple,
             weight_on_left: bool = False) -> str:
    """`%x` contracted with `%w` broadcast to `broadcast` (the lhs when `weight_on_left`)."""
    operands = [("%x", x), ("%wb", broadcast)][::-1 if weight_on_left else 1]
    return f"""func.func @main(%x: tensor<{x}xf32>, %w: tensor<{w}xf32>) -> tensor<{out}xf32> {{
  %wb = stablehlo.broadcast_in_dim %w, dims = {dims} : (tensor<{w}xf32>) -> tensor<{broadcast}xf32>
  %r = stablehlo.dot_general {operands[0][0]}, {operands[1][0]}, batching_dims = {batch[0]} x {batch[1]}, \
contracting_dims = {contract[0]} x {contract[1]} : (tensor<{operands[0][1]}xf32>, tensor<{operands[1][1]}xf32>) \
-> tensor<{out}xf32>
  return %r : tensor<{out}xf32>
}}
"""


def _fold_and_compare(text: str, shapes: list[tuple]) -> str:
    """The folded program's text, after checking it computes what `text` did."""
    module = parse_and_verify(text).module
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    before = Interpreter(module).call("main", [a.copy() for a in args])[0]
    assert not PassManager(parse_pipeline("fold-dot-general-broadcasts")).run(module)
    folded = print_module(module)
    again = parse_and_verify(folded)
    assert again.ok, [d.message for d in again.diagnostics]
    after = Interpreter(again.module).call("main", [a.copy() for a in args])[0]
    np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-5)
    return folded


def test_a_weight_broadcast_along_the_batch_becomes_one_contraction_of_all_rows():
    # ViT's attention input projection in (sequence, batch, features) layout, small
    text = _program("6x1x8", "8x12", "6x8x12", "[1, 2]", "6x1x12", ([0], [0]), ([2], [1]))
    folded = _fold_and_compare(text, [(6, 1, 8), (8, 12)])
    assert "broadcast_in_dim" not in folded and "transpose" not in folded, folded
    assert "contracting_dims = [2] x [0] : (tensor<6x1x8xf32>, tensor<8x12xf32>) -> tensor<6x1x12xf32>" in folded
    assert "batching_dims" not in folded, folded


def test_a_broadcast_lhs_puts_the_result_back_in_order_with_a_transpose():
    text = _program("3x8x5", "4x8", "3x4x8", "[1, 2]", "3x4x5", ([0], [0]), ([2], [1]), weight_on_left=True)
    folded = _fold_and_compare(text, [(3, 8, 5), (4, 8)])
    assert "broadcast_in_dim" not in folded, folded
    assert "-> tensor<4x3x5xf32>" in folded and "dims = [1, 0, 2]" in folded, folded


def test_a_broadcast_of_one_batch_dim_of_two_keeps_the_other_as_a_batch():
    # w (3x8x5, batched over dim 0 of the pair) broadcast along the first batch dim only; the
    # broadcast also reorders: w is read as its transpose (dims [1, 3, 2])
    text = _program("2x3x4x8", "3x5x8", "2x3x8x5", "[1, 3, 2]", "2x3x4x5", ([0, 1], [0, 1]), ([3], [2]))
    folded = _fold_and_compare(text, [(2, 3, 4, 8), (3, 5, 8)])
    assert "broadcast_in_dim" not in folded, folded
    assert "batching_dims = [1] x [0], contracting_dims = [3] x [2]" in folded, folded
    assert "-> tensor<3x2x4x5xf32>" in folded and "dims = [1, 0, 2, 3]" in folded, folded


@pytest.mark.parametrize("w, dims", [("1x8x12", "[0, 1, 2]"),   # a size-1 dim stretched
                                     ("8", "[1]")])             # a free dim added
def test_other_broadcasts_stay(w, dims):
    text = _program("6x1x8", w, "6x8x12", dims, "6x1x12", ([0], [0]), ([2], [1]))
    folded = _fold_and_compare(text, [(6, 1, 8), tuple(int(n) for n in w.split("x"))])
    assert "broadcast_in_dim" in folded and "batching_dims = [0] x [0]" in folded, folded


def _attention_projection(path, S: int, E: int) -> str:
    """ONNX's MatMul of x[S,1,E] by a 2-D weight plus a bias, as torch.onnx exports
    nn.MultiheadAttention's input projection in its (sequence, batch, features) layout."""
    onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(1)
    weight = (rng.standard_normal((E, 3 * E)) / np.sqrt(E)).astype(np.float32)
    bias = rng.standard_normal(3 * E).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["b", "h"], ["y"])]
    graph = helper.make_graph(nodes, "projection", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [S, 1, E])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [S, 1, 3 * E])],
                              [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return str(path)


def test_onnx_matmul_of_a_sequence_by_a_weight_is_one_gemm_on_the_micro_kernel(tmp_path):
    pytest.importorskip("torch_mlir", reason="torch-mlir is not installed (pip install 'mlirtext[onnx]')")
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime (the bench extra) is not installed")
    from mlirtext.compiler.driver import compile_source
    from mlirtext.compiler.module_writer import pack
    from mlirtext.importers.onnx import import_model
    from mlirtext.runtime import load_module
    S, E = 37, 64
    path = _attention_projection(tmp_path / "projection.onnx", S, E)
    text = import_model(path).text
    # torch-mlir's lowering: the weight broadcast along the sequence, one 1-row matmul per position
    assert f"tensor<{E}x{3 * E}xf32>) -> tensor<{S}x{E}x{3 * E}xf32>" in text, text
    compiled = compile_source(text, "projection.mlir")
    assert f"{S}x{E}x{3 * E}" not in print_module(compiled.dispatched)   # never materialised
    matmuls = [k for k in compiled.kernels.values() if "matmul" in k.get("implementation", "")]
    assert len(matmuls) == 1 and matmuls[0]["implementation"].startswith("micro-kernel"), compiled.kernels
    x = np.random.default_rng(2).standard_normal((S, 1, E)).astype(np.float32)
    got = np.asarray(load_module(pack(compiled), "local-sync").projection(x))   # (the graph's name)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert np.max(np.abs(got - want)) <= 1e-5 * np.max(np.abs(want))
