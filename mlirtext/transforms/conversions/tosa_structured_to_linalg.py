"""tosa -> linalg for the structured and control-flow ops: max_pool2d, pad, gather,
while_loop and cond_if.

`max_pool2d` pads with the lowest value (as TOSA defines it) and reduces each
window with a generic whose window extent comes from a `tensor.empty` of the
kernel's shape (linalg's pooling form, spelled as a generic); `pad` and
`gather` read their input with `tensor.extract` at computed indices; the
control-flow ops become `scf.while` / `scf.if` on the same tensors.
Registered into convert-tosa-to-linalg after the other TOSA patterns.
"""
from __future__ import annotations

from ...dialects.hlo_attrs import int_list
from ...ir import types as T
from ...ir.attributes import FloatAttr, IntegerAttr
from ...ir.core import Block, Operation, Region
from ..rewriter import RewritePattern
from .build import all_static, empty, insert
from .hlo_structured_to_linalg import (_FM, Scalar, _identity, _map, generic_body, make_generic,
                                       _extract_scalar)


def _shape_values(value):
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "tosa.const_shape":
        return None
    return int_list(owner.attributes.get("values"))


def _lowest(t: T.Type):
    if T.is_float(t):
        return float("-inf")
    return -(1 << (t.width - 1)) if t != T.i1 else 0


def _scalar_const(rw, before, value, t):
    attr = FloatAttr(float(value), t) if T.is_float(t) else IntegerAttr(int(value), t)
    return rw.create(before, "arith.constant", (), [t], {"value": attr}).result


def padded(rw, op, x, lo, hi, value):
    """`x` padded by `lo` / `hi` per dim (non-negative) with scalar `value`: a generic that
    reads x where the index falls inside it."""
    shape = x.type.shape
    t = T.RankedTensorType(tuple(s + a + b for s, a, b in zip(shape, lo, hi)), x.type.element)

    def body(b: Scalar, ins, outs):
        cond, where = None, []
        for d in range(t.rank):
            j = b.index(d)
            if lo[d] or hi[d]:
                j = b.sub(j, b.c(lo[d]))
                cond = b.and_(cond, b.and_(b.cmpi(5, j, b.c(0)), b.cmpi(2, j, b.c(shape[d]))))
                j = b.clamp(j, 0, shape[d] - 1)
            where.append(j)
        v = b.extract(x, where)
        return [v if cond is None else b.select(cond, v, value)]

    block = generic_body([], [t], body)
    return make_generic(rw, op, [], [], [empty(rw, op, t)], [_identity(t.rank)], ["parallel"] * t.rank,
                        block).result


class Pad(RewritePattern):
    ops = ("tosa.pad",)

    def match_and_rewrite(self, op, rw) -> bool:
        x, shape, pad_const = op.operands
        t = op.results[0].type
        pads = _shape_values(shape)
        if pads is None or not all_static(x.type, t, pad_const.type) or any(p < 0 for p in pads) or 0 in x.type.shape:
            return False
        zero = rw.create(op, "arith.constant", (), [T.index], {"value": IntegerAttr(0, T.index)}).result
        index = [zero] * pad_const.type.rank
        value = rw.create(op, "tensor.extract", [pad_const, *index], [t.element]).result
        rw.replace_op(op, [padded(rw, op, x, pads[0::2], pads[1::2], value)])
        return True


class MaxPool2d(RewritePattern):
    ops = ("tosa.max_pool2d",)

    def match_and_rewrite(self, op, rw) -> bool:
        x = op.operands[0]
        t = op.results[0].type
        kernel = int_list(op.attributes.get("kernel"))
        stride = int_list(op.attributes.get("stride"))
        pad = int_list(op.attributes.get("pad")) or [0, 0, 0, 0]
        e = t.element
        if kernel is None or stride is None or not all_static(x.type, t) or "IGNORE" in str(op.attributes.get("nan_mode", "")):
            return False
        if not (T.is_float(e) or isinstance(e, T.IntegerType) and e.is_signless and e != T.i1):
            return False
        lowest = _lowest(e)

        def body(b: Scalar, ins, outs):
            if T.is_float(e):
                return [b.op("arith.maximumf", [outs[0], ins[1]], e, _FM)]
            return [b.op("arith.maxsi", [outs[0], ins[1]], e)]

        wt = T.RankedTensorType(tuple(kernel), T.i1)
        block = generic_body([wt, x], [t], body)
        if any(pad):
            x = padded(rw, op, x, [0, pad[0], pad[2], 0], [0, pad[1], pad[3], 0], _scalar_const(rw, op, lowest, e))
        from ...dialects.linalg import structured_op
        init = insert(rw, op, structured_op("linalg.fill", [_scalar_const(rw, op, lowest, e)],
                                            [empty(rw, op, t)])).result
        in_map = _map(6, ["d0", f"d1 * {stride[0]} + d4", f"d2 * {stride[1]} + d5", "d3"])
        out = make_generic(rw, op, [empty(rw, op, wt), x], [_map(6, ["d4", "d5"]), in_map], [init],
                           [_map(6, ["d0", "d1", "d2", "d3"])], ["parallel"] * 4 + ["reduction"] * 2, block)
        rw.replace_op(op, out.results)
        return True


