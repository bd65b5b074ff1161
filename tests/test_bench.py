"""`mlirtext bench`: the deployment table, its JSON and HTML forms, output checks against the
baseline (an injected faulty device is a mismatch, never a speed), progress and clear errors."""
from __future__ import annotations

import contextlib
import io
import json
import sys
import types
from html.parser import HTMLParser

import numpy as np
import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.bench import iree
from mlirtext.bench.blas_threads import blas_threads, one_blas_thread
from mlirtext.bench.compare import compare_outputs
from mlirtext.bench.measure import Settings, run_bench
from mlirtext.bench.progress import Progress
from mlirtext.bench.rows import BASELINE, MISMATCH, OK
from mlirtext.bench.table import COLUMNS, format_report, report_json
from mlirtext.cli import main
from mlirtext.transforms.conversions.mhlo_to_stablehlo import mhlo_to_stablehlo

PROGRAM = """
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.tanh %0 : tensor<4x8xf32>
  %2 = stablehlo.add %1, %x : tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
"""

TWO_FUNCTIONS = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

# The CPU targets and devices (the same on every machine), few rounds.
FAST = ["--rounds=2", "--warmup=1", "--no-progress", "--targets=reference,llvm-cpu",
        "--devices=reference,local-sync,local-task"]


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    # A name with markup in it: the page must escape it.
    path = tmp_path_factory.mktemp("bench") / "small<b>.mlir"
    path.write_text(PROGRAM)
    return str(path)


@pytest.fixture(scope="module")
def json_and_html(program, tmp_path_factory):
    page = tmp_path_factory.mktemp("page") / "report.html"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["bench", program, "--json", f"--html={page}", *FAST])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue()), page.read_text()


def test_table_has_every_column_and_compares_outputs(program, capsys):
    assert main(["bench", program, *FAST]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("target / device"))
    for column in COLUMNS:
        assert column in header
    lines = out.splitlines()
    body = lines[lines.index(header) + 2:]
    body = body[:body.index("")]          # the table ends at the first empty line
    rows = {line.split("  ")[0].strip(): line for line in body}
    assert set(rows) == {"reference / reference", "llvm-cpu / local-sync", "llvm-cpu / local-task"}
    assert rows["reference / reference"].rstrip().endswith("baseline")
    for label in ("llvm-cpu / local-sync", "llvm-cpu / local-task"):
        assert "match (max error" in rows[label] and rows[label].count(" ms") + rows[label].count(" us") >= 4
    assert "outputs compared with the baseline" in out
    assert "warm-up" in out and "2 rounds, interleaved" in out and "inputs already staged" in out
    assert "memory plan" in out


def test_json_has_the_figures(json_and_html):
    data, _ = json_and_html
    assert data["function"] == "main" and data["inputs"] == ["tensor<4x8xf32>", "tensor<8x8xf32>"]
    assert data["baseline"] == {"target": "reference", "device": "reference"}
    assert data["method"]["rounds"] == 2 and data["method"]["warmup_calls"] == 1 and data["method"]["interleaved"]
    rows = {(r["target"], r["device"]): r for r in data["rows"]}
    assert rows[("reference", "reference")]["status"] == BASELINE
    assert rows[("reference", "reference")]["speedup"] == 1.0
    for key in (("llvm-cpu", "local-sync"), ("llvm-cpu", "local-task")):
        r = rows[key]
        assert r["status"] == OK and r["outputs_compared"] and r["max_error"] < 1e-4
        assert r["artifact_bytes"] > rows[("reference", "reference")]["artifact_bytes"]  # native code inside
        assert r["compile_s"] > 0 and r["load_s"] > 0 and r["first_call_s"] > 0
        assert 0 < r["median_s"] <= r["p90_s"] and r["speedup"] > 0 and r["samples"] >= 2
        assert r["peak_bytes"] >= 4 * 8 * 4   # at least the result buffer
    phases = data["compile_phases"]
    assert {"parse + verify", "dispatch formation", "llvm codegen"} <= set(phases["llvm-cpu"])
    assert "llvm codegen" not in phases["reference"]


