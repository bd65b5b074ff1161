"""Bufferization: tensors to memrefs, function by function.

Every tensor value gets a buffer. A linalg op or a `tensor.insert` writes its
result into the buffer of its init when that is safe, as MLIR's one-shot
bufferization does: the buffer was allocated here (not a function argument, a
constant or a view of another buffer), the op is not inside a loop the buffer
was allocated outside of, and no tensor value held in that buffer is read at or
after the op; otherwise into a fresh `memref.alloc`, after copying the init in.
Loop-carried tensors (scf.for, scf.while) take over the buffer of their init
under the same rule (else they copy it once, before the loop), and an scf.if
result takes over the buffer both branches yield, so a loop of updates writes
one buffer in place. `tensor.empty` allocates nothing until an op needs its
buffer (its contents are undefined, so nothing is copied). Constants become
private `memref.global`s. Function arguments and results become memrefs of the
same shape; a result that would alias an argument, a constant or a view (or
another result) is copied out, so callers always own what they get back.
"""
from __future__ import annotations

from ...dialects import bufferization
from ...dialects.linalg import segments
from ...ir import types as T
from ...ir.attributes import DenseArrayAttr, OpaqueAttr, StringAttr, SymbolRefAttr, TypeAttr, UnitAttr
from ...ir.core import BlockArgument, Operation, Value
from ..passes import PassFailure

#: The function's signature at the tensor level, kept on every lowered form of it.
ABI_ATTR = "mlirtext.abi"


def is_structured(op: Operation) -> bool:
    """A linalg op in destination-passing style (ins, then outs/inits)."""
    return op.dialect == "linalg" and op.name not in ("linalg.yield", "linalg.index")


def memref_of(t: T.Type) -> T.Type:
    if isinstance(t, T.RankedTensorType):
        return T.MemRefType(t.shape, t.element)
    return t


#: A tensor read inside a linalg body (a gather's) -> (its tensor operand's name, the memref op that
#: reads the buffer instead)
_CAPTURED_READS = {"tensor.extract": ("tensor", "memref.load"), "tensor.dim": ("source", "memref.dim")}


class _Empty:
    """The buffer of a `tensor.empty`: allocated by whoever first needs it."""

    def __init__(self, op: Operation):
        self.op = op


