"""Dispatches that need no kernel at run time, found after dispatch formation (each dispatch the
VM launches costs its host loop a call, whatever the kernel does):

- a transpose that moves only axes of size 1 keeps every element where it is: its call becomes a
  reshape, two host views (collapse to one axis, expand to the result's shape). Squeeze-and-
  excitation blocks give one on each side of their 1x1 feature maps once channels_last has laid
  the convolutions out as NHWC (1x1x1xC <-> 1xCx1x1);
- a dispatch with no inputs whose result only other dispatches read computes the same tensor on
  every call (an average pool's divisor, a window of ones summed): the interpreter runs it once at
  compile time and its result becomes a host constant, as IREE's const-eval does.
"""
from __future__ import annotations

import numpy as np

from ..interpreter import Interpreter
from ..interpreter.machine import InterpreterError
from ..ir import types as T
from ..ir.arrays import array_to_attr
from ..ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr
from ..ir.core import Operation
from ..transforms.dispatch import is_dispatch_function
from .dispatch_merging import callee

#: Results up to this many elements are folded (a constant is stored in the module file).
FOLD_ELEMENTS = 1 << 16


def fold_host_dispatches(module: Operation, evaluate: bool = True) -> None:
    """Replace the calls of unit-axis transposes with views and (when `evaluate`) of input-less
    dispatches with constants; drop the dispatch functions left without calls."""
    body = module.regions[0].blocks[0]
    kernels = {op.sym_name: op for op in body.ops if is_dispatch_function(op)}
    interpreter = None
    for call in [op for op in module.walk() if op.name == "func.call"]:
        kernel = kernels.get(callee(call))
        if kernel is None or len(call.results) != 1:
            continue
        if _unit_axis_transpose(kernel):
            _replace_with_views(call)
        elif evaluate and not call.operands and _small(call.results[0].type) and \
                all(u.op.name == "func.call" for u in call.results[0].uses):   # (what a function returns stays)
            interpreter = interpreter or Interpreter(module)
            try:
                value = interpreter.call(kernel.sym_name, [], reflect=False)[0]
            except (InterpreterError, ValueError, NotImplementedError):
                continue
            _replace_with_constant(call, np.asarray(value))
    called = {callee(op) for op in module.walk() if op.name == "func.call"}
    for name, kernel in kernels.items():
        if name not in called:
            kernel.erase()


def _small(t) -> bool:
    return isinstance(t, T.RankedTensorType) and t.has_static_shape and t.num_elements <= FOLD_ELEMENTS


def _unit_axis_transpose(kernel: Operation) -> bool:
    """The kernel only transposes its argument, and the axes that move all have size 1 (the
    others keep their order)."""
    ops = [op for op in kernel.regions[0].blocks[0].ops if op.name not in ("tensor.empty", "func.return")]
    if len(ops) != 1 or ops[0].name != "linalg.transpose":
        return False
    source = ops[0].operand("input").type
    perm = list(getattr(ops[0].attr("permutation"), "values", ()))
    if not isinstance(source, T.RankedTensorType) or not source.has_static_shape or sorted(perm) != \
            list(range(source.rank)):
        return False
    kept = [p for p in perm if source.shape[p] != 1]
    return kept == sorted(kept)


def _replace_with_views(call: Operation) -> None:
    """collapse_shape to one axis, expand_shape to the result: the same elements in the same order."""
    x, t = call.operands[0], call.results[0].type
    flat = T.RankedTensorType((t.num_elements,), T.element_type(t))
    collapse = _view("tensor.collapse_shape", x, flat, x.type.rank, call)
    expand = _view("tensor.expand_shape", collapse.results[0], t, t.rank, call)
    expand.attributes["static_output_shape"] = DenseArrayAttr(T.i64, tuple(t.shape))
    expand.results[0].name = call.results[0].name
    call.results[0].replace_all_uses_with(expand.results[0])
    call.erase()


def _view(name: str, x, t, rank: int, call: Operation) -> Operation:
    group = ArrayAttr(tuple(IntegerAttr(i) for i in range(rank)))
    op = Operation(name, [x], [t], {"reassociation": ArrayAttr((group,))}, span=call.span, location=call.location)
    call.parent.insert_before(call, op)
    return op


def _replace_with_constant(call: Operation, value: np.ndarray) -> None:
    t = call.results[0].type
    const = Operation("arith.constant", [], [t], {"value": array_to_attr(value.reshape(t.shape), t)},
                      span=call.span, location=call.location)
    call.parent.insert_before(call, const)
    const.results[0].name = call.results[0].name
    call.results[0].replace_all_uses_with(const.results[0])
    call.erase()
