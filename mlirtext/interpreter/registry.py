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


#: `stablehlo.custom_call` / `mhlo.custom_call` targets -> semantics, same signature as `IMPLS`
#: (check.py registers the `check.*` targets; other modules add theirs with `@custom_call`).
CUSTOM_CALLS: dict[str, Callable] = {}


def custom_call(*targets: str):
    def register(fn):
        for target in targets:
            CUSTOM_CALLS[target] = fn
        return fn
    return register
