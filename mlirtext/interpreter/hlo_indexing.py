"""StableHLO / MHLO gather, dynamic_gather, scatter and torch_index_select, vectorised
with numpy fancy indexing over every (batch, offset) position at once."""
from __future__ import annotations

import numpy as np

from ..dialects.hlo_attrs import dims_field, int_field
from .hlo_reduce import scatter_into
from .hlo_regions import as_result, fields, integer, ints
from .machine import InterpreterError
from .registry import impl


def _index_vectors(indices: np.ndarray, index_vector_dim: int) -> np.ndarray:
    """Indices with the index vector dimension last (a size-1 one appended if absent)."""
    indices = np.asarray(indices).astype(np.int64)
    if index_vector_dim >= indices.ndim:
        return indices[..., None]
    return np.moveaxis(indices, index_vector_dim, -1)


def _batch_index_grid(batch_shape: tuple, dim: int) -> np.ndarray:
    """Along batch dimension `dim` of an index array of shape batch_shape: its coordinate."""
    shape = [1] * len(batch_shape)
    shape[dim] = batch_shape[dim]
    return np.arange(batch_shape[dim], dtype=np.int64).reshape(shape)


def _batch_dim(d_start: int, index_vector_dim: int) -> int:
    return d_start - (1 if d_start > index_vector_dim else 0)


def gather(operand, indices, f: dict, slice_sizes: list) -> np.ndarray:
    offset_dims = dims_field(f, "offset_dims")
    collapsed = dims_field(f, "collapsed_slice_dims")
    op_batching = dims_field(f, "operand_batching_dims")
    idx_batching = dims_field(f, "start_indices_batching_dims")
    start_index_map = dims_field(f, "start_index_map")
    ivd = int_field(f, "index_vector_dim", np.asarray(indices).ndim)
    operand = np.asarray(operand)
    vec = _index_vectors(indices, ivd)
    batch_shape = vec.shape[:-1]
    nb = len(batch_shape)
    rank = operand.ndim
    # start of each slice: batch_shape + (rank,) (clamped so the slice fits)
    starts = [np.zeros(batch_shape, np.int64) for _ in range(rank)]
    for k, d in enumerate(start_index_map):
        starts[d] = np.clip(vec[..., k], 0, operand.shape[d] - slice_sizes[d])
    for d_op, d_idx in zip(op_batching, idx_batching):
        starts[d_op] = np.broadcast_to(_batch_index_grid(batch_shape, _batch_dim(d_idx, ivd)), batch_shape)
    # offset grid over the operand dims that stay in the result
    kept = [d for d in range(rank) if d not in collapsed and d not in op_batching]
    no = len(kept)
    index = []
    for d in range(rank):
        s = starts[d].reshape(batch_shape + (1,) * no)
        if d in kept:
            j = kept.index(d)
            shape = [1] * (nb + no)
            shape[nb + j] = slice_sizes[d]
            s = s + np.arange(slice_sizes[d], dtype=np.int64).reshape(shape)
        index.append(s)
    gathered = operand[tuple(index)]  # batch... + offset...
    if gathered.shape != batch_shape + tuple(slice_sizes[d] for d in kept):
        gathered = np.broadcast_to(gathered, batch_shape + tuple(slice_sizes[d] for d in kept))
    # place offset dims at offset_dims, batch dims in the remaining positions, in order
    out_rank = nb + no
    batch_positions = [d for d in range(out_rank) if d not in offset_dims]
    perm = [0] * out_rank
    for i, p in enumerate(batch_positions):
        perm[p] = i
    for j, p in enumerate(sorted(offset_dims)):
        perm[p] = nb + j
    return np.transpose(gathered, perm)


@impl("stablehlo.gather", "mhlo.gather")
def _gather(interp, op, args):
    sizes = ints(op, "slice_sizes")
    return [as_result(op, gather(args[0], args[1], fields(op, "dimension_numbers"), sizes))]


@impl("stablehlo.dynamic_gather", "mhlo.dynamic_gather")
def _dynamic_gather(interp, op, args):
    sizes = [int(s) for s in np.asarray(args[2]).reshape(-1)]
    return [as_result(op, gather(args[0], args[1], fields(op, "dimension_numbers"), sizes))]


