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
  all-unit shape but the last axis, N), and splat constants; its body uses only the ops in
  `_BINARY` / `_INTRINSICS`, on f32.
"""
from __future__ import annotations

import struct
from typing import Optional

from ..dialects.func import function_type
from ..dialects.linalg import segments
from ..ir import types as T
from ..ir.arrays import attr_to_array
from ..ir.attributes import StringAttr, TypeAttr
from ..ir.core import Block, Operation, Region, Value
from ..transforms.conversions.linalg_to_loops import structured
from ..transforms.dispatch import is_dispatch_function

#: arith ops and the LLVM instruction of each (exact IEEE operations, as the reference computes).
_BINARY = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv"}
#: arith ops with LLVM intrinsics of the same semantics (NaN and signed zeros included).
_INTRINSICS = {"arith.maximumf": "llvm.maximum.v8f32", "arith.minimumf": "llvm.minimum.v8f32",
               "arith.maxnumf": "llvm.maxnum.v8f32", "arith.minnumf": "llvm.minnum.v8f32"}
_VIEWS = ("tensor.collapse_shape", "tensor.expand_shape", "tensor.cast")


def _splat(value: float, width: int = 8) -> str:
    """A <width x float> constant (LLVM writes floats as the hex of the equal double)."""
    bits, = struct.unpack("<Q", struct.pack("<d", float(value)))
    return "<" + ", ".join([f"float 0x{bits:016X}"] * width) + ">"


class Epilogue:
    """An elementwise generic applied to the accumulated tile, as vector IR on vectors of `width`
    floats (the micro-kernel's: 8, or 16 where the host has AVX-512)."""

    def __init__(self, roles: dict, body: Block, width: int = 8):
        self.roles = roles      # block argument -> "acc" | ("column", kernel input) | ("constant", value)
        self.body = body
        self.ops = [op for op in body.ops if op.name != "linalg.yield"]
        self.width = width

    @property
    def description(self) -> str:
        return "+".join(op.name.split(".")[1] for op in self.ops if op.name != "arith.constant")

    @property
    def intrinsics(self) -> set[str]:
        """Declarations of the LLVM intrinsics the epilogue calls."""
        vec = f"<{self.width} x float>"
        return {f"declare {vec} @{self._intrinsic(op)}({vec}, {vec})" for op in self.ops if op.name in _INTRINSICS}

    def _intrinsic(self, op: Operation) -> str:
        return _INTRINSICS[op.name].replace("v8f32", f"v{self.width}f32")

    def column_loads(self, n: str) -> list[str]:
        """Per workgroup: the 16 floats at column `n` of each row-vector input (16 / width vectors)."""
        lines, w = [], self.width
        for role in {r for r in self.roles.values() if isinstance(r, tuple) and r[0] == "column"}:
            arg = role[1]
            for j in range(16 // w):
                lines += [f"  %ecol{arg}.i{j} = add i64 {n}, {w * j}",
                          f"  %ecol{arg}.p{j} = getelementptr inbounds float, ptr %in{arg}, i64 %ecol{arg}.i{j}",
                          f"  %ecol{arg}.{j} = load <{w} x float>, ptr %ecol{arg}.p{j}, align 4"]
        return lines

    def apply(self, prefix: str, acc: str, j: int) -> tuple[list[str], str]:
        """Lines computing the epilogue of `acc` (vector j of the tile's 16 columns), and its result."""
        names: dict = {}
        w, vec = self.width, f"<{self.width} x float>"
        for arg, role in self.roles.items():
            names[arg] = acc if role == "acc" else f"%ecol{role[1]}.{j}" if role[0] == "column" else \
                _splat(role[1], w)
        lines = []
        for k, op in enumerate(self.ops):
            if op.name == "arith.constant":
                names[op.results[0]] = _splat(op.attributes["value"].value, w)
                continue
            a, b = (names[v] if v in names else _splat(v.op.attributes["value"].value, w) for v in op.operands)
            out = f"%{prefix}.{k}"
            if op.name in _BINARY:
                lines.append(f"  {out} = {_BINARY[op.name]} {vec} {a}, {b}")
            else:
                lines.append(f"  {out} = call {vec} @{self._intrinsic(op)}({vec} {a}, {vec} {b})")
            names[op.results[0]] = out
        return lines, names[self.body.ops[-1].operands[0]]


def epilogue_of(ops: list[Operation], result: Value, args: list, N: int) -> Optional[Epilogue]:
    """`ops` (views of `result`, then one generic) as an epilogue of a matmul with N columns whose
    kernel takes `args`; None when the micro-kernel cannot run them."""
    *views, generic = ops
    v = result
    for view in views:
        if view.name not in _VIEWS or view.operands[0] is not v or len(v.uses) != 1:
            return None
        v = view.results[0]
    if generic.name != "linalg.generic" or len(generic.results) != 1 or any(u.op is not generic for u in v.uses):
        return None
    if not all("parallel" in str(it) for it in generic.attributes["iterator_types"].items):
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
            if not mp.results or mp.results[-1] != ("dim", rank - 1) or x.type.shape[-1] != N or \
                    any(d != 1 for d in x.type.shape[:-1]):
                return None
            roles[barg] = ("column", index)
        else:                     # a splat constant
            const = getattr(x, "op", None)
            if const is None or const.name != "arith.constant":
                return None
            values = attr_to_array(const.attributes["value"], x.type)
            if values.size == 0 or (values != values.flat[0]).any():
                return None
            roles[barg] = ("constant", float(values.flat[0]))
    known = set(block.arguments)
    for op in block.ops[:-1]:
        if op.name == "arith.constant":
            if not _scalar_constant(op):
                return None
        elif op.name not in _BINARY and op.name not in _INTRINSICS or \
                any(t != T.f32 for t in (*op.operand_types, *op.result_types)) or \
                not all(x in known or _scalar_constant(getattr(x, "op", None)) for x in op.operands):
            return None
        known.update(op.results)
    if block.ops[-1].name != "linalg.yield" or len(block.ops[-1].operands) != 1:
        return None
    return Epilogue(roles, block)


def _scalar_constant(op: Optional[Operation]) -> bool:
    """An f32 `arith.constant` (in the body, or captured from the kernel's)."""
    return op is not None and op.name == "arith.constant" and op.results[0].type == T.f32 and \
        isinstance(getattr(op.attributes.get("value"), "value", None), float)


def fuse_epilogues(module: Operation) -> None:
    """Merge each matmul or convolution dispatch with its elementwise consumer where the micro-kernel takes both."""
    from .ukernels import plan_kernel   # (here: ukernels imports this module's Epilogue)
    body, kernels, calls = _dispatches_and_calls(module)
    for name, producer in list(kernels.items()):
        sites = calls.get(name, [])
        if len(sites) != 1 or len(sites[0].results) != 1:
            continue
        plan = plan_kernel(producer)
        if plan is None or plan.epilogue is not None:
            continue
        call = sites[0]
        v, views = call.results[0], []
        while len(v.uses) == 1 and v.uses[0].op.name in _VIEWS:
            views.append(v.uses[0].op)
            v = views[-1].results[0]
        consumer_call, consumer = _sole_consumer(v, kernels, calls)
        if consumer is None:
            continue
        merged = _merge(producer, call, views, consumer, consumer_call, v.uses[0].index)
        merged_plan = plan_kernel(merged)
        if merged_plan is None or merged_plan.epilogue is None:
            continue
        _replace(body, producer, call, views, consumer, consumer_call, v.uses[0].index, merged)
        kernels.pop(consumer.sym_name)


def fuse_transposed_operands(module: Operation) -> None:
    """Merge each dispatch that only transposes a tensor into the matmul dispatch that takes the
    result as B, where the micro-kernel then reads B^T in place (it transposes while it packs B:
    ukernels.py), so the transposed copy is never written (attention's K^T)."""
    from .ukernels import plan_kernel
    body, kernels, calls = _dispatches_and_calls(module)
    for name, producer in list(kernels.items()):
        sites = calls.get(name, [])
        ops = [op.name for op in producer.regions[0].blocks[0].ops if op.name not in ("tensor.empty", "func.return")]
        if ops != ["linalg.transpose"] or len(sites) != 1 or len(sites[0].results) != 1:
            continue
        call = sites[0]
        v = call.results[0]
        consumer_call, consumer = _sole_consumer(v, kernels, calls)
        if consumer is None:
            continue
        merged = _merge(producer, call, [], consumer, consumer_call, v.uses[0].index)
        plan = plan_kernel(merged)
        if plan is None or not plan.b_transposed:
            continue
        _replace(body, producer, call, [], consumer, consumer_call, v.uses[0].index, merged)
        kernels.pop(consumer.sym_name)


def _dispatches_and_calls(module: Operation):
    """(the module's body, {name: dispatch function}, {callee: [func.call]})."""
    body = module.regions[0].blocks[0]
    kernels = {op.sym_name: op for op in body.ops if is_dispatch_function(op)}
    calls: dict = {}
    for op in module.walk():
        if op.name == "func.call":
            calls.setdefault(_callee(op), []).append(op)
    return body, kernels, calls


def _sole_consumer(value, kernels: dict, calls: dict):
    """(call, dispatch) when `value`'s one use is the only call of a dispatch with one result,
    else (None, None)."""
    if len(value.uses) != 1 or value.uses[0].op.name != "func.call":
        return None, None
    call = value.uses[0].op
    consumer = kernels.get(_callee(call))
    if consumer is None or len(calls.get(consumer.sym_name, [])) != 1 or len(call.results) != 1:
        return None, None
    return call, consumer


def _callee(call: Operation) -> str:
    return str(call.attributes.get("callee", "")).lstrip("@")


def _merge(producer, call, views, consumer, consumer_call, position) -> Operation:
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


def _replace(body, producer, call, views, consumer, consumer_call, position, merged) -> None:
    """Put `merged` in place of the two kernels, and one call to it in place of their calls."""
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
