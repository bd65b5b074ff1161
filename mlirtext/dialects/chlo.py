"""chlo: client HLO ops: broadcasting binaries, special functions and a few composites.

The elementwise families have declared assembly formats (below); the other ops'
custom syntax is in `grammars/hlo.lark` (shared with stablehlo and mhlo).
chlo ops have no stablehlo counterpart; ragged_dot and top_k share their checks
with mhlo's (declared by the family modules, `op_set.CHLO_OPS`); the others are
checked by their type constraints (hlo_types.py) and, for scan, below.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import DenseArrayAttr, IntegerAttr
from ..ir.signatures import OpSignature
from .assembly_format import declare_family
from .base import PURE, Dialect, VerifyError
from .common import create
from .hlo.declare import declare_ops, verifier
from .hlo.op_set import CHLO_OPS

dialect = Dialect("chlo")

#: Broadcasting elementwise binaries (`chlo.broadcast_add`, ...).
BROADCAST_BINARY = ("add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply",
                    "next_after", "or", "polygamma", "power", "remainder", "shift_left",
                    "shift_right_arithmetic", "shift_right_logical", "subtract", "xor", "zeta")
#: Elementwise unary special functions.
UNARY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "digamma",
         "erf", "erf_inv", "erfc", "is_inf", "is_neg_inf", "is_pos_inf", "lgamma", "sinh", "square", "tan")
#: Same-shape binaries.
BINARY = ("next_after", "polygamma", "zeta", "mulhi")

_FUNCTIONAL = "attr-dict `:` functional-type(operands, results)"
_BROADCAST = ("broadcast_dimensions",)


def _per_op(summary: str):
    """`summary` with the op's short name (`add` of `chlo.broadcast_add`), and the verifier of
    the op's type constraints."""
    def per_op(name: str) -> dict:
        return {"summary": summary.format(name[5:].removeprefix("broadcast_")),
                "verify": verifier(None)}
    return per_op


# Declared assembly formats, as chlo's ODS writes them: family, ops, format, operands, summary,
# inherent attributes (written in the attribute dictionary).
for _family, _names, _format, _operands, _summary, _props in (
        ("broadcast_binary", [f"chlo.broadcast_{n}" for n in BROADCAST_BINARY], "$lhs `,` $rhs " + _FUNCTIONAL,
         ("lhs", "rhs"), "Broadcasting elementwise {}.", _BROADCAST),
        ("broadcast_compare", ["chlo.broadcast_compare"], "$lhs `,` $rhs " + _FUNCTIONAL, ("lhs", "rhs"),
         "Broadcasting elementwise comparison.", _BROADCAST + ("comparison_direction", "compare_type")),
        ("broadcast_select", ["chlo.broadcast_select"], "$pred `,` $on_true `,` $on_false " + _FUNCTIONAL,
         ("pred", "on_true", "on_false"), "Broadcasting select.", ()),
        ("unary", [f"chlo.{n}" for n in UNARY], "$operand attr-dict `:` type($operand) `->` type($result)",
         ("operand",), "Elementwise {}.", ()),
        ("binary", [f"chlo.{n}" for n in BINARY],
         "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)", ("lhs", "rhs"),
         "Elementwise {}.", ())):
    declare_family(dialect, _family, _names, _format, operands=_operands, results=("result",),
                   attributes=dict.fromkeys(_props), per_op=_per_op(_summary), strict_properties=False,
                   traits=(PURE,), properties=_props)
dialect.op("chlo.constant_like", "A splat constant shaped like its operand.", (PURE,), ("value",), verifier(None),
           names=OpSignature.of(("operand",), ("result",), ("value",)))
dialect.op("chlo.constant", "A constant.", (PURE,), ("value",), verifier(None),
           names=OpSignature.of((), ("output",), ("value",)))
declare_ops(dialect, "chlo", CHLO_OPS)


# ---- chlo.scan: custom syntax and checks ------------------------------------------------------
def _scan_counts(op) -> tuple[int, int]:
    """(scanned inputs, initial carries), from `operandSegmentSizes`."""
    seg = op.attributes.get("operandSegmentSizes")
    if isinstance(seg, DenseArrayAttr) and len(seg.values) == 2 and sum(seg.values) == len(op.operands):
        return int(seg.values[0]), int(seg.values[1])
    raise VerifyError("requires attribute 'operandSegmentSizes' with 2 elements summing to the operand count")


def _verify_scan(op) -> None:
    n_in, n_init = _scan_counts(op)
    dim = op.attributes.get("dimension")
    if not (isinstance(dim, IntegerAttr) and dim.type == T.i64):
        raise VerifyError("requires attribute 'dimension' (a 64-bit integer)")
    for t in op.operand_types[:n_in]:
        if isinstance(t, T.RankedTensorType) and not 0 <= dim.value < len(t.shape):
            raise VerifyError(f"dimension {dim.value} is out of range for input of rank {len(t.shape)}")
    n_out = len(op.results) - n_init
    if n_out < 0:
        raise VerifyError(f"expected at least {n_init} results (one carry per init), but found {len(op.results)}")
    if list(op.result_types[n_out:]) != list(op.operand_types[n_in:]):
        raise VerifyError("the carry results must have the types of the inits")
    if len(op.regions) != 1 or not op.regions[0].blocks:
        raise VerifyError("requires one region with a body block")
    args = op.regions[0].blocks[0].arguments
    if len(args) != n_in + n_init:
        raise VerifyError(f"the body takes {len(args)} arguments, but the op has {n_in} inputs and {n_init} inits")


def _print_scan(p, op) -> None:
    try:
        n_in, _ = _scan_counts(op)
        dim = op.attr("dimension")
        assert isinstance(dim, IntegerAttr) and dim.type == T.i64 and len(op.regions) == 1
    except (VerifyError, KeyError, AssertionError):
        p.generic_op(op)
        return
    p.write("chlo.scan(", p.values(op.operands[:n_in]), ") inits(", p.values(op.operands[n_in:]),
            f") dimension={dim.value}", p.attr_dict(op.attributes, elide=("dimension", "operandSegmentSizes"),
                                                     keyword="attributes"), " ")
    p.region(op.regions[0], print_entry_args=True)
    p.write(" : ", p.function_type(op.operand_types, op.result_types))


dialect.op("chlo.scan", "A scan (prefix computation) along a dimension.", (),
           ("dimension", "is_reverse", "operandSegmentSizes"), _verify_scan, _print_scan)


@dialect.rule("hlo_scan")
def _hlo_scan(ctx, children):
    inputs, inits, dim, attrs, region, ftype = children
    inputs, inits = inputs or [], inits or []
    ins, outs = ftype.inputs, ftype.results
    operands = ctx.resolve_all(list(inputs) + list(inits), ins)
    attributes = dict(attrs or {})
    attributes["dimension"] = IntegerAttr(int(dim.value), T.i64)
    attributes["operandSegmentSizes"] = DenseArrayAttr(T.i32, (len(inputs), len(inits)))
    return create(ctx, "chlo.scan", operands, outs, attributes, [region])
