"""A function or a whole chunk of a document as a module of its own, cloned from the IR the
document already has (no text is cut out and parsed again), and the way back from the spans
of that IR, or of what lowering makes of it, to document offsets.

Every piece of a document is parsed from its own text, so a span's `source` says which piece
it is in, and the piece's `base` places it in the document.
"""
from __future__ import annotations

from typing import Optional, Union

from ..diagnostics import Diagnostic
from ..ir.core import Block, Operation, Region
from ..ir.source import Span
from ..transforms.extract import function_module
from ..verifier import verify
from .document import ANALYSIS_LOCK, Chunk, Document, Piece


class SourceMap:
    """Document offsets of spans in IR cloned from a chunk's pieces. Two pieces with the same
    text may share one parse: `preferred`'s place wins for it."""

    def __init__(self, chunk: Chunk, preferred: Optional[Piece] = None):
        self.bases = {id(p.parsed.source): (p.parsed.source, p.base) for p in chunk.pieces}
        if preferred is not None:
            self.bases[id(preferred.parsed.source)] = (preferred.parsed.source, preferred.base)

    def offset(self, span: Optional[Span]) -> Optional[int]:
        """The document offset where `span` starts; None for a span in no piece (text a
        pattern parsed, a declaration made here)."""
        found = None if span is None else self.bases.get(id(span.source))
        if found is None or found[0] is not span.source:
            return None
        return found[1] + span.start


def function_module_of(chunk: Chunk, fn: Operation, bodies: bool = False) -> tuple[Operation, set]:
    """`fn` cloned into a module of its own with the symbols of its chunk it uses
    (`transforms.extract.function_module`), and the names of those only declared."""
    return function_module(fn, lambda name: chunk.symbols[name][1] if name in chunk.symbols else None, bodies)


def chunk_module(chunk: Chunk) -> Operation:
    """The chunk's top-level ops, cloned into a module (the chunk's own `module {...}` when it is
    its one op, as the parser takes it). Under the analysis lock: verifying a piece adds
    declarations to its module for a moment, and a `module {...}` piece's module is cloned whole."""
    with ANALYSIS_LOCK:
        ops = [op for p in chunk.pieces for op in top_level_ops(p)]
        if len(ops) == 1 and ops[0].name == "builtin.module":
            return ops[0].clone()
        block = Block()
        for op in ops:
            block.append(op.clone())
    return Operation("builtin.module", regions=[Region([block])])


def top_level_ops(piece: Piece) -> list:
    """The ops the piece's text holds at its top level. A piece that is a `module {...}` parses
    to that module itself (the parser takes a lone module as the root, and gives it the span of
    its keyword, as any op written in the text); other pieces to a module made around their ops."""
    module = piece.parsed.module
    if module is not None and module.name_span is not None:
        return [module]
    return piece.parsed.top_ops


def problem(doc: Document, pieces: list, module: Operation, where: SourceMap) -> Optional[str]:
    """The first error of `pieces`' parses, else of verifying `module` (made from them), with
    its place in the document; None when there is none."""
    for p in pieces:
        if not p.parsed.parsed_ok:
            d = next(d for d in p.parsed.result.diagnostics if d.severity == "error")
            return located(doc, d, SourceMap(doc.chunk_of(p), p))
    found = next((d for d in verify(module) if d.severity == "error"), None)
    return None if found is None else located(doc, found, where)


def located(doc: Document, d: Diagnostic, where: SourceMap) -> str:
    """`file:line:col: error: message` at the diagnostic's place in the document."""
    offset = where.offset(d.span)
    if offset is None:
        return f"{doc.filename}: {d.severity}: {d.message}"
    line, col = doc.lines.position(offset)
    return f"{doc.filename}:{line + 1}:{col + 1}: {d.severity}: {d.message}"


def function_or_chunk(doc: Document, chunk: Chunk, piece: Optional[Piece] = None, fn: Optional[Operation] = None,
                      bodies: bool = False) -> Union[str, tuple[Operation, SourceMap]]:
    """`fn` (of `piece`) alone, or the whole chunk when `fn` is None, as a verified module of
    its own and the map back to the document; else the first error."""
    if fn is None:
        module, pieces, where = chunk_module(chunk), chunk.pieces, SourceMap(chunk)
    else:
        module, _ = function_module_of(chunk, fn, bodies)
        pieces, where = [piece], SourceMap(chunk, piece)
    found = problem(doc, pieces, module, where)
    return found if found is not None else (module, where)
