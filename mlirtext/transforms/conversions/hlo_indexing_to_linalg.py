"""hlo -> linalg for data-dependent indexing: gather and torch_index_select read with
`tensor.extract` at computed (clamped) indices, as IREE's gather lowering does; scatter and
select_and_scatter walk their updates / windows in order with `scf.for` loops inside the body
of each result element, bounded by COST_LIMIT; past it a scatter becomes `scf.for` loops
carrying the result tensor (`tensor.insert`), which bufferization turns into in-place stores.
"""
from __future__ import annotations

from ...dialects.hlo_attrs import dims_field, int_field, int_list, struct_fields
from ...ir import types as T
from ...ir.core import Block, Operation, Region
from .build import empty, hlo_names
from .hlo_generic import (HloLoweringPattern, identity_map, first_int, affine_map, split_pairs, row_major_strides, element_count, exceeds_cost_limit, for_nest,
                          generic_body, make_generic)
from .hlo_scalar import Scalar, is_signless_int, scalarize
from .hlo_unsigned import is_unsigned

#: The most updates the in-place scatter loops take.
IN_PLACE_LIMIT = 1 << 13


class Gather(HloLoweringPattern):
    """Per result element: its batch index picks a start index vector (clamped so the slice
    fits), its offset index the place in the slice (StableHLO's gather, batching dims too)."""
    ops = hlo_names("gather")

    def signless_keeps_meaning(self, op) -> bool:
        return not any(is_unsigned(v.type) for v in op.operands[1:])  # indices: index_cast reads them signed

    def rewrite(self, op, rw) -> bool:
        x, indices = op.operands
        t = op.results[0].type
        f = struct_fields(op.attr("dimension_numbers"))
        sizes = int_list(op.attr("slice_sizes"))
        if f is None or sizes is None or not is_signless_int(indices.type.element):
            return False
        offset_dims = dims_field(f, "offset_dims")
        collapsed = dims_field(f, "collapsed_slice_dims")
        operand_batching = dims_field(f, "operand_batching_dims")
        indices_batching = dims_field(f, "start_indices_batching_dims")
        start_map = dims_field(f, "start_index_map")
        ivd = int_field(f, "index_vector_dim", 0)
        batch_dims = [d for d in range(t.rank) if d not in offset_dims]
        window_dims = [d for d in range(x.type.rank) if d not in collapsed and d not in operand_batching]
        if len(window_dims) != len(offset_dims):
            return False

        def body(b: Scalar, ins, outs):
            batch = [b.index(d) for d in batch_dims]
            where = [b.c(0)] * x.type.rank
            for k, d in enumerate(start_map):
                at = list(batch)
                if ivd < indices.type.rank:
                    at.insert(ivd, b.c(k))
                start = b.to_index(b.extract(indices, at))
                where[d] = b.clamp(start, 0, x.type.shape[d] - sizes[d])
            for od, sd in zip(operand_batching, indices_batching):
                where[od] = batch[sd - (0 if sd < ivd else 1)]
            for wd, od in zip(window_dims, offset_dims):
                where[wd] = b.add(where[wd], b.index(od))
            return [b.extract(x, where)]

        block = generic_body([], [t], body)
        out = make_generic(rw, op, [], [], [empty(rw, op, t)], [identity_map(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class TorchIndexSelect(HloLoweringPattern):
    """out[i.., j.., k..] = input[i.., index[i..batch, j..], k..] (index_select along `dim`,
    the first `batch_dims` dims shared by input and index)."""
    ops = hlo_names("torch_index_select")

    def signless_keeps_meaning(self, op) -> bool:
        return not any(is_unsigned(v.type) for v in op.operands[1:])  # indices: index_cast reads them signed

    def rewrite(self, op, rw) -> bool:
        x, index = op.operands
        t = op.results[0].type
        dim = first_int(op.attr("dim"), 0)
        batch = first_int(op.attr("batch_dims"), 0)
        if not is_signless_int(index.type.element):
            return False
        extra = index.type.rank - batch

        def body(b: Scalar, ins, outs):
            at = [b.index(d) for d in range(batch)] + [b.index(dim + i) for i in range(extra)]
            k = b.clamp(b.to_index(b.extract(index, at)), 0, x.type.shape[dim] - 1)
            where = [b.index(d) for d in range(dim)] + [k] + \
                [b.index(d - 1 + extra) for d in range(dim + 1, x.type.rank)]
            return [b.extract(x, where)]

        block = generic_body([], [t], body)
        out = make_generic(rw, op, [], [], [empty(rw, op, t)], [identity_map(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class Scatter(HloLoweringPattern):
    """Per result element: start from the operand's value and walk every update element in
    order, applying the update computation where the update's target is this element (the
    spec's sequential semantics; targets out of bounds match nothing)."""
    ops = hlo_names("scatter")

    def signless_keeps_meaning(self, op) -> bool:
        return not any(is_unsigned(v.type) for v in op.operands[(len(op.operands) - 1) // 2:][:1])  # indices: index_cast reads them signed

    def rewrite(self, op, rw) -> bool:
        n = (len(op.operands) - 1) // 2
        inputs, indices, updates = op.operands[:n], op.operands[n], op.operands[n + 1:]
        t = op.results[0].type
        f = struct_fields(op.attr("scatter_dimension_numbers"))
        if f is None or not is_signless_int(indices.type.element) or not op.regions or not op.regions[0].blocks:
            return False
        window_dims = dims_field(f, "update_window_dims")
        inserted = dims_field(f, "inserted_window_dims")
        input_batching = dims_field(f, "input_batching_dims")
        indices_batching = dims_field(f, "scatter_indices_batching_dims")
        to_operand = dims_field(f, "scatter_dims_to_operand_dims")
        ivd = int_field(f, "index_vector_dim", 0)
        ushape = updates[0].type.shape
        scatter_dims = [d for d in range(len(ushape)) if d not in window_dims]
        operand_window = [d for d in range(t.rank) if d not in inserted and d not in input_batching]
        region = op.regions[0].blocks[0]

        def target(c: Scalar, u):
            """The operand index update element `u` goes to (dims no index names: 0)."""
            where = [None] * t.rank
            scatter_index = [u[d] for d in scatter_dims]
            for k, d in enumerate(to_operand):
                at = list(scatter_index)
                if ivd < indices.type.rank:
                    at.insert(ivd, c.c(k))
                where[d] = c.to_index(c.extract(indices, at))
            for od, sd in zip(input_batching, indices_batching):
                where[od] = scatter_index[sd - (0 if sd < ivd else 1)]
            for wd, ud in zip(operand_window, window_dims):
                where[wd] = u[ud] if where[wd] is None else c.add(where[wd], u[ud])
            return [c.c(0) if w is None else w for w in where]

        if exceeds_cost_limit(element_count(t), element_count(updates[0].type)):
            if element_count(updates[0].type) > IN_PLACE_LIMIT:
                return False  # one interpreted loop step per update: too slow to check at every level
            return self.in_place(op, rw, inputs, updates, region, target)

        def body(b: Scalar, ins, outs):
            here = [b.index(d) for d in range(t.rank)]

            def inner(c: Scalar, u, carried):
                cond = None
                for d, w in enumerate(target(c, u)):
                    cond = c.and_(cond, c.cmpi(0, w, here[d]))
                values = [c.extract(v, u) for v in updates]
                new = scalarize(c, region, [*carried, *values])
                if new is None:
                    return None
                return [c.select(cond, a, old) for a, old in zip(new, carried)]

            return for_nest(b, ushape, list(ins), inner)

        block = generic_body(inputs, [r.type for r in op.results], body)
        if block is None:
            return False
        out = make_generic(rw, op, inputs, [identity_map(t.rank)] * n, [empty(rw, op, r.type) for r in op.results],
                           [identity_map(t.rank)] * n, ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True

    @staticmethod
    def in_place(op, rw, inputs, updates, region, target) -> bool:
        """Large scatters: `scf.for` loops over the update elements, in order, carrying the
        results as tensors; each in-bounds update reads, combines and inserts one element."""
        t = op.results[0].type
        top = Scalar(Block())

        def step(c: Scalar, u, carried):
            where = target(c, u)
            inside = None
            for d, w in enumerate(where):
                inside = c.and_(inside, c.and_(c.cmpi(5, w, c.c(0)), c.cmpi(2, w, c.c(t.shape[d]))))
            then, other = Block(), Block()
            b = Scalar(then)
            at = [b.clamp(w, 0, t.shape[d] - 1) for d, w in enumerate(where)]
            new = scalarize(b, region, [*(b.extract(v, at) for v in carried), *(b.extract(v, u) for v in updates)])
            if new is None:
                return None
            stored = [b.op("tensor.insert", [x, v, *at], v.type) for x, v in zip(new, carried)]
            then.append(Operation("scf.yield", stored, []))
            other.append(Operation("scf.yield", list(carried), []))
            branch = Operation("scf.if", [inside], [v.type for v in carried], {}, [Region([then]), Region([other])])
            c.block.append(branch)
            return list(branch.results)

        results = for_nest(top, updates[0].type.shape, list(inputs), step)
        if results is None:
            return False
        for inner in list(top.block.ops):
            inner.detach()
            rw.insert_before(op, inner)
        rw.replace_op(op, results)
        return True


class SelectAndScatter(HloLoweringPattern):
    """Per result element: start from the init value and, for every window (source element),
    find the element the select region picks (scanning the window in order, padding
    excluded); where that is this element, apply the scatter region with the source value."""
    ops = hlo_names("select_and_scatter")
    signless_safe = True

    def rewrite(self, op, rw) -> bool:
        x, source, init = op.operands
        t = op.results[0].type
        rank = t.rank
        window = int_list(op.attr("window_dimensions")) or [1] * rank
        strides = int_list(op.attr("window_strides")) or [1] * rank
        lo, _ = split_pairs(op.attr("padding"), rank)
        if len(op.regions) != 2 or not all(r.blocks for r in op.regions):
            return False
        select, scatter = op.regions[0].blocks[0], op.regions[1].blocks[0]
        flat = row_major_strides(t.shape)
        if exceeds_cost_limit(element_count(t), element_count(source.type), *window):
            return False

        def body(b: Scalar, ins, outs):
            here = b.c(0)
            for d in range(rank):
                here = b.add(here, b.mul(b.index(d), b.c(flat[d])))

            def per_window(c: Scalar, w, carried):
                def scan(e: Scalar, k, best):
                    best_val, best_at = best
                    valid, at, where = None, e.c(0), []
                    for d in range(rank):
                        p = e.add(e.mul(w[d], e.c(strides[d])), k[d])
                        if lo[d]:
                            p = e.sub(p, e.c(lo[d]))
                        valid = e.and_(valid, e.and_(e.cmpi(5, p, e.c(0)), e.cmpi(2, p, e.c(t.shape[d]))))
                        where.append(e.clamp(p, 0, t.shape[d] - 1))
                        at = e.add(at, e.mul(p, e.c(flat[d])))
                    value = e.extract(x, where)
                    keep = scalarize(e, select, [best_val, value])
                    if keep is None or keep[0].type != T.i1:
                        return None
                    none_yet = e.cmpi(2, best_at, e.c(0))
                    change = e.op("arith.xori", [keep[0], e.const(1, T.i1)], T.i1)
                    take = e.and_(valid, e.op("arith.ori", [change, none_yet], T.i1))
                    return [e.select(take, value, best_val), e.select(take, at, best_at)]

                picked = for_nest(c, window, [c.extract(x, [c.c(0)] * rank), c.c(-1)], scan)
                if picked is None:
                    return None
                new = scalarize(c, scatter, [carried[0], c.extract(source, w)])
                if new is None:
                    return None
                return [c.select(c.cmpi(0, picked[1], here), new[0], carried[0])]

            return for_nest(b, source.type.shape, [ins[0]], per_window)

        block = generic_body([init], [t], body)
        if block is None:
            return False
        out = make_generic(rw, op, [init], [affine_map(rank, [])], [empty(rw, op, t)], [identity_map(rank)],
                           ["parallel"] * rank, block)
        rw.replace_op(op, out.results)
        return True


PATTERNS = [Gather(), TorchIndexSelect(), Scatter(), SelectAndScatter()]
