"""Outline, workspace symbols, cross-file definitions, folding, semantic tokens, inlay hints,
completion, rename, signature help and incremental edits, end to end through the real server."""
from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.lsp_support import SERVER, open_and_wait, position_of, range_text, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIB = """\
func.func @helper(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""

MAIN = """\
#map = affine_map<(d0) -> (d0)>
!vec = tensor<2xf32>
func.func private @helper(tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
func.func @main(%x: !vec, %n: index) -> !vec {
  %r = func.call @helper(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c0 = arith.constant 0 : index
  %e = tensor.extract %r[%c0] : tensor<2xf32>
  cf.br ^loop(%e : f32)
^loop(%v: f32):
  %t = tensor.splat %v : tensor<2xf32>
  return %t : !vec
}

// -----

func.func @second(%q: memref<4xf32>) -> f32 {
  %i = arith.constant 1 : index
  %l = memref.load %q[%i] : memref<4xf32>
  return %l : f32
}
"""


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    (root / "lib.mlir").write_text(LIB)
    (root / "main.mlir").write_text(MAIN)
    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=T.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=root.as_uri(), name="ws")]))
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


def doc(uri):
    return T.TextDocumentIdentifier(uri=uri)


async def opened(client) -> str:
    uri = (client.root / "main.mlir").as_uri()
    if uri not in client.diagnostics:
        assert list(await open_and_wait(client, uri, MAIN)) == []
    return uri


async def test_document_symbols_and_folding(client: LanguageClient):
    uri = await opened(client)
    symbols = await client.text_document_document_symbol_async(T.DocumentSymbolParams(text_document=doc(uri)))
    assert [s.name for s in symbols] == ["chunk 1 (line 1)", "chunk 2 (line 15)"]
    first = [(c.name, c.kind) for c in symbols[0].children]
    assert first == [("#map", T.SymbolKind.Constant), ("!vec", T.SymbolKind.Constant),
                     ("helper", T.SymbolKind.Function), ("main", T.SymbolKind.Function)]
    main = symbols[0].children[3]
    assert range_text(MAIN, main.selection_range) == "@main" and main.range.end.line == 11
    folds = await client.text_document_folding_range_async(T.FoldingRangeParams(text_document=doc(uri)))
    spans = {(f.start_line, f.end_line) for f in folds}
    assert (3, 11) in spans and (14, 19) in spans


async def test_definition_and_references_across_files(client: LanguageClient):
    uri = await opened(client)
    # @helper is declared in main.mlir (a declaration is its definition there) ...
    defs = await client.text_document_definition_async(T.DefinitionParams(
        text_document=doc(uri), position=position_of(MAIN, "@helper(%x", 1)))
    assert defs[0].uri == uri and defs[0].range.start.line == 2
    # ... and @helper's body lives in lib.mlir, found through the workspace symbols.
    found = await client.workspace_symbol_async(T.WorkspaceSymbolParams(query="help"))
    places = {(s.location.uri.rsplit("/", 1)[-1], s.location.range.start.line) for s in found}
    assert ("lib.mlir", 0) in places and ("main.mlir", 2) in places
    # Aliases and block labels.
    defs = await client.text_document_definition_async(T.DefinitionParams(
        text_document=doc(uri), position=position_of(MAIN, "!vec {", 2)))
    assert defs[0].range.start.line == 1 and range_text(MAIN, defs[0].range) == "!vec"
    defs = await client.text_document_definition_async(T.DefinitionParams(
        text_document=doc(uri), position=position_of(MAIN, "^loop(%e", 2)))
    assert defs[0].range.start.line == 8
    refs = await client.text_document_references_async(T.ReferenceParams(
        text_document=doc(uri), position=position_of(MAIN, "!vec =", 1),
        context=T.ReferenceContext(include_declaration=False)))
    assert sorted(r.range.start.line for r in refs) == [3, 3, 10]


async def test_hover_on_alias_type_and_symbol(client: LanguageClient):
    uri = await opened(client)

    async def hover(needle, delta):
        h = await client.text_document_hover_async(T.HoverParams(
            text_document=doc(uri), position=position_of(MAIN, needle, delta)))
        return h.contents.value

    assert "!vec = tensor<2xf32>" in await hover("!vec {", 1)
    assert "rank 1: 16" not in await hover("memref<4xf32>)", 3)
    text = await hover("memref<4xf32>)", 3)
    assert "memref of rank 1: 4" in text and "4 elements" in text and "16 bytes" in text
    assert "func.func @helper(tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>" in await hover("@helper(%x", 2)


async def test_semantic_tokens_and_inlay_hints(client: LanguageClient):
    uri = await opened(client)
    result = await client.text_document_semantic_tokens_full_async(T.SemanticTokensParams(text_document=doc(uri)))
    data = result.data
    assert len(data) % 5 == 0 and len(data) > 50
    # Decode and check a few tokens by their text.
    line = col = 0
    decoded = []
    lines = MAIN.split("\n")
    for i in range(0, len(data), 5):
        dl, dc, length, kind, mods = data[i:i + 5]
        line += dl
        col = col + dc if dl == 0 else dc
        decoded.append((lines[line][col:col + length], kind, mods))
    kinds = {text: kind for text, kind, _ in decoded}
    assert kinds["arith.constant"] == 0 and kinds["%c0"] == 1 and kinds["^loop"] == 3
    assert kinds["@main"] == 4 and kinds["!vec"] == 5 and kinds["tensor<2xf32>"] == 6
    assert kinds["%x"] == 2  # a block argument
    hints = await client.text_document_inlay_hint_async(T.InlayHintParams(
        text_document=doc(uri), range=T.Range(start=T.Position(line=0, character=0),
                                              end=T.Position(line=30, character=0))))
    labels = {(h.position.line, h.label) for h in hints}
    assert (17, ": f32") in labels          # memref.load does not spell its result type
    assert (6, ": f32") in labels           # nor does tensor.extract
    assert not any(line == 5 for line, _ in labels)   # arith.constant spells `index`


async def test_completion(client: LanguageClient):
    uri = await opened(client)

    async def labels(needle, delta):
        result = await client.text_document_completion_async(T.CompletionParams(
            text_document=doc(uri), position=position_of(MAIN, needle, delta)))
        return {item.label for item in result.items}

    assert {"%x", "%r", "%c0"} <= await labels("%c0]", 2)
    assert "%t" not in await labels("%c0]", 2)            # defined later
    ops = await labels("tensor.extract", 8)
    assert "tensor.extract" in ops and "tensor.splat" in ops and "arith.addf" not in ops
    assert {"@helper", "@main"} <= await labels("@helper(%x", 1)
    assert "^loop" in await labels("^loop(%e", 1)


async def test_signature_help_on_call(client: LanguageClient):
    uri = await opened(client)
    help_ = await client.text_document_signature_help_async(T.SignatureHelpParams(
        text_document=doc(uri), position=position_of(MAIN, "%x, %x)", 4)))
    assert help_.signatures[0].label == "@helper(tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"
    assert help_.active_parameter == 1


async def test_rename_value_block_symbol_alias(client: LanguageClient):
    uri = await opened(client)

    async def rename(needle, delta, new):
        edit = await client.text_document_rename_async(T.RenameParams(
            text_document=doc(uri), position=position_of(MAIN, needle, delta), new_name=new))
        return sorted((e.range.start.line, range_text(MAIN, e.range), e.new_text) for e in edit.changes[uri])

    assert await rename("%r =", 1, "res") == [(4, "%r", "%res"), (6, "%r", "%res")]
    assert await rename("^loop(%v", 1, "^body") == [(7, "^loop", "^body"), (8, "^loop", "^body")]
    assert await rename("!vec =", 1, "!v2") == [(1, "!vec", "!v2"), (3, "!vec", "!v2"), (3, "!vec", "!v2"),
                                               (10, "!vec", "!v2")]
    assert await rename("@helper(t", 1, "util") == [(2, "@helper", "@util"), (4, "@helper", "@util")]


async def test_incremental_edits_update_diagnostics(client: LanguageClient):
    uri = (client.root / "edit.mlir").as_uri()
    text = LIB
    assert list(await open_and_wait(client, uri, text)) == []
    # Break the op name, then fix it again: diagnostics follow each version.
    pos = position_of(text, "add %a", 0)
    client.diagnostics.pop(uri)
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[T.TextDocumentContentChangePartial(
            range=T.Range(start=pos, end=T.Position(line=pos.line, character=pos.character + 3)), text="ad")]))
    diagnostics = await wait_diagnostics(client, uri)
    assert len(diagnostics) >= 1 and diagnostics[0].range.start.line == 1
    client.diagnostics.pop(uri)
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[T.TextDocumentContentChangePartial(
            range=T.Range(start=pos, end=T.Position(line=pos.line, character=pos.character + 2)), text="add")]))
    assert list(await wait_diagnostics(client, uri)) == []
    # Hover right after an edit answers from the new version.
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=4),
        content_changes=[T.TextDocumentContentChangeWholeDocument(text=LIB.replace("%0", "%sum"))]))
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=doc(uri), position=T.Position(line=2, character=10)))
    assert "`%sum`" in h.contents.value
    await asyncio.sleep(0)


async def test_hover_on_attributes(client: LanguageClient):
    text = ("#map = affine_map<(d0, d1) -> (d1, d0)>\n"
            "func.func @k() -> tensor<2x3xf32> {\n"
            "  %c = stablehlo.constant dense<2.5> : tensor<2x3xf32>\n"
            "  return %c : tensor<2x3xf32>\n}\n")
    uri = (client.root / "attrs.mlir").as_uri()
    assert list(await open_and_wait(client, uri, text)) == []

    async def hover(needle, delta):
        h = await client.text_document_hover_async(T.HoverParams(
            text_document=doc(uri), position=position_of(text, needle, delta)))
        return h.contents.value

    assert "2 dimensions, 0 symbols -> 2 results (d1, d0); a permutation" in await hover("affine_map", 4)
    assert "splat (one value repeated); 6 elements; every element is 2.5" in await hover("dense<", 2)
