"""Where the top-level ops of a chunk begin and end, found without parsing.

Re-parsing a 20,000-line file on each keystroke takes seconds; re-parsing the
one function that changed takes a millisecond. A piece is the text from one
top-level op's first line to the next one's; every piece parses on its own.

A line starts a piece when it begins in column 0 with something that can only
start a top-level op (an op name with a dot, `module`, a quoted generic op name,
an alias `#x =` / `!x =`) while no bracket is open. Anything else (an open
bracket at the end of the text, a top-level SSA value that later pieces could
use) makes the chunk a single piece: slower, never wrong.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import Optional

# Strings and comments first, so brackets inside them are not counted.
_TOKENS = re.compile(
    r'"(?:[^"\\\n]|\\.)*"'
    r"|//[^\n]*"
    r"|[{(\[]|[})\]]"
    r"|\n(?=[#!\"%]|module\b|[A-Za-z_][\w$]*\.[\w$.]+)")


def _scan(text: str, start: int, end: int) -> Optional[list[int]]:
    """Piece starts in text[start:end] (which starts with no bracket open); None when
    the range cannot be cut (brackets left open, a top-level SSA value)."""
    bounds = [start]
    depth = 0
    for m in _TOKENS.finditer(text, start, end):
        c = m.group()[0]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c == "\n" and depth == 0:
            if text.startswith("%", m.end()):
                return None  # a top-level value: later pieces may use it
            if m.end() < end:
                bounds.append(m.end())
    if depth != 0:
        return None
    return bounds


def _tidy(text: str, start: int, end: int, bounds: list[int]) -> list[tuple[int, int]]:
    if len(bounds) > 1 and not text[start:bounds[1]].strip():
        bounds = [start] + bounds[2:]  # leading blank text belongs to the first op
    bounds = bounds + [end]
    return [(bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1) if bounds[i] < bounds[i + 1]]


def split_pieces(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of each top-level piece of text[start:end]; they cover the range."""
    bounds = _scan(text, start, end)
    if bounds is None:
        return [(start, end)]
    return _tidy(text, start, end, bounds)


def resplit_pieces(text: str, start: int, end: int, old: list[tuple[int, int]], change_start: int,
                   change_old_end: int, delta: int) -> list[tuple[int, int]]:
    """The pieces of a chunk after an edit, rescanning only around the edit.

    `old` are the chunk's pieces before the edit (old offsets), the edit replaced
    old text [change_start, change_old_end) and moved what follows by `delta`; the
    chunk is now text[start:end]. The piece before and after the edited ones are
    rescanned too: an edit at a piece's first column can join it to its neighbour.
    """
    if len(old) <= 1:
        return split_pieces(text, start, end)
    starts = [s for s, _ in old]
    first = max(bisect_right(starts, change_start) - 2, 0)
    last = min(bisect_right(starts, change_old_end), len(old) - 1)
    region_start = old[first][0]
    region_end = old[last][1] + delta if last + 1 < len(old) else end
    bounds = _scan(text, region_start, region_end)
    if bounds is None:
        return split_pieces(text, start, end)
    if first == 0 and region_start != start:
        return split_pieces(text, start, end)
    middle = _tidy(text, region_start, region_end, bounds) if first == 0 else \
        [(bounds[i], (bounds + [region_end])[i + 1]) for i in range(len(bounds))]
    after = [(s + delta, e + delta) for s, e in old[last + 1:]] if last + 1 < len(old) else []
    return old[:first] + middle + after
