"""Before bufferization: the linalg-level ops that have no loop form of their own become
`linalg.generic`s, and shapes known only through constants become static.

- arith/math ops on whole tensors become elementwise generics (MLIR's
  `convert-elementwise-to-linalg`);
- `linalg.softmax` becomes max / exp / sum / divide generics (MLIR's softmax
  decomposition), computed in f32 for narrower floats;
- `linalg.pack` / `linalg.unpack` become a generic over the destination that reads
  the source with `tensor.extract` at the index the tiling maps it to (padding
  where a packed tile runs past the source);
- `tensor.empty` with constant sizes gets a static type, and `tensor.cast`s from a
  static type fold into the linalg ops that use them (as MLIR's canonicalization
  does), so that loop bounds are static.
"""
from __future__ import annotations

from ...dialects.linalg import pack_operands
from ...ir import types as T
from ...ir.attributes import IntegerAttr
from ...ir.core import Operation
from ..driver import GreedyDriver
from ..rewriter import RewritePattern
from .build import FASTMATH_NONE, all_static, empty, insert
from .hlo_generic import identity_map, affine_map, generic_body, make_generic
from .hlo_scalar import Scalar

_FM = {"fastmath": FASTMATH_NONE}


def _ints(attr) -> list[int]:
    return [int(v) for v in attr.values] if attr is not None else []


