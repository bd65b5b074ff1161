"""scf: structured control flow: for/while loops, if, switch, parallel loops.

Loop bodies are regions whose entry block takes the induction variable and the
loop-carried values (`iter_args`); `scf.yield` ends them and feeds the next
iteration (or the op's results). As MLIR's parser does, bodies of `scf.for`,
`scf.if` and `scf.parallel` written without their terminator get one
(`scf.yield` / `scf.reduce` without operands), so the IR is the same as MLIR's
and the generic print is valid.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import DenseArrayAttr, unit
from ..ir.core import Block, Operation, Region
from .assembly_format import declare_family
from ..ir.signatures import OpSignature
from .base import RETURN_LIKE, TERMINATOR, Dialect, VerifyError
from .common import create
from .registry import builtin_registry

dialect = Dialect("scf", grammar="scf")

YIELD_PARENTS = ("scf.execute_region", "scf.for", "scf.if", "scf.index_switch", "scf.while")


# ---- shared helpers ----------------------------------------------------------------------
def ensure_terminator(region: Region, name: str) -> None:
    """MLIR's implicit terminator: an empty region gets a block, a block not ending in a
    terminator gets `name` (without operands) appended."""
    if not region.blocks:
        region.add_block(Block())
    block = region.blocks[-1] if len(region.blocks) == 1 else None
    if block is None:
        return
    last = block.ops[-1] if block.ops else None
    d = builtin_registry().lookup(last.name) if last is not None else None
    if d is None or not d.has(TERMINATOR):
        block.append(Operation(name))


def _terminator(region: Region):
    if not region.blocks or not region.blocks[-1].ops:
        return None
    return region.blocks[-1].ops[-1]


def _check_edge(source: str, target: str, operands, types) -> None:
    if len(operands) != len(types):
        raise VerifyError(f"along control flow edge from Operation {source} to {target}: region branch "
                          f"point has {len(operands)} operands, but region successor needs {len(types)} inputs")
    for i, (v, t) in enumerate(zip(operands, types)):
        if v.type != t:
            raise VerifyError(f"along control flow edge from Operation {source} to {target}: successor "
                              f"operand type #{i} '{v.type}' should match successor input type #{i} '{t}'")


def _yield_to(op: Operation, region: Region, target: str, types) -> None:
    """The region's terminator (a scf.yield) passes values of `types` to `target`."""
    term = _terminator(region)
    if term is None or term.name != "scf.yield":
        return  # reported by the structural checks
    _check_edge(term.name, target, term.operands, types)


def _print_results_arrow(p, types) -> str:
    return f" -> ({p.types(types)})" if types else ""


def _body(ctx, region: Region, terminator: str) -> Region:
    ensure_terminator(region, terminator)
    return region


# ---- scf.for ------------------------------------------------------------------------------
def _print_for(p, op) -> None:
    body = op.regions[0]
    entry = body.blocks[0]
    lb, ub, step, *inits = op.operands
    p.write("scf.for ")
    if "unsignedCmp" in op.attributes:
        p.write("unsigned ")
    p.write(p.value(entry.arguments[0]), " = ", p.value(lb), " to ", p.value(ub), " step ", p.value(step))
    if inits:
        pairs = ", ".join(f"{p.value(a)} = {p.value(v)}" for a, v in zip(entry.arguments[1:], inits))
        p.write(" iter_args(", pairs, ")", _print_results_arrow(p, op.result_types))
    if lb.type != T.index:
        p.write(" : ", p.type(lb.type))
    p.write(" ")
    p.region(body, print_entry_args=False, print_terminators=bool(inits))
    p.write(p.op_attr_dict(op, elide=("unsignedCmp",)))


