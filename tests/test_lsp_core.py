"""The language server end to end (the real server as a subprocess, through pytest-lsp):
diagnostics, hover, definition and references on corpus files and on broken files."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.lsp_support import CORPUS, ROOT, SERVER, open_and_wait, position_of, range_text

NEEDS_CORPUS = pytest.mark.skipif(not CORPUS.is_dir(), reason="the corpus is not next to the project")

pytestmark = pytest.mark.asyncio(loop_scope="module")

BROKEN = """\
func.func @good(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @broken(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, : tensor<4xf32>
  %1 = stablehlo.multiply %x, %x : tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @caller(%y: tensor<4xf32>) -> tensor<4xf32> {
  %r = call @good(%y) : (tensor<4xf32>) -> tensor<4xf32>
  %s = stablehlo.subtract %r, %y : tensor<4xf32>
  return %s : tensor<4xf32>
}
"""


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=T.ClientCapabilities(), root_uri=(ROOT / "examples").as_uri()))
    yield
    await lsp_client.shutdown_session()


async def hover_text(client, uri, pos) -> str:
    result = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=pos))
    return result.contents.value if result is not None else ""


async def test_broken_function_is_diagnosed_and_the_others_still_work(client: LanguageClient):
    uri = "file:///tmp/broken.mlir"
    diagnostics = await open_and_wait(client, uri, BROKEN)
    assert len(diagnostics) == 1
    d = diagnostics[0]
    assert d.severity == T.DiagnosticSeverity.Error
    assert "expected SSA value, found ':'" in d.message   # the declared format wants an operand there
    assert d.range.start.line == 5
    # Hover and definition in the functions around the broken one.
    text = await hover_text(client, uri, position_of(BROKEN, "%r, %y", 1))
    assert "tensor<4xf32>" in text and "func.call" in text and "1 use" in text
    text = await hover_text(client, uri, position_of(BROKEN, "stablehlo.subtract", 3))
    assert "**stablehlo.subtract**" in text and "operands: `tensor<4xf32>`, `tensor<4xf32>`" in text
    defs = await client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=position_of(BROKEN, "@good(%y", 2)))
    assert len(defs) == 1 and defs[0].range.start.line == 0 and range_text(BROKEN, defs[0].range) == "@good"
    # Inside the broken function, the ops that parsed are still navigable.
    defs = await client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=position_of(BROKEN, "%1 : tensor", 1)))
    assert [d.range.start.line for d in defs] == [6]
    refs = await client.text_document_references_async(T.ReferenceParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=position_of(BROKEN, "%y:", 1),
        context=T.ReferenceContext(include_declaration=True)))
    assert sorted((r.range.start.line, range_text(BROKEN, r.range)) for r in refs) == \
        [(9, "%y"), (10, "%y"), (11, "%y")]


@NEEDS_CORPUS
async def test_corpus_file_navigation_and_hover(client: LanguageClient):
    path = CORPUS / "stablehlo" / "stablehlo__tests__interpret__while.mlir"
    text = path.read_text()
    uri = path.as_uri()
    assert list(await open_and_wait(client, uri, text)) == []
    # A value defined by a two-result op and used inside a region.
    pos = position_of(text, "%results1 = ", 1)
    h = await hover_text(client, uri, pos)
    assert "`%results1`: `tensor<i64>`" in h and "stablehlo.while" in h and "(result #1)" in h
    refs = await client.text_document_references_async(T.ReferenceParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=pos,
        context=T.ReferenceContext(include_declaration=True)))
    assert len(refs) == 2 and {range_text(text, r.range) for r in refs} == {"%results1"}
    # A region argument used in the other region of the same op.
    defs = await client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=position_of(text, "%arg1, %one", 1)))
    assert len(defs) == 1 and range_text(text, defs[0].range) == "%arg1"
    assert defs[0].range.start.line == text[:text.index("%arg1 = ")].count("\n")


@NEEDS_CORPUS
async def test_corpus_invalid_file_reports_every_chunk_with_related_information(client: LanguageClient):
    from mlirtext import api
    path = CORPUS / "mlir-hlo" / "tests__Dialect__mhlo__verifier_while_op.mlir"
    text = path.read_text()
    uri = path.as_uri()
    diagnostics = await open_and_wait(client, uri, text)
    want = [d for r in api.parse_chunks(text, str(path), True) for d in r.diagnostics]
    assert len(diagnostics) == len(want) > 5
    got_lines = sorted(d.range.start.line for d in diagnostics)
    assert got_lines == sorted(d.span.line_col[0] - 1 for d in want)
    assert {d.message for d in diagnostics} == {d.message for d in want}


async def test_notes_become_related_information(client: LanguageClient):
    text = ("func.func @f(%x: i32) -> i32 {\n  %0 = arith.addi %x, %x : i32\n"
            "  %0 = arith.addi %x, %x : i32\n  return %0 : i32\n}\n")
    uri = "file:///tmp/redefined.mlir"
    diagnostics = await open_and_wait(client, uri, text)
    assert len(diagnostics) == 1
    d = diagnostics[0]
    assert "redefinition of SSA value '%0'" in d.message and d.range.start.line == 2
    assert d.related_information[0].message == "previously defined here"
    assert d.related_information[0].location.range.start.line == 1


async def test_symbol_redefined_in_another_function_piece(client: LanguageClient):
    text = ("func.func @f() {\n  return\n}\nfunc.func @g() {\n  return\n}\nfunc.func @f() {\n  return\n}\n")
    uri = "file:///tmp/twice.mlir"
    diagnostics = await open_and_wait(client, uri, text)
    assert [(d.message, d.range.start.line) for d in diagnostics] == [("redefinition of symbol named 'f'", 6)]
    assert diagnostics[0].related_information[0].location.range.start.line == 0
