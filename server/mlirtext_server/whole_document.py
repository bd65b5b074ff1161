"""Whole-document answers (outline, folding ranges, semantic tokens) of each version.

An editor asks for them right after it opens a file and again and again after
(outline view, breadcrumbs, sticky scroll); on a 10 MB document each is seconds of
Python from scratch. Here each is prepared on the analysis thread once the version's
diagnostics are out (the pieces' part with `warm_up.prepare`, then the answer), in the
order an editor needs them, and kept for that version.
"""
from __future__ import annotations

import asyncio
import gc
import logging
from typing import Callable, Optional

from lsprotocol import types as T

from mlirtext.analysis import outline, tokens, warm_up
from mlirtext.analysis.document import Document
from mlirtext.syntax.gc_pause import gc_paused

from .convert import lsp_symbol
from .protocol import one_line

log = logging.getLogger("mlirtext_server")

#: The answers by kind (the names of `warm_up.PHASES`, prepared in this order).
ANSWERS = {
    "symbols": lambda doc: [lsp_symbol(doc, s) for s in outline.document_symbols(doc)],
    "folds": lambda doc: [T.FoldingRange(start_line=a, end_line=b, kind=kind)
                          for a, b, kind in outline.folding_ranges(doc)],
    "tokens": lambda doc: T.SemanticTokens(data=tokens.encode(doc)),
}


class WholeDocumentAnswers:
    """`pool`: the analysis thread; `version_of(uri)`: the client's newest version of a
    document (None once closed): a preparation stops when its version is no longer that."""

    def __init__(self, pool, version_of: Callable[[str], Optional[int]]):
        self.pool = pool
        self.version_of = version_of
        self.prepared: dict[str, dict] = {}   # uri -> kind -> the preparation of its newest version's answer
        self.answers: dict[str, tuple] = {}   # uri -> (Document, kind -> its answer)

    def prepare(self, doc: Document) -> None:
        """Queue the preparation of every answer of a newly analysed version."""
        loop = asyncio.get_running_loop()
        self.prepared[doc.uri] = {kind: loop.run_in_executor(self.pool, self._prepare_frozen, doc, kind)
                                  for kind in ANSWERS}

    async def answer(self, doc: Document, kind: str):
        """The answer `kind` for `doc`, once its preparation (if under way) is over."""
        preparing = self.prepared.get(doc.uri, {}).get(kind)
        if preparing is not None and not preparing.done():
            await asyncio.shield(preparing)
        return self.answer_of(doc, kind)

    def answer_of(self, doc: Document, kind: str):
        held = self.answers.get(doc.uri)
        if held is None or held[0] is not doc:
            held = self.answers[doc.uri] = (doc, {})
        if kind not in held[1]:
            held[1][kind] = ANSWERS[kind](doc)
        return held[1][kind]

    def forget(self, uri: str) -> None:
        self.prepared.pop(uri, None)
        self.answers.pop(uri, None)

    def _prepare_frozen(self, doc: Document, kind: str) -> None:
        """With the collector paused and what was built frozen, as for the document itself."""
        try:
            with gc_paused():
                if warm_up.prepare(doc, warm_up.PHASES[kind], lambda: self.version_of(doc.uri) != doc.version):
                    self.answer_of(doc, kind)
                gc.freeze()
        except Exception as exc:  # noqa: BLE001 - the request computes what is missing itself
            log.error("preparing %s of %s failed: %s", kind, doc.uri, one_line(exc))
