"""hlo -> linalg for contractions TOSA cannot express: convolution (groups, dilations, padding)
and dot_general on the element types tosa.matmul does not take, each one reduction generic
over the result's dims and the contracted ones.
"""
from __future__ import annotations

from ...dialects.hlo_attrs import conv_dims, int_list
from ...ir import types as T
from ...ir.attributes import FloatAttr, IntegerAttr
from .build import empty, hlo_names, insert, short_name
from .hlo_generic import HloLoweringPattern, identity_map, first_int, affine_map, stablehlo_pad, split_pairs, zero_scalar_dense, generic_body, make_generic
from .hlo_scalar import NO_FASTMATH, Scalar, cast_scalar


def _accumulator(element: T.Type) -> T.Type:
    """The type a contraction's products are summed in: f32 for the narrow floats (as the spec's
    reference interpreter and ours do, rounding once at the end), else the result's own."""
    return T.f32 if T.is_float(element) and element.width < 32 else element


def _multiply_add(acc: T.Type):
    """A contraction generic's body: out + in0 * in1, the operands cast to `acc`."""
    def body(b: Scalar, ins, outs):
        x, y = cast_scalar(b, ins[0], acc), cast_scalar(b, ins[1], acc)
        if x is None or y is None:
            return None
        if T.is_float(acc):
            return [b.op("arith.addf", [outs[0], b.op("arith.mulf", [x, y], acc, NO_FASTMATH)], acc, NO_FASTMATH)]
        return [b.op("arith.addi", [outs[0], b.op("arith.muli", [x, y], acc)], acc)]
    return body


def _zeros(rw, op, t: T.RankedTensorType):
    """A `linalg.fill` of 0 in `t`: the accumulators' start."""
    from ...dialects.linalg import structured_op
    e = t.element
    zero = rw.create(op, "arith.constant", [], [e], {"value": FloatAttr(0.0, e) if T.is_float(e)
                                                     else IntegerAttr(0, e)}).result
    return insert(rw, op, structured_op("linalg.fill", [zero], [empty(rw, op, t)])).result


def _rounded(rw, op, sums, t: T.RankedTensorType):
    """`sums` (accumulated in a wider type) as `t`'s elements."""
    if sums.type == t:
        return sums
    block = generic_body([sums], [t], lambda b, i, o: [cast_scalar(b, i[0], t.element)])
    return make_generic(rw, op, [sums], [identity_map(t.rank)], [empty(rw, op, t)], [identity_map(t.rank)],
                        ["parallel"] * t.rank, block).result


class Convolution(HloLoweringPattern):
    """Pad (and lhs-dilate) the input with zeros, then one reduction generic: loops over the
    result's dims, the kernel's input features and its window; feature and batch groups pick
    the input's feature / batch through `floordiv` in its indexing map. Narrow floats
    accumulate in f32 and are rounded once at the end."""
    ops = hlo_names("convolution")

    def signless_keeps_meaning(self, op) -> bool:
        elements = {T.element_type(t) for t in (*(v.type for v in op.operands), *op.result_types)}
        return len(elements) == 1  # mixed widths would extend the unsigned operands as signed

    def rewrite(self, op, rw) -> bool:
        x, k = op.operands
        t = op.results[0].type
        dn = conv_dims(op.attr("dimension_numbers"))
        if dn is None or dn.layout_error:
            return False
        sp = len(dn.input_spatial)
        strides = int_list(op.attr("window_strides")) or [1] * sp
        lhs_dil = int_list(op.attr("lhs_dilation")) or [1] * sp
        rhs_dil = int_list(op.attr("rhs_dilation")) or [1] * sp
        lo, hi = split_pairs(op.attr("padding"), sp)
        groups = first_int(op.attr("feature_group_count"))
        batch_groups = first_int(op.attr("batch_group_count"))
        reversal = int_list(op.attr("window_reversal"))
        if reversal and any(reversal):
            return False
        et = t.element
        xe, ke = x.type.element, k.type.element
        if T.is_float(et) != T.is_float(xe) or T.is_float(et) != T.is_float(ke) or et == T.i1:
            return False

        at = T.RankedTensorType(t.shape, _accumulator(et))
        block = generic_body([x, k], [at], _multiply_add(at.element))
        if block is None:
            return False
        if any(lo) or any(hi) or any(d != 1 for d in lhs_dil):
            full_lo, full_hi, full_int = [0] * x.type.rank, [0] * x.type.rank, [0] * x.type.rank
            for i, d in enumerate(dn.input_spatial):
                full_lo[d], full_hi[d], full_int[d] = lo[i], hi[i], lhs_dil[i] - 1
            zero = rw.create(op, "stablehlo.constant", [], [T.RankedTensorType((), xe)],
                             {"value": zero_scalar_dense(xe)}).result
            x = stablehlo_pad(rw, op, x, zero, full_lo, full_hi, full_int)
        # loops: the result's dims, then the kernel's input feature, then its spatial dims
        r = t.rank
        c_loop = r
        k_loops = [r + 1 + i for i in range(sp)]
        loops = r + 1 + sp
        out_features = t.shape[dn.output_feature]
        in_exprs = [""] * x.type.rank
        ob, of = f"d{dn.output_batch}", f"d{dn.output_feature}"
        cg = k.type.shape[dn.kernel_input_feature]
        if batch_groups > 1:
            in_exprs[dn.input_batch] = f"({of} floordiv {out_features // batch_groups}) * {t.shape[dn.output_batch]} + {ob}"
        else:
            in_exprs[dn.input_batch] = ob
        if groups > 1:
            in_exprs[dn.input_feature] = f"({of} floordiv {out_features // groups}) * {cg} + d{c_loop}"
        else:
            in_exprs[dn.input_feature] = f"d{c_loop}"
        for i, d in enumerate(dn.input_spatial):
            in_exprs[d] = f"d{dn.output_spatial[i]} * {strides[i]} + d{k_loops[i]} * {rhs_dil[i]}"
        k_exprs = [""] * k.type.rank
        k_exprs[dn.kernel_input_feature] = f"d{c_loop}"
        k_exprs[dn.kernel_output_feature] = of
        for i, d in enumerate(dn.kernel_spatial):
            k_exprs[d] = f"d{k_loops[i]}"
        kinds = ["parallel"] * r + ["reduction"] * (1 + sp)
        out = make_generic(rw, op, [x, k], [affine_map(loops, in_exprs), affine_map(loops, k_exprs)], [_zeros(rw, op, at)],
                           [affine_map(loops, [f"d{d}" for d in range(r)])], kinds, block).result
        rw.replace_op(op, [_rounded(rw, op, out, t)])
        return True