def _verify_for(op) -> None:
    if len(op.operands) < 3:
        raise VerifyError(f"expected at least 3 operands, but found {len(op.operands)}")
    lb, ub, step, *inits = op.operands
    if not (lb.type == ub.type == step.type):
        raise VerifyError("failed to verify that all of {lowerBound, upperBound, step} have same type")
    if not T.is_integer(lb.type):
        raise VerifyError(f"operand #0 must be signless integer or index, but got '{lb.type}'")
    if len(op.results) != len(inits):
        raise VerifyError("mismatch in number of loop-carried values and defined values")
    if not op.regions or not op.regions[0].blocks:
        raise VerifyError("expected a body region with one block")
    entry = op.regions[0].blocks[0]
    if len(op.regions[0].blocks) != 1:
        raise VerifyError("region #0 ('region') failed to verify constraint: region with 1 blocks")
    if not entry.arguments or entry.arguments[0].type != lb.type:
        raise VerifyError("expected induction variable to be same type as bounds and step")
    args = entry.arguments[1:]
    if len(args) != len(inits):
        raise VerifyError(f"different number of inits and region iter_args: {len(inits)} != {len(args)}")
    term = _terminator(op.regions[0])
    if term is not None and term.name == "scf.yield" and len(term.operands) != len(args):
        _check_edge(term.name, "Region #0", term.operands, args)  # MLIR reports the count this way
    _yield_to(op, op.regions[0], "Operation scf.for", op.result_types)
    _yield_to(op, op.regions[0], "Region #0", [a.type for a in args])
    _check_edge("parent", "Region #0", inits, [a.type for a in args])


dialect.op("scf.for", "A counted loop: induction variable from lower bound to upper bound by step, with "
           "loop-carried values.", properties=("unsignedCmp",), verify=_verify_for, print=_print_for,
           names=OpSignature.of(("lowerBound", "upperBound", "step", "initArgs*"), ("results*",)))


@dialect.rule("scf_assign")
def _scf_assign(ctx, children):
    return (children[0], children[1])


@dialect.rule("scf_iter_args")
def _scf_iter_args(ctx, children):
    *assigns, types = children
    return (assigns, types)


@dialect.rule("scf_for_head")
def _scf_for_head(ctx, children):
    unsigned, iv, lb, ub, step, iter_args, iv_type = children
    t = iv_type if iv_type is not None else T.index
    operands = [ctx.resolve(lb, t), ctx.resolve(ub, t), ctx.resolve(step, t)]
    assigns, types = iter_args if iter_args is not None else ([], [])
    if len(assigns) != len(types):
        raise ctx.fail(f"expected as many iter_args types ({len(types)}) as iter_args ({len(assigns)})")
    operands += [ctx.resolve(init, ty) for (_, init), ty in zip(assigns, types)]
    ctx.set_entry_args([(iv, t, None)] + [(arg, ty, None) for (arg, _), ty in zip(assigns, types)])
    attributes = {"unsignedCmp": unit} if unsigned is not None else {}
    return (operands, list(types), attributes)


@dialect.rule("scf_for")
def _scf_for(ctx, children):
    (operands, types, attributes), region, attrs = children
    attributes.update(attrs or {})
    return create(ctx, "scf.for", operands, types, attributes, [_body(ctx, region, "scf.yield")])


# ---- scf.if ---------------------------------------------------------------------------------
def _print_if(p, op) -> None:
    terminators = bool(op.results)
    p.write("scf.if ", p.value(op.operand("condition")), _print_results_arrow(p, op.result_types), " ")
    p.region(op.regions[0], print_entry_args=False, print_terminators=terminators)
    if len(op.regions) > 1 and op.regions[1].blocks:
        p.write(" else ")
        p.region(op.regions[1], print_entry_args=False, print_terminators=terminators)
    p.write(p.op_attr_dict(op))


def _verify_if(op) -> None:
    if len(op.operands) != 1 or op.operand("condition").type != T.i1:
        got = op.operand("condition").type if op.operands else "nothing"
        raise VerifyError(f"operand #0 must be 1-bit signless integer, but got '{got}'")
    if len(op.regions) != 2:
        raise VerifyError(f"requires 2 regions, but found {len(op.regions)}")
    if op.results and not op.regions[1].blocks:
        raise VerifyError("must have an else block if defining values")
    for region in op.regions:
        if len(region.blocks) > 1:
            raise VerifyError("region #0 ('thenRegion') failed to verify constraint: region with at most 1 blocks")
        if region.blocks and region.blocks[0].arguments:
            raise VerifyError("region #0 ('thenRegion') should have no arguments")
        _yield_to(op, region, "Operation scf.if", op.result_types)


