"""transform: the transform-dialect ops the corpus uses (named sequences that match and tile Linalg ops).

Only what `../shared/corpus/` writes: `named_sequence`, `structured.match` with `ops{[...]}`,
`structured.tile_using_for` with static tile sizes, and `yield`. Anything else stays
readable in the generic form.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import ArrayAttr, DenseArrayAttr, StringAttr, TypeAttr
from ..ir.core import Region
from ..syntax.literals import string_value
from ..ir.signatures import OpSignature
from .base import ISOLATED, PURE, SYMBOL, TERMINATOR, Dialect, VerifyError
from .common import add_arg_res_attrs, create, explicit_attrs, symbol_name
from .func import print_function, verify_function

dialect = Dialect("transform", grammar="transform")


# ---- transform.named_sequence ---------------------------------------------------------------
dialect.op("transform.named_sequence", "A named sequence of transformations (a function of handles).",
           traits=(ISOLATED, SYMBOL),
           properties=("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"),
           verify=verify_function, print=print_function, operands=0, results=0, regions=1, successors=0)


@dialect.rule("transform_param")
def _param(ctx, children):
    tok, type, attrs = children
    return (tok, type, attrs)


@dialect.rule("transform_params")
def _params(ctx, children):
    ctx.set_entry_args([(tok, type, None) for tok, type, _ in children])
    return children


@dialect.rule("transform_named_sequence")
def _named_sequence(ctx, children):
    name, params, results, attrs, region = children
    params, results = params or [], [(t, None) for t in results or []]
    ftype = T.FunctionType(tuple(p[1] for p in params), tuple(r[0] for r in results))
    attributes = {"sym_name": StringAttr(symbol_name(ctx, name)), "function_type": TypeAttr(ftype)}
    add_arg_res_attrs(attributes, [p[2] for p in params], [r[1] for r in results])
    attributes.update(explicit_attrs(ctx, "transform.named_sequence", attrs, inferred=True))
    op = create(ctx, "transform.named_sequence", attributes=attributes, regions=[region or Region()])
    ctx.state.symbol_defs.append((name.start, name.end, op))
    return op


# ---- transform.structured.match ------------------------------------------------------------
def _print_match(p, op) -> None:
    ops = op.attr("ops")
    extra = set(op.property_names or ()) | {k for k in op.attributes if k in ("interface", "op_attrs",
                                                                              "filter_result_type",
                                                                              "filter_operand_types")}
    if len(op.operands) != 1 or extra - {"ops"} or not (
            ops is None or isinstance(ops, ArrayAttr) and all(isinstance(s, StringAttr) for s in ops.items)):
        p.generic_op(op)
        return
    p.write("transform.structured.match")
    if ops is not None:
        p.write(" ops{[", ", ".join(str(s) for s in ops.items), "]}")
    p.write(" in ", p.value(op.operand("target")), p.op_attr_dict(op, elide=("ops",)), " : ",
            p.function_type(op.operand_types, op.result_types))


dialect.op("transform.structured.match", "Handles to the payload ops that match a filter.", (),
           ("ops", "interface", "op_attrs", "filter_result_type", "filter_operand_types"),
           None, _print_match, operands=1, results=1, regions=0, successors=0,
           names=OpSignature.of(("target",), ("results",), ("ops",)))


@dialect.rule("transform_match_ops")
def _match_ops(ctx, children):
    return ArrayAttr(tuple(StringAttr(string_value(ctx, t, t.value)) for t in children))


@dialect.rule("transform_match")
def _match(ctx, children):
    ops, target, attrs, ftype = children
    attributes = {} if ops is None else {"ops": ops}
    attributes.update(explicit_attrs(ctx, "transform.structured.match", attrs))
    return create(ctx, "transform.structured.match", ctx.resolve_all([target], ftype.inputs),
                  list(ftype.results), attributes)


# ---- transform.structured.tile_using_for ---------------------------------------------------
def _verify_tile(op) -> None:
    sizes = op.attr("static_sizes")
    if not isinstance(sizes, DenseArrayAttr):
        raise VerifyError("requires attribute 'static_sizes'")
    loops = sum(1 for s in sizes.values if s != 0)
    if len(op.results) != 1 + loops:
        raise VerifyError(f"expected {1 + loops} results (the tiled op and one loop per non-zero tile size), "
                          f"but found {len(op.results)}")


def _print_tile(p, op) -> None:
    sizes, seg = op.attr("static_sizes"), op.attr("operandSegmentSizes")
    scalable = op.attr("scalable_sizes")
    plain = (isinstance(sizes, DenseArrayAttr) and isinstance(seg, DenseArrayAttr) and len(op.operands) == 1
             and (scalable is None or isinstance(scalable, DenseArrayAttr) and not any(scalable.values)))
    if not plain:
        p.generic_op(op)
        return
    p.write("transform.structured.tile_using_for ", p.value(op.operand("target")), " tile_sizes [",
            ", ".join(str(s) for s in sizes.values), "]")
    inter = op.attr("interchange")
    if isinstance(inter, DenseArrayAttr) and inter.values:
        p.write(" interchange = [", ", ".join(str(s) for s in inter.values), "]")
    p.write(p.op_attr_dict(op, elide=("static_sizes", "operandSegmentSizes", "scalable_sizes", "interchange")),
            " : ", p.function_type(op.operand_types, op.result_types))


dialect.op("transform.structured.tile_using_for", "Tiles a Linalg op with scf.for loops.", (),
           ("operandSegmentSizes", "static_sizes", "scalable_sizes", "interchange"), _verify_tile, _print_tile,
           results=(1,), regions=0, successors=0,
           names=OpSignature.of(("target", "dynamic_sizes*"), ("tiled_linalg_op", "loops*"), ("static_sizes",)))


@dialect.rule("transform_tile_using_for")
def _tile(ctx, children):
    target, *rest = children
    ftype = rest[-1]
    attrs = rest[-2]
    ints = [t for t in rest[:-2] if t is not None]
    # the interchange list (if any) follows the sizes: split at the "interchange" keyword's position
    sizes = [int(t.value) for t in ints if ctx.source.text.rfind("interchange", ctx.start, t.start) < 0]
    interchange = [int(t.value) for t in ints if ctx.source.text.rfind("interchange", ctx.start, t.start) >= 0]
    attributes = {"operandSegmentSizes": DenseArrayAttr(T.i32, (1, 0, 0, 0, 0)),
                  "scalable_sizes": DenseArrayAttr(T.i1, tuple(False for _ in sizes)),
                  "static_sizes": DenseArrayAttr(T.i64, tuple(sizes))}
    if interchange:
        attributes["interchange"] = DenseArrayAttr(T.i64, tuple(interchange))
    attributes.update(explicit_attrs(ctx, "transform.structured.tile_using_for", attrs))
    return create(ctx, "transform.structured.tile_using_for", ctx.resolve_all([target], ftype.inputs),
                  list(ftype.results), attributes)


# ---- transform.yield -------------------------------------------------------------------------
def _print_yield(p, op) -> None:
    p.write("transform.yield", p.op_attr_dict(op))
    if op.operands:
        p.write(" ", p.values(op.operands), " : ", p.types(op.operand_types))


dialect.op("transform.yield", "Ends a transform region, yielding handles.", (TERMINATOR, PURE), (),
           None, _print_yield, results=0, regions=0, successors=0)


@dialect.rule("transform_yield")
def _yield(ctx, children):
    attrs, uses, types = children
    return create(ctx, "transform.yield", ctx.resolve_all(uses, types or []), (), attrs or {})
