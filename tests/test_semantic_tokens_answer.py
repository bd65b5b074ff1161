"""The semantic tokens answer as JSON text joined from per-piece JSON (`tokens.encode_json`),
prepared after each version's analysis for a client that declares semantic tokens: the same
integers as `tokens.encode` on corpus files, whole and by range, and through the real server."""
from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from mlirtext.analysis import tokens
from mlirtext.analysis.document import Document
from mlirtext_server import whole_document
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


def test_a_big_documents_tokens_are_made_ahead_in_jobs_for_every_client(monkeypatch):
    """Over TOKENS_AHEAD_CHARS: the pieces are encoded in jobs of PIECES_PER_JOB after the
    analysis even for a client that declares no semantic tokens (no answer is made for it);
    a newer version of the document stops the older one's jobs, and its answer (the client
    declares tokens) is the encoding."""
    monkeypatch.setattr(whole_document, "TOKENS_AHEAD_CHARS", 1000)
    monkeypatch.setattr(whole_document, "PIECES_PER_JOB", 2)
    texts = [p.read_text() for p in EXAMPLES]
    old = Document("file:///big.mlir", "".join(texts))
    new = Document("file:///big.mlir", "".join(reversed(texts)) + "\n// edited\n")
    jobs = []

    class CountingPool(ThreadPoolExecutor):
        def submit(self, fn, *args, **kwargs):
            jobs.append(args[1] if fn.__name__ == "_compute_frozen" else
                        ("old" if any(args[0][0] is p for p in old.pieces) else "new", len(args[0])))
            return super().submit(fn, *args, **kwargs)

    async def made_ahead(doc, answer, then=None):
        answers = WholeDocumentAnswers(CountingPool(1))
        answers.prepare_tokens(doc, answer)
        if then is not None:
            answers.prepare_tokens(then, True)
        for _ in range(500):
            if not answers.ahead:
                break
            await asyncio.sleep(0.01)
        return answers, then and await answers.answer(then, "tokens")

    answers, _ = asyncio.run(made_ahead(old, False))
    assert len(old.pieces) > 4 and jobs == [("old", 2)] * (len(old.pieces) // 2) + [("old", 1)] * (len(old.pieces) % 2)
    assert all("tokens_json" in p.parsed.cache for p in old.pieces) and not answers.held
    jobs.clear()
    _, answer = asyncio.run(made_ahead(old, False, then=new))
    assert jobs[0] == ("old", 2) and "old" not in {job[0] for job in jobs[1:]} and jobs[-1] == "tokens"
    assert jobs.count("tokens") == 1 and json.loads(answer.json) == {"data": tokens.encode(new)}


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
