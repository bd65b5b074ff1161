"""The library entry points the command line, the server and the tests share."""
from __future__ import annotations

from typing import Optional

from .diagnostics import Diagnostic, has_errors
from .dialects.registry import Registry, builtin_registry
from .syntax.parser import ParseResult, parse, parse_file_chunks
from .syntax.printer import print_module
from .verifier import verify


def parse_and_verify(text: str, filename: str = "<stdin>", registry: Optional[Registry] = None,
                     allow_unregistered: bool = True) -> ParseResult:
    """Parse one input and, when it parsed cleanly, verify it (diagnostics in the result).

    After a syntax error the IR is partial (the broken op is missing), so the
    verifier is not run: it would only report consequences of the first error.
    `registry`: the dialects known (the built-in ones when None); ops of other dialects are
    checked structurally, or are an error (mlir-opt's) unless `allow_unregistered`.
    """
    result = parse(text, filename, registry=registry, allow_unregistered=allow_unregistered)
    return verified(result, registry)


def verified(result: ParseResult, registry: Optional[Registry] = None) -> ParseResult:
    """`result` with the verifier's diagnostics added, when it parsed cleanly."""
    if result.ok and result.module is not None:
        result.diagnostics.extend(verify(result.module, registry))
    return result


def parse_chunks(text: str, filename: str, split: bool, registry: Optional[Registry] = None,
                 allow_unregistered: bool = True) -> list[ParseResult]:
    """Every `// -----` chunk (one unless `split`), parsed and verified."""
    return [verified(r, registry) for r in parse_file_chunks(text, filename, split, registry, allow_unregistered)]


def to_text(result: ParseResult, generic: bool = False, print_locations: bool = False,
            registry: Optional[Registry] = None) -> str:
    text = print_module(result.module, generic=generic, aliases=result.aliases,
                        print_locations=print_locations, registry=registry)
    if result.file_metadata:
        text += f"\n{result.file_metadata}\n"
    return text


__all__ = ["Diagnostic", "ParseResult", "Registry", "builtin_registry", "parse", "parse_and_verify",
           "parse_chunks", "print_module", "to_text", "verified", "verify", "has_errors"]