class Bufferizer:
    def __init__(self, module: Operation):
        self.module = module
        self.buffers: dict[Value, object] = {}   # tensor value -> memref Value or _Empty
        self.owned: set = set()                   # buffers allocated here (safe to write into)
        self.fence: set = set()                   # owned buffers defined outside the loop being bufferized
        self.roots: dict[Value, Value] = {}       # view -> the buffer it views
        self.holders: dict[Value, list] = {}      # buffer -> the tensor values held in it (or in views of it)
        self.globals: dict = {}
        self.symbols = {op.sym_name for op in module.walk() if op.sym_name}

    # -- functions -----------------------------------------------------------------------------
    def function(self, fn: Operation) -> None:
        from ...dialects.func import function_type
        ftype = function_type(fn)
        if not fn.regions or not fn.regions[0].blocks:
            return
        entry = fn.regions[0].blocks[0]
        # Reflection: how callers pass and get back tensors, whatever the level below does.
        fn.attributes.setdefault(ABI_ATTR, TypeAttr(ftype))
        for arg in entry.arguments:
            arg.type = memref_of(arg.type)
        fn.attributes["function_type"] = TypeAttr(T.FunctionType(
            tuple(memref_of(t) for t in ftype.inputs), tuple(memref_of(t) for t in ftype.results)))
        for block in fn.regions[0].blocks:
            for op in list(block.ops):
                self.op(op)

    def op(self, op: Operation) -> None:
        if not _touches_tensors(op):
            return
        handler = _HANDLERS.get(op.name) or (Bufferizer._linalg if is_structured(op) else None)
        if handler is None:
            raise PassFailure(f"failed to legalize '{op.name}' to loops: no bufferization for it",
                              op.name_span or op.span)
        handler(self, op)

    # -- buffers ---------------------------------------------------------------------------------
    def buffer(self, value: Value, before: Operation) -> Value:
        """The memref holding tensor `value` (allocating an empty's buffer on first use)."""
        if not isinstance(value.type, T.RankedTensorType):
            return value  # not a tensor, or a function argument already given its memref type
        found = self.buffers.get(value)
        if found is None:
            raise PassFailure("failed to legalize to loops: a tensor defined where bufferization does not "
                              "reach (inside a region)", before.name_span or before.span)
        if isinstance(found, _Empty):
            return self.alloc(before, memref_of(value.type))
        return found

    def alloc(self, before: Operation, t: T.MemRefType) -> Value:
        buf = _create(before, "memref.alloc", (), [t], {"operandSegmentSizes": DenseArrayAttr(T.i32, (0, 0))})
        self.owned.add(buf)
        return buf

    def writable(self, init: Value, before: Operation, index: int) -> Value:
        """A buffer `before` may write its result into, starting with `init`'s contents
        (`init` is its operand number `index`)."""
        found = self.buffers.get(init)
        if isinstance(found, _Empty):
            return self.alloc(before, memref_of(init.type))
        source = self.buffer(init, before)
        if source in self.owned and source not in self.fence and self.take_over(source, before, index):
            return source
        fresh = self.alloc(before, memref_of(init.type))
        _create(before, "memref.copy", [source, fresh], [])
        return fresh

    def bind(self, value: Value, buf: Value, views: Value | None = None) -> None:
        """`value` is held in `buf` (a view of buffer `views`, when given)."""
        self.buffers[value] = buf
        if views is not None:
            self.roots[buf] = self.roots.get(views, views)
        self.holders.setdefault(self.roots.get(buf, buf), []).append(value)

    def take_over(self, buf: Value, op: Operation, index: int | None, inside: bool = True) -> bool:
        """Whether `op` may make `buf` its own (write it, or hold its result in it): no tensor
        value held in `buf` is read after `op` (or by `op` itself or inside it, when `inside`),
        but for `op`'s operand number `index`. The values this proves dead are forgotten."""
        root = self.roots.get(buf, buf)
        scope = {id(b) for b in _enclosing_blocks(op)}
        live = [v for v in self.holders.get(root, ()) if id(_defining_block(v)) in scope]
        chain = {id(o): o for o in (op, *op.ancestors())}
        for value in live:
            for use in value.uses:
                if (use.op is not op or use.index != index) and _may_read_after(use.op, op, chain, inside):
                    return False
        # Held values defined in `op`'s own block are read nowhere after it: they are dead for good.
        self.holders[root] = [v for v in self.holders[root] if _defining_block(v) is not op.parent]
        return True

    # -- handlers ----------------------------------------------------------------------------------
    def _empty(self, op: Operation) -> None:
        self.buffers[op.results[0]] = _Empty(op)

    def _alloc_tensor(self, op: Operation) -> None:
        """`bufferization.alloc_tensor`: a new buffer, as `tensor.empty`'s, or a copy of `copy`'s."""
        _sizes, copy, _hint = bufferization.segments(op)
        if not copy:
            return self._empty(op)
        fresh = self.alloc(op, memref_of(op.results[0].type))
        _create(op, "memref.copy", [self.buffer(copy[0], op), fresh], [])
        self.bind(op.results[0], fresh)

    def _constant(self, op: Operation) -> None:
        """A private constant global (an unfoldable constant too: a global is opaque to folding)."""
        t = op.results[0].type
        name = self._global(op.attr("value"), t)
        buf = _create(op, "memref.get_global", (), [memref_of(t)], {"name": SymbolRefAttr(name)})
        self.bind(op.results[0], buf)

    def _global(self, value, t: T.RankedTensorType) -> str:
        key = (str(value), str(t))
        if key not in self.globals:
            base = "__constant_" + "x".join(map(str, t.shape)) + ("x" if t.shape else "") + str(t.element)
            name, n = base, 0
            while name in self.symbols:
                n += 1
                name = f"{base}_{n}"
            self.symbols.add(name)
            attrs = {"sym_name": StringAttr(name), "sym_visibility": StringAttr("private"),
                     "type": TypeAttr(memref_of(t)), "initial_value": value, "constant": UnitAttr()}
            glob = Operation("memref.global", (), (), attrs)
            body = self.module.regions[0].blocks[0]
            body.insert_before(body.ops[0], glob) if body.ops else body.append(glob)
            self.globals[key] = name
        return self.globals[key]

    def _linalg(self, op: Operation) -> None:
        ins, inits = segments(op)
        new_ins = [self.buffer(v, op) for v in ins]
        new_outs = [self.writable(v, op, len(ins) + i) for i, v in enumerate(inits)]
        new = Operation(op.name, [*new_ins, *new_outs], (), dict(op.attributes), (), span=op.span,
                        property_names=op.property_names, location=op.location)
        new.name_span = op.name_span
        for region in op.regions:
            new.add_region(region.clone({}))
        op.parent.insert_before(op, new)
        self._captured(new, new)
        for result, buf in zip(op.results, new_outs):
            self.bind(result, buf)

    def _captured(self, op: Operation, anchor: Operation) -> None:
        """Tensors defined outside `op` that its regions read (`tensor.extract` / `tensor.dim`
        in a linalg body, as gathers do) are read from their buffers instead."""
        for inner in [o for o in op.walk() if o is not op and o.name in _CAPTURED_READS]:
            operand_name, name = _CAPTURED_READS[inner.name]
            source = inner.operand(operand_name)
            if isinstance(source.type, T.MemRefType):
                buf = source  # a function argument, already given its memref type
            elif source in self.buffers:
                buf = self.buffer(source, anchor)
            else:
                continue
            repl = Operation(name, [buf, *inner.operands[1:]], [inner.results[0].type], span=inner.span,
                             location=inner.location)
            inner.parent.insert_before(inner, repl)
            inner.results[0].replace_all_uses_with(repl.results[0])
            inner.erase()

    def _reshape(self, op: Operation) -> None:
        source = self.buffer(op.operand("src"), op)
        name = op.name.replace("tensor.", "memref.")
        attrs = {k: v for k, v in op.attributes.items() if k in ("reassociation", "static_output_shape")}
        view = _create(op, name, [source, *op.operands[1:]], [memref_of(op.results[0].type)], attrs)
        self.bind(op.results[0], view, views=source)  # a view: not owned

    def _cast(self, op: Operation) -> None:
        source = self.buffer(op.operand("source"), op)
        self.bind(op.results[0], _create(op, "memref.cast", [source], [memref_of(op.results[0].type)]), views=source)

    def _extract_slice(self, op: Operation) -> None:
        source = self.buffer(op.operand("source"), op)
        offsets = list(op.attr("static_offsets").values)
        sizes = list(op.attr("static_sizes").values)
        strides = list(op.attr("static_strides").values)
        if len(op.operands) != 1 or not source.type.has_static_shape:
            raise PassFailure("failed to legalize 'tensor.extract_slice' to loops: dynamic offsets, sizes "
                              "or strides are not supported yet", op.name_span or op.span)
        view = subview(op, source, offsets, sizes, strides)
        t = op.results[0].type
        if list(view.type.shape) != list(t.shape):
            raise PassFailure("failed to legalize 'tensor.extract_slice' to loops: rank-reducing slices are "
                              "not supported yet", op.name_span or op.span)
        fresh = self.alloc(op, memref_of(t))
        _create(op, "memref.copy", [view, fresh], [])
        self.bind(op.results[0], fresh)

    def _concat(self, op: Operation) -> None:
        t = op.results[0].type
        dim = op.attr("dim").value
        fresh = self.alloc(op, memref_of(t))
        offset = 0
        for value in op.operands:
            piece = self.buffer(value, op)
            offsets = [offset if d == dim else 0 for d in range(t.rank)]
            view = subview(op, fresh, offsets, list(piece.type.shape), [1] * t.rank)
            _create(op, "memref.copy", [piece, view], [])
            offset += piece.type.shape[dim]
        self.bind(op.results[0], fresh)

    def _extract(self, op: Operation) -> None:
        source = self.buffer(op.operand("tensor"), op)
        load = _create(op, "memref.load", [source, *op.operands_named("indices")], [op.results[0].type])
        op.results[0].replace_all_uses_with(load)

    def _dim(self, op: Operation) -> None:
        source = self.buffer(op.operand("source"), op)
        dim = _create(op, "memref.dim", [source, op.operand("index")], [T.index])
        op.results[0].replace_all_uses_with(dim)

    def _return(self, op: Operation) -> None:
        values = []
        for v in op.operands:
            buf = self.buffer(v, op)
            if isinstance(v.type, T.RankedTensorType) and (buf not in self.owned or buf in values):
                fresh = self.alloc(op, memref_of(v.type))
                _create(op, "memref.copy", [buf, fresh], [])
                buf = fresh
            values.append(buf)
        op.set_operands(values)

    def _call(self, op: Operation) -> None:
        args = [self.buffer(v, op) for v in op.operands]
        new = Operation(op.name, args, [memref_of(r.type) for r in op.results], dict(op.attributes),
                        span=op.span, location=op.location)
        op.parent.insert_before(op, new)
        for old, result in zip(op.results, new.results):
            self.bind(old, result)
            self.owned.add(result)


    # -- scf on tensors: results and loop-carried tensors live in buffers chosen before the op ---------
    def _block(self, block, terminator) -> None:
        for inner in list(block.ops):
            if inner is block.ops[-1] and inner.name in ("scf.yield", "scf.condition"):
                terminator(inner)
            else:
                self.op(inner)

    def _into(self, before: Operation, values, targets) -> None:
        """Copy tensor `values` into buffers `targets`."""
        self._copy_into(before, [self.buffer(v, before) for v in values], targets)

    def _copy_into(self, before: Operation, sources, targets) -> None:
        """Copy buffers `sources` into buffers `targets` (through temporaries where a source is, or
        views, another target, so that no copy reads a buffer already overwritten)."""
        target_roots = {self.roots.get(t, t) for t in targets}
        staged = []
        for src, dst in zip(sources, targets):
            if src is dst:
                continue
            if self.roots.get(src, src) in target_roots:
                tmp = self.alloc(before, dst.type)
                _create(before, "memref.copy", [src, tmp], [])
                src = tmp
            staged.append((src, dst))
        for src, dst in staged:
            _create(before, "memref.copy", [src, dst], [])

    def _carried(self, loop: Operation, inits) -> list[Value]:
        """Buffers for the tensors a loop carries, from `inits` (operand number, value) pairs: the
        init's own buffer where the loop may take it over (it is read nowhere after the loop starts),
        else a fresh buffer holding a copy of it, made once before the loop."""
        carried = []
        for index, init in inits:
            if isinstance(self.buffers.get(init), _Empty):
                carried.append(self.alloc(loop, memref_of(init.type)))   # undefined contents: no copy
                continue
            source = self.buffer(init, loop)
            if source in self.owned and source not in self.fence and source not in carried \
                    and self.take_over(source, loop, index):
                carried.append(source)
                continue
            fresh = self.alloc(loop, memref_of(init.type))
            _create(loop, "memref.copy", [source, fresh], [])
            carried.append(fresh)
        return carried

    def _scf_if(self, op: Operation) -> None:
        """A tensor result lives in the buffer every branch yields it in, when that buffer holds no
        value read after the op (an update in one branch, the unchanged tensor in the other);
        else in a buffer allocated before the op, into which each branch copies."""
        tensors = [i for i, r in enumerate(op.results) if isinstance(r.type, T.RankedTensorType)]
        yields = []   # (scf.yield, the buffers of its tensor operands)

        def terminator(y: Operation) -> None:
            yields.append((y, [self.buffer(y.operands[i], y) for i in tensors]))

        for region in op.regions:
            for block in region.blocks:
                self._block(block, terminator)
        outs = []
        for k, i in enumerate(tensors):
            first = yields[0][1][k]
            if all(bufs[k] is first for _, bufs in yields) and first not in outs \
                    and self.take_over(first, op, None, inside=False):
                outs.append(first)
            else:
                outs.append(self.alloc(op, memref_of(op.results[i].type)))
        for y, bufs in yields:
            self._copy_into(y, bufs, outs)
            y.set_operands([v for i, v in enumerate(y.operands) if i not in tensors])
        _rebuilt(op, op.operands, [i for i in range(len(op.results)) if i not in tensors])
        for i, buf in zip(tensors, outs):
            self.bind(op.results[i], buf)

    def _scf_while(self, op: Operation) -> None:
        tensors = [i for i, r in enumerate(op.results) if isinstance(r.type, T.RankedTensorType)]
        carried = self._carried(op, [(i, op.operands[i]) for i in tensors])
        before, after = (r.blocks[0] for r in op.regions)
        saved, self.fence = self.fence, (self.fence | self.owned) - set(carried)

        def condition(c: Operation) -> None:
            forwarded = c.operands_named("args")
            self._into(c, [forwarded[i] for i in tensors], carried)
            c.set_operands([c.operand("condition")] + [v for i, v in enumerate(forwarded) if i not in tensors])

        def step(y: Operation) -> None:
            self._into(y, [y.operands[i] for i in tensors], carried)
            y.set_operands([v for i, v in enumerate(y.operands) if i not in tensors])

        # (The after region's arguments are bound only once the before region is done: they are
        # new values, which an update in the before region cannot clobber.)
        for block, terminator in ((before, condition), (after, step)):
            for i, buf in zip(tensors, carried):
                self.bind(block.arguments[i], buf)
            self._block(block, terminator)
        self.fence = saved
        keep = [i for i in range(len(op.operands)) if i not in tensors]
        for block in (before, after):
            _drop_arguments(block, tensors)
        _rebuilt(op, [op.operands[i] for i in keep], keep)
        for i, buf in zip(tensors, carried):
            self.bind(op.results[i], buf)

    def _scf_for(self, op: Operation) -> None:
        """Loop-carried tensors live in buffers chosen before the loop; the loop body may write
        them in place (they are the loop's own)."""
        lower, upper, step, *inits = op.operands
        tensors = [i for i, r in enumerate(op.results) if isinstance(r.type, T.RankedTensorType)]
        carried = self._carried(op, [(3 + i, inits[i]) for i in tensors])
        body = op.regions[0].blocks[0]
        for i, buf in zip(tensors, carried):
            self.bind(body.arguments[1 + i], buf)
        saved, self.fence = self.fence, (self.fence | self.owned) - set(carried)

        def step_(y: Operation) -> None:
            self._into(y, [y.operands[i] for i in tensors], carried)
            y.set_operands([v for i, v in enumerate(y.operands) if i not in tensors])

        self._block(body, step_)
        self.fence = saved
        keep = [i for i in range(len(inits)) if i not in tensors]
        _drop_arguments(body, [1 + i for i in tensors])
        _rebuilt(op, [lower, upper, step, *(inits[i] for i in keep)], keep)
        for i, buf in zip(tensors, carried):
            self.bind(op.results[i], buf)

    def _barrier(self, op: Operation) -> None:
        """`util.optimization_barrier` only stops folding, which nothing does across buffers:
        each tensor result is its operand's buffer (a copy when the operand is read again
        later, so that writing in place through the result cannot change it)."""
        for operand, result in zip(op.operands, op.results):
            if not isinstance(result.type, T.RankedTensorType):
                result.replace_all_uses_with(operand)
                continue
            buf = self.buffer(operand, op)
            if len(operand.uses) > 1:
                fresh = self.alloc(op, memref_of(result.type))
                _create(op, "memref.copy", [buf, fresh], [])
                buf = fresh
            self.bind(result, buf)

    def _insert(self, op: Operation) -> None:
        value, dest, *indices = op.operands
        buf = self.writable(dest, op, 1)
        _create(op, "memref.store", [value, buf, *indices], [])
        self.bind(op.results[0], buf)


