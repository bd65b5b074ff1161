"""Workgroups: one dispatch shared by several threads, as IREE distributes a dispatch.

A kernel whose structured ops all write the same output rows in the same order (a matmul and
its zero fill, a convolution and its bias, an elementwise op, a row reduction) can run any
range of output rows by itself: its loop over the first non-unit output axis gets bounds
`[begin, end)` from two extra index arguments (after the inputs, before the outputs). The VM
calls it once with the whole range on `local-sync`; on `local-task` the threads take ranges of
it from a shared counter (compiler/work_queue.py).

`plan` decides at the linalg level which kernels qualify (the reasons it can be done are all
read off the indexing maps: the split dimension is parallel, is the output's axis `p` with unit
axes before it, and an op reads what another op of the kernel writes only through its init or,
split on axis 0, at its own rows: a row chain, transforms/dispatch.py);
`distribute` rewrites the loops after the linalg -> loops step and checks that the loops are the
ones it expects, leaving a kernel alone when they are not. The ops' loops over rows become one
loop (each row's passes run back to back, in cache; split on an axis after unit ones, their loops
over those unit axes become the first op's), and an intermediate buffer used only at the current
row shrinks to one row.
"""
from __future__ import annotations

from ..dialects.func import function_type
from ..dialects.linalg import segments
from ..dialects.memref import view_source
from ..ir import types as T
from ..ir.attributes import IntegerAttr, TypeAttr
from ..ir.core import Operation
from ..transforms.conversions.linalg_to_loops import structured
from ..transforms.dispatch import HOST_VIEWS, is_structured

ATTR = "mlirtext.workgroups"
#: Views of an intermediate buffer inside a row chain's kernel (after bufferization).
_MEMREF_VIEWS = ("memref.expand_shape", "memref.collapse_shape", "memref.cast")


def _split_axis(op: Operation):
    """(axis p, extent N) of the loop that can be split for structured op `op`, or None."""
    try:
        s = structured(op)
        ins, outs = segments(op)
    except Exception:  # noqa: BLE001
        return None
    if len(outs) != 1 or not isinstance(outs[0].type, T.ShapedType) or outs[0].type.rank == 0:
        return None
    shape = outs[0].type.shape
    out_map = s.maps[-1]
    p = next((i for i, d in enumerate(shape) if d != 1), None)
    if p is None or shape[p] < 2:
        return None
    for i in range(p + 1):   # loops 0..p are the output's axes 0..p, in order, all parallel
        if i >= len(out_map.results) or out_map.results[i] != ("dim", i) or i in s.reductions:
            return None
    return p, shape[p]


def plan(fn: Operation):
    """(p, N) when kernel `fn` (linalg on tensors) can be split into row ranges, else None."""
    body = fn.regions[0].blocks[0]
    structured_ops = [op for op in body.ops if is_structured(op)]
    if not structured_ops:
        return None
    for op in body.ops:
        if not (is_structured(op) or op.name in ("tensor.empty", "arith.constant", "func.return", *HOST_VIEWS)):
            return None
    produced = {id(r) for op in body.ops if is_structured(op) or op.name in HOST_VIEWS for r in op.results}
    found = set()
    for op in structured_ops:
        axis = _split_axis(op)
        if axis is None:
            return None
        found.add(axis)
        if any(id(v) in produced for v in segments(op)[0]) and not _row_local(op, produced, axis):
            return None                               # reads another op's result beyond its own rows
    ret = body.ops[-1]
    if len(found) != 1 or len(ret.operands) != 1 or id(ret.operands[0]) not in produced:
        return None
    return found.pop()


def _row_local(op: Operation, produced: set, axis) -> bool:
    """`op` reads each value in `produced` only at the rows it writes: the operand's axes before
    the split axis p have one element, its axis p the N rows, and its index on axis p is loop p (a
    row chain, transforms/dispatch.py; views between the ops keep the rows: row-major, row i of
    any shape 1x..x1xNx... is the same i-th N-th of the buffer)."""
    p, rows = axis
    ins, outs = segments(op)
    maps = structured(op).maps
    return all(len(m.results) > p and m.results[p] == ("dim", p) and v.type.rank > p and v.type.shape[p] == rows
               and all(d == 1 for d in v.type.shape[:p]) for v, m in zip(ins, maps) if id(v) in produced)


def distribute(fn: Operation, p: int, extent: int) -> bool:
    """After linalg -> loops: give the loop at depth `p` of every top-level loop nest of `fn` the
    bounds of two new index arguments. False (and `fn` untouched) when the loops are not as expected."""
    body = fn.regions[0].blocks[0]
    nests = [op for op in body.ops if op.name == "scf.for"]
    targets = []
    for nest in nests:
        loop = nest
        for _ in range(p):
            if not bounds_are(loop, 1):
                return False
            inner = [o for o in loop.regions[0].blocks[0].ops if o.name == "scf.for"]
            if len(inner) != 1:
                return False
            loop = inner[0]
        if not bounds_are(loop, extent):
            return False
        targets.append(loop)
    if not targets or any(op.name not in ("scf.for", "arith.constant", "func.return", "memref.alloc",
                                          "memref.get_global", *_MEMREF_VIEWS) for op in body.ops):
        return False
    begin, end = _clamped_range(body, body.add_argument(T.index, name="wg_begin"),
                                body.add_argument(T.index, name="wg_end"), extent)
    for loop in targets:
        loop.set_operand(0, begin)
        loop.set_operand(1, end)
    _fuse_row_loops(body, nests, targets)
    ftype = function_type(fn)
    fn.attributes["function_type"] = TypeAttr(T.FunctionType(tuple(ftype.inputs) + (T.index, T.index), ftype.results))
    fn.attributes[ATTR] = IntegerAttr(extent, T.i64)
    return True


