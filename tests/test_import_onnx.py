"""`mlirtext import onnx` through torch-mlir, its messages, and the ONNX conformance suite
(`mlirtext sweep onnx`, mlirtext/sweeps/onnx_suite.py) on a few of the ONNX node tests."""
from __future__ import annotations

import os

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed (pip install 'mlirtext[onnx]'; "
                                          "make import-deps installs it, as CI does)")
pytest.importorskip("torch_mlir", reason="torch-mlir is not installed (pip install 'mlirtext[onnx]')")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from mlirtext.cli import main  # noqa: E402
from mlirtext.importers.common import ImportFailed, parse_imported  # noqa: E402
from mlirtext.importers.onnx import convert, import_model  # noqa: E402
from mlirtext.interpreter import Interpreter  # noqa: E402
from mlirtext.sweeps import onnx_suite  # noqa: E402
from mlirtext.sweeps.runner import SweepOptions, run_test  # noqa: E402
from tests import onnx_status  # noqa: E402

W = np.arange(12, dtype=np.float32).reshape(4, 3) / 10 - 0.5
B = np.array([0.5, -1.0, 0.25], np.float32)


def _dense_relu(path):
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="dense"),
             helper.make_node("Relu", ["h"], ["y"], name="activation")]
    graph = helper.make_graph(nodes, "dense_relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return str(path)


@pytest.mark.parametrize("to", ["stablehlo", "tosa", "linalg"])
def test_a_model_imports_at_each_level_and_computes_what_onnx_means(tmp_path, to):
    imported = import_model(_dense_relu(tmp_path / "m.onnx"), to=to)
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    got = Interpreter(imported.module).call("dense_relu", [x])[0]
    np.testing.assert_allclose(got, np.maximum(x @ W + B, 0), rtol=1e-6, atol=1e-6)


def test_the_command_writes_stablehlo(tmp_path):
    out = tmp_path / "m.mlir"
    assert main(["import", "onnx", _dense_relu(tmp_path / "m.onnx"), "-o", str(out)]) == 0
    assert "stablehlo.dot_general" in out.read_text() or "stablehlo.dot" in out.read_text()


def test_an_op_torch_mlir_cannot_convert_is_named_with_its_node(tmp_path):
    model = onnx.load(os.path.join(onnx_suite.node_tests_dir(), "test_affine_grid_2d", "model.onnx"))
    for node in model.graph.node:
        node.name = "grid_" + node.op_type
    onnx.save(model, tmp_path / "grid.onnx")
    with pytest.raises(ImportFailed, match=r'the ONNX op AffineGrid at loc\("grid_AffineGrid"\) has no conversion '
                                           r'to stablehlo'):
        import_model(str(tmp_path / "grid.onnx"))


@pytest.mark.parametrize("content, message", [
    (None, "cannot read ONNX model"), (b"not a protobuf at all", "cannot read ONNX model")])
def test_unreadable_model_files_are_one_clear_error(tmp_path, capsys, content, message):
    path = tmp_path / "bad.onnx"
    if content is not None:
        path.write_bytes(content)
    assert main(["import", "onnx", str(path)]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_crash_inside_torch_mlir_is_an_error_not_the_end_of_the_process(capsys):
    # torch-mlir 20261001 dies with SIGSEGV on this node test (torch-mlir-opt does too).
    model = os.path.join(onnx_suite.node_tests_dir(), "test_averagepool_3d_default", "model.onnx")
    assert main(["import", "onnx", model]) == 1
    assert "torch-mlir crashed (SIGSEGV) converting" in capsys.readouterr().err


def _statuses(test, devices=onnx_suite.DEVICES):
    results = onnx_suite.run(test, SweepOptions("onnx", devices=devices))
    return {r.test: r.status for r in results}, results


def test_the_conformance_suite_converts_runs_and_compares_node_tests():
    statuses, _ = _statuses("test_add_bcast")
    assert statuses == {"test_add_bcast [reference]": "pass", "test_add_bcast [local-task]": "pass"}
    statuses, results = _statuses("test_affine_grid_2d", ("reference",))
    # AffineGrid is an ONNX function; its body's If (on a value known only at run time) is not converted.
    assert statuses == {"test_affine_grid_2d [reference]": "fail-compile"}
    assert not results[0].details["converted"]
    assert "expanded and constants folded: the ONNX op If" in results[0].error


def test_inputs_bound_as_constants_give_torch_mlir_the_static_shape_it_needs(tmp_path):
    root = onnx_suite.node_tests_dir()
    model = os.path.join(root, "test_reduce_l1_keep_dims_example", "model.onnx")   # ReduceL1(data, axes)
    with pytest.raises(ImportFailed, match="sum.dim_IntList"):   # the axes are a runtime input
        convert(model)
    imported = parse_imported(convert(model, constants={"axes": np.array([2])}), "m")
    data = np.arange(12, dtype=np.float32).reshape(3, 2, 2) - 6
    got = Interpreter(imported.module).call("test_reduce_l1_keep_dims_example", [data])[0]
    np.testing.assert_array_equal(got, np.abs(data).sum(axis=2, keepdims=True))
    with pytest.raises(ImportFailed, match="the model has no input named 'axis' \\(its inputs: data, axes\\)"):
        convert(model, constants={"axis": np.array([2])})


def test_the_suite_binds_shape_inputs_only_when_torch_mlir_needs_them():
    statuses, results = _statuses("test_top_k", ("reference",))   # TopK(X, K)
    assert results[0].details == {"converted": True, "bound": "k"} and results[0].status == "pass"
    assert "of which 1 only with their scalar and integer-vector inputs" in onnx_status.summary(results, ("reference",))
    statuses, results = _statuses("test_gather_0", ("reference",))   # indices: an input
    assert results[0].details == {"converted": True, "bound": ""} and results[0].status == "pass"


def test_low_precision_floats_are_compared_as_values_nan_included():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    want = [np.array([np.nan, 448, 0.5], ml_dtypes.float8_e4m3fn)]
    match = onnx_suite.outputs_match
    assert match([np.array([np.nan, 448, 0.5], ml_dtypes.float8_e4m3fn)], want) == ("", None)
    assert match([np.array([np.nan, np.nan, 0.5], ml_dtypes.float8_e4m3fn)], want)[0] == \
        "result 0: 1 elements differ, max abs error nan"
    assert match([np.array([np.nan, 1, 2], ml_dtypes.bfloat16)],   # one bf16 ulp apart
                 [np.array([np.nan, 1, 2.015625], ml_dtypes.bfloat16)]) == \
        ("result 0: 1 elements differ, max abs error 0.0156", 0.015625)


def test_a_sweep_task_reports_a_wrong_result_a_test_over_its_time_limit_and_a_crash():
    want = [np.array([1.0, 2.0], np.float32)]
    assert onnx_suite.outputs_match([np.array([1.0, 2.0001], np.float32)], want) == ("", None)
    assert onnx_suite.outputs_match([np.array([1.0, 2.5], np.float32)], want) == \
        ("result 0: 1 elements differ, max abs error 0.5", 0.5)
    assert "shape" in onnx_suite.outputs_match([np.zeros(3, np.float32)], want)[0]
    # The Ray task's body, called here: the test runs in a child process held to the limit.
    (over,) = run_test("test_abs", SweepOptions("onnx", devices=("reference",), time_limit=0.01))
    assert over["status"] == "timeout" and over["error"] == "over the 0.01 s time limit"
    assert over["test"] == "test_abs [reference]"
    (crash,) = run_test("test_averagepool_3d_default", SweepOptions("onnx", devices=("reference",)))
    assert crash["status"] == "crash" and crash["error"] == "killed by signal SIGSEGV"   # torch-mlir segfaults


def _save(tmp_path, nodes, inputs, outputs, opset, initializers=()):
    graph = helper.make_graph(nodes, "m", inputs, outputs, list(initializers))
    path = str(tmp_path / "m.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def _run(path, *args):
    module = parse_imported(convert(path), "m").module
    return Interpreter(module).call("m", list(args))


def test_an_op_torch_mlir_cannot_convert_is_imported_as_the_onnx_function_that_defines_it(tmp_path):
    # torch-mlir has no conversion for RMSNormalization (opset 23); ONNX defines it as a function
    # whose reduction axes come from Range(axis, Size(Shape(X))), folded to a constant.
    path = _save(tmp_path, [helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=-1, epsilon=1e-5)],
                 [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
                  helper.make_tensor_value_info("scale", TensorProto.FLOAT, [4])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])], 23)
    x = np.linspace(-2, 3, 24, dtype=np.float32).reshape(2, 3, 4)
    scale = np.array([1, 0.5, -2, 3], np.float32)
    want = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5) * scale
    np.testing.assert_allclose(_run(path, x, scale)[0], want, rtol=1e-5, atol=1e-6)


