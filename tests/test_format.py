"""The formatter (`mlirtext format`, the editor's formatting): layout, comments, aliases, chunks,
names, wrapping; refusing what does not parse; the language server's formatting and range
formatting through the real server; and every corpus chunk that parses (tests/format_status.py)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from mlirtext.syntax.comments import scan
from mlirtext.syntax.formatter import format_range, format_text, same_ir
from mlirtext.syntax.parser import parse, split_input
from mlirtext.syntax.wrapping import wrap_line

from tests import format_status
from tests.lsp_support import ROOT, SERVER, open_and_wait, position_of

MESSY = """\
// RUN: some-tool %s
#map = affine_map<(d0) -> (d0)>
!vec   =   tensor<4xf32>

// the function
func.func @f(%a: !vec,%b :!vec) -> !vec {   // signature
        // before the add
  %sum = arith.addf %a,%b : !vec      // the sum
  %c = "foo.bar"(%sum) {x = 1 : i32,
       // inside the op
       y = 2} : (!vec) -> !vec

  cf.br ^next(%c : !vec)
// before the block
^next(%q: !vec):   // the block
      return %q : !vec loc("model.py":3:4)
      // last in the region
}
// at the end
"""

FORMATTED = """\
// RUN: some-tool %s
#map = affine_map<(d0) -> (d0)>
!vec = tensor<4xf32>

