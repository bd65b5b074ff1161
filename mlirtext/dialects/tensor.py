"""tensor: creating, inspecting and casting tensors (the ops the core needs)."""
from __future__ import annotations

from ..ir import types as T
from ..ir.signatures import OpSignature
from .assembly_format import declare_family
from .base import PURE, Dialect, VerifyError
from .common import DYNAMIC_INDEX, create, mixed_text, safe_printer

dialect = Dialect("tensor", grammar="tensor")

#: The ops that only view their operand anew: the same elements in the same order (the
#: compiler keeps them on the host, as views of the buffer they read).
VIEWS = frozenset({"tensor.collapse_shape", "tensor.expand_shape", "tensor.cast"})


def view_source(op):
    """The tensor a view op (one of `VIEWS`) reads: a reshape's `$src`, a cast's `$source`."""
    return op.operand("source" if op.name == "tensor.cast" else "src")


def _ranked(t) -> T.RankedTensorType:
    if not isinstance(t, T.RankedTensorType):
        raise VerifyError(f"expected a ranked tensor, got {t}")
    return t


def _dynamic_count(t) -> int:
    return sum(1 for d in t.shape if d is None)


def _is_tensor(t) -> bool:
    return isinstance(t, (T.RankedTensorType, T.UnrankedTensorType))


def _check_indices(op, start: int) -> None:
    """Operands from `start` on are `index` values (sizes or indices)."""
    for i, v in enumerate(op.operands[start:], start):
        if v.type != T.index:
            raise VerifyError(f"operand #{i} must be variadic of index, but got '{v.type}'")


def _tensor_type(t):
    """None if `t` is a tensor type, else the parse error for it."""
    return None if _is_tensor(t) else f"expected a tensor type, got {t}"


def _ranked_tensor_type(t):
    return None if isinstance(t, T.RankedTensorType) else f"expected a ranked tensor type, got {t}"


def _element(t):
    return t.element


# ---- tensor.empty ----------------------------------------------------------------
def _verify_empty(op) -> None:
    _check_indices(op, 0)
    t = _ranked(op.result_named("result").type)
    sizes = op.operands_named("dynamicSizes")
    if len(sizes) != _dynamic_count(t):
        raise VerifyError(f"incorrect number of dynamic sizes, has {len(sizes)}, expected {_dynamic_count(t)}")


declare_family(dialect, "empty", ["tensor.empty"], "`(` $dynamicSizes `)` attr-dict `:` type($result)",
               operands=("dynamicSizes*",), results=("result",), infer={"dynamicSizes": T.index},
               summary="A tensor of the given shape with unspecified contents.", traits=(PURE,),
               verify=_verify_empty)


# ---- tensor.dim --------------------------------------------------------------------
def _verify_dim(op) -> None:
    source, index = op.operand("source").type, op.operand("index").type
    if not _is_tensor(source) or isinstance(source, T.RankedTensorType) and source.rank == 0:
        raise VerifyError(f"operand #0 must be non-0-ranked or unranked tensor, but got '{source}'")
    if index != T.index:
        raise VerifyError(f"operand #1 must be index, but got '{index}'")
    result = op.result_named("result").type
    if result != T.index:
        raise VerifyError(f"result #0 must be index, but got '{result}'")


declare_family(dialect, "dim", ["tensor.dim"], "attr-dict $source `,` $index `:` type($source)",
               operands=("source", "index"), results=("result",),
               infer={"index": T.index, "result": T.index}, type_checks={"source": _tensor_type},
               summary="The size of one dimension of a tensor.", traits=(PURE,), verify=_verify_dim)


# ---- tensor.cast -------------------------------------------------------------------
def _verify_cast(op) -> None:
    a, b = op.operand("source").type, op.result_named("dest").type
    for t, what in ((a, "operand #0"), (b, "result #0")):
        if not _is_tensor(t):
            raise VerifyError(f"{what} must be tensor of any type values, but got '{t}'")
    if T.element_type(a) != T.element_type(b):
        raise VerifyError(f"operand type '{a}' and result type '{b}' are cast incompatible")
    if isinstance(a, T.RankedTensorType) and isinstance(b, T.RankedTensorType):
        if a.rank != b.rank or any(x is not None and y is not None and x != y
                                   for x, y in zip(a.shape, b.shape)):
            raise VerifyError(f"operand type '{a}' and result type '{b}' are cast incompatible")


