"""Dialect conversion: patterns plus a legality target.

A conversion rewrites with its patterns until nothing applies, then checks the
target: every op still illegal is reported at its location ("failed to legalize
'stablehlo.fft' to linalg"), all of them, and the pass fails, so no half-lowered
text is ever printed as if it were a success.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..diagnostics import Diagnostic
from ..ir.core import Operation
from .driver import GreedyDriver
from .passes import PassFailure
from .rewriter import RewritePattern


@dataclass(frozen=True)
class ConversionTarget:
    """What may remain after a conversion: whole dialects, single ops, or a predicate."""
    level: str                                   # the level's name, for messages
    legal_dialects: frozenset = frozenset()
    legal_ops: frozenset = frozenset()
    illegal_ops: frozenset = frozenset()         # illegal even when their dialect is legal
    dynamic: dict = field(default_factory=dict)  # op name -> predicate(op) -> legal?

    def is_legal(self, op: Operation) -> bool:
        if op.name in self.illegal_ops:
            return False
        check = self.dynamic.get(op.name)
        if check is not None:
            return check(op)
        return op.name in self.legal_ops or op.dialect in self.legal_dialects


@dataclass
class PartialConversion:
    """Ops a conversion leaves as they are (MLIR's applyPartialConversion): the patterns are not
    offered them and they may stay illegal. `used` once a conversion ran under it (a pass that is
    no conversion never looks). Made by `partial_conversion`."""
    frozen: frozenset
    used: bool = False


_PARTIAL: ContextVar[Optional[PartialConversion]] = ContextVar("partial_conversion", default=None)


@contextmanager
def partial_conversion(ops) -> Iterator[PartialConversion]:
    """Within it, a conversion leaves `ops` (and what is nested in them) unconverted: bisect applies a
    conversion pass to some of a function's ops, the rest left as they were, to find the one whose
    rewrite changes the numbers."""
    frozen = frozenset(id(nested) for op in ops for nested in op.walk())
    partial = PartialConversion(frozen)
    token = _PARTIAL.set(partial)
    try:
        yield partial
    finally:
        _PARTIAL.reset(token)


def apply_conversion(root: Operation, patterns: list[RewritePattern], target: ConversionTarget) -> None:
    """Rewrite `root` with `patterns`; raise PassFailure listing every op left illegal (but the
    ops a `partial_conversion` around it leaves as they are)."""
    partial = _PARTIAL.get()
    frozen = partial.frozen if partial is not None else frozenset()
    if partial is not None:
        partial.used = True
    GreedyDriver(patterns, fold=False, frozen=frozen).run(root)
    check_legal(root, target, frozen)


def check_legal(root: Operation, target: ConversionTarget, allowed: frozenset = frozenset()) -> None:
    """Raise PassFailure naming every op under `root` that `target` does not allow (`allowed`: ids
    of ops let stay whatever they are)."""
    illegal = [op for op in root.walk() if op is not root and id(op) not in allowed and not target.is_legal(op)]
    if illegal:
        raise PassFailure("", diagnostics=[
            Diagnostic("error", f"failed to legalize '{op.name}' to {target.level}", op.name_span or op.span)
            for op in illegal])
