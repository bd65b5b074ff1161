"""Which inherent attributes an op's bytecode properties hold as required ones.

MLIR's generated `writeProperties` writes an op's inherent attributes in name order,
a required one as its attribute index and an optional or default-valued one as
`(index << 1) | present`; the bytecode does not say which is which, so the reader
needs this table (ODS's `OptionalAttr`/`DefaultValuedAttr` versus the rest), for
the ops of the dialects iree-opt writes. An attribute not listed is optional.
"""
from __future__ import annotations

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
}.items()}


#: op name -> inherent attributes ODS declares that mlirtext's op declarations leave out
#: (they still take a place in the properties).
UNDECLARED: dict[str, tuple] = {
    "func.func": ("no_inline",),
}


def attribute_order(op: str, declared) -> list:
    """The op's inherent attributes (segment sizes aside) in the order the properties hold them."""
    return sorted({n for n in declared if not n.endswith("SegmentSizes")} | set(UNDECLARED.get(op, ())))


def is_required(op: str, attr: str) -> bool:
    return attr in REQUIRED.get(op, ())