# ---- elementwise ops on tensors ---------------------------------------------------------------------
class ElementwiseOnTensors(RewritePattern):
    """`%r = arith.addf %a, %b : tensor<4xf32>` -> a generic whose body is the op on scalars.
    Scalar operands (the condition of a select) are used as they are."""
    ops = ()

    def match_and_rewrite(self, op, rw) -> bool:
        if op.dialect not in ("arith", "math") or op.name == "arith.constant" or op.regions or len(op.results) != 1:
            return False
        t = op.results[0].type
        if not isinstance(t, T.RankedTensorType) or not all_static(t):
            return False
        tensors = [v for v in op.operands if isinstance(v.type, T.RankedTensorType)]
        if any(v.type.shape != t.shape for v in tensors):
            return False

        def body(b: Scalar, ins, outs):
            scalars = iter(ins)
            operands = [next(scalars) if isinstance(v.type, T.RankedTensorType) else v for v in op.operands]
            return [b.op(op.name, operands, t.element, dict(op.attributes))]

        block = generic_body(tensors, [t], body)
        out = make_generic(rw, op, tensors, [identity_map(t.rank)] * len(tensors), [empty(rw, op, t)],
                           [identity_map(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


# ---- softmax ----------------------------------------------------------------------------------------
class Softmax(RewritePattern):
    """exp(x - max) / sum(exp(x - max)) along `dimension`."""
    ops = ("linalg.softmax",)

    def match_and_rewrite(self, op, rw) -> bool:
        x, init = op.operands
        t = init.type
        if not op.results or not all_static(x.type, t) or not T.is_float(t.element):
            return False
        dim = op.attr("dimension").value
        e = t.element
        work = T.f32 if e.width < 32 else e  # as the interpreter and IREE compute narrow floats
        rank = t.rank
        kept = [f"d{i}" for i in range(rank) if i != dim]
        reduced_t = T.RankedTensorType(tuple(s for i, s in enumerate(t.shape) if i != dim), work)
        full, part = identity_map(rank), affine_map(rank, kept)
        parallel = ["parallel"] * rank
        reducing = ["reduction" if i == dim else "parallel" for i in range(rank)]

        def widen(b, v):
            return v if v.type == work else b.op("arith.extf", [v], work)

        def filled(value):
            block = generic_body([], [reduced_t], lambda b, i, o: [b.const(value, work)])
            return make_generic(rw, op, [], [], [empty(rw, op, reduced_t)], [identity_map(reduced_t.rank)],
                                ["parallel"] * reduced_t.rank, block).result

        block = generic_body([x], [reduced_t], lambda b, i, o: [b.op("arith.maximumf", [o[0], widen(b, i[0])],
                                                                     work, _FM)])
        peak = make_generic(rw, op, [x], [full], [filled(float("-inf"))], [part], reducing, block).result
        exp_t = T.RankedTensorType(t.shape, work)
        block = generic_body([x, peak], [exp_t], lambda b, i, o: [b.op("math.exp", [b.op(
            "arith.subf", [widen(b, i[0]), i[1]], work, _FM)], work, _FM)])
        exps = make_generic(rw, op, [x, peak], [full, part], [empty(rw, op, exp_t)], [full], parallel,
                            block).result
        block = generic_body([exps], [reduced_t], lambda b, i, o: [b.op("arith.addf", [o[0], i[0]], work, _FM)])
        total = make_generic(rw, op, [exps], [full], [filled(0.0)], [part], reducing, block).result

        def divide(b, i, o):
            q = b.op("arith.divf", [i[0], i[1]], work, _FM)
            return [q if work == e else b.op("arith.truncf", [q], e)]

        block = generic_body([exps, total], [t], divide)
        out = make_generic(rw, op, [exps, total], [full, part], [init], [full], parallel, block)
        rw.replace_op(op, out.results)
        return True


# ---- pack / unpack --------------------------------------------------------------------------------
def _tiling(op):
    """(source or dest of the unpacked shape, packed value, pad value, tiles by dim, inner dims,
    outer order), or None for dynamic tiles or shapes."""
    src, dest, pad, dynamic_tiles = pack_operands(op)
    if dynamic_tiles or not op.results or not all_static(src.type, dest.type):
        return None
    inner = _ints(op.attr("inner_dims_pos"))
    tiles = _ints(op.attr("static_inner_tiles"))
    unpacked = src if op.name == "linalg.pack" else dest
    outer = _ints(op.attr("outer_dims_perm")) or list(range(unpacked.type.rank))
    return src, dest, pad, dict(zip(inner, tiles)), inner, outer


class Pack(RewritePattern):
    """packed[o..., k...] = source[o(d) * tile(d) + k(d) for tiled d, o(d) otherwise], where
    packed outer dim j is source dim outer_dims_perm[j]; the padding value past the source."""
    ops = ("linalg.pack",)

    def match_and_rewrite(self, op, rw) -> bool:
        found = _tiling(op)
        if found is None:
            return False
        src, dest, pad, tile, inner, outer = found
        rank, t = src.type.rank, dest.type

        def body(b: Scalar, ins, outs):
            where, inside = [], None
            for d in range(rank):
                i = b.index(outer.index(d))
                if d in tile:
                    i = b.add(b.mul(i, b.c(tile[d])), b.index(rank + inner.index(d)))
                    size = src.type.shape[d]
                    if t.shape[outer.index(d)] * tile[d] > size:  # the last tile runs past the source
                        inside = b.and_(inside, b.cmpi(6, i, b.c(size)))  # ult
                        i = b.op("arith.minsi", [i, b.c(size - 1)], T.index)
                where.append(i)
            value = b.extract(src, where)
            if inside is None:
                return [value]
            if pad is None:
                return None  # MLIR leaves such tiles undefined: nothing to copy
            return [b.select(inside, value, pad)]

        block = generic_body([], [t], body)
        if block is None:
            return False
        out = make_generic(rw, op, [], [], [dest], [identity_map(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class Unpack(RewritePattern):
    """dest[i...] = packed[outer: i(d) / tile(d) or i(d), inner: i(d) % tile(d)]."""
    ops = ("linalg.unpack",)

    def match_and_rewrite(self, op, rw) -> bool:
        found = _tiling(op)
        if found is None:
            return False
        src, dest, _, tile, inner, outer = found
        t = dest.type

        def body(b: Scalar, ins, outs):
            quotient, remainder = {}, {}
            for d in range(t.rank):
                i = b.index(d)
                if d in tile:
                    quotient[d] = b.op("arith.divui", [i, b.c(tile[d])], T.index)
                    remainder[d] = b.op("arith.remui", [i, b.c(tile[d])], T.index)
                else:
                    quotient[d] = i
            return [b.extract(src, [quotient[d] for d in outer] + [remainder[d] for d in inner])]

        block = generic_body([], [t], body)
        out = make_generic(rw, op, [], [], [dest], [identity_map(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


# ---- static shapes ----------------------------------------------------------------------------------
def _constant_index(value):
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "arith.constant":
        return None
    attr = owner.attr("value")
    return attr.value if isinstance(attr, IntegerAttr) else None


def _cast(rw, before, value, t):
    return rw.create(before, "tensor.cast", [value], [t]).result


class StaticEmpty(RewritePattern):
    """tensor.empty(%c4, %c8) : tensor<?x?xf32> -> a static empty, cast to the dynamic type."""
    ops = ("tensor.empty",)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        sizes = [_constant_index(v) for v in op.operands]
        if not op.operands or not isinstance(t, T.RankedTensorType) or any(s is None or s < 0 for s in sizes):
            return False
        it = iter(sizes)
        static = T.RankedTensorType(tuple(next(it) if d is None else d for d in t.shape), t.element)
        new = rw.create(op, "tensor.empty", (), [static]).result
        rw.replace_op(op, [_cast(rw, op, new, t)])
        return True


def _more_static(value):
    """The static source of `value` when it is a tensor.cast that only forgets sizes."""
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "tensor.cast":
        return None
    src = owner.operand("source")
    if all_static(src.type) and not all_static(value.type) and src.type.rank == value.type.rank:
        return src
    return None


class CastIntoStructured(RewritePattern):
    """A linalg op reading a cast that forgot static sizes reads the static value instead;
    where that is an init, its result is static too (cast back for its users)."""
    ops = ()

    def match_and_rewrite(self, op, rw) -> bool:
        if op.dialect != "linalg" or op.name in ("linalg.yield", "linalg.index"):
            return False
        sources = [_more_static(v) for v in op.operands]
        if not any(sources):
            return False
        from ...dialects.linalg import segments
        _, inits = segments(op)
        first_init = len(op.operands) - len(inits)
        if len(op.results) not in (0, len(inits)):
            return False
        old_types = [r.type for r in op.results]
        new = Operation(op.name, [s or v for s, v in zip(sources, op.operands)],
                        [(sources[first_init + i] or op.operands[first_init + i]).type for i in range(len(op.results))],
                        dict(op.attributes), span=op.span, location=op.location,
                        property_names=op.property_names)
        new.name_span = op.name_span
        for region in list(op.regions):
            new.add_region(region)
        op.regions.clear()
        insert(rw, op, new)
        rw.replace_op(op, [r if r.type == old else _cast(rw, op, r, old) for r, old in zip(new.results, old_types)])
        return True


class FoldCasts(RewritePattern):
    """cast(cast(x)) -> cast(x), and a cast to x's own type -> x."""
    ops = ("tensor.cast",)

    def match_and_rewrite(self, op, rw) -> bool:
        src = op.operand("source")
        t = op.results[0].type
        if src.type == t:
            rw.replace_op(op, [src])
            return True
        owner = getattr(src, "op", None)
        if owner is not None and owner.name == "tensor.cast":
            inner = owner.operand("source")
            rw.replace_op(op, [inner if inner.type == t else _cast(rw, op, inner, t)])
            return True
        return False


PATTERNS = [StaticEmpty(), CastIntoStructured(), FoldCasts(), ElementwiseOnTensors(), Softmax(), Pack(), Unpack()]


def decompose(module: Operation) -> None:
    GreedyDriver(PATTERNS, fold=False).run(module)