declare_family(dialect, "cast", ["tensor.cast"], "$source attr-dict `:` type($source) `to` type($dest)",
               operands=("source",), results=("dest",),
               type_checks={"source": _tensor_type, "dest": _tensor_type},
               summary="Changes static/dynamic shape information without changing data.", traits=(PURE,),
               verify=_verify_cast)


# ---- tensor.extract / tensor.insert -------------------------------------------------------
def _verify_extract(op) -> None:
    _check_indices(op, 1)
    t = _ranked(op.operand("tensor").type)
    if op.result_named("result").type != t.element:
        raise VerifyError("failed to verify that result type matches element type of tensor")
    if len(op.operands_named("indices")) != t.rank:
        raise VerifyError("incorrect number of indices for extract_element")


declare_family(dialect, "extract", ["tensor.extract"], "$tensor `[` $indices `]` attr-dict `:` type($tensor)",
               operands=("tensor", "indices*"), results=("result",),
               infer={"indices": T.index, "result": ("tensor", _element)}, type_checks={"tensor": _tensor_type},
               summary="Reads one element of a tensor.", traits=(PURE,), verify=_verify_extract)


def _verify_insert(op) -> None:
    _check_indices(op, 2)
    t = _ranked(op.operand("dest").type)
    if op.operand("scalar").type != t.element:
        raise VerifyError("failed to verify that scalar type matches element type of dest")
    if op.result_named("result").type != t:
        raise VerifyError("failed to verify that result type matches type of dest")
    if len(op.operands_named("indices")) != t.rank:
        raise VerifyError("incorrect number of indices")


declare_family(dialect, "insert", ["tensor.insert"],
               "$scalar `into` $dest `[` $indices `]` attr-dict `:` type($dest)",
               operands=("scalar", "dest", "indices*"), results=("result",),
               infer={"scalar": ("dest", _element), "indices": T.index, "result": "dest"},
               type_checks={"dest": _tensor_type}, summary="A copy of a tensor with one element replaced.",
               traits=(PURE,), verify=_verify_insert)


# ---- tensor.from_elements / tensor.splat ------------------------------------------------
def _verify_from_elements(op) -> None:
    t = _ranked(op.result_named("result").type)
    elements = op.operands_named("elements")
    if any(v.type != t.element for v in elements):
        raise VerifyError("failed to verify that operand types match result element type")
    if t.num_elements != len(elements):
        raise VerifyError(f"expected {t.num_elements} operands, got {len(elements)}")


declare_family(dialect, "from_elements", ["tensor.from_elements"], "$elements attr-dict `:` type($result)",
               operands=("elements*",), results=("result",), infer={"elements": ("result", _element)},
               type_checks={"result": _ranked_tensor_type},
               summary="A static tensor built from scalar operands (row-major).", traits=(PURE,),
               verify=_verify_from_elements)


def _verify_splat(op) -> None:
    t = _ranked(op.result_named("aggregate").type)
    if op.operand("input").type != t.element:
        raise VerifyError("failed to verify that operand type matches element type of result")
    _check_indices(op, 1)
    sizes = op.operands_named("dynamicSizes")
    if len(sizes) != _dynamic_count(t):
        raise VerifyError(f"incorrect number of dynamic sizes, has {len(sizes)}, expected {_dynamic_count(t)}")


declare_family(dialect, "splat", ["tensor.splat"],
               "$input (`[` $dynamicSizes^ `]`)? attr-dict `:` type($aggregate)",
               operands=("input", "dynamicSizes*"), results=("aggregate",),
               infer={"input": ("aggregate", _element), "dynamicSizes": T.index},
               type_checks={"aggregate": _ranked_tensor_type},
               summary="A tensor with every element equal to one scalar.", traits=(PURE,), verify=_verify_splat)


