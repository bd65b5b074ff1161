"""Canonicalization patterns, one module per dialect family (folders live in the dialects)."""
from __future__ import annotations

from ..rewriter import RewritePattern


def canonicalization_patterns() -> list[RewritePattern]:
    from . import hlo, static_shapes, tensor
    return [*hlo.PATTERNS, *tensor.PATTERNS, *static_shapes.PATTERNS]
