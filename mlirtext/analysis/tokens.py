"""Semantic tokens: ops (with their dialect as a modifier), values, block labels,
symbols, aliases, types, attribute kinds, strings and numbers, in LSP's relative
encoding (UTF-16 columns)."""
from __future__ import annotations

import re

from ..ir.core import BlockArgument
from .document import Document
from .index import ALIAS, BLOCK, OP, SYMBOL, VALUE, piece_index

TOKEN_TYPES = ["keyword", "variable", "parameter", "label", "function", "macro", "type", "number", "string"]
#: Dialects as modifiers: a theme can colour `stablehlo.*` and `llvm.*` ops apart.
DIALECT_MODIFIERS = ["stablehlo", "mhlo", "chlo", "tosa", "linalg", "tensor", "arith", "math", "scf", "memref",
                     "cf", "llvm", "func", "builtin"]
TOKEN_MODIFIERS = ["declaration"] + DIALECT_MODIFIERS

_TYPE = {k: TOKEN_TYPES.index(k) for k in TOKEN_TYPES}
_DIALECT_BIT = {d: 1 << (i + 1) for i, d in enumerate(DIALECT_MODIFIERS)}
#: Spelled-out types, attributes, strings and numbers, found in the text (the IR keeps
#: no spans for them); IR entries win where both match.
_LEXICAL = re.compile(
    r"(?P<comment>//[^\n]*)|"
    r"(?P<type>(?:tensor|memref|vector|complex)<[^<>\n]*(?:<[^<>\n]*>[^<>\n]*)*>|"
    r"!llvm\.ptr|\b(?:[iuf]\d+|si\d+|ui\d+|bf16|index)\b)"
    r"|(?P<macro>\b(?:dense|dense_resource|affine_map|array|sparse)(?=<)|#[a-z_]+\.[\w.]+(?=<))"
    r"|(?P<string>\"(?:[^\"\\\n]|\\.)*\")"
    r"|(?P<number>(?<![\w%#^@.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b)")


def tokens(doc: Document) -> list[tuple[int, int, int, int]]:
    """(start, end, type index, modifier bits), sorted, one line each, not overlapping."""
    found = []
    for piece in doc.pieces:
        for e in piece_index(piece).entries:
            start, end = piece.base + e.start, piece.base + e.end
            mods = 1 if e.is_def else 0
            if e.kind == OP:
                kind = "keyword"
                mods |= _DIALECT_BIT.get(e.obj.name.split(".", 1)[0], 0)
            elif e.kind == VALUE:
                kind = "parameter" if isinstance(e.obj, BlockArgument) else "variable"
            elif e.kind == BLOCK:
                kind = "label"
            elif e.kind == SYMBOL:
                kind = "function"
            elif e.kind == ALIAS:
                kind = "macro"
            else:
                continue
            found.append((start, end, _TYPE[kind], mods))
    taken = sorted(found)
    types = []
    covered_starts = [t[0] for t in taken]
    import bisect
    for m in _LEXICAL.finditer(doc.text):
        if m.lastgroup == "comment":
            continue
        i = bisect.bisect_right(covered_starts, m.start()) - 1
        if i >= 0 and taken[i][1] > m.start():
            continue
        if i + 1 < len(taken) and taken[i + 1][0] < m.end():
            continue
        types.append((m.start(), m.end(), _TYPE[m.lastgroup], 0))
    out, last_end = [], -1
    for t in sorted(taken + types):
        if t[0] >= last_end and "\n" not in doc.text[t[0]:t[1]]:
            out.append(t)
            last_end = t[1]
    return out


def encode(doc: Document) -> list[int]:
    """LSP's flat encoding: per token (delta line, delta start, length, type, modifiers)."""
    data: list[int] = []
    prev_line, prev_col = 0, 0
    for start, end, kind, mods in tokens(doc):
        line, col = doc.lines.position(start)
        _, end_col = doc.lines.position(end)
        data += [line - prev_line, col - prev_col if line == prev_line else col, end_col - col, kind, mods]
        prev_line, prev_col = line, col
    return data