# ==== slices, reshapes, pads and friends (added with the linalg dialect) ===================
from ..ir.attributes import ArrayAttr as _ArrayAttr, DenseArrayAttr as _DenseArrayAttr  # noqa: E402
from ..ir.attributes import IntegerAttr as _IntegerAttr, UnitAttr as _UnitAttr  # noqa: E402
from .base import RETURN_LIKE, TERMINATOR  # noqa: E402


def _i64s(values) -> _DenseArrayAttr:
    return _DenseArrayAttr(T.i64, tuple(values))


def _seg(*values) -> _DenseArrayAttr:
    return _DenseArrayAttr(T.i32, tuple(values))


def _static(op, key) -> list:
    attr = op.attributes.get(key)
    return list(attr.values) if isinstance(attr, _DenseArrayAttr) else []


def _segments(op, names):
    """Operand groups by `operandSegmentSizes` (names in order); None if it is missing."""
    seg = op.attr("operandSegmentSizes")
    if not isinstance(seg, _DenseArrayAttr) or len(seg.values) != len(names) \
            or sum(seg.values) != len(op.operands):
        raise VerifyError("requires a valid 'operandSegmentSizes' attribute")
    out, k = {}, 0
    for name, n in zip(names, seg.values):
        out[name] = op.operands[k:k + n]
        k += n
    return out


def _mixed(ctx, items):
    """`[%a, 4]` -> (static values with kDynamic for SSA items, resolved SSA operands)."""
    static, dynamic = [], []
    for item in items:
        if isinstance(item, int):
            static.append(item)
        else:
            static.append(DYNAMIC_INDEX)
            dynamic.append(ctx.resolve(item, T.index))
    return static, dynamic


def _check_mixed(static, dynamic, what) -> None:
    if sum(1 for s in static if s == DYNAMIC_INDEX) != len(dynamic):
        raise VerifyError(f"expected {sum(1 for s in static if s == DYNAMIC_INDEX)} dynamic {what} values, "
                          f"got {len(dynamic)}")


@dialect.rule("tensor_pos_int")
def _tensor_pos_int(ctx, children):
    return int(children[0].value, 0)


@dialect.rule("tensor_neg_int")
def _tensor_neg_int(ctx, children):
    return -int(children[0].value, 0)


@dialect.rule("tensor_mixed", "tensor_ints", "tensor_reassoc")
def _tensor_list(ctx, children):
    return [c for c in children if c is not None]


@dialect.rule("tensor_output_shape")
def _tensor_output_shape(ctx, children):
    return children[0]


def _shape_text(shape) -> str:
    return "x".join("?" if d is None else str(d) for d in shape)


def _drop_unit_dims_matches(expected, got) -> bool:
    """`got` equals `expected` or is it with some static 1 dimensions dropped (rank reduction)."""
    i = 0
    for d in expected:
        if i < len(got) and (got[i] == d or (d is None and got[i] is None)):
            i += 1
        elif d == 1:
            continue
        else:
            return False
    return i == len(got)


# ---- tensor.extract_slice / tensor.insert_slice -------------------------------------------
def _slice_parts(op, insert):
    names = ("source", "dest", "offsets", "sizes", "strides") if insert else \
        ("source", "offsets", "sizes", "strides")
    return _segments(op, names)


def _slice_text(p, op, parts) -> str:
    return (mixed_text(p, _static(op, "static_offsets"), parts["offsets"]) + " "
            + mixed_text(p, _static(op, "static_sizes"), parts["sizes"]) + " "
            + mixed_text(p, _static(op, "static_strides"), parts["strides"]))


_SLICE_KEYS = ("static_offsets", "static_sizes", "static_strides", "operandSegmentSizes")


def _print_extract_slice(p, op) -> None:
    parts = _slice_parts(op, False)
    p.write("tensor.extract_slice ", p.value(parts["source"][0]), _slice_text(p, op, parts))
    p.write(p.attr_dict(op.attributes, elide=_SLICE_KEYS), " : ", p.type(parts["source"][0].type), " to ",
            p.type(op.results[0].type))