def _rebuilt(op: Operation, operands, kept_results) -> Operation:
    """`op` again, with `operands`, the results at `kept_results` and its regions moved over."""
    new = Operation(op.name, list(operands), [op.results[i].type for i in kept_results], dict(op.attributes),
                    span=op.span, location=op.location)
    new.name_span = op.name_span
    for region in list(op.regions):
        new.add_region(region)
    op.regions.clear()
    op.parent.insert_before(op, new)
    for i, r in zip(kept_results, new.results):
        op.results[i].replace_all_uses_with(r)
    return new


def _defining_block(value: Value):
    """The block whose execution defines `value` (None for a value of an erased op)."""
    return value.block if isinstance(value, BlockArgument) else value.op.parent


def _enclosing_blocks(op: Operation):
    block = op.parent
    while block is not None:
        yield block
        owner = block.parent_op
        block = owner.parent if owner is not None else None


def _may_read_after(user: Operation, op: Operation, chain: dict, inside: bool) -> bool:
    """Whether `user`, which reads a value, may run after `op` (conservatively): later in a block
    holding both, or in another block or region of an op holding both (but the exclusive branches
    of an scf.if); inside `op` or as `op` itself only counts when `inside`. (An op enclosing `op`
    reads its operands before its regions run. Loops are the fence's business: a buffer defined
    outside a loop is never written inside it.)"""
    child = None
    while id(user) not in chain:
        if user.parent_op is None:
            return True
        user, child = user.parent_op, user
    if user is op:
        return inside
    if child is None:
        return False
    mine = op
    while mine.parent_op is not user:
        mine = mine.parent_op
    if child.parent is mine.parent:
        ops = mine.parent.ops
        return ops.index(child) > ops.index(mine)
    return user.name != "scf.if" or child.parent.parent is mine.parent.parent


