"""The hlo step's lowerings for ops that are neither TOSA-shaped nor data movement: each module
has one reason (decompositions into simpler hlo ops, chlo functions as formulas, chlo broadcasting and top_k, dynamic ops
with static shapes, bit-level rounding, triangular solves, random numbers, barriers and tuples,
IREE's flow.tensor ops). The convert-hlo-to-tosa pass runs these patterns together with the
TOSA and linalg ones.
"""
from __future__ import annotations

from . import (chlo_broadcasting, chlo_decompositions, chlo_gamma_functions, chlo_next_after, chlo_special_functions,
               chlo_ragged_dot, chlo_special_functions_f64, chlo_top_k, chlo_zeta, flow_to_tensor,
               hlo_decompositions, hlo_map_to_linalg, hlo_reduce_precision, hlo_rng_bits_to_linalg, hlo_rng_to_linalg,
               hlo_solve_to_linalg, hlo_static_shapes, hlo_to_util, mhlo_to_stablehlo)

PATTERNS = [*hlo_decompositions.PATTERNS, *chlo_decompositions.PATTERNS, *chlo_special_functions.PATTERNS,
            *chlo_special_functions_f64.PATTERNS, *chlo_gamma_functions.PATTERNS, *chlo_next_after.PATTERNS,
            *chlo_broadcasting.PATTERNS, *chlo_ragged_dot.PATTERNS,
            *chlo_top_k.PATTERNS, *chlo_zeta.PATTERNS, *mhlo_to_stablehlo.PATTERNS, *hlo_static_shapes.PATTERNS,
            *hlo_solve_to_linalg.PATTERNS, *hlo_reduce_precision.PATTERNS, *hlo_rng_to_linalg.PATTERNS,
            *hlo_rng_bits_to_linalg.PATTERNS, *hlo_map_to_linalg.PATTERNS, *hlo_to_util.PATTERNS,
            *flow_to_tensor.PATTERNS]