def _verify_slice_common(op, parts, full_type, slice_type) -> None:
    offsets, sizes, strides = (_static(op, k) for k in _SLICE_KEYS[:3])
    for what, static, dyn in (("offset", offsets, parts["offsets"]), ("size", sizes, parts["sizes"]),
                              ("stride", strides, parts["strides"])):
        _check_mixed(static, dyn, what)
    if not isinstance(full_type, T.RankedTensorType):
        return
    rank = full_type.rank
    for what, static in (("offset", offsets), ("size", sizes), ("stride", strides)):
        if len(static) != rank:
            raise VerifyError(f"expected {rank} {what} values")
    expected = tuple(None if s == DYNAMIC_INDEX else s for s in sizes)
    if isinstance(slice_type, T.RankedTensorType):
        if slice_type.element != full_type.element:
            raise VerifyError("expected the element types of the source and the result to match")
        if not _drop_unit_dims_matches(expected, slice_type.shape):
            want = T.RankedTensorType(expected, full_type.element)
            raise VerifyError(f"expected type to be '{want}' or a rank-reduced version. (size mismatch) ")
    for k, (off, size, stride, dim) in enumerate(zip(offsets, sizes, strides, full_type.shape)):
        if DYNAMIC_INDEX in (off, size, stride) or dim is None:
            continue
        if size > 0 and off + (size - 1) * stride >= dim:
            raise VerifyError(f"expected offset + (size - 1) * stride to be within bounds for dimension #{k}")


def _verify_extract_slice(op) -> None:
    parts = _slice_parts(op, False)
    _verify_slice_common(op, parts, parts["source"][0].type, op.results[0].type)


dialect.op("tensor.extract_slice", "A slice of a tensor (offsets, sizes, strides; may drop unit dims).",
           traits=(PURE,), properties=_SLICE_KEYS, verify=_verify_extract_slice, print=safe_printer(_print_extract_slice),
           names=OpSignature.of(("source", "offsets*", "sizes*", "strides*"), ("result",), _SLICE_KEYS[:3]))


def _slice_attributes(ctx, operands: list, segs: list, mixed_lists, attrs) -> dict:
    """The static_offsets/sizes/strides of a slice op; their SSA values are appended to
    `operands` after the `segs` leading ones."""
    attributes = {}
    for key, items in zip(("static_offsets", "static_sizes", "static_strides"), mixed_lists):
        static, dynamic = _mixed(ctx, items)
        attributes[key] = _i64s(static)
        operands += dynamic
        segs.append(len(dynamic))
    attributes["operandSegmentSizes"] = _seg(*segs)
    attributes.update(attrs or {})
    return attributes


@dialect.rule("tensor_extract_slice")
def _tensor_extract_slice(ctx, children):
    src, offsets, sizes, strides, attrs, src_type, dst_type = children
    operands = [ctx.resolve(src, src_type)]
    attributes = _slice_attributes(ctx, operands, [1], (offsets, sizes, strides), attrs)
    return create(ctx, "tensor.extract_slice", operands, [dst_type], attributes)


def _print_insert_slice(p, op) -> None:
    parts = _slice_parts(op, True)
    p.write("tensor.insert_slice ", p.value(parts["source"][0]), " into ", p.value(parts["dest"][0]),
            _slice_text(p, op, parts))
    p.write(p.attr_dict(op.attributes, elide=_SLICE_KEYS), " : ", p.type(parts["source"][0].type), " into ",
            p.type(parts["dest"][0].type))


def _verify_insert_slice(op) -> None:
    parts = _slice_parts(op, True)
    dest = parts["dest"][0].type
    if op.results[0].type != dest:
        raise VerifyError(f"result type '{op.results[0].type}' must match the destination type '{dest}'")
    _verify_slice_common(op, parts, dest, parts["source"][0].type)


dialect.op("tensor.insert_slice", "A copy of a tensor with a slice replaced by the source.",
           traits=(PURE,), properties=_SLICE_KEYS, verify=_verify_insert_slice, print=safe_printer(_print_insert_slice),
           names=OpSignature.of(("source", "dest", "offsets*", "sizes*", "strides*"), ("result",), _SLICE_KEYS[:3]))


