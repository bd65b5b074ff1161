"""mlirtext.analysis without a client: positions, pieces, incremental documents, and the
lowering features (the same answers the server gives, tested directly)."""
from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mlirtext import api
from mlirtext.analysis import actions, commands
from mlirtext.analysis.document import Document
from mlirtext.analysis.hover import hover
from mlirtext.analysis.lowered_forms import LoweredForms, op_at
from mlirtext.analysis.op_hover import op_sections
from mlirtext.analysis.pieces import resplit_pieces, split_pieces
from mlirtext.analysis.positions import LineIndex
from mlirtext.analysis.target_code import TargetCache

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
CORPUS_FILES = sorted(CORPUS.glob("*/*.mlir"))


def test_utf16_positions():
    text = "a\U0001F600b\ncaf\u00e9\n\nlast"
    lines = LineIndex(text)
    assert lines.position(text.index("b")) == (0, 3)          # the emoji is two UTF-16 units
    assert lines.offset(0, 3) == text.index("b")
    assert lines.offset(0, 2) == text.index("\U0001F600") + 1  # inside the pair: after it
    assert lines.offset(1, 99) == text.index("\n\n")          # past the line's end: its end
    assert lines.offset(99, 0) == len(text)                    # past the text: its end
    assert lines.position(10**9) == (3, 4)
    for offset in range(len(text) + 1):
        assert lines.offset(*lines.position(offset)) == offset


@pytest.mark.parametrize("path", CORPUS_FILES[::40], ids=lambda p: p.name[:50])
def test_rescanning_around_an_edit_finds_the_same_pieces(path):
    rng = random.Random(path.name)
    text = path.read_text()
    snippets = ["{", "}", "\n", "func.func @x() {\n", "\nfunc.func", " ", "%", "\n%0 = ", "// c\n", "(", ")"]
    for _ in range(25):
        old = split_pieces(text, 0, len(text))
        a = rng.randrange(len(text) + 1)
        b = min(len(text), a + rng.randrange(5))
        new_text = text[:a] + rng.choice(snippets) + text[b:]
        delta = len(new_text) - len(text)
        assert resplit_pieces(new_text, 0, len(new_text), old, a, b, delta) == \
            split_pieces(new_text, 0, len(new_text))
        text = new_text


@pytest.mark.parametrize("path", CORPUS_FILES[::9], ids=lambda p: p.name[:50])
def test_piecewise_diagnostics_match_the_whole_file(path):
    """Parsing and verifying function by function finds exactly what the CLI finds."""
    text = path.read_text()
    want = sorted((d.span.start if d.span else -1, d.message)
                  for r in api.parse_chunks(text, str(path), True) for d in r.diagnostics)
    doc = Document(path.as_uri(), text, 0, str(path))
    assert sorted((d.start, d.message) for d in doc.diagnostics) == want


def _fingerprint(doc: Document):
    return sorted((d.start, d.end, d.message, tuple(d.related)) for d in doc.diagnostics)


def test_edits_reparse_only_the_changed_function_and_match_a_fresh_parse():
    funcs = [f"func.func @f{i}(%x: tensor<4xf32>) -> tensor<4xf32> {{\n"
             f"  %0 = stablehlo.add %x, %x : tensor<4xf32>\n"
             + (f"  %1 = call @f{i - 1}(%0) : (tensor<4xf32>) -> tensor<4xf32>\n" if i else
                "  %1 = stablehlo.negate %0 : tensor<4xf32>\n")
             + "  return %1 : tensor<4xf32>\n}\n" for i in range(30)]
    text = "!t = tensor<4xf32>\n" + "".join(funcs)
    doc = Document("file:///x.mlir", text, 1)
    assert len(doc.pieces) == 31 and doc.diagnostics == []
    # Change @f10's signature: @f10 is re-parsed; its caller @f11 is re-verified (a call type error).
    edited = text.replace("func.func @f10(%x: tensor<4xf32>) -> tensor<4xf32>",
                          "func.func @f10(%x: tensor<4xf32>) -> tensor<8xf32>")
    new = doc.updated(edited, 2)
    reused = sum(a.parsed is b.parsed for a, b in zip(doc.pieces, new.pieces))
    assert reused == 30
    assert _fingerprint(new) == _fingerprint(Document("file:///x.mlir", edited, 2))
    assert any("@f10" not in d.message and d.start > edited.index("@f11") for d in new.diagnostics)
    # Random edits: the incremental document always equals a fresh one.
    rng = random.Random(7)
    current, cur_text = new, edited
    for version in range(3, 40):
        a = rng.randrange(len(cur_text))
        b = min(len(cur_text), a + rng.randrange(4))
        cur_text = cur_text[:a] + rng.choice(["", "x", "}", "{", "\n", "%9", "// -----\n", " "]) + cur_text[b:]
        current = current.updated(cur_text, version)
        assert _fingerprint(current) == _fingerprint(Document("file:///x.mlir", cur_text, version))