class Gather(RewritePattern):
    """out[n, w, c] = values[n, indices[n, w], c]."""
    ops = ("tosa.gather",)

    def match_and_rewrite(self, op, rw) -> bool:
        values, indices = op.operands
        t = op.results[0].type
        if not all_static(values.type, indices.type, t):
            return False

        def body(b: Scalar, ins, outs):
            k = b.to_index(ins[0])
            return [b.extract(values, [b.index(0), k, b.index(2)])]

        block = generic_body([indices], [t], body)
        out = make_generic(rw, op, [indices], [_map(3, ["d0", "d1"])], [empty(rw, op, t)], [_identity(3)],
                           ["parallel"] * 3, block)
        rw.replace_op(op, out.results)
        return True


def _moved(block: Block, terminator) -> Block:
    """A copy of TOSA region `block` with its `tosa.yield` replaced by `terminator(new, values)`."""
    new = Block([a.type for a in block.arguments])
    mapping = dict(zip(block.arguments, new.arguments))
    for a, b in zip(block.arguments, new.arguments):
        b.name = a.name
    for op in block.ops:
        if op.name == "tosa.yield":
            terminator(new, [mapping.get(v, v) for v in op.operands])
            return new
        new.append(op.clone(mapping))
    return None


class WhileLoop(RewritePattern):
    ops = ("tosa.while_loop",)

    def match_and_rewrite(self, op, rw) -> bool:
        if len(op.regions) != 2 or not all(len(r.blocks) == 1 for r in op.regions):
            return False

        def condition(block, values):
            flag = _extract_scalar(block, values[0])
            block.append(Operation("scf.condition", [flag, *block.arguments], []))

        def step(block, values):
            block.append(Operation("scf.yield", list(values), []))

        before = _moved(op.regions[0].blocks[0], condition)
        after = _moved(op.regions[1].blocks[0], step)
        if before is None or after is None:
            return False
        new = rw.create(op, "scf.while", op.operands, [r.type for r in op.results],
                        regions=[Region([before]), Region([after])])
        rw.replace_op(op, new.results)
        return True


class CondIf(RewritePattern):
    """`scf.if`; region arguments (TOSA's input list) are the op's other operands."""
    ops = ("tosa.cond_if",)

    def match_and_rewrite(self, op, rw) -> bool:
        if len(op.regions) != 2 or not all(len(r.blocks) == 1 for r in op.regions):
            return False
        cond, *inputs = op.operands
        branches = []
        for region in op.regions:
            old = region.blocks[0]
            if len(old.arguments) != len(inputs):
                return False
            new = Block()
            mapping = dict(zip(old.arguments, inputs))
            for inner in old.ops:
                if inner.name == "tosa.yield":
                    new.append(Operation("scf.yield", [mapping.get(v, v) for v in inner.operands], []))
                    break
                new.append(inner.clone(mapping))
            else:
                return False
            branches.append(new)
        flag = _extract_scalar(rw, cond, op)
        new = rw.create(op, "scf.if", [flag], [r.type for r in op.results],
                        regions=[Region([branches[0]]), Region([branches[1]])])
        rw.replace_op(op, new.results)
        return True


