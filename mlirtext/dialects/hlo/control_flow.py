"""Control flow: if, case, while, return, optimization_barrier (and mhlo's domain and
fusion, chlo's scan): declarations, the custom syntax of while, return and scan, and checks.
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.attributes import DenseArrayAttr, IntegerAttr
from ..assembly_format import Custom
from ..base import PURE, RETURN_LIKE, TERMINATOR, VerifyError
from ..common import create
from .declare import HloOp
from .shared import check_inferred, compatible, elt, fail, quoted, shape_of, terminator
from .syntax import HloFormat, custom, hlo_create, need


def _hlo_while_arg(ctx, children):
    return (children[0], children[1])


def _hlo_while_head(ctx, children):
    name, *rest = children
    args = [a for a in rest[:-2] if a is not None]
    types, attrs = rest[-2], rest[-1]
    types = list(types or [])
    if len(types) != len(args):
        raise ctx.fail(f"expected {len(args)} types for the loop values, got {len(types)}")
    operands = [ctx.resolve(init, t) for (_, init), t in zip(args, types)]
    entry = [(tok, t, None) for (tok, _), t in zip(args, types)]
    stack = ctx.__dict__.setdefault("_hlo_while_args", [])
    stack.append(entry)
    ctx.set_entry_args(entry)
    return (name, operands, types, attrs)


def _hlo_do(ctx, children):
    stack = ctx.__dict__.setdefault("_hlo_while_args", [])
    if stack:
        ctx.set_entry_args(stack.pop())
    return None


def _hlo_while(ctx, children):
    (name, operands, types, attrs), cond, _, body = children
    return hlo_create(ctx, name.value, operands, types, attrs or {}, [cond, body])


@custom
def _print_while(p, op) -> None:
    need(len(op.regions) == 2 and all(len(r.blocks) >= 1 for r in op.regions))
    cond, body = op.regions
    cargs, bargs = cond.blocks[0].arguments, body.blocks[0].arguments
    n = len(op.operands)
    need(len(cargs) == n and len(bargs) == n and op.operand_types == op.result_types)
    need([a.type for a in cargs] == op.operand_types == [a.type for a in bargs])
    for c, b in zip(cargs, bargs):  # one name for both regions' arguments, as the header declares
        p.names[id(b)] = p.names[id(c)]
    p.write(op.name, "(", ", ".join(f"{p.value(a)} = {p.value(v)}" for a, v in zip(cargs, op.operands)), ")")
    if n:
        p.write(" : ", p.types(op.operand_types))
    p.write(p.attr_dict(op.attributes, keyword="attributes"), "\n", "  " * (p.level + 1), "cond ")
    p.region(cond, print_entry_args=False)
    p.write(" do ")
    p.region(body, print_entry_args=False)


def _print_return(p, op) -> None:
    p.write(op.name, p.op_attr_dict(op))
    if op.operands:
        p.write(" ", p.values(op.operands), " : ", p.types(op.operand_types))


def _hlo_return(ctx, children):
    name, attrs, uses, types = children
    return hlo_create(ctx, name.value, ctx.resolve_all(uses, types or []), (), attrs)


def _parse_pairwise_types(ctx, name, types):
    """custom<PairwiseOpType>: the operands' types, which are the results' too."""
    return list(types), list(types)


def _print_pairwise_types(p, op):
    types = [v.type for v in op.operands_named("operand")]
    need(types and types == [r.type for r in op.results])
    return " " + p.types(types), ()


_PAIRWISE_TYPES = Custom("types", _parse_pairwise_types, _print_pairwise_types)


def region_args(region):
    return region.blocks[0].arguments if region is not None and region.blocks else []


def _conditional(op, operand_t, regions):
    s = shape_of(operand_t)
    if s is not None and len(s) != 0:
        fail(f"operand should be rank 0 tensor but got rank {len(s)}")
    if not regions:
        fail("expect at least one branch")
    for r in regions:
        if not r.blocks:
            fail("expect non-empty region")
    first = terminator(regions[0])
    first_types = [v.type for v in first.operands] if first is not None else []
    for i, r in enumerate(regions):
        n = len(region_args(r))
        if n != 0:
            fail(f"branch {i} must have 0 arguments, but found {n}")
        term = terminator(r)
        types = [v.type for v in term.operands] if term is not None else []
        if len(types) != len(first_types) or not all(compatible(a, b) for a, b in zip(first_types, types)):
            fail(f"branch 0 and branch {i} have mismatched return types: {quoted(first_types)} vs {quoted(types)}")
    check_inferred(op, first_types)


def _if(op):
    if op.operands:
        _conditional(op, op.operand_types[0], op.regions)


def _case(op):
    if op.operands:
        _conditional(op, op.operand_types[0], op.regions)


def _while(op):
    if len(op.regions) != 2 or not op.regions[0].blocks or not op.regions[1].blocks:
        return
    types = op.operand_types
    cond_args = [a.type for a in op.regions[0].blocks[0].arguments]
    body_args = [a.type for a in op.regions[1].blocks[0].arguments]

    def compat(a, b):
        return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    if not compat(types, cond_args):
        fail(f"expect operands to be compatible with condition block arguments but got {quoted(types)} vs "
             f"{quoted(cond_args)}")
    if not compat(types, body_args):
        fail(f"expect operands to be compatible with body block arguments but got {quoted(types)} vs "
             f"{quoted(body_args)}")
    bt = terminator(op.regions[1])
    if bt is not None:
        rets = [v.type for v in bt.operands]
        if not compat(types, rets):
            fail(f"expect operands to be compatible with body block return types but got {quoted(types)} vs "
                 f"{quoted(rets)}")
    ct = terminator(op.regions[0])
    if ct is not None:
        rets = [v.type for v in ct.operands]
        if len(rets) != 1:
            fail(f"expect condition body returns a single value but got {len(rets)}")
        s = shape_of(rets[0])
        if (s is not None and len(s) != 0) or elt(rets[0]) != T.i1:
            fail(f"expect condition block return a zero-ranked tensor of i1 but got '{rets[0]}'")
    check_inferred(op, types)


def _optimization_barrier(op):
    check_inferred(op, list(op.operand_types))


#: Grammar callbacks of while's and return's custom syntax.
RULES = {"hlo_while_arg": _hlo_while_arg, "hlo_while_head": _hlo_while_head, "hlo_do": _hlo_do,
         "hlo_while": _hlo_while, "hlo_return": _hlo_return}

OPS = (
    HloOp("if", "Runs one of two branches.", (), (), _if, inferred=True, operands=("pred",), results=("results*",)),
    HloOp("case", "Runs one of its branches, chosen by index.", (), (), _case, operands=("index",),
          results=("results*",)),
    HloOp("while", "Loops while a condition holds.", (), (), _while, _print_while),
    HloOp("return", "Returns values from a region of its parent op.", (), (TERMINATOR, RETURN_LIKE, PURE),
          print=custom(_print_return)),
    # (the operands before the attribute dictionary, as mlirtext has always printed it; StableHLO's
    # ODS writes the dictionary first: the same text when there is none)
    HloOp("optimization_barrier", "Prevents optimizations across it.", verify=_optimization_barrier,
          format=HloFormat("optimization_barrier", "$operand attr-dict `:` custom<PairwiseTypes>(type($operand), "
                           "type($result))", ("operand*",), custom={"PairwiseTypes": _PAIRWISE_TYPES},
                           results=("result*",))),
)

#: mhlo's own.
MHLO_OPS = (
    HloOp("domain", "Marks a sharding domain.", ("kind", "entry_metadata", "exit_metadata")),
    HloOp("fusion", "A fused computation.", ("fusion_kind", "output_operand_aliases"), ()),
)


# ---- chlo.scan ----------------------------------------------------------------------------------
def _scan_counts(op) -> tuple[int, int]:
    """(scanned inputs, initial carries), from `operandSegmentSizes`."""
    seg = op.attr("operandSegmentSizes")
    if isinstance(seg, DenseArrayAttr) and len(seg.values) == 2 and sum(seg.values) == len(op.operands):
        return int(seg.values[0]), int(seg.values[1])
    raise VerifyError("requires attribute 'operandSegmentSizes' with 2 elements summing to the operand count")


def _verify_scan(op) -> None:
    n_in, n_init = _scan_counts(op)
    dim = op.attr("dimension")
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


def _hlo_scan(ctx, children):
    inputs, inits, dim, attrs, region, ftype = children
    inputs, inits = inputs or [], inits or []
    ins, outs = ftype.inputs, ftype.results
    operands = ctx.resolve_all(list(inputs) + list(inits), ins)
    attributes = dict(attrs or {})
    attributes["dimension"] = IntegerAttr(int(dim.value), T.i64)
    attributes["operandSegmentSizes"] = DenseArrayAttr(T.i32, (len(inputs), len(inits)))
    return create(ctx, "chlo.scan", operands, outs, attributes, [region])


#: chlo's.
CHLO_OPS = (
    HloOp("scan", "A scan (prefix computation) along a dimension.", ("dimension", "is_reverse", "operandSegmentSizes"),
          (), _verify_scan, _print_scan),
)
#: Grammar callbacks of chlo's scan (its rule is in `grammars/hlo.lark`; chlo owns it).
CHLO_RULES = {"hlo_scan": _hlo_scan}
