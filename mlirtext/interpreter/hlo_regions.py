"""Helpers shared by the structured HLO ops: reading their attributes, recognising
one-op region bodies (so a reduce of `stablehlo.add` becomes `np.add.reduce`), and
running a region body on whole arrays.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..dialects.hlo_attrs import enum_word, int_list, struct_fields
from ..ir.arrays import dtype_of, wrap_to_width
from ..ir.attributes import BoolAttr, DenseArrayAttr, IntegerAttr
from .machine import InterpreterError


def ints(op, key: str, default=None) -> Optional[list]:
    """An integer-list attribute (`array<i64: ...>`, `dense<...>`, `[...]`), or `default`."""
    attr = op.attributes.get(key)
    if attr is None:
        return default
    if isinstance(attr, DenseArrayAttr):
        return [int(v) for v in attr.values]
    values = int_list(attr)
    if values is None:
        raise InterpreterError(f"'{op.name}': cannot read '{key}' = {attr}")
    return values


def bools(op, key: str, default=None) -> Optional[list]:
    attr = op.attributes.get(key)
    if attr is None:
        return default
    if isinstance(attr, DenseArrayAttr):
        return [bool(v) for v in attr.values]
    values = int_list(attr)  # dense<...> (splats expanded) or [...]
    if values is None:
        raise InterpreterError(f"'{op.name}': cannot read '{key}' = {attr}")
    return [bool(v) for v in values]


def padding(op, key: str, rank: int) -> list:
    """`padding` as [(lo, hi)] * rank (zeros when absent)."""
    values = ints(op, key)
    if not values:
        return [(0, 0)] * rank
    return [(values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2)]


def integer(op, key: str, default: int = 0) -> int:
    attr = op.attributes.get(key)
    if attr is None:
        return default
    if isinstance(attr, (IntegerAttr, BoolAttr)):
        return int(attr.value)
    values = ints(op, key)
    return values[0] if values else default


def flag(op, key: str, default: bool = False) -> bool:
    attr = op.attributes.get(key)
    if attr is None:
        return default
    value = getattr(attr, "value", None)
    if value is None:
        text = str(attr)
        return text.strip() in ("true", "unit")
    return bool(value)


def enum(op, key: str, default: Optional[str] = None) -> Optional[str]:
    attr = op.attributes.get(key)
    if attr is None:
        return default
    word = enum_word(attr)
    if word is None:
        value = getattr(attr, "value", None)
        if isinstance(value, str):
            return value
        raise InterpreterError(f"'{op.name}': cannot read '{key}' = {attr}")
    return word


def fields(op, key: str) -> dict:
    f = struct_fields(op.attributes.get(key))
    if f is None:
        raise InterpreterError(f"'{op.name}': missing or unreadable '{key}'")
    return f


_DTYPES: dict = {}


def cached_dtype(t) -> np.dtype:
    """dtype_of, remembered per type (types are immutable and hashable)."""
    try:
        return _DTYPES[t]
    except KeyError:
        d = _DTYPES[t] = dtype_of(t)
        return d
    except TypeError:
        return dtype_of(t)


def result_dtype(op, index: int = 0) -> np.dtype:
    return cached_dtype(op.results[index].type)


def as_result(op, value, index: int = 0) -> np.ndarray:
    """`value` in the element type of result `index` (integers wrap at their width)."""
    t = op.results[index].type
    value = np.asarray(value)
    dtype = cached_dtype(t)
    if value.dtype == dtype and dtype.kind not in "iu":
        return value
    if value.dtype != dtype:
        if dtype.kind in "iu" and value.dtype.kind == "f":
            value = np.trunc(value)
        if dtype.kind in "iubf" and value.dtype.kind == "c":
            value = value.real
        with np.errstate(all="ignore"):
            value = value.astype(dtype)
    return wrap_to_width(value, t)


# ---- region bodies -------------------------------------------------------------------
#: short op name -> numpy ufunc, for bodies `return op(arg_a, arg_b)`.
UFUNCS = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
_BOOL_UFUNCS = {"add": np.logical_or, "multiply": np.logical_and, "maximum": np.logical_or,
                "minimum": np.logical_and, "and": np.logical_and, "or": np.logical_or,
                "xor": np.logical_xor}


def short(name: str) -> str:
    return name.split(".", 1)[1] if "." in name else name


def binary_body(region) -> Optional[tuple]:
    """For a body `%r = op(%argI, %argJ); return %r`: (short op name, I, J), else None."""
    if len(region.blocks) != 1:
        return None
    block = region.blocks[0]
    ops = list(block.ops)
    if len(ops) != 2 or short(ops[1].name) != "return" or len(ops[1].operands) != 1:
        return None
    inner = ops[0]
    if len(inner.operands) != 2 or len(inner.results) != 1 or ops[1].operands[0] is not inner.results[0]:
        return None
    if inner.regions:
        return None
    args = list(block.arguments)
    try:
        i = next(k for k, a in enumerate(args) if a is inner.operands[0])
        j = next(k for k, a in enumerate(args) if a is inner.operands[1])
    except StopIteration:
        return None
    return short(inner.name), i, j, inner


def returned_arg(region) -> Optional[int]:
    """For a body that only returns one of its arguments: that argument's index."""
    if len(region.blocks) != 1:
        return None
    block = region.blocks[0]
    ops = list(block.ops)
    if len(ops) != 1 or len(ops[0].operands) != 1:
        return None
    for k, a in enumerate(block.arguments):
        if a is ops[0].operands[0]:
            return k
    return None


