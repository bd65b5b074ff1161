"""What grammar callbacks turn tokens into: quoted strings, numbers, symbol references.

The core rules and every dialect's callbacks share these; the module needs neither lark
nor the dialect set, so dialects import it at module level.
"""
from __future__ import annotations

from ..ir.attributes import SymbolRefAttr
from .strings import unescape


def string_value(ctx, tok, text=None) -> str:
    """The value of a quoted token (or of `text`, a quoted part of it)."""
    try:
        return unescape(tok.value if text is None else text)
    except ValueError as e:
        raise ctx.fail(str(e), tok)


def number_value(text: str):
    if text.lstrip("-").startswith("0x"):
        return int(text, 16)
    if "." in text or "e" in text or "E" in text:
        return float(text)
    return int(text)


def symbol_ref(ctx, tokens) -> SymbolRefAttr:
    """`@a::@"b c"` (SYMBOL tokens, bare or quoted) as a SymbolRefAttr; the use is recorded for
    the editor's navigation."""
    names = [string_value(ctx, t, t.value[1:]) if t.value[1:2] == '"' else t.value[1:] for t in tokens]
    ctx.state.symbol_uses.append((tokens[0].start, tokens[-1].end, names))
    return SymbolRefAttr(names[0], tuple(names[1:]))
