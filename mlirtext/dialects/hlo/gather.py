"""gather and dynamic_gather: declarations and checks.
"""
from __future__ import annotations

from typing import Optional

from .. import hlo_attrs as A
from .declare import HloOp
from .shared import (attr, check_in_range, check_inferred, compatible_dims, constant_ints, dim_text, elt, fail,
                     first_duplicate, fmt_list, ints_attr, is_sorted, shape_of, tensor)


def _gather_result(operand_shape, indices_shape, slice_sizes, offset_dims, collapsed, operand_batching,
                   index_vector_dim):
    batch = [d for i, d in enumerate(indices_shape) if i != index_vector_dim]
    rank = len(offset_dims) + len(batch)
    if slice_sizes is None:
        offsets = [None] * (len(operand_shape) - len(collapsed) - len(operand_batching)) \
            if operand_shape is not None else None
    else:
        offsets = [s for i, s in enumerate(slice_sizes) if i not in collapsed and i not in operand_batching]
    out = []
    bi = oi = 0
    for d in range(rank):
        if d in offset_dims:
            out.append(offsets[oi] if offsets is not None and oi < len(offsets) else None)
            oi += 1
        else:
            out.append(batch[bi] if bi < len(batch) else None)
            bi += 1
    return out


def verify_gather_like(op, operand_t, indices_t, slice_sizes, f, scatter=False) -> Optional[list]:
    offset_dims = A.dims_field(f, "offset_dims")
    collapsed = A.dims_field(f, "collapsed_slice_dims")
    operand_batching = A.dims_field(f, "operand_batching_dims")
    indices_batching = A.dims_field(f, "start_indices_batching_dims")
    start_index_map = A.dims_field(f, "start_index_map")
    ivd = A.int_field(f, "index_vector_dim")
    ostate = shape_of(operand_t)
    istate = shape_of(indices_t)
    if ostate is not None:
        n = len(offset_dims) + len(collapsed) + len(operand_batching)
        if n != len(ostate):
            fail(f"offset_dims size ({len(offset_dims)}) plus collapse_slice_dims size ({len(collapsed)}) plus "
                 f"operand_batching_dims size ({len(operand_batching)}) is not equal to operand rank "
                 f"({len(ostate)})")
    if istate is not None:
        ir = len(istate)
        if ivd < 0 or ivd > ir:
            fail(f"Expects index_vector_dim to be in range [0, rank-of('start_indices')] i.e. [0, {ir}]. "
                 f"got: {ivd}.")
        size = istate[ivd] if ivd < ir else 1
        if size is not None and len(start_index_map) != size:
            fail(f"start_index_map size ({len(start_index_map)}) is not equal to size of index dimension "
                 f"({ivd}) of start_indices ({size})")
    if not is_sorted(offset_dims):
        fail(f"expects offset_dims to be sorted, got: {fmt_list(offset_dims)}")
    if first_duplicate(offset_dims) is not None:
        fail(f"expects offset_dims to not repeat, got: {fmt_list(offset_dims)}")
    if istate is not None:
        implied = len(offset_dims) + len(istate) - (1 if ivd < len(istate) else 0)
        check_in_range("offset_dims", offset_dims, implied, "implied-result-rank")
    dup = first_duplicate(collapsed + operand_batching)
    if dup is not None:
        fail(f"has duplicated dimension from collapsed_slice_dims and operand_batching_dims: {dup}")
    if not is_sorted(collapsed):
        fail(f"expects collapsed_slice_dims to be sorted, got: {fmt_list(collapsed)}")
    if ostate is not None:
        check_in_range("collapsed_slice_dims", collapsed, len(ostate), "rank-of('operand')")
    if not is_sorted(operand_batching):
        fail(f"expects operand_batching_dims to be sorted, got: {fmt_list(operand_batching)}")
    if ostate is not None:
        check_in_range("operand_batching_dims", operand_batching, len(ostate), "rank-of('operand')")
    if first_duplicate(indices_batching) is not None:
        fail(f"expects start_indices_batching_dims to not repeat, got: {fmt_list(indices_batching)}")
    if istate is not None:
        check_in_range("start_indices_batching_dims", indices_batching, len(istate),
                        "rank-of('start_indices')")
    if ivd in indices_batching:
        fail(f"expects start_indices_batching_dims not to include index_vector_dim {ivd}")
    if len(operand_batching) != len(indices_batching):
        fail("operand_batching_dims and start_indices_batching_dims should have the same size")
    if ostate is not None and istate is not None:
        for i, (a, b) in enumerate(zip(operand_batching, indices_batching)):
            x, y = ostate[a], istate[b]
            if not compatible_dims(x, y):
                fail(f"operand_batching_dims[{i}] and start_indices_batching_dims[{i}] must have compatible "
                     f"sizes, but got {x} and {y}")
    dup = first_duplicate(start_index_map + operand_batching)
    if dup is not None:
        fail(f"has duplicated dimension from start_index_map and operand_batching_dims: {dup}")
    if ostate is not None:
        check_in_range("start_index_map", start_index_map, len(ostate), "rank-of('operand')")
    if slice_sizes is not None and ostate is not None and len(slice_sizes) != len(ostate):
        fail(f"slice_sizes size ({len(slice_sizes)}) not equal to operand rank ({len(ostate)})")
    # As StableHLO's inferGatherOp: the slice sizes once the dimension numbers hold.
    for dims, name in ((collapsed, "collapsed_slice_dims"), (operand_batching, "operand_batching_dims")):
        for d in dims if slice_sizes is not None else ():
            if 0 <= d < len(slice_sizes) and slice_sizes[d] > 1:
                fail(f"Expects that for each dim in {name}, slice_sizes[dim] should be <= 1, "
                     f"but got {slice_sizes[d]}")
    if slice_sizes is not None and ostate is not None:
        for i, (s, d) in enumerate(zip(slice_sizes, ostate)):
            if s < 0 or (d is not None and s > d):
                fail(f"slice size ({s}) is out of bounds for operand dimension ({dim_text(d)}) at index {i}")
    if istate is None:
        return None
    return _gather_result(ostate, istate, slice_sizes, offset_dims, collapsed, operand_batching, ivd)


def _gather(op):
    f = A.struct_fields(attr(op, "dimension_numbers"))
    if f is None or len(op.operands) < 2:
        return
    operand_t, indices_t = op.operand_types[:2]
    if op.name.endswith("dynamic_gather"):
        slice_sizes = constant_ints(op.operand("slice_sizes")) if len(op.operands) > 2 else None
        ss, os_ = shape_of(op.operand_types[2]) if len(op.operands) > 2 else None, shape_of(operand_t)
        if slice_sizes is None and ss and os_ is not None and ss[0] is not None and ss[0] != len(os_):
            fail(f"slice_sizes size ({ss[0]}) not equal to operand rank ({len(os_)})")
    else:
        slice_sizes = ints_attr(op, "slice_sizes")
    shape = verify_gather_like(op, operand_t, indices_t, slice_sizes, f)
    if shape is not None and op.results:
        check_inferred(op, [tensor(shape, elt(operand_t))])


OPS = (
    HloOp("gather", "Gathers slices at indices.", ("dimension_numbers", "slice_sizes", "indices_are_sorted"),
          verify=_gather, inferred=True, operands=("operand", "start_indices")),
    HloOp("dynamic_gather", "gather with slice sizes given as a tensor.", ("dimension_numbers", "indices_are_sorted"),
          verify=_gather, inferred=True, operands=("operand", "start_indices", "slice_sizes")),
    HloOp("torch_index_select", "Index select (legacy).", ("dim", "batch_dims")),
)
