"""linalg semantics: structured ops evaluated over their whole iteration space at once.

A structured op (linalg.generic, and every named op through its indexing maps and
implicit body) is run like this:

1. loop sizes come from the operand shapes through the indexing maps;
2. each operand is gathered as an array over the iteration space, broadcastable to
   it (one axis per loop): projected permutations are a transpose + reshape, maps
   linear in the dims (`d1 * 2 + d4`: convolution windows, diagonals) a strided view
   (both zero-copy); others (floordiv, mod) fancy indexing;
3. the body runs ONCE on those arrays (`linalg.index` gives broadcast iotas);
4. reduction loops: when an output's yielded value is `combine(out, x)` for an
   associative arith op the x array is reduced with the numpy ufunc and combined
   with the init (a product `add(out, p * q)` becomes one batched `np.matmul`: BLAS
   for matmul / contractions; one matmul per window position for convolutions, with
   floats summed in BLAS order, not strictly in loop order); an output yielded as
   `select(c, v, out)` where c and v
   depend only on inputs and on such reductions (argmax) takes v at the last true c;
   any other body runs sequentially over the reduction iterations only, still
   vectorised over the parallel ones;
5. only a body that cannot run on arrays at all (an `scf.if` on a per-element
   condition, ...) runs element by element.

On memrefs the result is written into the output buffer in place; on tensors new
arrays are returned.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..dialects import linalg as L
from ..dialects.affine_maps import AffineMap, evaluate, parse_map
from ..ir import types as T
from ..ir.arrays import dtype_of, unsigned_view
from ..ir.attributes import ArrayAttr, DenseArrayAttr
from .machine import InterpreterError, Return, Scope
from .registry import impl, semantics_of


class NotVectorizable(InterpreterError):
    """Raised by an op inside a structured op's body that needs scalars (e.g. scf.if on an
    array condition): the structured op then runs element by element. (Should one escape
    elsewhere, it is an ordinary interpreter error.)"""

    def __init__(self, what: str = "value"):
        super().__init__(f"a {what} must be a scalar here, got one value per element")


# ---- small helpers ------------------------------------------------------------------------------
def _ints(attr):
    if attr is None:
        return None
    if isinstance(attr, DenseArrayAttr):
        return [int(v) for v in attr.values]
    if isinstance(attr, ArrayAttr):
        return [int(getattr(a, "value", a)) for a in attr.items]
    values = L.int_values(attr)
    return None if values is None else [int(v) for v in values]


def _is_memref(t) -> bool:
    return isinstance(t, T.MemRefType) or type(t).__name__ == "UnrankedMemRefType"


def _finish(op, inits, init_values, new_values):
    """Write memref outputs in place; return the tensor results."""
    results = []
    for v, old, new in zip(inits, init_values, new_values):
        if _is_memref(v.type):
            old[...] = new
        else:
            results.append(_as_value(new, v.type))
    return results


def _as_value(arr, t):
    dtype = dtype_of(t)
    arr = np.asarray(arr)
    if arr.dtype != dtype:
        arr = arr.astype(dtype)
    if arr.ndim and 0 in arr.strides and arr.size > 1:
        arr = np.ascontiguousarray(arr)
    return arr


# ---- indexing maps ----------------------------------------------------------------------------------
#: Maps of named ops the dialect module has no table entry for.
_EXTRA_MAPS = {
    "linalg.quantized_matmul": ("(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> ()",
                                "(d0, d1, d2) -> ()", "(d0, d1, d2) -> (d0, d1)"),
    "linalg.quantized_batch_matmul": ("(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d3, d2)",
                                      "(d0, d1, d2, d3) -> ()", "(d0, d1, d2, d3) -> ()",
                                      "(d0, d1, d2, d3) -> (d0, d1, d2)"),
}


def _op_maps(op, ins, outs):
    """The indexing maps of a structured op (one per operand, inputs then outputs)."""
    maps = L.indexing_maps(op) if op.name != "linalg.generic" else L.explicit_indexing_maps(op)
    if maps is None and op.name in _EXTRA_MAPS and "indexing_maps" not in op.attributes:
        maps = [parse_map(t) for t in _EXTRA_MAPS[op.name]]
    if maps is not None and len(maps) == len(ins) + len(outs):
        return maps
    # elementwise named ops, fill, copy: identity maps on the output, () for scalars.
    rank = len(np.shape(outs[0]))
    dims = ", ".join(f"d{i}" for i in range(rank))
    result = []
    for v in list(ins) + list(outs):
        r = np.ndim(v)
        if r == 0:
            result.append(parse_map(f"({dims}) -> ()"))
        elif r == rank:
            result.append(parse_map(f"({dims}) -> ({dims})"))
        else:
            raise InterpreterError(f"cannot infer the indexing maps of '{op.name}'")
    return result


def _loop_sizes(maps: list[AffineMap], values) -> list[int]:
    n = maps[0].num_dims
    sizes: list = [None] * n
    for m, v in zip(maps, values):
        shape = np.shape(v)
        for pos, (kind, k) in enumerate(m.results):
            if kind == "dim" and pos < len(shape) and sizes[k] is None:
                sizes[k] = shape[pos]
    if any(s is None for s in sizes):
        missing = [f"d{i}" for i, s in enumerate(sizes) if s is None]
        raise InterpreterError(f"cannot infer the size of loop(s) {', '.join(missing)} from the operands")
    return sizes


def _iotas(sizes):
    n = len(sizes)
    out = []
    for k, s in enumerate(sizes):
        shape = [1] * n
        shape[k] = s
        out.append(np.arange(s, dtype=np.int64).reshape(shape))
    return out


def _gather(arr, m: AffineMap, sizes, iotas):
    """`arr` seen over the iteration space: an array broadcastable to `sizes`."""
    n = len(sizes)
    arr = np.asarray(arr)
    kinds = [k for k, _ in m.results]
    if all(k in ("dim", "const") for k in kinds):
        dims = [v for k, v in m.results if k == "dim"]
        if len(set(dims)) == len(dims):
            index = tuple(v if k == "const" else slice(None) for k, v in m.results)
            view = arr[index] if any(k == "const" for k in kinds) else arr
            order = np.argsort(dims, kind="stable")
            view = view.transpose(order) if len(order) > 1 else view
            shape = [1] * n
            for d in dims:
                shape[d] = view.shape[sorted(dims).index(d)]
            return view.reshape(shape)
    view = _strided_gather(arr, m, sizes)
    if view is not None:
        return view
    index = []
    values = dict(enumerate(iotas))
    for kind, v in m.results:
        if kind == "dim":
            index.append(iotas[v])
        elif kind == "const":
            index.append(np.array(v).reshape((1,) * n))
        else:
            e = evaluate(m, v, values)
            if e is None:
                raise InterpreterError(f"cannot evaluate affine expression '{v}'")
            index.append(np.asarray(e).reshape(np.shape(e) if np.ndim(e) == n else (1,) * n))
    if not index:
        return arr.reshape((1,) * n)
    return arr[tuple(index)]


def _linear_form(m: AffineMap, kind, v):
    """(c0, {dim: coefficient}) of a map result that is linear in the dims, else None."""
    n = m.num_dims
    if kind == "dim":
        return 0, {v: 1}
    if kind == "const":
        return v, {}
    if any(word in v for word in ("floordiv", "ceildiv", "mod")) or m.symbols:
        return None
    c0 = evaluate(m, v, {k: 0 for k in range(n)})
    if c0 is None:
        return None
    coeffs = {}
    for k in range(n):
        e = evaluate(m, v, {j: int(j == k) for j in range(n)})
        if e is None:
            return None
        if e - c0:
            coeffs[k] = e - c0
    return c0, coeffs


def _strided_gather(arr, m: AffineMap, sizes):
    """A zero-copy view for maps whose results are linear in the dims (convolution windows
    `d1 * 2 + d4`, diagonals): element strides add up per loop."""
    if arr.ndim != len(m.results):
        return None
    forms = [_linear_form(m, kind, v) for kind, v in m.results]
    if any(f is None for f in forms):
        return None
    item = arr.itemsize
    offset = 0
    strides = [0] * len(sizes)
    for axis, (c0, coeffs) in enumerate(forms):
        lo = c0 + sum(min(0, c * (sizes[k] - 1)) for k, c in coeffs.items())
        hi = c0 + sum(max(0, c * (sizes[k] - 1)) for k, c in coeffs.items())
        if lo < 0 or hi >= arr.shape[axis]:
            raise InterpreterError(f"indexing map {m.results[axis][1]!r} reaches index {hi if hi >= arr.shape[axis] else lo}"
                                   f" of a dimension of size {arr.shape[axis]}")
        offset += c0 * arr.strides[axis]
        for k, c in coeffs.items():
            strides[k] += c * arr.strides[axis]
    shape = [s if strides[k] or any(k in f[1] for f in forms) else 1 for k, s in enumerate(sizes)]
    strides = [st if shape[k] != 1 else 0 for k, st in enumerate(strides)]
    base = arr.reshape(-1) if arr.flags.c_contiguous else None
    if base is None or item == 0:
        return None
    start = offset // item
    return np.lib.stride_tricks.as_strided(base[start:] if base.size else base, shape=shape, strides=strides,
                                           writeable=False)


def _scatter(init, m: AffineMap, value, sizes, keep):
    """The output operand array after the op: `value` (broadcastable to `keep`, the
    iteration space with reduction loops of size 1) laid out by map `m`."""
    value = np.broadcast_to(value, keep)
    dims = [v for k, v in m.results if k == "dim"]
    if all(k == "dim" for k, _ in m.results) and len(set(dims)) == len(dims):
        # Loops the output does not use: the last iteration's value is what stays.
        index = tuple(slice(None) if d in dims else -1 for d in range(len(keep)))
        view = value[index]
        remaining = [d for d in range(len(keep)) if d in dims]
        perm = [remaining.index(d) for d in dims]
        return view.transpose(perm) if perm != list(range(len(perm))) else view
    out = np.array(init, copy=True)
    iotas = _iotas(keep)
    values = dict(enumerate(iotas))
    index = []
    for kind, v in m.results:
        if kind == "dim":
            index.append(iotas[v])
        elif kind == "const":
            index.append(v)
        else:
            index.append(evaluate(m, v, values))
    out[tuple(np.broadcast_arrays(*index)) if index else ()] = value
    return out


# ---- running a body on arrays -----------------------------------------------------------------------
def _body_env(interp, block, args, iotas, skip=frozenset()):
    """Run `block`'s ops (but those in `skip`) on `args`; (env, yielded values)."""
    env = Scope(interp.scope)
    for a, v in zip(block.arguments, args):
        env[id(a)] = v
    saved_scope, saved_iota = interp.scope, getattr(interp, "linalg_iotas", None)
    interp.scope, interp.linalg_iotas = env, iotas
    try:
        for op in block.ops:
            if op.name == "linalg.yield":
                return env, [_lookup(env, v) for v in op.operands]
            if op in skip:
                continue
            control = interp.run_op(op, env)
            if control is not None:
                raise InterpreterError(f"unexpected terminator '{op.name}' in a linalg body")
    finally:
        interp.scope, interp.linalg_iotas = saved_scope, saved_iota
    raise InterpreterError("linalg body without linalg.yield")