class DotGeneral(HloLoweringPattern):
    """A contraction generic (batch, lhs free, rhs free loops, then the contracting ones), for
    the element types tosa.matmul does not take; narrow floats accumulate in f32 (as the
    spec's reference does) and are rounded once at the end."""
    ops = hlo_names("dot_general", "dot")

    def signless_keeps_meaning(self, op) -> bool:
        elements = {T.element_type(t) for t in (*(v.type for v in op.operands), *op.result_types)}
        return len(elements) == 1  # mixed widths would extend the unsigned operands as signed

    def rewrite(self, op, rw) -> bool:
        from ...dialects.hlo_attrs import dot_dims
        lhs, rhs = op.operands
        lt, rtype, t = lhs.type, rhs.type, op.results[0].type
        if short_name(op) == "dot":
            if lt.rank not in (1, 2) or rtype.rank not in (1, 2):
                return False
            dims = {"lhs_batching_dimensions": [], "rhs_batching_dimensions": [],
                    "lhs_contracting_dimensions": [lt.rank - 1], "rhs_contracting_dimensions": [0]}
        else:
            dims = dot_dims(op.attr("dot_dimension_numbers"))
        if dims is None or t.element == T.i1 or T.is_float(t.element) != T.is_float(lt.element) or \
                T.is_float(t.element) != T.is_float(rtype.element):
            return False
        lb, rb = dims["lhs_batching_dimensions"], dims["rhs_batching_dimensions"]
        lc, rc = dims["lhs_contracting_dimensions"], dims["rhs_contracting_dimensions"]
        lf = [d for d in range(lt.rank) if d not in lb and d not in lc]
        rf = [d for d in range(rtype.rank) if d not in rb and d not in rc]
        nb, nl, nr = len(lb), len(lf), len(rf)
        loops = nb + nl + nr + len(lc)
        lexpr, rexpr = [""] * lt.rank, [""] * rtype.rank
        for i, (a, b) in enumerate(zip(lb, rb)):
            lexpr[a] = rexpr[b] = f"d{i}"
        for i, a in enumerate(lf):
            lexpr[a] = f"d{nb + i}"
        for i, b in enumerate(rf):
            rexpr[b] = f"d{nb + nl + i}"
        for i, (a, b) in enumerate(zip(lc, rc)):
            lexpr[a] = rexpr[b] = f"d{nb + nl + nr + i}"
        at = T.RankedTensorType(t.shape, _accumulator(t.element))
        block = generic_body([lhs, rhs], [at], _multiply_add(at.element))
        if block is None:
            return False
        kinds = ["parallel"] * (nb + nl + nr) + ["reduction"] * len(lc)
        out = make_generic(rw, op, [lhs, rhs], [affine_map(loops, lexpr), affine_map(loops, rexpr)], [_zeros(rw, op, at)],
                           [affine_map(loops, [f"d{i}" for i in range(nb + nl + nr)])], kinds, block).result
        rw.replace_op(op, [_rounded(rw, op, out, t)])
        return True


PATTERNS = [Convolution(), DotGeneral()]
