"""Go to definition on a `loc(...)`: the source lines a location names (an importer's Python file).

The cursor anywhere in a `loc(...)` (after an op, on an argument, or an alias's own
`#loc3 = loc(...)`) names the file locations in it, through `#loc` aliases, names, call sites
(the callee and the caller) and fused locations (each of them). A file is found as written
when absolute, else under each workspace folder and then beside the document; a location whose
file is not there is left out.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Optional
from urllib.parse import unquote, urlparse

from ..ir.locations import file_locations
from .document import Document, Piece

_LOC = re.compile(r"(?<![\w$.%#@!^])loc\(")
_ALIAS = re.compile(r"#[\w$.-]+")
#: A location is on one line; past this much of it, no `loc(` around the cursor is looked for.
_MAX_LOCATION = 4096


@dataclass
class FileLocation:
    """A place in a file on disk: 1-based line and column, as MLIR writes them (column 0: none)."""

    path: str
    line: int
    column: int


def location_aliases(doc: Document, piece: Piece) -> Callable[[str], Optional[str]]:
    """`#loc3` -> the text of its definition (`loc(...)`) in the piece's chunk, or None."""
    aliases = doc.chunk_of(piece).aliases

    def alias_text(name: str) -> Optional[str]:
        found = aliases.get(name)
        value = found[0].parsed.attr_aliases.get(name) if found else None
        return None if value is None else str(value)
    return alias_text


def location_text_at(text: str, offset: int) -> Optional[tuple[int, int]]:
    """(start, end) of the outermost `loc(...)` on `offset`'s line that holds `offset`."""
    line_start = max(text.rfind("\n", 0, offset) + 1, offset - _MAX_LOCATION)
    line_end = text.find("\n", offset)
    line_end = min(len(text) if line_end == -1 else line_end, offset + _MAX_LOCATION)
    for m in _LOC.finditer(text, line_start, line_end):
        if m.start() > offset:
            break
        end = _closing_paren(text, m.end() - 1, line_end)
        if end is not None and offset <= end:
            return m.start(), end + 1
    return None


def location_alias_at(text: str, offset: int) -> Optional[str]:
    """The `#loc3` under `offset` inside a `loc(...)` (the index does not record a location's
    aliases), or None."""
    span = location_text_at(text, offset)
    if span is None:
        return None
    for m in _ALIAS.finditer(text, span[0], span[1]):
        if m.start() <= offset <= m.end():
            return m.group()
    return None


def _closing_paren(text: str, i: int, stop: int) -> Optional[int]:
    """The offset of the `)` that closes the `(` at `i` (parentheses in strings do not count)."""
    depth, in_string = 0, False
    while i < stop:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def source_locations(roots: list, doc: Document, offset: int) -> list[FileLocation]:
    """The files and lines that the `loc(...)` under `offset` names and that exist; [] when the
    cursor is not in a location."""
    span = location_text_at(doc.text, offset)
    piece = doc.piece_at(offset)
    if span is None or piece is None:
        return []
    folders = [*roots, document_folder(doc.uri)]
    found = []
    for frame in file_locations(doc.text[span[0]:span[1]], location_aliases(doc, piece)):
        path = _existing(frame.file, folders)
        if path is not None:
            found.append(FileLocation(path, frame.line, frame.column))
    return found


def document_folder(uri: str) -> Optional[str]:
    """The folder of a document's path, whatever its scheme (`file:`, the `mlirbc:` of a bytecode
    file's text); None for one without a path (`untitled:`)."""
    path = unquote(urlparse(uri).path)
    return os.path.dirname(path) if os.path.isabs(path) else None


def _existing(name: str, folders: list) -> Optional[str]:
    if os.path.isabs(name):
        return name if os.path.isfile(name) else None
    for folder in folders:
        if folder:
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                return os.path.normpath(path)
    return None
