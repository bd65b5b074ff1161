"""`--verify-diagnostics`: check `// expected-error {{...}}` annotations, as mlir-opt does.

An annotation names the severity, the line it applies to (`@+N`, `@-N`,
`@above`, `@below`, or its own line) and a text the message must contain;
`expected-error-re` (and the other `-re` forms) takes a text whose `{{...}}`
parts are regular expressions, the rest literal, and runs to the line's last
`}}` (as MLIR's verifier reads it, so a pattern may hold braces).
Every produced diagnostic must be expected and every expectation met.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .diagnostics import Diagnostic
from .ir.source import SourceFile, Span

#: As MLIR's verifier reads them: anywhere on a line (`// @expected-error` counts too), spaces
#: allowed before the `@`.
_ANNOTATION = re.compile(
    r"(?<![\w-])(?P<word>expected-(?P<sev>error|warning|remark|note)(?P<re>-re)?)"
    r" *(?:@(?P<where>[-+]\d+|above|below))?\s*(?P<count>\*|\d+)?\s*\{\{"
    r"(?:(?(re)(?P<pattern>[^\n]*)|(?P<text>.*?)))\}\}")
_REGEX_PART = re.compile(r"\{\{(.*?)\}\}")


def _regex(text: str) -> re.Pattern:
    """An `-re` annotation's text as one regular expression: `{{...}}` parts as written, the rest
    literal."""
    parts, last = [], 0
    for m in _REGEX_PART.finditer(text):
        parts += [re.escape(text[last:m.start()]), "(?:" + m.group(1) + ")"]
        last = m.end()
    return re.compile("".join(parts) + re.escape(text[last:]))


@dataclass
class Expectation:
    severity: str
    line: int
    text: str
    span: Span
    matched: bool = False
    regex: Optional[re.Pattern] = None
    invalid: str = ""          # why an `-re` text is no regular expression

    def matches(self, message: str) -> bool:
        return self.regex.search(message) is not None if self.regex is not None else self.text in message


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
        text = (m.group("pattern") if m.group("re") else m.group("text")).strip()
        e = Expectation(m.group("sev"), target, text, Span(source, m.start("word"), m.end()))
        if m.group("re"):
            try:
                e.regex = _regex(text)
            except re.error as bad:
                e.invalid = f"invalid regular expression in expected-{e.severity}-re: {bad}"
        out.append(e)
    return out


@dataclass
class Mismatch:
    """One way the diagnostics and the annotations disagree: an annotation no diagnostic met
    (`expected` set; `actual`: the unexpected diagnostics of its line, which are taken as its wrong
    answers), a diagnostic no annotation expected (`expected` empty), or an `-re` annotation whose
    text is no regular expression (`invalid`). `line`: the line the annotation or diagnostic is
    about; `span`: where to show it (the annotation, or the diagnostic)."""

    line: int
    span: Optional[Span]
    expected: str = ""            # "error: text" of an unmet annotation
    actual: list = field(default_factory=list)   # ["error: message"] produced there, not expected
    message: str = ""             # as --verify-diagnostics reports it


def mismatches(source: SourceFile, start: int, end: int, produced: list[Diagnostic]) -> list[Mismatch]:
    """How the annotations in source[start:end] and `produced` disagree, in the order
    --verify-diagnostics reports them: unexpected diagnostics, then unmet annotations."""
    expected = expectations(source, start, end)
    flat = []
    for d in produced:
        flat.append(d)
        flat.extend(d.notes)
    unexpected = []
    for d in flat:
        line = d.span.line_col[0] if d.span is not None else 0
        for e in expected:
            if (not e.matched and not e.invalid and e.severity == d.severity and e.line == line
                    and e.matches(d.message)):
                e.matched = True
                break
        else:
            if d.severity != "note":
                unexpected.append(Mismatch(line, d.span, actual=[f"{d.severity}: {d.message}"],
                                           message=f"unexpected {d.severity}: {d.message}"))
    out = list(unexpected)
    for e in expected:
        if e.invalid:
            out.append(Mismatch(e.line, e.span, message=e.invalid))
        elif not e.matched:
            actual = [a for u in unexpected if u.line == e.line for a in u.actual]
            out.append(Mismatch(e.line, e.span, expected=f"{e.severity}: {e.text}", actual=actual,
                                message=f"expected {e.severity} \"{e.text}\" was not produced"))
    return out


def check(source: SourceFile, start: int, end: int, produced: list[Diagnostic]) -> list[Diagnostic]:
    """The mismatches between annotations in source[start:end] and `produced`, as errors."""
    return [Diagnostic("error", m.message, m.span) for m in mismatches(source, start, end, produced)]
