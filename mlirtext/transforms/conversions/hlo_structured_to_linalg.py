"""hlo -> linalg/tensor/scf for the ops TOSA cannot express (exactly), one module per kind:

- `hlo_movement_to_linalg`: pad, strided slices, dynamic_slice / dynamic_update_slice, broadcast;
- `hlo_indexing_to_linalg`: gather, torch_index_select, scatter, select_and_scatter;
- `hlo_reduce_to_linalg`: reduce with any body or several inputs, reduce_window;
- `hlo_contraction_to_linalg`: convolution, dot_general on types tosa.matmul does not take;
- `hlo_sort_to_linalg`: sort, chlo.scan;
- `hlo_control_to_scf`: while / if / case;

built on `hlo_generic` (generics, loops in bodies, cost bounds, the base pattern) and
`hlo_scalar` (scalar bodies, regions copied op by op). Each data op becomes one
`linalg.generic` (or a short chain) that says, per element of the result, where its value
comes from. These patterns run in the convert-hlo-to-tosa pass after the TOSA ones, so an op
with an exact TOSA form always takes it.
"""
from __future__ import annotations

from . import (hlo_contraction_to_linalg, hlo_control_to_scf, hlo_indexing_to_linalg, hlo_movement_to_linalg,
               hlo_reduce_to_linalg, hlo_sort_to_linalg)

PATTERNS = [*hlo_movement_to_linalg.PATTERNS, *hlo_indexing_to_linalg.PATTERNS, *hlo_reduce_to_linalg.PATTERNS,
            *hlo_contraction_to_linalg.PATTERNS, *hlo_sort_to_linalg.PATTERNS, *hlo_control_to_scf.PATTERNS]
