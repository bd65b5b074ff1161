"""scf semantics: structured control flow on scalar (0-d) conditions and bounds.

Inside a linalg body run on whole arrays, a condition or bound that is an array
(one value per element) raises `NotVectorizable`, and the linalg op falls back to
running its body element by element.
"""
from __future__ import annotations

import numpy as np

from ..ir.arrays import dtype_of, unsigned_view
from .linalg import NotVectorizable
from .machine import InterpreterError, Return
from .registry import impl


def _scalar(v, what="value"):
    a = np.asarray(v)
    if a.ndim != 0:
        raise NotVectorizable(what)
    return a


@impl("scf.yield", "scf.condition", "scf.reduce.return")
def _yield(interp, op, args):
    return Return(list(args))


@impl("scf.for")
def _for(interp, op, args):
    lb, ub, step, *iters = args
    lb, ub, step = (_scalar(x, "loop bound") for x in (lb, ub, step))
    unsigned = "unsignedCmp" in op.attributes
    iv_type = op.operand("lowerBound").type
    dtype = dtype_of(iv_type)
    if unsigned:
        lo, hi, st = (int(unsigned_view(x)) for x in (lb, ub, step))
    else:
        lo, hi, st = int(lb), int(ub), int(step)
    if st <= 0:
        raise InterpreterError(f"scf.for: step must be positive, got {st}")
    body = op.regions[0]
    values = list(iters)
    i = lo
    while i < hi:
        iv = np.array(i, dtype=np.uint64 if unsigned and dtype.kind in "iu" else np.int64)
        iv = iv.astype(dtype) if iv.dtype != dtype else iv
        values = interp.run_region(body, [iv] + values)
        i += st
    return values


@impl("scf.if")
def _if(interp, op, args):
    cond = bool(_scalar(args[0], "scf.if condition"))
    region = op.regions[0] if cond else (op.regions[1] if len(op.regions) > 1 else None)
    if region is None or not region.blocks:
        return []
    return interp.run_region(region, [])


@impl("scf.while")
def _while(interp, op, args):
    before, after = op.regions
    values = list(args)
    while True:
        cond, *forwarded = interp.run_region(before, values)
        if not bool(_scalar(cond, "scf.while condition")):
            return forwarded
        values = interp.run_region(after, forwarded)


@impl("scf.execute_region")
def _execute_region(interp, op, args):
    return interp.run_region(op.regions[0], [])


@impl("scf.index_switch")
def _index_switch(interp, op, args):
    value = int(_scalar(args[0], "scf.index_switch value"))
    attr = op.attr("cases")
    cases = [int(v) for v in attr.values] if attr is not None else []
    region = op.regions[0]
    if value in cases:
        region = op.regions[1 + cases.index(value)]
    if not region.blocks:
        return []
    return interp.run_region(region, [])


@impl("scf.parallel")
def _parallel(interp, op, args):
    seg = op.attr("operandSegmentSizes").values
    n = seg[0]
    lbs, ubs, steps, inits = args[:n], args[n:2 * n], args[2 * n:3 * n], args[3 * n:]
    ranges = [range(int(_scalar(a)), int(_scalar(b)), int(_scalar(s))) for a, b, s in zip(lbs, ubs, steps)]
    body = op.regions[0]
    block = body.blocks[0]
    reduce_op = block.ops[-1] if block.ops and block.ops[-1].name == "scf.reduce" else None
    accs = list(inits)
    import itertools
    for point in itertools.product(*ranges):
        # run sequentially (a valid schedule of the parallel loop)
        vals = interp.run_region(body, [np.array(p, dtype=np.int64) for p in point])
        if reduce_op is not None and accs:
            accs = [interp.run_region(reduce_op.regions[k], [accs[k], vals[k]])[0] for k in range(len(accs))]
    return accs


@impl("scf.reduce")
def _reduce(interp, op, args):
    return Return(list(args))
