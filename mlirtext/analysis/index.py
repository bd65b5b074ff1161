"""What is at an offset: an op name, an SSA value, a block label, a symbol, an alias, a type.

Built per parsed piece from the parser's `AsmState` (uses, symbol and alias
references) and the IR's own spans (definitions), once, and cached on the piece;
a query is a binary search over the piece's entries.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Optional

from ..ir.core import Operation
from .document import Document, ParsedPiece, Piece

VALUE, BLOCK, SYMBOL, ALIAS, OP, TYPE, ATTR = "value", "block", "symbol", "alias", "op", "type", "attr"


@dataclass
class Entry:
    """A token in a piece (local offsets) and the thing it names."""

    start: int
    end: int
    kind: str
    obj: object          # Value, Block, symbol name, alias name ("#map"), Operation
    is_def: bool


@dataclass
class Target:
    """An entry found at a document offset."""

    kind: str
    obj: object
    is_def: bool
    start: int           # document offsets of the token
    end: int
    piece: Piece


class PieceIndex:
    def __init__(self, parsed: ParsedPiece):
        found = entry_tuples(parsed)
        self.ops: list[Operation] = [obj for _, _, kind, obj, _ in found if kind == OP]
        entries = [Entry(*t) for t in found]
        entries.sort(key=lambda e: (e.start, e.end))
        self.entries = entries
        self.starts = [e.start for e in entries]
        self.by_obj: dict[int, list[Entry]] = {}
        for e in entries:
            key = id(e.obj) if e.kind in (VALUE, BLOCK, OP) else (e.kind, e.obj)
            self.by_obj.setdefault(key, []).append(e)

    def at(self, offset: int) -> Optional[Entry]:
        """The entry under `offset`, or ending right at it (the cursor just after a name)."""
        i = bisect_right(self.starts, offset) - 1
        touching = None
        while i >= 0:
            e = self.entries[i]
            if e.start <= offset < e.end:
                return e
            if e.end == offset and touching is None:
                touching = e
            if offset - e.start > 4096:  # no token is that long; stop looking back
                break
            i -= 1
        return touching

    def entries_of(self, kind: str, obj) -> list[Entry]:
        key = id(obj) if kind in (VALUE, BLOCK, OP) else (kind, obj)
        return self.by_obj.get(key, [])


def entry_tuples(parsed: ParsedPiece) -> list[tuple]:
    """(start, end, kind, obj, is_def) of the piece's entries, unsorted: uses from the
    parser's state, then definitions op by op in walk order. Plain tuples: semantic tokens
    of a big document need these alone, without the index's objects and lookup tables."""
    state = parsed.result.state
    found = [(start, end, VALUE, value, False) for start, end, value in state.uses]
    found += [(start, end, BLOCK, block, False) for start, end, block in state.block_uses]
    found += [(start, end, SYMBOL, names[0], False) for start, end, names in state.symbol_uses]
    found += [(span.start, span.end, ALIAS, name, True) for name, span in state.alias_defs.items()]
    found += [(start, end, ALIAS, name, False) for start, end, name in state.alias_uses]
    module = parsed.module
    if module is None:
        return found
    append = found.append
    symbol_defs = _symbol_defs(parsed)
    source = parsed.source
    for op in module.walk():
        span = op.name_span
        if span is not None and span.source is source:
            append((span.start, span.end, OP, op, True))
        for r in op.results:
            span = r.span
            if span is not None and span.source is source:
                append((span.start, span.end, VALUE, r, True))
        name = op.sym_name
        if name is not None:
            where = symbol_defs.get(id(op)) or _find_symbol_token(op, name)
            if where is not None:
                append((where[0], where[1], SYMBOL, name, True))
        for region in op.regions:
            for block in region.blocks:
                span = block.span
                if span is not None and span.source is source:
                    append((span.start, span.end, BLOCK, block, True))
                for arg in block.arguments:
                    span = arg.span
                    if span is not None and span.source is source:
                        append((span.start, span.end, VALUE, arg, True))
    return found


def symbol_name_span(parsed: ParsedPiece, op: Operation) -> Optional[tuple[int, int]]:
    """Where a symbol op's `@name` is spelled (offsets local to the piece), without
    building the piece's index (the outline of a big document needs only this)."""
    return _symbol_defs(parsed).get(id(op)) or _find_symbol_token(op, op.sym_name)


