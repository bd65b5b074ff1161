"""tensor canonicalizations."""
from __future__ import annotations

from ..rewriter import RewritePattern
from .common import NoOpWhenSameType

_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")


class ReshapeOfReshape(RewritePattern):
    """A collapse_shape of an expand_shape (or the other way round) that gives back the
    original type is the original value."""
    ops = _RESHAPES

    def match_and_rewrite(self, op, rw) -> bool:
        source = op.operand("src")
        inner = getattr(source, "op", None)
        if inner is None or inner.name not in _RESHAPES or inner.name == op.name:
            return False
        original = inner.operand("src")
        if original.type != op.results[0].type:
            return False
        rw.replace_op(op, [original])
        return True


PATTERNS = [NoOpWhenSameType("tensor.cast"), ReshapeOfReshape()]