def test_function_ops_inside_function_bodies_are_expanded_too(tmp_path):
    # SoftmaxCrossEntropyLoss's body uses NegativeLogLikelihoodLoss, which torch-mlir converts
    # to an op it cannot lower to StableHLO; both are expanded.
    path = _save(tmp_path, [helper.make_node("SoftmaxCrossEntropyLoss", ["scores", "labels"], ["loss"],
                                             reduction="mean")],
                 [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [3, 5]),
                  helper.make_tensor_value_info("labels", TensorProto.INT64, [3])],
                 [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], 13)
    scores = np.arange(15, dtype=np.float32).reshape(3, 5) / 7 - 1
    labels = np.array([4, 0, 2], np.int64)
    log_p = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(_run(path, scores, labels)[0], -log_p[np.arange(3), labels].mean(), rtol=1e-5)


def test_shape_computations_in_the_graph_are_folded_to_the_constants_stablehlo_needs(tmp_path):
    # ReduceSum over axes Range(1, Size(Shape(x))): the trailing axes, computed in the graph.
    nodes = [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Size", ["shape"], ["rank"]),
             helper.make_node("Range", ["one", "rank", "one"], ["axes"]),
             helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)]
    path = _save(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], 18,
                 [numpy_helper.from_array(np.array(1, np.int64), "one")])
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(_run(path, x)[0], x.sum(axis=(1, 2)))


