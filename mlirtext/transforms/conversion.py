"""Dialect conversion: patterns plus a legality target.

A conversion rewrites with its patterns until nothing applies, then checks the
target: every op still illegal is reported at its location ("failed to legalize
'stablehlo.fft' to linalg"), all of them, and the pass fails, so no half-lowered
text is ever printed as if it were a success.
"""
from __future__ import annotations

from dataclasses import dataclass, field

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


def apply_conversion(root: Operation, patterns: list[RewritePattern], target: ConversionTarget) -> None:
    """Rewrite `root` with `patterns`; raise PassFailure listing every op left illegal."""
    GreedyDriver(patterns, fold=False).run(root)
    check_legal(root, target)


def check_legal(root: Operation, target: ConversionTarget) -> None:
    """Raise PassFailure naming every op under `root` that `target` does not allow."""
    illegal = [op for op in root.walk() if op is not root and not target.is_legal(op)]
    if illegal:
        raise PassFailure("", diagnostics=[
            Diagnostic("error", f"failed to legalize '{op.name}' to {target.level}", op.name_span or op.span)
            for op in illegal])
