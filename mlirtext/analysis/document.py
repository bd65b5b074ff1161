"""An open document: its text, version, and the parse of every top-level piece.

Incremental by construction: the text is cut into `// -----` chunks and each
chunk into top-level pieces (`pieces.py`); a piece's parse and verification are
cached by its text (and the aliases and external symbols it sees), so an edit
re-parses and re-verifies only the pieces whose text changed, plus the pieces
that call a symbol whose definition changed. Pieces after an edit only move:
their spans are local to the piece, and `Piece.base` places them in the file.
"""
from __future__ import annotations

import itertools
import threading
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ..diagnostics import Diagnostic
from ..dialects.registry import Registry, builtin_registry
from ..ir.attributes import StringAttr
from ..ir.core import Operation, Region
from ..ir.source import SourceFile, Span
from ..syntax.gc_pause import gc_paused
from .pieces import resplit_pieces, split_pieces
from .positions import LineIndex

#: One lock for all parsing and verifying: the LALR driver is shared, and verifying a
#: piece briefly adds declarations of the symbols it calls to its module.
ANALYSIS_LOCK = threading.RLock()

_serial = itertools.count(1)


@dataclass
class ParsedPiece:
    """The parse of one piece's text on its own (offsets local to `text`)."""

    text: str
    source: SourceFile
    result: object                    # ParseResult
    attr_aliases: dict                # aliases this piece defines
    type_aliases: dict
    serial: int = field(default_factory=lambda: next(_serial))
    verified: list = field(default_factory=list)   # diagnostics for `verified_key`
    verified_key: Optional[tuple] = None
    cache: dict = field(default_factory=dict)     # per-piece derived data (the index, ...)
    defines_aliases: bool = False
    parsed_ok: bool = True
    symbols: list = field(default_factory=list)   # [(name, op)] of its top-level symbol ops
    roots: tuple = ()                             # root names of the symbols it references, sorted
    registry: Optional[Registry] = None           # the dialects it was parsed with (None: the built-in ones)

    def __post_init__(self):
        self.defines_aliases = bool(self.attr_aliases or self.type_aliases)
        self.parsed_ok = self.result.ok
        self.symbols = [(op.sym_name, op) for op in self.top_ops if op.sym_name is not None]
        self.roots = tuple(sorted({names[0] for _, _, names in self.result.state.symbol_uses}))

    @property
    def module(self) -> Optional[Operation]:
        return self.result.module

    @property
    def top_ops(self) -> list[Operation]:
        m = self.result.module
        if m is None or not m.regions or not m.regions[0].blocks:
            return []
        # Skip the declarations `verify_piece` adds for a moment (on the analysis thread).
        return [op for op in m.regions[0].blocks[0].ops if op.span is None or op.span.source is not _STUB_SOURCE]


class Piece:
    """A parsed piece placed in a document (a plain slotted class: a big document
    makes thousands of them on every edit)."""

    __slots__ = ("parsed", "base", "end", "chunk")

    def __init__(self, parsed: ParsedPiece, base: int, end: int, chunk: int):
        self.parsed = parsed
        self.base = base
        self.end = end
        self.chunk = chunk

    def local(self, offset: int) -> int:
        return offset - self.base


@dataclass
class Chunk:
    start: int
    end: int
    pieces: list
    symbols: dict                     # name -> (Piece, Operation): the chunk's symbol table
    aliases: dict                     # "#map" -> (Piece, Span local to the piece)


@dataclass
class DocDiagnostic:
    """A diagnostic in document offsets; `related` are its notes (start, end, message)."""

    start: int
    end: int
    severity: str
    message: str
    related: list


class _PieceCache:
    """ParsedPiece by (text, alias environment). Emptied when full: cheaper on every
    lookup than keeping recency order, and a refill costs one parse per piece."""

    def __init__(self, size: int = 100000):
        self.size = size
        self.entries: dict = {}
        self.get = self.entries.get

    def put(self, key, value) -> None:
        if len(self.entries) >= self.size:
            self.entries.clear()
        self.entries[key] = value


PIECE_CACHE = _PieceCache()


