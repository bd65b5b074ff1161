"""Workgroups: one dispatch shared by several threads, as IREE distributes a dispatch.

A kernel whose structured ops all write the same output rows in the same order (a matmul and
its zero fill, a convolution and its bias, an elementwise op, a row reduction) can run any
range of output rows by itself: its loop over the first non-unit output axis gets bounds
`[begin, end)` from two extra index arguments (after the inputs, before the outputs). The VM
calls it once with the whole range on `local-sync`, and with one slice per thread on
`local-task`.

`plan` decides at the linalg level which kernels qualify (the reasons it can be done are all
read off the indexing maps: the split dimension is parallel, is the output's axis `p` with unit
axes before it, and no op reads what another op of the kernel writes except through its init);
`distribute` rewrites the loops after the linalg -> loops step and checks that the loops are the
ones it expects, leaving a kernel alone when they are not.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import IntegerAttr
from ..ir.core import Operation

ATTR = "mlirtext.workgroups"


def _split_axis(op: Operation):
    """(axis p, extent N) of the loop that can be split for structured op `op`, or None."""
    from ..dialects.linalg import segments
    from ..transforms.conversions.linalg_to_loops import structured
    try:
        s = structured(op)
        ins, outs = segments(op)
    except Exception:  # noqa: BLE001
        return None
    if len(outs) != 1 or not isinstance(outs[0].type, T.ShapedType) or outs[0].type.rank == 0:
        return None
    shape = outs[0].type.shape
    out_map = s.maps[-1]
    p = next((i for i, d in enumerate(shape) if d != 1), None)
    if p is None or shape[p] < 2:
        return None
    for i in range(p + 1):   # loops 0..p are the output's axes 0..p, in order, all parallel
        if i >= len(out_map.results) or out_map.results[i] != ("dim", i) or i in s.reductions:
            return None
    return p, shape[p]


def plan(fn: Operation):
    """(p, N) when kernel `fn` (linalg on tensors) can be split into row ranges, else None."""
    from ..dialects.linalg import segments
    from ..transforms.dispatch import is_structured
    body = fn.regions[0].blocks[0]
    structured_ops = [op for op in body.ops if is_structured(op)]
    if not structured_ops:
        return None
    for op in body.ops:
        if not (is_structured(op) or op.name in ("tensor.empty", "arith.constant", "func.return")):
            return None
    produced = {id(r) for op in structured_ops for r in op.results}
    found = set()
    for op in structured_ops:
        ins, outs = segments(op)
        if any(id(v) in produced for v in ins):       # reads another op's whole result: not row-local
            return None
        axis = _split_axis(op)
        if axis is None:
            return None
        found.add(axis)
    ret = body.ops[-1]
    if len(found) != 1 or len(ret.operands) != 1 or id(ret.operands[0]) not in produced:
        return None
    return found.pop()


def distribute(fn: Operation, p: int, extent: int) -> bool:
    """After linalg -> loops: give the loop at depth `p` of every top-level loop nest of `fn` the
    bounds of two new index arguments. False (and `fn` untouched) when the loops are not as expected."""
    body = fn.regions[0].blocks[0]
    nests = [op for op in body.ops if op.name == "scf.for"]
    targets = []
    for nest in nests:
        loop = nest
        for _ in range(p):
            if not _bounds_are(loop, 1):
                return False
            inner = [o for o in loop.regions[0].blocks[0].ops if o.name == "scf.for"]
            if len(inner) != 1:
                return False
            loop = inner[0]
        if not _bounds_are(loop, extent):
            return False
        targets.append(loop)
    if not targets or any(op.name not in ("scf.for", "arith.constant", "func.return", "memref.alloc",
                                          "memref.get_global") for op in body.ops):
        return False
    from ..dialects.func import function_type
    from ..ir.attributes import TypeAttr
    begin = body.add_argument(T.index, name="wg_begin")
    end = body.add_argument(T.index, name="wg_end")
    for loop in targets:
        loop.set_operand(0, begin)
        loop.set_operand(1, end)
    ftype = function_type(fn)
    fn.attributes["function_type"] = TypeAttr(T.FunctionType(tuple(ftype.inputs) + (T.index, T.index), ftype.results))
    fn.attributes[ATTR] = IntegerAttr(extent, T.i64)
    return True


def _bounds_are(loop: Operation, extent: int) -> bool:
    def const(v):
        owner = getattr(v, "op", None)
        if owner is None or owner.name != "arith.constant":
            return None
        return getattr(owner.attributes.get("value"), "value", None)
    lower, upper, step = loop.operands[:3]
    return const(lower) == 0 and const(upper) == extent and const(step) == 1 and len(loop.operands) == 3
