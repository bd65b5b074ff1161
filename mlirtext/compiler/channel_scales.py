"""Squeeze-and-excitation's scale merged into the 1x1 convolution after it: the block multiplies its
image by a scale per channel, x[0, h, w, c] * s[c] (a dispatch of its own: one pass that reads and
writes the whole image, nine of them in MobileNetV3-Small, sixteen in EfficientNet-B0), and the
projection convolution reads the product. Merged into one kernel, the micro-kernel reads x as it is
and scales B's rows instead, as it packs each block of B: row k of B times s[k] (ukernels.py,
`MatmulPlan.a_scale`), a few multiplies per block of B against a pass over the image.

Each product is then x * (s * w) where the unmerged kernels computed (x * s) * w: the same product
rounded in another order (within an ulp of each other), as a lowering may reassociate.

Merged only where the merged kernel is one the micro-kernel takes (a 1x1 convolution of a batch of
one); the reference device interprets the merged kernel as it is.
"""
from __future__ import annotations

from ..ir.core import Operation
from .dispatch_merging import apply_merge, body_op_names, dispatches_and_calls, merge, single_calls, sole_consumer
from .ukernels import plan_conv


def fuse_channel_scales(module: Operation) -> None:
    """Merge each dispatch of one two-input generic whose only use is a 1x1 convolution's image into
    that convolution's dispatch, where the micro-kernel then scales B's rows."""
    body, kernels, calls = dispatches_and_calls(module)
    for _, producer, call in single_calls(kernels, calls):
        if body_op_names(producer) != ["linalg.generic"] or len(call.operands) != 2:
            continue
        v = call.results[0]
        consumer_call, consumer = sole_consumer(v, kernels, calls)
        if consumer is None or plan_conv(consumer) is None:
            continue
        merged = merge(producer, call, [], consumer, consumer_call, v.uses[0].index)
        plan = plan_conv(merged)
        if plan is None or plan.a_scale is None:
            continue
        apply_merge(body, kernels, calls, producer, call, [], consumer, consumer_call, v.uses[0].index, merged)