def parse_piece(text: str, name: str, attr_aliases: dict, type_aliases: dict,
                registry: Optional[Registry] = None) -> ParsedPiece:
    """Parse one piece with the aliases earlier pieces defined already in scope."""
    from ..syntax.parser import ParseResult, parse
    source = SourceFile(name, text)
    try:
        result = parse(text, name, source=source, attr_aliases=attr_aliases, type_aliases=type_aliases,
                       registry=registry)
    except Exception as e:  # noqa: BLE001 - a parser bug must not take the document down
        from ..syntax.context import AsmState
        result = ParseResult(None, source, [Diagnostic(
            "error", f"internal error while parsing: {type(e).__name__}: {e}", Span(source, 0, min(len(text), 1)))],
            AsmState(), end=len(text))
    own_attr = {k: v for k, v in result.aliases if k.startswith("#")}
    own_type = {k: v for k, v in result.aliases if k.startswith("!")}
    return ParsedPiece(text, source, result, own_attr, own_type, registry=registry)


# -- verification with the rest of the chunk's symbols in view ------------------------------
_STUB_SOURCE = SourceFile("<declarations of other pieces>", "")


def _stub(op: Operation) -> Operation:
    """A body-less copy of a symbol defined in another piece, so calls to it verify."""
    attrs = dict(op.attributes)
    if op.name == "func.func":
        attrs["sym_visibility"] = StringAttr("private")
    stub = Operation(op.name, attributes=attrs, regions=[Region() for _ in op.regions])
    stub.span = Span(_STUB_SOURCE, 0, 0)
    return stub


