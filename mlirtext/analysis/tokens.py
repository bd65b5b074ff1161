"""Semantic tokens: ops (with their dialect as a modifier), values, block labels,
symbols, aliases, types, attribute kinds, strings and numbers, in LSP's relative
encoding (UTF-16 columns)."""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import Optional

from ..ir.core import BlockArgument
from .document import Document
from .index import ALIAS, BLOCK, OP, SYMBOL, VALUE, entry_tuples

TOKEN_TYPES = ["keyword", "variable", "parameter", "label", "function", "macro", "type", "number", "string"]
#: Dialects as modifiers: a theme can colour `stablehlo.*` and `llvm.*` ops apart.
DIALECT_MODIFIERS = ["stablehlo", "mhlo", "chlo", "tosa", "linalg", "tensor", "arith", "math", "scf", "memref",
                     "cf", "llvm", "func", "builtin"]
TOKEN_MODIFIERS = ["declaration"] + DIALECT_MODIFIERS

_TYPE = {k: TOKEN_TYPES.index(k) for k in TOKEN_TYPES}
_DIALECT_BIT = {d: 1 << (i + 1) for i, d in enumerate(DIALECT_MODIFIERS)}
_KEYWORD, _VARIABLE, _PARAMETER = _TYPE["keyword"], _TYPE["variable"], _TYPE["parameter"]
#: The other entry kinds with a token type (types and attributes come from the text).
_KIND_TYPE = {BLOCK: _TYPE["label"], SYMBOL: _TYPE["function"], ALIAS: _TYPE["macro"]}
#: Spelled-out types, attributes, strings and numbers, found in the text (the IR keeps
#: no spans for them); IR entries win where both match.
#: The leading lookahead lists every alternative's first character: positions that cannot
#: start a token fail at once (about twice as fast over a big document).
_LEXICAL = re.compile(
    r"(?=[/tmvc!iufsbda#\"\-0-9])(?:"
    r"(?P<comment>//[^\n]*)|"
    r"(?P<type>(?:tensor|memref|vector|complex)<[^<>\n]*(?:<[^<>\n]*>[^<>\n]*)*>|"
    r"!llvm\.ptr|\b(?:[iuf]\d+|si\d+|ui\d+|bf16|index)\b)"
    r"|(?P<macro>\b(?:dense|dense_resource|affine_map|array|sparse)(?=<)|#[a-z_]+\.[\w.]+(?=<))"
    r"|(?P<string>\"(?:[^\"\\\n]|\\.)*\")"
    r"|(?P<number>(?<![\w%#^@.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\b))")


def piece_tokens(piece) -> tuple[list[int], int, int]:
    """The piece's tokens in LSP's encoding as if the piece were the whole text, with the
    (line, UTF-16 column) of its last token; cached with the piece's parse, so a new
    version of a document re-encodes only the pieces whose text changed."""
    cached = piece.parsed.cache.get("tokens")
    if cached is None:
        cached = piece.parsed.cache["tokens"] = _encode_text(piece.parsed.text, _piece_entries(piece))
    return cached


def _piece_entries(piece) -> list[tuple[int, int, int, int]]:
    """(start, end, type index, modifier bits) of the IR's entries, local to the piece:
    from the index's tuples (building the index itself would double the time)."""
    found = []
    append = found.append
    for start, end, kind, obj, is_def in entry_tuples(piece.parsed):
        mods = 1 if is_def else 0
        if kind == VALUE:
            append((start, end, _PARAMETER if isinstance(obj, BlockArgument) else _VARIABLE, mods))
        elif kind == OP:
            append((start, end, _KEYWORD, mods | _DIALECT_BIT.get(obj.name.split(".", 1)[0], 0)))
        elif kind in _KIND_TYPE:
            append((start, end, _KIND_TYPE[kind], mods))
    return found


def _encode_text(text: str, taken: list) -> tuple[list[int], int, int]:
    """IR entries (`taken`) plus the lexical tokens of `text` they leave free, sorted, one
    line each, not overlapping, encoded. Lines are walked forward once (no search per token)."""
    taken = sorted(taken)
    covered_starts = [t[0] for t in taken]
    count = len(taken)
    found = list(taken)
    append = found.append
    for m in _LEXICAL.finditer(text):
        group = m.lastgroup
        if group == "comment":
            continue
        start, end = m.span()
        i = bisect_right(covered_starts, start)
        if i and taken[i - 1][1] > start or i < count and covered_starts[i] < end:
            continue
        append((start, end, _TYPE[group], 0))
    found.sort()   # two sorted runs: one merge
    ascii_text = text.isascii()
    data: list[int] = []
    line, line_start, newline = 0, 0, text.find("\n")
    prev_line, prev_col, last_end = 0, 0, -1
    for start, end, kind, mods in found:
        if start < last_end:
            continue
        while 0 <= newline < start:
            line, line_start = line + 1, newline + 1
            newline = text.find("\n", line_start)
        if 0 <= newline < end:   # a token across a line end: LSP tokens are one line each
            continue
        if ascii_text:
            col, length = start - line_start, end - start
        else:
            col = _utf16_len(text[line_start:start])
            length = _utf16_len(text[start:end])
        data += (line - prev_line, col - prev_col if line == prev_line else col, length, kind, mods)
        prev_line, prev_col, last_end = line, col, end
    return data, prev_line, prev_col


def _utf16_len(text: str) -> int:
    """UTF-16 code units, as `LineIndex` counts them (a lone surrogate from invalid input is one)."""
    return len(text) if text.isascii() else sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


def encode(doc: Document, start: int = 0, end: Optional[int] = None) -> list[int]:
    """LSP's flat encoding: per token (delta line, delta start, length, type, modifiers),
    joined from the pieces' own encodings (only a piece's first token is re-based; the
    others are relative to the token before them). With `start`/`end` (a range request:
    the editor's viewport), only the pieces that overlap those offsets."""
    data: list[int] = []
    prev_line, prev_col = 0, 0
    for piece in doc.pieces:
        if piece.end <= start or end is not None and piece.base >= end:
            continue
        encoded, last_line, last_col = piece_tokens(piece)
        if not encoded:
            continue
        base_line, base_col = doc.lines.position(piece.base)
        line = base_line + encoded[0]
        col = encoded[1] + (base_col if encoded[0] == 0 else 0)
        data += [line - prev_line, col - prev_col if line == prev_line else col]
        data += encoded[2:]
        prev_line = base_line + last_line
        prev_col = last_col + (base_col if last_line == 0 else 0)
    return data
