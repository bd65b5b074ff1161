"""Rewrite patterns and the rewriter through which they change the IR.

A pattern never edits the IR behind the driver's back: every insertion,
replacement and erasure goes through `PatternRewriter`, which tells the driver
what to revisit (MLIR's `PatternRewriter` listener, xDSL's `PatternRewriter`).
"""
from __future__ import annotations

from typing import Callable, Optional

from ..ir.core import Operation, Value


class RewritePattern:
    """Rewrites ops named in `ops` (all ops when empty); `match_and_rewrite` returns
    True when it changed the IR, and must leave the IR untouched when it returns False."""

    ops: tuple[str, ...] = ()

    def match_and_rewrite(self, op: Operation, rewriter: "PatternRewriter") -> bool:
        raise NotImplementedError


class PatternRewriter:
    """IR edits that keep use lists right and report what changed."""

    def __init__(self, on_new: Callable[[Operation], None] = lambda op: None,
                 on_erase: Callable[[Operation], None] = lambda op: None,
                 on_change: Callable[[Operation], None] = lambda op: None):
        self._on_new, self._on_erase, self._on_change = on_new, on_erase, on_change

    def create(self, before: Operation, name: str, operands=(), result_types=(), attributes=None,
               regions=(), location_of: Optional[Operation] = None) -> Operation:
        """A new op inserted before `before`, with the source position of `location_of`
        (default `before`), so diagnostics and the editor map it back to what the user wrote."""
        origin = location_of or before
        op = Operation(name, operands, result_types, attributes, regions, span=origin.span,
                       location=origin.location)
        op.name_span = origin.name_span
        return self.insert_before(before, op)

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        anchor.parent.insert_before(anchor, op)
        # Reported innermost last, so a LIFO worklist visits `op` before its regions' ops, as it
        # does ops that were there from the start: a pattern for `op` (a sort, a reduce) sees
        # its body as written, not already lowered.
        for nested in reversed(list(op.walk())):
            self._on_new(nested)
        return op

    def replace_op(self, op: Operation, values: list[Value]) -> None:
        """Replace all uses of `op`'s results with `values`, then erase `op`."""
        for result, value in zip(op.results, values, strict=True):
            if value.name is None and result.name is not None and getattr(value, "op", None) is not None:
                value.name = result.name  # the lowered text keeps the user's names
            for use in list(result.uses):
                self._on_change(use.op)
            result.replace_all_uses_with(value)
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        for operand in op.operands:
            self._notify_def(operand)
        for nested in op.walk():
            self._on_erase(nested)
        op.erase()

    def changed(self, op: Operation) -> None:
        """Call after editing `op` in place (operands, attributes)."""
        self._on_change(op)

    def _notify_def(self, value: Value) -> None:
        owner = getattr(value, "op", None)
        if isinstance(owner, Operation):
            self._on_change(owner)  # it may have become dead
