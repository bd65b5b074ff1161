"""Shape manipulation: transpose, reshape, slices, pads, concatenate, reverse, tuples and
dimension sizes: declarations, slice's custom<SliceRanges> and tuple's custom<TupleType>,
and checks.
"""
from __future__ import annotations

from ...ir import types as T
from ..assembly_format import Custom
from .declare import HloOp
from .shared import (bounds_of, check_inferred, compatible_dims, compatible_elements, constant_ints, elt, fail,
                     first_operand_shape, int_attr, ints_attr, is_quant, is_tensor, nonneg_attr, qtype, rank1_attrs,
                     rank_of, raw_dims, same_el, shape_of, shape_operand_check, static_or_single_bounded, tensor,
                     verify_q_same_params)
from .syntax import CAST, FUNCTIONAL, I64, I64S, HloFormat, Int, arr, i64_array, need, same_types, same_types_format


def _hlo_range(ctx, children):
    start, limit, stride = children
    return (int(start.value, 0), int(limit.value, 0), int(stride.value, 0) if stride is not None else 1)


_SLICE_KEYS = ("start_indices", "limit_indices", "strides")


def _parse_slice_ranges(ctx, name, ranges):
    """`[0:2, 1:4:2]`: start, limit and stride (1 when left out) per dimension."""
    return {key: i64_array(r[k] for r in ranges) for k, key in enumerate(_SLICE_KEYS)}


def _print_slice_ranges(p, op):
    starts, limits, strides = (arr(op, key) for key in _SLICE_KEYS)
    need(len(starts) == len(limits) == len(strides))
    ranges = [f"{s}:{l}" + (f":{k}" if k != 1 else "") for s, l, k in zip(starts, limits, strides)]
    return " [" + ", ".join(ranges) + "]", _SLICE_KEYS


_SLICE_RANGES = Custom("hlo_slice_ranges", _parse_slice_ranges, _print_slice_ranges)


def _parse_tuple_type(ctx, name, t):
    """custom<TupleOpType>: the result's tuple type gives the operands' types."""
    if not isinstance(t, T.TupleType):
        raise ctx.fail(f"custom op '{name}' expected tuple type")
    return list(t.types), t


def _print_tuple_type(p, op):
    t = op.result_named("result").type
    need(isinstance(t, T.TupleType) and tuple(op.operand_types) == tuple(t.types))
    return " " + p.type(t), ()


_TUPLE_TYPE = Custom("type", _parse_tuple_type, _print_tuple_type)


def verify_transpose_quant(op, perm) -> None:
    ot, rt = op.operand_types[0], op.result_types[0]
    verify_q_same_params(ot, rt)
    qo, qr = qtype(ot), qtype(rt)
    if qr is not None and qr.per_axis and qo is not None and qo.per_axis and qr.axis < len(perm):
        if qo.axis != perm[qr.axis]:
            fail(f"operand quantization_dimension {qo.axis} is not same as permutation[{qr.axis}] = "
                 f"{perm[qr.axis]}")


def verify_reshape_quant(op) -> None:
    ot, rt = op.operand_types[0], op.result_types[0]
    verify_q_same_params(ot, rt)
    qo, qr = qtype(ot), qtype(rt)
    if qo is None or qr is None or not qo.per_axis or not qr.per_axis:
        return
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None or qo.axis >= len(os_) or qr.axis >= len(rs):
        return
    if os_[qo.axis] != rs[qr.axis]:
        fail(f"expect same quantization dimension size for operand and result '{ot}' and '{rt}'")

    def prod(xs):
        n = 1
        for x in xs:
            if x is None:
                return None
            n *= x
        return n
    a, b = prod(os_[:qo.axis]), prod(rs[:qr.axis])
    if a is not None and b is not None and a != b:
        fail("product of dimensions before quantization dimension must match between operand and result")


