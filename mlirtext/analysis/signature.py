"""Signature help inside the parentheses of `func.call @f(...)`."""
from __future__ import annotations

import re
from typing import Optional

from .document import Document

_CALL = re.compile(r'\bcall\s+@([\w$.\-]+|"[^"]*")\s*\(')


def signature_at(doc: Document, offset: int) -> Optional[tuple[str, list[str], int]]:
    """(label, parameter labels, active parameter) when `offset` is in a call's operand list."""
    text = doc.text
    line_start = text.rfind("\n", 0, offset) + 1
    best = None
    for m in _CALL.finditer(text, line_start, offset):
        best = m
    if best is None:
        return None
    inside = text[best.end():offset]
    depth, active = 0, 0
    for c in inside:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
            if depth < 0:
                return None  # past the closing parenthesis
        elif c == "," and depth == 0:
            active += 1
    name = best.group(1).strip('"')
    piece = doc.piece_at(offset)
    if piece is None:
        return None
    found = doc.symbol(piece, name)
    if found is None:
        return None
    _, fn = found
    ftype = getattr(fn.attr("function_type"), "type", None)
    if ftype is None or not hasattr(ftype, "inputs"):
        return None
    args = fn.regions[0].blocks[0].arguments if fn.regions and fn.regions[0].blocks else []
    params = [f"%{args[i].name}: {t}" if i < len(args) and args[i].name else str(t)
              for i, t in enumerate(ftype.inputs)]
    results = ", ".join(map(str, ftype.results))
    if len(ftype.results) != 1:
        results = f"({results})"
    label = f"@{name}({', '.join(params)}) -> {results}"
    return label, params, min(active, max(len(params) - 1, 0))
