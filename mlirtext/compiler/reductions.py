"""Sum reductions that LLVM may vectorise (llvm-cpu kernels, after linalg -> loops).

A sum over a loop, `acc[i] = acc[i] + x[i, j]` for j in order, is a chain of dependent adds:
one add per 3-4 cycles, however wide the vectors. LLVM vectorises it (partial sums in 8-float
lanes, interleaved, added up at the end) only when the add may be reassociated. The lowering's
contract allows that for sums (README, "Lowering": floats within 8 ulp or 1e-6 of the result's
largest magnitude, as lowerings may reassociate sums, and IREE's vectorised reductions do), so
the add of such a loop gets the `reassoc` flag, and nothing else does: not the adds of the
polynomial approximations, whose rounding tricks need their order. Max and min reductions need
no flag (their result does not depend on the order); products keep theirs.

A loop is a sum reduction here when its body loads `acc[idx]`, adds one value to it and stores
the sum back to `acc[idx]`, with the same indices, none of them the loop's own index, and the
sum used by nothing else.
"""
from __future__ import annotations

from ..ir.attributes import OpaqueAttr
from ..ir.core import Operation

REASSOC = OpaqueAttr("#arith.fastmath<reassoc>")


def mark_reassociable_sums(fn: Operation) -> int:
    """Flag the adds of the sum-reduction loops of `fn` (loops level) `reassoc`; how many."""
    marked = 0
    for loop in [op for op in fn.walk() if op.name == "scf.for"]:
        body = loop.regions[0].blocks[0]
        iv = body.arguments[0]
        for add in [op for op in body.ops if op.name == "arith.addf"]:
            if _accumulates(add, body, iv):
                add.attributes["fastmath"] = REASSOC
                marked += 1
    return marked


def _accumulates(add: Operation, body, iv) -> bool:
    """`add` is `load acc[idx] + x` stored back to `acc[idx]` in `body`, idx free of `iv`."""
    total = add.results[0]
    if len(total.uses) != 1 or total.uses[0].op.name != "memref.store" or total.uses[0].index != 0:
        return False
    store = total.uses[0].op
    if store.parent is not body:
        return False
    for operand in add.operands:
        load = getattr(operand, "op", None)
        if load is None or load.name != "memref.load" or load.parent is not body or len(operand.uses) != 1:
            continue
        indices = load.operands_named("indices")
        same_place = load.operand("memref") is store.operand("memref") and \
            len(indices) == len(store.operands_named("indices")) and \
            all(a is b for a, b in zip(indices, store.operands_named("indices")))
        if same_place and all(i is not iv for i in indices):
            return True
    return False