def verify_piece(parsed: ParsedPiece, key: tuple, externals) -> list[Diagnostic]:
    """The diagnostics of a piece: its parse's, then (when it parsed cleanly) the
    verifier's. `key` identifies the versions of the symbols it uses from other pieces;
    `externals()` gives {name: defining op} and is only called when `key` is new."""
    if parsed.verified_key == key:
        return parsed.verified
    from ..verifier import verify
    module = parsed.module
    if module is None or not parsed.parsed_ok:
        found = list(parsed.result.diagnostics)
    else:
        block = module.regions[0].blocks[0] if module.regions and module.regions[0].blocks else None
        stubs = [_stub(op) for op in externals().values()] if block is not None else []
        try:
            for stub in stubs:
                block.append(stub)
            found = verify(module, parsed.registry)
        except Exception as e:  # noqa: BLE001 - a verifier bug is reported, never a traceback
            found = [Diagnostic("error", f"internal error while verifying: {type(e).__name__}: {e}",
                                module.span)]
        finally:
            for stub in stubs:
                if stub.parent is not None:
                    stub.detach()
        found = list(parsed.result.diagnostics) + [
            d for d in found if d.span is None or d.span.source is not _STUB_SOURCE]
    parsed.verified_key, parsed.verified = key, found  # only the latest environment is worth keeping
    return found


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix (binary search over C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix, at most `limit`."""
    lo, hi = 0, max(limit, 0)
    la, lb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.endswith(b[lb - mid:lb - lo], 0, la - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def layout_of(text: str) -> list:
    """[(chunk start, chunk end, piece bounds)] of `text`."""
    from ..syntax.parser import split_input
    return [(cs, ce, split_pieces(text, cs, ce)) for cs, ce in split_input(text)]


def _relayout(previous, text: str) -> list:
    """The layout of `text` (`layout_of`): rescanned only around the edit when the old
    layout is known and the edit leaves the `// -----` lines alone."""
    if previous is None or not previous.chunks:
        return layout_of(text)
    old = previous.text
    p = common_prefix(old, text)
    s = common_suffix(old, text, min(len(old), len(text)) - p)
    old_end, new_end = len(old) - s, len(text) - s
    line_start = old.rfind("\n", 0, p) + 1
    if "-----" in old[line_start:old.find("\n", old_end) % (len(old) + 1)] or \
            "-----" in text[line_start:text.find("\n", new_end) % (len(text) + 1)]:
        return layout_of(text)
    delta = len(text) - len(old)
    layout = []
    for chunk in previous.chunks:
        bounds = [(q.base, q.end) for q in chunk.pieces]
        if chunk.end < line_start:
            layout.append((chunk.start, chunk.end, bounds))
        elif chunk.start > old_end:
            layout.append((chunk.start + delta, chunk.end + delta,
                           [(a + delta, b + delta) for a, b in bounds]))
        else:
            end = chunk.end + delta
            layout.append((chunk.start, end, resplit_pieces(text, chunk.start, end, bounds, p, old_end,
                                                             delta)))
    return layout


class Document:
    """One version of a text document and its analysis. Immutable once built: an edit
    makes a new Document (`updated`) that reuses this one's pieces, so a request
    being answered from this version never sees half of the next one."""

    def __init__(self, uri: str, text: str, version: int = 0, filename: Optional[str] = None,
                 previous: Optional["Document"] = None, layout: Optional[list] = None,
                 registry: Optional[Registry] = None, encoding: Sequence[DocDiagnostic] = ()):
        """`layout`: `layout_of(text)` when the caller has it already; `registry`: the dialects
        known (the built-in ones when None; the previous version's on an update); `encoding`: the
        errors for bytes of the file that are not UTF-8 (`encoding.py`: the text has U+FFFD there)."""
        self.uri = uri
        self.registry = registry if registry is not None or previous is None else previous.registry
        self.filename = filename or uri
        self.text = text
        self.version = version
        self.encoding: list[DocDiagnostic] = list(encoding)
        with ANALYSIS_LOCK, gc_paused():
            if layout is None:
                layout = _relayout(previous, text)
            chunks, pieces = [], []
            for index, (cs, ce, bounds) in enumerate(layout):
                chunk = self._build_chunk(text, cs, ce, index, bounds)
                chunks.append(chunk)
                pieces.extend(chunk.pieces)
            self.lines = LineIndex(text)
            self.chunks: list[Chunk] = chunks
            self.pieces: list[Piece] = pieces
            self._bases = [p.base for p in pieces]
            self.diagnostics: list[DocDiagnostic] = self._collect_diagnostics()
            #: one warning per dialect the registry does not know (kept apart from `diagnostics`,
            #: which any run of pieces can compute alone, see `partial.py`)
            self.unregistered: list[DocDiagnostic] = unregistered_warnings(pieces)

    def updated(self, text: str, version: int, encoding: Sequence[DocDiagnostic] = ()) -> "Document":
        """The next version, re-analysing only what the edit touched."""
        return Document(self.uri, text, version, self.filename, previous=self, registry=self.registry,
                        encoding=encoding)

    def _build_chunk(self, text: str, start: int, end: int, index: int, bounds) -> Chunk:
        pieces, aliases = parse_chunk_pieces(text, self.filename, index, bounds, registry=self.registry)
        return Chunk(start, end, pieces, symbol_table(pieces), aliases)

    def _collect_diagnostics(self) -> list[DocDiagnostic]:
        out: list[DocDiagnostic] = []
        for chunk in self.chunks:
            out.extend(chunk_diagnostics(chunk.pieces, chunk.symbols))
        return out

    def lookup(self, op_name: str):
        """The declaration of op `op_name` among the document's dialects, or None."""
        return (self.registry or builtin_registry()).lookup(op_name)

    @property
    def published(self) -> list[DocDiagnostic]:
        """What the editor shows: the encoding errors, the diagnostics, then the unregistered-dialect
        warnings."""
        return self.encoding + self.diagnostics + self.unregistered

    # -- queries -----------------------------------------------------------------------
    def piece_at(self, offset: int) -> Optional[Piece]:
        i = bisect_right(self._bases, offset) - 1
        if i < 0:
            return self.pieces[0] if self.pieces else None
        piece = self.pieces[i]
        if offset > piece.end and i + 1 < len(self.pieces):
            return None
        return piece

    def chunk_of(self, piece: Piece) -> Chunk:
        return self.chunks[piece.chunk]

    def span_range(self, piece: Piece, span: Optional[Span]) -> tuple[int, int]:
        """Document offsets of a span in a piece's parse."""
        return _range(piece, span)

    def op_range(self, piece: Piece, op: Operation) -> tuple[int, int]:
        return _op_range(piece, op)

    def symbol(self, piece: Piece, name: str):
        """(Piece, op) defining `name` in the piece's chunk, or None."""
        return self.chunk_of(piece).symbols.get(name)


# -- the pieces of a chunk and their diagnostics (a whole chunk, or some of its pieces) ------
def parse_chunk_pieces(text: str, filename: str, index: int, bounds, wanted=None,
                       registry: Optional[Registry] = None) -> tuple[list, dict]:
    """The chunk's pieces (with the aliases of the pieces before each in scope) and
    {alias: (Piece, span)}. With `wanted` (piece indices), only those pieces: they must
    include every piece before a wanted one that defines an alias (see `partial.py`)."""
    pieces = []
    attr_env: dict = {}
    type_env: dict = {}
    env_key: tuple = ()
    aliases: dict = {}
    for i, (ps, pe) in enumerate(bounds):
        if wanted is not None and i not in wanted:
            continue
        piece_text = text[ps:pe]
        key = (piece_text, env_key, registry.serial if registry is not None else 0)
        parsed = PIECE_CACHE.get(key)
        if parsed is None:
            parsed = parse_piece(piece_text, filename, attr_env, type_env, registry)
            PIECE_CACHE.put(key, parsed)
        piece = Piece(parsed, ps, pe, index)
        pieces.append(piece)
        if parsed.defines_aliases:
            attr_env = {**attr_env, **parsed.attr_aliases}
            type_env = {**type_env, **parsed.type_aliases}
            env_key = env_key + (piece_text,)
            for name, span in parsed.result.state.alias_defs.items():
                aliases.setdefault(name, (piece, span))
    return pieces, aliases


def symbol_table(pieces) -> dict:
    """name -> (Piece, op) of its first definition."""
    symbols: dict = {}
    for piece in pieces:
        for name, op in piece.parsed.symbols:
            if name not in symbols:
                symbols[name] = (piece, op)
    return symbols


def chunk_diagnostics(pieces, symbols: dict, reported=None) -> list[DocDiagnostic]:
    """The diagnostics of a chunk's pieces, in order; with `reported` (start, end), only
    those of the pieces that start in that range of the document. `pieces` and `symbols`
    may be a subset of the chunk's that holds every definition of the symbols the reported
    pieces use or define (`partial.py`): the answer is then the same."""
    out: list[DocDiagnostic] = []
    # A piece's verification depends on the versions (serials) of the pieces
    # defining the symbols it uses: unchanged serials, cached diagnostics.
    serials = {name: entry[0].parsed.serial for name, entry in symbols.items()}
    seen: dict = {}
    for piece in pieces:
        parsed = piece.parsed
        report = reported is None or reported[0] <= piece.base < reported[1]
        if report:
            roots = parsed.roots
            key = tuple([serials.get(r) for r in roots]) if roots else ()
            if parsed.verified_key == key:
                found = parsed.verified
            else:
                found = verify_piece(parsed, key, lambda piece=piece, roots=roots: {
                    r: symbols[r][1] for r in roots if r in symbols and symbols[r][0] is not piece})
            if found:
                out.extend(_placed(piece, d) for d in found)
        for name, op in parsed.symbols:  # a symbol defined again in another piece
            first = seen.get(name)
            if first is None:
                seen[name] = (piece, op)
            elif first[0] is not piece and report:
                d = Diagnostic("error", f"redefinition of symbol named '{name}'", op.name_span or op.span)
                placed = _placed(piece, d)
                fs = _op_range(first[0], first[1])
                placed.related.append((fs[0], fs[1], "see existing symbol definition here"))
                out.append(placed)
    return out


def unregistered_warnings(pieces) -> list[DocDiagnostic]:
    """One warning per dialect the registry does not know, at its first op in the document: the
    editor allows unregistered dialects (mlir-opt's --allow-unregistered-dialect), checking their
    ops structurally only."""
    seen: set = set()
    out: list[DocDiagnostic] = []
    for piece in pieces:
        for namespace, span in piece.parsed.result.unregistered.items():
            if namespace not in seen:
                seen.add(namespace)
                start, end = _range(piece, span)
                out.append(DocDiagnostic(start, end, "warning", UNREGISTERED_WARNING.format(namespace), []))
    return out


#: The editor's note on a dialect it does not know (once per document, at its first op).
UNREGISTERED_WARNING = ("unregistered dialect '{}': its ops are checked structurally only (operands defined, "
                        "types consistent, regions well formed); an IRDL file in the mlirtext.dialects setting "
                        "can declare it")


def _placed(piece: Piece, d: Diagnostic) -> DocDiagnostic:
    start, end = _range(piece, d.span)
    related = []
    for note in d.notes:
        if note.span is not None and note.span.source is piece.parsed.source:
            ns, ne = _range(piece, note.span)
            related.append((ns, ne, note.message))
        elif note.span is None:
            related.append((start, end, note.message))
    return DocDiagnostic(start, end, d.severity, d.message, related)


def _range(piece: Piece, span: Optional[Span]) -> tuple[int, int]:
    if span is None or span.source is not piece.parsed.source:
        return piece.base, piece.base
    return piece.base + span.start, piece.base + max(span.end, span.start)


def _op_range(piece: Piece, op: Operation) -> tuple[int, int]:
    return _range(piece, op.name_span or op.span)