def _lookup(env, v):
    try:
        return env[id(v)]
    except KeyError:  # a skipped op's result (computed by the caller)
        return None


@impl("linalg.index")
def _index(interp, op, args):
    iotas = getattr(interp, "linalg_iotas", None)
    if iotas is None:
        raise InterpreterError("linalg.index outside a structured op")
    return [iotas[op.attr("dim").value]]


@impl("linalg.yield")
def _yield(interp, op, args):
    return Return(list(args))


#: Combiners a reduction body may end with: op name -> (ufunc for reduce, identity-free).
def _unsigned_reduce(ufunc):
    def run(x, axis):
        return ufunc.reduce(unsigned_view(x), axis=axis, keepdims=True).view(x.dtype)
    return run


def _ufunc_reduce(ufunc):
    def run(x, axis):
        if x.dtype.kind == "f" and x.dtype.itemsize < 4 or x.dtype.kind == "V" or str(x.dtype) in (
                "bfloat16",) or x.dtype.kind == "f" and x.dtype.itemsize == 1:
            return ufunc.reduce(x.astype(np.float32), axis=axis, keepdims=True).astype(x.dtype)
        if ufunc in (np.add, np.multiply) and x.dtype.kind == "b":
            # i1 addi is xor, muli is and
            return (np.logical_xor if ufunc is np.add else np.logical_and).reduce(x, axis=axis, keepdims=True)
        return ufunc.reduce(x, axis=axis, keepdims=True, dtype=x.dtype)
    return run


