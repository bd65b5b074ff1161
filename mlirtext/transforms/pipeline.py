"""Pass pipelines as text, in MLIR's syntax.

    builtin.module(func.func(canonicalize,cse),symbol-dce)
    canonicalize{max-num-rewrites=100},cse

A name followed by `(...)` nests a pipeline on the ops of that name; a name
alone is a registered pass, with options in `{key=value ...}`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Union

from .passes import Pass, PassRegistry, builtin_passes


class PipelineError(ValueError):
    """Bad pipeline text; `column` (0-based) points at the problem."""

    def __init__(self, message: str, text: str, column: int):
        super().__init__(message)
        self.text, self.column = text, column

    def format(self) -> str:
        return f"error: invalid pass pipeline: {self}\n  {self.text}\n  {' ' * self.column}^"


@dataclass
class Nest:
    """Run `items` on every op named `anchor` nested directly in the current op
    (or on the current op itself when it is one)."""
    anchor: str
    items: list[Union[Pass, "Nest"]] = field(default_factory=list)

    def spelling(self) -> str:
        return f"{self.anchor}({','.join(item.spelling() for item in self.items)})"


_NAME = re.compile(r"[A-Za-z_][\w.\-]*")


def parse_pipeline(text: str, passes: Optional[PassRegistry] = None) -> list[Union[Pass, Nest]]:
    """The pipeline `text` spells, its pass names read against `passes` (the built-in ones when None):
    only the passes it names are imported."""
    parser = _Parser(text, passes or builtin_passes())
    items = parser.items()
    parser.skip()
    if parser.pos != len(text):
        raise PipelineError(f"unexpected '{text[parser.pos]}'", text, parser.pos)
    return items


class _Parser:
    def __init__(self, text: str, passes: PassRegistry):
        self.text, self.pos = text, 0
        self.passes = passes

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def fail(self, message: str, at: int = None):
        return PipelineError(message, self.text, self.pos if at is None else at)

    def items(self) -> list:
        out = [self.item()]
        while self.peek() == ",":
            self.pos += 1
            out.append(self.item())
        return out

    def item(self):
        self.skip()
        m = _NAME.match(self.text, self.pos)
        if m is None:
            raise self.fail("expected a pass or an op name")
        start, name = self.pos, m.group()
        self.pos = m.end()
        options = self.options() if self.peek() == "{" else {}
        if self.peek() == "(":
            if options:
                raise self.fail(f"'{name}(...)' nests a pipeline and takes no options", start)
            self.pos += 1
            items = [] if self.peek() == ")" else self.items()
            if self.peek() != ")":
                raise self.fail("expected ')' or ','")
            self.pos += 1
            return Nest(name, items)
        cls = self.passes.get(name)
        if cls is None:
            raise self.fail(f"'{name}' does not refer to a registered pass (see --list-passes)", start)
        try:
            return cls.from_options(options)
        except ValueError as e:
            raise self.fail(str(e), start) from None

    def options(self) -> dict[str, str]:
        start = self.pos
        end = _matching(self.text, self.pos)
        if end < 0:
            raise self.fail("unterminated options: missing '}'", start)
        body = self.text[self.pos + 1:end]
        self.pos = end + 1
        options = {}
        for part in _split_options(body):
            key, eq, value = part.partition("=")
            if not key:
                raise self.fail(f"bad option '{part}'", start)
            options[key] = value.strip('"') if eq else "true"
        return options


def _matching(text: str, pos: int) -> int:
    depth = 0
    quoted = False
    for i in range(pos, len(text)):
        c = text[i]
        if c == '"':
            quoted = not quoted
        elif not quoted and c == "{":
            depth += 1
        elif not quoted and c == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_options(body: str) -> list[str]:
    parts, depth, quoted, current = [], 0, False, ""
    for c in body:
        if c == '"':
            quoted = not quoted
        elif not quoted and c in "{[":
            depth += 1
        elif not quoted and c in "}]":
            depth -= 1
        if c.isspace() and depth == 0 and not quoted:
            if current:
                parts.append(current)
            current = ""
            continue
        current += c
    if current:
        parts.append(current)
    return parts
