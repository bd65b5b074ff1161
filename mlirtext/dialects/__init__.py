"""The dialects mlirtext knows: their grammars, op declarations and rules.

Adding a dialect: a module here creating a `Dialect` that declares its ops (with
assembly formats: `assembly_format.declare_family`), named in
`registry.BUILTIN_MODULES`; syntax no format can say goes in `grammars/<name>.lark`
(an entry rule `<name>_op`).

Importing this package imports no dialect module: a `Registry` (`registry.py`)
imports each the first time its namespace is asked for. The names below are the
built-in registry's, for callers that pass no registry.
"""
from __future__ import annotations

from typing import Optional

from .base import Dialect, OpDef
from .registry import Registry, builtin_registry


def lookup(name: str) -> Optional[OpDef]:
    """The declaration of op `name` in the built-in registry, or None for an op mlirtext does not know."""
    return builtin_registry().lookup(name)


def builtin_dialects() -> tuple[Dialect, ...]:
    """Every built-in dialect (all imported)."""
    return builtin_registry().dialects()


def grammar_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys(d.grammar for d in builtin_dialects() if d.grammar))


def format_grammar() -> tuple:
    """((rule name, Lark text), ...) of every dialect's declared assembly formats."""
    return tuple(pair for d in builtin_dialects() for pair in d.format_grammar())


def __getattr__(name: str):
    # `DIALECTS`, the tuple callers used before the registry, built (importing every dialect) on first use
    if name == "DIALECTS":
        return builtin_dialects()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Dialect", "OpDef", "Registry", "builtin_registry", "builtin_dialects", "lookup",
           "grammar_names", "format_grammar"]
