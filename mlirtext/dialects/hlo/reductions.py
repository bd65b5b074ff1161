"""Reductions and sorting: reduce, reduce_window, select_and_scatter, map, sort and
top-k (mhlo's topk, chlo's top_k): declarations, reduce's custom syntax, and checks.
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.core import Block, Operation, Region
from ...ir.dense import DenseElementsAttr, parse_dense
from ..base import VerifyError
from .declare import HloOp
from .shared import (check_inferred, compatible, compatible_shape_and_el, compatible_shapes, elt, fail, int_attr,
                     ints_attr, is_ranked, padding_pairs, quoted, rank1_attrs, rank_of, same_shapes, shape_of, tensor,
                     terminator, verify_reducer, verify_window, window_output, with_elt)
from .syntax import (I64, Bool, HloFormat, arr, custom, hlo_create, i64_array, int_items, list_text, need, prefix_of,
                     short_of, sig_func)


def _hlo_reduce_input(ctx, children):
    return (children[0], children[1])


def _hlo_reduce_inputs(ctx, children):
    return children


def _reduce_operands(ctx, inputs, ftype):
    n = len(inputs)
    if len(ftype.inputs) != 2 * n:
        raise ctx.fail(f"expected {2 * n} operand types, got {len(ftype.inputs)}")
    values = [ctx.resolve(tok, t) for (tok, _), t in zip(inputs, ftype.inputs[:n])]
    inits = [ctx.resolve(tok, t) for (_, tok), t in zip(inputs, ftype.inputs[n:])]
    return values + inits


def _scalar_tensor(t):
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType((), t.element)
    if isinstance(t, T.UnrankedTensorType):
        return T.RankedTensorType((), t.element)
    return t


def _reduce_dims_attr(name: str, dims: list):
    """stablehlo's `array<i64: ...>`; mhlo's reduce keeps `dense<[...]> : tensor<Nxi64>`."""
    if prefix_of(name) == "mhlo":
        return parse_dense("[" + ", ".join(map(str, dims)) + "]", T.RankedTensorType((len(dims),), T.i64))
    return i64_array(dims)


def _reduce_dims(op) -> list:
    """The reduce dimensions in the attribute kind the prefix's custom syntax reads back."""
    a = op.attr("dimensions")
    if prefix_of(op.name) == "mhlo":
        need(isinstance(a, DenseElementsAttr) and not a.is_raw and len(a.shape) == 1
              and a.type.element == T.i64)
        return [int(v) for v in (list(a.values) * a.shape[0] if a.splat else a.values)]
    return arr(op, "dimensions")


_COMMUTATIVE = ("add", "and", "maximum", "minimum", "multiply", "or", "xor")


def _hlo_reduce_compact(ctx, children):
    name, inputs, body_tok, dims, attrs, ftype = children
    operands = _reduce_operands(ctx, inputs, ftype)
    n = len(inputs)
    block = Block()
    arg_types = [_scalar_tensor(v.type) for v in operands[n:]]
    lhs = [block.add_argument(t) for t in arg_types]
    rhs = [block.add_argument(t) for t in arg_types]
    for i, v in enumerate(lhs + rhs):  # named, so the printer's numbering does not move
        v.name = f"reduce_arg{i}"
    if n != 1:
        raise ctx.fail("the compact `applies` form takes one input")
    prefix = prefix_of(name.value)
    if prefix_of(body_tok.value) != prefix or short_of(body_tok.value) not in _COMMUTATIVE:
        raise ctx.fail(f"expected the inner-op to be a commutative binary-op from the {prefix} dialect, with zero "
                       "region, producing single result", body_tok)
    inner = Operation(body_tok.value, [lhs[0], rhs[0]], [arg_types[0]])
    inner.name_span = ctx.token_span(body_tok)
    inner.results[0].name = "reduce_result"
    ret = Operation(f"{prefix_of(name.value)}.return", [inner.results[0]])
    block.append(inner)
    block.append(ret)
    attributes = {"dimensions": _reduce_dims_attr(name.value, int_items(dims, ctx))}
    attributes.update(attrs or {})
    return hlo_create(ctx, name.value, operands, list(ftype.results), attributes, [Region([block])])


def _hlo_reducer_pair(ctx, children):
    return (children[0], children[1])


def _hlo_reducer(ctx, children):
    pairs = children
    ctx.set_entry_args([p[0] for p in pairs] + [p[1] for p in pairs])
    return pairs


