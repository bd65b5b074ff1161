"""Where the `.lark` grammar files are: read by the table builder, and by the llvm dialect
for its intrinsic names (so this module needs no lark)."""
from __future__ import annotations

from pathlib import Path


def grammar_dir() -> Path:
    """`grammars/` of a source checkout, else the copy installed as package data."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / "grammars"
    if (checkout / "core.lark").is_file():
        return checkout
    return package / "grammars"  # installed: shipped as package data mlirtext/grammars
