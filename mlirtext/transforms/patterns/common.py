"""Pattern shapes several dialects share."""
from __future__ import annotations

from ..rewriter import RewritePattern


class NoOpWhenSameType(RewritePattern):
    """`%r = op %x` whose result type equals the operand's is `%x` (a reshape, cast,
    convert or broadcast to the same type), when `is_identity(op)` agrees."""

    def __init__(self, *ops: str, is_identity=lambda op: True):
        self.ops = ops
        self.is_identity = is_identity

    def match_and_rewrite(self, op, rewriter) -> bool:
        if not op.operands or len(op.results) != 1:
            return False
        source = op.operands[0]
        if source.type != op.results[0].type or not self.is_identity(op):
            return False
        rewriter.replace_op(op, [source])
        return True