dialect.op("scf.if", "If-then-else: runs one of two regions by an i1 condition; both yield the results.",
           verify=_verify_if, print=_print_if, names=OpSignature.of(("condition",), ("results*",)))


@dialect.rule("scf_if")
def _scf_if(ctx, children):
    cond, types, then, else_, attrs = children
    types = types or []
    then = _body(ctx, then, "scf.yield")
    else_ = _body(ctx, else_, "scf.yield") if else_ is not None else Region()
    return create(ctx, "scf.if", [ctx.resolve(cond, T.i1)], types, attrs, [then, else_])


# ---- scf.while --------------------------------------------------------------------------------
def _print_while(p, op) -> None:
    before, after = op.regions
    entry = before.blocks[0] if before.blocks else None
    p.write("scf.while ")
    if entry is not None and op.operands:
        pairs = ", ".join(f"{p.value(a)} = {p.value(v)}" for a, v in zip(entry.arguments, op.operands))
        p.write("(", pairs, ") ")
    p.write(": ", p.function_type(op.operand_types, op.result_types), " ")
    p.region(before, print_entry_args=False)
    p.write(" do ")
    p.region(after, print_entry_args=True)
    p.write(p.attr_dict(op.attributes, keyword="attributes"))


def _verify_while(op) -> None:
    if len(op.regions) != 2:
        raise VerifyError(f"requires 2 regions, but found {len(op.regions)}")
    before, after = op.regions
    cond = _terminator(before)
    if cond is None or cond.name != "scf.condition":
        raise VerifyError("expects the 'before' region to terminate with 'scf.condition'")
    term = _terminator(after)
    if term is None or term.name != "scf.yield":
        raise VerifyError("expects the 'after' region to terminate with 'scf.yield'")
    args = before.blocks[0].arguments
    if len(args) != len(op.operands) or any(a.type != v.type for a, v in zip(args, op.operands)):
        raise VerifyError("along control flow edge from parent operands to Region #0: region branch point "
                          f"has {len(op.operands)} operands, but region successor needs {len(args)} inputs"
                          if len(args) != len(op.operands) else
                          "expects the types of the operands to match the 'before' region arguments")
    after_args = [a.type for a in after.blocks[0].arguments] if after.blocks else []
    _check_edge("scf.condition", "Operation scf.while", cond.operands[1:], op.result_types)
    _check_edge("scf.condition", "Region #1", cond.operands[1:], after_args)
    _check_edge("scf.yield", "Region #0", term.operands, [a.type for a in args])


dialect.op("scf.while", "A while loop: the 'before' region computes the condition and forwards values, "
           "the 'after' region is the body.", verify=_verify_while, print=_print_while,
           names=OpSignature.of(("inits*",), ("results*",)))


@dialect.rule("scf_attributes")
def _scf_attributes(ctx, children):
    return children[0]


@dialect.rule("scf_while_head")
def _scf_while_head(ctx, children):
    *assigns, ftype = children
    assigns = [a for a in assigns if a is not None]
    inputs = list(ftype.inputs)
    if len(assigns) != len(inputs):
        raise ctx.fail(f"expected {len(assigns)} types in the function type's inputs, got {len(inputs)}")
    operands = [ctx.resolve(init, t) for (_, init), t in zip(assigns, inputs)]
    if assigns:
        ctx.set_entry_args([(arg, t, None) for (arg, _), t in zip(assigns, inputs)])
    return (operands, list(ftype.results))


@dialect.rule("scf_while")
def _scf_while(ctx, children):
    (operands, types), before, after, attrs = children
    if not before.blocks:
        before.add_block(Block())
    return create(ctx, "scf.while", operands, types, attrs, [before, after])


# ---- terminators: scf.yield, scf.condition ------------------------------------------------------
def _verify_yield(op) -> None:
    parent = op.parent_op
    if parent is None or parent.name not in YIELD_PARENTS:
        raise VerifyError("expects parent op to be one of '" + ", ".join(YIELD_PARENTS) + "'")


declare_family(dialect, "yield", ["scf.yield"], "attr-dict ($results^ `:` type($results))?",
               operands=("results*",), strict_properties=False,
               summary="Ends a region of an scf op, passing values to the parent or the next iteration.",
               traits=(TERMINATOR, RETURN_LIKE), verify=_verify_yield)


