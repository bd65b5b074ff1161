"""Zero pads merged into the grouped convolutions that read them: a depthwise convolution with
padding is lowered as a pad (a dispatch that copies the image into a bigger zeroed one) and the
convolution of the copy. The direct kernel (grouped_conv.py) reads the image itself instead and
leaves out the taps that fall in the padding, so the copy is never made: one dispatch and one pass
over the image fewer, as IREE fuses a pad into its consumer's dispatch.

Merged only where the merged kernel is one the direct kernel takes (conv_patterns.zero_pad checks
that the producer is a zero pad); the reference device interprets the merged kernel as it is.
"""
from __future__ import annotations

from ..ir.core import Operation
from .dispatch_merging import apply_merge, dispatches_and_calls, merge, sole_consumer
from .grouped_conv import plan_grouped_conv


def fuse_pads(module: Operation) -> None:
    """Merge each single-op dispatch whose only use is a grouped convolution's image into it."""
    body, kernels, calls = dispatches_and_calls(module)
    for name, producer in list(kernels.items()):
        if kernels.get(name) is not producer:   # (merged away, or into a new kernel, meanwhile)
            continue
        sites = calls.get(name, [])
        ops = [op.name for op in producer.regions[0].blocks[0].ops
               if op.name not in ("tensor.empty", "arith.constant", "func.return")]
        if ops != ["linalg.generic"] or len(sites) != 1 or len(sites[0].results) != 1 or len(sites[0].operands) != 1:
            continue
        call = sites[0]
        v = call.results[0]
        consumer_call, consumer = sole_consumer(v, kernels, calls)
        if consumer is None or plan_grouped_conv(consumer) is None:
            continue
        merged = merge(producer, call, [], consumer, consumer_call, v.uses[0].index)
        plan = plan_grouped_conv(merged)
        if plan is None or plan.conv.padding == ((0, 0), (0, 0)):
            continue
        apply_merge(body, kernels, calls, producer, call, [], consumer, consumer_call, v.uses[0].index, merged)