_REDUCERS: dict = {}


def reducer_ufunc(region, dtype: np.dtype):
    """The numpy ufunc a single-op, commutative reducer body computes, or None
    (remembered per region; the entry holds the region, so its id stays unique)."""
    key = (id(region), dtype)
    hit = _REDUCERS.get(key)
    if hit is not None and hit[0] is region:
        return hit[1]
    ufunc = _reducer_ufunc(region, dtype)
    _REDUCERS[key] = (region, ufunc)
    return ufunc


def _reducer_ufunc(region, dtype: np.dtype):
    found = binary_body(region)
    if found is None:
        return None
    name, i, j, inner = found
    if {i, j} != {0, 1}:
        return None
    if inner.results[0].type is not None and cached_dtype(inner.results[0].type) != dtype:
        return None
    if dtype.kind == "b":
        return _BOOL_UFUNCS.get(name)
    if name in ("and", "or", "xor") and dtype.kind not in "iu":
        return None
    if dtype.kind == "f" and dtype.itemsize < 2:
        return None  # f8 kinds: computed by running the body (ml_dtypes has few ufunc loops)
    return UFUNCS.get(name)


def run_body(interp, region, args: list) -> list:
    """Run a region on arrays (block arguments are scalars in the IR: elementwise
    bodies are array-polymorphic). A body that cannot take arrays (e.g. one that
    calls a function, whose signature wants scalars) runs once per element instead."""
    args = [np.asarray(a) for a in args]
    try:
        return [np.asarray(v) for v in interp.run_region(region, list(args))]
    except InterpreterError:
        if all(a.ndim == 0 for a in args):
            raise
    shape = np.broadcast_shapes(*(a.shape for a in args))
    full = [np.broadcast_to(a, shape) for a in args]
    outs = None
    for idx in np.ndindex(*shape):  # per-element fallback: no vectorised form for this body
        values = interp.run_region(region, [a[idx] for a in full])
        if outs is None:
            outs = [np.empty(shape, np.asarray(v).dtype) for v in values]
        for o, v in zip(outs, values):
            o[idx] = v
    if outs is None:  # no elements: the body's result types say the dtypes
        block = region.blocks[0]
        term = list(block.ops)[-1]
        outs = [np.empty(shape, dtype_of(v.type)) for v in term.operands]
    return outs


def tree_reduce(interp, region, values: list, axis_len: int) -> list:
    """Reduce N lists of slices stacked along axis 0 (length `axis_len`) with the body,
    pairing neighbours (so left-to-right order is kept) in log2(n) region calls."""
    n = len(values)
    while axis_len > 1:
        half = axis_len // 2
        left = [v[0:2 * half:2] for v in values]
        right = [v[1:2 * half:2] for v in values]
        combined = run_body(interp, region, left + right)
        combined = [np.broadcast_to(c, l.shape).astype(l.dtype, copy=False) for c, l in zip(combined[:n], left)]
        if axis_len % 2:
            combined = [np.concatenate([c, v[axis_len - 1:axis_len]]) for c, v in zip(combined, values)]
        values = combined
        axis_len = half + axis_len % 2
    return [v[0] for v in values]