def _verify_condition(op) -> None:
    parent = op.parent_op
    if parent is None or parent.name != "scf.while":
        raise VerifyError("expects parent op 'scf.while'")
    condition = op.operand("condition").type
    if condition != T.i1:
        raise VerifyError(f"operand #0 must be 1-bit signless integer, but got '{condition}'")


declare_family(dialect, "condition", ["scf.condition"], "`(` $condition `)` attr-dict ($args^ `:` type($args))?",
               operands=("condition", "args*"), infer={"condition": T.i1}, strict_properties=False,
               summary="Ends the 'before' region of scf.while: continue (true) or exit, with values.",
               traits=(TERMINATOR, RETURN_LIKE), verify=_verify_condition)


# ---- scf.execute_region -------------------------------------------------------------------------
def _print_execute_region(p, op) -> None:
    p.write("scf.execute_region")
    if op.results:
        types = op.result_types
        p.write(" -> ", p.type(types[0]) if len(types) == 1 else f"({p.types(types)})")
    if "no_inline" in op.attributes:
        p.write(" no_inline")
    p.write(" ")
    p.region(op.regions[0], print_entry_args=True)
    p.write(p.op_attr_dict(op, elide=("no_inline",)))


def _verify_execute_region(op) -> None:
    region = op.regions[0] if op.regions else None
    if region is None or not region.blocks:
        raise VerifyError("region needs to have at least one block")
    if region.blocks[0].arguments:
        raise VerifyError("region cannot have any arguments")
    for block in region.blocks:
        term = block.ops[-1] if block.ops else None
        if term is not None and term.name == "scf.yield":
            _check_edge("scf.yield", "Operation scf.execute_region", term.operands, op.result_types)


dialect.op("scf.execute_region", "Runs its region once (it may have several blocks); yields the results.",
           properties=("no_inline",), verify=_verify_execute_region, print=_print_execute_region)


@dialect.rule("scf_execute_region")
def _scf_execute_region(ctx, children):
    types, no_inline, region, attrs = children
    attributes = {"no_inline": unit} if no_inline is not None else {}
    attributes.update(attrs or {})
    return create(ctx, "scf.execute_region", (), types or [], attributes, [region])


# ---- scf.index_switch ------------------------------------------------------------------------
def _print_index_switch(p, op) -> None:
    p.write("scf.index_switch ", p.value(op.operand("arg")), p.op_attr_dict(op, elide=("cases",)))
    if op.results:
        p.write(" -> ", p.types(op.result_types))
    cases = op.attr("cases")
    values = cases.values if isinstance(cases, DenseArrayAttr) else ()
    indent = "  " * p.level
    for value, region in zip(values, op.regions[1:]):
        p.write(f"\n{indent}case {value} ")
        p.region(region)
    p.write(f"\n{indent}default ")
    p.region(op.regions[0], print_terminators=bool(op.results))  # as MLIR: the default's yield is implicit


def _verify_index_switch(op) -> None:
    if len(op.operands) != 1 or op.operand("arg").type != T.index:
        got = op.operand("arg").type if op.operands else "nothing"
        raise VerifyError(f"operand #0 must be index, but got '{got}'")
    cases = op.attr("cases")
    if not isinstance(cases, DenseArrayAttr):
        raise VerifyError("requires attribute 'cases'")
    n = len(op.regions) - 1
    if len(cases.values) != n:
        raise VerifyError(f"has {len(cases.values)} case values but {n} case regions")
    seen = set()
    for v in cases.values:
        if v in seen:
            raise VerifyError(f"has duplicate case value: {v}")
        seen.add(v)
    for i, region in enumerate(op.regions):
        what = "default region" if i == 0 else f"case region #{i - 1}"
        if len(region.blocks) != 1:
            name = "defaultRegion" if i == 0 else "caseRegions"
            raise VerifyError(f"region #{min(i, 1)} ('{name}') failed to verify constraint: region with 1 blocks")
        term = _terminator(region)
        if term is None or term.name != "scf.yield":
            raise VerifyError(f"expected region to end with scf.yield, but got "
                              f"{term.name if term is not None else 'nothing'}")
        if len(term.operands) != len(op.results):
            raise VerifyError(f"expected each region to return {len(op.results)} values, but {what} "
                              f"returns {len(term.operands)}")
        for j, (v, t) in enumerate(zip(term.operands, op.result_types)):
            if v.type != t:
                raise VerifyError(f"expected result #{j} of each region to be '{t}'")


