"""Where an op came from, read off its `loc(...)`: the source frames behind MLIR's location forms.

Importers record the framework's source: JAX writes `loc(#loc30)` with
`#loc30 = loc("jit(f)/dot_general"(#loc23))`, `#loc23 = loc(callsite(#loc15 at #loc16))`,
`#loc15 = loc("f"(#loc6))`, `#loc6 = loc("model.py":3:20 to :26)`. `source_frames` follows the
aliases and gives the Python frames, innermost first, for the editor's hover; `file_locations`
gives every file location a location names (each of a fused list too), for go to definition.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(#[\w$.-]+)|(\d+)|([A-Za-z_][\w.]*)|(.))')
_SHOWN_FRAMES = 3  # the op's line and its nearest callers; the rest of a deep stack is noise in a hover
_MAX_DEPTH = 64  # alias chains are short; a cycle or a runaway chain stops here


@dataclass
class Frame:
    file: str
    line: int
    column: int
    function: str = ""   # the name a NameLoc gave the file location (the Python function)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where} in {self.function}" if self.function else where


@dataclass
class Origin:
    frames: list        # innermost first
    label: str = ""     # the outermost name (JAX: `jit(f)/dot_general`, the primitive)


def source_frames(text: str, alias: Callable[[str], Optional[str]], depth: int = 0,
                  every_fused: bool = False) -> Origin:
    """The frames a location text names; `alias("#loc3")` gives an alias's text (`loc(...)`) or None.
    A fused location stands for its first location, unless `every_fused`."""
    tokens = _tokens(text)
    if tokens[:2] == ["loc", "("] and tokens[-1:] == [")"]:
        tokens = tokens[2:-1]
    origin = Origin([])
    _Reader(tokens, alias, depth, every_fused).location(origin)
    return origin


def file_locations(text: str, alias: Callable[[str], Optional[str]]) -> list[Frame]:
    """Every file location that a location text names, once each, in order: a callsite's callee
    then its caller, each location of a fused one, through aliases and names."""
    found: list[Frame] = []
    for frame in source_frames(text, alias, every_fused=True).frames:
        if all((f.file, f.line, f.column) != (frame.file, frame.line, frame.column) for f in found):
            found.append(frame)
    return found


def _tokens(text: str) -> list[str]:
    return [next(g for g in m.groups() if g is not None) for m in _TOKEN.finditer(text) if m.group(0).strip()]


class _Reader:
    def __init__(self, tokens: list[str], alias, depth: int, every_fused: bool):
        self.tokens, self.pos, self.alias, self.depth, self.every_fused = tokens, 0, alias, depth, every_fused

    def peek(self, ahead: int = 0) -> str:
        i = self.pos + ahead
        return self.tokens[i] if i < len(self.tokens) else ""

    def take(self) -> str:
        tok = self.peek()
        self.pos += 1
        return tok

    def location(self, origin: Origin) -> None:
        tok = self.take()
        if tok.startswith("#"):
            text = self.alias(tok) if self.depth < _MAX_DEPTH else None
            if text:
                inner = source_frames(text, self.alias, self.depth + 1, self.every_fused)
                origin.frames.extend(inner.frames)
                origin.label = origin.label or inner.label
        elif tok == "callsite" and self.peek() == "(":
            self.take()
            self.location(origin)           # the callee: innermost
            if self.peek() == "at":
                self.take()
                self.location(origin)       # the caller
            self._skip_to(")")
        elif tok == "fused":
            if self.peek() == "<":
                self._skip_to(">")
            if self.peek() == "[":
                self.take()
                self.location(origin)       # the first fused location stands for all ...
                while self.every_fused and self.peek() == ",":   # ... unless each is wanted
                    self.take()
                    self.location(origin)
                self._skip_to("]")
        elif tok.startswith('"'):
            name = tok[1:-1]
            if self.peek() == ":" and self.peek(1).isdigit():
                self.take()
                line = int(self.take())
                column = 0
                if self.peek() == ":" and self.peek(1).isdigit():
                    self.take()
                    column = int(self.take())
                origin.frames.append(Frame(name, line, column))
                self._skip_range()
            elif self.peek() == "(":
                self.take()
                before = len(origin.frames)
                self.location(origin)
                if len(origin.frames) > before and not origin.frames[before].function:
                    origin.frames[before].function = name
                elif len(origin.frames) == before or origin.label == "":
                    origin.label = origin.label or name
                self._skip_to(")")
            else:
                origin.label = origin.label or name

    def _skip_range(self) -> None:
        """` to :26` or ` to 4:2` after a file location: the end of the range, not needed here."""
        if self.peek() == "to":
            self.take()
            while self.peek() == ":" or self.peek().isdigit():
                self.take()

    def _skip_to(self, closing: str) -> None:
        depth = 0
        while self.pos < len(self.tokens):
            tok = self.take()
            if tok in ("(", "[", "<"):
                depth += 1
            elif tok in (")", "]", ">"):
                if depth == 0 and tok == closing:
                    return
                depth -= 1


def describe(text: str, alias: Callable[[str], Optional[str]]) -> str:
    """One line for a hover: the source frames (innermost first) and the label, or ''."""
    origin = source_frames(text, alias)
    if not origin.frames:
        return f"from `{origin.label}`" if origin.label else ""
    shown = origin.frames[:_SHOWN_FRAMES]
    chain = " ← called from ".join(f"`{f}`" for f in shown)
    if len(origin.frames) > len(shown):
        chain += f" (+{len(origin.frames) - len(shown)} outer frames)"
    return f"source: {chain}" + (f" (`{origin.label}`)" if origin.label else "")
