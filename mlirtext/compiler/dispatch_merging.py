"""Merging two dispatches into one kernel where the producer's result goes only to the consumer:
the kernel runs the producer's body, the host views between them and the consumer's body, and the
host makes one call in place of two. The merges themselves (which pairs, and whether the merged
kernel is one a hand-written kernel takes) are the callers': epilogues.py, pads.py."""
from __future__ import annotations

from ..dialects.func import function_type
from ..dialects.tensor import VIEWS
from ..ir import types as T
from ..ir.attributes import StringAttr, SymbolRefAttr, TypeAttr
from ..ir.core import Block, Operation, Region
from ..transforms.dispatch import is_dispatch_function


def dispatches_and_calls(module: Operation):
    """(the module's body, {name: dispatch function}, {callee: [func.call]})."""
    body = module.regions[0].blocks[0]
    kernels = {op.sym_name: op for op in body.ops if is_dispatch_function(op)}
    calls: dict = {}
    for op in module.walk():
        if op.name == "func.call":
            calls.setdefault(callee(op), []).append(op)
    return body, kernels, calls


def single_calls(kernels: dict, calls: dict):
    """(name, dispatch, its call) for each dispatch called once, with one result. A dispatch merged
    away (or into a new kernel) while the caller walks these is skipped."""
    for name, kernel in list(kernels.items()):
        if kernels.get(name) is not kernel:
            continue
        sites = calls.get(name, [])
        if len(sites) == 1 and len(sites[0].results) == 1:
            yield name, kernel, sites[0]


def body_op_names(kernel: Operation, skip=("tensor.empty", "func.return")) -> list[str]:
    """The names of a dispatch's ops, but those in `skip`."""
    return [op.name for op in kernel.regions[0].blocks[0].ops if op.name not in skip]


def through_views(value):
    """(what `value` becomes through the views (tensor reshapes) that alone use it, one after
    another; those views)."""
    views = []
    while len(value.uses) == 1 and value.uses[0].op.name in VIEWS:
        views.append(value.uses[0].op)
        value = views[-1].results[0]
    return value, views


def sole_consumer(value, kernels: dict, calls: dict):
    """(call, dispatch) when `value`'s one use is the only call of a dispatch with one result,
    else (None, None)."""
    if len(value.uses) != 1 or value.uses[0].op.name != "func.call":
        return None, None
    call = value.uses[0].op
    consumer = kernels.get(callee(call))
    if consumer is None or len(calls.get(consumer.sym_name, [])) != 1 or len(call.results) != 1:
        return None, None
    return call, consumer


def callee(call: Operation) -> str:
    """The called function's name, unquoted (`@"my fn-1_dispatch_0"` calls `my fn-1_dispatch_0`)."""
    ref = call.attributes.get("callee")
    return ref.root if isinstance(ref, SymbolRefAttr) else ""


def merge(producer, call, views, consumer, consumer_call, position) -> Operation:
    """A new kernel: the producer's body, the views, the consumer's body (taking the views' result
    in place of its input `position`); its inputs: the producer's, then the consumer's others."""
    p_args = producer.regions[0].blocks[0].arguments
    c_args = consumer.regions[0].blocks[0].arguments
    others = [a for i, a in enumerate(c_args) if i != position]
    entry = Block([a.type for a in (*p_args, *others)])
    mapping: dict = {}
    for old, new in zip((*p_args, *others), entry.arguments):
        mapping[old] = new
        new.name = old.name
    p_body = producer.regions[0].blocks[0]
    for op in p_body.ops[:-1]:
        entry.append(op.clone(mapping))
    mapping[call.results[0]] = mapping[p_body.ops[-1].operands[0]]
    for view in views:
        entry.append(view.clone(mapping))
    mapping[c_args[position]] = mapping[views[-1].results[0] if views else call.results[0]]
    c_body = consumer.regions[0].blocks[0]
    for op in c_body.ops:
        entry.append(op.clone(mapping))
    ftype = T.FunctionType(tuple(a.type for a in entry.arguments), function_type(consumer).results)
    merged = Operation("func.func", (), (), {"sym_name": StringAttr(producer.sym_name), "function_type": TypeAttr(ftype),
                                             "sym_visibility": StringAttr("private")},
                       [Region([entry])], span=producer.span, location=producer.location)
    merged.name_span = producer.name_span
    return merged


def replace_merged(body, producer, call, views, consumer, consumer_call, position, merged) -> Operation:
    """Put `merged` in place of the two kernels, and one call to it in place of their calls (which
    it returns)."""
    host = consumer_call.parent
    operands = list(call.operands) + [x for i, x in enumerate(consumer_call.operands) if i != position]
    new_call = Operation("func.call", operands, consumer_call.result_types, dict(call.attributes),
                         span=call.span, location=call.location)
    new_call.name_span = call.name_span
    host.insert_before(consumer_call, new_call)
    for old, new in zip(consumer_call.results, new_call.results):
        new.name = old.name
        old.replace_all_uses_with(new)
    consumer_call.erase()
    for view in reversed(views):
        view.erase()
    call.erase()
    body.insert_before(producer, merged)
    producer.erase()
    consumer.erase()
    return new_call


def apply_merge(body, kernels: dict, calls: dict, producer, call, views, consumer, consumer_call, position,
                merged) -> None:
    """`replace_merged`, keeping `kernels` and `calls` (from `dispatches_and_calls`) true: the merged
    kernel has the producer's name and one call, the consumer is gone (a later merge may take the
    merged kernel's result, as a residual input, or feed it)."""
    new_call = replace_merged(body, producer, call, views, consumer, consumer_call, position, merged)
    kernels.pop(consumer.sym_name, None)
    calls.pop(consumer.sym_name, None)
    kernels[merged.sym_name] = merged
    calls[merged.sym_name] = [new_call]
