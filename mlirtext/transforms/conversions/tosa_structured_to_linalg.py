"""tosa -> linalg for the structured and control-flow ops: max_pool2d, avg_pool2d, conv2d,
depthwise_conv2d, conv3d, transpose_conv2d, pad, gather, table, while_loop and cond_if.

`avg_pool2d` and `conv3d` use linalg's named ops (`pooling_nhwc_sum`,
`conv_3d_ndhwc_dhwcf`) as MLIR's tosa-to-linalg does; `transpose_conv2d` is one
reduction generic over the output that reads the input where the stride lands.

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
from ...ir.arrays import array_to_attr
from ...ir.attributes import FloatAttr, IntegerAttr
from ...ir.core import Block, Operation, Region
from ..rewriter import RewritePattern
from .build import all_static, empty, insert
from .hlo_control_to_scf import extract_scalar
from .hlo_generic import identity_map, affine_map, generic_body, make_generic
from .hlo_scalar import NO_FASTMATH, Scalar


def _shape_values(value):
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "tosa.const_shape":
        return None
    return int_list(owner.attr("values"))


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
    return make_generic(rw, op, [], [], [empty(rw, op, t)], [identity_map(t.rank)], ["parallel"] * t.rank,
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
        x = op.operand("input")
        t = op.results[0].type
        kernel = int_list(op.attr("kernel"))
        stride = int_list(op.attr("stride"))
        pad = int_list(op.attr("pad")) or [0, 0, 0, 0]
        e = t.element
        if kernel is None or stride is None or not all_static(x.type, t) or "IGNORE" in str(op.attr("nan_mode")):
            return False
        if not (T.is_float(e) or isinstance(e, T.IntegerType) and e.is_signless and e != T.i1):
            return False
        lowest = _lowest(e)

        def body(b: Scalar, ins, outs):
            if T.is_float(e):
                return [b.op("arith.maximumf", [outs[0], ins[1]], e, NO_FASTMATH)]
            return [b.op("arith.maxsi", [outs[0], ins[1]], e)]

        wt = T.RankedTensorType(tuple(kernel), T.i1)
        block = generic_body([wt, x], [t], body)
        if any(pad):
            x = padded(rw, op, x, [0, pad[0], pad[2], 0], [0, pad[1], pad[3], 0], _scalar_const(rw, op, lowest, e))
        from ...dialects.linalg import structured_op
        init = insert(rw, op, structured_op("linalg.fill", [_scalar_const(rw, op, lowest, e)],
                                            [empty(rw, op, t)])).result
        in_map = affine_map(6, ["d0", f"d1 * {stride[0]} + d4", f"d2 * {stride[1]} + d5", "d3"])
        out = make_generic(rw, op, [empty(rw, op, wt), x], [affine_map(6, ["d4", "d5"]), in_map], [init],
                           [affine_map(6, ["d0", "d1", "d2", "d3"])], ["parallel"] * 4 + ["reduction"] * 2, block)
        rw.replace_op(op, out.results)
        return True


def _i64_dense(values):
    """`dense<[...]> : tensor<Nxi64>`, as linalg's conv / pooling ops hold strides and dilations."""
    import numpy as np
    return array_to_attr(np.array(values, np.int64), T.RankedTensorType((len(values),), T.i64))


def _splat_int(value):
    from ...dialects.common import splat_value
    from ..constants import constant_value
    found = splat_value(constant_value(value))
    return None if found is None else int(found)