def _transpose(op):
    rank1_attrs(op, "permutation")
    perm = ints_attr(op, "permutation")
    if perm is None:
        if "permutation" not in op.attributes:
            fail("requires attribute 'permutation'")
        return
    t, s = first_operand_shape(op)
    if s is None:
        return
    if len(perm) != len(s):
        fail(f"TransposeOp operand rank {len(s)} does not match permutation size {len(perm)}")
    if sorted(perm) != list(range(len(s))):
        fail(f"attribute permutation must be a permutation of [{', '.join(map(str, range(len(s))))}] but got "
             f"{', '.join(map(str, perm))}")
    if op.results:
        verify_transpose_quant(op, perm)
    check_inferred(op, [tensor([s[p] for p in perm], elt(t))])


def _slice(op):
    rank1_attrs(op, "start_indices", "limit_indices", "strides")
    start, limit, strides = (ints_attr(op, n) for n in ("start_indices", "limit_indices", "strides"))
    if start is None or limit is None or strides is None:
        return
    t = op.operand("operand").type
    s = shape_of(t)
    if s is None:
        return
    if len(start) != len(s):
        fail(f"the number of elements in start_indices ({len(start)}) does not match the rank of the operand "
             f"({len(s)})")
    if len(limit) != len(s) or len(strides) != len(s):
        return
    b = bounds_of(t)
    out = []
    for i in range(len(s)):
        if start[i] < 0:
            fail(f"negative start index {start[i]} in dimension {i}")
        size = s[i] if s[i] is not None else (b[i] if b and i < len(b) else None)
        if size is not None and limit[i] > size:
            fail(f"limit index {limit[i]} is larger than dimension {'size' if s[i] is not None else 'bound'} "
                 f"{size} in dimension {i}")
        if start[i] > limit[i]:
            fail(f"start index {start[i]} is larger than limit index {limit[i]} in dimension {i}")
        if strides[i] <= 0:
            fail(f"stride must be positive but got {strides[i]} in dimension {i}")
        out.append(-(-(limit[i] - start[i]) // strides[i]))
    check_inferred(op, [tensor(out, elt(t))])


def _dynamic_slice(op):
    rank1_attrs(op, "slice_sizes")
    sizes = ints_attr(op, "slice_sizes")
    if sizes is None:
        return
    t = op.operand("operand").type
    idx = [v.type for v in op.operands_named("start_indices")]
    if len(idx) != len(sizes):
        fail(f"has mismatched number of slice sizes ({len(sizes)}) and number of start indices ({len(idx)})")
    s = shape_of(t)
    if s is None:
        return
    if len(s) != len(idx):
        fail(f"has mismatched number of start indices ({len(idx)}) and the rank of operand ({len(s)})")
    if any(not same_el(idx[0], x) for x in idx[1:]):
        fail("start indices must have same element type")
    for i, z in enumerate(sizes):
        if z < 0:
            fail(f"has negative size index to dynamic slice: {z}")
        if s[i] is not None and z > s[i]:
            fail(f"has slice size {z} greater than dimension size {s[i]} in dimension {i} of operand")
    check_inferred(op, [tensor(sizes, elt(t))])


def _dynamic_update_slice(op):
    t, u = op.operand("operand").type, op.operand("update").type
    idx = [v.type for v in op.operands_named("start_indices")]
    s, us = shape_of(t), shape_of(u)
    if s is None or us is None:
        return
    if len(us) != len(s):
        fail(f"update rank does not match operand rank: {len(us)} vs {len(s)}.")
    if len(idx) != len(s):
        fail(f"expects number of start_indices to match operand rank: {len(idx)} vs {len(s)}.")
    if any(not same_el(idx[0], x) for x in idx[1:]):
        fail("start indices must have same element type")
    for i, (a, b) in enumerate(zip(s, us)):
        if b is None:
            continue
        if a is not None and (b < 0 or b > a):
            fail(f"expects size at dimension {i} of update to be in range [0, {a}]. Got: {b}.")
    check_inferred(op, [t])


def _pad(op):
    rank1_attrs(op, "edge_padding_low", "edge_padding_high", "interior_padding")
    low, high, interior = (ints_attr(op, n) for n in ("edge_padding_low", "edge_padding_high", "interior_padding"))
    if low is None or high is None or interior is None:
        return
    t, pv = op.operand("operand").type, op.operand("padding_value").type
    s = shape_of(t)
    ps = shape_of(pv)
    if ps is not None and len(ps) != 0:
        fail(f"padding value type should be a rank-0 tensor, is rank {len(ps)}")
    if s is None:
        return
    if len(low) != len(s):
        fail(f"edge_padding_low length ({len(low)}) must match operand rank ({len(s)})")
    if len(high) != len(s):
        fail(f"edge_padding_high length ({len(high)}) must match operand rank ({len(s)})")
    if len(interior) != len(s):
        fail(f"interior_padding length ({len(interior)}) must match operand rank ({len(s)})")
    b = bounds_of(t)
    out = []
    for i, d in enumerate(s):
        if interior[i] < 0:
            fail(f"Interior padding cannot be negative: {interior[i]}")
        size = d if d is not None else (b[i] if b and i < len(b) else None)
        if size is None:
            out.append(None)
            continue
        r = size + low[i] + high[i] + max(size - 1, 0) * interior[i]
        if r < 0:
            fail(f"Padding result in negative {'size' if d is not None else 'bound'} for dimension {i}")
        out.append(r if d is not None else None)
    check_inferred(op, [tensor(out, elt(t))])


def _dynamic_pad(op):
    if len(op.operands) != 5 or not op.results:
        return
    s = shape_of(op.operand("operand").type)
    low_value, high_value = op.operand("edge_padding_low"), op.operand("edge_padding_high")
    ls = shape_of(low_value.type)
    if s is None or ls is None:
        return
    if ls and ls[0] is not None and ls[0] != len(s):
        fail(f"padding operands size ({ls[0]}) must match operand rank ({len(s)})")
    interior = constant_ints(op.operand("interior_padding"))
    if interior is not None and any(v < 0 for v in interior):
        fail(f"interior_padding must be non-negative, but got {', '.join(map(str, interior))}")
    rs = shape_of(op.result_named("result").type)
    low, high = constant_ints(low_value), constant_ints(high_value)
    if interior is None or low is None or high is None or rs is None or None in s or None in rs:
        return
    for i, (a, o, lo, hi, it) in enumerate(zip(s, rs, low, high, interior)):
        want = a + lo + max(a - 1, 0) * it + hi
        if o != want:
            fail(f"expected output dimension at index {i} to equal {want}, but got {o}")


def _reshape(op):
    a, b = op.operand("operand").type, op.result_named("result").type
    if shape_of(b) is not None and None in shape_of(b) and not static_or_single_bounded(b):
        fail(f"result #0 must be statically shaped or single bounded dimension tensor, but got '{b}'")
    if not (is_quant(a) or is_quant(b)) and is_tensor(a) and is_tensor(b) and not compatible_elements(a, b):
        fail(f"expects operand and result to have compatible element type. Got: '{a}' and '{b}'")
    na, nb = getattr(a, "num_elements", None), getattr(b, "num_elements", None)
    if isinstance(a, T.RankedTensorType) and a.has_static_shape and isinstance(b, T.RankedTensorType) \
            and b.has_static_shape and na != nb:
        fail(f"number of output elements ({nb}) doesn't match expected number of elements ({na})")
    verify_reshape_quant(op)


def _dynamic_reshape(op):
    if len(op.operands) != 2 or not op.results:
        return
    shape = op.operand("output_shape")
    a, st, b = op.operand("operand").type, shape.type, op.result_types[0]
    ss = shape_of(st)
    if ss is not None and None in ss:
        fail(f"operand #1 must be statically shaped 1-dimensional tensor of index or integer values, "
             f"but got '{st}'")
    if not (is_quant(a) or is_quant(b)) and not compatible_elements(a, b):
        fail(f"expects operand and result to have compatible element type. Got: '{a}' and '{b}'")
    if isinstance(a, T.RankedTensorType) and a.has_static_shape and isinstance(b, T.RankedTensorType) \
            and b.has_static_shape and a.num_elements != b.num_elements:
        fail(f"number of output elements ({b.num_elements}) doesn't match expected number of elements "
             f"({a.num_elements})")
    shape_operand_check(op, shape, b)
    rs = shape_of(b)
    if ss and rs is not None and ss[0] is not None and ss[0] != len(rs):
        fail("result should have a rank equal to the number of elements in output_shape")
    vals = constant_ints(shape)
    if vals is not None and isinstance(a, T.RankedTensorType) and a.has_static_shape:
        n = 1
        for v in vals:
            n *= v
        if n != a.num_elements:
            fail(f"output_shape is incompatible with input type of operation: input has {a.num_elements} "
                 f"elements, but output_shape has {n}")


def _concatenate(op):
    if not op.operands:
        fail("expected 1 or more operands, but found 0")
    nonneg_attr(op, "dimension")
    dim = int_attr(op, "dimension", 0)
    shapes = [shape_of(t) for t in op.operand_types]
    if any(s is None for s in shapes):
        return
    rank = len(shapes[0])
    if rank == 0:
        fail("rank-0 values cannot be concatenated")
    if dim >= rank:
        fail(f"dimension {dim} is out-of-bounds for input rank {rank}")
    for i, s in enumerate(shapes):
        if len(s) != rank:
            fail(f"operands (0) and ({i}) do not match rank")
        for d in range(rank):
            if d != dim and not compatible_dims(shapes[0][d], s[d]):
                fail(f"shapes of operand (0) and ({i}) are not compatible at non-concat index {d}: "
                     f"({raw_dims(shapes[0])}) != ({raw_dims(s)})")
    out = []
    for d in range(rank):
        if d == dim:
            vals = [s[d] for s in shapes]
            out.append(None if None in vals else sum(vals))
        else:
            known = [s[d] for s in shapes if s[d] is not None]
            out.append(known[0] if known else None)
    check_inferred(op, [tensor(out, elt(op.operands_named("inputs")[0].type))])


def _reverse(op):
    rank1_attrs(op, "dimensions")
    dims = ints_attr(op, "dimensions")
    if dims is None:
        return
    if len(set(dims)) != len(dims):
        fail(f"dimensions should be unique. Got: {', '.join(map(str, dims))}")
    r = rank_of(op.operand("operand").type)
    for d in dims:
        if d < 0:
            fail(f"all dimensions should be non-negative. Got dimension: {d}.")
        if r is not None and d >= r:
            fail(f"all dimensions should be between [0, {r}). Got dimension: {d}.")


def _get_tuple_element(op):
    nonneg_attr(op, "index", 32)
    tt = op.operand("operand").type
    if not isinstance(tt, T.TupleType):
        return
    i = int_attr(op, "index", 0)
    if i >= len(tt.types):
        fail(f"index {i} is out of bounds of operand with size {len(tt.types)}")
    check_inferred(op, [tt.types[i]])


def _tuple(op):
    check_inferred(op, [T.TupleType(tuple(op.operand_types))])


def _dim_in_bounds(t, dim):
    if dim < 0:
        fail(f"requires non-negative dimension attribute; found ({dim})")
    r = rank_of(t)
    if r is not None and dim >= r:
        fail(f"requires dimension attribute in range [0, {r}); found ({dim})")


def _get_dimension_size(op):
    nonneg_attr(op, "dimension")
    _dim_in_bounds(op.operand("operand").type, int_attr(op, "dimension", 0))


def _set_dimension_size(op):
    nonneg_attr(op, "dimension")
    s = shape_of(op.operand("size").type)
    if s is not None and len(s) != 0:
        fail("size operand should be of rank-0")
    _dim_in_bounds(op.operand("operand").type, int_attr(op, "dimension", 0))


#: Grammar callbacks of slice's custom<SliceRanges>.
RULES = {"hlo_range": _hlo_range}

OPS = (
    HloOp("transpose", "Permutes dimensions.", ("permutation",), verify=_transpose,
          format=HloFormat("transpose", "$operand `,` `dims` `=` $permutation " + FUNCTIONAL, ("operand",),
                           {"permutation": I64S})),
    HloOp("reshape", "Elementwise reshape.", verify=_reshape, format=CAST),
    HloOp("dynamic_reshape", "reshape to a shape given as a tensor.", verify=_dynamic_reshape,
          format=HloFormat("dynamic_reshape", "$operand `,` $output_shape " + FUNCTIONAL,
                           ("operand", "output_shape"))),
    HloOp("reverse", "Reverses dimensions.", ("dimensions",), verify=_reverse,
          format=HloFormat("reverse", "$operand `,` `dims` `=` $dimensions " + same_types_format("operand"),
                           ("operand",), {"dimensions": I64S}, {"SameTypes": same_types(1)})),
    HloOp("get_tuple_element", "An element of a tuple.", ("index",), verify=_get_tuple_element,
          format=HloFormat("get_tuple_element", "$operand `[` $index `]` " + FUNCTIONAL, ("operand",),
                           {"index": Int(T.i32, "INTEGER")})),
    HloOp("tuple", "Builds a tuple.", verify=_tuple,
          format=HloFormat("tuple", "$val attr-dict `:` custom<TupleType>(type($val), type($result))", ("val*",),
                           custom={"TupleType": _TUPLE_TYPE})),
    HloOp("slice", "Static slice.", ("start_indices", "limit_indices", "strides"), verify=_slice,
          format=HloFormat("slice", "$operand custom<SliceRanges> " + FUNCTIONAL, ("operand",),
                           custom={"SliceRanges": _SLICE_RANGES})),
    HloOp("concatenate", "Concatenates along a dimension.", ("dimension",), verify=_concatenate,
          format=HloFormat("concatenate", "$inputs `,` `dim` `=` $dimension " + FUNCTIONAL, ("inputs*",),
                           {"dimension": I64})),
    HloOp("dynamic_slice", "Slice at start indices given as scalars.", ("slice_sizes",), verify=_dynamic_slice,
          format=HloFormat("dynamic_slice", "$operand `,` $start_indices `,` `sizes` `=` $slice_sizes "
                           + FUNCTIONAL, ("operand", "start_indices*"), {"slice_sizes": I64S})),
    HloOp("dynamic_update_slice", "Updates a slice at start indices given as scalars.",
          verify=_dynamic_update_slice,
          format=HloFormat("dynamic_update_slice", "$operand `,` $update (`,` $start_indices^)? " + FUNCTIONAL,
                           ("operand", "update", "start_indices*"))),
    HloOp("real_dynamic_slice", "Slice with bounds given as tensors.",
          format=HloFormat("real_dynamic_slice", "$operand `,` $start_indices `,` $limit_indices `,` $strides "
                           + FUNCTIONAL, ("operand", "start_indices", "limit_indices", "strides"))),
    HloOp("pad", "Pads at the edges and between elements.",
          ("edge_padding_low", "edge_padding_high", "interior_padding"), verify=_pad,
          format=HloFormat("pad", "$operand `,` $padding_value `,` `low` `=` $edge_padding_low `,` `high` `=` "
                           "$edge_padding_high `,` `interior` `=` $interior_padding " + FUNCTIONAL,
                           ("operand", "padding_value"),
                           {"edge_padding_low": I64S, "edge_padding_high": I64S, "interior_padding": I64S})),
    HloOp("dynamic_pad", "pad with paddings given as tensors.", verify=_dynamic_pad,
          format=HloFormat("dynamic_pad", "$operand `,` $padding_value `,` $edge_padding_low `,` "
                           "$edge_padding_high `,` $interior_padding " + FUNCTIONAL,
                           ("operand", "padding_value", "edge_padding_low", "edge_padding_high",
                            "interior_padding"))),
    HloOp("get_dimension_size", "The size of a dimension.", ("dimension",), verify=_get_dimension_size,
          format=HloFormat("dimension_size", "$operand `,` `dim` `=` $dimension " + FUNCTIONAL, ("operand",),
                           {"dimension": I64})),
    HloOp("set_dimension_size", "Sets the dynamic size of a dimension.", ("dimension",), verify=_set_dimension_size,
          format=HloFormat("set_dimension_size", "$operand `,` $size `,` `dim` `=` $dimension " + FUNCTIONAL,
                           ("operand", "size"), {"dimension": I64})),
)
