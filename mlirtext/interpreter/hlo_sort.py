"""StableHLO / MHLO sort.

Fast path: a comparator that is one `compare LT|GT` of one operand's pair of
arguments (any compare_type, TOTALORDER included) is a numpy argsort (stable, with
NaNs ordered as the comparison orders them). Any other comparator runs a bottom-up
merge sort whose merges place each element by a binary search in the other run:
every comparison of a step runs the comparator once, on arrays of pairs.
"""
from __future__ import annotations

import numpy as np

from ..ir.core import OpResult
from .hlo_regions import as_result, binary_body, enum, integer, run_body
from .registry import impl


def _key(x: np.ndarray, compare_type: str) -> np.ndarray:
    """An array whose ascending order is `compare LT` order for this compare type."""
    if x.dtype.kind == "f":
        if x.dtype not in (np.float16, np.float32, np.float64):
            x = x.astype(np.float32)
        if compare_type == "TOTALORDER":
            bits = x.view(np.dtype(f"i{x.dtype.itemsize}"))
            mask = np.iinfo(bits.dtype).max
            return np.where(bits < 0, bits ^ mask, bits)
        return x
    if x.dtype.kind == "i" and compare_type == "UNSIGNED":
        return x.view(np.dtype(f"u{x.dtype.itemsize}"))
    if x.dtype.kind == "u" and compare_type == "SIGNED":
        return x.view(np.dtype(f"i{x.dtype.itemsize}"))
    return x