COMBINERS = {
    "arith.addf": _ufunc_reduce(np.add), "arith.addi": _ufunc_reduce(np.add),
    "arith.mulf": _ufunc_reduce(np.multiply), "arith.muli": _ufunc_reduce(np.multiply),
    "arith.maximumf": _ufunc_reduce(np.maximum), "arith.minimumf": _ufunc_reduce(np.minimum),
    "arith.maxnumf": _ufunc_reduce(np.fmax), "arith.minnumf": _ufunc_reduce(np.fmin),
    "arith.maxsi": _ufunc_reduce(np.maximum), "arith.minsi": _ufunc_reduce(np.minimum),
    "arith.maxui": _unsigned_reduce(np.maximum), "arith.minui": _unsigned_reduce(np.minimum),
    "arith.andi": _ufunc_reduce(np.bitwise_and), "arith.ori": _ufunc_reduce(np.bitwise_or),
    "arith.xori": _ufunc_reduce(np.bitwise_xor),
}
_ACCUMULATE = {"arith.addf": np.add, "arith.addi": np.add, "arith.mulf": np.multiply,
               "arith.muli": np.multiply, "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
               "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "arith.maxsi": np.maximum,
               "arith.minsi": np.minimum, "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or,
               "arith.xori": np.bitwise_xor}


def _dependencies(block, n_in):
    """id(value) -> set of output-argument indices it depends on."""
    deps = {}
    for i, a in enumerate(block.arguments):
        deps[id(a)] = frozenset() if i < n_in else frozenset([i - n_in])

    def of(v):
        return deps.get(id(v), frozenset())

    for op in block.ops:
        d = frozenset()
        for v in op.operands:
            d |= of(v)
        for region in op.regions:
            for inner in region.walk():
                for v in inner.operands:
                    d |= of(v)
        for r in op.results:
            deps[id(r)] = d
    return deps


def _plan_reduction(block, n_in, n_out):
    """How each output of a body with reduction loops can be computed: a list of
    ('last', value) | ('combine', op, x_value, acc_first) | ('select', op, cond, value, negate)
    per output, or None when the body must run sequentially."""
    yield_op = block.ops[-1]
    if yield_op.name != "linalg.yield":
        return None
    deps = _dependencies(block, n_in)
    outs = block.arguments[n_in:]
    plan = []
    for j, y in enumerate(yield_op.operands):
        d = deps.get(id(y), frozenset())
        owner = getattr(y, "op", None)
        if not d:
            plan.append(("last", y))
        elif owner is not None and owner.name in COMBINERS and len(owner.operands) == 2 and \
                len(y.uses) == 1 and any(v is outs[j] for v in owner.operands):
            a, b = owner.operands
            x = b if a is outs[j] else a
            if deps.get(id(x), frozenset()):
                return None
            plan.append(("combine", owner, x, a is outs[j]))
        elif owner is not None and owner.name == "arith.select" and len(y.uses) == 1:
            c, t, f = owner.operands
            if f is outs[j]:
                plan.append(("select", owner, c, t, False))
            elif t is outs[j]:
                plan.append(("select", owner, c, f, True))
            else:
                return None
        else:
            return None
    combine_outs = {j for j, p in enumerate(plan) if p[0] == "combine"}
    for j, p in enumerate(plan):
        if p[0] == "select":
            used = deps.get(id(p[2]), frozenset()) | deps.get(id(p[3]), frozenset())
            if not used <= combine_outs or j in used:
                return None
    return plan


def _einsum_product(x, deps, outs, uses_ok=True):
    """(p, q) when x = p * q with p, q independent of the outputs and x used once."""
    owner = getattr(x, "op", None)
    if owner is None or owner.name not in ("arith.mulf", "arith.muli") or len(x.uses) != 1:
        return None
    p, q = owner.operands
    if deps.get(id(p), frozenset()) or deps.get(id(q), frozenset()):
        return None
    return owner, p, q


def _einsum(p, q, sizes, red, dtype):
    """sum over the reduction axes `red` of p * q (both broadcastable to `sizes`), keepdims."""
    n = len(sizes)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def squeeze(a):
        a = np.asarray(a)
        a = a.reshape((1,) * (n - a.ndim) + a.shape) if a.ndim < n else a
        axes = [k for k in range(n) if a.shape[k] != 1]
        return a.reshape([a.shape[k] for k in axes]), axes

    work = dtype
    if dtype.kind == "f" and dtype.itemsize < 4 or dtype.kind == "V" or str(dtype) == "bfloat16":
        work = np.dtype(np.float32)
    (pa, pax), (qa, qax) = squeeze(p), squeeze(q)
    pa, qa = pa.astype(work, copy=False), qa.astype(work, copy=False)
    keep = [k for k in range(n) if k not in red and (k in pax or k in qax)]
    if work.kind == "b":
        spec = f"{''.join(letters[k] for k in pax)},{''.join(letters[k] for k in qax)}->" \
               f"{''.join(letters[k] for k in keep)}"
        out = np.einsum(spec, pa.astype(np.uint8), qa.astype(np.uint8)) & 1
    else:
        out = _batched_matmul(pa, pax, qa, qax, keep, red)
    # reduction loops neither operand uses: each adds the same term
    factor = 1
    for k in red:
        if k not in pax and k not in qax:
            factor *= sizes[k]
    if factor != 1:
        out = out * np.asarray(factor).astype(out.dtype)
    shape = [sizes[k] if k in keep else 1 for k in range(n)]
    return np.asarray(out).reshape(shape).astype(dtype, copy=False)