dialect.op("scf.index_switch", "Switch on an index: runs the case region matching the value, else the "
           "default region.", properties=("cases",), verify=_verify_index_switch, print=_print_index_switch,
           names=OpSignature.of(("arg",), ("results*",), ("cases",)))


@dialect.rule("scf_case")
def _scf_case(ctx, children):
    (text, tok), region = children
    try:
        value = int(text, 0)
    except ValueError:
        raise ctx.fail("expected integer value", tok)
    return (value, region)


@dialect.rule("scf_index_switch")
def _scf_index_switch(ctx, children):
    arg, attrs, types, *cases, default = children
    attributes = {"cases": DenseArrayAttr(T.i64, tuple(v for v, _ in cases))}
    attributes.update(attrs or {})
    regions = [_body(ctx, default, "scf.yield")] + [r for _, r in cases]
    return create(ctx, "scf.index_switch", [ctx.resolve(arg, T.index)], types or [], attributes, regions)


# ---- scf.parallel, scf.reduce, scf.reduce.return -------------------------------------------------
def _segments(op):
    seg = op.attr("operandSegmentSizes")
    if isinstance(seg, DenseArrayAttr) and len(seg.values) == 4:
        return list(seg.values)
    return None


def _print_parallel(p, op) -> None:
    lbs, ubs, steps, inits = _split_parallel(op)
    entry = op.regions[0].blocks[0]
    p.write("scf.parallel (", p.values(entry.arguments), ") = (", p.values(lbs), ") to (", p.values(ubs),
            ") step (", p.values(steps), ")")
    if inits:
        p.write(" init (", p.values(inits), ")")
    if op.results:
        types = op.result_types
        p.write(" -> ", p.type(types[0]) if len(types) == 1 else f"({p.types(types)})")
    p.write(" ")
    p.region(op.regions[0], print_entry_args=False)
    p.write(p.op_attr_dict(op, elide=("operandSegmentSizes",)))


def _split_parallel(op):
    seg = _segments(op) or [0, 0, 0, 0]
    out, i = [], 0
    for n in seg:
        out.append(op.operands[i:i + n])
        i += n
    return out


def _verify_parallel(op) -> None:
    seg = _segments(op)
    if seg is None or sum(seg) != len(op.operands):
        raise VerifyError("operand count does not match the 'operandSegmentSizes' attribute")
    lbs, ubs, steps, inits = _split_parallel(op)
    if not (len(lbs) == len(ubs) == len(steps)):
        raise VerifyError("expects the same number of lower bounds, upper bounds and steps")
    for v in (*lbs, *ubs, *steps):
        if v.type != T.index:
            raise VerifyError(f"operand must be index, but got '{v.type}'")
    if not lbs:
        raise VerifyError("needs at least one tuple element for lowerBound, upperBound and step")
    if not op.regions or len(op.regions[0].blocks) != 1:
        raise VerifyError("region #0 ('region') failed to verify constraint: region with 1 blocks")
    entry = op.regions[0].blocks[0]
    if len(entry.arguments) != len(steps):
        raise VerifyError(f"expects the same number of induction variables: {len(entry.arguments)} as bound "
                          f"and step values: {len(steps)}")
    for a in entry.arguments:
        if a.type != T.index:
            raise VerifyError("expects arguments for the induction variable to be of index type")
    term = _terminator(op.regions[0])
    if term is None or term.name != "scf.reduce":
        raise VerifyError("expects body to terminate with 'scf.reduce'")
    if len(op.results) != len(term.operands):
        raise VerifyError(f"expects number of results: {len(op.results)} to be the same as number of "
                          f"reductions: {len(term.operands)}")
    if len(inits) != len(op.results):
        raise VerifyError(f"expects number of results: {len(op.results)} to be the same as number of "
                          f"initial values: {len(inits)}")
    for i, (init, res, red) in enumerate(zip(inits, op.results, term.operands)):
        if red.type != res.type:
            raise VerifyError(f"expects type of {i}-th reduction operand: {red.type} to be the same as the "
                              f"{i}-th result type: {res.type}")