// the function
func.func @f(%a: !vec, %b: !vec) -> !vec {  // signature
  // before the add
  %sum = arith.addf %a, %b : !vec  // the sum
  // inside the op
  %c = "foo.bar"(%sum) {x = 1 : i32, y = 2} : (!vec) -> !vec

  cf.br ^next(%c : !vec)
// before the block
^next(%q: !vec):  // the block
  return %q : !vec loc("model.py":3:4)
  // last in the region
}
// at the end
"""


def _same_meaning(before: str, after: str, width: int = 100) -> None:
    """`after` formats to itself, keeps every comment in order, and each chunk reads back to the
    IR of the same chunk of `before`."""
    assert format_text(after, width=width).text == after
    assert [c.text for c in scan(before)[0]] == [c.text for c in scan(after)[0]]
    old, new = split_input(before), split_input(after)
    assert len(old) == len(new)
    for (s, e), (s2, e2) in zip(old, new):
        a, b = parse(before, "x", s, e), parse(after[s2:e2], "x")
        assert a.ok and b.ok and same_ir(a, b)


def test_layout_comments_names_labels_aliases_locations():
    formatted = format_text(MESSY)
    assert formatted.ok and formatted.diagnostics == []
    assert formatted.text == FORMATTED
    _same_meaning(MESSY, formatted.text)


def test_aliases_go_to_the_top_of_their_chunk_and_chunks_are_formatted_alone():
    text = ("func.func @g(%x: i32) -> i32 {\n    return %x : i32\n}\n!t = i32  // defined late\n"
            "func.func @g2(%x: !t) -> !t {\n    return %x : !t\n}\n"
            "// -----\n"
            "// second\nfunc.func @h() {\n      return\n}\n"
            "   // -----   a note\n"
            "\n\n!t = f32\nfunc.func @k(%y: !t) -> !t {\nreturn %y : !t\n}\n")
    formatted = format_text(text)
    assert formatted.ok, formatted.diagnostics
    assert formatted.text == (
        "!t = i32\nfunc.func @g(%x: !t) -> !t {\n  return %x : !t\n}\n// defined late\n"   # (the printer uses the alias)
        "func.func @g2(%x: !t) -> !t {\n  return %x : !t\n}\n"
        "\n// -----\n\n"
        "// second\nfunc.func @h() {\n  return\n}\n"
        "\n// -----   a note\n\n"
        "!t = f32\nfunc.func @k(%y: !t) -> !t {\n  return %y : !t\n}\n")
    _same_meaning(text, formatted.text)


def test_comments_inside_nested_regions_stay_inside():
    text = ("func.func @loop(%n: index, %t: tensor<4xf32>) -> tensor<4xf32> {\n"
            "%c0 = arith.constant 0 : index\n%c1 = arith.constant 1 : index\n"
            "%r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> (tensor<4xf32>) {  // the loop\n"
            "// first in the body\n%s = arith.addf %acc, %acc : tensor<4xf32>\n"
            "scf.yield %s : tensor<4xf32>  // yielded\n// after the yield\n}\n"
            "return %r : tensor<4xf32>\n}\n")
    out = format_text(text).text
    assert ("  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> (tensor<4xf32>) {  // the loop\n"
            "    // first in the body\n"
            "    %s = arith.addf %acc, %acc : tensor<4xf32>\n"
            "    scf.yield %s : tensor<4xf32>  // yielded\n"
            "    // after the yield\n"
            "  }\n") in out
    _same_meaning(text, out)


def test_explicit_module_and_names_kept():
    text = ("module attributes {my.flag} {\n// inside\nfunc.func @f(%input: i32) -> i32 {\n"
            "%doubled = arith.addi %input, %input : i32\nreturn %doubled : i32\n}\n}\n")
    out = format_text(text).text
    assert out == ("module attributes {my.flag} {\n  // inside\n  func.func @f(%input: i32) -> i32 {\n"
                   "    %doubled = arith.addi %input, %input : i32\n    return %doubled : i32\n  }\n}\n")
    _same_meaning(text, out)


def test_long_attribute_dictionaries_and_operand_lists_wrap_at_the_width():
    attrs = ", ".join(f"attribute_number_{i} = {i} : i32" for i in range(8))
    text = (f"func.func @w(%first_argument: tensor<4xf32>, %second_argument: tensor<4xf32>) -> tensor<4xf32> {{\n"
            f'  %0 = "foo.op"(%first_argument, %second_argument) {{{attrs}}} : '
            f"(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}}\n")
    out = format_text(text).text
    assert max(len(line) for line in out.splitlines()) <= 100
    assert ('  %0 = "foo.op"(%first_argument, %second_argument) {\n'
            "      attribute_number_0 = 0 : i32,\n") in out
    assert "      attribute_number_7 = 7 : i32\n    } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n" in out
    _same_meaning(text, out)
    narrow = format_text(text, width=60).text
    assert "func.func @w(\n    %first_argument: tensor<4xf32>,\n" in narrow
    _same_meaning(text, narrow, 60)


def test_wrapping_leaves_literals_and_strings_whole():
    line = '  %0 = "foo.op"() {s = "a, b, c, d, e, f, g", d = dense<[1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<9xi32>} : () -> i32'
    lines = wrap_line(line, 64)
    assert '      s = "a, b, c, d, e, f, g",' in lines
    assert "      d = dense<[1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<9xi32>" in lines
    # a group around one long literal is not broken: it would not get shorter
    lone = "  check.expect_eq_const(%r, dense<[" + ", ".join(["1"] * 60) + "]> : tensor<60xi32>) : tensor<60xi32>"
    assert wrap_line(lone, 100) == [lone]
    # a trailing comment stays at the end of the op's last line
    assert wrap_line('  "foo.op"() {a = 1, b = 2} : () -> ()  // note', 24)[-1].endswith("// note")


def test_tosa_const_prints_one_blank():
    text = ('func.func @c() -> tensor<2xf32> {\n'
            '  %0 = "tosa.const"() {values = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>\n'
            '  return %0 : tensor<2xf32>\n}\n')
    out = format_text(text).text
    assert "%0 = tosa.const values(dense<1.0> : tensor<2xf32>) : () -> tensor<2xf32>" in out
    assert "  " not in out.replace("\n  ", "\n").replace("\n    ", "\n")
    _same_meaning(text, out)


def test_an_op_whose_print_does_not_read_back_is_kept_as_written():
    # llvm.fadd's custom form leaves out a fastmath<none> the generic form wrote: other IR
    text = ('func.func @k(%a: f32) -> f32 {\n  %0 = "llvm.fadd"(%a, %a) <{fastmathFlags = #llvm.fastmath<none>}> : '
            "(f32, f32) -> f32\n  return %0 : f32\n}\nfunc.func @m(%b: i32) -> i32 {\n    return %b : i32\n}\n")
    formatted = format_text(text)
    assert [d.severity for d in formatted.diagnostics] == ["warning"]
    assert formatted.diagnostics[0].message.startswith("this op is kept as written")
    assert formatted.text.startswith(text[:text.index("func.func @m")])   # @k as written
    assert formatted.text.endswith("func.func @m(%b: i32) -> i32 {\n  return %b : i32\n}\n")
    _same_meaning(text, formatted.text)


def test_a_parse_error_is_not_formatted():
    formatted = format_text("func.func @f() {\n  %0 = arith.addi : i32\n}\n", "bad.mlir")
    assert not formatted.ok
    assert "expected SSA value" in formatted.diagnostics[0].message
    assert format_range("func.func @f() {\n  %0 = arith.addi : i32\n}\n", 0, 5) is None


def test_range_formats_the_whole_top_level_ops_it_touches():
    text = "func.func @a() {\n    return\n}\n\n// about b\nfunc.func   @b(%x: i32)   {\n      return\n}\n"
    at = text.index("return", text.index("@b"))
    start, end, new = format_range(text, at, at + 3)
    assert text[start:end] == "// about b\nfunc.func   @b(%x: i32)   {\n      return\n}\n"
    assert new == "// about b\nfunc.func @b(%x: i32) {\n  return\n}\n"
    assert format_range(text, 0, len(text)) == (0, len(text), format_text(text).text)
    assert format_range(text, text.index("\n\n"), text.index("\n\n") + 1) is None   # between the ops


def _mlirtext(*args, stdin=None):
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'server'}"}
    return subprocess.run([sys.executable, "-m", "mlirtext", "format", *args], capture_output=True, text=True,
                          env=env, input=stdin, timeout=120)


def test_cli_stdout_in_place_and_output(tmp_path):
    path = tmp_path / "f.mlir"
    path.write_text(MESSY)
    shown = _mlirtext(str(path))
    assert shown.returncode == 0 and shown.stdout == FORMATTED and path.read_text() == MESSY
    out = tmp_path / "out.mlir"
    assert _mlirtext(str(path), "-o", str(out)).returncode == 0 and out.read_text() == FORMATTED
    assert _mlirtext(str(path), "-i").returncode == 0 and path.read_text() == FORMATTED
    mtime = path.stat().st_mtime_ns
    assert _mlirtext(str(path), "-i").returncode == 0 and path.stat().st_mtime_ns == mtime   # unchanged
    assert _mlirtext("-", stdin=MESSY).stdout == FORMATTED


def test_cli_parse_error_exit_1_and_the_file_untouched(tmp_path):
    path = tmp_path / "bad.mlir"
    bad = "func.func @f() {\n    %0 = arith.addi : i32\n}\n"
    path.write_text(bad)
    for args in ([str(path)], [str(path), "-i"], [str(path), "-o", str(tmp_path / "o.mlir")]):
        result = _mlirtext(*args)
        assert result.returncode == 1 and result.stdout == ""
        assert f"{path}:2:21: error: expected SSA value" in result.stderr
        assert "Traceback" not in result.stderr
        assert path.read_text() == bad
    assert not (tmp_path / "o.mlir").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir"]   # no temporary left behind
    assert _mlirtext("-", "-i", stdin=bad).returncode == 1
    assert _mlirtext(str(path), "--width", "3").returncode == 1
    # bytecode is not rewritten as text, and a file that is not UTF-8 gets one line
    (tmp_path / "m.mlirbc").write_bytes(b"ML\xefR\x06\x00")
    refused = _mlirtext(str(tmp_path / "m.mlirbc"), "-i")
    assert refused.returncode == 1 and "is MLIR bytecode" in refused.stderr
    assert (tmp_path / "m.mlirbc").read_bytes() == b"ML\xefR\x06\x00"
    (tmp_path / "latin1.mlir").write_bytes(b"// caf\xe9\n")
    refused = _mlirtext(str(tmp_path / "latin1.mlir"))
    assert refused.returncode == 1 and "is not UTF-8" in refused.stderr and "Traceback" not in refused.stderr


# -- the language server ---------------------------------------------------------------------------
@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    lsp_client.initialized = await lsp_client.initialize_session(T.InitializeParams(
        capabilities=T.ClientCapabilities(), root_uri=tmp_path.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")]))
    lsp_client.root = tmp_path
    yield
    await lsp_client.shutdown_session()


def _apply(text: str, edits) -> str:
    from tests.lsp_support import offset_at
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset_at(text, edit.range.start)] + edit.new_text + text[offset_at(text, edit.range.end):]
    return text


@pytest.mark.asyncio
async def test_server_formats_documents_and_ranges(client: LanguageClient):
    capabilities = client.initialized.capabilities
    assert capabilities.document_formatting_provider and capabilities.document_range_formatting_provider
    uri = (client.root / "messy.mlir").as_uri()
    await open_and_wait(client, uri, MESSY)
    options = T.FormattingOptions(tab_size=2, insert_spaces=True)
    edits = await client.text_document_formatting_async(T.DocumentFormattingParams(
        text_document=T.TextDocumentIdentifier(uri=uri), options=options))
    assert edits and _apply(MESSY, edits) == FORMATTED
    # the range touches the function: it is formatted whole, and the edit stays inside it
    edits = await client.text_document_range_formatting_async(T.DocumentRangeFormattingParams(
        text_document=T.TextDocumentIdentifier(uri=uri), options=options,
        range=T.Range(start=position_of(MESSY, "%sum"), end=position_of(MESSY, "%sum", 3))))
    assert len(edits) == 1
    assert edits[0].range.start.line >= MESSY[:MESSY.index("// the function")].count("\n")
    assert _apply(MESSY, edits) == FORMATTED.replace("!vec = tensor<4xf32>", "!vec   =   tensor<4xf32>")
    # a document that does not parse gets no edits (not an error)
    bad_uri = (client.root / "bad.mlir").as_uri()
    await open_and_wait(client, bad_uri, "func.func @f() {\n  %0 = arith.addi : i32\n}\n")
    assert not await client.text_document_formatting_async(T.DocumentFormattingParams(
        text_document=T.TextDocumentIdentifier(uri=bad_uri), options=options))


# -- the corpus -------------------------------------------------------------------------------------
@pytest.mark.skipif(not format_status.corpus.CORPUS.exists(), reason="no ../shared/corpus next to the clone")
def test_corpus_chunks_that_parse_format_to_the_same_ir():
    """Every second corpus file (`make format-status` runs them all: 3,453 chunks parse alone, every
    one reads back to the same IR, formats to itself and keeps its comments; 37 ops kept as written)."""
    counts = format_status.run(format_status.corpus_files(every=2))
    assert counts.failures == [], counts.failures[:5]
    parsed = counts.chunks["formatted"] + counts.chunks["kept whole"]
    assert parsed >= 1090 and counts.chunks["kept whole"] == 0 and counts.kept_ops <= 25, counts