def _batched_matmul(pa, pax, qa, qax, keep, red):
    """sum over `red` of pa * qa (axes named by loop numbers) as one np.matmul: batch axes
    (in both, kept), free axes of each side, contracted axes (in both, reduced)."""
    # reduction axes only one side has: sum them there first
    for arr_name in ("p", "q"):
        a, ax, other = (pa, pax, qax) if arr_name == "p" else (qa, qax, pax)
        only = [i for i, k in enumerate(ax) if k in red and k not in other]
        if only:
            a = a.sum(axis=tuple(only), dtype=a.dtype)
            ax = [k for i, k in enumerate(ax) if i not in only]
        if arr_name == "p":
            pa, pax = a, ax
        else:
            qa, qax = a, ax
    batch = [k for k in keep if k in pax and k in qax]
    pfree = [k for k in keep if k in pax and k not in qax]
    qfree = [k for k in keep if k in qax and k not in pax]
    contr = [k for k in pax if k in qax and k in red]
    size = dict(zip(pax, pa.shape))
    size.update(zip(qax, qa.shape))

    def prod(axes):
        return int(np.prod([size[k] for k in axes], dtype=np.int64))
    if len(contr) > 1 and prod(contr[:-1]) <= 64 and size[contr[-1]] >= 16 and prod(pfree) * prod(batch) > 256:
        # A convolution window: one matmul per window position over the innermost contracted
        # axis, instead of materialising the whole im2col matrix (which is slower for BLAS).
        outer, inner = contr[:-1], contr[-1:]
        lhs_all = pa.transpose([pax.index(k) for k in outer + batch + pfree + inner])
        rhs_all = qa.transpose([qax.index(k) for k in outer + batch + inner + qfree])
        total = None
        with np.errstate(all="ignore"):
            for pos in np.ndindex(*[size[k] for k in outer]):
                lhs = lhs_all[pos].reshape(prod(batch), prod(pfree), prod(inner))
                rhs = rhs_all[pos].reshape(prod(batch), prod(inner), prod(qfree))
                part = np.matmul(lhs, rhs)
                total = part if total is None else np.add(total, part, out=total)
        out = total
    else:
        lhs = pa.transpose([pax.index(k) for k in batch + pfree + contr]).reshape(prod(batch), prod(pfree), prod(contr))
        rhs = qa.transpose([qax.index(k) for k in batch + contr + qfree]).reshape(prod(batch), prod(contr), prod(qfree))
        with np.errstate(all="ignore"):
            out = np.matmul(lhs, rhs)
    order = batch + pfree + qfree
    out = out.reshape([size[k] for k in order])
    return out.transpose([order.index(k) for k in keep]) if order != keep else out


def run_structured(interp, op, block, ins, outs, maps, iterators=None):
    """Evaluate a structured op: returns the new output arrays (output layouts)."""
    n_in = len(ins)
    sizes = _loop_sizes(maps, list(ins) + list(outs))
    n = len(sizes)
    if iterators is None:
        used = set()
        for m in maps[n_in:]:
            for kind, v in m.results:
                if kind == "dim":
                    used.add(v)
        iterators = ["parallel" if k in used else "reduction" for k in range(n)]
    red = [k for k in range(n) if iterators[k] != "parallel"]
    keep = [1 if k in red else s for k, s in enumerate(sizes)]
    if any(s == 0 for s in sizes):
        # Empty iteration space: outputs keep their init values.
        return [np.array(o, copy=True) for o in outs]
    iotas = _iotas(sizes)
    gathered_in = [_gather(a, m, sizes, iotas) for a, m in zip(ins, maps[:n_in])]
    gathered_out = [_gather(a, m, sizes, iotas) for a, m in zip(outs, maps[n_in:])]
    out_types = [elem_dtype(a) for a in outs]
    try:
        if not red:
            env, ys = _body_env(interp, block, gathered_in + gathered_out, iotas)
            finals = ys
        else:
            finals = _reduce_vectorised(interp, op, block, gathered_in, gathered_out, sizes, red, keep, iotas)
    except NotVectorizable:
        finals = _per_element(interp, block, gathered_in, gathered_out, sizes, red, keep)
    return [_scatter(o, m, np.asarray(f).astype(dt, copy=False), sizes, keep)
            for o, m, f, dt in zip(outs, maps[n_in:], finals, out_types)]


def elem_dtype(a):
    return np.asarray(a).dtype


def strict_float_order(interp) -> bool:
    """Whether float reductions must add in loop order (each step rounded, as the loop nest
    of the op's definition and IREE's CPU code do) instead of ufunc / BLAS order: slower by
    the reduction length. `interp.strict_float_order = True` or MLIRTEXT_STRICT_FLOAT_ORDER=1."""
    flag = getattr(interp, "strict_float_order", None)
    if flag is None:
        import os
        flag = os.environ.get("MLIRTEXT_STRICT_FLOAT_ORDER", "") not in ("", "0")
    return bool(flag)


