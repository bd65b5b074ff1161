"""Document symbols (chunks, modules, functions, globals), workspace symbols and folding ranges."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..ir.core import Operation
from .document import Document, Piece
from .index import SYMBOL, piece_index

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
        items: list[Symbol] = []
        for piece in chunk.pieces:
            for name, span in piece.parsed.result.state.alias_defs.items():
                s, e = piece.base + span.start, piece.base + span.end
                items.append(Symbol(name, "constant", s, e, s, e))
            for op in piece.parsed.top_ops:
                sym = _op_symbol(doc, piece, op)
                if sym is not None:
                    items.append(sym)
        if len(doc.chunks) > 1:
            line = doc.lines.position(chunk.start)[0] + 1
            out.append(Symbol(f"chunk {i + 1} (line {line})", "namespace", chunk.start, chunk.end,
                              chunk.start, min(chunk.start + 1, chunk.end), children=items))
        else:
            out.extend(items)
    return out


def _op_symbol(doc: Document, piece: Piece, op: Operation) -> Optional[Symbol]:
    if op.span is None:
        return None
    name = op.sym_name
    is_module = op.name == "builtin.module"
    if name is None and not is_module:
        return None
    start, end = piece.base + op.span.start, piece.base + op.span.end
    name_start, name_end = doc.op_range(piece, op)
    if name is not None:
        for e in piece_index(piece).entries_of(SYMBOL, name):
            if e.is_def:
                name_start, name_end = piece.base + e.start, piece.base + e.end
                break
    ftype = op.attributes.get("function_type")
    sym = Symbol(name or "module", _KINDS.get(op.name, "variable"), start, end, name_start, name_end,
                 detail=str(ftype) if ftype is not None else op.name)
    if is_module:
        for inner in op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []:
            child = _op_symbol(doc, piece, inner)
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
        module = piece.parsed.module
        if module is None:
            continue
        for op in module.walk():
            if op.span is None or op.span.source is not piece.parsed.source or op is module and \
                    op.name_span is None:
                continue
            a = doc.lines.position(piece.base + op.span.start)[0]
            b = doc.lines.position(piece.base + max(op.span.end - 1, op.span.start))[0]
            if b > a:
                ranges.add((a, b, None))
    run_start = None
    for line in range(doc.lines.line_count + 1):
        is_comment = line < doc.lines.line_count and doc.lines.line_text(line).lstrip().startswith("//")
        if is_comment and run_start is None:
            run_start = line
        elif not is_comment and run_start is not None:
            if line - 1 > run_start:
                ranges.add((run_start, line - 1, "comment"))
            run_start = None
    return sorted(ranges, key=lambda r: (r[0], r[1]))
