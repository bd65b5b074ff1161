"""hlo -> linalg for the data movement TOSA cannot express (exactly): pad with interior or
negative padding, strided slices, dynamic_slice / dynamic_update_slice (start indices clamped
as the spec says), `broadcast` and bitcast_convert between widths. Each becomes one `linalg.generic` that reads its operand
through an affine map where the access is affine, else with `tensor.extract` in the body.
"""
from __future__ import annotations

from ...dialects.hlo_attrs import int_list
from ...ir import types as T
from ...ir.attributes import IntegerAttr
from .build import empty, hlo_names
from .hlo_generic import HloLoweringPattern, affine_expr, identity_map, affine_map, generic_body, make_generic
from .hlo_scalar import Scalar, is_signless_int
from .hlo_unsigned import is_unsigned


# ---- data movement ----------------------------------------------------------------------------------
class Pad(HloLoweringPattern):
    """out[i] = x[(i - lo) / (interior + 1)] where that is a whole in-range index, else the pad value."""
    ops = hlo_names("pad")
    signless_safe = True

    def rewrite(self, op, rw) -> bool:
        x, value = op.operands
        t = op.results[0].type
        lo = int_list(op.attr("edge_padding_low"))
        interior = int_list(op.attr("interior_padding")) or [0] * t.rank
        if lo is None:
            return False
        shape = x.type.shape

        def body(b: Scalar, ins, outs):
            cond, where = None, []
            for d in range(t.rank):
                j = b.index(d)
                if lo[d]:
                    j = b.sub(j, b.c(lo[d]))
                step = interior[d] + 1
                if step != 1:
                    cond = b.and_(cond, b.cmpi(0, b.op("arith.remsi", [j, b.c(step)], T.index), b.c(0)))
                    j = b.op("arith.divsi", [j, b.c(step)], T.index)
                if lo[d] > 0 or step != 1:
                    cond = b.and_(cond, b.cmpi(5, j, b.c(0)))  # sge
                if lo[d] + (shape[d] - 1) * step + 1 < t.shape[d] or lo[d] < 0 or step != 1:
                    cond = b.and_(cond, b.cmpi(2, j, b.c(shape[d])))  # slt
                where.append(j)
            if cond is None:
                return [b.extract(x, where)]
            where = [b.clamp(j, 0, n - 1) for j, n in zip(where, shape)]
            return [b.select(cond, b.extract(x, where), ins[0])]

        block = generic_body([value], [t], body)
        out = make_generic(rw, op, [value], [affine_map(t.rank, [])], [empty(rw, op, t)], [identity_map(t.rank)],
                           ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class StridedSlice(HloLoweringPattern):
    """A slice TOSA has no form for (strides): an affine read of the operand."""
    ops = hlo_names("slice")
    signless_safe = True

    def rewrite(self, op, rw) -> bool:
        x = op.operand("operand")
        t = op.results[0].type
        start = int_list(op.attr("start_indices"))
        strides = int_list(op.attr("strides")) or [1] * t.rank
        if start is None:
            return False
        in_map = affine_map(t.rank, [affine_expr(f"d{d}", strides[d], start[d]) for d in range(t.rank)])
        block = generic_body([x], [t], lambda b, i, o: [i[0]])
        out = make_generic(rw, op, [x], [in_map], [empty(rw, op, t)], [identity_map(t.rank)],
                           ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


def _start_indices(rw, op, starts, limits):
    """Scalar index values of 0-d start tensors, clamped into [0, limit] (the spec's clamp)."""
    out = []
    for s, limit in zip(starts, limits):
        v = rw.create(op, "tensor.extract", [s], [s.type.element]).result
        v = rw.create(op, "arith.index_cast", [v], [T.index]).result
        zero = rw.create(op, "arith.constant", [], [T.index], {"value": IntegerAttr(0, T.index)}).result
        top = rw.create(op, "arith.constant", [], [T.index], {"value": IntegerAttr(limit, T.index)}).result
        v = rw.create(op, "arith.maxsi", [v, zero], [T.index]).result
        out.append(rw.create(op, "arith.minsi", [v, top], [T.index]).result)
    return out


class DynamicSlice(HloLoweringPattern):
    ops = hlo_names("dynamic_slice")

    def signless_keeps_meaning(self, op) -> bool:
        return not any(is_unsigned(v.type) for v in op.operands[1:])  # indices: index_cast reads them signed

    def rewrite(self, op, rw) -> bool:
        x, *starts = op.operands
        t = op.results[0].type
        if len(starts) != t.rank or not all(is_signless_int(s.type.element) for s in starts):
            return False
        offsets = _start_indices(rw, op, starts, [n - m for n, m in zip(x.type.shape, t.shape)])
        block = generic_body([], [t], lambda b, i, o: [b.extract(x, [b.add(b.index(d), offsets[d])
                                                                     for d in range(t.rank)])])
        out = make_generic(rw, op, [], [], [empty(rw, op, t)], [identity_map(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class DynamicUpdateSlice(HloLoweringPattern):
    ops = hlo_names("dynamic_update_slice")

    def signless_keeps_meaning(self, op) -> bool:
        return not any(is_unsigned(v.type) for v in op.operands[2:])  # indices: index_cast reads them signed

    def rewrite(self, op, rw) -> bool:
        x, update, *starts = op.operands
        t = op.results[0].type
        if len(starts) != t.rank or not all(is_signless_int(s.type.element) for s in starts):
            return False
        ushape = update.type.shape
        offsets = _start_indices(rw, op, starts, [n - m for n, m in zip(t.shape, ushape)])

        def body(b: Scalar, ins, outs):
            cond, where = None, []
            for d in range(t.rank):
                j = b.sub(b.index(d), offsets[d])
                cond = b.and_(cond, b.and_(b.cmpi(5, j, b.c(0)), b.cmpi(2, j, b.c(ushape[d]))))
                where.append(b.clamp(j, 0, ushape[d] - 1))
            if cond is None:
                return [b.extract(update, [])]
            return [b.select(cond, b.extract(update, where), ins[0])]

        block = generic_body([x], [t], body)
        out = make_generic(rw, op, [x], [identity_map(t.rank)], [empty(rw, op, t)], [identity_map(t.rank)],
                           ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class Broadcast(HloLoweringPattern):
    """`broadcast`: the operand's dims are the result's trailing ones."""
    ops = hlo_names("broadcast")
    signless_safe = True

    def rewrite(self, op, rw) -> bool:
        x = op.operand("operand")
        t = op.results[0].type
        lead = t.rank - x.type.rank
        block = generic_body([x], [t], lambda b, i, o: [i[0]])
        out = make_generic(rw, op, [x], [affine_map(t.rank, [f"d{lead + d}" for d in range(x.type.rank)])],
                           [empty(rw, op, t)], [identity_map(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


def _bit_width(t: T.Type):
    if isinstance(t, T.IntegerType):
        return t.width
    return T.FLOAT_WIDTHS.get(t.name) if isinstance(t, T.FloatType) and t.name in ("f16", "bf16", "f32", "f64") \
        else None


def _as_bits(b: Scalar, x):
    """The bits of scalar `x` as a signless integer of its width."""
    return x if isinstance(x.type, T.IntegerType) else b.op("arith.bitcast", [x], T.IntegerType(_bit_width(x.type)))


def _from_bits(b: Scalar, bits, t: T.Type):
    return bits if isinstance(t, T.IntegerType) else b.op("arith.bitcast", [bits], t)


class BitcastConvertWidths(HloLoweringPattern):
    """bitcast_convert between element widths, little-endian as the interpreter reads it: a wide
    element packs the last dimension's narrow ones (the k-th at bit k * width), and a narrow
    result's last dimension takes the wide element's pieces, lowest first (i1 is one bit)."""
    ops = hlo_names("bitcast_convert")
    signless_safe = True

    def rewrite(self, op, rw) -> bool:
        x = op.operand("operand")
        t = op.results[0].type
        w_in, w_out = _bit_width(x.type.element), _bit_width(t.element)
        if w_in is None or w_out is None or w_in == w_out:
            return False  # same widths: an elementwise arith.bitcast (hlo_to_linalg)
        if w_in < w_out:
            return self.pack(op, rw, x, t, w_in, w_out)
        return self.unpack(op, rw, x, t, w_in, w_out)

    @staticmethod
    def pack(op, rw, x, t, w_in, w_out) -> bool:
        if w_out % w_in or x.type.rank != t.rank + 1 or x.type.shape[-1] * w_in != w_out:
            return False
        wide = T.IntegerType(w_out)
        acc_type = T.RankedTensorType(t.shape, wide)

        def body(b: Scalar, ins, outs):
            piece = b.op("arith.extui", [_as_bits(b, ins[0])], wide)
            k = b.op("arith.index_cast", [b.index(t.rank)], wide)
            shifted = b.op("arith.shli", [piece, b.op("arith.muli", [k, b.const(w_in, wide)], wide)], wide)
            return [b.op("arith.ori", [outs[0], shifted], wide)]

        from ...dialects.linalg import structured_op
        from .build import insert
        zero = rw.create(op, "arith.constant", [], [wide], {"value": IntegerAttr(0, wide)}).result
        init = insert(rw, op, structured_op("linalg.fill", [zero], [empty(rw, op, acc_type)])).result
        loops = x.type.rank
        packed = make_generic(rw, op, [x], [identity_map(loops)], [init], [affine_map(loops, [f"d{d}" for d in range(t.rank)])],
                              ["parallel"] * t.rank + ["reduction"], generic_body([x], [acc_type], body)).result
        if t.element != wide:
            block = generic_body([acc_type], [t], lambda b, i, o: [_from_bits(b, i[0], t.element)])
            packed = make_generic(rw, op, [packed], [identity_map(t.rank)], [empty(rw, op, t)], [identity_map(t.rank)],
                                  ["parallel"] * t.rank, block).result
        rw.replace_op(op, [packed])
        return True

    @staticmethod
    def unpack(op, rw, x, t, w_in, w_out) -> bool:
        if w_in % w_out or t.rank != x.type.rank + 1 or t.shape[-1] * w_out != w_in:
            return False
        wide, narrow = T.IntegerType(w_in), T.IntegerType(w_out)

        def body(b: Scalar, ins, outs):
            k = b.op("arith.index_cast", [b.index(x.type.rank)], wide)
            shift = b.op("arith.muli", [k, b.const(w_out, wide)], wide)
            piece = b.op("arith.trunci", [b.op("arith.shrui", [_as_bits(b, ins[0]), shift], wide)], narrow)
            return [_from_bits(b, piece, t.element)]

        in_map = affine_map(t.rank, [f"d{d}" for d in range(x.type.rank)])
        out = make_generic(rw, op, [x], [in_map], [empty(rw, op, t)], [identity_map(t.rank)], ["parallel"] * t.rank,
                           generic_body([x], [t], body))
        rw.replace_op(op, out.results)
        return True


PATTERNS = [Pad(), StridedSlice(), DynamicSlice(), DynamicUpdateSlice(), Broadcast(), BitcastConvertWidths()]
