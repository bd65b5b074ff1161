"""What the interpreter runs ops with: a `Semantics`, op name -> implementation (and custom-call
target -> implementation), which an `Interpreter` is given (the built-in one when none).

An implementation takes (interpreter, op, operand values) and returns the result values (a list),
or a `Control` for terminators. The built-in semantics are filled by the modules of this package
with `@impl` and `@custom_call` as they are imported; `machine.builtin_semantics()` imports them
all and hands the result out.
"""
from __future__ import annotations

from typing import Callable, Optional


class Semantics:
    """Implementations by op name, and `stablehlo.custom_call` / `mhlo.custom_call` targets by name
    (same signature; check.py gives the `check.*` targets)."""

    def __init__(self, impls: Optional[dict] = None, custom_calls: Optional[dict] = None):
        self.impls: dict[str, Callable] = dict(impls or {})
        self.custom_calls: dict[str, Callable] = dict(custom_calls or {})

    def extended(self, impls: Optional[dict] = None, custom_calls: Optional[dict] = None) -> "Semantics":
        """A copy with more (or other) implementations: this one is left as it is."""
        return Semantics({**self.impls, **(impls or {})}, {**self.custom_calls, **(custom_calls or {})})


#: The built-in semantics, as the modules of this package register them.
BUILTIN = Semantics()


def semantics_of(interp) -> Semantics:
    """What `interp` runs ops with; the built-in semantics for None (folding runs a pure op's
    implementation without an interpreter)."""
    return interp.semantics if interp is not None else BUILTIN


def impl(*names: str):
    """Register the decorated function as the built-in semantics of ops `names`."""
    def register(fn):
        for name in names:
            BUILTIN.impls[name] = fn
        return fn
    return register


def custom_call(*targets: str):
    """Register the decorated function as the built-in semantics of custom-call `targets`."""
    def register(fn):
        for target in targets:
            BUILTIN.custom_calls[target] = fn
        return fn
    return register
