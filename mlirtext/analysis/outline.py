"""Document symbols (chunks, modules, functions, globals), workspace symbols and folding ranges."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Optional

from ..ir.core import Operation
from .document import Document, ParsedPiece, Piece
from .index import symbol_name_span
from .positions import LineIndex

#: Op name -> symbol kind (LSP names); other symbol ops are "variable".
_KINDS = {"builtin.module": "module", "func.func": "function", "llvm.func": "function",
          "memref.global": "variable", "llvm.mlir.global": "variable", "ml_program.global": "variable"}


@dataclass
class Symbol:
    name: str
    kind: str                  # "module", "function", "variable", "namespace" (a chunk), "constant" (alias)
    start: int                 # the whole thing
    end: int
    name_start: int            # its name
    name_end: int
    detail: str = ""
    children: list = field(default_factory=list)


def document_symbols(doc: Document) -> list[Symbol]:
    """A tree: each `// -----` chunk (when there are several), then its modules and symbols."""
    out = []
    for i, chunk in enumerate(doc.chunks):
        items = [_placed(sym, piece.base) for piece in chunk.pieces for sym in piece_symbols(piece)]
        if len(doc.chunks) > 1:
            line = doc.lines.position(chunk.start)[0] + 1
            out.append(Symbol(f"chunk {i + 1} (line {line})", "namespace", chunk.start, chunk.end,
                              chunk.start, min(chunk.start + 1, chunk.end), children=items))
        else:
            out.extend(items)
    return out


def piece_symbols(piece: Piece) -> list[Symbol]:
    """The piece's aliases and symbols, in offsets of the piece's own text; cached with
    its parse (printing each function's type is most of an outline's cost)."""
    parsed = piece.parsed
    cached = parsed.cache.get("symbols")
    if cached is None:
        cached = [Symbol(name, "constant", span.start, span.end, span.start, span.end)
                  for name, span in parsed.result.state.alias_defs.items()]
        cached += filter(None, (_op_symbol(parsed, op) for op in parsed.top_ops))
        parsed.cache["symbols"] = cached
    return cached


def _placed(sym: Symbol, base: int) -> Symbol:
    return Symbol(sym.name, sym.kind, base + sym.start, base + sym.end, base + sym.name_start, base + sym.name_end,
                  sym.detail, [_placed(c, base) for c in sym.children])


def _op_symbol(parsed: ParsedPiece, op: Operation) -> Optional[Symbol]:
    if op.span is None:
        return None
    name = op.sym_name
    is_module = op.name == "builtin.module"
    if name is None and not is_module:
        return None
    where = symbol_name_span(parsed, op) if name is not None else None
    if where is None:
        span = op.name_span or op.span
        where = (span.start, max(span.end, span.start)) if span.source is parsed.source else (0, 0)
    ftype = op.attr("function_type")
    sym = Symbol(name or "module", _KINDS.get(op.name, "variable"), op.span.start, op.span.end, *where,
                 detail=str(ftype) if ftype is not None else op.name)
    if is_module:
        for inner in op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []:
            child = _op_symbol(parsed, inner)
            if child is not None:
                sym.children.append(child)
    return sym


def workspace_symbols(ws, query: str, limit: int = 500) -> list:
    """(name, kind, Location, container) of symbols whose name contains `query` (any case)."""
    from .navigation import Location
    q = (query or "").lower()
    out = []
    # Without a query only what is open is listed: parsing the whole workspace for an
    # empty query would answer late with everything.
    for doc in ws.documents(include_files=bool(q), containing=q or None, ignore_case=True):
        if q and q not in doc.text.lower():
            continue
        stack = list(document_symbols(doc))
        while stack:
            sym = stack.pop(0)
            stack.extend(sym.children)
            if sym.kind == "namespace" or q not in sym.name.lower():
                continue
            out.append((sym.name, sym.kind, Location(doc, sym.name_start, sym.name_end), doc.filename))
            if len(out) >= limit:
                return out
    return out


def folding_ranges(doc: Document) -> list[tuple[int, int, Optional[str]]]:
    """(first line, last line, kind) to fold: every op spanning lines (regions, long
    attribute dictionaries), every chunk, and runs of comment lines."""
    ranges = set()
    for chunk in doc.chunks:
        a, b = doc.lines.position(chunk.start)[0], doc.lines.position(max(chunk.end - 1, chunk.start))[0]
        if b > a:
            ranges.add((a, b, "region"))
    for piece in doc.pieces:
        base_line = doc.lines.position(piece.base)[0]
        ranges.update((base_line + a, base_line + b, None) for a, b in piece_folds(piece))
    comments = [line.lstrip().startswith("//") for line in doc.text.split("\n")]
    run_start = None
    for line, is_comment in enumerate(comments + [False]):
        if is_comment and run_start is None:
            run_start = line
        elif not is_comment and run_start is not None:
            if line - 1 > run_start:
                ranges.add((run_start, line - 1, "comment"))
            run_start = None
    return sorted(ranges, key=lambda r: (r[0], r[1]))


def piece_folds(piece: Piece) -> list[tuple[int, int]]:
    """(first line, last line) of the piece's ops that span lines, in lines of the piece's
    own text; cached with its parse (a new version folds only the pieces that changed)."""
    parsed = piece.parsed
    cached = parsed.cache.get("folds")
    if cached is not None:
        return cached
    folds = []
    module = parsed.module
    if module is not None:
        starts = LineIndex(parsed.text).starts
        for op in module.walk():
            if op.span is None or op.span.source is not parsed.source or op is module and op.name_span is None:
                continue
            a = bisect_right(starts, op.span.start) - 1
            b = bisect_right(starts, max(op.span.end - 1, op.span.start)) - 1
            if b > a:
                folds.append((a, b))
    parsed.cache["folds"] = folds
    return folds
