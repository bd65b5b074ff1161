"""quant: MLIR's quantization types (`!quant.uniform<...>`); no ops of its own here.

Registering the namespace makes the types known (not an unregistered dialect's),
checked at parse time and spelt canonically (`quant_types.py`).
"""
from __future__ import annotations

from . import quant_types
from .base import Dialect

dialect = Dialect("quant", type_check=quant_types.check_text, type_parser=quant_types.parse_type)
