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

A big document's per-piece tokens are made after each version's analysis for every client,
also one that declares no semantic tokens (a request for them would otherwise pay the whole
computation: 1.6 s of CPU at 10 MB), in short jobs on the analysis thread: a request that
comes meanwhile waits for one job, not for the whole document.
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

#: Documents of at least this many characters get their semantic tokens made ahead for every
#: client: made on the request they take about 0.15 s of CPU per MB.
TOKENS_AHEAD_CHARS = 1_000_000
#: Pieces encoded per job of that preparation (a few tens of milliseconds of work).
PIECES_PER_JOB = 256


class WholeDocumentAnswers:
    """`pool`: the analysis thread."""

    def __init__(self, pool):
        self.pool = pool
        self.held: dict[str, tuple] = {}   # uri -> (Document, kind -> the future of its answer)
        self.ahead: dict[str, Document] = {}   # uri -> the version whose tokens are being made in jobs

    async def answer(self, doc: Document, kind: str):
        """The answer `kind` for `doc` (a version the analysis finished)."""
        return await asyncio.shield(self._future(doc, kind))

    def prepare(self, doc: Document, kind: str) -> None:
        """Start computing `kind` for `doc` without a request waiting (a failure is logged
        in one line; a request for it then gets the same error)."""
        self._future(doc, kind).add_done_callback(_log_failure)

    def prepare_tokens(self, doc: Document, answer: bool) -> None:
        """After `doc`'s analysis: its semantic tokens made before they are asked for. `answer`:
        the client declared semantic tokens, so the answer itself is made (it asks after
        every open and edit). A big document's pieces are encoded first in short jobs (for
        every client), which stop once a newer version or a close replaces `doc`."""
        if len(doc.text) < TOKENS_AHEAD_CHARS:
            if answer:
                self.prepare(doc, "tokens")
            return
        self.ahead[doc.uri] = doc
        self._encode_from(doc, 0, answer)

    def _encode_from(self, doc: Document, start: int, answer: bool) -> None:
        if self.ahead.get(doc.uri) is not doc:
            return
        if start >= len(doc.pieces):
            del self.ahead[doc.uri]
            if answer:
                self.prepare(doc, "tokens")
            return

        def next_job(job: asyncio.Future) -> None:
            if not job.cancelled() and job.exception() is None:
                self._encode_from(doc, start + PIECES_PER_JOB, answer)
            else:   # (logged; a request for the tokens computes them and gets the error)
                if self.ahead.get(doc.uri) is doc:
                    del self.ahead[doc.uri]
                _log_failure(job)
        try:
            job = asyncio.get_running_loop().run_in_executor(self.pool, _encode_pieces,
                                                             doc.pieces[start:start + PIECES_PER_JOB])
        except RuntimeError:   # the pool is shut down: the server is exiting
            self.ahead.pop(doc.uri, None)
            return
        job.add_done_callback(next_job)

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
        self.ahead.pop(uri, None)

    def _compute_frozen(self, doc: Document, kind: str):
        """With the collector paused and what was built frozen, as for the document itself."""
        with gc_paused():
            answer = ANSWERS[kind](doc)
            gc.freeze()
        return answer


def _encode_pieces(pieces) -> None:
    """The pieces' semantic tokens, into their caches (with the collector paused and what was
    built frozen, as for the document itself)."""
    with gc_paused():
        for piece in pieces:
            tokens.piece_tokens_json(piece)
        gc.freeze()


def _log_failure(future: asyncio.Future) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("preparing a whole-document answer failed: %s", one_line(future.exception()))
