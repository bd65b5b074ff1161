"""dot, dot_general, einsum, unary_einsum and ragged_dot (mhlo's and chlo's):
declarations, dot_general's custom<DotDimensionNumbers> and algorithm, and checks.
"""
from __future__ import annotations

import re

from ...ir.attributes import ArrayAttr, OpaqueAttr
from .. import hlo_attrs as A
from ..assembly_format import Custom, StringAttrKind
from .declare import HloOp
from .shared import (attr, compatible_dims, dim_text, elt, fail, first_duplicate, is_quant, q_dims, qtype,
                     quant_conv_common, shape_of)
from .syntax import FUNCTIONAL, HloFormat, Words, int_items, list_text, need, prefix_of


class _DotAlgorithm:
    """`<lhs_precision_type = tf32, ...>`: the body of `#prefix.dot_algorithm<...>`."""

    grammar = "hlo_dot_algorithm"

    def __init__(self, prefix: str):
        self.head = f"#{prefix}.dot_algorithm<"

    def parse(self, ctx, entries):
        return OpaqueAttr(self.head + ", ".join(f"{k} = {v}" for k, v, _ in entries) + ">")

    def print(self, p, attr) -> str:
        need(isinstance(attr, OpaqueAttr) and attr.text.startswith(self.head))
        return f"<{attr.body}>"


_DOT_FIELD = re.compile(r"(\w+) = \[([^\]]*)\]")
_DOT_KEYS = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
             "rhs_contracting_dimensions")


def _parse_dot_dims(ctx, name, child):
    """custom<DotDimensionNumbers>: `batching_dims = [0] x [0], contracting_dims = [2] x [1]`
    (batching optional) -> `#prefix.dot<...>` with the non-empty fields."""
    lists = [int_items(items, ctx) for pair in child for items in pair]
    if len(lists) == 2:
        lists = [[], []] + lists
    fields = [f"{key} = {list_text(values)}" for key, values in zip(_DOT_KEYS, lists) if values]
    return {"dot_dimension_numbers": OpaqueAttr(f"#{prefix_of(name)}.dot<{', '.join(fields)}>")}


def _print_dot_dims(p, op):
    prefix = prefix_of(op.name)
    a = op.attr("dot_dimension_numbers")
    need(isinstance(a, OpaqueAttr) and a.text.startswith(f"#{prefix}.dot<") and a.text.endswith(">"))
    body = a.text[len(prefix) + 6:-1].strip()
    fields = {m.group(1): [int(x) for x in m.group(2).replace(" ", "").split(",") if x]
              for m in _DOT_FIELD.finditer(body)}
    need(_DOT_FIELD.sub("", body).replace(",", "").strip() == "")
    need(set(fields) <= set(_DOT_KEYS))
    # the custom form reads back in this order: a verbatim attribute in another order stays generic
    need(list(fields) == [k for k in _DOT_KEYS if k in fields])
    lb, rb, lc, rc = (fields.get(k, []) for k in _DOT_KEYS)
    batching = f" batching_dims = {list_text(lb)} x {list_text(rb)}," if lb or rb else ""
    return f"{batching} contracting_dims = {list_text(lc)} x {list_text(rc)}", ("dot_dimension_numbers",)


def _hlo_dims_pair(ctx, children):
    lhs, x, rhs = children
    if x.value != "x":
        raise ctx.fail(f"expected 'x', found '{x.value}'", x)
    return lhs, rhs


_DOT_DIMS = Custom("hlo_dot_dims", _parse_dot_dims, _print_dot_dims)


def _precision(prefix: str) -> Words:
    return Words(prefix, "precision")


_PRECISIONS = {"DEFAULT", "HIGH", "HIGHEST", "PACKED_NIBBLE"}


def verify_precision_config(op) -> None:
    a = op.attr("precision_config")
    if a is None:
        return
    if isinstance(a, ArrayAttr):
        for item in a.items:
            if not (isinstance(item, OpaqueAttr) and A.enum_word(item) in _PRECISIONS):
                fail("attribute 'precision_config' failed to satisfy constraint: Precision Config attribute")
        if len(a.items) > 2:
            fail("expects precision config to be empty or have <= 2 elements.")


def verify_dot_general_quant(op, rhs_contracting) -> None:
    l, r, o = op.operand_types[0], op.operand_types[1], op.result_types[0]
    if not any(is_quant(t) for t in (l, r, o)):
        return
    qr = qtype(r)
    if qr is not None:
        if not qr.per_axis and any(z != 0 for z in qr.zero_points):
            fail("Zero point of rhs should be 0")
        if qr.per_axis:
            if any(z != 0 for z in qr.zero_points):
                fail("Zero points of rhs should be 0")
            if qr.axis in rhs_contracting:
                fail("Quantization dimension of rhs should not be in the contracting dimension of rhs")
    quant_conv_common(elt(l), elt(r), elt(o))


