"""The pieces of `mlirtext sweep` that need no Ray: a test body in a child process held to its time and
memory limits, expected-status files and the comparison with them, the results database and `sweep
report` (text and HTML), and the command's one-line errors. (tests/test_sweep_cluster.py runs sweeps
on a real Ray cluster.)"""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from mlirtext.cli import main
from mlirtext.sweeps import expectations, report, store
from mlirtext.sweeps.isolation import Isolated, run_isolated
from mlirtext.sweeps.lowering_suite import Outcome, level_statuses
from mlirtext.sweeps.results import Result, better, worse


def _sleep(seconds):
    time.sleep(seconds)
    return "slept"


def _abort():
    os.abort()


def _allocate(mb):
    return np.ones(mb << 18, np.float32).sum()   # mb MiB of floats


def _fail():
    raise KeyError("no such op")


def test_a_test_body_runs_in_a_child_held_to_its_time_and_memory_limits():
    assert run_isolated(_sleep, (0.01,), 30, 512) == "slept"
    with pytest.raises(Isolated) as over:
        run_isolated(_sleep, (60,), 0.5, 512)
    assert (over.value.status, over.value.why) == ("timeout", "over the 0.5 s time limit")
    with pytest.raises(Isolated) as crash:
        run_isolated(_abort, (), 30, 512)
    assert (crash.value.status, crash.value.why) == ("crash", "killed by signal SIGABRT")
    assert run_isolated(_allocate, (64,), 30, 512) == 64 << 18
    with pytest.raises(Isolated) as big:       # 2 GiB asked within a 512 MiB allowance
        run_isolated(_allocate, (2048,), 30, 512)
    assert big.value.status == "crash" and "MemoryError" in big.value.why
    with pytest.raises(Isolated, match="internal error: KeyError: 'no such op'"):
        run_isolated(_fail, (), 30, 512)


def test_statuses_rank_and_a_skip_compares_only_with_a_skip():
    assert worse("mismatch", "pass") and worse("timeout", "fail-run") and not worse("pass", "mismatch")
    assert better("pass", "fail-compile") and not better("crash", "fail-compile")
    assert worse("skip", "pass") and not worse("pass", "skip") and not better("pass", "skip")


RESULTS = [Result("a [ref]", "pass"), Result("b [ref]", "mismatch", "result 0: 1 elements differ", 0.5),
           Result("c [ref]", "fail-compile", "torch-mlir: no"), Result("d [ref]", "pass")]


@pytest.mark.parametrize("name", ["expected.json", "expected.tsv"])
def test_expected_files_round_trip_and_the_comparison_names_tests(tmp_path, name):
    path = str(tmp_path / name)
    with open(path, "w") as f:
        f.write(expectations.dumps(path, "onnx", RESULTS))
    table = expectations.read(path)
    assert table == {"a [ref]": ("pass", ""), "b [ref]": ("mismatch", "result 0: 1 elements differ"),
                     "c [ref]": ("fail-compile", "torch-mlir: no"), "d [ref]": ("pass", "")}
    now = [Result("a [ref]", "fail-run", "VMError: boom"), Result("b [ref]", "pass"),
           Result("c [ref]", "fail-compile"), Result("e [ref]", "pass")]
    c = expectations.compare(now, table)
    assert [(r.test, status) for r, status, _ in c.worse] == [("a [ref]", "pass")]
    assert [(r.test, status) for r, status in c.better] == [("b [ref]", "mismatch")]
    assert [r.test for r in c.new] == ["e [ref]"] and not c.ok
    text = expectations.describe(c, path)
    assert f"1 tests worse than expected ({path}):\n  a [ref]: fail-run (expected pass): VMError: boom" in text
    assert "b [ref]: pass (expected mismatch)" in text


def test_a_whole_file_timeout_stands_for_each_of_its_functions():
    expected = {"f.mlir@one": ("pass", ""), "f.mlir@two": ("mismatch", ""), "g.mlir@one": ("pass", "")}
    c = expectations.compare([Result("f.mlir@<file>", "timeout", "over the 1 s time limit")], expected)
    assert sorted(r.test for r, _, _ in c.worse) == ["f.mlir@one", "f.mlir@two"]


