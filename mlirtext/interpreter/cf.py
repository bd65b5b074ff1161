"""cf semantics: branches between blocks of a region, and assertions."""
from __future__ import annotations

import numpy as np

from .machine import Branch, InterpreterError
from .registry import impl


@impl("cf.br")
def _br(interp, op, args):
    return Branch(op.successors[0], list(args))


@impl("cf.cond_br")
def _cond_br(interp, op, args):
    seg = op.attr("operandSegmentSizes").values
    cond = args[0]
    n_true = seg[1]
    if bool(np.asarray(cond)):
        return Branch(op.successors[0], list(args[1:1 + n_true]))
    return Branch(op.successors[1], list(args[1 + n_true:]))


@impl("cf.switch")
def _switch(interp, op, args):
    seg = op.attr("operandSegmentSizes").values
    flag = int(np.asarray(args[0]))
    n_default = seg[1]
    default_args = list(args[1:1 + n_default])
    case_args = list(args[1 + n_default:])
    values_attr = op.attr("case_values")
    values = [int(v) for v in values_attr.values] if values_attr is not None else []
    if values_attr is not None and values_attr.splat and len(op.successors) - 1 > 1:
        values = values * (len(op.successors) - 1)
    segments = op.attr("case_operand_segments")
    sizes = list(segments.values) if segments is not None else [0] * len(values)
    start = 0
    for k, (value, size) in enumerate(zip(values, sizes)):
        if value == flag:
            return Branch(op.successors[1 + k], case_args[start:start + size])
        start += size
    return Branch(op.successors[0], default_args)


@impl("cf.assert")
def _assert(interp, op, args):
    cond = np.asarray(args[0])
    if not bool(np.all(cond)):
        msg = op.attr("msg")
        raise InterpreterError(f"assertion failed: {msg.value if msg is not None else ''}")
    return []
