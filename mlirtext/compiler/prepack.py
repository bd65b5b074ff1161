"""Constant weights packed at compile time (after dispatch formation and the merges of the
micro-kernel's dispatches): a matmul or convolution dispatch of the micro-kernel whose B (a
convolution's: its filter) is a host constant at a call gets, at that call, B already in the
micro-kernel's packed layout (packed_weights.py) and a variant of the
kernel that takes it so. The micro-kernel then reads the panels of B where they lie in the
module's weights (stored once, aligned, mapped by the VM) instead of copying a block of B on every
call, as IREE's data-tiling packs constant operands once by const-eval. A B^T constant (a
PyTorch Linear's weight) is transposed in the same step; an HWIO filter is packed as the
(KH * KW * IC) x OC matrix its implicit GEMM reads.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..dialects.func import function_type
from ..dialects.tensor import VIEWS, view_source
from ..ir import types as T
from ..ir.arrays import array_to_bytes_attr, attr_to_array
from ..ir.attributes import StringAttr, SymbolRefAttr, TypeAttr
from ..ir.core import Block, Operation, Region
from .dispatch_merging import dispatches_and_calls
from .packed_weights import filter_matrix, pack_panels, packed_type, unpacking_ops
from .ukernels import MatmulPlan, plan_conv, plan_matmul

SUFFIX = "_packed"


def prepack_constant_weights(module: Operation) -> None:
    """Give each matmul or convolution call whose B is a constant its B packed, and the kernel's packed variant;
    a kernel left without calls goes, and so does a constant left without uses."""
    body, kernels, calls = dispatches_and_calls(module)
    for name, kernel in kernels.items():
        plan = plan_matmul(kernel) or plan_conv(kernel)
        if plan is None or plan.b_packed:
            continue
        sites = [(call, weight) for call in calls.get(name, [])
                 if (weight := constant_value(call.operands[plan.b_arg])) is not None]
        if not sites:
            continue
        variant = packed_variant(kernel, plan)
        body.insert_after(kernel, variant)
        for call, weight in sites:
            b = np.swapaxes(weight, -1, -2) if plan.b_transposed else weight
            packed = pack_panels(b.reshape(-1, b.shape[-1]) if plan.kind == "conv" else b)
            t = T.RankedTensorType(packed.shape, T.f32)
            const = Operation("arith.constant", [], [t], {"value": array_to_bytes_attr(packed, t)},
                              span=call.span, location=call.location)
            call.parent.insert_before(call, const)
            old = call.operands[plan.b_arg]
            call.set_operand(plan.b_arg, const.results[0])
            call.attributes["callee"] = SymbolRefAttr(variant.sym_name)
            _erase_unused(old)
        if len(sites) == len(calls.get(name, [])):
            kernel.erase()


def constant_value(v) -> Optional[np.ndarray]:
    """The value of host value `v` when it is an f32 constant (through host views), as `v`'s shape;
    None for a splat too (the module stores it as one value: packed, it would be every one)."""
    t, op = v.type, getattr(v, "op", None)
    while op is not None and op.name in VIEWS:
        op = getattr(view_source(op), "op", None)
    if op is None or op.name != "arith.constant" or not isinstance(t, T.RankedTensorType) or \
            T.element_type(t) != T.f32:
        return None
    value = np.asarray(attr_to_array(op.attr("value"), op.results[0].type), np.float32).reshape(t.shape)
    return None if value.size == 0 or (value == value.flat[0]).all() else value


def packed_variant(kernel: Operation, plan: MatmulPlan) -> Operation:
    """A copy of `kernel` taking its B packed (a B^T argument: B, packed) and unpacking it first."""
    args = kernel.regions[0].blocks[0].arguments
    ops = list(kernel.regions[0].blocks[0].ops)
    b = args[plan.b_arg]
    transpose = None
    if plan.b_transposed:   # (the matmul's B is the transpose of the argument)
        transpose = next(u.op for u in b.uses if u.op.name == "linalg.transpose")
        b = transpose.results[0]
    matrix = filter_matrix(b.type) if plan.kind == "conv" else b.type
    types = [packed_type(matrix) if i == plan.b_arg else a.type for i, a in enumerate(args)]
    entry = Block(types)
    mapping: dict = {}
    for old, new in zip(args, entry.arguments):
        mapping[old] = new
        new.name = old.name
    unpack = unpacking_ops(entry.arguments[plan.b_arg], matrix, b.type if plan.kind == "conv" else None)
    for op in unpack:
        entry.append(op)
    mapping[b] = unpack[-1].results[0]
    skipped = {transpose, getattr(transpose.operand("init"), "op", None)} if transpose else set()
    for op in ops:
        if op not in skipped:
            entry.append(op.clone(mapping))
    ftype = T.FunctionType(tuple(types), function_type(kernel).results)
    attributes = {"sym_name": StringAttr(kernel.sym_name + SUFFIX), "function_type": TypeAttr(ftype),
                  "sym_visibility": StringAttr("private")}
    variant = Operation("func.func", (), (), attributes, [Region([entry])], span=kernel.span, location=kernel.location)
    variant.name_span = kernel.name_span
    return variant


def _erase_unused(v) -> None:
    """Erase the host op making `v` (and the views and constant before it) when nothing reads it."""
    op = getattr(v, "op", None)
    while op is not None and op.name in (*VIEWS, "arith.constant") and not any(r.uses for r in op.results):
        source = view_source(op) if op.name in VIEWS else None
        op.erase()
        op = getattr(source, "op", None)
