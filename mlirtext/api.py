"""The library entry points the command line, the server and the tests share."""
from __future__ import annotations

from .diagnostics import Diagnostic, has_errors
from .syntax.parser import ParseResult, parse, parse_file_chunks
from .syntax.printer import print_module
from .verifier import verify


def parse_and_verify(text: str, filename: str = "<stdin>") -> ParseResult:
    """Parse one input and, when it parsed cleanly, verify it (diagnostics in the result).

    After a syntax error the IR is partial (the broken op is missing), so the
    verifier is not run: it would only report consequences of the first error.
    """
    result = parse(text, filename)
    return _verified(result)


def _verified(result: ParseResult) -> ParseResult:
    if result.ok and result.module is not None:
        result.diagnostics.extend(verify(result.module))
    return result


def parse_chunks(text: str, filename: str, split: bool) -> list[ParseResult]:
    """Every `// -----` chunk (one unless `split`), parsed and verified."""
    return [_verified(r) for r in parse_file_chunks(text, filename, split)]


def to_text(result: ParseResult, generic: bool = False, print_locations: bool = False) -> str:
    text = print_module(result.module, generic=generic, aliases=result.aliases,
                        print_locations=print_locations)
    if result.file_metadata:
        text += f"\n{result.file_metadata}\n"
    return text


__all__ = ["Diagnostic", "ParseResult", "parse", "parse_and_verify", "parse_chunks", "print_module",
           "to_text", "verify", "has_errors"]