def test_a_function_that_stops_a_level_earlier_is_worse_than_expected_at_that_level():
    stopped = Outcome("f.mlir", "f", reached="tosa", stopped_by="failed to legalize 'tosa.fft2d' to linalg")
    assert level_statuses(stopped) == [
        ("tosa", "pass", ""), *[(level, "fail-compile", "stops after tosa: failed to legalize 'tosa.fft2d' to linalg")
                                for level in ("linalg", "loops", "llvm")]]
    wrong = Outcome("f.mlir", "f", reached="linalg", stopped_by="loops: wrong result: element [0]: got 1, expected 2")
    assert [s for _, s, _ in level_statuses(wrong)] == ["pass", "pass", "mismatch", "mismatch"]
    assert {s for _, s, _ in level_statuses(Outcome("f.mlir", "f", stopped_by="source: run: boom"))} == {"skip"}
    expected = {f"f.mlir@f [{level}]": ("pass", "") for level in ("tosa", "linalg", "loops", "llvm")}
    now = [Result(f"f.mlir@f [{level}]", status, why) for level, status, why in level_statuses(stopped)]
    assert [r.test for r, _, _ in expectations.compare(now, expected).worse] == [
        "f.mlir@f [linalg]", "f.mlir@f [llvm]", "f.mlir@f [loops]"]


def test_a_corpus_sweep_whose_files_match_nothing_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "CASES.tsv").write_text("")
    (tmp_path / "stablehlo").mkdir()
    (tmp_path / "stablehlo" / "stablehlo__tests__interpret__add.mlir").write_text("")
    assert main(["sweep", "lowering", "--corpus", str(tmp_path), "--files", "iree/*", "--no-progress",
                 "--db", str(tmp_path / "db.sqlite")]) == 1
    assert capsys.readouterr().err == "mlirtext sweep: error: no corpus file matches --files iree/*\n"


def test_a_bad_expected_file_is_a_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("test_abs [reference]\tpassed\n")
    assert main(["sweep", "onnx", "--expect", str(bad), "--db", str(tmp_path / "db.sqlite")]) == 1
    assert capsys.readouterr().err == (f"mlirtext sweep: error: {bad}: test 'test_abs [reference]': unknown status "
                                       "'passed' (one of pass, mismatch, fail-run, fail-compile, timeout, crash, skip)\n")
    assert main(["sweep", "nowhere", "--db", str(tmp_path / "db.sqlite")]) == 1
    assert "unknown suite 'nowhere'" in capsys.readouterr().err
    assert main(["sweep", "gpu", "--targets", "cuda,metal", "--db", str(tmp_path / "db.sqlite")]) == 1
    assert capsys.readouterr().err == ("mlirtext sweep: error: unknown GPU target 'metal' (known: cuda, rocm, "
                                       "vulkan-spirv, opencl-spirv)\n")
    assert main(["sweep", "vm", "--targets", "cuda", "--db", str(tmp_path / "db.sqlite")]) == 1
    assert capsys.readouterr().err == "mlirtext sweep: error: --targets is for the gpu suite\n"


def test_the_report_shows_new_failures_fixes_slowdowns_and_the_best_ever(tmp_path, capsys):
    db_path = str(tmp_path / "s.sqlite")
    db = store.open_db(db_path)
    store.save_run(db, "onnx", [Result("a", "pass", seconds=1.0), Result("b", "fail-run", seconds=1.0),
                                Result("c", "pass", seconds=1.0)], 10.0, {})
    store.save_run(db, "onnx", [Result("a", "pass", seconds=1.0), Result("b", "mismatch", seconds=1.0),
                                Result("c", "pass", seconds=1.0)], 10.0, {})
    store.save_run(db, "onnx", [Result("a", "mismatch", "result 0: wrong", seconds=1.1),
                                Result("b", "pass", seconds=1.0), Result("c", "pass", seconds=4.0)], 10.0, {})
    rep = report.build(db, "onnx")
    assert rep.new_failures == [("a", "mismatch", "pass", "result 0: wrong")]
    assert rep.fixed == [("b", "pass", "mismatch")]
    assert rep.slower == [("c", 4.0, 1.0)]
    assert rep.below_best == [("a", "mismatch", "pass", 2)]
    html_path = tmp_path / "report.html"
    assert main(["sweep", "report", "--db", db_path, "--html", str(html_path)]) == 0
    out = capsys.readouterr().out
    assert "new failures: 1\n  a: mismatch (was pass): result 0: wrong" in out
    assert "fixed: 1\n  b: pass (was mismatch)" in out
    page = html_path.read_text()
    assert page.startswith("<!doctype html>") and "<td>a</td><td>mismatch</td><td>pass</td>" in page
    assert main(["sweep", "report", "--db", str(tmp_path / "none.sqlite")]) == 1
    assert "no sweep database at" in capsys.readouterr().err
