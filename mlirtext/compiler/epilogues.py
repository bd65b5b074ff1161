"""Matmul epilogues: the elementwise op after a matmul (a bias, a relu) runs inside the matmul's
micro-kernel, on each tile while it is still in registers, as IREE fuses a matmul's elementwise
consumers into its dispatch.

Two halves:

- `fuse_epilogues` (at dispatch level, before host programs are built): a matmul dispatch whose
  only result goes, through host views (reshapes) only, into one elementwise dispatch is merged
  with it: one kernel (fill, matmul, the views, the generic) and one call in the host. It merges
  only what the micro-kernel takes (`epilogue_of` accepts the consumer), so every merged kernel
  runs as the micro-kernel on llvm-cpu; the reference device interprets the merged kernel.
- `epilogue_of` / `Epilogue`: reading such a generic as vector IR on a 16-column tile: its inputs
  are the matmul result (identity map), function arguments read as row vectors by column (a bias:
  all-unit shape but the last axis, N), function arguments read element for element with the
  result (a residual: the result's shape, identity map), and splat constants; its body uses only
  ops that vector_body.py has a vector instruction for, on f32 (with i32 and i1 in between) once
  its transcendentals are expanded into polynomials (a SiLU, a sigmoid, a tanh: as the generated
  loops compute them).
"""
from __future__ import annotations

from typing import Optional, Sequence

from ..dialects.linalg import segments
from ..dialects.tensor import VIEWS, view_source
from ..ir import types as T
from ..ir.arrays import attr_to_array
from ..ir.core import Block, Operation, Value
from ..transforms.conversions.linalg_to_loops import structured
from .dispatch_merging import (apply_merge, body_op_names, dispatches_and_calls, merge, single_calls, sole_consumer,
                               through_views)
from .vector_body import declaration, expanded_body, instruction, splat, vectorizable
from .vector_ir import load


class Epilogue:
    """An elementwise generic applied to the accumulated tile, as vector IR on vectors of `width`
    floats (8; the micro-kernel's 16 where the host has AVX-512)."""

    def __init__(self, roles: dict, body: Block, expanded: Block, width: int = 8):
        # block argument -> "acc" | ("column", kernel input) | ("tile", kernel input) | ("constant", value)
        self.roles = roles
        self.body = body
        self.ops = [op for op in body.ops if op.name != "linalg.yield"]
        # (what runs: the body with its transcendentals expanded, vector_body.expanded_body)
        self.expanded = expanded
        self.width = width

    @property
    def description(self) -> str:
        return "+".join(op.name.split(".")[1] for op in self.ops if op.name != "arith.constant")

    @property
    def intrinsics(self) -> set[str]:
        """Declarations of the LLVM intrinsics the epilogue calls."""
        return {d for d in (declaration(op, self.width) for op in self.expanded.ops) if d}

    def column_loads(self, n: str, masks: Sequence) -> list[str]:
        """Per workgroup: the floats at column `n` of each row-vector input, a vector of the width
        per mask (each under its lane mask, if any): the register tile's columns."""
        lines, w = [], self.width
        for arg in self.column_inputs:
            for j in range(len(masks)):
                lines += [f"  %ecol{arg}.i{j} = add i64 {n}, {w * j}",
                          f"  %ecol{arg}.p{j} = getelementptr inbounds float, ptr %in{arg}, i64 %ecol{arg}.i{j}",
                          load(f"%ecol{arg}.{j}", f"%ecol{arg}.p{j}", masks[j], w)]
        return lines

    @property
    def column_inputs(self) -> list[int]:
        """The kernel inputs read as row vectors by column (a bias), in order."""
        return self._inputs("column")

    @property
    def tile_inputs(self) -> list[int]:
        """The kernel inputs read element for element with the result (a residual), in order."""
        return self._inputs("tile")

    def _inputs(self, kind: str) -> list[int]:
        return sorted({r[1] for r in self.roles.values() if isinstance(r, tuple) and r[0] == kind})

    def apply(self, prefix: str, acc: str, j: int, inputs: Optional[dict] = None) -> tuple[list[str], str]:
        """Lines computing the epilogue of `acc` (vector j of the tile's 16 columns), and its result;
        `inputs` names the 8 floats of each tile input at `acc`'s place, and of each row-vector
        input if not `column_loads`' names."""
        names: dict = {}
        w = self.width
        for arg, new in zip(self.body.arguments, self.expanded.arguments):
            role = self.roles.get(arg)
            if role is None:   # (the output's argument: unused)
                continue
            names[new] = acc if role == "acc" else splat(role[1], T.f32, w) if role[0] == "constant" else \
                inputs[role[1]] if role[0] == "tile" else (inputs or {}).get(role[1], f"%ecol{role[1]}.{j}")
        lines = []
        for k, op in enumerate(self.expanded.ops[:-1]):
            if op.name == "arith.constant":
                names[op.results[0]] = splat(op.attr("value").value, op.results[0].type, w)
                continue
            out = f"%{prefix}.{k}"
            lines.append(instruction(op, out, [names[v] for v in op.operands], w))
            names[op.results[0]] = out
        return lines, names[self.expanded.ops[-1].operands[0]]