def _drop_arguments(block, drop) -> None:
    """Remove the block arguments at positions `drop` (their uses are gone by now)."""
    block.arguments = [a for i, a in enumerate(block.arguments) if i not in drop]
    for i, a in enumerate(block.arguments):
        a.index = i


_HANDLERS = {"tensor.empty": Bufferizer._empty, "bufferization.alloc_tensor": Bufferizer._alloc_tensor,
             "arith.constant": Bufferizer._constant,
             "util.unfoldable_constant": Bufferizer._constant,
             "tensor.expand_shape": Bufferizer._reshape, "tensor.collapse_shape": Bufferizer._reshape,
             "tensor.extract_slice": Bufferizer._extract_slice, "tensor.concat": Bufferizer._concat,
             "tensor.extract": Bufferizer._extract, "tensor.cast": Bufferizer._cast, "tensor.dim": Bufferizer._dim,
             "func.return": Bufferizer._return, "func.call": Bufferizer._call,
             "scf.if": Bufferizer._scf_if, "scf.while": Bufferizer._scf_while, "scf.for": Bufferizer._scf_for,
             "tensor.insert": Bufferizer._insert, "util.optimization_barrier": Bufferizer._barrier}


def _touches_tensors(op: Operation) -> bool:
    if op.dialect == "tensor":
        return True  # (a tensor.extract of a function argument reads its memref)
    return any(isinstance(v.type, T.RankedTensorType) for v in (*op.operands, *op.results))