def _reduce_vectorised(interp, op, block, gin, gout, sizes, red, keep, iotas):
    n_in = len(gin)
    if any(np.asarray(g).dtype.kind in "fcV" for g in gout) and strict_float_order(interp):
        return _sequential(interp, block, gin, gout, sizes, red, keep)
    plan = _plan_reduction(block, n_in, len(gout))
    if plan is None:
        return _sequential(interp, block, gin, gout, sizes, red, keep)
    deps = _dependencies(block, n_in)
    outs = block.arguments[n_in:]
    skip = set()
    products = {}
    for j, p in enumerate(plan):
        if p[0] == "combine":
            skip.add(p[1])
            prod = _einsum_product(p[2], deps, outs)
            if prod is not None and p[1].name in ("arith.addf", "arith.addi"):
                skip.add(prod[0])
                products[j] = prod
        elif p[0] == "select":
            skip.add(p[1])
    # Pass 1: the values that do not depend on the accumulators (x, p, q, "last" values).
    acc_args = [np.broadcast_to(g, keep) for g in gout]
    env, _ = _body_env(interp, block, gin + acc_args, iotas, skip)
    finals = [None] * len(plan)
    axes = tuple(red)
    for j, p in enumerate(plan):
        kind = p[0]
        if kind == "last":
            v = np.broadcast_to(env[id(p[1])], sizes)
            finals[j] = v[tuple(slice(-1, None) if k in red else slice(None) for k in range(len(sizes)))]
        elif kind == "combine":
            comb, x, acc_first = p[1], p[2], p[3]
            dtype = np.asarray(gout[j]).dtype
            if j in products:
                _, pv, qv = products[j]
                reduced = _einsum(env[id(pv)], env[id(qv)], sizes, red, dtype)
            else:
                xv = np.broadcast_to(np.asarray(env[id(x)]).astype(dtype, copy=False), sizes)
                reduced = COMBINERS[comb.name](xv, axes)
            init = acc_args[j]
            pair = [init, reduced] if acc_first else [reduced, init]
            finals[j] = semantics_of(interp).impls[comb.name](interp, comb, pair)[0]
    if any(p[0] == "select" for p in plan):
        # Pass 2: accumulators of the combine outputs as their running value before each
        # reduction iteration (exclusive scan in iteration order), then the select outputs.
        scan_args = list(acc_args)
        for j, p in enumerate(plan):
            if p[0] == "combine":
                comb = p[1]
                if comb.name not in _ACCUMULATE:
                    return _sequential(interp, block, gin, gout, sizes, red, keep)
                dtype = np.asarray(gout[j]).dtype
                xv = np.broadcast_to(np.asarray(env[id(p[2])]).astype(dtype, copy=False), sizes)
                scan_args[j] = _exclusive_scan(_ACCUMULATE[comb.name], xv, acc_args[j], sizes, red)
        env2, _ = _body_env(interp, block, gin + scan_args, iotas, skip - {p[1] for p in plan if p[0] == "select"})
        for j, p in enumerate(plan):
            if p[0] == "select":
                _, sel, c, v, negate = p
                cond = np.broadcast_to(np.asarray(env2[id(c)], dtype=bool), sizes)
                if negate:
                    cond = ~cond
                val = np.broadcast_to(env2[id(v)], sizes)
                finals[j] = _last_true(cond, val, acc_args[j], sizes, red)
    return finals


def _move_red_last(a, sizes, red):
    """`a` (shape `sizes`) with the reduction axes flattened into one last axis (loop order)."""
    par = [k for k in range(len(sizes)) if k not in red]
    moved = np.transpose(a, par + list(red))
    return moved.reshape([sizes[k] for k in par] + [-1]), par


def _back(a, sizes, red, par):
    """Inverse of _move_red_last for a reduced array (last axis removed): keepdims layout."""
    shape = [1] * len(sizes)
    for i, k in enumerate(par):
        shape[k] = sizes[k]
    return a.reshape(shape)


def _exclusive_scan(ufunc, x, init, sizes, red):
    flat, par = _move_red_last(np.ascontiguousarray(x), sizes, red)
    init_flat, _ = _move_red_last(np.broadcast_to(init, [1 if k in red else s for k, s in enumerate(sizes)]),
                                  [1 if k in red else s for k, s in enumerate(sizes)], red)
    seq = np.concatenate([init_flat.astype(flat.dtype), flat[..., :-1]], axis=-1)
    with np.errstate(all="ignore"):
        scanned = ufunc.accumulate(seq, axis=-1, dtype=seq.dtype)
    # back to the iteration-space layout
    par_sizes = [sizes[k] for k in par]
    red_sizes = [sizes[k] for k in red]
    full = scanned.reshape(par_sizes + red_sizes)
    inverse = np.argsort(par + list(red))
    return np.transpose(full, inverse)


def _last_true(cond, val, init, sizes, red):
    c, par = _move_red_last(cond, sizes, red)
    v, _ = _move_red_last(val, sizes, red)
    r = c.shape[-1]
    last = r - 1 - np.argmax(c[..., ::-1], axis=-1)
    any_true = c.any(axis=-1)
    picked = np.take_along_axis(v, last[..., None], axis=-1)[..., 0]
    init_k = np.broadcast_to(init, [1 if k in red else s for k, s in enumerate(sizes)])
    init_flat = _move_red_last(init_k, [1 if k in red else s for k, s in enumerate(sizes)], red)[0][..., 0]
    return _back(np.where(any_true, picked, init_flat), sizes, red, par)


def _sequential(interp, block, gin, gout, sizes, red, keep):
    """The body once per reduction iteration (in loop order), vectorised over the
    parallel loops (the body's result feeds the next iteration: no vector form)."""
    n = len(sizes)
    accs = [np.broadcast_to(g, keep) for g in gout]
    full_iotas = _iotas(sizes)
    for point in itertools.product(*(range(sizes[k]) for k in red)):
        where = dict(zip(red, point))
        index = tuple(slice(where[k], where[k] + 1) if k in where else slice(None) for k in range(n))
        args = [_slice_axes(g, index, n) for g in gin]
        iotas = [np.full([1] * n, where[k], np.int64) if k in where else full_iotas[k] for k in range(n)]
        _, ys = _body_env(interp, block, args + accs, iotas)
        accs = [np.broadcast_to(y, keep) for y in ys]
    return accs


def _slice_axes(g, index, n):
    g = np.asarray(g)
    idx = tuple(slice(None) if g.shape[k] == 1 else index[k] for k in range(n))
    return g[idx]


