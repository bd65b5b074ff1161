"""stablehlo: declared by the dialects issue (grammar, ops, verification)."""
from __future__ import annotations

from .base import Dialect

dialect = Dialect("stablehlo")