def _fast_order(op, operands, axis):
    """The permutation along `axis` for a single-compare comparator, or None."""
    found = binary_body(op.regions[0])
    if found is None:
        return None
    name, i, j, inner = found
    if name != "compare" or i // 2 != j // 2 or i == j:
        return None
    direction = enum(inner, "comparison_direction")
    if direction not in ("LT", "GT"):
        return None
    x = operands[i // 2]
    if x.dtype.kind == "c":
        return None
    ctype = enum(inner, "compare_type", None) or ("FLOAT" if x.dtype.kind == "f" else
                                                  "UNSIGNED" if x.dtype.kind in "ub" else "SIGNED")
    key = _key(x, ctype)
    descending = (direction == "GT") == (i % 2 == 0)
    if x.dtype.kind == "f" and ctype != "TOTALORDER" and np.isnan(key).any():
        return None  # NaN never compares: leave it to the comparator itself
    return _argsort(key, axis, descending)


def _key_order(interp, op, operands, axis):
    """For a comparator `compare LT|GT (f(lhs_k), f(rhs_k))` whose two sides apply the same
    elementwise computation to one operand's pair of arguments (as jnp.sort writes it:
    -0 -> +0, NaN -> one NaN, then a TOTALORDER compare): argsort by f(operand)."""
    region = op.regions[0]
    if len(region.blocks) != 1:
        return None
    block = region.blocks[0]
    ops = list(block.ops)
    if not ops or len(ops[-1].operands) != 1:
        return None
    returned = ops[-1].operands[0]
    final = returned.op if isinstance(returned, OpResult) else None
    if final is None or final.name not in ("stablehlo.compare", "mhlo.compare") or not any(o is final for o in ops):
        return None
    direction = enum(final, "comparison_direction")
    if direction not in ("LT", "GT"):
        return None
    args = list(block.arguments)
    index = {id(a): k for k, a in enumerate(args)}
    deps: dict = {}
    for o in ops[:-1]:
        if o.regions:
            return None
        d = set()
        for v in o.operands:
            if id(v) in index:
                d.add(index[id(v)])
            else:
                d |= deps.get(id(v), set())
        for r in o.results:
            deps[id(r)] = d

    def deps_of(v):
        return {index[id(v)]} if id(v) in index else deps.get(id(v), set())
    lhs, rhs = deps_of(final.operand("lhs")), deps_of(final.operand("rhs"))
    if len(lhs) != 1 or len(rhs) != 1:
        return None
    (i,), (j,) = lhs, rhs
    if i // 2 != j // 2 or i == j:
        return None
    x = operands[i // 2]
    if x.dtype.kind == "c":
        return None
    # evaluate both sides with the operand on both arguments of the pair
    from .machine import Scope
    env = Scope(interp.scope)
    for k, a in enumerate(args):
        env[id(a)] = operands[k // 2]
    try:
        for o in ops[:-1]:
            if final is o:
                break
            interp.run_op(o, env)
        kl, kr = np.asarray(env[id(final.operand("lhs"))]), np.asarray(env[id(final.operand("rhs"))])
    except Exception:  # noqa: BLE001 - any trouble: the merge sort runs the comparator itself
        return None
    if kl.shape != x.shape or kl.dtype != kr.dtype or kl.tobytes() != kr.tobytes():
        return None
    ctype = enum(final, "compare_type", None) or ("FLOAT" if kl.dtype.kind == "f" else
                                                  "UNSIGNED" if kl.dtype.kind in "ub" else "SIGNED")
    key = _key(kl, ctype)
    if key.dtype.kind == "f" and ctype != "TOTALORDER" and np.isnan(key).any():
        return None
    descending = (direction == "GT") == (i % 2 == 0)
    return _argsort(key, axis, descending)


def _argsort(key, axis, descending):
    if not descending:
        return np.argsort(key, axis=axis, kind="stable")
    rev = np.flip(key, axis=axis)
    order = np.flip(np.argsort(rev, axis=axis, kind="stable"), axis=axis)
    return key.shape[axis] - 1 - order


def _merge_sort_order(interp, region, operands, axis):
    """Permutation along `axis` (moved last internally) by a comparator-driven merge sort."""
    xs = [np.moveaxis(x, axis, -1) for x in operands]
    n = xs[0].shape[-1]
    lead = xs[0].shape[:-1]
    rows = int(np.prod(lead, dtype=np.int64))
    flats = [x.reshape(rows, n) for x in xs]
    perm = np.broadcast_to(np.arange(n), (rows, n)).copy()
    row = np.arange(rows)[:, None]
    pos = np.arange(n)[None, :]
    width = 1
    while width < n:
        cur = [f[row, perm] for f in flats]  # values in the current order
        start = (pos // (2 * width)) * (2 * width)
        in_a = (pos - start) < width
        a_len = np.minimum(width, n - start)
        b_start = start + width
        b_len = np.clip(n - b_start, 0, width)
        other_start = np.where(in_a, b_start, start)
        other_len = np.where(in_a, b_len, a_len)
        lo = np.zeros((1, n), np.int64) + 0 * pos
        hi = np.broadcast_to(other_len, (1, n)).astype(np.int64)
        lo = np.broadcast_to(lo, (rows, n)).copy()
        hi = np.broadcast_to(hi, (rows, n)).copy()
        while True:
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            idx = np.clip(other_start + mid, 0, n - 1)
            ys = [c[row, idx] for c in cur]
            # A element x: count of B elements y with y < x; B element x: count of A with !(x < y)
            lhs = [np.where(in_a, y, x) for x, y in zip(cur, ys)]
            rhs = [np.where(in_a, x, y) for x, y in zip(cur, ys)]
            args = [v for pair in zip(lhs, rhs) for v in pair]
            less = np.broadcast_to(run_body(interp, region, args)[0], (rows, n)).astype(bool)
            pred = np.where(in_a, less, ~less)
            lo = np.where(active & pred, mid + 1, lo)
            hi = np.where(active & ~pred, mid, hi)
        offset = pos - np.where(in_a, start, b_start)
        new_pos = start + offset + lo
        new_perm = np.empty_like(perm)
        new_perm[row, new_pos] = perm
        perm = new_perm
        width *= 2
    return np.moveaxis(perm.reshape(lead + (n,)), -1, axis)


@impl("stablehlo.sort", "mhlo.sort")
def _sort(interp, op, args):
    operands = [np.asarray(a) for a in args]
    if not operands or operands[0].ndim == 0:
        return [as_result(op, x, i) for i, x in enumerate(operands)]
    axis = integer(op, "dimension", -1)
    if axis < 0:
        axis += operands[0].ndim
    if operands[0].shape[axis] <= 1:
        return [as_result(op, x, i) for i, x in enumerate(operands)]
    order = _fast_order(op, operands, axis)
    if order is None:
        order = _key_order(interp, op, operands, axis)
    if order is None:
        order = _merge_sort_order(interp, op.regions[0], operands, axis)
    return [as_result(op, np.take_along_axis(x, order, axis=axis), i) for i, x in enumerate(operands)]
