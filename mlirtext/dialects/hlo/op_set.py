"""The HLO op set, gathered from the family modules: the ops stablehlo and mhlo share
(short names), mhlo's and chlo's own, and the grammar callbacks of `grammars/hlo.lark`."""
from __future__ import annotations

from . import (broadcasts, collectives, constants, control_flow, convolution, custom_call, dot, elementwise, gather,
               mhlo_async, numerics, quantization, reductions, scatter, shapes, syntax)

FAMILIES = (shapes, elementwise, broadcasts, constants, dot, convolution, reductions, gather, scatter, control_flow,
            collectives, numerics, quantization, custom_call, mhlo_async)

# A family without ops of a kind leaves its table out.
#: The op set stablehlo and mhlo share, declared under either prefix.
SHARED_OPS = tuple(op for family in FAMILIES for op in getattr(family, "OPS", ()))
#: mhlo's own ops (`mhlo.<name>`).
MHLO_OPS = tuple(op for family in FAMILIES for op in getattr(family, "MHLO_OPS", ()))
#: chlo's ops (`chlo.<name>`).
CHLO_OPS = tuple(op for family in FAMILIES for op in getattr(family, "CHLO_OPS", ()))
#: Grammar rule -> callback, for the hand-written rules of `grammars/hlo.lark`.
RULES = {rule: fn for module in (syntax, *FAMILIES) for rule, fn in getattr(module, "RULES", {}).items()}
#: chlo's grammar callbacks (chlo owns them: a chlo op's rule loads chlo).
CHLO_RULES = {rule: fn for family in FAMILIES for rule, fn in getattr(family, "CHLO_RULES", {}).items()}
