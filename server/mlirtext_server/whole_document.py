"""Whole-document answers (outline, folding ranges, semantic tokens) of each version.

An editor asks for them right after it opens a file and again and again after
(outline view, breadcrumbs, sticky scroll, every edit); on a 10 MB document each is
seconds of Python from scratch. Here the first request of a version computes its answer
on the analysis thread, after that version's analysis and never holding up the event
loop (hover stays quick meanwhile), from per-piece parts cached with the pieces' parses
(`outline.piece_symbols`, `outline.piece_folds`, `tokens.piece_tokens`): a new version
recomputes only the pieces it changed. The answer is kept for the version. Semantic
tokens, which a client that declares them asks for after every open and edit, are
started right after the analysis of each version (`prepare_tokens`), so the request finds
them ready or being made; the other answers are computed for a document only when asked.
The semantic tokens answer is JSON text joined from per-piece JSON (`tokens.encode_json`).

A big document's per-piece tokens are made as part of building each version, for every
client, also one that declares no semantic tokens (a request for them would otherwise pay
the whole computation: 1.6 s of CPU at 10 MB): `tokens_in_build`, called on the analysis
thread before the version's diagnostics are published (on a first open whose diagnostics
the worker process shares, those go out before the build). A request that comes during the
build waits for it, as every request does; a request after it finds the pieces encoded, and
no job of theirs competes with the answers that follow (documentSymbol). The build gets
longer by their time (0.15 s of CPU per MB on a first open); a new version encodes only the
pieces whose text changed.
"""
from __future__ import annotations

import asyncio
import gc
import logging

from lsprotocol import types as T

from mlirtext.analysis import outline, tokens
from mlirtext.analysis.document import Document
from mlirtext.syntax.gc_pause import gc_paused

from .convert import lsp_symbol
from .protocol import PreEncoded, one_line

log = logging.getLogger("mlirtext_server")

#: The answers by kind.
ANSWERS = {
    "symbols": lambda doc: [lsp_symbol(doc, s) for s in outline.document_symbols(doc)],
    "folds": lambda doc: [T.FoldingRange(start_line=a, end_line=b, kind=kind)
                          for a, b, kind in outline.folding_ranges(doc)],
    "tokens": lambda doc: PreEncoded(tokens.encode_json(doc)),
}

#: Documents of at least this many characters get their pieces' semantic tokens made in their
#: build for every client: made on the request they take about 0.15 s of CPU per MB.
TOKENS_IN_BUILD_CHARS = 1_000_000


def tokens_in_build(doc: Document) -> None:
    """Part of building `doc` (on the analysis thread, the collector paused): a big document's
    pieces' semantic tokens, into their caches. A failure is logged in one line and does not
    cost the build; a request for the tokens then computes them and gets the error."""
    if len(doc.text) < TOKENS_IN_BUILD_CHARS:
        return
    try:
        tokens.encode_pieces(doc)
    except Exception as exc:  # noqa: BLE001
        log.error("making the semantic tokens of %s failed: %s", doc.uri, one_line(exc))


class WholeDocumentAnswers:
    """`pool`: the analysis thread."""

    def __init__(self, pool):
        self.pool = pool
        self.held: dict[str, tuple] = {}   # uri -> (Document, kind -> the future of its answer)

    async def answer(self, doc: Document, kind: str):
        """The answer `kind` for `doc` (a version the analysis finished)."""
        return await asyncio.shield(self._future(doc, kind))

    def prepare(self, doc: Document, kind: str) -> None:
        """Start computing `kind` for `doc` without a request waiting (a failure is logged
        in one line; a request for it then gets the same error)."""
        self._future(doc, kind).add_done_callback(_log_failure)

    def prepare_tokens(self, doc: Document, answer: bool) -> None:
        """After `doc`'s analysis: `answer`: the client declared semantic tokens, so their
        answer is made before it is asked for (it asks after every open and edit); a big
        document's is joined from the pieces' tokens its build made."""
        if answer:
            self.prepare(doc, "tokens")

    def _future(self, doc: Document, kind: str) -> asyncio.Future:
        held = self.held.get(doc.uri)
        if held is None or held[0] is not doc:
            held = self.held[doc.uri] = (doc, {})
        future = held[1].get(kind)
        if future is None:
            future = held[1][kind] = asyncio.get_running_loop().run_in_executor(
                self.pool, self._compute_frozen, doc, kind)
        return future

    def forget(self, uri: str) -> None:
        self.held.pop(uri, None)

    def _compute_frozen(self, doc: Document, kind: str):
        """With the collector paused and what was built frozen, as for the document itself."""
        with gc_paused():
            answer = ANSWERS[kind](doc)
            gc.freeze()
        return answer


def _log_failure(future: asyncio.Future) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("preparing a whole-document answer failed: %s", one_line(future.exception()))
