"""Which inherent attributes an op's bytecode properties hold, and which as required ones.

MLIR's generated `writeProperties` writes an op's inherent attributes in name order,
a required one as its attribute index and an optional or default-valued one as
`(index << 1) | present`, then the segment sizes; the bytecode does not say which is
which, so the reader needs ODS's declarations: `bytecode_ods.py` (generated from the
iree-base-compiler 3.13 op classes) for the dialects it has, the tables below for the
rest (stablehlo, chlo, check: no Python op classes), over mlirtext's op declarations.
"""
from __future__ import annotations

from .bytecode_ods import ODS_ATTRIBUTES as GENERATED

#: IREE's check dialect has no Python op classes: its ODS, in the generated table's shape.
ODS_ATTRIBUTES = {
    **GENERATED,
    "check.expect_almost_eq_const": ("value", "atol rtol", 0, 0),
    "check.expect_almost_eq": ("", "atol rtol", 0, 0),
    "check.expect_eq_const": ("value", "", 0, 0),
}

#: op name -> its required inherent attributes.
REQUIRED: dict[str, frozenset] = {name: frozenset(attrs.split()) for name, attrs in {
    "func.func": "sym_name function_type",
    "func.call": "callee",
    "arith.constant": "value",
    "arith.cmpi": "predicate",
    "arith.cmpf": "predicate",
    "tensor.extract_slice": "static_offsets static_sizes static_strides",
    "tensor.insert_slice": "static_offsets static_sizes static_strides",
    "tensor.parallel_insert_slice": "static_offsets static_sizes static_strides",
    "tensor.pad": "static_low static_high",
    "tensor.expand_shape": "reassociation static_output_shape",
    "tensor.collapse_shape": "reassociation",
    "tensor.concat": "dim",
    "tensor.gather": "gather_dims",
    "tensor.scatter": "scatter_dims",
    "linalg.generic": "indexing_maps iterator_types",
    "linalg.transpose": "permutation",
    "linalg.broadcast": "dimensions",
    "linalg.reduce": "dimensions",
    "memref.subview": "static_offsets static_sizes static_strides",
    "memref.reinterpret_cast": "static_offsets static_sizes static_strides",
    "memref.expand_shape": "reassociation static_output_shape",
    "memref.collapse_shape": "reassociation",
    "memref.global": "sym_name type",
    "memref.get_global": "name",
    "memref.transpose": "permutation",
    "scf.forall": "staticLowerBound staticUpperBound staticStep",
    "cf.switch": "case_operand_segments",
    "llvm.func": "sym_name function_type",
    "llvm.mlir.constant": "value",
    "llvm.mlir.global": "global_type sym_name linkage",
    "llvm.mlir.addressof": "global_name",
    "llvm.icmp": "predicate",
    "llvm.fcmp": "predicate",
    "llvm.getelementptr": "rawConstantIndices elem_type",
    "llvm.alloca": "elem_type",
    "llvm.extractvalue": "position",
    "llvm.insertvalue": "position",
    "util.global": "sym_name type",
    "util.func": "sym_name function_type",
    "chlo.broadcast_compare": "comparison_direction",
    "chlo.constant_like": "value",
    "chlo.constant": "value",
    "chlo.top_k": "k",
    "stablehlo.constant": "value",
    "stablehlo.compare": "comparison_direction",
    "stablehlo.broadcast_in_dim": "broadcast_dimensions",
    "stablehlo.broadcast": "broadcast_sizes",
    "stablehlo.dynamic_broadcast_in_dim": "broadcast_dimensions",
    "stablehlo.transpose": "permutation",
    "stablehlo.reduce": "dimensions",
    "stablehlo.map": "dimensions",
    "stablehlo.reverse": "dimensions",
    "stablehlo.iota": "iota_dimension",
    "stablehlo.dynamic_iota": "iota_dimension",
    "stablehlo.concatenate": "dimension",
    "stablehlo.get_dimension_size": "dimension",
    "stablehlo.set_dimension_size": "dimension",
    "stablehlo.slice": "start_indices limit_indices strides",
    "stablehlo.dynamic_slice": "slice_sizes",
    "stablehlo.gather": "dimension_numbers slice_sizes",
    "stablehlo.dynamic_gather": "dimension_numbers",
    "stablehlo.scatter": "scatter_dimension_numbers",
    "stablehlo.reduce_window": "window_dimensions",
    "stablehlo.pad": "edge_padding_low edge_padding_high interior_padding",
    "stablehlo.dot_general": "dot_dimension_numbers",
    "stablehlo.convolution": "dimension_numbers feature_group_count batch_group_count",
    "stablehlo.dynamic_conv": "dimension_numbers feature_group_count batch_group_count",
    "stablehlo.fft": "fft_type fft_length",
    "stablehlo.rng": "rng_distribution",
    "stablehlo.rng_bit_generator": "rng_algorithm",
    "stablehlo.get_tuple_element": "index",
    "stablehlo.batch_norm_grad": "epsilon feature_index",
    "stablehlo.batch_norm_inference": "epsilon feature_index",
    "stablehlo.batch_norm_training": "epsilon feature_index",
    "stablehlo.all_gather": "all_gather_dim replica_groups",
    "stablehlo.all_reduce": "replica_groups",
    "stablehlo.reduce_scatter": "scatter_dimension replica_groups",
    "stablehlo.all_to_all": "split_dimension concat_dimension split_count replica_groups",
    "stablehlo.collective_permute": "source_target_pairs",
    "stablehlo.collective_broadcast": "replica_groups",
    "stablehlo.collective_reduce": "replica_groups",
    "stablehlo.cross-replica-sum": "replica_groups",
    "stablehlo.custom_call": "call_target_name",
    "stablehlo.composite": "name decomposition",
    "stablehlo.triangular_solve": "left_side lower unit_diagonal transpose_a",
    "stablehlo.send": "channel_handle",
    "stablehlo.recv": "channel_handle",
    "stablehlo.reduce_precision": "exponent_bits mantissa_bits",
    "stablehlo.einsum": "einsum_config",
    "stablehlo.unary_einsum": "einsum_config",
    "stablehlo.torch_index_select": "dim batch_dims",
}.items()}

