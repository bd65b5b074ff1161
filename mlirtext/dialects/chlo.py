"""chlo: client HLO ops: broadcasting binaries, special functions and a few composites.

Built from the HLO family modules (`hlo/`, `op_set.CHLO_OPS`): the elementwise and
broadcasting families with declared assembly formats, top_k and ragged_dot (whose checks
they share with mhlo's), the constants and scan (its rule is in `grammars/hlo.lark`, shared
with stablehlo and mhlo). chlo ops have no stablehlo counterpart and no type-constraint
table: the checks are their own.
"""
from __future__ import annotations

from .base import Dialect
from .hlo.declare import declare_ops
from .hlo.op_set import CHLO_OPS, CHLO_RULES

dialect = Dialect("chlo")
dialect.rules.update(CHLO_RULES)
declare_ops(dialect, "chlo", CHLO_OPS)