@dialect.rule("tensor_insert_slice")
def _tensor_insert_slice(ctx, children):
    src, dest, offsets, sizes, strides, attrs, src_type, dst_type = children
    operands = [ctx.resolve(src, src_type), ctx.resolve(dest, dst_type)]
    attributes = _slice_attributes(ctx, operands, [1, 1], (offsets, sizes, strides), attrs)
    return create(ctx, "tensor.insert_slice", operands, [dst_type], attributes)


# ---- tensor.expand_shape / tensor.collapse_shape ---------------------------------------------
def _reassociation(op):
    attr = op.attr("reassociation")
    if not isinstance(attr, _ArrayAttr):
        raise VerifyError("requires a 'reassociation' attribute")
    groups = []
    for g in attr.items:
        if not isinstance(g, _ArrayAttr) or not all(isinstance(x, _IntegerAttr) for x in g.items):
            raise VerifyError("expected 'reassociation' to be an array of arrays of integers")
        groups.append([x.value for x in g.items])
    return groups


def _reassoc_attr(groups) -> _ArrayAttr:
    return _ArrayAttr(tuple(_ArrayAttr(tuple(_IntegerAttr(i, T.i64) for i in g)) for g in groups))


def _reassoc_text(groups) -> str:
    return "[" + ", ".join("[" + ", ".join(str(i) for i in g) + "]" for g in groups) + "]"


def _verify_reshape_like(op, collapsed, expanded) -> None:
    groups = _reassociation(op)
    if not isinstance(collapsed, T.RankedTensorType) or not isinstance(expanded, T.RankedTensorType):
        return
    if collapsed.element != expanded.element:
        raise VerifyError("expected the source and result element types to match")
    if collapsed.rank > expanded.rank:
        raise VerifyError(f"expected the expanded type, '{expanded}' to have a higher (or same) rank than the "
                          f"collapsed type, '{collapsed}'.")
    if collapsed.rank == 0 and not groups:
        if any(d is not None and d != 1 for d in expanded.shape):
            raise VerifyError("expected all dimensions of the expanded type to be 1 when collapsing to rank 0")
        return
    if len(groups) != collapsed.rank:
        raise VerifyError(f"expected collapsed rank ({collapsed.rank}) to equal the number of reassociation "
                          f"maps ({len(groups)})")
    flat = [i for g in groups for i in g]
    if flat != list(range(expanded.rank)):
        raise VerifyError("expected reassociation map #0 to be valid and contiguous")
    for k, g in enumerate(groups):
        dims = [expanded.shape[i] for i in g]
        c = collapsed.shape[k]
        if any(d is None for d in dims):
            if c is not None and all(d is not None for d in dims):
                pass
            continue
        prod = 1
        for d in dims:
            prod *= d
        if c is None:
            raise VerifyError(f"expected dimension {k} of collapsed type to be static value of {prod}")
        if c != prod:
            raise VerifyError(f"expected dimension {k} of collapsed type to be static value of {prod}")


def _print_expand(p, op) -> None:
    groups = _reassociation(op)
    src = op.operand("src")
    p.write("tensor.expand_shape ", p.value(src), " ", _reassoc_text(groups), " output_shape ",
            mixed_text(p, _static(op, "static_output_shape"), op.operands_named("output_shape")))
    p.write(p.attr_dict(op.attributes, elide=("reassociation", "static_output_shape")), " : ",
            p.type(src.type), " into ", p.type(op.results[0].type))


def _verify_expand(op) -> None:
    _verify_reshape_like(op, op.operand("src").type, op.results[0].type)
    static = _static(op, "static_output_shape")
    _check_mixed(static, op.operands_named("output_shape"), "output_shape")
    result = op.results[0].type
    if isinstance(result, T.RankedTensorType):
        if len(static) != result.rank:
            raise VerifyError(f"expected number of static shape dims to be equal to the output rank "
                              f"({result.rank}) but found {len(static)} inputs instead")
        for k, (s, d) in enumerate(zip(static, result.shape)):
            if s != DYNAMIC_INDEX and d is not None and s != d:
                raise VerifyError(f"invalid output shape provided at pos {k}")