class AvgPool2d(RewritePattern):
    """As MLIR's tosa-to-linalg: the zero-padded input summed over each window by
    `linalg.pooling_nhwc_sum` in the accumulator type, then divided by the number of
    window elements inside the unpadded input (counted from the output index). Integers
    subtract the input zero point per counted element and divide as TOSA's
    reciprocal_scale / apply_scale_32 do, then add the output zero point and clamp."""
    ops = ("tosa.avg_pool2d",)

    def match_and_rewrite(self, op, rw) -> bool:
        x, x_zp, out_zp = op.operands
        t = op.results[0].type
        kernel, stride = int_list(op.attr("kernel")), int_list(op.attr("stride"))
        pad = int_list(op.attr("pad")) or [0, 0, 0, 0]
        acc = op.attr("acc_type").type
        e = t.element
        if kernel is None or stride is None or not all_static(x.type, t):
            return False
        integer = not T.is_float(e)
        zps = (_splat_int(x_zp), _splat_int(out_zp)) if integer else (0, 0)
        if integer and (None in zps or not (isinstance(acc, T.IntegerType) and acc.width == 32)):
            return False
        from ...dialects.linalg import structured_op
        if any(pad):
            x = padded(rw, op, x, [0, pad[0], pad[2], 0], [0, pad[1], pad[3], 0],
                       _scalar_const(rw, op, 0, x.type.element))
        acc_t = T.RankedTensorType(t.shape, acc)
        init = insert(rw, op, structured_op("linalg.fill", [_scalar_const(rw, op, 0, acc)],
                                            [empty(rw, op, acc_t)])).result
        window = empty(rw, op, T.RankedTensorType(tuple(kernel), acc))
        sums = insert(rw, op, structured_op("linalg.pooling_nhwc_sum", [x, window], [init],
                                            {"strides": _i64_dense(stride), "dilations": _i64_dense([1, 1])})).result
        sizes = op.operand("input").type.shape[1:3]

        def count(b: Scalar):
            """Window elements inside the input at this output position (index)."""
            total = None
            for j in range(2):
                start = b.sub(b.mul(b.index(1 + j), b.c(stride[j])), b.c(pad[2 * j]))
                end = b.add(start, b.c(kernel[j]))
                inside = b.sub(b.op("arith.minsi", [end, b.c(sizes[j])], T.index),
                               b.op("arith.maxsi", [start, b.c(0)], T.index))
                total = inside if total is None else b.mul(total, inside)
            return total

        def body(b: Scalar, ins, outs):
            n = count(b)
            if not integer:
                size = b.op("arith.sitofp", [b.op("arith.index_cast", [n], T.i64)], acc)
                q = b.op("arith.divf", [ins[0], size], acc, NO_FASTMATH)
                return [q if acc == e else b.op("arith.truncf", [q], e)]
            n64 = b.op("arith.index_cast", [n], T.i64)
            total = b.op("arith.extsi", [ins[0]], T.i64)
            if zps[0]:
                total = b.op("arith.subi", [total, b.op("arith.muli", [n64, b.const(zps[0], T.i64)], T.i64)], T.i64)
            total = _wrap32(b, total)
            # reciprocal_scale(n): k = 32 - clz(n - 1), multiplier = ((1 << 30) + 1 << k) / n, shift = 30 + k
            nm1 = b.op("arith.trunci", [b.op("arith.subi", [n64, b.const(1, T.i64)], T.i64)], T.i32)
            k = b.op("arith.subi", [b.const(32, T.i64), b.op("arith.extui", [b.op("math.ctlz", [nm1], T.i32)],
                                                                 T.i64)], T.i64)
            multiplier = b.op("arith.divsi", [b.op("arith.shli", [b.const((1 << 30) + 1, T.i64), k], T.i64), n64],
                              T.i64)
            shift = b.op("arith.addi", [b.const(30, T.i64), k], T.i64)
            rounding = b.op("arith.shli", [b.const(1, T.i64), b.op("arith.subi", [shift, b.const(1, T.i64)], T.i64)],
                            T.i64)
            scaled = b.op("arith.shrsi", [b.op("arith.addi", [b.op("arith.muli", [total, multiplier], T.i64),
                                                              rounding], T.i64), shift], T.i64)
            value = b.op("arith.addi", [_wrap32(b, scaled), b.const(zps[1], T.i64)], T.i64)
            low, high = -(1 << (e.width - 1)), (1 << (e.width - 1)) - 1
            value = b.op("arith.minsi", [b.op("arith.maxsi", [value, b.const(low, T.i64)], T.i64),
                                         b.const(high, T.i64)], T.i64)
            return [b.op("arith.trunci", [value], e)]

        block = generic_body([acc_t], [t], body)
        out = make_generic(rw, op, [sums], [identity_map(4)], [empty(rw, op, t)], [identity_map(4)], ["parallel"] * 4,
                           block)
        rw.replace_op(op, out.results)
        return True