def _per_element(interp, block, gin, gout, sizes, red, keep):
    """Element by element, in loop order: for bodies that cannot run on arrays (control
    flow on per-element values). Slow by nature."""
    n = len(sizes)
    accs = [np.array(np.broadcast_to(g, keep)) for g in gout]
    gin = [np.broadcast_to(g, sizes) for g in gin]
    for point in itertools.product(*(range(s) for s in sizes)):
        out_point = tuple(0 if k in red else point[k] for k in range(n))
        args = [g[point] for g in gin] + [a[out_point] for a in accs]
        iotas = [np.array(p, dtype=np.int64) for p in point]
        _, ys = _body_env(interp, block, [np.asarray(a) for a in args], iotas)
        for a, y in zip(accs, ys):
            a[out_point] = y
    return accs


# ---- linalg.generic and named ops --------------------------------------------------------------------
def _iterator_types(op):
    attr = op.attr("iterator_types")
    if not isinstance(attr, ArrayAttr):
        return None
    return [L.iterator_name(a) for a in attr.items]


@impl("linalg.generic")
def _generic(interp, op, args):
    ins_v, outs_v = L.segments(op)
    n_in = len(ins_v)
    ins, outs = args[:n_in], args[n_in:]
    maps = L.explicit_indexing_maps(op)
    if maps is None:
        raise InterpreterError("linalg.generic: unreadable indexing_maps")
    block = op.regions[0].blocks[0]
    new = run_structured(interp, op, block, ins, outs, maps, _iterator_types(op))
    return _finish(op, outs_v, outs, new)


def _structured_named(interp, op, args):
    ins_v, outs_v = L.segments(op)
    n_in = len(ins_v)
    ins, outs = args[:n_in], args[n_in:]
    if not op.regions or not op.regions[0].blocks:
        raise InterpreterError(f"'{op.name}' has no body the interpreter knows")
    maps = _op_maps(op, ins, outs)
    new = run_structured(interp, op, op.regions[0].blocks[0], ins, outs, maps)
    return _finish(op, outs_v, outs, new)


for _name in L.NAMED:
    if _name not in ("elemwise_unary", "elemwise_binary", "fill_rng_2d"):
        impl(f"linalg.{_name}")(_structured_named)


@impl("linalg.fill")
def _fill(interp, op, args):
    value, out = args
    _, inits = L.segments(op)
    t = inits[0].type
    block = op.regions[0].blocks[0] if op.regions and op.regions[0].blocks else None
    if block is not None:
        _, (v,) = _body_env(interp, block, [np.asarray(value), np.zeros((), dtype_of(t))], [])
    else:
        v = value
    new = np.full(out.shape, np.asarray(v).astype(dtype_of(t)), dtype=dtype_of(t))
    return _finish(op, inits, [out], [new])


@impl("linalg.copy")
def _copy(interp, op, args):
    src, out = args
    _, inits = L.segments(op)
    if np.asarray(src).dtype == dtype_of(inits[0].type):
        return _finish(op, inits, [out], [np.array(src, copy=True)])
    return _structured_named(interp, op, args)


@impl("linalg.transpose")
def _transpose(interp, op, args):
    src, out = args
    perm = _ints(op.attr("permutation"))
    return _finish(op, op.operands[1:], [out], [np.ascontiguousarray(np.transpose(src, perm))])


@impl("linalg.broadcast")
def _broadcast(interp, op, args):
    src, out = args
    dims = _ints(op.attr("dimensions")) or []
    shape = list(np.shape(out))
    expanded = np.expand_dims(np.asarray(src), tuple(dims)) if dims else np.asarray(src)
    return _finish(op, op.operands[1:], [out], [np.broadcast_to(expanded, shape)])


@impl("linalg.map")
def _map(interp, op, args):
    ins, out = args[:-1], args[-1]
    block = op.regions[0].blocks[0]
    shape = list(np.shape(out))
    iotas = _iotas(shape)
    # (a body without the init argument just ignores the extra value: zip stops at its arguments)
    try:
        _, (y,) = _body_env(interp, block, list(ins) + [out], iotas)
        y = np.broadcast_to(y, np.shape(out))
    except NotVectorizable:
        (y,) = _per_element(interp, block, [np.asarray(a) for a in ins], [np.asarray(out)], shape, [], shape)
    return _finish(op, op.operands[-1:], [out], [y])


@impl("linalg.reduce")
def _reduce(interp, op, args):
    half = len(args) // 2
    ins, outs = args[:half], args[half:]
    dims = _ints(op.attr("dimensions")) or []
    rank = np.ndim(ins[0])
    names = [f"d{i}" for i in range(rank)]
    full = ", ".join(names)
    reduced = ", ".join(n for i, n in enumerate(names) if i not in dims)
    maps = [parse_map(f"({full}) -> ({full})")] * half + [parse_map(f"({full}) -> ({reduced})")] * half
    iterators = ["reduction" if i in dims else "parallel" for i in range(rank)]
    # linalg.reduce's block takes (inputs..., inits...) like a generic body.
    new = run_structured(interp, op, op.regions[0].blocks[0], ins, outs, maps, iterators)
    return _finish(op, op.operands[half:], outs, new)


_UNARY_FUN = {"exp": np.exp, "log": np.log, "abs": np.abs, "ceil": np.ceil, "floor": np.floor,
              "negf": np.negative, "round": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
              "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "square": np.square, "tanh": np.tanh,
              "reciprocal": lambda x: 1 / x}
_BINARY_FUN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
               "max_signed": np.maximum, "min_signed": np.minimum, "powf": np.power}


def _fun_name(op, default):
    attr = op.attr("fun")
    if attr is None:
        return default
    text = str(attr)
    return text[text.find("<") + 1:text.rfind(">")] if "<" in text else text