dialect.op("scf.parallel", "A parallel loop nest over index ranges, with reductions for its results.",
           properties=("operandSegmentSizes",), verify=_verify_parallel, print=_print_parallel,
           names=OpSignature.of(("lowerBound*", "upperBound*", "step*", "initVals*"), ("results*",)))


@dialect.rule("scf_ivs")
def _scf_ivs(ctx, children):
    return list(children)


@dialect.rule("scf_init")
def _scf_init(ctx, children):
    return children[0]


@dialect.rule("scf_parallel_head")
def _scf_parallel_head(ctx, children):
    ivs, lbs, ubs, steps, inits, types = children
    inits, types = inits or [], types or []
    if len(inits) != len(types):
        raise ctx.fail(f"expected {len(inits)} result types for the init values, got {len(types)}")
    operands = [ctx.resolve(t, T.index) for t in (*lbs, *ubs, *steps)]
    operands += [ctx.resolve(t, ty) for t, ty in zip(inits, types)]
    seg = DenseArrayAttr(T.i32, (len(lbs), len(ubs), len(steps), len(inits)))
    ctx.set_entry_args([(iv, T.index, None) for iv in ivs])
    return (operands, types, {"operandSegmentSizes": seg})


@dialect.rule("scf_parallel")
def _scf_parallel(ctx, children):
    (operands, types, attributes), region, attrs = children
    attributes.update(attrs or {})
    return create(ctx, "scf.parallel", operands, types, attributes, [_body(ctx, region, "scf.reduce")])


def _print_reduce(p, op) -> None:
    p.write("scf.reduce")
    if op.operands:
        p.write("(", p.values(op.operands), " : ", p.types(op.operand_types), ") ")
        for i, region in enumerate(op.regions):
            if i:
                p.write(", ")
            p.region(region)
    p.write(p.op_attr_dict(op))


def _verify_reduce(op) -> None:
    parent = op.parent_op
    if parent is None or parent.name != "scf.parallel":
        raise VerifyError("expects parent op 'scf.parallel'")
    if len(op.regions) != len(op.operands):
        raise VerifyError(f"expects {len(op.operands)} reduction regions, but found {len(op.regions)}")
    for i, (v, region) in enumerate(zip(op.operands, op.regions)):
        block = region.blocks[0] if region.blocks else None
        if block is None or len(block.arguments) != 2 or any(a.type != v.type for a in block.arguments):
            raise VerifyError(f"expects two arguments to reduce block of type {v.type}")
        term = _terminator(region)
        if term is None or term.name != "scf.reduce.return":
            raise VerifyError("reduction bodies must be terminated with an 'scf.reduce.return' op")
        if not term.operands or term.operand("result").type != v.type:
            got = term.operand("result").type if term.operands else "nothing"
            raise VerifyError(f"type mismatch between reduce operand #{i} ({v.type}) and the result of the "
                              f"reduction ({got})")


dialect.op("scf.reduce", "Ends a scf.parallel body: each operand is combined by its reduction region.",
           traits=(TERMINATOR, RETURN_LIKE), verify=_verify_reduce, print=_print_reduce,
           names=OpSignature.of(("reductions*",)))


@dialect.rule("scf_reduce_operands")
def _scf_reduce_operands(ctx, children):
    uses, types, *regions = children
    return (ctx.resolve_all(uses, types), regions)


@dialect.rule("scf_reduce")
def _scf_reduce(ctx, children):
    ops, attrs = children
    operands, regions = ops if ops is not None else ([], [])
    return create(ctx, "scf.reduce", operands, (), attrs, regions)


def _verify_reduce_return(op) -> None:
    parent = op.parent_op
    if parent is None or parent.name != "scf.reduce":
        raise VerifyError("expects parent op 'scf.reduce'")


declare_family(dialect, "reduce_return", ["scf.reduce.return"], "$result attr-dict `:` type($result)",
               operands=("result",), strict_properties=False,
               summary="Ends a reduction region of scf.reduce with the combined value.",
               traits=(TERMINATOR, RETURN_LIKE), verify=_verify_reduce_return)
