"""stablehlo / mhlo canonicalizations."""
from __future__ import annotations

from ...dialects.hlo_attrs import int_list
from .common import NoOpWhenSameType


def _identity_permutation(op) -> bool:
    perm = int_list(op.attr("permutation"))
    return perm is not None and perm == list(range(len(perm)))


def _in_order_dims(op) -> bool:
    dims = int_list(op.attr("broadcast_dimensions"))
    return dims is not None and dims == list(range(len(dims)))


def _both(name: str) -> tuple[str, str]:
    return f"stablehlo.{name}", f"mhlo.{name}"


PATTERNS = [
    NoOpWhenSameType(*_both("reshape"), *_both("convert"), *_both("bitcast_convert")),
    NoOpWhenSameType(*_both("transpose"), is_identity=_identity_permutation),
    NoOpWhenSameType(*_both("broadcast_in_dim"), is_identity=_in_order_dims),
]
