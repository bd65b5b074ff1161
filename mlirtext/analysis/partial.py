"""The diagnostics of some of a document's pieces, parsing as few of the others as needed.

A piece's diagnostics depend on its own text and on three kinds of other pieces:
those before it that define aliases (their aliases are in scope when it is
parsed), those that define the symbols it uses (verification declares them), and
an earlier one that defines a symbol it defines too ("redefinition of symbol").
Which pieces those are is known only once they are parsed, but a superset is
cheap to find in the text:

* an alias definition is `#name` or `!name`, then `=`: a piece without that
  pattern defines no alias;
* a piece that defines symbol `f` spells `f` as a whole word (`@f`,
  `sym_name = "f"`), or spells it inside a string (a name with other characters
  than a word's), or hides it behind an escape (a backslash) or an alias.

`piece_diagnostics(..., lo, hi)` parses pieces lo..hi-1 and that superset, and
gives what `Document.diagnostics` holds for pieces lo..hi-1, in the same order.
The language server computes half of a newly opened file's diagnostics this way
in a worker process (`open_worker.py`).
"""
from __future__ import annotations

import re

from .document import ANALYSIS_LOCK, DocDiagnostic, chunk_diagnostics, parse_chunk_pieces, symbol_table

#: `#name =` / `!name =` with only whitespace or comments between: an alias definition.
_ALIAS_DEFINITION = re.compile(r"[#!][A-Za-z_][\w$.\-]*(?:\s|//[^\n]*)*=")
#: A maximal run of the characters of a bare symbol name (`@f.g-1`): `@name` spells one such word.
_WORD = re.compile(r"[\w$.\-]+")


def piece_diagnostics(text: str, filename: str, layout, lo: int, hi: int) -> list[DocDiagnostic]:
    """The diagnostics of pieces lo..hi-1 (counted over the whole document, chunk after
    chunk) of `text`, whose layout is `layout` (`document.layout_of(text)`)."""
    out: list[DocDiagnostic] = []
    first_of_chunk = 0
    with ANALYSIS_LOCK:
        for index, (_, _, bounds) in enumerate(layout):
            first, last = max(lo - first_of_chunk, 0), min(hi - first_of_chunk, len(bounds))
            first_of_chunk += len(bounds)
            if first < last:
                out.extend(_chunk_part(text, filename, index, bounds, first, last))
    return out


def _chunk_part(text: str, filename: str, index: int, bounds, first: int, last: int) -> list[DocDiagnostic]:
    """The diagnostics of pieces first..last-1 of one chunk."""
    aliases = {i for i, (s, e) in enumerate(bounds) if _ALIAS_DEFINITION.search(text, s, e)}
    wanted = set(range(first, last)) | aliases
    pieces, _ = parse_chunk_pieces(text, filename, index, bounds, wanted)
    reported = (bounds[first][0], bounds[last - 1][1])
    names: set = set()
    for piece in pieces:
        if reported[0] <= piece.base < reported[1]:
            names.update(piece.parsed.roots)
            names.update(name for name, _ in piece.parsed.symbols)
    if names:
        more = _may_define(text, bounds, names, wanted, aliases)
        if more:
            pieces, _ = parse_chunk_pieces(text, filename, index, bounds, wanted | more)
    return chunk_diagnostics(pieces, symbol_table(pieces), reported)


def _may_define(text: str, bounds, names: set, wanted: set, aliases: set) -> set:
    """Indices of the pieces not in `wanted` that may define one of `names`: all of them
    when an alias may spell a name."""
    words = {n for n in names if _WORD.fullmatch(n)}
    others = [n for n in names if n not in words]

    def mentions(start: int, end: int) -> bool:
        return (text.find("\\", start, end) != -1 or any(text.find(n, start, end) != -1 for n in others)
                or not words.isdisjoint(_WORD.findall(text, start, end)))

    if any(mentions(*bounds[i]) for i in aliases):
        return set(range(len(bounds))) - wanted
    return {i for i, (s, e) in enumerate(bounds) if i not in wanted and mentions(s, e)}
