"""Affine maps as linalg's verifier needs them: dims, symbols and result expressions.

`affine_map<(d0, d1)[s0] -> (d0, d1 * 2 + s0)>` stays an OpaqueAttr in the IR;
`parse_map` reads its text. A result is ('dim', k) for a bare dimension,
('const', c) for a constant, else ('expr', text); `evaluate` computes an
expression for given dimension values (None when it cannot).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

_IDENT = re.compile(r"[A-Za-z_][\w$]*")


@dataclass(frozen=True)
class AffineMap:
    dims: tuple          # dimension names
    symbols: tuple       # symbol names
    results: tuple       # (kind, value) per result

    @property
    def num_dims(self) -> int:
        return len(self.dims)

    @property
    def num_results(self) -> int:
        return len(self.results)


def _split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    tail = text[start:]
    if tail.strip() or parts:
        parts.append(tail)
    return [p.strip() for p in parts]


def _group(text: str, pos: int, open_ch: str, close_ch: str) -> tuple[str, int]:
    """The body of the bracket group starting at text[pos] (== open_ch) and the end offset."""
    depth = 0
    for i in range(pos, len(text)):
        if text[i] == open_ch:
            depth += 1
        elif text[i] == close_ch:
            depth -= 1
            if depth == 0:
                return text[pos + 1:i], i + 1
    raise ValueError("unbalanced brackets")


@lru_cache(maxsize=4096)
def parse_map(text: str) -> Optional[AffineMap]:
    """The map of `affine_map<...>` text (or the bare `(d0) -> (d0)` body); None if unreadable."""
    body = text.strip()
    if body.startswith("affine_map<"):
        body = body[len("affine_map<"):-1].strip()
    try:
        if not body.startswith("("):
            return None
        dims_text, pos = _group(body, 0, "(", ")")
        rest = body[pos:].lstrip()
        syms_text = ""
        if rest.startswith("["):
            syms_text, p = _group(rest, 0, "[", "]")
            rest = rest[p:].lstrip()
        if not rest.startswith("->"):
            return None
        rest = rest[2:].lstrip()
        if not rest.startswith("("):
            return None
        results_text, _ = _group(rest, 0, "(", ")")
    except ValueError:
        return None
    dims = tuple(d for d in _split_top(dims_text) if d)
    syms = tuple(s for s in _split_top(syms_text) if s)
    index = {d: i for i, d in enumerate(dims)}
    results = []
    for r in _split_top(results_text):
        if r in index:
            results.append(("dim", index[r]))
        elif re.fullmatch(r"-?\d+", r):
            results.append(("const", int(r)))
        else:
            results.append(("expr", r))
    return AffineMap(dims, syms, tuple(results))


_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][\w$]*)|(.))")


def evaluate(m: AffineMap, expr: str, values: dict) -> Optional[int]:
    """Value of a result expression with dims bound to `values` (index -> int); None if unknown."""
    env = {name: values.get(i) for i, name in enumerate(m.dims)}
    tokens = []
    for num, name, ch in _TOKEN.findall(expr):
        if num:
            tokens.append(("num", int(num)))
        elif name:
            if name in ("floordiv", "ceildiv", "mod"):
                tokens.append(("op", name))
            elif name in env:
                if env[name] is None:
                    return None
                tokens.append(("num", env[name]))
            else:
                return None  # a symbol or something unknown
        elif ch.strip():
            tokens.append(("op", ch))
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else (None, None)

    def primary():
        nonlocal pos
        kind, v = peek()
        if kind == "num":
            pos += 1
            return v
        if v == "-":
            pos += 1
            return -primary()
        if v == "(":
            pos += 1
            x = additive()
            if peek()[1] != ")":
                raise ValueError
            pos += 1
            return x
        raise ValueError

    def term():
        nonlocal pos
        x = primary()
        while peek()[1] in ("*", "floordiv", "ceildiv", "mod"):
            op = peek()[1]
            pos += 1
            y = primary()
            if op == "*":
                x = x * y
            elif y == 0:
                raise ValueError
            elif op == "floordiv":
                x = x // y
            elif op == "ceildiv":
                x = -((-x) // y)
            else:
                x = x % y
        return x

    def additive():
        nonlocal pos
        x = term()
        while peek()[1] in ("+", "-"):
            op = peek()[1]
            pos += 1
            y = term()
            x = x + y if op == "+" else x - y
        return x

    try:
        value = additive()
    except (ValueError, IndexError, TypeError):
        return None
    return value if pos == len(tokens) else None
