"""The semantic tokens answer as JSON text joined from per-piece JSON (`tokens.encode_json`),
prepared after each version's analysis for a client that declares semantic tokens (a big
document's pieces encoded in its build, for every client): the same integers as
`tokens.encode` on corpus files, whole and by range, and through the real server."""
from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from mlirtext.analysis import tokens
from mlirtext.analysis.document import Document
from mlirtext_server import whole_document
from mlirtext_server.server import MlirServer
from mlirtext_server.whole_document import WholeDocumentAnswers
from tests.corpus import CORPUS
from tests.lsp_raw import RawServer
from tests.lsp_support import ROOT

EXAMPLES = sorted((ROOT / "examples").glob("*.mlir"))
#: Every 20th corpus file: all dialects, a few seconds.
SAMPLE = sorted(CORPUS.glob("*/*.mlir"))[::20] if CORPUS.is_dir() else []
NON_ASCII = 'func.func @f() -> tensor<2xf32> {\n  // ünïcødé 𝔘\n  %0 = "x.y"() {s = "𝔘 i32"} : () -> tensor<2xf32>\n' \
            '  return %0 : tensor<2xf32>\n}\n// -----\nfunc.func @g(%a: i32) -> i32 {\n  return %a : i32\n}\n'


def json_data(doc: Document, start: int = 0, end=None) -> list[int]:
    answer = json.loads(tokens.encode_json(doc, start, end))
    assert list(answer) == ["data"]
    return answer["data"]


@pytest.mark.parametrize("path", EXAMPLES + SAMPLE, ids=lambda p: p.name)
def test_the_json_answer_is_the_encoding(path):
    text = path.read_text(errors="replace")
    doc = Document(path.as_uri(), text)
    assert json_data(doc) == tokens.encode(doc)
    for start, end in [(0, len(text) // 3), (len(text) // 3, 2 * len(text) // 3 + 1), (len(text) - 1, len(text))]:
        assert json_data(doc, start, end) == tokens.encode(doc, start, end)


def test_the_json_answer_of_non_ascii_text_and_split_chunks():
    doc = Document("file:///u.mlir", NON_ASCII)
    assert json_data(doc) == tokens.encode(doc) and len(json_data(doc)) > 20
    assert json_data(Document("file:///empty.mlir", "")) == []


def test_a_prepared_answer_is_the_one_the_request_gets():
    doc = Document("file:///p.mlir", EXAMPLES[0].read_text())
    computed = []

    class CountingPool(ThreadPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            computed.append(args[1])
            return super().submit(fn, *args, **kwargs)

    async def prepare_then_ask():
        answers = WholeDocumentAnswers(CountingPool(1))
        answers.prepare(doc, "tokens")
        return await answers.answer(doc, "tokens"), await answers.answer(doc, "tokens")

    first, again = asyncio.run(prepare_then_ask())
    assert computed == ["tokens"] and first is again
    assert json.loads(first.json) == {"data": tokens.encode(doc)}


def test_a_big_documents_tokens_are_made_in_its_build_before_its_diagnostics(monkeypatch):
    """Over TOKENS_IN_BUILD_CHARS: the server's build of a version (`_open_frozen`, on the
    analysis thread, before the diagnostics are published) encodes every piece's tokens, for
    every client; a new version encodes only the pieces whose text changed, and the answer
    joined from them is the encoding. A smaller document's build encodes none."""
    monkeypatch.setattr(whole_document, "TOKENS_IN_BUILD_CHARS", 1000)
    texts = [p.read_text() for p in EXAMPLES]
    server = MlirServer()

    async def build(uri, text, version):
        doc, early = server._open_frozen(uri, text, version, asyncio.get_running_loop())
        return doc

    old = asyncio.run(build("file:///big.mlir", "".join(texts), 1))
    assert len(old.pieces) > 4 and all("tokens_json" in p.parsed.cache for p in old.pieces)
    edited = "".join(texts) + "func.func @added(%a: i32) -> i32 {\n  return %a : i32\n}\n"
    new = asyncio.run(build("file:///big.mlir", edited, 2))
    kept = {id(p.parsed) for p in old.pieces}
    assert [i for i, p in enumerate(new.pieces) if id(p.parsed) not in kept] == [len(new.pieces) - 1]   # parses and
    assert all("tokens_json" in p.parsed.cache for p in new.pieces)   # tokens kept: the new piece encoded alone
    answer = asyncio.run(WholeDocumentAnswers(ThreadPoolExecutor(1)).answer(new, "tokens"))
    assert json.loads(answer.json) == {"data": tokens.encode(new)}
    small = asyncio.run(build("file:///small.mlir", "func.func @s() {\n  return\n}\n" + "// x\n" * 100, 1))
    assert len(small.text) < 1000 and not any("tokens" in p.parsed.cache for p in small.pieces)


def test_a_failure_to_make_the_tokens_in_the_build_is_one_line_and_the_build_goes_on(monkeypatch, caplog):
    monkeypatch.setattr(whole_document, "TOKENS_IN_BUILD_CHARS", 10)

    def broken(doc):
        raise ValueError("no tokens\nhere")
    monkeypatch.setattr(tokens, "encode_pieces", broken)
    doc = Document("file:///f.mlir", EXAMPLES[0].read_text())
    whole_document.tokens_in_build(doc)
    assert [r.getMessage() for r in caplog.records] == [
        "making the semantic tokens of file:///f.mlir failed: ValueError: no tokens"]


def test_a_client_declaring_semantic_tokens_gets_them_prepared():
    text = EXAMPLES[0].read_text()
    s = RawServer()
    try:
        s.initialize({"textDocument": {"semanticTokens": {"requests": {"full": True}, "tokenTypes": [],
                                                          "tokenModifiers": [], "formats": ["relative"]}}})
        s.open("file:///t.mlir", text)
        answer = s.call("textDocument/semanticTokens/full", {"textDocument": {"uri": "file:///t.mlir"}})
        s.notify("textDocument/didChange", {"textDocument": {"uri": "file:///t.mlir", "version": 2},
                                            "contentChanges": [{"text": text + "\n// edited\n"}]})
        edited = s.call("textDocument/semanticTokens/full", {"textDocument": {"uri": "file:///t.mlir"}})
    finally:
        code, stderr = s.stop()
    assert code == 0 and "Traceback" not in stderr and "failed" not in stderr, stderr
    assert answer["result"] == {"data": tokens.encode(Document("file:///t.mlir", text))}
    assert edited["result"] == {"data": tokens.encode(Document("file:///t.mlir", text + "\n// edited\n"))}