class Table(RewritePattern):
    """i8: out = table[x + 128]; i16: the entry at the top 9 bits of x + 32768 and the next
    one, interpolated by the low 7 bits (TOSA's TABLE), in i32."""
    ops = ("tosa.table",)

    def match_and_rewrite(self, op, rw) -> bool:
        x, table = op.operands
        t = op.results[0].type
        if not all_static(x.type, table.type, t) or x.type.element not in (T.i8, T.i16):
            return False
        n = table.type.shape[0]
        wide = x.type.element == T.i16

        def body(b: Scalar, ins, outs):
            v = b.op("arith.extsi", [ins[0]], T.i64)
            if not wide:
                at = b.to_index(b.add(v, b.const(128, T.i64)))
                return [_cast_int(b, b.extract(table, [at]), t.element)]
            u = b.add(v, b.const(32768, T.i64))
            index = b.op("arith.shrsi", [u, b.const(7, T.i64)], T.i64)
            fraction = b.op("arith.andi", [v, b.const(0x7F, T.i64)], T.i64)
            i = b.to_index(index)
            nxt = b.op("arith.minsi", [b.add(i, b.c(1)), b.c(n - 1)], T.index)
            base = b.op("arith.extsi", [b.extract(table, [i])], T.i64)
            after = b.op("arith.extsi", [b.extract(table, [nxt])], T.i64)
            out = b.add(b.op("arith.shli", [base, b.const(7, T.i64)], T.i64),
                        b.mul(b.sub(after, base), fraction))
            return [_cast_int(b, out, t.element)]

        block = generic_body([x], [t], body)
        out = make_generic(rw, op, [x], [_identity(t.rank)], [empty(rw, op, t)], [_identity(t.rank)],
                           ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


def _cast_int(b: Scalar, v, t):
    if v.type == t:
        return v
    return b.op("arith.extsi" if v.type.width < t.width else "arith.trunci", [v], t)


def _zero_point(value) -> bool:
    from ...dialects.common import splat_value
    from ..constants import constant_value
    return splat_value(constant_value(value)) == 0


def _mul_add(b: Scalar, acc, x, w):
    e = acc.type
    x, w = _widen(b, x, e), _widen(b, w, e)
    if T.is_float(e):
        return b.op("arith.addf", [acc, b.op("arith.mulf", [x, w], e, _FM)], e, _FM)
    return b.op("arith.addi", [acc, b.op("arith.muli", [x, w], e)], e)


def _widen(b: Scalar, v, e):
    if v.type == e:
        return v
    if T.is_float(e):
        return b.op("arith.extf", [v], e)
    return b.op("arith.extsi", [v], e)


class Conv2d(RewritePattern):
    """NHWC input, OHWI weights: the bias broadcast as the init, then one reduction generic over
    (n, oh, ow, o, kh, kw, i) on the zero-padded input (zero points must be zero)."""
    ops = ("tosa.conv2d", "tosa.depthwise_conv2d")

    def match_and_rewrite(self, op, rw) -> bool:
        x, w, bias, x_zp, w_zp = op.operands
        t = op.results[0].type
        pad = int_list(op.attributes.get("pad")) or [0, 0, 0, 0]
        stride = int_list(op.attributes.get("stride")) or [1, 1]
        dil = int_list(op.attributes.get("dilation")) or [1, 1]
        e = t.element
        if not all_static(x.type, w.type, bias.type, t) or not (_zero_point(x_zp) and _zero_point(w_zp)):
            return False
        if not (T.is_float(e) or isinstance(e, T.IntegerType) and e.is_signless and e != T.i1):
            return False
        if T.is_float(e) != T.is_float(x.type.element) or T.is_float(e) != T.is_float(w.type.element):
            return False
        depthwise = op.name == "tosa.depthwise_conv2d"
        if depthwise:
            kh, kw, c, m = w.type.shape
            acc_t = T.RankedTensorType((*t.shape[:3], c, m), e)
            # loops (n, oh, ow, c, m, kh, kw)
            in_map = _map(7, ["d0", f"d1 * {stride[0]} + d5 * {dil[0]}", f"d2 * {stride[1]} + d6 * {dil[1]}", "d3"])
            w_map = _map(7, ["d5", "d6", "d3", "d4"])
            out_map = _map(7, ["d0", "d1", "d2", "d3", "d4"])
            bias_map = _map(5, ["0" if bias.type.shape[0] == 1 else "d3 * %d + d4" % m])
            kinds = ["parallel"] * 5 + ["reduction"] * 2
        else:
            acc_t = t
            in_map = _map(7, ["d0", f"d1 * {stride[0]} + d4 * {dil[0]}", f"d2 * {stride[1]} + d5 * {dil[1]}", "d6"])
            w_map = _map(7, ["d3", "d4", "d5", "d6"])
            out_map = _map(7, ["d0", "d1", "d2", "d3"])
            bias_map = _map(4, ["0" if bias.type.shape[0] == 1 else "d3"])
            kinds = ["parallel"] * 4 + ["reduction"] * 3
        block = generic_body([x, w], [acc_t], lambda b, i, o: [_mul_add(b, o[0], i[0], i[1])])
        init_block = generic_body([bias], [acc_t], lambda b, i, o: [_widen(b, i[0], e)])
        if any(pad):
            x = padded(rw, op, x, [0, pad[0], pad[2], 0], [0, pad[1], pad[3], 0],
                       _scalar_const(rw, op, 0, x.type.element))
        init = make_generic(rw, op, [bias], [bias_map], [empty(rw, op, acc_t)], [_identity(acc_t.rank)],
                            ["parallel"] * acc_t.rank, init_block).result
        out = make_generic(rw, op, [x, w], [in_map, w_map], [init], [out_map], kinds, block).result
        if depthwise:
            from ...ir.attributes import ArrayAttr
            groups = ArrayAttr(tuple(ArrayAttr(tuple(IntegerAttr(i) for i in g)) for g in ([0], [1], [2], [3, 4])))
            out = rw.create(op, "tensor.collapse_shape", [out], [t], {"reassociation": groups}).result
        rw.replace_op(op, [out])
        return True


PATTERNS = [Pad(), MaxPool2d(), Gather(), WhileLoop(), CondIf(), Table(), Conv2d()]
