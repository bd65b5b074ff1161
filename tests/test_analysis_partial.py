"""Diagnostics of some of a document's pieces (`partial.py`) and the worker process that
computes half of a newly opened document's (`open_worker.py`): for every way of cutting
a document in two, the two halves together are exactly the document's diagnostics."""
from __future__ import annotations

from pathlib import Path

import pytest

from mlirtext.analysis import open_worker
from mlirtext.analysis.document import PIECE_CACHE, Document, layout_of
from mlirtext.analysis.partial import piece_diagnostics

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
CORPUS_FILES = sorted(CORPUS.glob("*/*.mlir"))

# Each problem depends on a piece elsewhere in the file: an alias defined at the top, a
# callee defined later, earlier, under a quoted or escaped name, in generic form or through
# an alias; a symbol defined twice; a call with the wrong types; and a syntax error.
CROSS_PIECE = r'''// aliases first
!t = tensor<4xf32>
#name = "aliased"

func.func @early(%a: !t) -> !t {
  %0 = call @late(%a) : (!t) -> !t
  %1 = call @"odd name"(%0) : (!t) -> !t
  %2 = call @escaped(%1) : (!t) -> !t
  return %2 : !t
}
func.func @wrong(%a: tensor<4xi32>) -> tensor<4xi32> {
  %0 = call @late(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
func.func @twice() {
  return
}
func.func @missing() {
  call @nowhere() : () -> ()
  return
}
"func.func"() <{function_type = () -> (), sym_name = "generic"}> ({
  func.call @aliased() : () -> ()
  "func.return"() : () -> ()
}) : () -> ()
func.func @broken(%a: !t) -> !t {
  %0 = stablehlo.add %a, : !t
  return %a : !t
}
func.func @late(%a: !t) -> !t {
  %0 = stablehlo.negate %a : !t
  func.call @generic() : () -> ()
  return %0 : !t
}
func.func @"odd name"(%a: !t) -> !t {
  return %a : !t
}
func.func @"esc\61ped"(%a: !t) -> !t {
  return %a : !t
}
"func.func"() <{function_type = () -> (), sym_name = #name}> ({
  "func.return"() : () -> ()
}) : () -> ()
func.func @twice() {
  call @early(%x) : (!t) -> !t
  return
}
// -----
func.func @twice() {
  return
}
func.func @uses_other_chunk() {
  call @late() : () -> ()
  return
}
'''


def _fingerprint(diagnostics):
    return [(d.start, d.end, d.severity, d.message, tuple(d.related)) for d in diagnostics]


def _every_cut_matches(text: str, name: str, cuts=None) -> None:
    PIECE_CACHE.entries.clear()
    want = _fingerprint(Document("file:///x.mlir", text, 0, name).diagnostics)
    layout = layout_of(text)
    count = sum(len(bounds) for _, _, bounds in layout)
    for cut in range(count + 1) if cuts is None else cuts(count):
        PIECE_CACHE.entries.clear()   # each half on its own, as in the worker
        first = piece_diagnostics(text, name, layout, 0, cut)
        PIECE_CACHE.entries.clear()
        second = piece_diagnostics(text, name, layout, cut, count)
        assert _fingerprint(first + second) == want, f"cut at piece {cut} of {count}"


def test_every_cut_of_a_file_with_cross_piece_problems():
    diagnostics = Document("file:///x.mlir", CROSS_PIECE, 0, "x.mlir").diagnostics
    messages = " | ".join(d.message for d in diagnostics)
    for expected in ("redefinition of symbol named 'twice'", "'nowhere'", "expected SSA value, found",
                     "operand type mismatch", "'late' does not reference", "use of undeclared SSA value name '%x'"):
        assert expected in messages
    assert len(layout_of(CROSS_PIECE)[0][2]) > 10   # many pieces: the cuts mean something
    _every_cut_matches(CROSS_PIECE, "x.mlir")


def test_a_cut_parses_only_what_the_pieces_it_reports_depend_on():
    text = "!t = tensor<4xf32>\n" + "".join(
        f"func.func @f{i}(%a: !t) -> !t {{\n  %0 = call @f{i - 1}(%a) : (!t) -> !t\n  return %0 : !t\n}}\n"
        if i else "func.func @f0(%a: !t) -> !t {\n  return %a : !t\n}\n" for i in range(40))
    layout = layout_of(text)
    PIECE_CACHE.entries.clear()
    assert piece_diagnostics(text, "x.mlir", layout, 30, 41) == []
    # The alias piece, the eleven reported, and the callee of the first of them.
    assert len(PIECE_CACHE.entries) == 1 + 11 + 1


@pytest.mark.parametrize("path", CORPUS_FILES[::23], ids=lambda p: p.name[:50])
def test_cuts_of_corpus_files(path):
    text = path.read_text()
    _every_cut_matches(text, str(path), lambda n: sorted({0, 1, n // 3, n // 2, n - 1, n} - {-1}))


def test_the_worker_process_computes_half_and_the_sum_is_the_documents(monkeypatch):
    text = CROSS_PIECE.split("// -----")[0] + "".join(
        f"func.func @g{i}() {{\n  call @g{(i + 7) % 300}() : () -> ()\n  return\n}}\n" for i in range(300))
    monkeypatch.setattr(open_worker, "MIN_PARALLEL_CHARS", 0)
    monkeypatch.setattr(open_worker, "_core_idle", lambda: True)
    worker = open_worker.DiagnosticsWorker()
    worker.start()
    try:
        worker.started.result(timeout=30)
        PIECE_CACHE.entries.clear()
        found = worker.diagnostics(text, "x.mlir", layout_of(text))
        assert found is not None
        PIECE_CACHE.entries.clear()
        assert _fingerprint(found) == _fingerprint(Document("file:///x.mlir", text, 0, "x.mlir").diagnostics)
        assert found   # the problems of CROSS_PIECE are there
    finally:
        worker.stop()


def test_no_worker_for_small_documents_before_it_is_there_or_on_a_busy_machine(monkeypatch):
    worker = open_worker.DiagnosticsWorker()   # never started
    text = "func.func @f() {\n  return\n}\n" * 20000
    assert len(text) > open_worker.MIN_PARALLEL_CHARS
    assert worker.diagnostics(text, "x.mlir", layout_of(text)) is None
    worker.start()
    try:
        worker.started.result(timeout=30)
        monkeypatch.setattr(open_worker, "_core_idle", lambda: True)
        assert worker.diagnostics(CROSS_PIECE, "x.mlir", layout_of(CROSS_PIECE)) is None   # small
        monkeypatch.setattr(open_worker, "_core_idle", lambda: False)
        assert worker.diagnostics(text, "x.mlir", layout_of(text)) is None
    finally:
        worker.stop()


def test_a_core_is_idle_when_fewer_tasks_than_cores_run(monkeypatch, tmp_path):
    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(open_worker, "LOADAVG", str(loadavg))
    for line, cores, idle in (("0.5 0.4 0.3 1/200 99", 2, True), ("7.9 8.1 7.0 6/200 99", 2, False),
                              ("3.0 3.0 3.0 4/300 99", 16, True)):
        loadavg.write_text(line)
        monkeypatch.setattr(open_worker.os, "cpu_count", lambda cores=cores: cores)
        assert open_worker._core_idle() is idle
    loadavg.unlink()
    assert open_worker._core_idle()   # nothing to read: assume idle
