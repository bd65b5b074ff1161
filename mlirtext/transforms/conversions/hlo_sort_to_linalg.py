"""hlo -> linalg for ops that order their operand along a dimension: sort (stable, by ranks)
and `chlo.scan` (a recurrence). Both run `scf.for` loops in the body of each result element,
bounded by COST_LIMIT.
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.attributes import DenseArrayAttr
from .build import empty, hlo_names
from .hlo_generic import HloLoweringPattern, identity_map, first_int, element_count, exceeds_cost_limit, for_nest, generic_body, make_generic
from .hlo_scalar import Scalar, scalarize


class Sort(HloLoweringPattern):
    """A stable sort by ranks: first each element's final position along the dimension
    (how many elements the comparator puts before it, ties kept in order), then each result
    element takes the element whose position it is. O(n^2) comparator calls per line."""
    ops = hlo_names("sort")
    signless_safe = True

    def rewrite(self, op, rw) -> bool:
        inputs = list(op.operands)
        t = inputs[0].type
        dim = first_int(op.attr("dimension"), -1)
        if dim < 0:
            dim += t.rank
        if not op.regions or not op.regions[0].blocks:
            return False
        comparator = op.regions[0].blocks[0]
        n = t.shape[dim]
        if exceeds_cost_limit(element_count(t), n):
            return False
        rank_type = T.RankedTensorType(t.shape, T.i64)

        def compare(c: Scalar, a_at, b_at):
            args = []
            for x in inputs:
                args += [c.extract(x, a_at), c.extract(x, b_at)]
            out = scalarize(c, comparator, args)
            return None if out is None or out[0].type != T.i1 else out[0]

        def ranks(b: Scalar, ins, outs):
            here = [b.index(d) for d in range(t.rank)]
            i = here[dim]

            def count(c: Scalar, js, carried):
                j = js[0]
                there = list(here)
                there[dim] = j
                before = compare(c, here, there)     # comp(x_i, x_j)
                after = compare(c, there, here)      # comp(x_j, x_i)
                if before is None or after is None:
                    return None
                not_before = c.op("arith.xori", [before, c.const(1, T.i1)], T.i1)
                earlier = c.cmpi(2, j, i)            # j < i
                later = c.cmpi(4, j, i)              # j > i
                inc = c.op("arith.ori", [c.and_(earlier, not_before), c.and_(later, after)], T.i1)
                return [c.add(carried[0], c.op("arith.extui", [inc], T.i64))]

            return for_nest(b, [n], [b.const(0, T.i64)], count)

        block = generic_body([], [rank_type], ranks)
        if block is None:
            return False

        def place(b: Scalar, ins, outs):
            here = [b.index(d) for d in range(t.rank)]
            p = b.op("arith.index_cast", [here[dim]], T.i64)

            def find(c: Scalar, js, carried):
                there = list(here)
                there[dim] = js[0]
                hit = c.cmpi(0, c.extract(position, there), p)
                return [c.select(hit, c.extract(x, there), old) for x, old in zip(inputs, carried)]

            return for_nest(b, [n], list(ins), find)

        position = make_generic(rw, op, [], [], [empty(rw, op, rank_type)], [identity_map(t.rank)],
                                ["parallel"] * t.rank, block).result
        block2 = generic_body(inputs, [r.type for r in op.results], place)
        out = make_generic(rw, op, inputs, [identity_map(t.rank)] * len(inputs), [empty(rw, op, r.type) for r in op.results],
                           [identity_map(t.rank)] * len(inputs), ["parallel"] * t.rank, block2)
        rw.replace_op(op, out.results)
        return True


class Scan(HloLoweringPattern):
    """`chlo.scan` with an elementwise body: each output element runs the recurrence along the
    scan dimension up to its own position (O(n^2) per line); the final carries run it all."""
    ops = ("chlo.scan",)
    signless_safe = True

    def rewrite(self, op, rw) -> bool:
        seg = op.attr("operandSegmentSizes")
        if not isinstance(seg, DenseArrayAttr) or len(seg.values) != 2 or not op.regions:
            return False
        n_in = seg.values[0]
        inputs, inits = op.operands[:n_in], op.operands[n_in:]
        n_out = len(op.results) - len(inits)
        if not inputs or n_out < 0:
            return False
        t = inputs[0].type
        dim = first_int(op.attr("dimension"), 0)
        reverse = "true" in str(op.attr("is_reverse"))
        n = t.shape[dim]
        if exceeds_cost_limit(element_count(t), n):
            return False
        region = op.regions[0].blocks[0]

        def run(b: Scalar, here, stop_at):
            """The recurrence at `here` (indices with the scan dim left out), up to `stop_at`
            (an index, or None for the whole line): the outputs there and the carries."""
            carried = [b.extract(v, here) for v in inits]
            outs0 = [b.const(0, x.type.element) if not T.is_float(x.type.element) else b.const(0.0, x.type.element)
                     for x in op.results[:n_out]] if n_out else []

            def step(c: Scalar, ms, state):
                j = c.sub(c.c(n - 1), ms[0]) if reverse else ms[0]
                at = list(here)
                at.insert(dim, j)
                carries, outs = state[:len(inits)], state[len(inits):]
                values = scalarize(c, region, [*(c.extract(x, at) for x in inputs), *carries], elementwise=True)
                if values is None:
                    return None
                if stop_at is None:
                    active = None
                else:
                    active = c.cmpi(5 if reverse else 3, j, stop_at)  # j >= i (reverse) / j <= i
                    hit = c.cmpi(0, j, stop_at)
                new_carries = values[n_out:]
                new_outs = values[:n_out]
                if active is not None:
                    new_carries = [c.select(active, v, old) for v, old in zip(new_carries, carries)]
                    new_outs = [c.select(hit, v, old) for v, old in zip(new_outs, outs)]
                return [*new_carries, *new_outs]

            return for_nest(b, [n], [*carried, *outs0], step)

        def outputs(b: Scalar, ins, outs):
            idx = [b.index(d) for d in range(t.rank)]
            here = idx[:dim] + idx[dim + 1:]
            state = run(b, here, idx[dim])
            return None if state is None else state[len(inits):]

        def carries(b: Scalar, ins, outs):
            here = [b.index(d) for d in range(t.rank - 1)]
            state = run(b, here, None)
            return None if state is None else state[:len(inits)]

        ct = inits[0].type if inits else None
        blocks = [generic_body([], [r.type for r in op.results[:n_out]], outputs) if n_out else None,
                  generic_body([], [r.type for r in op.results[n_out:]], carries) if inits else None]
        if (n_out and blocks[0] is None) or (inits and blocks[1] is None):
            return False
        values = []
        if n_out:
            values += make_generic(rw, op, [], [], [empty(rw, op, r.type) for r in op.results[:n_out]],
                                   [identity_map(t.rank)] * n_out, ["parallel"] * t.rank, blocks[0]).results
        if inits:
            values += make_generic(rw, op, [], [], [empty(rw, op, r.type) for r in op.results[n_out:]],
                                   [identity_map(ct.rank)] * len(inits), ["parallel"] * ct.rank, blocks[1]).results
        rw.replace_op(op, values)
        return True


PATTERNS = [Sort(), Scan()]