def test_lowered_forms_are_cached_per_op_text():
    text = (Path(__file__).resolve().parent.parent / "examples" / "mlp_stablehlo.mlir").read_text()
    doc = Document("file:///mlp.mlir", text, 1)
    forms = LoweredForms(ThreadPoolExecutor(1))
    first = op_at(doc, text.index("stablehlo.add %0"))
    second = op_at(doc, text.index("stablehlo.add %3"))
    entry = forms.request(first)
    entry.future.result(timeout=60)
    assert [level for level, _ in entry.levels] == ["tosa", "linalg", "loops", "llvm"]
    assert forms.request(second) is not entry          # different operand types: its own entry
    again = forms.request(op_at(doc, text.index("stablehlo.add %0")))
    assert again is entry                              # same op text: the cached entry
    at = text.index("stablehlo.add %0")
    markdown, _, _ = hover(doc, at, op_sections(doc, at, forms, TargetCache()))
    assert "**Next level**: tosa (from hlo)\n```mlir\n%2 = tosa.add" in markdown
    assert "(then linalg, loops, llvm)" in markdown and "llvm.fadd" not in markdown


def test_a_lowering_that_cannot_be_done_names_the_op_and_edits_nothing():
    text = ("// keep me\nfunc.func @f(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
            "  %0 = stablehlo.fft %x, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>\n"
            "  return %0 : tensor<4xcomplex<f32>>\n}\n")
    doc = Document("file:///fft.mlir", text, 1)
    offered = actions.available(doc, text.index("stablehlo.fft"), text.index("stablehlo.fft"))
    title, _, args = offered[0]
    assert title == "Lower @f to tosa (next level)"
    result = actions.compute(doc, *args)
    assert isinstance(result, str) and "stablehlo.fft" in result
    forms = LoweredForms(ThreadPoolExecutor(1))
    entry = forms.request(op_at(doc, text.index("stablehlo.fft")))
    entry.future.result(timeout=60)
    assert entry.levels == [] and "stablehlo.fft" in entry.error


def test_run_and_pipeline_without_a_client():
    text = ("func.func @twice(%x: tensor<3xi32>) -> tensor<3xi32> {\n"
            "  %0 = stablehlo.add %x, %x : tensor<3xi32>\n  return %0 : tensor<3xi32>\n}\n")
    doc = Document("file:///twice.mlir", text, 1)
    assert commands.run_function(doc, "@twice", ["3xi32=1 2 3"])["outputs"] == ["3xi32=2 4 6"]
    seeded = [commands.run_function(doc, "twice", None, seed=3)["inputs"] for _ in range(2)]
    assert seeded[0] == seeded[1]
    result = commands.pipeline(doc, None)
    assert [l["level"] for l in result["levels"]] == ["hlo", "tosa", "linalg", "loops", "llvm"]
    assert result["levels"][2]["op_counts"]["linalg"] == {"linalg.generic": 1, "linalg.yield": 1}
    assert result["target"] is None or "define" in result["target"]  # LLVM IR when the targets package has it
    import threading
    stop = threading.Event()
    stop.set()
    assert commands.pipeline(doc, "twice", cancelled=stop)["error"] == "cancelled"