def _wrap32(b: Scalar, v):
    """An i64 value wrapped to i32 and sign-extended back (TOSA's acc_t is i32)."""
    return b.op("arith.extsi", [b.op("arith.trunci", [v], T.i32)], T.i64)


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
        out = make_generic(rw, op, [indices], [affine_map(3, ["d0", "d1"])], [empty(rw, op, t)], [identity_map(3)],
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
            flag = extract_scalar(block, values[0])
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
        flag = extract_scalar(rw, cond, op)
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
        out = make_generic(rw, op, [x], [identity_map(t.rank)], [empty(rw, op, t)], [identity_map(t.rank)],
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
        return b.op("arith.addf", [acc, b.op("arith.mulf", [x, w], e, NO_FASTMATH)], e, NO_FASTMATH)
    return b.op("arith.addi", [acc, b.op("arith.muli", [x, w], e)], e)


def _widen(b: Scalar, v, e):
    if v.type == e:
        return v
    if T.is_float(e):
        return b.op("arith.extf", [v], e)
    return b.op("arith.extsi", [v], e)


def _convolution_lowers(x, w, bias, x_zp, w_zp, t) -> bool:
    """Static shapes, zero points of zero, and one element kind throughout: float, or a signless
    integer wider than i1."""
    e = t.element
    if not all_static(x.type, w.type, bias.type, t) or not (_zero_point(x_zp) and _zero_point(w_zp)):
        return False
    if not (T.is_float(e) or isinstance(e, T.IntegerType) and e.is_signless and e != T.i1):
        return False
    return T.is_float(e) == T.is_float(x.type.element) == T.is_float(w.type.element)


class Conv2d(RewritePattern):
    """NHWC input, OHWI weights: the bias broadcast as the init, then one reduction generic over
    (n, oh, ow, o, kh, kw, i) on the zero-padded input (zero points must be zero)."""
    ops = ("tosa.conv2d", "tosa.depthwise_conv2d")

    def match_and_rewrite(self, op, rw) -> bool:
        x, w, bias, x_zp, w_zp = op.operands
        t = op.results[0].type
        pad = int_list(op.attr("pad")) or [0, 0, 0, 0]
        stride = int_list(op.attr("stride")) or [1, 1]
        dil = int_list(op.attr("dilation")) or [1, 1]
        e = t.element
        if not _convolution_lowers(x, w, bias, x_zp, w_zp, t):
            return False
        depthwise = op.name == "tosa.depthwise_conv2d"
        if depthwise:
            kh, kw, c, m = w.type.shape
            acc_t = T.RankedTensorType((*t.shape[:3], c, m), e)
            # loops (n, oh, ow, c, m, kh, kw)
            in_map = affine_map(7, ["d0", f"d1 * {stride[0]} + d5 * {dil[0]}", f"d2 * {stride[1]} + d6 * {dil[1]}", "d3"])
            w_map = affine_map(7, ["d5", "d6", "d3", "d4"])
            out_map = affine_map(7, ["d0", "d1", "d2", "d3", "d4"])
            bias_map = affine_map(5, ["0" if bias.type.shape[0] == 1 else "d3 * %d + d4" % m])
            kinds = ["parallel"] * 5 + ["reduction"] * 2
        else:
            acc_t = t
            in_map = affine_map(7, ["d0", f"d1 * {stride[0]} + d4 * {dil[0]}", f"d2 * {stride[1]} + d5 * {dil[1]}", "d6"])
            w_map = affine_map(7, ["d3", "d4", "d5", "d6"])
            out_map = affine_map(7, ["d0", "d1", "d2", "d3"])
            bias_map = affine_map(4, ["0" if bias.type.shape[0] == 1 else "d3"])
            kinds = ["parallel"] * 4 + ["reduction"] * 3
        block = generic_body([x, w], [acc_t], lambda b, i, o: [_mul_add(b, o[0], i[0], i[1])])
        init_block = generic_body([bias], [acc_t], lambda b, i, o: [_widen(b, i[0], e)])
        if any(pad):
            x = padded(rw, op, x, [0, pad[0], pad[2], 0], [0, pad[1], pad[3], 0],
                       _scalar_const(rw, op, 0, x.type.element))
        init = make_generic(rw, op, [bias], [bias_map], [empty(rw, op, acc_t)], [identity_map(acc_t.rank)],
                            ["parallel"] * acc_t.rank, init_block).result
        out = make_generic(rw, op, [x, w], [in_map, w_map], [init], [out_map], kinds, block).result
        if depthwise:
            from ...ir.attributes import ArrayAttr
            groups = ArrayAttr(tuple(ArrayAttr(tuple(IntegerAttr(i) for i in g)) for g in ([0], [1], [2], [3, 4])))
            out = rw.create(op, "tensor.collapse_shape", [out], [t], {"reassociation": groups}).result
        rw.replace_op(op, [out])
        return True


class Conv3d(RewritePattern):
    """As MLIR's tosa-to-linalg: weights (O, D, H, W, I) transposed to (D, H, W, I, O), the bias
    broadcast as the init, and `linalg.conv_3d_ndhwc_dhwcf` on the zero-padded input (zero
    points must be zero)."""
    ops = ("tosa.conv3d",)

    def match_and_rewrite(self, op, rw) -> bool:
        x, w, bias, x_zp, w_zp = op.operands
        t = op.results[0].type
        pad = int_list(op.attr("pad")) or [0] * 6
        stride = int_list(op.attr("stride")) or [1, 1, 1]
        dil = int_list(op.attr("dilation")) or [1, 1, 1]
        e = t.element
        if not _convolution_lowers(x, w, bias, x_zp, w_zp, t):
            return False
        from ...dialects.linalg import structured_op
        from .tosa_to_linalg import i64_array
        o, kd, kh, kw, i = w.type.shape
        wt = T.RankedTensorType((kd, kh, kw, i, o), w.type.element)
        w = insert(rw, op, structured_op("linalg.transpose", [w], [empty(rw, op, wt)],
                                         {"permutation": i64_array([1, 2, 3, 4, 0])})).result
        if any(pad):
            x = padded(rw, op, x, [0, pad[0], pad[2], pad[4], 0], [0, pad[1], pad[3], pad[5], 0],
                       _scalar_const(rw, op, 0, x.type.element))
        bias_map = affine_map(5, ["0" if bias.type.shape[0] == 1 else "d4"])
        init_block = generic_body([bias], [t], lambda b, i, o: [_widen(b, i[0], e)])
        init = make_generic(rw, op, [bias], [bias_map], [empty(rw, op, t)], [identity_map(5)], ["parallel"] * 5,
                            init_block).result
        out = insert(rw, op, structured_op("linalg.conv_3d_ndhwc_dhwcf", [x, w], [init],
                                           {"strides": _i64_dense(stride), "dilations": _i64_dense(dil)}))
        rw.replace_op(op, out.results)
        return True


class TransposeConv2d(RewritePattern):
    """out[n, oy, ox, oc] = bias[oc] + sum over (ky, kx, ic) of x[n, iy, ix, ic] * w[oc, ky, kx, ic]
    where oy = iy * stride_y + ky + out_pad_top (and likewise for x): one reduction generic over
    the output that reads x where (oy - top - ky) is a multiple of the stride inside the input
    (zero points must be zero)."""
    ops = ("tosa.transpose_conv2d",)

    def match_and_rewrite(self, op, rw) -> bool:
        x, w, bias, x_zp, w_zp = op.operands
        t = op.results[0].type
        out_pad = int_list(op.attr("out_pad")) or [0, 0, 0, 0]
        stride = int_list(op.attr("stride")) or [1, 1]
        e = t.element
        if not _convolution_lowers(x, w, bias, x_zp, w_zp, t):
            return False
        sizes = x.type.shape[1:3]
        zero = _scalar_const(rw, op, 0, x.type.element)

        def body(b: Scalar, ins, outs):
            valid, where = None, [b.index(0)]
            for j in range(2):  # output dim 1 + j, kernel loop 4 + j
                r = b.sub(b.sub(b.index(1 + j), b.c(out_pad[2 * j])), b.index(4 + j))
                i = b.op("arith.divsi", [r, b.c(stride[j])], T.index)
                exact = b.cmpi(0, b.op("arith.remsi", [r, b.c(stride[j])], T.index), b.c(0))
                inside = b.and_(b.cmpi(5, r, b.c(0)), b.cmpi(2, i, b.c(sizes[j])))
                valid = b.and_(valid, b.and_(exact, inside))
                where.append(b.clamp(i, 0, sizes[j] - 1))
            where.append(b.index(6))
            value = b.select(valid, b.extract(x, where), zero)
            return [_mul_add(b, outs[0], value, ins[0])]

        block = generic_body([w], [t], body)
        bias_map = affine_map(4, ["0" if bias.type.shape[0] == 1 else "d3"])
        init_block = generic_body([bias], [t], lambda b, i, o: [_widen(b, i[0], e)])
        init = make_generic(rw, op, [bias], [bias_map], [empty(rw, op, t)], [identity_map(4)], ["parallel"] * 4,
                            init_block).result
        # loops (n, oy, ox, oc, ky, kx, ic)
        out = make_generic(rw, op, [w], [affine_map(7, ["d3", "d4", "d5", "d6"])], [init],
                           [affine_map(7, ["d0", "d1", "d2", "d3"])], ["parallel"] * 4 + ["reduction"] * 3, block)
        rw.replace_op(op, out.results)
        return True


PATTERNS = [Pad(), MaxPool2d(), AvgPool2d(), Gather(), WhileLoop(), CondIf(), Table(), Conv2d(), Conv3d(),
            TransposeConv2d()]