class _Sections(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tags, self.text = set(), [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.ids.update(v for k, v in attrs if k == "id")
        assert not (tag == "script" or any(k in ("src", "href") for k, _ in attrs)), "the page fetches nothing"

    def handle_data(self, data):
        self.text.append(data)


def test_html_page_has_its_sections(json_and_html):
    _, page = json_and_html
    parsed = _Sections()
    parsed.feed(page)
    assert {"summary", "charts", "graph", "journey", "passes", "dispatches", "module", "method"} <= parsed.ids
    assert {"level-hlo", "level-tosa", "level-linalg", "level-loops", "level-llvm", "level-llvm-ir"} <= parsed.ids
    assert parsed.tags.count("svg") >= 5 and "style" in parsed.tags
    text = "".join(parsed.text)
    assert "stablehlo.dot_general" in text and "llvm.func" in text and "define " in text   # the levels' text
    assert "convert-hlo-to-tosa" in text          # a pass with its time
    assert "@main_dispatch_0" in text and "became" in text and "llvm-cpu: @main, " in text   # per target
    assert "prefers-color-scheme: dark" in page
    assert "small<b>.mlir" in text and "small<b>" not in page and "small&lt;b&gt;" in page   # escaped


def _perturb(row, call):
    """A faulty device: right shapes, wrong numbers."""
    if row.device != "local-sync":
        return call

    def wrong(*args):
        return [np.asarray(a) + np.float32(0.5) for a in call(*args)]
    return wrong


def test_a_device_that_differs_is_a_mismatch_without_a_speed():
    settings = Settings(["llvm-cpu", "reference"], ["reference", "local-sync", "local-task"], rounds=2, warmup=1)
    report = run_bench(PROGRAM, "small.mlir", settings, wrap_device=_perturb)
    rows = {r.label: r for r in report.rows}
    bad = rows["llvm-cpu / local-sync"]
    assert bad.status == MISMATCH and bad.agreement.max_error == pytest.approx(0.5, rel=1e-3)
    assert bad.median_s is None and bad.speedup is None and bad.rounds == []
    assert rows["llvm-cpu / local-task"].status == OK and rows["llvm-cpu / local-task"].speedup is not None
    line = next(l for l in format_report(report).splitlines() if l.startswith("llvm-cpu / local-sync"))
    assert "MISMATCH: max error 0.5" in line and "x  " not in line.split("MISMATCH")[0]
    data = {(r["target"], r["device"]): r for r in report_json(report)["rows"]}
    assert data[("llvm-cpu", "local-sync")]["median_s"] is None and data[("llvm-cpu", "local-sync")]["speedup"] is None


def test_a_device_that_breaks_is_a_failed_row():
    def broken(row, call):
        if row.device != "local-task":
            return call

        def fail(*args):
            raise RuntimeError("device lost")
        return fail
    settings = Settings(["llvm-cpu"], ["local-sync", "local-task"], rounds=2, warmup=1)
    rows = {r.label: r for r in run_bench(PROGRAM, "small.mlir", settings, wrap_device=broken).rows}
    assert rows["llvm-cpu / local-task"].status == "failed"
    assert "device lost" in rows["llvm-cpu / local-task"].message and rows["llvm-cpu / local-task"].speedup is None
    assert rows["llvm-cpu / local-sync"].status == OK


def test_the_command_fails_on_a_mismatch(program, monkeypatch, capsys):
    from mlirtext.bench.measure import run_bench
    from mlirtext.cli import bench as command
    monkeypatch.setattr(command, "run_bench", lambda *a, **k: run_bench(*a, **k, wrap_device=_perturb))
    assert main(["bench", *FAST, program, "--devices=local-sync"]) == 1
    captured = capsys.readouterr()
    assert "MISMATCH" in captured.out and "llvm-cpu / local-sync: mismatch" in captured.err


@pytest.mark.parametrize("args,message", [
    (["missing.mlir"], "could not open input file 'missing.mlir'"),
    (["@bad"], "bad.mlir:2:8: error: unexpected 'stablehlo.bogus'"),
    (["@two"], "--function is needed: the module exports 2 functions (@f, @g)"),
    (["@two", "--function=h"], "no exported function @h"),
    (["@prog", "--input=4x8xf32=1"], "takes 2 argument(s)"),
    (["@prog", "--input=4x8xf32=1", "--input=3xf32=1"], "--input #1"),
    (["@prog", "--targets=llvm-gpu"], "unknown target 'llvm-gpu'"),
    (["@prog", "--devices=tpu"], "unknown device 'tpu'"),
    (["@prog", "--rounds=0"], "--rounds must be at least 1"),
])
def test_bad_requests_are_clear(args, message, program, tmp_path, capsys):
    files = {"@bad": "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %0 = stablehlo.bogus %x : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n",
             "@two": TWO_FUNCTIONS}
    resolved = []
    for a in args:
        if a in files:
            path = tmp_path / f"{a[1:]}.mlir"
            path.write_text(files[a])
            a = str(path)
        resolved.append(program if a == "@prog" else a)
    assert main(["bench", *FAST, *resolved]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_target_no_requested_device_runs_is_reported_not_run(program, capsys):
    assert main(["bench", *FAST, program, "--devices=reference", "--json"]) == 0
    rows = {r["target"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    native = rows["llvm-cpu"]
    assert native["device"] == "-" and native["status"] == "not run" and native["artifact_bytes"] > 0
    assert "local-task, local-sync" in native["message"] and native["median_s"] is None


def test_given_inputs_are_used(program, capsys):
    assert main(["bench", program, "--input=4x8xf32=0", "--input=8x8xf32=0", "--json", *FAST]) == 0
    data = json.loads(capsys.readouterr().out)
    assert all(r["status"] in (BASELINE, OK) for r in data["rows"])


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere():
    class Terminal(io.StringIO):
        def isatty(self):
            return True
    for stream, expect in ((Terminal(), "\r\x1b[2K["), (io.StringIO(), "bench [1/3] compiling\n")):
        p = Progress(stream)
        p.add(3)
        p.step("compiling")
        p.step("loading")
        p.close()
        assert expect in stream.getvalue()
    assert "\r" not in stream.getvalue()


def test_output_comparison_rules():
    a = np.array([1.0, 2.0, np.nan], np.float32)
    assert compare_outputs([a + np.float32(1e-5)], [a]).ok
    assert not compare_outputs([a + np.float32(0.01)], [a]).ok
    assert compare_outputs([np.array([1.0, 2.0, 3.0], np.float32)], [a]).why.startswith("result 0 has NaN")
    assert not compare_outputs([np.zeros(3, np.float32)], [np.zeros(4, np.float32)]).ok
    assert not compare_outputs([np.array([1, 2], np.int32)], [np.array([1, 3], np.int32)]).ok
    assert compare_outputs([np.array([np.inf], np.float32)], [np.array([np.inf], np.float32)]).ok


def test_compare_iree_without_iree_is_a_clear_error(program, monkeypatch, capsys):
    monkeypatch.setattr(iree, "available", lambda: "the IREE runtime is not installed (pip install iree-base-runtime)")
    assert main(["bench", program, "--compare-iree", *FAST]) == 1
    assert "--compare-iree: the IREE runtime is not installed" in capsys.readouterr().err


@pytest.mark.skipif(iree.available() is not None, reason="IREE is not installed")
def test_compare_iree_adds_its_rows(program, capsys):
    assert main(["bench", *FAST, program, "--compare-iree", "--devices=local-sync", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "iree-compile as a process" in data["method"]["text"]
    rows = {(r["target"], r["device"]): r for r in data["rows"]}
    r = rows[("iree llvm-cpu", "local-sync")]
    assert r["status"] == OK and r["outputs_compared"] and r["median_s"] > 0 and r["artifact_bytes"] > 0
    assert r["peak_bytes"] is None


MHLO_PROGRAM = """
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = "mhlo.dot_general"(%x, %w) {dot_dimension_numbers = #mhlo.dot<lhs_contracting_dimensions = [1],
       rhs_contracting_dimensions = [0]>} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = "mhlo.broadcast_in_dim"(%x) {broadcast_dimensions = dense<[0, 1]> : tensor<2xi64>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = mhlo.compare GT, %0, %1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  %3 = mhlo.select %2, %0, %1 : tensor<4x8xi1>, tensor<4x8xf32>
  %4 = "mhlo.erf"(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %4 : tensor<4x8xf32>
}
"""


def test_the_baseline_runs_with_one_blas_thread(program):
    before = blas_threads()
    with one_blas_thread() as how:
        inside = blas_threads()
    assert blas_threads() == before
    seen = []

    def record(row, call):
        def wrapped(*args):
            seen.extend(blas_threads())
            return call(*args)
        return wrapped
    report = run_bench(open(program).read(), program, Settings(targets=["reference"], devices=["reference"],
                                                               rounds=1, warmup=0), wrap_device=record)
    if before:   # OpenBLAS is loaded (numpy's wheels): it is held to one thread, then given back
        assert set(inside) == {1} and set(seen) == {1}
        assert "1 BLAS thread" in how and "1 BLAS thread" in report.method
    else:        # another BLAS and no threadpoolctl: the report says the threads were not limited
        assert "BLAS" in report.method


def test_mhlo_is_converted_to_stablehlo_for_iree():
    result = parse_and_verify(MHLO_PROGRAM)
    assert result.ok and mhlo_to_stablehlo(result.module) == []
    text = to_text(result)
    assert "mhlo" not in text and "stablehlo.dot_general" in text and "chlo.erf" in text
    assert "dims = [0, 1]" in text and "stablehlo.compare GT" in text
    fusion = parse_and_verify('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
                              '  %0 = "mhlo.copy"(%x) : (tensor<2xf32>) -> tensor<2xf32>\n'
                              '  return %0 : tensor<2xf32>\n}\n')
    assert [d.message for d in mhlo_to_stablehlo(fusion.module)] == ["'mhlo.copy' has no StableHLO form"]


@pytest.mark.skipif(iree.available() is not None, reason="IREE is not installed")
def test_compare_iree_runs_an_mhlo_module(tmp_path, capsys):
    path = tmp_path / "mhlo.mlir"
    path.write_text(MHLO_PROGRAM)
    assert main(["bench", *FAST, str(path), "--compare-iree", "--devices=local-sync", "--json"]) == 0
    rows = {(r["target"], r["device"]): r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert rows[("iree llvm-cpu", "local-sync")]["status"] == OK


def test_threadpoolctl_when_installed_holds_blas_to_one_thread(monkeypatch):
    calls = []

    @contextlib.contextmanager
    def threadpool_limits(limits, user_api):
        calls.append(("enter", limits, user_api))
        yield
        calls.append(("exit",))
    monkeypatch.setitem(sys.modules, "threadpoolctl", types.SimpleNamespace(threadpool_limits=threadpool_limits))
    with one_blas_thread() as how:
        assert calls == [("enter", 1, "blas")]
    assert calls[-1] == ("exit",) and how == "numpy with 1 BLAS thread (threadpoolctl)"


def _onnx_sub_matmul(path) -> str:
    """An ONNX graph (x - y) @ w with w an initializer: two inputs whose order matters."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, "w")
    graph = helper.make_graph(
        [helper.make_node("Sub", ["x", "y"], ["d"]), helper.make_node("MatMul", ["d", "w"], ["out"])], "sub_matmul",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 4]) for n in ("x", "y")],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return str(path)


@pytest.mark.skipif(iree.available() is not None, reason="IREE is not installed")
def test_iree_compiles_onnx_with_its_own_importer(tmp_path):
    path = _onnx_sub_matmul(tmp_path / "m.onnx")
    vmfb, seconds, entry = iree.iree_compile_onnx(path)
    assert entry == "sub_matmul" and seconds > 0   # named after the graph, read from the import
    x, y = np.ones((2, 4), np.float32), np.arange(8, dtype=np.float32).reshape(2, 4)
    (out,) = iree.iree_function(vmfb, driver="local-sync", name=entry)(x, y)
    np.testing.assert_allclose(out, (x - y) @ (np.arange(12, dtype=np.float32).reshape(4, 3) / 10), rtol=1e-5)


@pytest.mark.skipif(iree.available() is not None, reason="IREE is not installed")
def test_iree_onnx_importer_refusing_a_file_is_one_line(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a protobuf")
    with pytest.raises(iree.IreeUnavailable) as e:
        iree.iree_compile_onnx(str(bad))
    assert str(e.value).startswith("iree-import-onnx refused the model") and "\n" not in str(e.value)
