"""memref semantics: buffers are numpy arrays that ops mutate in place.

An allocation is a flat numpy array (the "root"); a memref value is a view of it
(`reshape`, `subview`, `transpose`, `reinterpret_cast` are numpy views), so writes
through any view reach the buffer. The offset and strides MLIR's runtime prints
are the view's position in its root, in elements.
"""
from __future__ import annotations

import numpy as np

from ..dialects.memref import ATOMIC_KINDS
from ..ir import types as T
from ..ir.arrays import attr_to_array, check_allocation, dtype_of, unsigned_view
from ..ir.attributes import StringAttr, UnitAttr
from .machine import InterpreterError
from .registry import impl

DYNAMIC = -9223372036854775808


def allocate(shape, dtype) -> np.ndarray:
    """A zero-filled buffer of `shape` (a view of a flat root allocation)."""
    size = int(np.prod(shape, dtype=np.int64)) if shape else 1
    return np.zeros(max(size, 1), dtype=dtype)[:size].reshape(shape)


def root_of(a: np.ndarray) -> np.ndarray:
    """The array owning `a`'s memory (through views and `as_strided`'s wrapper object)."""
    base = a
    while True:
        b = base.base
        if not isinstance(b, np.ndarray):
            b = getattr(b, "base", None)  # as_strided keeps its source behind a DummyArray
        if not isinstance(b, np.ndarray):
            return base
        base = b


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def layout_of(a: np.ndarray) -> tuple[int, list, list]:
    """(offset, sizes, strides) in elements, as MLIR's memref descriptor has them."""
    a = np.asarray(a)
    item = a.dtype.itemsize or 1
    root = root_of(a)
    offset = (_address(a) - _address(root)) // item if root.size else 0
    if offset < 0 or root.dtype.itemsize != item:
        offset = 0
    sizes = list(a.shape)
    strides = [s // item for s in a.strides]
    # numpy gives stride 0 or anything for size-1 dims; MLIR uses the canonical one there
    canonical = 1
    for k in range(a.ndim - 1, -1, -1):
        if a.shape[k] == 1 and a.strides[k] == 0:
            strides[k] = canonical
        canonical *= max(a.shape[k], 1)
    return offset, sizes, strides


def _shape(t, dynamic):
    it = iter(int(d) for d in dynamic)
    return tuple(next(it) if d is None else d for d in t.shape)


@impl("memref.alloc", "memref.alloca")
def _alloc(interp, op, args):
    t = op.results[0].type
    seg = op.attr("operandSegmentSizes")
    n_dyn = seg.values[0] if seg is not None else len(args)
    shape = _shape(t, args[:n_dyn])
    check_allocation(t, shape)
    return [allocate(shape, dtype_of(t))]


@impl("memref.dealloc", "memref.prefetch")
def _noop(interp, op, args):
    return []


@impl("memref.assume_alignment")
def _assume_alignment(interp, op, args):
    return [args[0]] if op.results else []


def _index(indices, buf=None):
    idx = tuple(int(i) for i in indices)
    if buf is not None:
        shape = np.shape(buf)
        if len(idx) != len(shape) or any(not 0 <= i < d for i, d in zip(idx, shape)):
            raise InterpreterError(f"index [{', '.join(map(str, idx))}] is out of bounds of a memref of shape "
                                   f"[{', '.join(map(str, shape))}]")
    return idx


@impl("memref.load")
def _load(interp, op, args):
    buf, *indices = args
    if any(np.ndim(i) for i in indices):  # inside a vectorised linalg body: a gather
        return [np.asarray(buf)[tuple(np.asarray(i, dtype=np.intp) for i in indices)]]
    return [np.array(buf[_index(indices, buf)])]


@impl("memref.store")
def _store(interp, op, args):
    value, buf, *indices = args
    buf[_index(indices, buf)] = value
    return []


@impl("memref.dim")
def _dim(interp, op, args):
    buf, index = args
    return [np.array(np.shape(buf)[int(index)], dtype=np.int64)]


@impl("memref.rank")
def _rank(interp, op, args):
    return [np.array(np.ndim(args[0]), dtype=np.int64)]


@impl("memref.cast", "memref.memory_space_cast")
def _cast(interp, op, args):
    src = args[0]
    t = op.results[0].type
    if isinstance(t, T.ShapedType) and hasattr(t, "shape") and t.shape is not None:
        want = tuple(t.shape)
        if len(want) != np.ndim(src) or any(w is not None and w != s for w, s in zip(want, np.shape(src))):
            raise InterpreterError(f"memref.cast: shape {np.shape(src)} does not match {t}")
    return [src]


@impl("memref.copy")
def _copy(interp, op, args):
    src, dst = args
    if np.shape(src) != np.shape(dst):
        raise InterpreterError(f"memref.copy: shapes differ ({np.shape(src)} vs {np.shape(dst)})")
    dst[...] = src
    return []


def mixed(op, args, key, start, count):
    """The values of a static_* attribute with the dynamic operands args[start:start+count] filled in."""
    static = list(op.attributes[key].values)
    dyn = iter(int(a) for a in args[start:start + count])
    return [next(dyn) if s == DYNAMIC else int(s) for s in static]


def offsets_sizes_strides(op, args, first: int):
    """Offsets, sizes and strides of a subview / extract_slice / insert_slice-like op; the
    dynamic operands start after `first` leading operands."""
    seg = op.attr("operandSegmentSizes").values
    n_off, n_size, n_stride = seg[-3], seg[-2], seg[-1]
    start = sum(seg[:-3])
    offsets = mixed(op, args, "static_offsets", start, n_off)
    sizes = mixed(op, args, "static_sizes", start + n_off, n_size)
    strides = mixed(op, args, "static_strides", start + n_off + n_size, n_stride)
    return offsets, sizes, strides


def dropped_dims(sizes, result_shape):
    """Which unit dims a rank-reducing slice drops (greedy, leading first)."""
    to_drop = len(sizes) - len(result_shape)
    dropped, j = [], 0
    for i, s in enumerate(sizes):
        if to_drop and s == 1 and not (j < len(result_shape) and result_shape[j] == 1 and
                                       len(sizes) - i == len(result_shape) - j):
            dropped.append(i)
            to_drop -= 1
        else:
            j += 1
    return dropped


def slice_view(src, offsets, sizes, strides, result_shape):
    index = tuple(slice(o, o + (s - 1) * st + 1 if s > 0 else o, st) for o, s, st in zip(offsets, sizes, strides))
    view = src[index]
    if view.shape != tuple(sizes):
        raise InterpreterError(f"slice out of bounds: offsets {offsets}, sizes {sizes}, strides {strides} "
                               f"of shape {list(np.shape(src))}")
    if len(result_shape) != len(sizes):
        drop = dropped_dims(sizes, result_shape)
        view = view[tuple(0 if i in drop else slice(None) for i in range(len(sizes)))]
    return view


@impl("memref.subview")
def _subview(interp, op, args):
    offsets, sizes, strides = offsets_sizes_strides(op, args, 1)
    t = op.results[0].type
    return [slice_view(args[0], offsets, sizes, strides, list(t.shape))]


@impl("memref.reinterpret_cast")
def _reinterpret_cast(interp, op, args):
    offsets, sizes, strides = offsets_sizes_strides(op, args, 1)
    src = np.asarray(args[0])
    root = root_of(src)
    if root.dtype != src.dtype:
        root = root.view(src.dtype) if root.dtype.itemsize else src
    flat = root.reshape(-1) if root.flags.c_contiguous else root
    offset = offsets[0] if offsets else 0
    item = src.dtype.itemsize
    needed = offset + sum((s - 1) * st for s, st in zip(sizes, strides) if s > 0) + 1
    if needed > flat.size or offset < 0:
        raise InterpreterError(f"memref.reinterpret_cast: offset {offset}, sizes {sizes}, strides {strides} "
                               f"reach outside the buffer of {flat.size} elements")
    return [np.lib.stride_tricks.as_strided(flat[offset:], shape=sizes, strides=[s * item for s in strides])]


def _reshape_view(src, shape):
    view = np.asarray(src).view()
    try:
        view.shape = shape  # raises instead of copying when no view exists
        return view
    except AttributeError:
        return np.reshape(src, shape)


@impl("memref.collapse_shape")
def _collapse(interp, op, args):
    src = args[0]
    groups = [[int(getattr(i, "value", i)) for i in g.items] for g in op.attr("reassociation").items]
    shape = tuple(int(np.prod([np.shape(src)[i] for i in g], dtype=np.int64)) for g in groups)
    return [_reshape_view(src, shape)]


@impl("memref.expand_shape")
def _expand(interp, op, args):
    src, *dyn = args
    static = list(op.attr("static_output_shape").values)
    it = iter(int(d) for d in dyn)
    shape = tuple(next(it) if s == DYNAMIC else int(s) for s in static)
    return [_reshape_view(src, shape)]


@impl("memref.transpose")
def _transpose(interp, op, args):
    from ..dialects.affine_maps import parse_map
    m = parse_map(str(op.attr("permutation")))
    perm = [v for _, v in m.results]
    return [np.transpose(args[0], perm)]


@impl("memref.view")
def _view(interp, op, args):
    src, shift, *dyn = args
    t = op.results[0].type
    shape = _shape(t, dyn)
    dtype = dtype_of(t)
    raw = np.asarray(src).reshape(-1).view(np.uint8)
    count = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return [raw[int(shift):int(shift) + count].view(dtype).reshape(shape)]


@impl("memref.extract_strided_metadata")
def _metadata(interp, op, args):
    src = np.asarray(args[0])
    offset, sizes, strides = layout_of(src)
    root = root_of(src)
    base = root.reshape(-1)[:1].reshape(()) if root.size else root.reshape(-1)
    idx = [np.array(v, dtype=np.int64) for v in [offset] + sizes + strides]
    return [base] + idx


@impl("memref.extract_aligned_pointer_as_index")
def _pointer(interp, op, args):
    return [np.array(_address(root_of(np.asarray(args[0]))), dtype=np.int64)]


_ATOMIC = {
    "addf": np.add, "addi": np.add, "assign": lambda old, v: v, "maximumf": np.maximum,
    "maxs": np.maximum, "maxu": lambda a, b: np.where(unsigned_view(a) >= unsigned_view(b), a, b),
    "minimumf": np.minimum, "mins": np.minimum,
    "minu": lambda a, b: np.where(unsigned_view(a) <= unsigned_view(b), a, b),
    "mulf": np.multiply, "muli": np.multiply, "ori": np.bitwise_or, "andi": np.bitwise_and,
    "maxnumf": np.fmax, "minnumf": np.fmin, "xori": np.bitwise_xor,
}


@impl("memref.atomic_rmw")
def _atomic_rmw(interp, op, args):
    value, buf, *indices = args
    kind = ATOMIC_KINDS[op.attr("kind").value]
    idx = _index(indices, buf)
    old = np.array(buf[idx])
    with np.errstate(all="ignore"):
        buf[idx] = _ATOMIC[kind](old, np.asarray(value).astype(old.dtype))
    return [old]


# ---- globals ----------------------------------------------------------------------------------------
@impl("memref.global")
def _global(interp, op, args):
    return []


def _globals(interp) -> dict:
    table = getattr(interp, "memref_globals", None)
    if table is None:
        table = interp.memref_globals = {}
    return table


@impl("memref.get_global")
def _get_global(interp, op, args):
    name = op.attr("name").root
    table = _globals(interp)
    if name not in table:
        decl = None
        for candidate in interp.module.walk():
            sym = candidate.attr("sym_name")
            if candidate.name == "memref.global" and isinstance(sym, StringAttr) and sym.value == name:
                decl = candidate
                break
        if decl is None:
            raise InterpreterError(f"no memref.global named '@{name}'")
        t = decl.attr("type").type
        init = decl.attr("initial_value")
        buf = allocate(tuple(t.shape), dtype_of(t))
        if init is not None and not isinstance(init, UnitAttr):
            buf[...] = attr_to_array(init, T.RankedTensorType(tuple(t.shape), t.element))
        table[name] = buf
    return [table[name]]
