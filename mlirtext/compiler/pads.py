"""Pads merged into the convolutions around them, so that a pad is never a dispatch (and a full
copy of an image) of its own, as IREE fuses a pad into its consumer's or producer's dispatch:

- into the consumer (`fuse_pads`): a depthwise convolution with padding is lowered as a pad (a
  dispatch that copies the image into a bigger zeroed one) and the convolution of the copy. The
  direct kernel (grouped_conv.py) reads the image itself instead and leaves out the taps that fall
  in the padding, so the copy is never made. Merged only where the merged kernel is one the direct
  kernel takes (conv_patterns.zero_pad checks that the producer is a zero pad).
- into the producer (`fuse_output_pads`): the pad in front of a dense convolution (ResNet's 3x3s,
  which the micro-kernel reads as whole filter rows, padding and all), or of a max pool (a pad of
  -inf), whose image a dense convolution makes for it alone: the convolution's micro-kernel writes
  its result inside the padded buffer and the border around it (output_pads.py), so the pad costs
  one store per border pixel. Merged only where the merged kernel is one the micro-kernel takes.
- a transpose into the pad after it (`fuse_transposes_into_pads`): the stem's pad reads the NCHW
  input where the NHWC image would have been, so the layout change and the pad are one pass.

The reference device interprets a merged kernel as it is.
"""
from __future__ import annotations

from ..ir.core import Operation
from .dispatch_merging import apply_merge, body_op_names, callee, dispatches_and_calls, merge, single_calls, sole_consumer
from .grouped_conv import plan_grouped_conv
from .ukernels import plan_conv


def _single_generic_calls(kernels: dict, calls: dict):
    """(name, kernel, its call) for each dispatch of one generic (a pad's shape: one input, one
    result) called once."""
    for name, kernel, call in single_calls(kernels, calls):
        if body_op_names(kernel, ("tensor.empty", "arith.constant", "func.return")) == ["linalg.generic"] and \
                len(call.operands) == 1:
            yield name, kernel, call


def fuse_pads(module: Operation) -> None:
    """Merge each single-op dispatch whose only use is a grouped convolution's image into it."""
    body, kernels, calls = dispatches_and_calls(module)
    for name, producer, call in _single_generic_calls(kernels, calls):
        v = call.results[0]
        consumer_call, consumer = sole_consumer(v, kernels, calls)
        if consumer is None or plan_grouped_conv(consumer) is None:
            continue
        merged = merge(producer, call, [], consumer, consumer_call, v.uses[0].index)
        plan = plan_grouped_conv(merged)
        if plan is None or plan.conv.padding == ((0, 0), (0, 0)):
            continue
        apply_merge(body, kernels, calls, producer, call, [], consumer, consumer_call, v.uses[0].index, merged)


def _sole_producer(value, kernels: dict, calls: dict):
    """(call, dispatch) when host value `value` is the one result of the only call of a dispatch
    and has one use, else (None, None)."""
    call = getattr(value, "op", None)
    if call is None or call.name != "func.call" or len(value.uses) != 1 or len(call.results) != 1:
        return None, None
    producer = kernels.get(callee(call))
    if producer is None or len(calls.get(producer.sym_name, [])) != 1:
        return None, None
    return call, producer


def fuse_output_pads(module: Operation) -> None:
    """Merge each single-op dispatch that pads an image only a dense convolution makes into that
    convolution's dispatch (after its epilogue is merged: the pad is the kernel's last op)."""
    body, kernels, calls = dispatches_and_calls(module)
    for name, pad, pad_call in _single_generic_calls(kernels, calls):
        producer_call, producer = _sole_producer(pad_call.operands[0], kernels, calls)
        if producer is None:
            continue
        plan = plan_conv(producer)
        if plan is None or plan.c_pad is not None:
            continue
        merged = merge(producer, producer_call, [], pad, pad_call, 0)
        plan = plan_conv(merged)
        if plan is None or plan.c_pad is None:
            continue
        apply_merge(body, kernels, calls, producer, producer_call, [], pad, pad_call, 0, merged)


def fuse_transposes_into_pads(module: Operation) -> None:
    """Merge each dispatch that only transposes an image (an NCHW input laid out as NHWC:
    convert-conv-to-channels-last) into the single-generic dispatch that reads it only through
    `tensor.extract` (the stem convolution's pad): the extracts read the transpose's input at the
    permuted indices, so the image is moved once, not copied twice."""
    body, kernels, calls = dispatches_and_calls(module)
    for name, pad, pad_call in _single_generic_calls(kernels, calls):
        producer_call, producer = _sole_producer(pad_call.operands[0], kernels, calls)
        ops = [op for op in producer.regions[0].blocks[0].ops if op.name not in ("tensor.empty", "func.return")] \
            if producer is not None else []
        if [op.name for op in ops] != ["linalg.transpose"]:
            continue
        merged = merge(producer, producer_call, [], pad, pad_call, 0)
        transpose = next(op for op in merged.regions[0].blocks[0].ops if op.name == "linalg.transpose")
        moved = transpose.results[0]
        if not moved.uses or any(u.op.name != "tensor.extract" or u.index != 0 for u in moved.uses):
            continue
        perm = list(transpose.attr("permutation").values)
        source = transpose.operand("input")
        for use in list(moved.uses):   # (result index i is the input's index perm[i])
            extract = use.op
            indices = list(extract.operands[1:])
            permuted = [indices[perm.index(d)] for d in range(len(perm))]
            extract.set_operands([source, *permuted])
        init = getattr(transpose.operand("init"), "op", None)
        transpose.erase()
        if init is not None and init.name == "tensor.empty" and not init.results[0].uses:
            init.erase()
        apply_merge(body, kernels, calls, producer, producer_call, [], pad, pad_call, 0, merged)