def test_lowering_a_function_that_calls_a_sibling_inside_an_explicit_module():
    text = ("module @jit_main {\n"
            "  func.func public @main() -> tensor<3xf32> {\n"
            "    %0 = call @inputs() : () -> tensor<3xf32>\n"
            "    %1 = stablehlo.abs %0 : tensor<3xf32>\n"
            "    return %1 : tensor<3xf32>\n"
            "  }\n"
            "  func.func private @inputs() -> tensor<3xf32> {\n"
            "    %cst = stablehlo.constant dense<[1.0, -2.0, 3.0]> : tensor<3xf32>\n"
            "    return %cst : tensor<3xf32>\n"
            "  }\n"
            "}\n")
    doc = Document("file:///m.mlir", text, 1)
    at = text.index("stablehlo.abs")
    titles = {title: args for title, _, args in actions.available(doc, at, at)}
    edits = actions.compute(doc, *titles["Lower @main to linalg"])
    assert not isinstance(edits, str), edits
    (start, end, new_text), = edits
    assert text[start:end].startswith("func.func public @main") and text[start:end].endswith("}")
    assert "call @inputs()" in new_text and "linalg.generic" in new_text
    assert "@inputs() -> tensor<3xf32> {" not in new_text   # the declaration it needed is not pasted in
    lowered = text[:start] + new_text + text[end:]
    assert Document("file:///m.mlir", lowered, 2).diagnostics == []


def test_a_function_that_cannot_stand_alone_is_reported_at_its_line_in_the_document():
    """The pipeline and run commands work on the function cloned out of the document's IR: what
    stops them is placed in the document, not in a text made for the occasion."""
    text = ("// header\nfunc.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = call @missing(%x) : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    doc = Document("file:///x.mlir", text, 1, "x.mlir")
    want = "x.mlir:3:8: error: 'func.call' op 'missing' does not reference a valid function"
    assert commands.pipeline(doc, "f", targets=[]) == {"error": want}
    assert commands.run_function(doc, "f") == {"error": want}
    broken = Document("file:///y.mlir", text.replace("call @missing(%x)", "stablehlo.add %x,"), 1, "y.mlir")
    assert commands.pipeline(broken, None, targets=[])["error"].startswith("y.mlir:3:")


def test_the_pipeline_of_a_chunk_that_is_a_named_module_keeps_the_module():
    text = ("// RUN: a comment piece first\n"
            "module @jit_main attributes {mhlo.num_replicas = 1 : i32} {\n"
            "  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
            "    %0 = stablehlo.abs %x : tensor<3xf32>\n    return %0 : tensor<3xf32>\n  }\n}\n")
    doc = Document("file:///m.mlir", text, 1)
    result = commands.pipeline(doc, None, targets=[])
    assert result["error"] is None and [l["level"] for l in result["levels"]][-1] == "llvm"
    first = result["levels"][0]
    assert first["text"].startswith("module @jit_main attributes {mhlo.num_replicas = 1 : i32} {")
    abs_line = text.split("\n").index("    %0 = stablehlo.abs %x : tensor<3xf32>")
    assert abs_line in first["origins"]


GCD = """llvm.func @gcd(%a: i32, %b: i32) -> i32 {
  llvm.br ^loop(%a, %b : i32, i32)
^loop(%x: i32, %y: i32):
  %zero = llvm.mlir.constant(0 : i32) : i32
  %done = llvm.icmp "eq" %y, %zero : i32
  llvm.cond_br %done, ^exit(%x : i32), ^body
^body:
  %r = llvm.srem %x, %y : i32
  llvm.br ^loop(%y, %r : i32, i32)
^exit(%g: i32):
  llvm.return %g : i32
}
"""


def test_the_editor_runs_a_hand_written_llvm_func_as_the_command_line_does(tmp_path):
    """A scalar llvm.func without `mlirtext.abi` reflection: Run Function used to refuse it
    ("its pointer arguments cannot be given as tensors") while `mlirtext run` ran it."""
    from mlirtext.cli import main
    doc = Document("file:///gcd.mlir", GCD, 1)
    assert commands.run_function(doc, "gcd", ["i32=12", "i32=18"])["outputs"] == ["i32=6"]
    assert len(commands.run_function(doc, "gcd", None, seed=1)["inputs"]) == 2
    path = tmp_path / "gcd.mlir"
    path.write_text(GCD)
    assert main(["run", str(path), "--function", "gcd", "--input=i32=12", "--input=i32=18"]) == 0
    pointer = GCD.replace("@gcd(%a: i32", "@gcd(%p: !llvm.ptr, %a: i32")
    error = commands.run_function(Document("file:///p.mlir", pointer, 1), "gcd", None)["error"]
    assert "@gcd takes !llvm.ptr: only integers, floats and vectors of them" in error
