"""MLIR-style diagnostics: `file:line:col: error: message`, the line, a caret.

Every user-facing problem (syntax, verification, bad request) is a
`Diagnostic`; nothing reaches the user as a Python traceback.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .ir.source import SourceFile, Span


@dataclass
class Diagnostic:
    severity: str            # "error" | "warning" | "note" | "remark"
    message: str
    span: Optional[Span] = None
    notes: list["Diagnostic"] = field(default_factory=list)

    def note(self, message: str, span: Optional[Span] = None) -> "Diagnostic":
        self.notes.append(Diagnostic("note", message, span))
        return self

    @property
    def line_col(self) -> tuple[int, int]:
        return self.span.line_col if self.span is not None else (0, 0)

    def format(self, filename: Optional[str] = None) -> str:
        """The text mlir-opt would print: header, source line and caret, then notes."""
        lines = [_format_one(self, filename)]
        for n in self.notes:
            lines.append(_format_one(n, filename))
        return "\n".join(lines)


def _format_one(d: Diagnostic, filename: Optional[str]) -> str:
    if d.span is None:
        return f"{filename or 'mlirtext'}: {d.severity}: {d.message}"
    source: SourceFile = d.span.source
    line, col = d.span.line_col
    header = f"{filename or source.name}:{line}:{col}: {d.severity}: {d.message}"
    text, col = source.line_window(line, col, 200)  # a window around the column on very long lines
    # keep the source line's tabs in front of the caret, so it lines up however tabs are shown
    caret = "".join("\t" if ch == "\t" else " " for ch in text[:col - 1]).ljust(col - 1) + "^"
    return f"{header}\n{text}\n{caret}"


class DiagnosticError(Exception):
    """Raised inside mlirtext to abort one unit of work with a diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def error(message: str, span: Optional[Span] = None) -> Diagnostic:
    return Diagnostic("error", message, span)


def report(diagnostics) -> None:
    """Print diagnostics to stderr as mlir-opt does (the commands' one way to report)."""
    import sys
    for d in diagnostics:
        print(d.format(), file=sys.stderr)


def has_errors(diagnostics) -> bool:
    return any(d.severity == "error" for d in diagnostics)
