"""The editor's formatting: the edits that make a document, or the whole ops a range touches,
look as `mlirtext format` prints them (`syntax/formatter.py`). A document that does not parse gets
no edits (its diagnostics already say why), and neither does one already formatted.

Edits are (start, end, new text) in offsets of the document's text: one edit over the part that
changes (the common beginning and end are left alone, so the editor keeps the cursor and folds
there).
"""
from __future__ import annotations

from typing import Optional

from ..dialects.registry import Registry
from ..syntax.formatter import format_range, format_text
from ..syntax.wrapping import DEFAULT_WIDTH


def document_edits(text: str, filename: str = "<document>", registry: Optional[Registry] = None,
                   width: int = DEFAULT_WIDTH) -> list[tuple[int, int, str]]:
    formatted = format_text(text, filename, width, registry)
    return _changed(text, 0, len(text), formatted.text) if formatted.ok else []


def range_edits(text: str, start: int, end: int, filename: str = "<document>",
                registry: Optional[Registry] = None, width: int = DEFAULT_WIDTH) -> list[tuple[int, int, str]]:
    found = format_range(text, start, end, filename, width, registry)
    if found is None:
        return []
    begin, finish, new = found
    return _changed(text, begin, finish, new)


def _changed(text: str, start: int, end: int, new: str) -> list[tuple[int, int, str]]:
    """One edit replacing text[start:end] with `new`, cut down to the part that differs."""
    old = text[start:end]
    if old == new:
        return []
    head = 0
    limit = min(len(old), len(new))
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < limit - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return [(start + head, end - tail, new[head:len(new) - tail])]