def _hlo_reduce_long(ctx, children):
    name, inputs, dims, attrs, ftype, _pairs, region = children
    operands = _reduce_operands(ctx, inputs, ftype)
    attributes = {"dimensions": _reduce_dims_attr(name.value, int_items(dims, ctx))}
    attributes.update(attrs or {})
    return hlo_create(ctx, name.value, operands, list(ftype.results), attributes, [region])


def _compact_reduce_body(op):
    """The op name of a reduce body `%r = op %a, %b; return %r`, else None."""
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1 or len(op.operands) != 2:
        return None
    block = op.regions[0].blocks[0]
    if len(block.ops) != 2 or len(block.arguments) != 2:
        return None
    inner, ret = block.ops
    if inner.regions or inner.attributes or len(inner.results) != 1 or len(inner.operands) != 2:
        return None
    if not ret.name.endswith(".return") or list(ret.operands) != [inner.results[0]]:
        return None
    if list(inner.operands) != list(block.arguments):
        return None
    t = block.arguments[0].type
    if block.arguments[1].type != t or inner.results[0].type != t:
        return None
    init = op.operands[1].type
    if not isinstance(init, T.RankedTensorType) or t != T.RankedTensorType((), init.element):
        return None
    if prefix_of(inner.name) != prefix_of(op.name) or short_of(inner.name) not in _COMMUTATIVE:
        return None
    return inner.name


@custom
def _print_reduce(p, op) -> None:
    n = len(op.operands) // 2
    need(n >= 1 and len(op.operands) == 2 * n and len(op.regions) == 1)
    inputs = ", ".join(f"({p.value(a)} init: {p.value(b)})" for a, b in zip(op.operands[:n], op.operands[n:]))
    dims = list_text(_reduce_dims(op))
    attrs = p.op_attr_dict(op, elide=("dimensions",))
    body = _compact_reduce_body(op)
    p.write(op.name, inputs)
    if body is not None:
        p.write(" applies ", body, " across dimensions = ", dims, attrs, " : ", sig_func(p, op))
        return
    region = op.regions[0]
    need(len(region.blocks) >= 1 and len(region.blocks[0].arguments) == 2 * n)
    args = region.blocks[0].arguments
    p.write(" across dimensions = ", dims, attrs, " : ", sig_func(p, op), "\n", "  " * (p.level + 1), "reducer")
    for a, b in zip(args[:n], args[n:]):
        p.write(f"({p.value(a)}: {p.type(a.type)}, {p.value(b)}: {p.type(b.type)})")
    p.write(" ")
    p.region(region, print_entry_args=False)


def _reduce(op):
    n = len(op.operands) // 2
    if n == 0 or not op.regions or not op.regions[0].blocks:
        return
    inputs, inits = op.operand_types[:n], op.operand_types[n:]
    dims = ints_attr(op, "dimensions")
    if dims is None:
        return
    shapes = [shape_of(t) for t in inputs]
    if any(s is None for s in shapes):
        return
    for i in range(1, n):
        if not (len(shapes[i]) == len(shapes[0]) and compatible_shapes(inputs[0], inputs[i])):
            fail(f"expects all inputs to have compatible shapes. Shape at input-index {i} is not compatible with "
                 f"shape at input-index 0")
    rank = len(shapes[0])
    seen = set()
    for d in dims:
        if d < 0 or d >= rank:
            fail(f"Out-of-bounds dimension {d}, expected to be in range [0, {rank})")
        if d in seen:
            fail(f"Duplicate reduction dimension: {d}")
        seen.add(d)
    kept = [shapes[0][i] for i in range(rank) if i not in seen]
    verify_reducer(op.regions[0].blocks[0], inputs, inits, kept)
    term = terminator(op.regions[0])
    if term is not None and len(term.operands) == n:
        check_inferred(op, [tensor(kept, elt(v.type)) for v in term.operands])