#: dialect -> its inherent attributes that are optional or default-valued, for a dialect
#: whose attributes are otherwise all required (TOSA's are).
ALL_REQUIRED_BUT: dict[str, frozenset] = {
    "tosa": frozenset({"nan_mode", "local_bound", "initial_value"}),
}


#: op name -> inherent attributes ODS declares that mlirtext's op declarations leave out
#: (they still take a place in the properties).
UNDECLARED: dict[str, tuple] = {
    "func.func": ("no_inline",),
    "func.call": ("no_inline",),
}

#: op name -> how many optional attributes ODS declares after all of the op's named ones (in
#: name order) that neither mlirtext nor this table can name: read, and refused when present.
#: (stablehlo.custom_call's ninth slot, found empty in every corpus case iree-opt writes.)
UNNAMED_TRAILING: dict[str, int] = {
    "stablehlo.custom_call": 1,
}

#: op name -> names mlirtext's declarations accept that the ODS of iree-opt 3.13 does not
#: have (older spellings), so that hold no place in the properties.
NOT_IN_ODS: dict[str, tuple] = {
    "tosa.const": ("value",),
}


def attribute_order(op: str, declared) -> list:
    """The op's inherent attributes (segment sizes aside) in the order the properties hold them."""
    if op in ODS_ATTRIBUTES:
        required, optional = ODS_ATTRIBUTES[op][:2]
        return sorted(required.split() + optional.split())
    names = {n for n in declared if not n.endswith("SegmentSizes")} - set(NOT_IN_ODS.get(op, ()))
    return sorted(names | set(UNDECLARED.get(op, ())))


def segment_counts(op: str) -> tuple:
    """How many operand and result segments the op's segment-size arrays have (None: not known,
    which a sparse-encoded array needs)."""
    if op in ODS_ATTRIBUTES:
        return ODS_ATTRIBUTES[op][2], ODS_ATTRIBUTES[op][3]
    return None, None


def is_required(op: str, attr: str) -> bool:
    if op in ODS_ATTRIBUTES:
        return attr in ODS_ATTRIBUTES[op][0].split()
    dialect = op.partition(".")[0]
    if dialect in ALL_REQUIRED_BUT:
        return attr not in ALL_REQUIRED_BUT[dialect]
    return attr in REQUIRED.get(op, ())