def test_folding_keeps_inputs_overridable_initializers_and_random_ops_as_they_are():
    from mlirtext.importers.onnx_graph import fold_constants
    nodes = [helper.make_node("Add", ["c", "c"], ["twice_c"]), helper.make_node("Add", ["d", "d"], ["twice_d"]),
             helper.make_node("RandomUniform", [], ["noise"], shape=[2], seed=1.0)]
    # "d" is an initializer and a graph input: a default the caller may replace, so not a constant.
    initializers = [numpy_helper.from_array(np.array([1, 2], np.int64), "c"),
                    numpy_helper.from_array(np.array([3], np.int64), "d")]
    outputs = [helper.make_tensor_value_info(n, TensorProto.INT64, None) for n in ("twice_c", "twice_d")]
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("d", TensorProto.INT64, [1])],
                              outputs + [helper.make_tensor_value_info("noise", TensorProto.FLOAT, [2])], initializers)
    folded = fold_constants(onnx, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]))
    assert [n.op_type for n in folded.graph.node] == ["Constant", "Add", "RandomUniform"]
    np.testing.assert_array_equal(numpy_helper.to_array(folded.graph.node[0].attribute[0].t), [2, 4])


def test_a_model_the_rewrite_does_not_help_names_what_torch_mlir_left_and_what_the_rewrite_left():
    # ReduceL1 with its axes a graph input: no function of it converts without them.
    model = os.path.join(onnx_suite.node_tests_dir(), "test_reduce_l1_keep_dims_example", "model.onnx")
    with pytest.raises(ImportFailed, match="(?s)sum.dim_IntList.*and with function ops expanded and constants "
                                           "folded: failed to legalize operation 'torch.aten.sum.dim_IntList'"):
        convert(model)