dialect.op("tensor.expand_shape", "Splits dimensions of a tensor (a reassociation of result dims).",
           traits=(PURE,), properties=("reassociation", "static_output_shape"), verify=_verify_expand,
           print=safe_printer(_print_expand),
           names=OpSignature.of(("src", "output_shape*"), ("result",), ("reassociation", "static_output_shape")))


@dialect.rule("tensor_expand_shape")
def _tensor_expand_shape(ctx, children):
    src, groups, output_shape, attrs, src_type, dst_type = children
    operands = [ctx.resolve(src, src_type)]
    if output_shape is None:  # older syntax: static result shapes only
        if not isinstance(dst_type, T.RankedTensorType) or None in dst_type.shape:
            raise ctx.fail("expected 'output_shape' for a result type with dynamic dimensions")
        static = list(dst_type.shape)
    else:
        static, dynamic = _mixed(ctx, output_shape)
        operands += dynamic
    attributes = {"reassociation": _reassoc_attr(groups), "static_output_shape": _i64s(static)}
    attributes.update(attrs or {})
    return create(ctx, "tensor.expand_shape", operands, [dst_type], attributes)


def _print_collapse(p, op) -> None:
    src = op.operand("src")
    p.write("tensor.collapse_shape ", p.value(src), " ", _reassoc_text(_reassociation(op)))
    p.write(p.attr_dict(op.attributes, elide=("reassociation",)), " : ", p.type(src.type),
            " into ", p.type(op.results[0].type))


def _verify_collapse(op) -> None:
    _verify_reshape_like(op, op.results[0].type, op.operand("src").type)


dialect.op("tensor.collapse_shape", "Merges groups of dimensions of a tensor.", traits=(PURE,),
           properties=("reassociation",), verify=_verify_collapse, print=safe_printer(_print_collapse),
           names=OpSignature.of(("src",), ("result",), ("reassociation",)))


@dialect.rule("tensor_collapse_shape")
def _tensor_collapse_shape(ctx, children):
    src, groups, attrs, src_type, dst_type = children
    attributes = {"reassociation": _reassoc_attr(groups)}
    attributes.update(attrs or {})
    return create(ctx, "tensor.collapse_shape", [ctx.resolve(src, src_type)], [dst_type], attributes)


# ---- tensor.pad / tensor.yield / tensor.generate ---------------------------------------------
_PAD_KEYS = ("static_low", "static_high", "nofold", "operandSegmentSizes")


def _print_pad(p, op) -> None:
    parts = _segments(op, ("source", "low", "high"))
    p.write("tensor.pad ", p.value(parts["source"][0]))
    if "nofold" in op.attributes:
        p.write(" nofold")
    p.write(" low", mixed_text(p, _static(op, "static_low"), parts["low"]))
    p.write(" high", mixed_text(p, _static(op, "static_high"), parts["high"]), " ")
    p.region(op.regions[0])
    p.write(p.attr_dict(op.attributes, elide=_PAD_KEYS), " : ", p.type(parts["source"][0].type), " to ",
            p.type(op.results[0].type))


def _verify_pad(op) -> None:
    parts = _segments(op, ("source", "low", "high"))
    low, high = _static(op, "static_low"), _static(op, "static_high")
    _check_mixed(low, parts["low"], "low")
    _check_mixed(high, parts["high"], "high")
    src, result = parts["source"][0].type, op.results[0].type
    if not isinstance(src, T.RankedTensorType) or not isinstance(result, T.RankedTensorType):
        return
    if len(low) != src.rank or len(high) != src.rank:
        raise VerifyError(f"expected {src.rank} low and high padding values")
    if result.rank != src.rank:
        raise VerifyError(f"expected the result rank ({result.rank}) to match the source rank ({src.rank})")
    expected = []
    for d, lo, hi in zip(src.shape, low, high):
        expected.append(None if d is None or DYNAMIC_INDEX in (lo, hi) else d + lo + hi)
    for e, r in zip(expected, result.shape):
        if e is not None and r is not None and e != r:
            want = T.RankedTensorType(tuple(expected), src.element)
            raise VerifyError(f"specified type {result} does not match the inferred type {want}")
    if op.regions and op.regions[0].blocks:
        block = op.regions[0].blocks[0]
        if len(block.arguments) != src.rank or any(a.type != T.index for a in block.arguments):
            raise VerifyError(f"expected the block to have {src.rank} arguments")


