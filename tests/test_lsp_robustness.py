"""Malformed and out-of-range requests: the server answers each one and stays up."""
from __future__ import annotations

import asyncio
import time

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.lsp_support import SERVER, open_and_wait, position_of, wait_diagnostics

pytestmark = pytest.mark.asyncio(loop_scope="module")

GOOD = """\
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(capabilities=T.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


def ident(uri):
    return T.TextDocumentIdentifier(uri=uri)


async def still_up(client, uri="file:///tmp/good.mlir"):
    if uri not in client.diagnostics:
        await open_and_wait(client, uri, GOOD)
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=ident(uri), position=position_of(GOOD, "%0 =", 1)))
    assert "`%0`: `tensor<4xf32>`" in h.contents.value


async def test_positions_past_the_end(client: LanguageClient):
    uri = "file:///tmp/good.mlir"
    await still_up(client, uri)
    far = [T.Position(line=10_000, character=5), T.Position(line=1, character=10_000),
           T.Position(line=4, character=0), T.Position(line=2**31 - 1, character=2**31 - 1)]
    for pos in far:
        assert await client.text_document_hover_async(T.HoverParams(text_document=ident(uri), position=pos)) is None
        assert not await client.text_document_definition_async(
            T.DefinitionParams(text_document=ident(uri), position=pos))
        await client.text_document_completion_async(T.CompletionParams(text_document=ident(uri), position=pos))
        await client.text_document_signature_help_async(
            T.SignatureHelpParams(text_document=ident(uri), position=pos))
        await client.text_document_code_action_async(T.CodeActionParams(
            text_document=ident(uri), range=T.Range(start=pos, end=pos), context=T.CodeActionContext(diagnostics=[])))
        await client.text_document_inlay_hint_async(T.InlayHintParams(
            text_document=ident(uri), range=T.Range(start=T.Position(line=0, character=0), end=pos)))
    await still_up(client)


async def test_unknown_documents_and_bad_commands(client: LanguageClient):
    uri = "file:///nowhere/unknown.mlir"
    pos = T.Position(line=0, character=0)
    assert await client.text_document_hover_async(T.HoverParams(text_document=ident(uri), position=pos)) is None
    assert not await client.text_document_definition_async(T.DefinitionParams(text_document=ident(uri), position=pos))
    assert not await client.text_document_references_async(T.ReferenceParams(
        text_document=ident(uri), position=pos, context=T.ReferenceContext(include_declaration=True)))
    assert not await client.text_document_document_symbol_async(T.DocumentSymbolParams(text_document=ident(uri)))
    tokens = await client.text_document_semantic_tokens_full_async(T.SemanticTokensParams(text_document=ident(uri)))
    assert list(tokens.data) == []
    assert await client.text_document_rename_async(T.RenameParams(
        text_document=ident(uri), position=pos, new_name="x")) is None
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.run", arguments=[uri, "f"]))
    assert "unknown document" in result["error"]
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.run", arguments=[42, {"not": "a name"}, 7]))
    assert "error" in result
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.run", arguments=["file:///tmp/good.mlir", "f", ["not a value"]]))
    assert "error" in result
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.pipeline", arguments=[]))
    assert "error" in result
    # A change and a close for a document that was never opened.
    client.text_document_did_close(T.DidCloseTextDocumentParams(text_document=ident(uri)))
    await still_up(client)


async def test_invalid_utf8_and_astral_characters(client: LanguageClient):
    # A lone surrogate is what invalid UTF-8 becomes once decoded with surrogateescape.
    text = GOOD.replace("%0 = ", "%0 = \udcff") + "// caf\u00e9 \U0001F600 \U0001F600\n" \
        "func.func @g() {\n  return // \U0001F600\n}\n"
    uri = "file:///tmp/bad-utf8.mlir"
    diagnostics = await open_and_wait(client, uri, text)
    assert diagnostics and diagnostics[0].range.start.line == 1
    # Positions count UTF-16 units: the hover after two astral characters lands on `return`.
    line = text.split("\n").index("  return // \U0001F600")
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=ident(uri), position=T.Position(line=line, character=3)))
    assert "func.return" in h.contents.value
    symbols = await client.text_document_document_symbol_async(T.DocumentSymbolParams(text_document=ident(uri)))
    assert [s.name for s in symbols] == ["f", "g"] or [s.name for s in symbols] == ["g"]
    await still_up(client)


async def test_a_file_with_bytes_that_are_not_utf8(client: LanguageClient, tmp_path):
    """The editor sends the text decoded with U+FFFD for each invalid sequence (as VS Code does): the
    server reads the file's bytes and reports each at its U+FFFD, line and column, even in a comment
    (where the U+FFFD itself parses); a U+FFFD the file really holds (EF BF BD) is no error."""
    data = GOOD.replace("%0 = ", "// caf\xff and \xe2\x82 and \xef\xbf\xbd\n  %0 = ", 1).encode("latin-1")
    path = tmp_path / "latin1.mlir"
    path.write_bytes(data)
    uri = path.as_uri()
    text = data.decode("utf-8", "replace")
    diagnostics = await open_and_wait(client, uri, text)
    assert [(d.range.start.line, d.range.start.character, d.range.end.character) for d in diagnostics] == \
        [(1, 8, 9), (1, 14, 15)]
    assert diagnostics[0].message.startswith("invalid UTF-8 byte 0xff at byte offset 59: MLIR files are UTF-8 text")
    assert diagnostics[1].message.startswith("invalid UTF-8 bytes 0xe2 0x82 at byte offset 65:")
    assert all(d.severity == T.DiagnosticSeverity.Error for d in diagnostics)
    # Edited (no longer what the file decodes to): each U+FFFD left (which ones were bytes that are not
    # UTF-8 can no longer be told) says what the file on disk holds.
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[T.TextDocumentContentChangeWholeDocument(text="// edited\n" + text)]))
    diagnostics = await wait_diagnostics(client, uri)
    assert [(d.range.start.line, d.range.start.character) for d in diagnostics] == [(2, 8), (2, 14), (2, 20)]
    assert "the file on disk is not UTF-8 text (0xff at byte offset 59, line 2)" in diagnostics[0].message
    # Without a file to read (an untitled document), a U+FFFD in the code is named as what it is.
    untitled = "untitled:Untitled-1"
    diagnostics = await open_and_wait(client, untitled, GOOD.replace("%x, %x", "%x, \ufffd%x"))
    assert len(diagnostics) == 1 and diagnostics[0].message.startswith("unexpected U+FFFD replacement character")
    assert (diagnostics[0].range.start.line, diagnostics[0].range.start.character) == (1, 25)


async def test_ten_megabyte_file(client: LanguageClient):
    # Large constants are how real models get big: one long hex blob.
    blob = "0x" + "3F800000" * (10_000_000 // 8)
    text = (f'func.func @weights() -> tensor<{len(blob) // 8}xf32> {{\n'
            f'  %w = stablehlo.constant dense<"{blob}"> : tensor<{len(blob) // 8}xf32>\n'
            f'  return %w : tensor<{len(blob) // 8}xf32>\n}}\n' + GOOD.replace("@f", "@small"))
    assert len(text) > 10_000_000
    uri = "file:///tmp/huge.mlir"
    started = time.monotonic()
    client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="mlir", version=1, text=text)))
    await still_up(client)   # other documents are answered meanwhile
    await wait_diagnostics(client, uri, timeout=50)
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=ident(uri), position=T.Position(line=5, character=3)))
    assert h is not None and "stablehlo.add" in h.contents.value
    h = await client.text_document_hover_async(T.HoverParams(   # the 10 MB constant itself
        text_document=ident(uri), position=T.Position(line=1, character=10)))
    assert "stablehlo.constant" in h.contents.value and "Next level" not in h.contents.value
    assert time.monotonic() - started < 50
    client.text_document_did_close(T.DidCloseTextDocumentParams(text_document=ident(uri)))


async def test_a_thousand_rapid_edits(client: LanguageClient):
    uri = "file:///tmp/typing.mlir"
    text = GOOD
    assert list(await open_and_wait(client, uri, text)) == []
    client.diagnostics.pop(uri)
    insert_at = T.Position(line=3, character=1)
    pending = []
    for i in range(1000):
        # Type a comment after the function, one character per edit.
        client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=i + 2),
            content_changes=[T.TextDocumentContentChangePartial(
                range=T.Range(start=insert_at, end=insert_at), text="x" if i else "\n//")]))
        if i == 0:
            insert_at = T.Position(line=4, character=2)
        else:
            insert_at = T.Position(line=4, character=insert_at.character + 1)
        if i % 100 == 50:
            pending.append(client.text_document_hover_async(T.HoverParams(
                text_document=ident(uri), position=T.Position(line=1, character=3))))
    answers = await asyncio.gather(*pending)
    assert all(a is not None and "stablehlo.add" in a.contents.value for a in answers)
    diagnostics = await wait_diagnostics(client, uri)
    assert list(diagnostics) == []
    symbols = await client.text_document_document_symbol_async(T.DocumentSymbolParams(text_document=ident(uri)))
    assert [s.name for s in symbols] == ["f"]
    await still_up(client)
