"""Completion: op and dialect names, values and block labels in scope, types, symbols, aliases."""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional

from ..dialects.registry import Registry, builtin_registry
from .document import Document
from .index import BLOCK, VALUE, piece_index

_WORD = re.compile(r"[%^@#!]?[\w$.\-]*$")
_TYPES = ["f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "index", "tensor<", "memref<",
          "vector<", "complex<", "!llvm.ptr"]


def op_names(registry: Optional[Registry] = None) -> tuple:
    """(op name, summary) of every op of `registry`'s dialects (the built-in ones when None)."""
    return _op_names(registry or builtin_registry(), (registry or builtin_registry()).serial)


@lru_cache(maxsize=8)
def _op_names(registry: Registry, serial: int) -> tuple:
    return tuple(sorted((name, d.summary) for dialect in registry.dialects() for name, d in dialect.ops.items()))


def complete(doc: Document, offset: int) -> list[tuple[str, str, str]]:
    """(label, kind, detail); kinds: "operation", "module" (a dialect), "variable",
    "label", "function", "constant" (an alias), "type"."""
    line_start = doc.text.rfind("\n", 0, offset) + 1
    before = doc.text[line_start:offset]
    word = _WORD.search(before).group()
    sigil = word[:1]
    piece = doc.piece_at(offset)
    if sigil == "%" and piece is not None:
        local = offset - piece.base
        seen = {}
        for e in piece_index(piece).entries:
            if e.kind == VALUE and e.is_def and e.start < local and e.obj.name:
                seen[f"%{e.obj.name}"] = str(e.obj.type)
        return [(name, "variable", t) for name, t in seen.items()]
    if sigil == "^" and piece is not None:
        labels = {f"^{e.obj.label}" for e in piece_index(piece).entries if e.kind == BLOCK and e.obj.label}
        return [(label, "label", "block") for label in sorted(labels)]
    if sigil == "@" and piece is not None:
        chunk = doc.chunk_of(piece)
        return [(f"@{name}", "function", str(op.attr("function_type") or op.name))
                for name, (_, op) in sorted(chunk.symbols.items())]
    if sigil in "#!" and word and piece is not None:
        chunk = doc.chunk_of(piece)
        items = [(name, "constant", "alias") for name in sorted(chunk.aliases) if name.startswith(sigil)]
        if sigil == "!":
            items.append(("!llvm.ptr", "type", "LLVM pointer"))
        return items
    stripped = before[:len(before) - len(word)].rstrip()
    if stripped.endswith((":", "->", "<", ",", "(")) and not re.search(r"=\s*$", stripped):
        if stripped.endswith((",", "(")) and "=" in before and ":" not in before:
            pass  # operand lists: fall through to values/ops below
        else:
            return [(t, "type", "builtin type") for t in _TYPES]
    names = op_names(doc.registry)
    if "." in word:
        dialect = word.split(".", 1)[0]
        return [(name, "operation", summary) for name, summary in names if name.startswith(dialect + ".")]
    dialects = sorted({name.split(".", 1)[0] for name, _ in names})
    return [(d, "module", "dialect") for d in dialects] + [(n, "operation", s) for n, s in names]