def _create(before: Operation, name: str, operands, result_types, attributes=None) -> Value | None:
    op = Operation(name, operands, result_types, attributes or {}, span=before.span, location=before.location)
    op.name_span = before.name_span
    before.parent.insert_before(before, op)
    return op.results[0] if op.results else None


def strides_of(shape) -> list[int]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


def subview(before: Operation, source: Value, offsets, sizes, strides) -> Value:
    """`memref.subview` with its static strided result type."""
    src_strides, src_offset = _layout_of(source.type)
    offset = src_offset + sum(o * s for o, s in zip(offsets, src_strides))
    new_strides = [s * k for s, k in zip(src_strides, strides)]
    layout = OpaqueAttr(f"strided<[{', '.join(map(str, new_strides))}], offset: {offset}>")
    if new_strides == strides_of(sizes) and offset == 0:
        layout = None
    t = T.MemRefType(tuple(sizes), source.type.element, layout)
    attrs = {"operandSegmentSizes": DenseArrayAttr(T.i32, (1, 0, 0, 0)),
             "static_offsets": DenseArrayAttr(T.i64, tuple(offsets)),
             "static_sizes": DenseArrayAttr(T.i64, tuple(sizes)),
             "static_strides": DenseArrayAttr(T.i64, tuple(strides))}
    return _create(before, "memref.subview", [source], [t], attrs)


def _layout_of(t: T.MemRefType) -> tuple[list[int], int]:
    if t.layout is None:
        return strides_of(t.shape), 0
    import re
    m = re.fullmatch(r"strided<\[([^\]]*)\](?:,\s*offset:\s*(-?\d+))?>", str(t.layout))
    if m is None:
        raise ValueError(f"layout {t.layout} is not a static strided layout")
    return [int(s) for s in m.group(1).split(",")], int(m.group(2) or 0)


def bufferize_module(module: Operation) -> None:
    b = Bufferizer(module)
    functions = [op for op in module.walk() if op.name == "func.func"]
    for fn in functions:
        b.function(fn)
    # The tensor ops are now unused: erase them, last first.
    for fn in functions:
        doomed = [o for o in fn.walk() if o is not fn and o.name != "func.return" and _touches_tensors(o)]
        ids = {id(o) for o in doomed}
        for op in reversed(doomed):
            if op.parent is not None and not any(id(a) in ids for a in op.ancestors()):
                for r in op.results:
                    if r.uses:
                        raise PassFailure(f"failed to legalize '{op.name}' to loops: its tensor result is "
                                          "still used", op.name_span or op.span)
                op.erase()
