"""Go to definition, find references and rename: values, blocks, symbols, aliases; definition
also on a `loc(...)` (the source file it names: `source_links`).

Values and blocks live in one piece (functions are isolated from above); aliases
in one chunk; symbols in the chunk's symbol table and, for a symbol a chunk uses
but does not define, in the other open documents and the workspace's files.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Union

from ..ir.attributes import format_symbol
from .document import Chunk, Document, Piece
from .index import ALIAS, BLOCK, SYMBOL, VALUE, piece_index, target_at
from .source_links import FileLocation, location_alias_at, source_locations
from .workspace import Workspace


@dataclass
class Location:
    doc: Document
    start: int
    end: int


def definition(ws: Workspace, doc: Document, offset: int) -> list[Union[Location, FileLocation]]:
    """Where the thing at `offset` is defined; in a `loc(...)`, the source lines it names (when
    none of its files is there, an alias in it still leads to the alias's definition)."""
    found = source_locations(ws.roots, doc, offset)
    if found:
        return found
    target = target_at(doc, offset)
    if target is None:
        alias, piece = location_alias_at(doc.text, offset), doc.piece_at(offset)
        return _alias_definition(doc, piece, alias) if alias and piece else []
    if target.kind in (VALUE, BLOCK):
        return [Location(doc, *r) for r in _piece_ranges(target.piece, target.kind, target.obj, defs=True)]
    if target.kind == ALIAS:
        return _alias_definition(doc, target.piece, target.obj)
    if target.kind == SYMBOL:
        found = symbol_definition(ws, doc, doc.chunk_of(target.piece), target.obj)
        return [found] if found is not None else []
    return []


def _alias_definition(doc: Document, piece: Piece, name: str) -> list[Location]:
    found = doc.chunk_of(piece).aliases.get(name)
    if found is None:
        return []
    home, span = found
    return [Location(doc, home.base + span.start, home.base + span.end)]


def symbol_definition(ws: Workspace, doc: Document, chunk: Chunk, name: str) -> Optional[Location]:
    """Where `@name` is defined: the chunk's own table first, then other documents."""
    loc = _chunk_symbol_def(doc, chunk, name)
    if loc is not None:
        return loc
    for other in ws.documents(containing="@" + name):
        if other is doc or other.uri == doc.uri:
            continue
        for c in other.chunks:
            loc = _chunk_symbol_def(other, c, name)
            if loc is not None:
                return loc
    return None


def _chunk_symbol_def(doc: Document, chunk: Chunk, name: str) -> Optional[Location]:
    entry = chunk.symbols.get(name)
    if entry is None:
        return None
    piece, op = entry
    ranges = _piece_ranges(piece, SYMBOL, name, defs=True)
    if ranges:
        return Location(doc, *ranges[0])
    return Location(doc, *doc.op_range(piece, op))


def _piece_ranges(piece: Piece, kind: str, obj, defs: Optional[bool] = None) -> list[tuple[int, int]]:
    """Document ranges of the entries naming `obj` in a piece (only defs / only uses)."""
    out = []
    for e in piece_index(piece).entries_of(kind, obj):
        if defs is None or e.is_def == defs:
            out.append((piece.base + e.start, piece.base + e.end))
    return out


def references(ws: Workspace, doc: Document, offset: int, include_declaration: bool = True) -> list[Location]:
    target = target_at(doc, offset)
    if target is None:
        return []
    keep = None if include_declaration else False
    if target.kind in (VALUE, BLOCK):
        return [Location(doc, *r) for r in _piece_ranges(target.piece, target.kind, target.obj, keep)]
    if target.kind == ALIAS:
        chunk = doc.chunk_of(target.piece)
        return [Location(doc, *r) for p in chunk.pieces for r in _piece_ranges(p, ALIAS, target.obj, keep)]
    if target.kind == SYMBOL:
        return symbol_references(ws, doc, doc.chunk_of(target.piece), target.obj, include_declaration)
    return []


def symbol_references(ws: Workspace, doc: Document, chunk: Chunk, name: str,
                      include_declaration: bool = True) -> list[Location]:
    """References in the defining chunk, and in every chunk (any document) that uses the
    symbol without defining it: those resolve to the same definition across files."""
    definition_loc = symbol_definition(ws, doc, chunk, name)
    out: list[Location] = []
    docs = [doc] + [d for d in ws.documents(containing="@" + name) if d.uri != doc.uri]
    for d in docs:
        for c in d.chunks:
            defines = name in c.symbols
            is_home = definition_loc is not None and d is definition_loc.doc and defines and \
                _chunk_symbol_def(d, c, name).start == definition_loc.start
            if not (is_home or (not defines and _uses(c, name)) or (d is doc and c is chunk)):
                continue
            for p in c.pieces:
                if not _may_name(p, name):
                    continue
                for e in piece_index(p).entries_of(SYMBOL, name):
                    if e.is_def and not include_declaration:
                        continue
                    out.append(Location(d, p.base + e.start, p.base + e.end))
    return out


def _may_name(piece, name: str) -> bool:
    """Whether a piece can hold a use or a definition of symbol `name`, without building its
    index (a big document's pieces mostly cannot): a name is spelled as it is unless a
    quoted spelling escapes a character."""
    text = piece.parsed.text
    return name in piece.parsed.roots or name in text or "\\" in text


def _uses(chunk: Chunk, name: str) -> bool:
    return any(name in p.parsed.roots for p in chunk.pieces)


# -- rename -----------------------------------------------------------------------------
_NAME = {VALUE: re.compile(r"[A-Za-z_$.\-][\w$.\-]*|\d+"), BLOCK: re.compile(r"[A-Za-z_$.\-][\w$.\-]*|\d+"),
         ALIAS: re.compile(r"[A-Za-z_$.\-][\w$.\-]*"), SYMBOL: re.compile(r".+")}
_SIGIL = {VALUE: "%", BLOCK: "^", SYMBOL: "@"}


def prepare_rename(doc: Document, offset: int) -> Optional[tuple[int, int, str]]:
    target = target_at(doc, offset)
    if target is None or target.kind not in _NAME:
        return None
    return target.start, target.end, doc.text[target.start:target.end]


def rename(ws: Workspace, doc: Document, offset: int, new_name: str) -> Union[str, dict]:
    """{uri: [(start, end, new text)]}, or a message saying why the rename cannot be done."""
    target = target_at(doc, offset)
    if target is None or target.kind not in _NAME:
        return "nothing to rename here: place the cursor on an SSA value, block label, symbol or alias"
    kind = target.kind
    sigil = target.obj[0] if kind == ALIAS else _SIGIL[kind]
    bare = new_name[1:] if new_name.startswith(sigil) else new_name
    if not _NAME[kind].fullmatch(bare):
        return f"'{new_name}' is not a valid {kind} name"
    locations = references(ws, doc, offset, include_declaration=True)
    edits: dict[str, list] = {}
    seen = set()
    for loc in locations:
        key = (loc.doc.uri, loc.start, loc.end)
        if key in seen:
            continue
        seen.add(key)
        old = loc.doc.text[loc.start:loc.end]
        if kind == VALUE:
            suffix = old[old.index("#"):] if "#" in old else ""  # `%x#1`: keep the result number
            text = f"%{bare}{suffix}"
        elif kind == BLOCK:
            text = f"^{bare}"
        elif kind == SYMBOL:
            rest = old[old.index("::"):] if "::" in old else ""  # `@a::@b`: rename the root
            text = format_symbol(bare) + rest
        else:
            text = sigil + bare
        edits.setdefault(loc.doc.uri, []).append((loc.start, loc.end, text))
    return edits
