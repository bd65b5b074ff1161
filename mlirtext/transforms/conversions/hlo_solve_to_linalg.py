"""hlo -> linalg/scf for `triangular_solve`: substitution, one row (left side) or column (right
side) of the result per step.

`op(a) x = b` (left_side) or `x op(a) = b` is solved as LAPACK's trsm does: an `scf.for`
over the solved dimension carries x, which starts as b; step i rewrites the i-th row (column)
with `(b_i - sum_k op(a)[i,k] x_k) / op(a)[i,i]` over the k solved before it, computed by a
`linalg.generic` over x whose body runs the sum as an `scf.for` under an `scf.if` (only the
elements of row i compute; the others keep their value). Only the triangle `lower` names is
read, as the spec says; `unit_diagonal` skips the division. Work: O(m^2 n) per matrix.
"""
from __future__ import annotations

from ...dialects.hlo_attrs import enum_word
from ...ir import types as T
from ...ir.attributes import IntegerAttr
from ...ir.core import Block, Operation, Region
from .build import FASTMATH_NONE, empty, hlo_names
from .hlo_generic import identity_map, HloLoweringPattern, for_nest, generic_body, make_generic
from .hlo_scalar import Scalar

_FM = {"fastmath": FASTMATH_NONE}


def _flag(op, name: str) -> bool:
    attr = op.attributes.get(name)
    value = getattr(attr, "value", None)
    return bool(value) if value is not None else str(attr).strip() in ("true", "unit")


class TriangularSolve(HloLoweringPattern):
    ops = hlo_names("triangular_solve")

    def rewrite(self, op, rw) -> bool:
        a, b = op.operands
        t = op.results[0].type
        if not T.is_float(t.element) or a.type.rank != t.rank or t.rank < 2:
            return False
        transpose = enum_word(op.attr("transpose_a")) or "NO_TRANSPOSE"
        if transpose not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):  # ADJOINT: conj is a no-op on reals
            return False
        left, unit = _flag(op, "left_side"), _flag(op, "unit_diagonal")
        transposed = transpose != "NO_TRANSPOSE"
        lower = _flag(op, "lower") != transposed       # the triangle of op(a)
        forward = lower if left else not lower         # rows of x depend on earlier (or later) ones
        rank, m = t.rank, a.type.shape[-1]
        solve_dim = rank - 2 if left else rank - 1     # the dimension of x the substitution walks

        def op_a(s: Scalar, batch, r, c):
            """op(a)[r, c]."""
            return s.extract(a, [*batch, *((c, r) if transposed else (r, c))])

        def step_body(x, i):
            """The body of the generic of step i: x with its i-th row (column) solved."""
            def body(s: Scalar, ins, outs):
                idx = [s.index(d) for d in range(rank)]
                batch = idx[:rank - 2]
                here = s.cmpi(0, idx[solve_dim], i)
                then = Block([])
                inner = Scalar(then)

                def subtract(s2: Scalar, ivs, carried):
                    k = ivs[0]
                    solved = s2.cmpi(2, k, i) if forward else s2.cmpi(4, k, i)  # slt / sgt
                    if left:
                        term = s2.op("arith.mulf", [op_a(s2, batch, i, k), s2.extract(x, [*batch, k, idx[-1]])],
                                     t.element, _FM)
                    else:
                        term = s2.op("arith.mulf", [s2.extract(x, [*batch, idx[-2], k]), op_a(s2, batch, k, i)],
                                     t.element, _FM)
                    rest = s2.op("arith.subf", [carried[0], term], t.element, _FM)
                    return [s2.select(solved, rest, carried[0])]

                (acc,) = for_nest(inner, [m], [ins[0]], subtract)
                if not unit:
                    acc = inner.op("arith.divf", [acc, op_a(inner, batch, i, i)], t.element, _FM)
                then.append(Operation("scf.yield", [acc], []))
                keep = Block([])
                keep.append(Operation("scf.yield", [ins[0]], []))
                return [s.op("scf.if", [here], t.element, regions=[Region([then]), Region([keep])])]
            return body

        c0, cm, c1 = (rw.create(op, "arith.constant", (), [T.index], {"value": IntegerAttr(v, T.index)}).result
                      for v in (0, m, 1))
        loop_block = Block([T.index, t])
        step, x = loop_block.arguments
        step.name, x.name = "i", "x"
        loop = Operation("scf.for", [c0, cm, c1, b], [t], {}, [Region([loop_block])])
        rw.insert_before(op, loop)  # filled in below: ops created before the yield
        s = Scalar(loop_block)
        i = step if forward else s.sub(s.c(m - 1), step)
        yield_op = Operation("scf.yield", [], [])
        loop_block.append(yield_op)
        block = generic_body([x], [t], step_body(x, i))
        new_x = make_generic(rw, yield_op, [x], [identity_map(rank)], [empty(rw, yield_op, t)], [identity_map(rank)],
                             ["parallel"] * rank, block).result
        yield_op.set_operands([new_x])
        rw.replace_op(op, loop.results)
        return True


PATTERNS = [TriangularSolve()]
