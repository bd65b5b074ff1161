"""mhlo: XLA's HLO dialect: the StableHLO op set under the `mhlo.` prefix, plus its own ops.

Declarations reuse stablehlo's table (same inherent attributes, same checks,
looked up by the stablehlo name); the custom syntax is shared too
(`grammars/hlo.lark`), with mhlo's own spellings where they differ.
"""
from __future__ import annotations

from . import hlo_verify, stablehlo
from .base import PURE, Dialect

dialect = Dialect("mhlo")

#: mhlo ops that stablehlo does not have: name -> (summary, inherent attributes, pure).
MHLO_ONLY = {
    "add_dependency": ("Adds a token dependency to a value.", (), False),
    "async_start": ("Starts an asynchronous computation.", ("called_computation", "execution_thread"), False),
    "async_update": ("Blocks on an asynchronous computation's progress.", (), False),
    "async_done": ("Waits for an asynchronous computation.", (), False),
    "bitcast": ("Bitcast with a layout change.", (), True),
    "copy": ("Copies a value.", ("cross_program_prefetch_index",), True),
    "domain": ("Marks a sharding domain.", ("kind", "entry_metadata", "exit_metadata"), True),
    "fusion": ("A fused computation.", ("fusion_kind", "output_operand_aliases"), False),
    "minimum_broadcast_shapes": ("Minimal broadcast shapes.", (), True),
    "ragged_dot": ("Dot with ragged groups.", ("ragged_dot_dimension_numbers", "precision_config"), True),
    "stochastic_convert": ("Converts with stochastic rounding.", (), True),
    "topk": ("The k largest elements and their indices.", ("k", "largest"), True),
    "xla.rng_get_and_update_state": ("Reads and bumps the RNG state.", ("delta",), False),
    "acos": ("Elementwise acos.", (), True), "acosh": ("Elementwise acosh.", (), True),
    "asin": ("Elementwise asin.", (), True), "asinh": ("Elementwise asinh.", (), True),
    "atan": ("Elementwise atan.", (), True), "atanh": ("Elementwise atanh.", (), True),
    "cosh": ("Elementwise cosh.", (), True), "sinh": ("Elementwise sinh.", (), True),
    "erf": ("Elementwise erf.", (), True),
}

stablehlo.declare_family(dialect, "mhlo", stablehlo.PRINTERS, own_verify=("cross-replica-sum",))
for _short, (_summary, _props, _pure) in MHLO_ONLY.items():
    dialect.op(f"mhlo.{_short}", _summary, (PURE,) if _pure else (), _props,
               hlo_verify.verifier_for(f"mhlo.{_short}"), stablehlo.MHLO_PRINTERS.get(_short))
# mhlo's custom_call has one more inherent attribute than stablehlo's.
_cc = dialect.ops["mhlo.custom_call"]
dialect.op("mhlo.custom_call", _cc.summary, _cc.traits, _cc.properties + ("custom_call_schedule",),
           _cc.verify, _cc.print)

# Printing: the generic form as written (iree-opt, our reference, does not know mhlo).
for _name, _d in list(dialect.ops.items()):
    dialect.op(_name, _d.summary, _d.traits, _d.properties, _d.verify, stablehlo.print_as_written)