def _reduce_window(op):
    if "window_dimensions" not in op.attributes:
        fail("requires attribute 'window_dimensions'")
    rank1_attrs(op, "window_dimensions", "window_strides", "base_dilations", "window_dilations")
    n = len(op.operands) // 2
    if n == 0:
        return
    inputs, inits = op.operand_types[:n], op.operand_types[n:]
    window = ints_attr(op, "window_dimensions")
    shapes = [shape_of(t) for t in inputs]
    if window is None or any(s is None for s in shapes):
        return
    for i in range(1, n):
        if not (len(shapes[i]) == len(shapes[0]) and compatible_shapes(inputs[0], inputs[i])):
            fail(f"expects all inputs to have compatible shapes. Shape at input-index {i} is not compatible with "
                 f"shape at input-index 0")
    pads = padding_pairs(op)
    for t in inputs:
        if rank_of(t) != len(window):
            fail(f"expects window-dimensions size == input rank, but got window-dimensions size: {len(window)} "
                 f"and input: '{t}' with rank = {rank_of(t)}.")
    win = verify_window(window, ints_attr(op, "window_strides"), pads, ints_attr(op, "base_dilations"),
                        ints_attr(op, "window_dilations"))
    if op.regions and op.regions[0].blocks:
        verify_reducer(op.regions[0].blocks[0], inputs, inits, window)
        term = terminator(op.regions[0])
        if term is not None and len(term.operands) == n:
            check_inferred(op, [tensor(window_output(s, win), elt(v.type)) for s, v in zip(shapes, term.operands)])


def _select_and_scatter(op):
    if len(op.operands) != 3 or len(op.regions) != 2:
        return
    ot, st, it = op.operand_types
    sel = op.regions[0].blocks[0] if op.regions[0].blocks else None
    if sel is None:
        return
    if len(sel.arguments) != 2:
        fail(f"expects the select-region to take 2 parameters, but takes {len(sel.arguments)}")
    want = tensor((), elt(ot))
    for i, a in enumerate(sel.arguments):
        if not compatible_shape_and_el(want, a.type, True):
            fail(f"expects the type of select-region's parameter at index {i} to be '{want}', but got '{a.type}'")
    term = terminator(op.regions[0])
    if term is not None:
        if len(term.operands) != 1:
            fail(f"expects select-region to return single value, but got: {len(term.operands)}")
        rt = term.operands[0].type
        if not is_ranked(rt) or elt(rt) != T.i1 or rank_of(rt) != 0:
            fail(f"expects the return-type of select-region to be tensor<i1>, but got: '{rt}'")
    if op.regions[1].blocks:
        verify_reducer(op.regions[1].blocks[0], [tensor((), elt(st))], [it], [])
    window = ints_attr(op, "window_dimensions") or []
    r = rank_of(ot)
    if r is None:
        return
    if r != len(window):
        fail(f"expects window-dimensions size == operand rank, but got window-dimensions size: {len(window)} and "
             f"operand-type: '{ot}' with rank = {r}.")
    pads = padding_pairs(op)
    win = verify_window(window, ints_attr(op, "window_strides"), pads, None, None)
    wt = tensor(window_output(shape_of(ot), win), elt(ot))
    if not compatible_shape_and_el(wt, st, True):
        fail(f"expects source-type to be '{wt}', but got'{st}'")
    sc = terminator(op.regions[1])
    if sc is not None and sc.operands:
        check_inferred(op, [with_elt(ot, elt(sc.operands[0].type))])


def _map(op):
    if not op.regions or not op.regions[0].blocks:
        fail("expect non-empty region")
    block = op.regions[0].blocks[0]
    args = block.arguments
    if len(op.operands) != len(args):
        fail(f"expects number of operands to match the arity of map computation, but got: {len(op.operands)} and "
             f"{len(args)}")
    for i, a in enumerate(args):
        if rank_of(a.type) != 0:
            fail(f"computation arguments must be 0-rank tensor, but got: arg #{i} of type '{a.type}'")
        oe = elt(op.operand_types[i])
        if elt(a.type) != oe:
            fail(f"element type of operands and computation arguments must match, but got: '{oe}' and "
                 f"'{elt(a.type)}'")
    term = terminator(op.regions[0])
    outs = [v.type for v in term.operands] if term is not None else []
    if len(outs) != 1:
        fail(f"computation must return single output, but got: {len(outs)}")
    if rank_of(outs[0]) != 0:
        fail(f"computation must return 0-rank tensor, but got: '{outs[0]}'")
    dims = ints_attr(op, "dimensions") or []
    if any(d != i for i, d in enumerate(dims)):
        fail(f"requires monotonically increasing dimension numbers, but got: {', '.join(map(str, dims))}")
    shape = None
    for t in op.operand_types:
        s = shape_of(t)
        if s is None:
            return
        if len(dims) != len(s):
            fail(f"applied to a subset of dimensions currently not supported: operand dimensions = {len(s)}, "
                 f"requested map dimensions size = {len(dims)}")
        shape = s
    if shape is not None:
        check_inferred(op, [tensor(shape, elt(outs[0]))])