def _dot(op):
    verify_precision_config(op)
    l, r = shape_of(op.operand("lhs").type), shape_of(op.operand("rhs").type)
    if l is None or r is None:
        return
    if len(l) == 1 and len(r) == 1 and compatible_dims(l[0], r[0]):
        dims = []
    elif len(l) == 2 and len(r) == 1 and compatible_dims(l[1], r[0]):
        dims = [l[0]]
    elif len(l) == 1 and len(r) == 2 and compatible_dims(l[0], r[0]):
        dims = [r[1]]
    elif len(l) == 2 and len(r) == 2 and compatible_dims(l[1], r[0]):
        dims = [l[0], r[1]]
    else:
        fail("expected both lhs/rhs ranks to be either 1 or 2")
    result = op.result_named("result").type
    rs = shape_of(result)
    if rs is not None and (len(rs) != len(dims) or not all(compatible_dims(a, b) for a, b in zip(dims, rs))):
        fail(f"inferred shape '{q_dims(dims)}' is incompatible with return type of operation '{result}'")


def check_dims_distinct(a, b, na, nb):
    sa = set(a)
    for d in b:
        if d in sa:
            fail(f"has duplicated dimension from {na} and {nb}: {d}")
    if first_duplicate(a) is not None:
        fail(f"has duplicated dimension from {na} and {nb}: {first_duplicate(a)}")
    if first_duplicate(b) is not None:
        fail(f"has duplicated dimension from {na} and {nb}: {first_duplicate(b)}")


def check_dot_general_dims(l, r, lb, rb, lc, rc) -> None:
    """The dimension numbers of a dot_general (or ragged_dot) against the operand shapes `l` and
    `r` (None when unranked)."""
    if len(lb) != len(rb):
        fail("lhs and rhs should have the same number of batching dimensions")
    if len(lc) != len(rc):
        fail("lhs and rhs should have the same number of contracting dimensions")
    check_dims_distinct(lb, lc, "lhs_batching_dimensions", "lhs_contracting_dimensions")
    check_dims_distinct(rb, rc, "rhs_batching_dimensions", "rhs_contracting_dimensions")
    if l is None or r is None:
        return
    for rank, dims, name in ((len(l), lb, "lhs_batching_dimensions"), (len(l), lc, "lhs_contracting_dimensions"),
                             (len(r), rb, "rhs_batching_dimensions"), (len(r), rc, "rhs_contracting_dimensions")):
        for x in dims:
            if x < 0 or x >= rank:
                fail(f"{name} value: {x} is out of range: [0, {rank})")
    for a, b in zip(lb, rb):
        if not compatible_dims(l[a], r[b]):
            fail("batching dimension sizes must match for lhs/rhs")
    for a, b in zip(lc, rc):
        if not compatible_dims(l[a], r[b]):
            fail("contracting dimension sizes must match for lhs/rhs")


def _dot_general(op):
    verify_precision_config(op)
    d = A.dot_dims(attr(op, "dot_dimension_numbers"))
    if d is None:
        return
    lb, rb = d["lhs_batching_dimensions"], d["rhs_batching_dimensions"]
    lc, rc = d["lhs_contracting_dimensions"], d["rhs_contracting_dimensions"]
    l, r = shape_of(op.operand("lhs").type), shape_of(op.operand("rhs").type)
    check_dot_general_dims(l, r, lb, rb, lc, rc)
    if l is None or r is None:
        return
    dims = [l[i] for i in lb] + [l[i] for i in range(len(l)) if i not in lb and i not in lc] + \
        [r[i] for i in range(len(r)) if i not in rb and i not in rc]
    result = op.result_named("result").type
    rs = shape_of(result)
    if rs is not None and (len(rs) != len(dims) or not all(compatible_dims(a, b) for a, b in zip(dims, rs))):
        fail(f"inferred shape '{q_dims(dims)}' is incompatible with return type of operation '{result}'")
    verify_dot_general_quant(op, rc)
    algorithm = op.attr("algorithm")
    if algorithm is not None:
        pc = A.precision_config(op.attr("precision_config")) or []
        if any(p != "DEFAULT" for p in pc):
            fail("must specify DEFAULT precision config when algorithm is set.")
        f = A.struct_fields(algorithm) or {}
        for key, msg in (("lhs_component_count", "lhs component count must be positive"),
                         ("rhs_component_count", "rhs component count must be positive"),
                         ("num_primitive_operations", "num primitive operations must be positive")):
            if isinstance(f.get(key), int) and f[key] < 1:
                fail(msg)


