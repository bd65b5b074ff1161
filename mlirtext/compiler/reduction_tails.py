"""Small elementwise tails merged into the reduction before them: a global average pool is a window
sum, then (through host reshapes) a divide by the window's size, a dispatch of its own of a few
hundred floats (MobileNetV3's and EfficientNet's squeeze-and-excitation blocks, one per block). Its
work is nothing; its cost is the dispatch (the call into the kernel, the host's step). As IREE's
dispatch formation puts a reduction's elementwise consumers into the reduction's dispatch, the two
are merged here into one kernel of generated loops: the sum, the views, the divide.

Merged only where the producer is no micro-kernel (those take their epilogues in registers:
epilogues.py), reduces, and is small (`MAX_ELEMENTS` results), and the consumer is one elementwise
generic of the same size; the reference device interprets the merged kernel as it is.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.core import Operation
from .dispatch_merging import apply_merge, dispatches_and_calls, merge, single_calls, sole_consumer, through_views
from .ukernels import plan_kernel

#: Results of at most this many elements: the tail's work is negligible beside a dispatch.
MAX_ELEMENTS = 4096


def fuse_reduction_tails(module: Operation) -> None:
    """Merge each small reduction dispatch with the elementwise dispatch that alone reads its result."""
    body, kernels, calls = dispatches_and_calls(module)
    for _, producer, call in single_calls(kernels, calls):
        if not _small_reduction(producer) or plan_kernel(producer) is not None:
            continue
        v, views = through_views(call.results[0])
        consumer_call, consumer = sole_consumer(v, kernels, calls)
        if consumer is None or not _tail(consumer, v.type.num_elements):
            continue
        merged = merge(producer, call, views, consumer, consumer_call, v.uses[0].index)
        apply_merge(body, kernels, calls, producer, call, views, consumer, consumer_call, v.uses[0].index, merged)


def _structured(fn: Operation) -> list[Operation]:
    return [op for op in fn.regions[0].blocks[0].ops if op.name.startswith("linalg.")]


def _small(fn: Operation) -> bool:
    results = fn.regions[0].blocks[0].ops[-1].operands
    return len(results) == 1 and isinstance(results[0].type, T.RankedTensorType) and \
        results[0].type.num_elements <= MAX_ELEMENTS


def _small_reduction(fn: Operation) -> bool:
    """A dispatch of generated loops with a reduction in it and one small result."""
    return _small(fn) and any(op.name == "linalg.reduce" or (op.name == "linalg.generic" and "reduction" in
                                                             str(op.attr("iterator_types"))) for op in _structured(fn))


def _tail(fn: Operation, elements: int) -> bool:
    """One all-parallel generic over the reduction's result: its result and every input of
    `elements` (the reduced values, a divisor per value) or fewer (a scalar), so the merged kernel
    does no more work than the two did (a consumer that reads a whole image beside the reduced
    values stays a dispatch of its own, split into workgroups: test_vm_row_chains)."""
    ops = _structured(fn)
    values = [*fn.regions[0].blocks[0].arguments, *fn.regions[0].blocks[0].ops[-1].operands]
    return len(ops) == 1 and ops[0].name == "linalg.generic" and "reduction" not in str(ops[0].attr("iterator_types")) \
        and all(isinstance(x.type, T.RankedTensorType) and x.type.num_elements <= elements for x in values) \
        and fn.regions[0].blocks[0].ops[-1].operands[0].type.num_elements == elements
