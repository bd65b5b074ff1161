"""MLIR text in one layout (`mlirtext format`, the editor's formatting): each `// -----` chunk
parsed alone and printed back in its custom form (2-space indentation, one op a line, long lines
wrapped at a width), with the source's comments where they were (`comment_placement.py`), its
SSA names and block labels, its `loc(...)`s, and its alias definitions at the top of the chunk.

Text that does not parse is not formatted (the parse errors are the answer). Each chunk's
formatted text is parsed again and compared with the original (`same_ir`): a top-level op whose
formatted text would not read back to the same IR is kept as written, with a warning (the whole
chunk, when that is not enough): formatting never changes what a file means.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Optional

from ..diagnostics import Diagnostic, has_errors
from ..dialects.registry import Registry
from ..ir.source import SourceFile, Span
from .comment_placement import CommentPlacer
from .comments import Comment, scan
from .parser import ParseResult, parse, split_input
from .printer import Printer
from .wrapping import DEFAULT_WIDTH, wrap_text

#: Blank lines at the start of a chunk.
_LEADING_BLANK_LINES = re.compile(r"(?:[ \t]*\n)*")
#: Blanks an attribute kept verbatim may have, which mean nothing.
_SPACE_AT_PUNCTUATION = re.compile(r"\s*([<>\[\](){},=:])\s*")
_SPACE = re.compile(r"\s+")
#: `loc(` as a location starts (not the end of `memref.alloc(`).
_LOC = re.compile(r"(?<![\w.$-])loc\(")
_KEPT = ("this chunk is kept as written: its formatted form does not read back to the same IR "
         "(please report it)")
_KEPT_OP = ("this op is kept as written: its formatted form does not read back to the same IR "
            "(a default-valued attribute or a literal the printer spells differently; please report it)")


@dataclass(frozen=True)
class Extent:
    """A piece of the input (`source_start`..`source_end`) and its formatted text in the output."""

    source_start: int
    source_end: int
    out_start: int
    out_end: int


@dataclass
class Formatted:
    text: str                    # the formatted text; the input itself when it does not parse
    diagnostics: list[Diagnostic]
    units: list[Extent] = field(default_factory=list)    # each top-level op (a module's body's)
    chunks: list[Extent] = field(default_factory=list)   # each chunk, blank lines around it left out

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


def format_text(text: str, filename: str = "<stdin>", width: int = DEFAULT_WIDTH,
                registry: Optional[Registry] = None, check: bool = True) -> Formatted:
    """`text` formatted; `check`: a chunk is kept as written unless its formatted text parses
    back to the same IR (the tests turn it off to see the formatter's own output)."""
    source = SourceFile(filename, text)
    bounds = split_input(text)
    results = [parse(text, filename, s, e, source, registry=registry) for s, e in bounds]
    errors = [d for r in results for d in r.diagnostics if d.severity == "error"]
    if errors:
        return Formatted(text, errors)
    comments, skeleton = scan(text)
    starts = [c.start for c in comments]
    out, diagnostics, units, chunks = "", [], [], []
    for i, ((s, e), result) in enumerate(zip(bounds, results)):
        if i:
            if out:
                out += "\n"
            out += text[bounds[i - 1][1]:s].strip() + "\n"   # the `// -----` line
        chunk_comments = comments[bisect.bisect_left(starts, s):bisect.bisect_left(starts, e)]
        chunk_text, chunk_units = _format_chunk(result, chunk_comments, skeleton, width, registry)
        if check:
            chunk_text, chunk_units = _checked(result, chunk_text, chunk_units, skeleton, registry, diagnostics)
        if not chunk_text:
            continue
        if i:
            out += "\n"
        base = len(out)
        units.extend(Extent(u.source_start, u.source_end, base + u.out_start, base + u.out_end)
                     for _, u in chunk_units)
        content_start = s + len(_LEADING_BLANK_LINES.match(text, s).group())
        chunks.append(Extent(content_start, max(content_start, _content_end(text, s, e)), base,
                             base + len(chunk_text)))
        out += chunk_text
    return Formatted(out, diagnostics, units, chunks)


def format_range(text: str, start: int, end: int, filename: str = "<stdin>", width: int = DEFAULT_WIDTH,
                 registry: Optional[Registry] = None) -> Optional[tuple[int, int, str]]:
    """(start, end, new text) of the edit that formats the whole top-level ops (or functions of an
    explicit module) that text[start:end] touches; None when the text does not parse or the range
    touches no op. Where an op shares a line with something else, its whole chunk is the edit."""
    formatted = format_text(text, filename, width, registry)
    if not formatted.ok:
        return None
    touched = [u for u in formatted.units if _touches(u, start, end)]
    if not touched:
        return None
    first, last = touched[0], touched[-1]
    begin, finish = _whole_lines(text, first.source_start, last.source_end)
    if begin is None or finish is None:
        chunks = [c for c in formatted.chunks if c.source_start <= first.source_start <= c.source_end
                  or c.source_start <= last.source_end <= c.source_end]
        begin, finish = chunks[0].source_start, chunks[-1].source_end
        return begin, finish, formatted.text[chunks[0].out_start:chunks[-1].out_end]
    return begin, finish, formatted.text[first.out_start:last.out_end]


# -- one chunk ------------------------------------------------------------------------------------
def _format_chunk(result: ParseResult, comments: list[Comment], skeleton: str, width: int,
                  registry: Optional[Registry]) -> tuple[str, list]:
    """The chunk's formatted text and its top-level ops with their extents (offsets into that text)."""
    module, s, e = result.module, result.start, result.end
    body = module.regions[0].blocks[0] if module.regions and module.regions[0].blocks else None
    explicit = module.name_span is not None   # `module { ... }` written, not the parser's wrapper
    alias_starts = _alias_starts(result.aliases, skeleton, s, e)
    first_op = module.span.start if explicit else next(
        (op.span.start for op in (body.ops if body else []) if op.span is not None), e)
    items = sorted({a for a in alias_starts if a is not None} | {first_op, e})
    alias_limits = [None if a is None else next((x for x in items if x > a), e) for a in alias_starts]
    placer = CommentPlacer(result.source, skeleton, comments, s, e, body, alias_starts, alias_limits, first_op)
    p = Printer(aliases=result.aliases, print_locations=True, registry=registry, comments=placer)
    p.alias_definitions()
    p.assign_names(module)
    for op in [module] if explicit else (body.ops if body else []):
        p.operation(op)
    verbatim = None   # the `{-# ... #-}` block: printed as written, never wrapped
    if result.file_metadata:
        at = skeleton.find("{-#", s, e)
        placer.finish(p, at if at >= 0 else e)
        p.out.append("\n" if p.out else "")
        verbatim = len(p.out)
        p.out.append(result.file_metadata + "\n")
    placer.finish(p)
    offsets = [0, *accumulate(len(piece) for piece in p.out)]
    # Cut the text where units and the metadata begin and end (all at line boundaries), wrap
    # each piece alone, and follow the units into the wrapped text.
    cuts = {0, offsets[-1]}
    for u in placer.units:
        cuts.update((offsets[u.out_start], offsets[u.out_end] + 1))
    if verbatim is not None:
        cuts.update((offsets[verbatim], offsets[verbatim + 1]))
    text, pieces, moved, length = "".join(p.out), [], {}, 0
    cuts = sorted(cuts)
    for a, b in zip(cuts, cuts[1:]):
        moved[a] = length
        piece = text[a:b]
        pieces.append(piece if verbatim is not None and a == offsets[verbatim] else wrap_text(piece, width))
        length += len(pieces[-1])
    moved[cuts[-1]] = length
    units = [(u.op, Extent(u.source_start, u.source_end, moved[offsets[u.out_start]],
                           moved[offsets[u.out_end] + 1]))
             for u in placer.units if offsets[u.out_end] + 1 in moved]
    return "".join(pieces), units


def _alias_starts(aliases, skeleton: str, start: int, end: int) -> list:
    """Where each alias definition starts in the chunk (None where it cannot be found)."""
    found, pos = [], start
    for name, _ in aliases:
        m = re.compile(r"^[ \t]*" + re.escape(name) + r"[ \t]*=", re.M).search(skeleton, pos, end)
        found.append(None if m is None else m.end() - len(m.group().lstrip()))
        if m is not None:
            pos = m.end()
    return found


def _checked(result: ParseResult, formatted: str, units: list, skeleton: str, registry: Optional[Registry],
             diagnostics: list) -> tuple[str, list]:
    """`formatted` if it reads back to the chunk's IR; else with each top-level op that does not
    (or where the formatted text stops parsing) kept as written, a warning each, until it does;
    else the chunk as written, with a warning."""
    text = result.source.text
    kept: set = set()
    current, current_units = formatted, units
    for _ in range(len(units) + 1):
        again = parse(current, result.source.name, registry=registry)
        if again.ok and same_ir(result, again) \
                and _locations(skeleton, result.start, result.end) == _locations(scan(current)[1]):
            for i in sorted(kept):
                op = units[i][0]
                where = (op.name_span or op.span).start
                diagnostics.append(Diagnostic("warning", _KEPT_OP, Span(result.source, where, where)))
            return current, current_units
        more = _unreadable_units(again, current, current_units, skeleton) - kept
        if not more:
            break
        kept |= more
        current, current_units = _with_kept(text, formatted, units, kept)
        if current is None:
            break
    where = result.start + len(_LEADING_BLANK_LINES.match(text, result.start).group())
    diagnostics.append(Diagnostic("warning", _KEPT, Span(result.source, where, where)))
    return _as_written(text, result.start, result.end), []


def _unreadable_units(again: ParseResult, current: str, units: list, skeleton: str) -> set:
    """The indexes of the units whose formatted text stops the parse, or reads back to other IR."""
    if not again.ok:
        error = next(d for d in again.diagnostics if d.severity == "error")
        at = error.span.start if error.span is not None else -1
        return {i for i, (_, u) in enumerate(units) if u.out_start <= at < u.out_end}
    body = _body(again.module)
    if len(body) != len(units):
        return set()
    return {i for i, ((op, u), formatted_op) in enumerate(zip(units, body))
            if _ir_lines(op) != _ir_lines(formatted_op)
            or _locations(skeleton, u.source_start, u.source_end)
            != _locations(scan(current[u.out_start:u.out_end])[1])}


def _with_kept(text: str, formatted: str, units: list, kept: set) -> tuple[Optional[str], list]:
    """`formatted` with the units in `kept` as written in `text`, and every unit's new extent;
    (None, []) when one of them shares a line with something else."""
    pieces, moved, at, length = [], [], 0, 0
    for i, (op, u) in enumerate(units):
        pieces.append(formatted[at:u.out_start])
        length += len(pieces[-1])
        if i in kept:
            begin, end = _whole_lines(text, u.source_start, u.source_end)
            if begin is None or end is None:
                return None, []
            piece = text[begin:end] if text[begin:end].endswith("\n") else text[begin:end] + "\n"
        else:
            piece = formatted[u.out_start:u.out_end]
        pieces.append(piece)
        moved.append((op, Extent(u.source_start, u.source_end, length, length + len(piece))))
        length += len(piece)
        at = u.out_end
    pieces.append(formatted[at:])
    return "".join(pieces), moved


def _locations(skeleton: str, start: int = 0, end: Optional[int] = None) -> int:
    """How many `loc(...)` a text has (a block argument's is not in the IR: it must not be lost)."""
    return len(_LOC.findall(skeleton, start, len(skeleton) if end is None else end))


def _body(module) -> list:
    """The ops of a chunk's module's body: its top-level ops, or those inside its `module { ... }`."""
    return module.regions[0].blocks[0].ops if module.regions and module.regions[0].blocks else []


def same_ir(a: ParseResult, b: ParseResult) -> bool:
    """Do two parsed chunks hold the same IR: ops, operands, results, attributes, regions,
    blocks, successors, locations and file metadata (whether an attribute was written as a
    property, `<{...}>`, or in the dictionary is left out: MLIR reads both alike)?"""
    return a.file_metadata == b.file_metadata and _ir_lines(a.module) == _ir_lines(b.module)


def _blanks_dropped(text: str) -> str:
    """An attribute's text without the layout a dialect attribute kept verbatim from the source
    may have (`#stablehlo.dot<\n  lhs_batching_dimensions = [2]\n>`)."""
    return _SPACE.sub(" ", _SPACE_AT_PUNCTUATION.sub(r"\1", text))


def _ir_lines(module) -> list[str]:
    """The IR as lines that name values and blocks by their place, not by their names."""
    number: dict[int, int] = {}
    walk = list(_walk(module, 0))
    for op, _ in walk:   # numbered first: an operand may be defined further down (a graph region)
        for r in op.results:
            number[id(r)] = len(number)
        for region in op.regions:
            for block in region.blocks:
                for i, arg in enumerate(block.arguments):
                    number[id(arg)] = len(number)
                number[id(block)] = len(number)
    lines = []
    for op, depth in walk:
        attrs = _blanks_dropped(", ".join(f"{k} = {v}" for k, v in sorted(op.attributes.items())))
        blocks = [f"({', '.join(str(a.type) for a in b.arguments)})" for r in op.regions for b in r.blocks]
        lines.append(f"{depth} {op.name}({[number.get(id(v)) for v in op.operands]}) "
                     f"{[number.get(id(b)) for b in op.successors]} "
                     f"-> {', '.join(str(r.type) for r in op.results)} {{{attrs}}} {op.location} "
                     f"regions {[len(r.blocks) for r in op.regions]} blocks {blocks}")
    return lines


def _walk(op, depth: int):
    """(op, depth) of `op` and every op inside it, in order."""
    yield op, depth
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                yield from _walk(inner, depth + 1)


def _as_written(text: str, start: int, end: int) -> str:
    """A chunk's own text without the blank lines around it, ending with a newline."""
    begin = start + len(_LEADING_BLANK_LINES.match(text, start).group())
    body = text[begin:_content_end(text, start, end)].rstrip()
    return body + "\n" if body else ""


def _content_end(text: str, start: int, end: int) -> int:
    """Just after the newline of a chunk's last line that is not blank."""
    stop = len(text[start:end].rstrip()) + start
    newline = text.find("\n", stop, end)
    return newline + 1 if newline >= 0 else end


def _touches(u: Extent, start: int, end: int) -> bool:
    if start == end:
        return u.source_start <= start <= u.source_end
    return u.source_start < end and start < u.source_end


def _whole_lines(text: str, start: int, end: int) -> tuple[Optional[int], Optional[int]]:
    """`start` moved back to its line's start and `end` past its line's newline, or None for
    either when something else shares that line."""
    line_start = text.rfind("\n", 0, start) + 1
    newline = text.find("\n", end)
    line_end = len(text) if newline < 0 else newline + 1
    return (line_start if not text[line_start:start].strip() else None,
            line_end if not text[end:line_end].strip() else None)