@impl("stablehlo.scatter", "mhlo.scatter")
def _scatter(interp, op, args):
    n = (len(args) - 1) // 2
    inputs = [np.asarray(a) for a in args[:n]]
    indices = np.asarray(args[n])
    updates = [np.asarray(a) for a in args[n + 1:]]
    f = fields(op, "scatter_dimension_numbers")
    window_dims = dims_field(f, "update_window_dims")
    inserted = dims_field(f, "inserted_window_dims")
    in_batching = dims_field(f, "input_batching_dims")
    idx_batching = dims_field(f, "scatter_indices_batching_dims")
    to_operand = dims_field(f, "scatter_dims_to_operand_dims")
    ivd = int_field(f, "index_vector_dim", indices.ndim)
    operand_shape = inputs[0].shape
    rank = len(operand_shape)
    ushape = updates[0].shape
    scatter_dims = [d for d in range(len(ushape)) if d not in window_dims]
    vec = _index_vectors(indices, ivd)
    # every update element's target: full index arrays over the update's shape
    # (update scatter dims run over batch_shape in order; window dims over the window)
    uidx = np.indices(ushape, sparse=True)
    batch_coords = [uidx[d] for d in scatter_dims]  # each broadcastable to ushape
    starts = [np.zeros((1,) * len(ushape), np.int64) for _ in range(rank)]
    vec_at = vec[tuple(batch_coords)] if batch_coords else vec.reshape((1,) * len(ushape) + vec.shape[-1:])
    for k, d in enumerate(to_operand):
        starts[d] = vec_at[..., k]
    for d_op, d_idx in zip(in_batching, idx_batching):
        starts[d_op] = batch_coords[_batch_dim(d_idx, ivd)]
    window_operand_dims = [d for d in range(rank) if d not in inserted and d not in in_batching]
    full = []
    for d in range(rank):
        s = starts[d]
        if d in window_operand_dims:
            s = s + uidx[window_dims[window_operand_dims.index(d)]]
        full.append(np.broadcast_to(s, ushape))
    valid = np.ones(ushape, bool)
    for d, s in enumerate(full):
        valid &= (s >= 0) & (s < operand_shape[d])
    flat_target = np.ravel_multi_index(tuple(np.where(valid, s, 0) for s in full), operand_shape)
    targets = flat_target[valid]
    outs = [x.reshape(-1).copy() for x in inputs]
    if inputs[0].size == 0:
        return [as_result(op, x, i) for i, x in enumerate(inputs)]
    scatter_into(interp, op.regions[0], outs, targets, [u[valid] for u in updates])
    return [as_result(op, o.reshape(operand_shape), i) for i, o in enumerate(outs)]


@impl("stablehlo.torch_index_select", "mhlo.torch_index_select")
def _torch_index_select(interp, op, args):
    operand, index = np.asarray(args[0]), np.asarray(args[1]).astype(np.int64)
    dim = integer(op, "dim")
    b = integer(op, "batch_dims")
    if dim < 0:
        dim += operand.ndim
    if b < 0:
        b += index.ndim
    if b == 0:
        return [as_result(op, np.take(operand, index, axis=dim))]
    if b > dim:
        raise InterpreterError("torch_index_select with batch_dims > dim")
    # result: operand[:b] + operand[b:dim] + index[b:] + operand[dim+1:]
    ob = operand.shape[:b]
    mid = operand.shape[b:dim]
    tail = operand.shape[dim + 1:]
    ishape = index.shape[b:]
    out_rank = len(ob) + len(mid) + len(ishape) + len(tail)
    idx = []
    pos = 0
    for i in range(b):
        shape = [1] * out_rank
        shape[i] = ob[i]
        idx.append(np.arange(ob[i]).reshape(shape))
    pos = b
    for i in range(len(mid)):
        shape = [1] * out_rank
        shape[pos + i] = mid[i]
        idx.append(np.arange(mid[i]).reshape(shape))
    pos += len(mid)
    ishape_full = [1] * out_rank
    ishape_full[:b] = ob
    ishape_full[pos:pos + len(ishape)] = ishape
    idx.append(index.reshape(ob + (1,) * len(mid) + ishape + (1,) * len(tail)).reshape(ishape_full))
    pos += len(ishape)
    for i in range(len(tail)):
        shape = [1] * out_rank
        shape[pos + i] = tail[i]
        idx.append(np.arange(tail[i]).reshape(shape))
    return [as_result(op, operand[tuple(idx)])]