@impl("linalg.elemwise_unary", "linalg.elemwise_binary")
def _elemwise(interp, op, args):
    ins_v, outs_v = L.segments(op)
    ins, out = args[:len(ins_v)], args[-1]
    dtype = np.asarray(out).dtype
    unary = op.name.endswith("unary")
    name = _fun_name(op, "exp" if unary else "add")
    fn = (_UNARY_FUN if unary else _BINARY_FUN).get(name)
    if fn is None:
        raise InterpreterError(f"'{op.name}' with fun = {name} is not supported")
    vals = [np.asarray(a).astype(dtype, copy=False) for a in ins]
    with np.errstate(all="ignore"):
        y = fn(*vals)
    return _finish(op, outs_v, [out], [np.broadcast_to(np.asarray(y).astype(dtype), np.shape(out))])


@impl("linalg.softmax")
def _softmax(interp, op, args):
    src, out = args
    dim = op.attr("dimension").value
    dtype = np.asarray(out).dtype
    x = np.asarray(src)
    work = x.astype(np.float32) if x.dtype.itemsize < 4 or x.dtype.kind != "f" else x
    with np.errstate(all="ignore"):
        shifted = work - np.max(work, axis=dim, keepdims=True)
        e = np.exp(shifted)
        y = e / np.sum(e, axis=dim, keepdims=True)
    return _finish(op, op.operands[1:], [out], [y.astype(dtype)])


# ---- pack / unpack -------------------------------------------------------------------------------------
def _pack_info(op, args):
    src_v, dest_v, pad_v, tile_vs = L.pack_operands(op)
    src, dest = args[0], args[1]
    rest = args[2:]
    pad = None
    if pad_v is not None:
        pad, rest = rest[0], rest[1:]
    static = _ints(op.attr("static_inner_tiles")) or []
    dyn = iter(int(v) for v in rest)
    tiles = [next(dyn) if t == L.DYNAMIC_INDEX else t for t in static]
    inner = _ints(op.attr("inner_dims_pos")) or []
    outer = _ints(op.attr("outer_dims_perm")) or []
    return src, dest, pad, tiles, inner, outer


@impl("linalg.pack")
def _pack(interp, op, args):
    src, dest, pad, tiles, inner, outer = _pack_info(op, args)
    src = np.asarray(src)
    rank = src.ndim
    dshape = np.shape(dest)
    outer_sizes = list(dshape[:rank])
    if outer:
        inv = np.argsort(outer)
        outer_sizes = [outer_sizes[i] for i in inv]  # outer sizes in source dim order
    tile_of = dict(zip(inner, tiles))
    padded_shape = [outer_sizes[d] * tile_of[d] if d in tile_of else outer_sizes[d] for d in range(rank)]
    fill = np.asarray(pad if pad is not None else 0).astype(src.dtype)
    padded = np.full(padded_shape, fill, dtype=src.dtype)
    region = tuple(slice(0, min(s, p)) for s, p in zip(src.shape, padded_shape))
    padded[region] = src[region]
    split = []
    for d in range(rank):
        split += [outer_sizes[d], tile_of[d]] if d in tile_of else [outer_sizes[d]]
    r = padded.reshape(split)
    # axis positions in `split`
    pos, k = {}, 0
    for d in range(rank):
        pos[("o", d)] = k
        k += 1
        if d in tile_of:
            pos[("t", d)] = k
            k += 1
    order_outer = outer if outer else list(range(rank))
    perm = [pos[("o", d)] for d in order_outer] + [pos[("t", d)] for d in inner]
    new = np.ascontiguousarray(r.transpose(perm))
    return _finish(op, [op.operand("dest")], [dest], [new])


@impl("linalg.unpack")
def _unpack(interp, op, args):
    src, dest, _pad, tiles, inner, outer = _pack_info(op, args)
    src = np.asarray(src)
    rank = np.ndim(dest)
    order_outer = outer if outer else list(range(rank))
    # src axes: outer dims (in order_outer), then tiles (in `inner` order)
    axis_of = {}
    for i, d in enumerate(order_outer):
        axis_of[("o", d)] = i
    for i, d in enumerate(inner):
        axis_of[("t", d)] = rank + i
    perm, shape = [], []
    tile_of = dict(zip(inner, tiles))
    for d in range(rank):
        perm.append(axis_of[("o", d)])
        if d in tile_of:
            perm.append(axis_of[("t", d)])
            shape.append(src.shape[axis_of[("o", d)]] * tile_of[d])
        else:
            shape.append(src.shape[axis_of[("o", d)]])
    full = src.transpose(perm).reshape(shape)
    dshape = np.shape(dest)
    new = np.ascontiguousarray(full[tuple(slice(0, s) for s in dshape)])
    return _finish(op, [op.operand("dest")], [dest], [new])


@impl("linalg.fill_rng_2d")
def _fill_rng_2d(interp, op, args):
    """OpDSL's fill_rng_2d: a linear congruential generator over (m, n), scaled to [min, max)."""
    lo, hi, seed, out = args
    m, n = np.shape(out)
    with np.errstate(over="ignore"):
        mult, inc = np.int32(1103515245), np.int32(12345)
        rand1 = (np.arange(m, dtype=np.int32)[:, None] + np.int32(seed)) * mult + inc
        rand2 = (np.arange(n, dtype=np.int32)[None, :] + rand1) * mult + inc
    scaling = (float(hi) - float(lo)) * 2.3283064e-10
    value = scaling * (rand2.astype(np.float64) + 2147483647.0) + float(lo)
    dtype = np.asarray(out).dtype
    new = value.astype(dtype) if dtype.kind in "fc" else np.trunc(value).astype(dtype)
    return _finish(op, op.operands[3:], [out], [new])


# ---- winograd transforms ------------------------------------------------------------------------------
# The constant matrices and scalar factors of MLIR's WinogradConv2D.cpp (the decomposition
# that defines these ops): filter U = G g G^T, input V = B^T d B, output Y = A^T m A.
def _w(rows, text):
    from fractions import Fraction
    values = [float(Fraction(v.replace("./", "/"))) for v in text.split()]  # "1./12" as in the C++ tables
    return np.array(values, dtype=np.float64).reshape(rows, -1)