def _clamped_range(body, begin, end, extent: int) -> tuple:
    """[max(begin, 0), min(end, extent)): whatever range the caller passes, the kernel touches only
    the rows it was compiled for (a module file that asks for more is refused at load,
    vm/module_checks.py; this holds even for one that got past that)."""
    first = body.ops[0]
    zero = Operation("arith.constant", [], [T.index], {"value": IntegerAttr(0, T.index)})
    top = Operation("arith.constant", [], [T.index], {"value": IntegerAttr(extent, T.index)})
    low = Operation("arith.maxsi", [begin, zero.results[0]], [T.index])
    high = Operation("arith.minsi", [end, top.results[0]], [T.index])
    for op in (zero, top, low, high):
        body.insert_before(first, op)
    return low.results[0], high.results[0]


def _fuse_row_loops(body, nests: list, loops: list) -> None:
    """One loop over rows instead of one per op: every op's row i reads only row i of what the
    earlier ops wrote (plan checked it), so running all the ops' bodies for row i, in order,
    before row i + 1 computes the same values, with the row in cache between the passes (a
    softmax row: max, exp, sum, divide; a layer norm's over a batch of one, where each nest's
    loops over the unit axes before the rows, `nests[k]` down to `loops[k]`, become the first
    nest's). The buffers and views that sit between the loops move ahead of the first one."""
    if len(loops) < 2 or not all(_only_loop_inside(nest, loop) for nest, loop in zip(nests, loops)):
        return
    first = nests[0]
    for op in list(body.ops):
        if op.name not in ("scf.for", "func.return") and body.ops.index(op) > body.ops.index(first):
            op.move_before(first)
    inner = loops[0].regions[0].blocks[0]
    yield_op = inner.ops[-1]
    for nest, loop in zip(nests[1:], loops[1:]):
        for mine, theirs in zip(_loop_chain(nest, loop), _loop_chain(first, loops[0])):
            mine.regions[0].blocks[0].arguments[0].replace_all_uses_with(theirs.regions[0].blocks[0].arguments[0])
        block = loop.regions[0].blocks[0]
        for op in list(block.ops)[:-1]:      # (not its scf.yield)
            op.move_before(yield_op)
        nest.erase()
    _one_row_buffers(body, first, loops[0], len(_loop_chain(first, loops[0])) - 1)


def fuse_inner_rows(fn: Operation, p: int) -> bool:
    """After `distribute` fused the ops' loops over rows on axis p into one: fuse their loops on
    axis p + 1 inside it the same way, where every op touches what the kernel writes only at its
    own index on that axis (the llvm-cpu kernels). A softmax over 1x12x197x197 is split on its
    12 heads; each head's passes (max, exp, sum, divide) then ran over the whole 197x197 head, a
    155 KB buffer of exp(x - max) between them, out of L2; fused on the rows too, each row's passes
    run back to back on 197 floats in L1, and the buffer shrinks to one row. True when fused."""
    body = fn.regions[0].blocks[0]
    nests = [op for op in body.ops if op.name == "scf.for"]
    if len(nests) != 1:
        return False
    loop = nests[0]
    for _ in range(p):
        inner = [o for o in loop.regions[0].blocks[0].ops if o.name == "scf.for"]
        if len(inner) != 1:
            return False
        loop = inner[0]
    ops = list(loop.regions[0].blocks[0].ops)[:-1]   # (not its scf.yield)
    if len(ops) < 2 or any(op.name != "scf.for" for op in ops):
        return False
    extent = _constant_extent(ops[0])
    if extent is None or extent < 2 or any(_constant_extent(op) != extent for op in ops):
        return False
    if not _rows_local(ops, p + 1, {id(a) for a in body.arguments}):
        return False
    first, yield_op = ops[0], ops[0].regions[0].blocks[0].ops[-1]
    row = first.regions[0].blocks[0].arguments[0]
    for other in ops[1:]:
        block = other.regions[0].blocks[0]
        block.arguments[0].replace_all_uses_with(row)
        for op in list(block.ops)[:-1]:
            op.move_before(yield_op)
        other.erase()
    _one_row_buffers(body, nests[0], first, p + 1)
    return True


