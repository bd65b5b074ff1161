"""scatter: declaration and checks.
"""
from __future__ import annotations

from .. import hlo_attrs as A
from .declare import HloOp
from .shared import (attr, check_in_range, check_inferred, compatible_dims, compatible_shapes, dim_text, elt, fail,
                     first_duplicate, is_sorted, rank_of, shape_of, tensor, terminator, verify_reducer, with_elt)


def _scatter_dims(operand_t, indices_shape, update_t, f) -> None:
    uwd = A.dims_field(f, "update_window_dims")
    iwd = A.dims_field(f, "inserted_window_dims")
    ibd = A.dims_field(f, "input_batching_dims")
    sibd = A.dims_field(f, "scatter_indices_batching_dims")
    sdod = A.dims_field(f, "scatter_dims_to_operand_dims")
    ivd = A.int_field(f, "index_vector_dim")
    orank, urank = rank_of(operand_t), rank_of(update_t)
    os_ = shape_of(operand_t)
    size = len(uwd) + len(iwd) + len(ibd)
    if orank is not None and orank != size:
        fail(f"Expects rank-of operand to match size-of('update_window_dims') + size-of('inserted_window_dims') + "
             f"size-of('input_batching_dims') i.e. {size} but got {orank}.")
    if not is_sorted(uwd):
        fail(f"Expects update_window_dims to be sorted; got: [{', '.join(map(str, uwd))}].")
    if first_duplicate(uwd) is not None:
        fail(f"Expects update_window_dims to not repeat; got: [{', '.join(map(str, uwd))}].")
    if urank is not None:
        check_in_range("update_window_dims", uwd, urank, "rank-of('updates')")
    dup = first_duplicate(iwd + ibd)
    if dup is not None:
        fail(f"has duplicated dimension from inserted_window_dims and input_batching_dims: {dup}")
    if not is_sorted(iwd):
        fail(f"Expects inserted_window_dims to be sorted; got: [{', '.join(map(str, iwd))}].")
    if orank is not None:
        check_in_range("inserted_window_dims", iwd, orank, "rank-of('operand')")
    if not is_sorted(ibd):
        fail(f"Expects input_batching_dims to be sorted; got: [{', '.join(map(str, ibd))}].")
    if orank is not None:
        check_in_range("input_batching_dims", ibd, orank, "rank-of('operand')")
    if first_duplicate(sibd) is not None:
        fail(f"Expects scatter_indices_batching_dims to not repeat; got: [{', '.join(map(str, sibd))}].")
    check_in_range("scatter_indices_batching_dims", sibd, len(indices_shape), "rank-of('scatter_indices')")
    if ivd in sibd:
        fail(f"expects scatter_indices_batching_dims not to include index_vector_dim {ivd}.")
    if len(ibd) != len(sibd):
        fail("input_batching_dims and scatter_indices_batching_dims should have the same size.")
    if os_ is not None:
        for i, (a, b) in enumerate(zip(ibd, sibd)):
            if not compatible_dims(os_[a], indices_shape[b]):
                fail(f"input_batching_dims[{i}] and scatter_indices_batching_dims[{i}] must have compatible sizes, "
                     f"but got {dim_text(os_[a])} and {dim_text(indices_shape[b])}.")
    if ivd < len(indices_shape) and indices_shape[ivd] is not None and len(sdod) != indices_shape[ivd]:
        fail(f"Scatter op has {len(sdod)} elements in scatter_dims_to_operand_dims and the bound of dimension "
             f"index_vector_dim={ivd} of scatter_indices is {indices_shape[ivd]}. These two numbers must be equal.")
    dup = first_duplicate(sdod + ibd)
    if dup is not None:
        fail(f"has duplicated dimension from scatter_dims_to_operand_dims and input_batching_dims: {dup}")
    if orank is not None:
        check_in_range("scatter_dims_to_operand_dims", sdod, orank, "rank-of('operand')")


def _scatter(op):
    f = A.struct_fields(attr(op, "scatter_dimension_numbers"))
    k = len(op.operands)
    if f is None or k < 3 or k % 2 == 0:
        return
    n = (k - 1) // 2
    inputs, idx_t, updates = op.operand_types[:n], op.operand_types[n], op.operand_types[n + 1:]
    for t in inputs:
        if not (rank_of(t) in (None, rank_of(inputs[0])) and compatible_shapes(inputs[0], t)):
            fail("Not all inputs have compatible shapes.")
    for t in updates:
        if not (rank_of(t) in (None, rank_of(updates[0])) and compatible_shapes(updates[0], t)):
            fail("Not all updates have compatible shapes.")
    ishape = shape_of(idx_t)
    ivd = A.int_field(f, "index_vector_dim")
    if ishape is None:
        return
    if ivd < 0 or ivd > len(ishape):
        fail(f"Expects index_vector_dim to be in range [0, rank-of('scatter_indices')] i.e. [0, {len(ishape)}]. "
             f"got: {ivd}.")
    if op.regions and op.regions[0].blocks:
        verify_reducer(op.regions[0].blocks[0], inputs, [tensor((), elt(u)) for u in updates], [])
    expanded = list(ishape) + ([1] if ivd == len(ishape) else [])
    uwd = A.dims_field(f, "update_window_dims")
    iwd = A.dims_field(f, "inserted_window_dims")
    ibd = A.dims_field(f, "input_batching_dims")
    for u in updates:
        want = len(expanded) - 1 + len(uwd)
        if rank_of(u) is not None and rank_of(u) != want:
            fail(f"expects updates tensor must be of rank {want} ( == rank-of('scatter_indices') - 1 + "
                 f"size-of('update_window_dims'), where 'scatter_indices' is expanded by a trailing 1 dimension "
                 f"if 'index_vector_dim' == rank-of('scatter_indices')), but got {rank_of(u)}.")
    for t, u in zip(inputs, updates):
        _scatter_dims(t, expanded, u, f)
    for t, u in zip(inputs, updates):
        us, os_ = shape_of(u), shape_of(t)
        if us is None or os_ is None:
            continue
        max_sizes = [os_[i] for i in range(len(os_)) if i not in iwd and i not in ibd]
        for i, w in enumerate(uwd):
            if i >= len(max_sizes) or us[w] is None or max_sizes[i] is None:
                continue
            if us[w] > max_sizes[i]:
                fail(f"expects bounds of the window dimensions of updates to not exceed the bounds of the "
                     f"corresponding dimensions of operand. For dimension {w}, updates bound is {us[w]}, operand "
                     f"bound is {max_sizes[i]}.")
        seen = 0
        for i in range(len(us)):
            if i in uwd:
                continue
            if seen == ivd:
                seen += 1
            if seen < len(expanded) and not compatible_dims(us[i], expanded[seen]):
                fail(f"expects bounds of the scatter dimensions of updates to be same as the bounds of the "
                     f"corresponding dimensions of scatter indices. For scatter dimension {i}, updates bound is "
                     f"{dim_text(us[i])} , scatter_indices bound is {dim_text(expanded[seen])}.")
            seen += 1
    term = terminator(op.regions[0]) if op.regions else None
    if term is not None and len(term.operands) == n:
        check_inferred(op, [with_elt(t, elt(v.type)) for t, v in zip(inputs, term.operands)])


OPS = (
    HloOp("scatter", "Scatters updates at indices with a computation.",
          ("scatter_dimension_numbers", "indices_are_sorted", "unique_indices"), verify=_scatter),
)
