"""Op name -> semantics. An implementation takes (interpreter, op, operand values)
and returns the result values (a list), or a `Control` for terminators."""
from __future__ import annotations

from typing import Callable

IMPLS: dict[str, Callable] = {}


def impl(*names: str):
    def register(fn):
        for name in names:
            IMPLS[name] = fn
        return fn
    return register
