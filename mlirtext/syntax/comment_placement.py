"""Where the formatter writes the source's comments: the printer tells a CommentPlacer where it
is (before and after each op, block label, region and alias definition) and the placer writes the
comments that stood there in the source.

Every comment is written exactly once and in source order: the placer holds the chunk's comments
in order and only ever takes them from the front. Where they go:
- a comment on a line of its own before an op, a block label or an alias stays before it, at its
  indentation (a blank line in the source before it stays, as one blank line);
- a comment after an op on its last line stays after it (`op  // ...`), likewise after a block
  label, an alias definition and a region's `{`;
- a comment inside a region after its last op stays inside, before the `}`;
- a comment inside an op's own text (between its operands, in its attribute dictionary) goes on a
  line of its own before the op, or after it for the text after its regions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..ir.core import Block, Operation, Region
from ..ir.source import SourceFile
from .comments import Comment, scan

#: A line with nothing but blanks on it.
_EMPTY_LINE = re.compile(r"\n[ \t]*\n")


@dataclass
class Unit:
    """A top-level op as printed: the text from `out_start` to `out_end` (indexes into the
    printer's pieces) holds its leading comments, itself and its trailing comment, which stood in
    the source from `source_start` to `source_end`."""

    op: Operation
    out_start: int
    source_start: int
    out_end: int = -1
    source_end: int = -1


@dataclass
class CommentPlacer:
    source: SourceFile
    skeleton: str                   # the whole text with comments and strings blanked
    comments: list[Comment]         # the chunk's, in order
    start: int                      # the chunk's range in the whole text
    end: int
    unit_block: Optional[Block]     # the block whose ops are units (the module's body)
    alias_starts: list = field(default_factory=list)   # offset of each alias definition, or None
    alias_limits: list = field(default_factory=list)   # where the next definition or op starts
    body_start: int = -1            # where the first op starts (aliases defined after it move up alone)
    units: list[Unit] = field(default_factory=list)
    #: each op being printed: (op, where its text starts in the printer's pieces, the pieces that
    #: hold the comments written before it from inside its text)
    open_ops: list = field(default_factory=list)
    next: int = 0                   # the first comment not yet written
    cursor: int = 0                 # how far the source has been followed
    fresh: bool = True              # nothing written yet in this chunk, region or block

    def __post_init__(self):
        self.cursor = self.start

    # -- undo, for a custom form the printer abandons ---------------------------------------------
    def state(self):
        return self.next, self.cursor, self.fresh, len(self.units), len(self.open_ops)

    def restore(self, state) -> None:
        self.next, self.cursor, self.fresh, units, open_ops = state
        del self.units[units:]
        del self.open_ops[open_ops:]

    # -- the printer's hooks ------------------------------------------------------------------------
    def before_op(self, p, op: Operation) -> None:
        span = self._span(op)
        if span is None:
            return
        header_end = self._header_end(op, span.start, span.end)
        first = self._peek(header_end)
        self._blank_line(p, min(span.start, first.start) if first else span.start)
        if op.parent is self.unit_block and self.unit_block is not None:
            self.units.append(Unit(op, len(p.out), min(span.start, first.start) if first else span.start))
        inside = self._own_lines(p, header_end, "  " * p.level, after=span.start)
        self._blank_line(p, span.start)
        self.open_ops.append((op, len(p.out), inside))
        self.cursor = max(self.cursor, header_end)
        self.fresh = False

    def after_op(self, p, op: Operation) -> None:
        span = self._span(op)
        if span is None:
            return
        if self.open_ops and self.open_ops[-1][0] is op:
            self._drop_reprinted(p, *self.open_ops.pop()[1:])
        indent = "  " * p.level
        tail = False
        while self._peek(span.end):   # inside its text after its regions: lines of their own after it
            p.out.append("\n" + indent + self._take().text)
            tail = True
        self.cursor = max(self.cursor, span.end)
        end = span.end
        trailing = self._peek(self.end)
        if trailing is not None and not trailing.own_line \
                and "\n" not in self.source.text[span.end:trailing.start]:
            p.out.append(("\n" + indent if tail else "  ") + self._take().text)
            end = trailing.end
        if self.units and self.units[-1].op is op:
            self.units[-1].out_end = len(p.out)
            self.units[-1].source_end = end
        self.fresh = False

    def region_open(self, p, region: Region) -> None:
        parent = self._span(region.parent) if region.parent is not None else None
        anchor = self._first_anchor(region)
        limit = anchor if anchor is not None else (parent.end if parent else self.end)
        c = self._peek(limit)
        if c is not None and not c.own_line:
            p.out.append("  " + self._take().text)
        self.fresh = True

    def region_close(self, p, region: Region) -> None:
        close = self.skeleton.find("}", self.cursor, self.end)
        limit = close if close >= 0 else self.end
        self._own_lines(p, limit, "  " * p.level)
        self.cursor = max(self.cursor, limit + 1)
        self.fresh = False

    def before_block(self, p, block: Block) -> None:
        span = block.span
        if span is None or span.source is not self.source:
            return
        self._own_lines(p, span.start, "  " * (p.level - 1))
        self._blank_line(p, span.start)
        self.cursor = max(self.cursor, span.end)

    def after_block(self, p, block: Block) -> None:
        first = next((s for s in map(self._span, block.ops) if s is not None), None)
        c = self._peek(first.start if first else self.end)
        if c is not None and not c.own_line and c.start >= self.cursor:
            p.out.append("  " + self._take().text)
            self.cursor = c.end
        self.fresh = True

    def before_alias(self, p, i: int) -> None:
        start = self._alias_start(i)
        if start is None:
            return
        self._own_lines(p, start, "")
        self._blank_line(p, start)
        self.cursor = max(self.cursor, start)
        self.fresh = False

    def after_alias(self, p, i: int) -> None:
        limit = self.alias_limits[i] if self._alias_start(i) is not None else None
        c = self._peek(limit) if limit is not None else None
        if c is not None and not c.own_line:
            p.out.append("  " + self._take().text)
            self.cursor = c.end

    def finish(self, p, limit: Optional[int] = None) -> None:
        """The comments left before `limit` (all of them when None), on lines of their own at the
        chunk's end (or before what the caller writes next, at `limit`)."""
        self._own_lines(p, self.end if limit is None else limit, "")

    # -- pieces ------------------------------------------------------------------------------------
    def _alias_start(self, i: int) -> Optional[int]:
        """Where alias definition `i` starts, when it comes before the ops (one written further
        down is printed at the top without the comments around it: they stay where they are)."""
        start = self.alias_starts[i] if i < len(self.alias_starts) else None
        return start if start is not None and start >= self.cursor and \
            (self.body_start < 0 or start < self.body_start) else None

    def _span(self, op: Operation):
        span = op.span
        if span is None or span.source is not self.source or not self.start <= span.start <= self.end:
            return None   # an op the parser made (an implicit terminator), or one from elsewhere
        return span

    def _peek(self, limit: int) -> Optional[Comment]:
        """The next comment to write, when it starts before `limit`."""
        if self.next < len(self.comments) and self.comments[self.next].start < limit:
            return self.comments[self.next]
        return None

    def _take(self) -> Comment:
        c = self.comments[self.next]
        self.next += 1
        self.cursor = max(self.cursor, c.end)
        return c

    def _own_lines(self, p, limit: int, indent: str, after: Optional[int] = None) -> list[int]:
        """Each comment before `limit` on a line of its own, blank lines before them kept (as one);
        the indexes of the pieces that hold those that start at or after `after`."""
        written = []
        while (c := self._peek(limit)) is not None:
            self._blank_line(p, c.start)
            if after is not None and c.start >= after:
                written.append(len(p.out))
            p.out.append(indent + self._take().text + "\n")
            self.fresh = False
        return written

    @staticmethod
    def _drop_reprinted(p, start: int, inside: list[int]) -> None:
        """A comment from inside an op's text that its print holds already (a dialect attribute
        the printer writes back as written, comments and all) is not written before it too."""
        if not inside:
            return
        printed = {c.text for c in scan("".join(p.out[start:]))[0]}
        for index in inside:
            if p.out[index].strip() in printed:
                p.out[index] = ""

    def _blank_line(self, p, at: int) -> None:
        """One blank line when the source has one between where it was followed to and `at`
        (never first in a chunk, a region or a block)."""
        if not self.fresh and at > self.cursor and _EMPTY_LINE.search(self.source.text, self.cursor, at):
            p.out.append("\n")
            self.cursor = at

    def _header_end(self, op: Operation, start: int, end: int) -> int:
        """Where the op's own text before its regions ends: at the `{` that opens the region of its
        first block label or nested op; its end when it has none."""
        for region in op.regions:
            anchor = self._first_anchor(region)
            if anchor is not None and start < anchor <= end:
                brace = self.skeleton.rfind("{", start, anchor)
                return brace if brace >= 0 else anchor
        return end

    def _first_anchor(self, region: Region) -> Optional[int]:
        """The offset of the first block label or op of `region` written in the source."""
        for block in region.blocks:
            if block.span is not None and block.span.source is self.source:
                return block.span.start
            for op in block.ops:
                span = self._span(op)
                if span is not None:
                    return span.start
        return None