dialect.op("tensor.pad", "Pads a tensor with the value its region yields.", traits=(PURE,),
           properties=_PAD_KEYS, verify=_verify_pad, print=safe_printer(_print_pad),
           names=OpSignature.of(("source", "low*", "high*"), ("result",), _PAD_KEYS[:3]))


@dialect.rule("tensor_pad")
def _tensor_pad(ctx, children):
    src, nofold, low, high, region, attrs, src_type, dst_type = children
    operands = [ctx.resolve(src, src_type)]
    low_s, low_d = _mixed(ctx, low)
    high_s, high_d = _mixed(ctx, high)
    operands += low_d + high_d
    attributes = {}
    if nofold is not None:
        attributes["nofold"] = _UnitAttr()
    attributes.update({"static_low": _i64s(low_s), "static_high": _i64s(high_s),
                       "operandSegmentSizes": _seg(1, len(low_d), len(high_d))})
    attributes.update(attrs or {})
    return create(ctx, "tensor.pad", operands, [dst_type], attributes, [region])


def _verify_tensor_yield(op) -> None:
    parent = op.parent_op
    if parent is None or parent.name not in ("tensor.pad", "tensor.generate"):
        raise VerifyError("expects parent op to be one of 'tensor.generate, tensor.pad'")
    value = op.operand("value").type
    want = T.element_type(parent.results[0].type) if parent.results else None
    if want is not None and value != want:
        what = "pad" if parent.name == "tensor.pad" else "generate"
        raise VerifyError("expected yield type to match shape element type" if what == "generate" else
                          f"expected yield type ({value}) to match the element type ({want})")


declare_family(dialect, "yield", ["tensor.yield"], "$value attr-dict `:` type($value)", operands=("value",),
               strict_properties=False, summary="Yields the element value of tensor.pad / tensor.generate.",
               traits=(TERMINATOR, RETURN_LIKE, PURE), verify=_verify_tensor_yield)


def _print_generate(p, op) -> None:
    p.write("tensor.generate")
    if op.operands:
        p.write(" ", p.values(op.operands))
    p.write(" ")
    p.region(op.regions[0])
    p.write(p.op_attr_dict(op), " : ", p.type(op.results[0].type))


def _verify_generate(op) -> None:
    t = _ranked(op.results[0].type)
    if len(op.operands) != _dynamic_count(t):
        raise VerifyError("must have as many index operands as dynamic extents in the result type")
    if op.regions and op.regions[0].blocks:
        block = op.regions[0].blocks[0]
        if len(block.arguments) != t.rank or any(a.type != T.index for a in block.arguments):
            raise VerifyError("must have one body argument per input dimension")


dialect.op("tensor.generate", "A tensor whose elements its region computes from their indices.",
           traits=(PURE,), verify=_verify_generate, print=safe_printer(_print_generate),
           names=OpSignature.of(("dynamicExtents*",), ("result",)))


@dialect.rule("tensor_generate")
def _tensor_generate(ctx, children):
    uses, region, attrs, type = children
    operands = [ctx.resolve(u, T.index) for u in (uses or [])]
    return create(ctx, "tensor.generate", operands, [type], attrs, [region])


