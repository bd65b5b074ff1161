"""MLIR string literals: `"a\\n\\22b"` (escapes \\n \\t \\" \\\\ and two hex digits)."""
from __future__ import annotations

import re

_ESCAPE = re.compile(r"\\(?:([nt\"\\])|([0-9a-fA-F]{2})|(.?))", re.S)
_SIMPLE = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def unescape(literal: str) -> str:
    """The value of a quoted literal; ValueError on a bad escape."""
    body = literal[1:-1]
    if "\\" not in body:
        return body

    def repl(m):
        if m.group(1):
            return _SIMPLE[m.group(1)]
        if m.group(2):
            return chr(int(m.group(2), 16))
        raise ValueError(f"unknown escape in string literal: '\\{m.group(3)}'")
    return _ESCAPE.sub(repl, body)
