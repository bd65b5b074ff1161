"""StableHLO / MHLO control flow: return, while, if, case, map, composite."""
from __future__ import annotations

import numpy as np

from ..ir.attributes import StringAttr
from .hlo_regions import as_result, ints, run_body
from .machine import InterpreterError, Return
from .registry import impl


@impl("stablehlo.return", "mhlo.return")
def _return(interp, op, args):
    return Return(list(args))


def _truth(value) -> bool:
    value = np.asarray(value)
    if value.size != 1:
        raise InterpreterError(f"expected a scalar predicate, got shape {value.shape}")
    return bool(value.reshape(()))


@impl("stablehlo.while", "mhlo.while")
def _while(interp, op, args):
    cond, body = op.regions
    values = list(args)
    while True:
        result = interp.run_region(cond, values)
        if not _truth(result[0]):
            return values
        values = interp.run_region(body, values)


@impl("stablehlo.if", "mhlo.if")
def _if(interp, op, args):
    region = op.regions[0] if _truth(args[0]) else op.regions[1]
    return interp.run_region(region, [])


@impl("stablehlo.case", "mhlo.case")
def _case(interp, op, args):
    index = int(np.asarray(args[0]).reshape(()))
    n = len(op.regions)
    if index < 0 or index >= n:
        index = n - 1  # out of range: the last branch (the default)
    return interp.run_region(op.regions[index], [])


@impl("stablehlo.map", "mhlo.map")
def _map(interp, op, args):
    dims = ints(op, "dimensions")
    rank = np.asarray(args[0]).ndim
    if dims is not None and sorted(dims) != list(range(rank)):
        raise InterpreterError(f"map over dimensions {dims} of a rank-{rank} tensor is not supported")
    shape = np.asarray(args[0]).shape
    out = run_body(interp, op.regions[0], args)
    return [as_result(op, np.broadcast_to(v, shape), i) for i, v in enumerate(out)]


@impl("stablehlo.composite", "mhlo.composite")
def _composite(interp, op, args):
    callee = op.attr("decomposition")
    name = getattr(callee, "root", None) or getattr(callee, "value", None)
    if not name:
        raise InterpreterError("composite without a decomposition function")
    return interp.call(name, list(args))


@impl("stablehlo.optimization_barrier", "mhlo.optimization_barrier")
def _optimization_barrier(interp, op, args):
    return list(args)


@impl("stablehlo.call", "mhlo.call")
def _call(interp, op, args):
    callee = op.attr("callee")
    name = getattr(callee, "root", None) or (callee.value if isinstance(callee, StringAttr) else None)
    return interp.call(name, list(args))