# ---- tensor.reshape / tensor.concat / tensor.bitcast / tensor.rank ------------------------------
def _verify_reshape(op) -> None:
    src, shape = op.operand("source").type, op.operand("shape").type
    result = op.result_named("result").type
    if T.element_type(src) != T.element_type(result):
        raise VerifyError("element types of source and destination tensor types should be the same")
    if isinstance(shape, T.RankedTensorType) and isinstance(result, T.RankedTensorType):
        if shape.rank != 1:
            raise VerifyError("shape must be a 1-D tensor")
        if shape.shape[0] is not None and shape.shape[0] != result.rank:
            raise VerifyError("length of shape operand differs from the result's tensor rank")
    if isinstance(src, T.RankedTensorType) and isinstance(result, T.RankedTensorType) \
            and src.has_static_shape and result.has_static_shape and src.num_elements != result.num_elements:
        raise VerifyError("source and destination tensor should have the same number of elements")


declare_family(dialect, "reshape", ["tensor.reshape"],
               "$source `(` $shape `)` attr-dict `:` functional-type(operands, results)",
               operands=("source", "shape"), results=("result",), strict_properties=False,
               summary="Reshapes a tensor to the shape given by a 1-D tensor operand.", traits=(PURE,),
               verify=_verify_reshape)


def _print_concat(p, op) -> None:
    p.write(f"tensor.concat dim({op.attr('dim').value}) ", p.values(op.operands))
    p.write(p.attr_dict(op.attributes, elide=("dim",)), " : ", p.function_type(op.operand_types, op.result_types))


def _verify_concat(op) -> None:
    dim = op.attr("dim")
    result = _ranked(op.results[0].type)
    if not op.operands:
        raise VerifyError("requires at least one input")
    if not isinstance(dim, _IntegerAttr) or not 0 <= dim.value < result.rank:
        raise VerifyError("concatenation dim must be less than the tensor rank")
    total = 0
    for i, v in enumerate(op.operands):
        t = _ranked(v.type)
        if t.rank != result.rank:
            raise VerifyError("rank of concatenated inputs must match result rank")
        if t.element != result.element:
            raise VerifyError("inputs and result element type must match")
        d = t.shape[dim.value]
        total = None if total is None or d is None else total + d
        for k, (a, b) in enumerate(zip(t.shape, result.shape)):
            if k != dim.value and a is not None and b is not None and a != b:
                raise VerifyError(f"static concatenation size mismatch along non-concatenated dimension {k}")
    r = result.shape[dim.value]
    if total is not None and r is not None and total != r:
        raise VerifyError(f"result type {result} does not match inferred shape")


dialect.op("tensor.concat", "Concatenates tensors along one dimension.", traits=(PURE,),
           properties=("dim",), verify=_verify_concat, print=safe_printer(_print_concat),
           names=OpSignature.of(("inputs*",), ("result",), ("dim",)))


@dialect.rule("tensor_concat")
def _tensor_concat(ctx, children):
    dim, uses, attrs, ftype = children
    operands = ctx.resolve_all(uses, ftype.inputs)
    attributes = {"dim": _IntegerAttr(int(dim.value, 0), T.i64)}
    attributes.update(attrs or {})
    return create(ctx, "tensor.concat", operands, ftype.results, attributes)


def _verify_bitcast(op) -> None:
    a, b = op.operand("source").type, op.result_named("dest").type
    if isinstance(a, T.RankedTensorType) and isinstance(b, T.RankedTensorType):
        if a.rank != b.rank or any(x is not None and y is not None and x != y for x, y in zip(a.shape, b.shape)):
            raise VerifyError(f"operand type '{a}' and result type '{b}' are cast incompatible")
    wa, wb = (getattr(T.element_type(t), "width", None) for t in (a, b))
    if wa is not None and wb is not None and wa != wb:
        raise VerifyError(f"operand type '{a}' and result type '{b}' are cast incompatible")


declare_family(dialect, "bitcast", ["tensor.bitcast"], "$source attr-dict `:` type($source) `to` type($dest)",
               operands=("source",), results=("dest",), strict_properties=False,
               summary="Reinterprets the bits of each element as another type of the same width.", traits=(PURE,),
               verify=_verify_bitcast)
declare_family(dialect, "rank", ["tensor.rank"], "$tensor attr-dict `:` type($tensor)", operands=("tensor",),
               results=("result",), infer={"result": T.index}, strict_properties=False,
               summary="The rank of a tensor.", traits=(PURE,))