def _symbol_defs(parsed: ParsedPiece) -> dict:
    """id(op) -> (start, end) of the symbol names the parser recorded, per piece."""
    found = parsed.cache.get("symbol_defs")
    if found is None:
        found = parsed.cache["symbol_defs"] = {id(op): (start, end)
                                               for start, end, op in parsed.result.state.symbol_defs}
    return found


def _find_symbol_token(op: Operation, name: str) -> Optional[tuple[int, int]]:
    """Where `@name` is spelled in an op that did not record it (llvm.func, memref.global)."""
    if op.span is None:
        return None
    text = op.span.source.text
    start = op.name_span.end if op.name_span is not None else op.span.start
    for spelled in (f"@{name}", f'@"{name}"'):
        m = re.compile(re.escape(spelled) + r"(?![\w$.])").search(text, start, op.span.end)
        if m:
            return m.start(), m.end()
    return None


def piece_index(piece: Piece) -> PieceIndex:
    parsed = piece.parsed
    index = parsed.cache.get("index")
    if index is None:
        index = parsed.cache["index"] = PieceIndex(parsed)
    return index


def target_at(doc: Document, offset: int) -> Optional[Target]:
    """What the token at `offset` names; a type spelled there when no IR entry is."""
    piece = doc.piece_at(offset)
    if piece is None:
        return None
    entry = piece_index(piece).at(offset - piece.base)
    if entry is not None:
        return Target(entry.kind, entry.obj, entry.is_def, piece.base + entry.start, piece.base + entry.end,
                      piece)
    found = attr_text_at(doc.text, offset)
    if found is not None:
        start, end = found
        return Target(ATTR, doc.text[start:end], False, start, end, piece)
    found = type_text_at(doc.text, offset)
    if found is not None:
        start, end = found
        return Target(TYPE, doc.text[start:end], False, start, end, piece)
    return None


_ATTR_KEYWORD = re.compile(r"\b(?:dense|affine_map)<")


def _closing_angle(text: str, i: int, stop: int) -> int:
    """The offset of the `>` that closes the `<` at `i` (an arrow's `->` is not one), or `stop`."""
    depth = 0
    while i < stop:
        c = text[i]
        if c == "<":
            depth += 1
        elif c == ">" and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                break
        i += 1
    return i


def attr_text_at(text: str, offset: int) -> Optional[tuple[int, int]]:
    """(start, end) of the `dense<...>` / `affine_map<...>` keyword or map under `offset`
    (a dense literal's values are not included: they can be megabytes)."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end == -1 else line_end
    for m in _ATTR_KEYWORD.finditer(text, max(line_start, offset - 4096), min(line_end, offset + 4096)):
        if m.group().startswith("dense"):
            if m.start() <= offset < m.end():
                return m.start(), m.end() - 1
            continue
        i = _closing_angle(text, m.end() - 1, line_end)
        if m.start() <= offset <= i:
            return m.start(), i + 1
    return None


# -- types spelled in the text -------------------------------------------------------------
_SHAPED = re.compile(r"(?:tensor|memref|vector|complex|!llvm\.\w+)<")
_SCALAR = re.compile(r"\b(?:[iuf]\d+|si\d+|ui\d+|bf16|tf32|index|f8E\w+|f4E\w+|f6E\w+|none)\b")


def type_text_at(text: str, offset: int) -> Optional[tuple[int, int]]:
    """(start, end) of the type written around `offset`, from its line alone."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end == -1 else line_end
    best = None
    for m in _SHAPED.finditer(text, line_start, line_end):
        i = _closing_angle(text, m.end() - 1, line_end)
        if m.start() <= offset <= i and (best is None or best[0] < m.start()):
            best = (m.start(), i + 1)
    if best is not None:
        return best
    for m in _SCALAR.finditer(text, line_start, line_end):
        if m.start() <= offset <= m.end():
            return m.start(), m.end()
    return None


def value_def_entry(index: PieceIndex, value) -> Optional[Entry]:
    for e in index.entries_of(VALUE, value):
        if e.is_def:
            return e
    return None