def _constant_extent(loop: Operation):
    """N for a loop over [0, N) by 1 with constant bounds (`bounds_are`), else None."""
    owner = getattr(loop.operand("upperBound"), "op", None) if loop.name == "scf.for" else None
    n = getattr(owner.attr("value"), "value", None) if owner is not None and owner.name == "arith.constant" else None
    return n if isinstance(n, int) and bounds_are(loop, n) else None


def _rows_local(loops: list, q: int, arguments: set) -> bool:
    """Every access in `loops` to memory the kernel writes (its buffers, through views, and any
    argument stored to) is a load or store at the loop's own index on axis q, through a view
    whose axes up to q are the buffer's (the same rows), with the same indices before q as every
    other access to that buffer: row i of one loop reads only row i of what the loops before it
    wrote, so running them row by row computes the same values. Inputs only read are free."""
    accesses = []   # (root buffer, at the loop's row, index values before q, a store)
    for loop in loops:
        row = loop.regions[0].blocks[0].arguments[0]
        for op in loop.walk():
            for index, v in enumerate(op.operands):
                if not isinstance(v.type, T.MemRefType):
                    continue
                store = {("memref.load", 0): False, ("memref.store", 1): True}.get((op.name, index))
                if store is None:
                    return False
                root, indices = _root(v), op.operands[index + 1:]
                at_row = len(indices) > q and indices[q] is row and \
                    tuple(v.type.shape[:q + 1]) == tuple(root.type.shape[:q + 1])
                accesses.append((root, at_row, tuple(id(i) for i in indices[:q]), store))
    written = {id(root) for root, _, _, store in accesses if store}
    prefixes: dict = {}
    for root, at_row, prefix, _ in accesses:
        if id(root) in arguments and id(root) not in written:
            continue
        if not at_row or prefixes.setdefault(id(root), prefix) != prefix:
            return False
    return True


def _root(v):
    """The buffer `v` views (through memref reshapes and casts), or `v`."""
    while getattr(v, "op", None) is not None and v.op.name in _MEMREF_VIEWS:
        v = view_source(v.op)
    return v


def _loop_chain(nest: Operation, loop: Operation) -> list:
    """The loops from `nest` down to `loop`, each the only loop of the one before."""
    chain = [loop]
    while chain[-1] is not nest:
        chain.append(chain[-1].parent.parent.parent)   # block -> region -> op
    return chain[::-1]


def _only_loop_inside(nest: Operation, loop: Operation) -> bool:
    """Every loop above `loop` in `nest` holds nothing but the next loop (and its yield): moving
    `loop`'s body into another nest's leaves nothing of this nest behind."""
    return all([op.name for op in outer.regions[0].blocks[0].ops] == ["scf.for", "scf.yield"]
               for outer in _loop_chain(nest, loop)[:-1])


def _one_row_buffers(body, nest: Operation, loop: Operation, p: int) -> None:
    """An intermediate buffer that the fused loop reads and writes only at row i (the loop's
    index, on the buffer's axis `p`) needs one row, not N: a row of softmax's exp(x - max) is summed
    and divided in the iteration that wrote it. One row stays in cache and is a small allocation (a
    whole buffer would be a fresh mmap, and its pages faulted in, at every call)."""
    row = loop.regions[0].blocks[0].arguments[0]
    zero = None
    for alloc in [op for op in body.ops if op.name == "memref.alloc" and not op.operands]:
        t = alloc.results[0].type
        if not (isinstance(t, T.MemRefType) and t.rank > p and t.has_static_shape and t.shape[p] > 1
                and t.layout is None):
            continue
        accesses = [(u.op, u.index) for u in alloc.results[0].uses]
        if not accesses or not all(_row_access(op, index, row, loop, p) for op, index in accesses):
            continue
        if zero is None:
            zero = Operation("arith.constant", [], [T.index], {"value": IntegerAttr(0, T.index)})
            body.insert_before(nest, zero)
        alloc.results[0].type = T.MemRefType((*t.shape[:p], 1, *t.shape[p + 1:]), t.element, None, t.memory_space)
        for op, index in accesses:
            op.set_operand(index + 1 + p, zero.results[0])     # the row index, after the buffer and axes before it


def _row_access(op: Operation, index: int, row, loop: Operation, p: int) -> bool:
    """`op` is a load or store of the buffer (operand `index`) at row `row` on axis `p`, inside `loop`."""
    expected = {"memref.load": 0, "memref.store": 1}.get(op.name)
    if expected != index or len(op.operands) <= index + 1 + p or op.operands[index + 1 + p] is not row:
        return False
    block, inside = op.parent, loop.regions[0].blocks[0]
    while block is not None and block is not inside:        # block -> region -> op -> block
        owner = block.parent.parent if block.parent is not None else None
        block = owner.parent if owner is not None else None
    return block is not None


def bounds_are(loop: Operation, extent: int) -> bool:
    def const(v):
        owner = getattr(v, "op", None)
        if owner is None or owner.name != "arith.constant":
            return None
        return getattr(owner.attr("value"), "value", None)
    lower, upper, step = loop.operands[:3]
    return const(lower) == 0 and const(upper) == extent and const(step) == 1 and len(loop.operands) == 3
