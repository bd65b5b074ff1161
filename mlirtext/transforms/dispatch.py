"""form-dispatch-regions: every unit of work of a tensor-level function becomes a dispatch.

As IREE forms `flow.dispatch` regions, each structured linalg op (a fused
generic, a named op such as matmul or conv) is outlined into its own function
`@<fn>_dispatch_<i>` (tensors in, tensors out, its `tensor.empty` inits and
small constants inside), and the host function keeps only calls to those
functions, reshapes (views of a buffer), constants and the return. What the
VM runs is then visible as plain MLIR that `iree-opt` accepts.

A `linalg.fill` (or an elementwise generic, such as a broadcast bias) whose
only use is the init of one structured op goes into that op's dispatch (the
matmul and its zero fill, the convolution and its bias, are one kernel each,
as in IREE). Any
other op that does work (tensor slicing, scf loops on tensors, scalar
arithmetic, ...) becomes a dispatch of its own, so the host never computes.
A function with several blocks is outlined whole.

Row chains: a row-wise reduction and the elementwise/reduction ops that follow it over the
same rows (softmax's max-reduce, exp(x - max), sum-reduce, divide) become one dispatch, as
IREE fuses them: every op's outer loop is the same parallel axis 0 of its output, and each op
reads what an earlier member wrote only at its own row (directly, or through a view that keeps
axis 0). Split into row ranges (targets/workgroups.py), one thread runs all the passes over its rows
while they are in cache, instead of one dispatch a pass over the whole tensor. The rows may also be
the first axis after leading axes of one element (1x128x256: a batch of one sequence, as ONNX models
give a layer norm; 1xHxWxC, flax's over an image), split and interleaved the same way. Contractions
and convolutions never join a chain (they have micro-kernels and epilogues of their own). A chain
starts at a reduction, or at an elementwise op that a reduction after it continues (flax's x * x
before its mean of squares) unless that op is the only reader of another op's result: then it is
that op's epilogue (a matmul's bias and relu) and stays with it. A reduction over the same rows that
reads nothing of the chain joins it too (the mean beside the mean of squares: one kernel, as IREE
makes one dispatch of a layer norm's statistics).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..dialects.tensor import VIEWS, view_source
from ..ir import types as T
from ..ir.attributes import StringAttr, SymbolRefAttr, TypeAttr
from ..ir.core import Block, Operation, Region, Value
from .passes import Pass

#: Ops the host program runs itself: views of a buffer, and the function's end.
HOST_VIEWS = VIEWS
HOST_OPS = HOST_VIEWS | {"func.return", "func.call", "arith.constant"}

#: Tensor constants up to this many elements are cloned into the dispatches that use them
#: (a splat zero or a 3-element table costs nothing there); bigger ones are host constants.
SMALL_CONSTANT = 64


def is_structured(op: Operation) -> bool:
    return op.dialect == "linalg" and op.name not in ("linalg.yield", "linalg.index")


def is_dispatch_function(op: Operation) -> bool:
    return op.name == "func.func" and "_dispatch_" in (op.sym_name or "") and _private(op)


def _private(op: Operation) -> bool:
    vis = op.attr("sym_visibility")
    return isinstance(vis, StringAttr) and vis.value == "private"


def _cloneable(op: Operation | None) -> bool:
    """Defining ops copied into each dispatch that reads them rather than passed in."""
    if op is None or op.operands or op.regions:
        return False
    if op.name == "tensor.empty":
        return True
    if op.name == "arith.constant":
        t = op.results[0].type
        return not isinstance(t, T.ShapedType) or (t.has_static_shape and t.num_elements <= SMALL_CONSTANT)
    return False


def _recomputable(op: Operation | None) -> bool:
    """An all-parallel generic that reads only constants (a broadcast zero, an iota): cheaper to
    recompute in each dispatch that reads it (where it fuses into the consumer) than to store."""
    if op is None or op.name != "linalg.generic" or len(op.results) != 1:
        return False
    if not all("parallel" in str(it) for it in op.attr("iterator_types").items):
        return False
    if not all(_cloneable(getattr(v, "op", None)) for v in _live_ins([op])):  # (its body's captures too)
        return False
    users = [u.op for u in op.results[0].uses]
    return bool(users) and all(is_structured(u) for u in users)


def _stays_in_host(op: Operation) -> bool:
    if op.name == "arith.constant":
        return not _cloneable(op)
    if op.name == "func.call":  # a call to a dispatch (already formed) stays; other calls are work
        return "_dispatch_" in str(op.attr("callee"))
    return op.name in HOST_OPS


@dataclass
class Group:
    ops: list   # in block order; the last one is the root (where the call goes)


def _groups(block: Block) -> list[Group]:
    """The dispatches of one block: structured ops (with a single-use fill init), and each
    other op that does work."""
    fused: set = set()
    groups = []
    for op in block.ops:
        if id(op) in fused or _stays_in_host(op) or op.name == "tensor.empty" or _cloneable(op) \
                or _recomputable(op):
            continue
        members = [op]
        if is_structured(op):
            for init in _inits(op):
                producer = getattr(init, "op", None)
                if producer is not None and _init_producer(producer) and producer.parent is block \
                        and len(init.uses) == 1 and id(producer) not in fused:
                    fused.add(id(producer))
                    members.insert(0, producer)
        groups.append(Group(members))
    # A fill grouped with its consumer must not also stand alone (it came first in the block).
    groups = [g for g in groups if not (len(g.ops) == 1 and id(g.ops[0]) in fused)]
    return _merge_row_chains(block, groups)


#: Structured ops that may join a row chain: loops the generic lowering runs, no micro-kernel.
ROW_CHAIN_OPS = frozenset({"linalg.generic", "linalg.reduce", "linalg.fill", "linalg.map", "linalg.broadcast"})


def _row_extent(op: Operation) -> tuple | None:
    """(p, N) when loops 0..p of structured `op` are parallel and walk axes 0..p of its one output,
    axis p the first with more than one element (N >= 2; the axes before it have one: a batch of
    one, as importers give a single sequence), else None."""
    from .conversions.linalg_to_loops import structured
    if op.name not in ROW_CHAIN_OPS:
        return None
    try:
        s = structured(op)
        outs = _inits(op)
    except Exception:  # noqa: BLE001 - an op the loop lowering cannot describe joins no chain
        return None
    if len(outs) != 1 or not isinstance(outs[0].type, T.ShapedType) or outs[0].type.rank == 0 \
            or not outs[0].type.has_static_shape:
        return None
    shape = outs[0].type.shape
    p = next((i for i, d in enumerate(shape) if d != 1), None)
    if p is None or shape[p] < 2:
        return None
    if any(i >= len(s.maps[-1].results) or s.maps[-1].results[i] != ("dim", i) or i in s.reductions
           for i in range(p + 1)):
        return None
    if _contracts(op, s.reductions):
        return None
    return p, shape[p]


def _contracts(op: Operation, reductions) -> bool:
    """A contraction or convolution (two or more inputs indexed by a reduction loop): it has a
    micro-kernel and epilogues of its own and joins no row chain (a convolution over a batch of
    one has its rows after a unit axis, as a layer norm's do)."""
    from ..dialects.linalg import segments
    if op.name != "linalg.generic" or not reductions:
        return False
    ins = segments(op)[0]
    maps = list(op.attr("indexing_maps").items)[:len(ins)]
    reduced = [re.compile(rf"\bd{r}\b") for r in reductions]
    return sum(any(r.search(str(m).split("->", 1)[-1]) for r in reduced) for m in maps) >= 2


def _reads_rows_only(op: Operation, values: set, p: int) -> bool:
    """Every operand of `op` in `values` is read at row d<p> only (its map's result p is d<p>)."""
    from ..dialects.linalg import segments
    from .conversions.linalg_to_loops import structured
    s = structured(op)
    ins, outs = segments(op)
    return all(len(m.results) > p and m.results[p] == ("dim", p) for v, m in zip((*ins, *outs), s.maps)
               if id(v) in values)


def _merge_row_chains(block: Block, groups: list[Group]) -> list[Group]:
    merged: list[Group] = []
    for g in groups:
        prev = merged[-1] if merged else None
        joined = _join_rows(block, prev, g) if prev is not None else None
        if joined is not None:
            merged[-1] = joined
        else:
            merged.append(g)
    return merged


def _reduces(ops: list) -> bool:
    return any(op.name == "linalg.reduce" or (op.name == "linalg.generic" and "reduction" in
                                              str(op.attr("iterator_types"))) for op in ops)


def _join_rows(block: Block, chain: Group, g: Group) -> Group | None:
    """`chain` + the views between + `g` as one group when `g` continues `chain`'s rows, else None.
    A chain starts at a reduction, or at an elementwise op that a reduction after it reads (a layer
    norm's square before its mean of squares) unless that op is the one consumer of another op's
    result (a matmul's or convolution's epilogue: it stays with that dispatch); a reduction over the
    same rows that reads nothing of the chain (the mean beside the mean of squares) joins it too."""
    extents = {_row_extent(op) for op in (*chain.ops, *g.ops) if op.name not in HOST_VIEWS}
    if len(extents) != 1 or None in extents:
        return None
    if not _reduces(chain.ops) and not (_reduces(g.ops) and not _an_epilogue(chain)):
        return None
    p, rows = extents.pop()
    ops = list(block.ops)
    start, end = ops.index(chain.ops[-1]), ops.index(g.ops[0])
    inside = {id(r) for op in chain.ops for r in op.results}
    views = []
    for op in ops[start + 1:end]:          # reshapes of the chain's results (row-major: a reshape
        if op.name in HOST_VIEWS and id(view_source(op)) in inside:   # to N leading rows keeps them)
            views.append(op)
            inside.add(id(op.results[0]))
    read = [v for op in g.ops for v in op.operands if id(v) in inside]
    if not read and not _reduces(g.ops):
        return None                         # independent of the chain: a dispatch of its own
    if any(not (isinstance(v.type, T.ShapedType) and v.type.rank > p and v.type.shape[p] == rows
                and all(d == 1 for d in v.type.shape[:p])) for v in read) \
            or not all(_reads_rows_only(op, inside, p) for op in g.ops):
        return None
    return Group([*chain.ops, *views, *g.ops])


def _an_epilogue(group: Group) -> bool:
    """Whether `group` reads a structured op's result that nothing else reads (what
    compiler/epilogues.py merges into that op's dispatch)."""
    members = {id(op) for op in group.ops}
    for op in group.ops:
        for v in op.operands:
            if id(getattr(v, "op", None)) in members or not all(id(u.op) in members for u in v.uses):
                continue
            while getattr(v, "op", None) is not None and v.op.name in HOST_VIEWS:
                v = view_source(v.op)   # (through the reshapes between them, as the merge goes)
                if len(v.uses) != 1:
                    break
            else:
                if getattr(v, "op", None) is not None and is_structured(v.op):
                    return True
    return False


def _init_producer(op: Operation) -> bool:
    """What computes an init in place of zeros (a fill, a broadcast bias): one pass over the output
    inside the consumer's dispatch instead of a buffer of its own."""
    if op.name in ("linalg.fill", "linalg.broadcast"):
        return True
    return op.name == "linalg.generic" and len(op.results) == 1 and \
        all("parallel" in str(it) for it in op.attr("iterator_types").items)


def _inits(op: Operation) -> list[Value]:
    from ..dialects.linalg import segments
    try:
        return list(segments(op)[1])
    except Exception:  # noqa: BLE001 - an op without ins/outs segments has no inits to fuse
        return []


def _defined_inside(group_ops: list[Operation]) -> set:
    inside = set()
    for top in group_ops:
        for op in top.walk():
            inside.update(id(r) for r in op.results)
            for region in op.regions:
                for block in region.blocks:
                    inside.update(id(a) for a in block.arguments)
    return inside


def _live_ins(group_ops: list[Operation]) -> list[Value]:
    inside = _defined_inside(group_ops)
    seen, ins = set(), []
    for top in group_ops:
        for op in top.walk():
            for v in op.operands:
                if id(v) not in inside and id(v) not in seen:
                    seen.add(id(v))
                    ins.append(v)
    return ins


def _live_outs(group_ops: list[Operation]) -> list[Value]:
    members = {id(op) for top in group_ops for op in top.walk()}
    return [r for op in group_ops for r in op.results if any(id(u.op) not in members for u in r.uses)]


def outline(group: Group, name: str, module_body: Block) -> Operation:
    """Move `group` into a new private function `name`; a call to it takes its place."""
    ins = _live_ins(group.ops)
    outs = _live_outs(group.ops)
    recomputed = [v for v in ins if _recomputable(getattr(v, "op", None))]
    ins = [v for v in ins if v not in recomputed]
    for v in recomputed:
        ins += [x for x in _live_ins([v.op]) if x not in ins]
    passed = [v for v in ins if not _cloneable(getattr(v, "op", None))]
    cloned = [v for v in ins if _cloneable(getattr(v, "op", None))]
    entry = Block([v.type for v in passed])
    mapping: dict = {}
    for v, arg in zip(passed, entry.arguments):
        mapping[v] = arg
        arg.name = v.name
    for v in cloned:
        entry.append(v.op.clone(mapping))
    for v in recomputed:
        entry.append(v.op.clone(mapping))
    for op in group.ops:
        entry.append(op.clone(mapping))
    root = group.ops[-1]
    entry.append(Operation("func.return", [mapping[v] for v in outs], (), span=root.span,
                           location=root.location))
    ftype = T.FunctionType(tuple(v.type for v in passed), tuple(v.type for v in outs))
    fn = Operation("func.func", (), (), {"sym_name": StringAttr(name), "function_type": TypeAttr(ftype),
                                         "sym_visibility": StringAttr("private")},
                   [Region([entry])], span=root.span, location=root.location)
    fn.name_span = root.name_span
    module_body.append(fn)
    call = Operation("func.call", passed, [v.type for v in outs], {"callee": SymbolRefAttr(name)},
                     span=root.span, location=root.location)
    call.name_span = root.name_span
    root.parent.insert_before(root, call)
    for old, new in zip(outs, call.results):
        new.name = old.name
        old.replace_all_uses_with(new)
    for op in reversed(group.ops):
        op.erase()
    return fn


def _recomputable_leftover(op: Operation) -> bool:
    return op.name == "linalg.generic" and all(_cloneable(getattr(v, "op", None)) for v in _live_ins([op]))


def _outline_whole(fn: Operation, name: str, module_body: Block) -> None:
    """A function with control flow between blocks: the whole body is one dispatch."""
    from ..dialects.func import function_type
    ftype = function_type(fn)
    kernel = fn.clone({})
    kernel.attributes = {"sym_name": StringAttr(name), "function_type": TypeAttr(ftype),
                         "sym_visibility": StringAttr("private")}
    module_body.append(kernel)
    for block in list(fn.regions[0].blocks[1:]):
        fn.regions[0].blocks.remove(block)
    entry = fn.regions[0].blocks[0]
    for op in list(entry.ops):
        op.detach()
        op._drop_all_uses()
    call = Operation("func.call", list(entry.arguments), list(ftype.results), {"callee": SymbolRefAttr(name)},
                     span=fn.span)
    entry.append(call)
    entry.append(Operation("func.return", list(call.results), (), span=fn.span))


def form_dispatches(module: Operation) -> list[Operation]:
    """Outline the dispatches of every public function of `module`; the new functions."""
    body = module.regions[0].blocks[0]
    symbols = {op.sym_name for op in body.ops if op.sym_name}
    formed = []
    for fn in [op for op in body.ops if op.name == "func.func" and op.regions and op.regions[0].blocks
               and not _private(op)]:
        counter = 0

        def fresh() -> str:
            nonlocal counter
            while f"{fn.sym_name}_dispatch_{counter}" in symbols:
                counter += 1
            name = f"{fn.sym_name}_dispatch_{counter}"
            symbols.add(name)
            return name

        if len(fn.regions[0].blocks) > 1:
            _outline_whole(fn, fresh(), body)
            formed.append(body.ops[-1])
            continue
        block = fn.regions[0].blocks[0]
        for group in _groups(block):
            formed.append(outline(group, fresh(), body))
        for op in reversed(list(block.ops)):  # what only the dispatches read now
            if (op.name in ("tensor.empty", "arith.constant") or _recomputable_leftover(op)) and \
                    not any(r.uses for r in op.results):
                op.erase()
    return formed


@dataclass(frozen=True)
class FormDispatchRegions(Pass):
    name = "form-dispatch-regions"
    summary = "Outline each structured linalg op (and any other op that computes) into a dispatch function " \
              "@<fn>_dispatch_<i>; the host function keeps calls, reshapes, constants and the return"
    anchor = "builtin.module"

    def run(self, module: Operation) -> None:
        form_dispatches(module)
