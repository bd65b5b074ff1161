"""chlo: client HLO ops: broadcasting binaries, special functions and a few composites.

The custom syntax is in `grammars/hlo.lark` (shared with stablehlo and mhlo).
chlo ops have no stablehlo counterpart, so their checks are looked up by their
own name in `hlo_verify.VERIFIERS`.
"""
from __future__ import annotations

from . import hlo_verify, stablehlo
from .base import PURE, Dialect

dialect = Dialect("chlo")

#: Broadcasting elementwise binaries (`chlo.broadcast_add`, ...).
BROADCAST_BINARY = ("add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply",
                    "next_after", "or", "polygamma", "power", "remainder", "shift_left",
                    "shift_right_arithmetic", "shift_right_logical", "subtract", "xor", "zeta")
#: Elementwise unary special functions.
UNARY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "digamma",
         "erf", "erf_inv", "erfc", "is_inf", "is_neg_inf", "is_pos_inf", "lgamma", "sinh", "square", "tan")
#: Same-shape binaries.
BINARY = ("next_after", "polygamma", "zeta", "mulhi")

_print = stablehlo.CHLO_PRINTERS.get

for _name in BROADCAST_BINARY:
    dialect.op(f"chlo.broadcast_{_name}", f"Broadcasting elementwise {_name}.", (PURE,),
               ("broadcast_dimensions",), hlo_verify.verifier_for(f"chlo.broadcast_{_name}"),
               _print("broadcast_binary"))
dialect.op("chlo.broadcast_compare", "Broadcasting elementwise comparison.", (PURE,),
           ("broadcast_dimensions", "comparison_direction", "compare_type"),
           hlo_verify.verifier_for("chlo.broadcast_compare"), _print("broadcast_compare"))
dialect.op("chlo.broadcast_select", "Broadcasting select.", (PURE,), (),
           hlo_verify.verifier_for("chlo.broadcast_select"), _print("broadcast_select"))
for _name in UNARY:
    dialect.op(f"chlo.{_name}", f"Elementwise {_name}.", (PURE,), (), hlo_verify.verifier_for(f"chlo.{_name}"),
               _print("unary"))
for _name in BINARY:
    dialect.op(f"chlo.{_name}", f"Elementwise {_name}.", (PURE,), (), hlo_verify.verifier_for(f"chlo.{_name}"),
               _print("binary"))
dialect.op("chlo.constant_like", "A splat constant shaped like its operand.", (PURE,), ("value",),
           hlo_verify.verifier_for("chlo.constant_like"), _print("constant_like"))
dialect.op("chlo.constant", "A constant.", (PURE,), ("value",), hlo_verify.verifier_for("chlo.constant"),
           _print("constant"))
dialect.op("chlo.top_k", "The k largest elements and their indices.", (PURE,), ("k",),
           hlo_verify.verifier_for("chlo.top_k"), _print("top_k"))
dialect.op("chlo.ragged_dot", "Dot with ragged groups.", (PURE,),
           ("ragged_dot_dimension_numbers", "precision_config"), hlo_verify.verifier_for("chlo.ragged_dot"),
           _print("ragged_dot"))
dialect.op("chlo.scan", "A scan (prefix computation) along a dimension.", (), ("dimension", "is_reverse"),
           hlo_verify.verifier_for("chlo.scan"), _print("scan"))