def _ragged_dot(op):
    """Three modes, by the kind of the lhs ragged dimension (MHLO's checkRaggedDotConstraints):
    non-contracting [b,m,k] x [g,b,k,n] with group_sizes [b,g]; contracting and batch, where
    the rhs has no group dimension. group_sizes is [g] or [b..., x..., g]."""
    verify_precision_config(op)
    f = A.struct_fields(attr(op, "ragged_dot_dimension_numbers"))
    if f is None or len(op.operands) != 3:
        return
    lb, rb, lc, rc = (A.dims_field(f, k) for k in ("lhs_batching_dimensions", "rhs_batching_dimensions",
                                                    "lhs_contracting_dimensions", "rhs_contracting_dimensions"))
    ragged, groups = A.dims_field(f, "lhs_ragged_dimensions"), A.dims_field(f, "rhs_group_dimensions")
    l, r, g = (shape_of(t) for t in op.operand_types)
    check_dot_general_dims(l, r, lb, rb, lc, rc)
    if l is None or r is None or g is None:
        return
    if len(ragged) != 1:
        fail("There must be exactly one ragged dimension in the lhs.")
    rd = ragged[0]
    if not 0 <= rd < len(l):
        fail(f"Expects lhs_ragged_dim to be in range [0, lhs_rank) i.e. [0, {len(l)}). got: {rd}.")
    mode = "batch" if rd in lb else "contracting" if rd in lc else "non-contracting"
    if mode == "batch":
        prefix = lb[:lb.index(rd)]
    elif mode == "contracting":
        prefix = lb + lc[:lc.index(rd)]
    else:
        prefix = lb + [i for i in range(rd) if i not in lb and i not in lc]
    want = [l[i] for i in prefix]
    if len(g) != 1:
        if len(g) != len(want) + 1:
            fail(f"expected group_sizes to have rank {len(want) + 1}, got {len(g)}")
        if list(g[:-1]) != want:
            fail(f"group_sizes is expected to have shape [{', '.join(map(dim_text, want + [g[-1]]))}], got "
                 f"[{', '.join(map(dim_text, g))}]")
    for x in groups:
        if not 0 <= x < len(r):
            fail(f"Expects rhs_group_dim to be in range [0, rhs_rank) i.e. [0, {len(r)}). got: {x}.")
    check_dims_distinct(groups, rb, "rhs_group_dimensions", "rhs_batching_dimensions")
    check_dims_distinct(groups, rc, "rhs_group_dimensions", "rhs_contracting_dimensions")
    if mode != "non-contracting" and groups:
        fail("There must be zero group dimensions in the rhs when the ragged dimension is batch or contracting.")
    if mode == "non-contracting":
        if len(groups) != 1:
            fail("There must be exactly one group dimension in the rhs when the lhs ragged dimension is "
                 "non-contracting.")
        if not compatible_dims(g[-1], r[groups[0]]):
            fail(f"rhs group dimension is expected to have size={dim_text(g[-1])}, got {dim_text(r[groups[0]])}")
    dims = ([g[-1]] if mode == "contracting" else []) + [l[i] for i in lb] + \
        [l[i] for i in range(len(l)) if i not in lb and i not in lc] + \
        [r[i] for i in range(len(r)) if i not in rb and i not in rc and i not in groups]
    rs = shape_of(op.result_types[0]) if op.results else None
    if rs is not None and (len(rs) != len(dims) or not all(compatible_dims(a, b) for a, b in zip(dims, rs))):
        fail(f"inferred shape '{q_dims(dims)}' is incompatible with return type of operation '{op.result_types[0]}'")


OPS = (
    HloOp("dot", "Dot product (legacy).", ("precision_config",), verify=_dot,
          format=HloFormat("dot", "$lhs `,` $rhs (`,` `precision` `=` $precision_config^)? " + FUNCTIONAL,
                           ("lhs", "rhs"), {"precision_config": _precision})),
    HloOp("dot_general", "General dot product with batching and contracting dimensions.",
          ("dot_dimension_numbers", "precision_config", "algorithm"), verify=_dot_general,
          format=HloFormat("dot_general", "$lhs `,` $rhs `,` custom<DotDimensionNumbers> (`,` `precision` `=` "
                           "$precision_config^)? (`,` `algorithm` `=` $algorithm^)? " + FUNCTIONAL, ("lhs", "rhs"),
                           {"precision_config": _precision, "algorithm": _DotAlgorithm},
                           {"DotDimensionNumbers": _DOT_DIMS})),
    HloOp("einsum", "Einstein summation (legacy).", ("einsum_config",),
          format=HloFormat("einsum", "$lhs `,` $rhs `,` `config` `=` $einsum_config " + FUNCTIONAL, ("lhs", "rhs"),
                           {"einsum_config": StringAttrKind()})),
    HloOp("unary_einsum", "Unary Einstein summation (legacy).", ("einsum_config",),
          format=HloFormat("unary_einsum", "$operand `,` `config` `=` $einsum_config " + FUNCTIONAL, ("operand",),
                           {"einsum_config": StringAttrKind()})),
)

#: mhlo's own.
MHLO_OPS = (
    HloOp("ragged_dot", "Dot with ragged groups.", ("ragged_dot_dimension_numbers", "precision_config"),
          verify=_ragged_dot),
)

#: chlo's.
CHLO_OPS = (
    HloOp("ragged_dot", "Dot with ragged groups.", ("ragged_dot_dimension_numbers", "precision_config"),
          verify=_ragged_dot, operands=("lhs", "rhs", "group_sizes")),
)

#: Grammar callbacks of dot_general's custom<DotDimensionNumbers>.
RULES = {"hlo_dims_pair": _hlo_dims_pair}
