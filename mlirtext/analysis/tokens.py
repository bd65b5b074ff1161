"""Semantic tokens: ops (with their dialect as a modifier), values, block labels,
symbols, aliases, types, attribute kinds, strings and numbers, in LSP's relative
encoding (UTF-16 columns)."""
from __future__ import annotations

import json
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
#: Every alternative starts with a literal character and names its group after it: the
#: regex engine rules an alternative out with one comparison (a group or `\b` first
#: would enter each one), 1.6x as fast over a big document. A word's `\b` is checked
#: after its first letter (`(?<!\w.)`), a number's look-behind likewise.
_SHAPED = r"<[^<>\n]*(?:<[^<>\n]*>[^<>\n]*)*>"
_WORD = r"(?<!\w.)"
_NUMBER_START, _NUMBER_REST = r"(?<![\w%#^@.].)", r"(?:\.\d+)?(?:[eE][-+]?\d+)?\b"
_LEXICAL = re.compile(r"(?=[/tmvc!iufsbda#\"\-0-9])(?:" + "|".join([
    r"/(?P<comment>/[^\n]*)",
    r"t(?P<tensor>ensor" + _SHAPED + ")", r"m(?P<memref>emref" + _SHAPED + ")",
    r"v(?P<vector>ector" + _SHAPED + ")", r"c(?P<complex>omplex" + _SHAPED + ")",
    r"!(?P<llvm_ptr>llvm\.ptr)",
    r"i" + _WORD + r"(?P<int>\d+|ndex)\b", r"u" + _WORD + r"(?P<unsigned>\d+|i\d+)\b",
    r"f" + _WORD + r"(?P<float>\d+)\b", r"s" + _WORD + r"(?:(?P<signed>i\d+)\b|(?P<sparse>parse)(?=<))",
    r"b" + _WORD + r"(?P<bf16>f16)\b",
    r"d" + _WORD + r"(?P<dense>ense|ense_resource)(?=<)", r"a" + _WORD + r"(?P<affine>ffine_map|rray)(?=<)",
    r"#(?P<attribute>[a-z_]+\.[\w.]+)(?=<)",
    r'"(?P<string>(?:[^"\\\n]|\\.)*")',
    r"-" + _NUMBER_START + r"(?P<negative>\d+" + _NUMBER_REST + ")",
    r"[0-9]" + _NUMBER_START + r"(?P<number>\d*" + _NUMBER_REST + ")"]) + ")")
#: Group -> token type (a comment's tokens are none).
_GROUP_TYPE = {"comment": None, **dict.fromkeys(
    ["tensor", "memref", "vector", "complex", "llvm_ptr", "int", "unsigned", "float", "signed", "bf16"], _TYPE["type"]),
    **dict.fromkeys(["sparse", "dense", "affine", "attribute"], _TYPE["macro"]),
    "string": _TYPE["string"], "negative": _TYPE["number"], "number": _TYPE["number"]}


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
        kind = _GROUP_TYPE[m.lastgroup]
        if kind is None:
            continue
        start, end = m.span()
        i = bisect_right(covered_starts, start)
        if i and taken[i - 1][1] > start or i < count and covered_starts[i] < end:
            continue
        append((start, end, kind, 0))
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


#: JSON without spaces (json's C encoder: a fifth faster than joining `str`s of the integers).
_compact_json = json.JSONEncoder(separators=(",", ":")).encode


def piece_tokens_json(piece) -> str:
    """`piece_tokens`' integers after the first token as JSON text (no brackets), cached
    with the piece's parse: the whole document's answer is joined from these, so a version
    encodes JSON only for the pieces whose text changed."""
    cached = piece.parsed.cache.get("tokens_json")
    if cached is None:
        cached = piece.parsed.cache["tokens_json"] = _compact_json(piece_tokens(piece)[0][5:])[1:-1]
    return cached


def encode_pieces(doc: Document) -> None:
    """Every piece's tokens and their JSON into the pieces' caches: what `encode_json` joins
    (the language server does it while it builds a big document, before a request comes)."""
    for piece in doc.pieces:
        piece_tokens_json(piece)


def _placed(doc: Document, start: int, end: Optional[int]):
    """(piece, its encoding, its first token re-based on the token before it) of each piece
    with tokens overlapping the offsets `start`..`end`, in order. Only a piece's first token
    is re-based: the others are relative to the token before them within the piece."""
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
        yield piece, encoded, (line - prev_line, col - prev_col if line == prev_line else col)
        prev_line = base_line + last_line
        prev_col = last_col + (base_col if last_line == 0 else 0)


def encode(doc: Document, start: int = 0, end: Optional[int] = None) -> list[int]:
    """LSP's flat encoding: per token (delta line, delta start, length, type, modifiers),
    joined from the pieces' own encodings. With `start`/`end` (a range request: the
    editor's viewport), only the pieces that overlap those offsets."""
    data: list[int] = []
    for _, encoded, (delta_line, delta_col) in _placed(doc, start, end):
        first = len(data)
        data += encoded   # then re-base its first token (no copy of a slice)
        data[first], data[first + 1] = delta_line, delta_col
    return data


def encode_json(doc: Document, start: int = 0, end: Optional[int] = None) -> str:
    """`encode`'s list as the JSON text of an LSP `SemanticTokens` (`{"data":[...]}`), joined
    from the pieces' cached JSON: a 10 MB document's 3.7 million integers are not converted
    again for every answer, nor twice (to objects, then to JSON) by the LSP library."""
    parts = []
    for piece, encoded, (delta_line, delta_col) in _placed(doc, start, end):
        parts.append(f"{delta_line},{delta_col},{encoded[2]},{encoded[3]},{encoded[4]}")
        if len(encoded) > 5:
            parts.append(piece_tokens_json(piece))
    return '{"data":[' + ",".join(parts) + "]}"
