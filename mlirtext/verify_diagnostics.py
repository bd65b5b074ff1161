"""`--verify-diagnostics`: check `// expected-error {{...}}` annotations, as mlir-opt does.

An annotation names the severity, the line it applies to (`@+N`, `@-N`,
`@above`, `@below`, or its own line) and a text the message must contain.
Every produced diagnostic must be expected and every expectation met.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .diagnostics import Diagnostic
from .ir.source import SourceFile, Span

_ANNOTATION = re.compile(
    r"//\s*(?P<word>expected-(?P<sev>error|warning|remark|note))"
    r"(?:@(?P<where>[-+]\d+|above|below))?\s*(?P<count>\*|\d+)?\s*\{\{(?P<text>.*?)\}\}")


@dataclass
class Expectation:
    severity: str
    line: int
    text: str
    span: Span
    matched: bool = False


def expectations(source: SourceFile, start: int, end: int) -> list[Expectation]:
    out = []
    for m in _ANNOTATION.finditer(source.text, start, end):
        line, _ = source.line_col(m.start())
        where = m.group("where")
        if where is None:
            target = line
        elif where == "above":
            target = line - 1
        elif where == "below":
            target = line + 1
        else:
            target = line + int(where)
        out.append(Expectation(m.group("sev"), target, m.group("text").strip(),
                               Span(source, m.start("word"), m.end())))
    return out


def check(source: SourceFile, start: int, end: int, produced: list[Diagnostic]) -> list[Diagnostic]:
    """The mismatches between annotations in source[start:end] and `produced`."""
    expected = expectations(source, start, end)
    problems = []
    flat = []
    for d in produced:
        flat.append(d)
        flat.extend(d.notes)
    for d in flat:
        line = d.span.line_col[0] if d.span is not None else 0
        for e in expected:
            if not e.matched and e.severity == d.severity and e.line == line and e.text in d.message:
                e.matched = True
                break
        else:
            if d.severity != "note":
                problems.append(Diagnostic("error", f"unexpected {d.severity}: {d.message}", d.span))
    for e in expected:
        if not e.matched:
            problems.append(Diagnostic("error", f"expected {e.severity} \"{e.text}\" was not produced",
                                       e.span))
    return problems
