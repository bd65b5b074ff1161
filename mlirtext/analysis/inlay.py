"""Inlay hints: the type of each result whose op's text does not spell it."""
from __future__ import annotations

import re

from .document import Document


def _spells(op_text: str, type_text: str) -> bool:
    """Is `type_text` written as a whole type in the op (not `f32` inside `memref<4xf32>`)?"""
    return re.search(r"(?<![\w<.!$])" + re.escape(type_text) + r"(?![\w$])", op_text) is not None


def type_hints(doc: Document, start: int, end: int) -> list[tuple[int, str]]:
    """(offset just after the result's name, ": type") for results in [start, end)."""
    out = []
    for piece in doc.pieces:
        if piece.end < start or piece.base > end:
            continue
        module = piece.parsed.module
        if module is None:
            continue
        source = piece.parsed.source
        for op in module.walk():
            if not op.results or op.span is None or op.span.source is not source:
                continue
            op_text = source.text[op.span.start:op.span.end]
            shown = set()
            for r in op.results:
                if r.span is None or r.span.source is not source or id(r.span) in shown:
                    continue
                at = piece.base + r.span.end
                if not start <= at <= end:
                    continue
                if _spells(op_text, str(r.type)):
                    continue
                group = [x for x in op.results if x.span is r.span]
                shown.add(id(r.span))
                label = ", ".join(str(x.type) for x in group)
                out.append((at, f": {label}"))
    return out
