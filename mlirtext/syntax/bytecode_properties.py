"""Which inherent attributes an op's bytecode properties hold, and which as required ones.

MLIR's generated `writeProperties` writes an op's inherent attributes in name order,
a required one as its attribute index and an optional or default-valued one as
`(index << 1) | present`, then the segment sizes; the bytecode does not say which is
which, so the reader needs ODS's declarations: `bytecode_ods.py` (generated from the
iree-base-compiler 3.13 op classes) for the dialects that have them; for the rest
(stablehlo, chlo, IREE's check: no Python op classes) mlirtext's op declarations name the
attributes and the tables below say which are required.
"""
from __future__ import annotations

from .bytecode_ods import ODS_ATTRIBUTES as GENERATED

#: IREE's check dialect, in the generated table's shape: (required, optional, operand
#: segments, result segments).
ODS_ATTRIBUTES = {
    **GENERATED,
    "check.expect_almost_eq_const": ("value", "atol rtol", 0, 0),
    "check.expect_almost_eq": ("", "atol rtol", 0, 0),
    "check.expect_eq_const": ("value", "", 0, 0),
}

#: op name -> its required inherent attributes, for ops outside ODS_ATTRIBUTES; an attribute
#: not listed is optional or default-valued.
REQUIRED: dict[str, frozenset] = {name: frozenset(attrs.split()) for name, attrs in {
    "chlo.broadcast_compare": "comparison_direction",
    "chlo.constant": "value",
    "chlo.constant_like": "value",
    "chlo.top_k": "k",
    "scf.forall": "staticLowerBound staticStep staticUpperBound",
    "stablehlo.all_gather": "all_gather_dim replica_groups",
    "stablehlo.all_reduce": "replica_groups",
    "stablehlo.all_to_all": "concat_dimension replica_groups split_count split_dimension",
    "stablehlo.batch_norm_grad": "epsilon feature_index",
    "stablehlo.batch_norm_inference": "epsilon feature_index",
    "stablehlo.batch_norm_training": "epsilon feature_index",
    "stablehlo.broadcast": "broadcast_sizes",
    "stablehlo.broadcast_in_dim": "broadcast_dimensions",
    "stablehlo.collective_broadcast": "replica_groups",
    "stablehlo.collective_permute": "source_target_pairs",
    "stablehlo.collective_reduce": "replica_groups",
    "stablehlo.compare": "comparison_direction",
    "stablehlo.composite": "decomposition name",
    "stablehlo.concatenate": "dimension",
    "stablehlo.constant": "value",
    "stablehlo.convolution": "batch_group_count dimension_numbers feature_group_count",
    "stablehlo.cross-replica-sum": "replica_groups",
    "stablehlo.custom_call": "call_target_name",
    "stablehlo.dot_general": "dot_dimension_numbers",
    "stablehlo.dynamic_broadcast_in_dim": "broadcast_dimensions",
    "stablehlo.dynamic_conv": "batch_group_count dimension_numbers feature_group_count",
    "stablehlo.dynamic_gather": "dimension_numbers",
    "stablehlo.dynamic_iota": "iota_dimension",
    "stablehlo.dynamic_slice": "slice_sizes",
    "stablehlo.einsum": "einsum_config",
    "stablehlo.fft": "fft_length fft_type",
    "stablehlo.gather": "dimension_numbers slice_sizes",
    "stablehlo.get_dimension_size": "dimension",
    "stablehlo.get_tuple_element": "index",
    "stablehlo.iota": "iota_dimension",
    "stablehlo.map": "dimensions",
    "stablehlo.pad": "edge_padding_high edge_padding_low interior_padding",
    "stablehlo.recv": "channel_handle",
    "stablehlo.reduce": "dimensions",
    "stablehlo.reduce_precision": "exponent_bits mantissa_bits",
    "stablehlo.reduce_scatter": "replica_groups scatter_dimension",
    "stablehlo.reduce_window": "window_dimensions",
    "stablehlo.reverse": "dimensions",
    "stablehlo.rng": "rng_distribution",
    "stablehlo.rng_bit_generator": "rng_algorithm",
    "stablehlo.scatter": "scatter_dimension_numbers",
    "stablehlo.send": "channel_handle",
    "stablehlo.set_dimension_size": "dimension",
    "stablehlo.slice": "limit_indices start_indices strides",
    "stablehlo.torch_index_select": "batch_dims dim",
    "stablehlo.transpose": "permutation",
    "stablehlo.triangular_solve": "left_side lower transpose_a unit_diagonal",
    "stablehlo.unary_einsum": "einsum_config",
    "tensor.gather": "gather_dims",
    "tensor.parallel_insert_slice": "static_offsets static_sizes static_strides",
    "tensor.scatter": "scatter_dims",
    "util.func": "function_type sym_name",
    "util.global": "sym_name type",
}.items()}

#: op name -> how many optional attributes ODS declares before and after all of the op's named
#: ones (in name order) that neither mlirtext nor these tables can name: read, and refused
#: when present. (Found empty in every corpus case iree-opt writes.)
UNNAMED_SLOTS: dict[str, tuple] = {
    "stablehlo.custom_call": (0, 1),
    "chlo.top_k": (1, 0),
}


def attribute_order(op: str, declared) -> list:
    """The op's inherent attributes (segment sizes aside) in the order the properties hold them;
    `declared`: the names mlirtext's declaration of the op gives, for ops ODS_ATTRIBUTES lacks."""
    if op in ODS_ATTRIBUTES:
        required, optional = ODS_ATTRIBUTES[op][:2]
        return sorted(required.split() + optional.split())
    return sorted(n for n in declared if not n.endswith("SegmentSizes"))


def segment_counts(op: str) -> tuple:
    """How many operand and result segments the op's segment-size arrays have (None: not known,
    which a sparse-encoded array needs)."""
    if op in ODS_ATTRIBUTES:
        return ODS_ATTRIBUTES[op][2], ODS_ATTRIBUTES[op][3]
    return None, None


def is_required(op: str, attr: str) -> bool:
    if op in ODS_ATTRIBUTES:
        return attr in ODS_ATTRIBUTES[op][0].split()
    return attr in REQUIRED.get(op, ())
