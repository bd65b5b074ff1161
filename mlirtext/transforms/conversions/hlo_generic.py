"""Building `linalg.generic` ops for the hlo -> linalg lowerings: affine maps, a body block
filled through `Scalar`, `scf.for` nests inside a body, `stablehlo.pad` for padding, the cost
bounds of the lowerings with nested loops, and the base pattern (static shapes, element types
arith works on, empty results).
"""
from __future__ import annotations

from ...dialects.hlo_attrs import int_list
from ...ir import types as T
from ...ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr
from ...ir.core import Block, Operation, Region
from ..rewriter import RewritePattern
from .build import all_static, dims_text, empty, insert
from .hlo_scalar import Scalar, is_arith_element
from .hlo_unsigned import is_unsigned, retype_signless


# ---- affine maps ----------------------------------------------------------------------------------
def affine_map(n: int, exprs) -> OpaqueAttr:
    return OpaqueAttr(f"affine_map<({dims_text(n)}) -> ({', '.join(exprs)})>")


def identity_map(n: int) -> OpaqueAttr:
    return affine_map(n, [f"d{i}" for i in range(n)])


def _iterators(kinds) -> ArrayAttr:
    return ArrayAttr(tuple(OpaqueAttr(f"#linalg.iterator_type<{k}>") for k in kinds))


def affine_expr(dim: str, scale: int, offset: int) -> str:
    text = dim if scale == 1 else f"{dim} * {scale}"
    if offset > 0:
        text += f" + {offset}"
    elif offset < 0:
        text += f" - {-offset}"
    return text


# ---- building generics ------------------------------------------------------------------------------
def generic_body(ins, outs, body):
    """A detached body block for a generic over `ins` / `outs` (values or types), filled by
    `body(Scalar, in_args, out_args)`, which returns the values to yield (None: give up)."""
    types = [T.element_type(v if isinstance(v, T.Type) else v.type) for v in (*ins, *outs)]
    block = Block(types)
    for i, arg in enumerate(block.arguments):
        arg.name = "in" if i < len(ins) else "out"
    b = Scalar(block)
    results = body(b, block.arguments[:len(ins)], block.arguments[len(ins):])
    if results is None:
        return None
    block.append(Operation("linalg.yield", list(results), []))
    return block


def make_generic(rw, op, ins, in_maps, outs, out_maps, kinds, block) -> Operation:
    attrs = {"indexing_maps": ArrayAttr(tuple(in_maps) + tuple(out_maps)), "iterator_types": _iterators(kinds),
             "operandSegmentSizes": DenseArrayAttr(T.i32, (len(ins), len(outs)))}
    generic = Operation("linalg.generic", [*ins, *outs], [v.type for v in outs], attrs, [Region([block])])
    return insert(rw, op, generic)


def broadcast_scalar(rw, op, scalar_tensor, t: T.RankedTensorType):
    """A tensor of type `t` filled with the one element of 0-d tensor `scalar_tensor`."""
    block = generic_body([scalar_tensor], [t], lambda b, i, o: [i[0]])
    return make_generic(rw, op, [scalar_tensor], [affine_map(t.rank, [])], [empty(rw, op, t)], [identity_map(t.rank)],
                        ["parallel"] * t.rank, block).result


#: The most scalar body runs a lowering with a nested loop (scatter, sort, select_and_scatter, scan)
#: may cost; beyond it the op is left for a lowering that writes in place (not here yet), since
#: O(n^2) loops would make the lowered program too slow to run.
COST_LIMIT = 1 << 18


def exceeds_cost_limit(*counts) -> bool:
    total = 1
    for c in counts:
        total *= int(c)
    return total > COST_LIMIT


def element_count(t) -> int:
    n = 1
    for d in t.shape:
        n *= d
    return n


class HloLoweringPattern(RewritePattern):
    """Static shapes, and element types arith works on. An op on unsigned integers is first
    made signless in place (`retype_signless`, undone if it then does not lower), where
    `signless_keeps_meaning` says the lowering computes the same bits on them."""

    def match_and_rewrite(self, op, rw) -> bool:
        types = [*(v.type for v in op.operands), *(r.type for r in op.results)]
        if not all_static(*types):
            return False
        if any(map(is_unsigned, types)):
            if not self.signless_keeps_meaning(op):
                return False
            undo = retype_signless(op, rw)
            if self.match_and_rewrite(op, rw):
                return True
            undo()
            return False
        if not all(map(is_arith_element, types)):
            return False
        if any(0 in t.shape for t in types):
            if op.results and all(0 in r.type.shape for r in op.results):
                rw.replace_op(op, [empty(rw, op, r.type) for r in op.results])  # no values to compute
                return True
            if not self.empty_operands_ok:
                return False  # empty operands: nothing to index
        return self.rewrite(op, rw)

    def rewrite(self, op, rw) -> bool:
        raise NotImplementedError

    #: Whether the lowering computes the same bits on the signless forms of unsigned types: true
    #: for ops that move, select or combine elements with their regions (whose scalar ops pick
    #: the unsigned arith ops); false by default, so that no pattern reads unsigned as signed
    #: (an index, an extension, a bound) without saying so.
    signless_safe = False
    #: Whether `rewrite` gives the meaning of an op with empty operands but non-empty results
    #: (a reduction over an empty set); other patterns would index elements that do not exist.
    empty_operands_ok = False

    def signless_keeps_meaning(self, op) -> bool:
        return self.signless_safe


def stablehlo_pad(rw, op, x, value, lo, hi, interior):
    """A `stablehlo.pad` (the Pad pattern lowers it in turn)."""
    shape = [l + h + (n - 1) * (i + 1) + 1 for n, l, h, i in zip(x.type.shape, lo, hi, interior)]
    t = T.RankedTensorType(tuple(shape), x.type.element)
    arr = lambda v: DenseArrayAttr(T.i64, tuple(int(a) for a in v))
    return rw.create(op, "stablehlo.pad", [x, value], [t], {"edge_padding_low": arr(lo), "edge_padding_high": arr(hi),
                                                         "interior_padding": arr(interior)}).result


def split_pairs(attr, rank):
    values = int_list(attr)
    if not values:
        return [0] * rank, [0] * rank
    return values[0::2], values[1::2]


def first_int(attr, default: int = 1) -> int:
    if isinstance(attr, IntegerAttr):
        return attr.value
    values = int_list(attr)
    return values[0] if values else default


def zero_scalar_dense(e: T.Type):
    from ...ir.dense import DenseElementsAttr
    return DenseElementsAttr(T.RankedTensorType((), e), (0.0 if T.is_float(e) else 0,), True, None)


# ---- loops inside a body -----------------------------------------------------------------------
def for_nest(b: Scalar, bounds, carried, fn, ivs=()):
    """`scf.for` loops over `bounds` carrying `carried`; `fn(Scalar, ivs, carried)` gives the
    innermost body's new values (None: give up). The nest's results, or None."""
    if len(ivs) == len(bounds):
        return fn(b, list(ivs), carried)
    block = Block([T.index, *[v.type for v in carried]])
    block.arguments[0].name = "i"
    new = for_nest(Scalar(block), bounds, list(block.arguments[1:]), fn, (*ivs, block.arguments[0]))
    if new is None:
        return None
    block.append(Operation("scf.yield", list(new), []))
    lower, upper, step = b.c(0), b.c(bounds[len(ivs)]), b.c(1)
    loop = Operation("scf.for", [lower, upper, step, *carried], [v.type for v in carried], {}, [Region([block])])
    b.block.append(loop)
    return list(loop.results)


def row_major_strides(shape) -> list[int]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]