def _sort(op):
    if not op.operands:
        return
    if not same_shapes(op.operand_types + op.result_types):
        fail("requires the same shape for all operands and results")
    dim = int_attr(op, "dimension", -1)
    r = rank_of(op.operand_types[0])
    if r is not None and (dim < -r or dim >= r):
        fail(f"dimension attribute value must be in range [-{r}, {r}), but found {dim}")
    if not op.regions or not op.regions[0].blocks:
        return
    block = op.regions[0].blocks[0]
    n = len(op.operands)
    if len(block.arguments) != 2 * n:
        fail(f"comparator block should have {2 * n} arguments")
    for i, t in enumerate(op.operand_types):
        want = tensor((), elt(t))
        for j in (2 * i, 2 * i + 1):
            if block.arguments[j].type != want:
                fail(f"comparator block argument #{j} should be of type '{want}' but got "
                     f"'{block.arguments[j].type}'")
    term = terminator(op.regions[0])
    if term is not None:
        if len(term.operands) != 1:
            fail(f"comparator must return single output but got {len(term.operands)}")
        rt = term.operands[0].type
        if rank_of(rt) != 0 or elt(rt) != T.i1:
            fail(f"comparator must return tensor<i1> but got '{rt}'")
    got = op.result_types
    if len(got) != n or not all(compatible(a, b) for a, b in zip(op.operand_types, got)):
        raise VerifyError(f"inferred type(s) {quoted(op.operand_types)} are incompatible with return type(s) of "
                          f"operation {quoted(got)}", also=["failed to infer returned types"])


def _topk(op):
    if not op.operands:
        return
    s = shape_of(op.operand_types[0])
    k = int_attr(op, "k")
    if s is None or k is None:
        return
    if len(s) < 1:
        fail("operand's rank must be at least 1")
    if s[-1] is not None and s[-1] < k:
        fail(f"operand's last dimension must be at least {k}")
    out = list(s[:-1]) + [k]
    check_inferred(op, [tensor(out, elt(op.operand_types[0])), tensor(out, T.i32)])


#: Grammar callbacks of reduce's custom syntax.
RULES = {"hlo_reduce_input": _hlo_reduce_input, "hlo_reduce_inputs": _hlo_reduce_inputs,
         "hlo_reduce_compact": _hlo_reduce_compact, "hlo_reducer_pair": _hlo_reducer_pair,
         "hlo_reducer": _hlo_reducer, "hlo_reduce_long": _hlo_reduce_long}

OPS = (
    HloOp("reduce", "Reduces dimensions with a computation.", ("dimensions",), verify=_reduce, print=_print_reduce),
    HloOp("reduce_window", "Reduces windows with a computation.",
          ("window_dimensions", "window_strides", "base_dilations", "window_dilations", "padding"),
          verify=_reduce_window),
    HloOp("select_and_scatter", "Selects in windows and scatters.", ("window_dimensions", "window_strides", "padding"),
          verify=_select_and_scatter),
    HloOp("map", "Applies a computation elementwise.", ("dimensions",), verify=_map),
    HloOp("sort", "Sorts along a dimension with a comparator.", ("dimension", "is_stable"), verify=_sort),
)


def _top_k_format(family: str, largest: bool) -> HloFormat:
    """`chlo.top_k(%x, k = 5) : T -> (T1, T2)`; mhlo's `topk` takes `, largest = true` too (both
    dialects' ODS formats)."""
    option = " (`,` `largest` `=` $largest^)?" if largest else ""
    return HloFormat(family, "`(` $operand `,` `k` `=` $k" + option + " `)` attr-dict `:` "
                     "type($operand) `->` `(` type($values) `,` type($indices) `)`", ("operand",),
                     {"k": I64, **({"largest": Bool()} if largest else {})}, results=("values", "indices"))


#: mhlo's own.
MHLO_OPS = (
    HloOp("topk", "The k largest elements and their indices.", ("k", "largest"), verify=_topk, inferred=True,
          format=_top_k_format("topk", True)),
)

#: chlo's.
CHLO_OPS = (
    HloOp("top_k", "The k largest elements and their indices.", ("k",), verify=_topk,
          format=_top_k_format("top_k", False)),
)
