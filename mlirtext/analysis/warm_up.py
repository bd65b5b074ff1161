"""The per-piece work behind the whole-document answers (outline, folds, the index and
semantic tokens), done ahead of the editor's requests.

An editor asks for folding ranges and semantic tokens right after it opens a file;
on a 10 MB document that work is seconds of Python. Done on the analysis thread after
each version is analysed, it lands in the pieces' caches (`ParsedPiece.cache`), so a
request only joins cached pieces, and a new version redoes only the pieces it changed.
"""
from __future__ import annotations

from typing import Callable

from .document import Document
from .outline import piece_folds, piece_symbols
from .tokens import piece_tokens

#: How many pieces are prepared between two checks that the version is still current.
CHECK_EVERY = 64


def prepare(doc: Document, work: Callable, superseded: Callable[[], bool]) -> bool:
    """Run `work(piece)` (one of `PHASES`) on every piece of `doc`; stop early once
    `superseded()` says a newer version is waiting for the analysis thread. True when
    every piece was prepared."""
    for i, piece in enumerate(doc.pieces):
        if i % CHECK_EVERY == 0 and superseded():
            return False
        work(piece)
    return True


#: What to prepare per piece, in order: the outline (asked for first, and fast), the folds,
#: then the semantic tokens (which build each piece's index: most of the work).
PHASES = {"symbols": piece_symbols, "folds": piece_folds, "tokens": piece_tokens}