def trailing_epilogue(body: Block, root: Operation, rest: list, N: int, then: Optional[Operation] = None):
    """The epilogue of `rest`, the ops after a kernel's `root` op (None when there are none);
    False when `rest` is not one or the kernel does not return its result (or, given `then`, the
    op that takes it last, such as a pad: `then`'s result)."""
    epilogue, final = None, root.results[0]
    if rest:
        epilogue = epilogue_of(rest, root.results[0], list(body.arguments), N)
        if epilogue is None:
            return False
        final = rest[-1].results[0]
    ret = body.ops[-1]
    if len(ret.operands) != 1 or ret.operands[0] is not (then.results[0] if then is not None else final):
        return False
    return epilogue


def epilogue_of(ops: list[Operation], result: Value, args: list, N: int) -> Optional[Epilogue]:
    """`ops` (views of `result`, then one generic) as an epilogue of a matmul with N columns whose
    kernel takes `args`; None when the micro-kernel cannot run them."""
    *views, generic = ops
    v = result
    for view in views:
        if view.name not in VIEWS or view_source(view) is not v or len(v.uses) != 1:
            return None
        v = view.results[0]
    if generic.name != "linalg.generic" or len(generic.results) != 1 or any(u.op is not generic for u in v.uses):
        return None
    if not all("parallel" in str(it) for it in generic.attr("iterator_types").items):
        return None
    ins, outs = segments(generic)
    out_t = outs[0].type
    if len(outs) != 1 or T.element_type(out_t) != T.f32 or out_t.shape[-1] != N or \
            out_t.num_elements != result.type.num_elements or getattr(outs[0], "op", None) is None or \
            outs[0].op.name != "tensor.empty":
        return None
    try:
        maps = structured(generic).maps
    except Exception:  # noqa: BLE001 - not a structured op we can read: no epilogue
        return None
    rank = out_t.rank
    identity = tuple(("dim", i) for i in range(rank))
    block = generic.regions[0].blocks[0]
    if tuple(maps[-1].results) != identity or block.arguments[len(ins)].uses:
        return None
    roles: dict = {}
    for x, mp, barg in zip(ins, maps, block.arguments):
        if not isinstance(x.type, T.ShapedType) or T.element_type(x.type) != T.f32:
            return None
        index = next((i for i, a in enumerate(args) if a is x), None)
        if x is v:
            if tuple(mp.results) != identity:
                return None
            roles[barg] = "acc"
        elif index is not None:   # a row vector, read by column (its other axes have one element)
            if mp.results and mp.results[-1] == ("dim", rank - 1) and x.type.shape[-1] == N and \
                    all(d == 1 for d in x.type.shape[:-1]):
                roles[barg] = ("column", index)
            elif tuple(mp.results) == identity and tuple(x.type.shape) == tuple(out_t.shape):
                roles[barg] = ("tile", index)   # (the result's elements in the same order)
            else:
                return None
        else:                     # a splat constant
            const = getattr(x, "op", None)
            if const is None or const.name != "arith.constant":
                return None
            values = attr_to_array(const.attr("value"), x.type)
            if values.size == 0 or (values != values.flat[0]).any():
                return None
            roles[barg] = ("constant", float(values.flat[0]))
    if block.ops[-1].name != "linalg.yield" or len(block.ops[-1].operands) != 1 or \
            block.ops[-1].operands[0].type != T.f32:
        return None
    expanded = expanded_body(block)
    if expanded is None:
        return None
    known = set(expanded.arguments)
    for op in expanded.ops[:-1]:
        if not vectorizable(op) or not all(x in known for x in op.operands):
            return None
        known.update(op.results)
    return Epilogue(roles, block, expanded)


def fuse_epilogues(module: Operation) -> None:
    """Merge each matmul or convolution dispatch with its elementwise consumer where the micro-kernel takes both."""
    from .ukernels import plan_kernel   # (here: ukernels imports this module's Epilogue)
    body, kernels, calls = dispatches_and_calls(module)
    for _, producer, call in single_calls(kernels, calls):
        plan = plan_kernel(producer)
        if plan is None or plan.epilogue is not None:
            continue
        v, views = through_views(call.results[0])
        consumer_call, consumer = sole_consumer(v, kernels, calls)
        if consumer is None:
            continue
        merged = merge(producer, call, views, consumer, consumer_call, v.uses[0].index)
        merged_plan = plan_kernel(merged)
        if merged_plan is None or merged_plan.epilogue is None:
            continue
        apply_merge(body, kernels, calls, producer, call, views, consumer, consumer_call, v.uses[0].index, merged)


def fuse_transposed_operands(module: Operation) -> None:
    """Merge each dispatch that only transposes a tensor into the matmul dispatch that takes the
    result as B, where the micro-kernel then reads B^T in place (it transposes while it packs B:
    ukernels.py), so the transposed copy is never written (attention's K^T)."""
    from .ukernels import plan_kernel
    body, kernels, calls = dispatches_and_calls(module)
    for _, producer, call in single_calls(kernels, calls):
        if body_op_names(producer) != ["linalg.transpose"]:
            continue
        v = call.results[0]
        consumer_call, consumer = sole_consumer(v, kernels, calls)
        if consumer is None:
            continue
        merged = merge(producer, call, [], consumer, consumer_call, v.uses[0].index)
        plan = plan_kernel(merged)
        if plan is None or not plan.b_transposed:
            continue
        apply_merge(body, kernels, calls, producer, call, [], consumer, consumer_call, v.uses[0].index, merged)