_WINOGRAD = {  # fmr: (m, r, G, BT, AT, AT scalar factor)
    "F_2_3": (2, 3, _w(4, "-1 0 0  1./2 -1./2 1./2  1./2 1./2 1./2  0 0 1"),
              _w(4, "-1 0 1 0  0 -1 1 0  0 1 1 0  0 -1 0 1"),
              _w(2, "1 1 1 0  0 -1 1 1"), 1),
    "F_4_3": (4, 3, _w(6, "1 0 0  -1./3 1./3 -1./3  -1./3 -1./3 -1./3  1./12 -1./6 1./3  1./12 1./6 1./3  0 0 1"),
              _w(6, "1./4 0 -5./16 0 1./16 0  0 1./4 -1./4 -1./16 1./16 0  0 -1./4 -1./4 1./16 1./16 0 "
                    "0 1./4 -1./8 -1./4 1./8 0  0 -1./4 -1./8 1./4 1./8 0  0 1./4 0 -5./16 0 1./16"),
              _w(4, "1./8 1./4 1./4 1./8 1./8 0  0 -1./4 1./4 -1./4 1./4 0  0 1./4 1./4 1./2 1./2 0 "
                    "0 -1./4 1./4 -1 1 1./2"), 32),
    "F_2_5": (2, 5, _w(6, "1 0 0 0 0  1./6 -1./6 1./6 -1./6 1./6  -1./6 -1./6 -1./6 -1./6 -1./6 "
                          "-4./15 2./15 -1./15 1./30 -1./60  1./60 1./30 1./15 2./15 4./15  0 0 0 0 1"),
              _w(6, "1./8 3./16 -1./4 -3./16 1./8 0  0 1./8 1./16 -5./16 1./8 0  0 -1./8 -5./16 -1./16 1./8 0 "
                    "0 1./4 -1./8 -1./4 1./8 0  0 -1./8 -1./4 1./8 1./4 0  0 1./8 3./16 -1./4 -3./16 1./8"),
              _w(2, "1./2 1 1 2 1 0  0 -1 1 -1 2 1./2"), 16),
}


def _winograd_params(op):
    from ..dialects.linalg import WINOGRAD_FMR
    fmr = WINOGRAD_FMR[op.attr("fmr").value]
    m, r, G, BT, AT, factor = _WINOGRAD[fmr]
    # the matrices are float constants of the element type (as the decomposition builds them)
    return m, r, G.astype(np.float32), BT.astype(np.float32), AT.astype(np.float32), factor


def _work_dtype(dtype):
    return np.float64 if dtype == np.float64 else np.float32


@impl("linalg.winograd_filter_transform")
def _winograd_filter(interp, op, args):
    g, out = (np.asarray(a) for a in args)          # g: F x H x W x C -> out: aH x aW x C x F
    m, r, G, _, _, _ = _winograd_params(op)
    work = _work_dtype(out.dtype)
    left, right = g.shape[1] != 1, g.shape[2] != 1
    eye = np.ones((1, 1), work)
    GL = G.astype(work) if left else eye
    GR = G.astype(work) if right else eye
    u = np.einsum("ah,fhwc,bw->abcf", GL, g.astype(work), GR)
    return _finish(op, op.operands[1:], [out], [u.astype(out.dtype)])


@impl("linalg.winograd_input_transform")
def _winograd_input(interp, op, args):
    x, out = (np.asarray(a) for a in args)          # x: N x H x W x C -> out: aH x aW x tH x tW x N x C
    m, r, _, BT, _, _ = _winograd_params(op)
    work = _work_dtype(out.dtype)
    a_h, a_w, t_h, t_w = out.shape[:4]
    left, right = a_h != 1, a_w != 1
    step_h, step_w = (m if left else 1), (m if right else 1)
    rows = (np.arange(t_h) * step_h)[:, None] + np.arange(a_h)[None, :]      # tH x aH
    cols = (np.arange(t_w) * step_w)[:, None] + np.arange(a_w)[None, :]      # tW x aW
    if rows.max() >= x.shape[1] or cols.max() >= x.shape[2]:
        raise InterpreterError(f"the input ({x.shape[1]}x{x.shape[2]}) is too small for {t_h}x{t_w} tiles")
    d = x.astype(work)[:, rows[:, :, None, None], cols[None, None, :, :], :]  # N x tH x aH x tW x aW x C
    eye = np.ones((1, 1), work)
    L = BT.astype(work) if left else eye
    R = BT.astype(work) if right else eye   # B = BT^T: (d B)[., y] = sum_b d[., b] BT[y, b]
    v = np.einsum("xa,ntaubc,yb->xytunc", L, d, R)
    return _finish(op, op.operands[1:], [out], [v.astype(out.dtype)])


@impl("linalg.winograd_output_transform")
def _winograd_output(interp, op, args):
    v, init = (np.asarray(a) for a in args)         # v: aH x aW x tH x tW x N x F -> init: N x H x W x F
    m, r, _, _, AT, factor = _winograd_params(op)
    work = _work_dtype(init.dtype)
    a_h, a_w, t_h, t_w, n, f = v.shape
    left, right = a_h != 1, a_w != 1
    eye = np.ones((1, 1), work)
    L = AT.astype(work) if left else eye
    R = AT.astype(work) if right else eye
    scale = (factor if left else 1) * (factor if right else 1)
    y = np.einsum("ia,abtunf,jb->ijtunf", L, v.astype(work), R) * scale       # rows x cols x tH x tW x N x F
    rows, cols = y.shape[0], y.shape[1]
    tiles = y.transpose(4, 2, 0, 3, 1, 5).reshape(n, t_h * rows, t_w * cols, f)
    out = init.astype(work).copy()
    if t_h * rows > out.shape[1] or t_w * cols > out.shape[2]:
        raise InterpreterError(f"the output ({out.shape[1]}x{out.shape[2]}) is too small for {t_h}x{t_w} tiles")
    out[:, :t_h * rows, :t_w * cols, :] += tiles
    return _finish(op, op.operands[1:], [init], [out.astype(init.dtype)])
