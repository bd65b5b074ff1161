"""Source text and spans: where every op, value, block and symbol came from.

Spans are plain character offsets into a `SourceFile`; line and column are
computed on demand from a table of line starts, so keeping a span on every
object costs two integers (the idea of MLIR's AsmParserState).
"""
from __future__ import annotations

from bisect import bisect_right


class SourceFile:
    """The text of one input, with line/column lookup for offsets."""

    __slots__ = ("name", "text", "_line_starts")

    def __init__(self, name: str, text: str):
        self.name = name
        self.text = text
        self._line_starts: list[int] | None = None

    @property
    def line_starts(self) -> list[int]:
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            pos = find("\n")
            while pos != -1:
                starts.append(pos + 1)
                pos = find("\n", pos + 1)
            self._line_starts = starts
        return self._line_starts

    def line_col(self, offset: int) -> tuple[int, int]:
        """1-based line and column of a character offset."""
        starts = self.line_starts
        line = bisect_right(starts, offset) - 1
        return line + 1, offset - starts[line] + 1

    def offset(self, line: int, col: int) -> int:
        """Character offset of a 1-based line and column (clamped to the text)."""
        starts = self.line_starts
        line = min(max(line, 1), len(starts))
        return min(starts[line - 1] + max(col, 1) - 1, len(self.text))

    def line_text(self, line: int) -> str:
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            return ""
        return self.text[starts[line - 1]:self._line_end(line)]

    def line_window(self, line: int, col: int, width: int) -> tuple[str, int]:
        """Line `line`, or on a line longer than `width` the `width` characters around column
        `col`; and `col` within that text. It costs O(width) however long the line is, so
        reporting many diagnostics on one long line is not quadratic."""
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            return "", col
        begin, end = starts[line - 1], self._line_end(line)
        if end - begin <= width:
            return self.text[begin:end], col
        skip = max(0, col - width // 2)
        return self.text[begin + skip:min(begin + skip + width, end)], col - skip

    def _line_end(self, line: int) -> int:
        """The offset of line `line`'s newline (the text's end for the last line)."""
        starts = self.line_starts
        return starts[line] - 1 if line < len(starts) else len(self.text)


class Span:
    """A half-open range [start, end) of character offsets in `source`.

    A plain slotted class rather than a frozen dataclass: the parser makes
    several per op, and a frozen dataclass's __init__ is several times slower.
    Treat it as immutable.
    """

    __slots__ = ("source", "start", "end")

    def __init__(self, source: SourceFile, start: int, end: int):
        self.source = source
        self.start = start
        self.end = end

    def __eq__(self, other) -> bool:
        return isinstance(other, Span) and (self.source, self.start, self.end) == (
            other.source, other.start, other.end)

    def __hash__(self) -> int:
        return hash((id(self.source), self.start, self.end))

    @property
    def text(self) -> str:
        return self.source.text[self.start:self.end]

    @property
    def line_col(self) -> tuple[int, int]:
        return self.source.line_col(self.start)

    @property
    def end_line_col(self) -> tuple[int, int]:
        return self.source.line_col(self.end)

    def contains(self, offset: int) -> bool:
        return self.start <= offset < self.end or offset == self.start

    def __repr__(self) -> str:
        line, col = self.line_col
        return f"Span({self.source.name}:{line}:{col}, {self.end - self.start} chars)"
