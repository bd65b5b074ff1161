"""Opening a large document: the diagnostics published first are the document's own, and
every feature works once it is built; the server's glue around the worker process."""
from __future__ import annotations

import gc
import sys

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from mlirtext.analysis import open_worker
from mlirtext.analysis.document import Document
from tests.lsp_support import ROOT, SERVER, open_and_wait, position_of

def big_document(functions: int = 1800) -> str:
    """Over MIN_PARALLEL_CHARS: a chain of calls, a syntax error near the top, a call with
    the wrong types near the bottom (its callee defined near the top) and a symbol defined twice."""
    out = ["!t = tensor<4x8xf32>\n"]
    for i in range(functions):
        call = f"  %1 = call @f{i - 1}(%0) : (!t) -> !t\n" if i else "  %1 = stablehlo.negate %0 : !t\n"
        out.append(f"func.func @f{i}(%a: !t) -> !t {{\n  %0 = stablehlo.add %a, %a : !t\n{call}"
                   f"  return %1 : !t\n}}\n")
    out[10] = out[10].replace("stablehlo.add %a, %a", "stablehlo.add %a,")
    out.append("func.func @bad(%a: tensor<4xi32>) -> tensor<4xi32> {\n"
               "  %0 = call @f3(%a) : (tensor<4xi32>) -> tensor<4xi32>\n  return %0 : tensor<4xi32>\n}\n")
    out.append(out[5])
    return "".join(out)


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(capabilities=T.ClientCapabilities()))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_large_document_gets_its_own_diagnostics_and_features(client: LanguageClient):
    text = big_document()
    assert len(text) > open_worker.MIN_PARALLEL_CHARS
    uri = "file:///tmp/large.mlir"
    found = await open_and_wait(client, uri, text, timeout=120)
    want = Document(uri, text, 1, "/tmp/large.mlir").diagnostics
    assert [d.message for d in found] == [d.message for d in want]
    assert len(want) == 3
    lines = [d.range.start.line for d in found]
    assert lines == [text.count("\n", 0, d.start) for d in want]
    hover = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=position_of(text, "%1 = call @f1100", 2)))
    assert "`%1`" in hover.contents.value and "tensor<4x8xf32>" in hover.contents.value
    found = await client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=position_of(text, "call @f1100", 6)))
    assert [loc.range.start.line for loc in found] == [position_of(text, "func.func @f1100(").line]


def test_the_server_publishes_the_workers_diagnostics_before_building_the_document(monkeypatch):
    sys.path.insert(0, str(ROOT / "server"))
    from mlirtext_server.server import MlirServer
    monkeypatch.setattr(open_worker, "_core_idle", lambda: True)
    ls = MlirServer()
    ls.open_worker.start()
    published = []

    class Loop:   # the analysis thread hands the early diagnostics to the event loop
        def call_soon_threadsafe(self, fn, *args):
            published.append(args)

    try:
        ls.open_worker.started.result(timeout=30)
        text = big_document()
        doc, early = ls._open_frozen("file:///tmp/large.mlir", text, 1, Loop())
        assert early is not None and early == doc.diagnostics and len(early) == 3
        [(opened, version, diagnostics)] = published
        assert (opened.uri, opened.text, version, diagnostics) == (doc.uri, text, 1, early)
        # An edit is analysed incrementally, without the worker.
        doc2, early2 = ls._open_frozen("file:///tmp/large.mlir", text.replace("add %a, :", "add %a, %a :"), 2,
                                       Loop())
        assert early2 is None and len(doc2.diagnostics) == 2 and len(published) == 1
    finally:
        ls.open_worker.stop()
        gc.unfreeze()
