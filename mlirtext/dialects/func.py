"""func: functions, returns and calls."""
from __future__ import annotations

from ..ir.attributes import ArrayAttr, DictionaryAttr, StringAttr, SymbolRefAttr, TypeAttr
from ..ir.core import Region
from ..ir.types import FunctionType
from .assembly_format import SymbolAttr, declare_family
from .base import ISOLATED, RETURN_LIKE, SYMBOL, TERMINATOR, Dialect, VerifyError
from .common import create, dict_array_attr, explicit_attrs, symbol_name

dialect = Dialect("func", grammar="func")


# ---- func.func ----------------------------------------------------------------
def function_type(op) -> FunctionType:
    attr = op.attr("function_type")
    if isinstance(attr, TypeAttr) and isinstance(attr.type, FunctionType):
        return attr.type
    if attr is None:
        raise VerifyError("requires attribute 'function_type'")
    raise VerifyError(f"attribute 'function_type' must be a function type, got {attr}")


def _arg_attrs(op, key: str, i: int) -> dict:
    attr = op.attributes.get(key)
    if isinstance(attr, ArrayAttr) and i < len(attr.items) and isinstance(attr.items[i], DictionaryAttr):
        return attr.items[i].as_dict()
    return {}


def print_function(p, op) -> None:
    """`func.func @f(%a: i32) -> i32 {...}`; other function-like ops print the same way."""
    ftype = op.attr("function_type").type
    p.write(op.name, " ")
    vis = op.attr("sym_visibility")
    if isinstance(vis, StringAttr):
        p.write(vis.value, " ")
    p.write(p.symbol(op.attr("sym_name").value), "(")
    body = op.regions[0] if op.regions else None
    entry = body.blocks[0] if body is not None and body.blocks else None
    params = []
    for i, t in enumerate(ftype.inputs):
        text = p.type(t) if entry is None else f"{p.value(entry.arguments[i])}: {p.type(t)}"
        params.append(text + p.attr_dict(_arg_attrs(op, "arg_attrs", i))
                      + ("" if entry is None else p.location(entry.arguments[i])))
    p.write(", ".join(params), ")")
    results = ftype.results
    res_attrs = [p.attr_dict(_arg_attrs(op, "res_attrs", i)) for i in range(len(results))]
    if len(results) == 1 and not res_attrs[0] and not isinstance(results[0], FunctionType):
        p.write(" -> ", p.type(results[0]))
    elif results:
        p.write(" -> (", ", ".join(p.type(t) + a for t, a in zip(results, res_attrs)), ")")
    elided = ("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs")
    p.write(p.attr_dict(op.attributes, elide=elided, keyword="attributes"))
    if entry is not None:
        p.write(" ")
        p.region(body, print_entry_args=False)


def verify_function(op) -> None:
    ftype = function_type(op)
    if not isinstance(op.attr("sym_name"), StringAttr):
        raise VerifyError("requires attribute 'sym_name' (a string)")
    vis = op.attr("sym_visibility")
    if vis is not None and not (isinstance(vis, StringAttr) and vis.value in ("public", "private", "nested")):
        raise VerifyError(f'visibility expected to be one of ["public", "private", "nested"], but got {vis}')
    for key, what, count in (("arg_attrs", "argument", len(ftype.inputs)),
                             ("res_attrs", "result", len(ftype.results))):
        attr = op.attributes.get(key)
        if attr is None:
            continue
        if not isinstance(attr, ArrayAttr) or not all(isinstance(a, DictionaryAttr) for a in attr.items):
            raise VerifyError(f"attribute '{key}' failed to satisfy constraint: "
                              "Array of dictionary attributes")
        if len(attr.items) != count:
            raise VerifyError(f"expects {what} attribute array to have the same number of elements as the "
                              f"number of function {what}s, got {len(attr.items)}, but expected {count}")
    if not op.regions or not op.regions[0].blocks:
        if not (isinstance(vis, StringAttr) and vis.value != "public"):
            raise VerifyError("symbol declaration cannot have public visibility")
        return
    entry = op.regions[0].blocks[0]
    if len(entry.arguments) != len(ftype.inputs):
        raise VerifyError(f"entry block must have {len(ftype.inputs)} arguments to match function signature")
    for i, (arg, t) in enumerate(zip(entry.arguments, ftype.inputs)):
        if arg.type != t:
            raise VerifyError(f"type of entry block argument #{i}('{arg.type}') must match the type of "
                              f"the corresponding argument in function signature('{t}')",
                              notes=[("the argument", arg.span)] if arg.span else ())


dialect.op("func.func", "A function: a symbol with a signature and a body region.",
           traits=(ISOLATED, SYMBOL),
           properties=("sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"),
           verify=verify_function, print=print_function, operands=0, results=0, regions=1, successors=0)


@dialect.rule("named_param")
def _named_param(ctx, children):
    tok, type, attrs, loc = children
    return (tok, type, attrs, loc)


@dialect.rule("anonymous_param")
def _anonymous_param(ctx, children):
    type, attrs = children
    return (None, type, attrs, None)


@dialect.rule("func_params")
def _func_params(ctx, children):
    named = [p for p in children if p[0] is not None]
    if named and len(named) != len(children):
        raise ctx.fail("expected SSA identifier: name every argument or none")
    if named:
        ctx.set_entry_args([(tok, type, loc) for tok, type, _, loc in children])
    return children


@dialect.rule("single_result")
def _single_result(ctx, children):
    return [(children[0], None)]


@dialect.rule("multi_result")
def _multi_result(ctx, children):
    return [c for c in children if c is not None]


@dialect.rule("func_result")
def _func_result(ctx, children):
    return (children[0], children[1])


def _errors_within(ctx) -> bool:
    """A syntax error was reported inside the rule being reduced (its body was dropped)."""
    return any(d.span is not None and ctx.start <= d.span.start <= ctx.end for d in ctx.diagnostics)


@dialect.rule("func_func")
def _func_func(ctx, children):
    vis, name, params, results, attrs, region = children
    ctx.pending_args = None  # a declaration leaves its named arguments unused
    params = params or []
    results = results or []
    ftype = FunctionType(tuple(p[1] for p in params), tuple(r[0] for r in results))
    attributes = {"sym_name": StringAttr(symbol_name(ctx, name)), "function_type": TypeAttr(ftype)}
    if vis is not None:
        attributes["sym_visibility"] = StringAttr(vis.value)
    arg_attrs = dict_array_attr([p[2] for p in params])
    res_attrs = dict_array_attr([r[1] for r in results])
    if arg_attrs is not None:
        attributes["arg_attrs"] = arg_attrs
    if res_attrs is not None:
        attributes["res_attrs"] = res_attrs
    for key, value in explicit_attrs(ctx, "func.func", attrs, inferred=True).items():
        attributes[key] = value
    if region is not None and not region.blocks and not _errors_within(ctx):
        raise ctx.fail("expected non-empty function body", name)
    if region is not None and params and params[0][0] is None and region.blocks:
        raise ctx.fail("expected named arguments for a function with a body", name)
    op = create(ctx, "func.func", attributes=attributes, regions=[region if region is not None else Region()])
    ctx.state.symbol_defs.append((name.start, name.end, op))
    return op


# ---- func.return ------------------------------------------------------------------
def _print_return(p, op) -> None:
    parent = op.parent_op
    p.write("return" if parent is not None and parent.name == "func.func" else "func.return")
    p.write(p.op_attr_dict(op))
    if op.operands:
        p.write(" ", p.values(op.operands), " : ", p.types(op.operand_types))


def _verify_return(op) -> None:
    parent = op.parent_op
    if parent is None or parent.name != "func.func":
        raise VerifyError("expects parent op 'func.func'")
    results = function_type(parent).results
    if len(op.operands) != len(results):
        raise VerifyError(f"has {len(op.operands)} operands, but enclosing function (@{parent.sym_name}) "
                          f"returns {len(results)}")
    for i, (v, t) in enumerate(zip(op.operands, results)):
        if v.type != t:
            raise VerifyError(f"type of return operand {i} ('{v.type}') doesn't match function result "
                              f"type ('{t}') in function @{parent.sym_name}")


dialect.op("func.return", "Returns from a function: its operands are the function's results.",
           traits=(TERMINATOR, RETURN_LIKE), verify=_verify_return, print=_print_return, results=0,
           regions=0, successors=0)


@dialect.rule("func_return")
def _func_return(ctx, children):
    _, attrs, uses, types = children
    operands = ctx.resolve_all(uses, types or [])
    return create(ctx, "func.return", operands, (), explicit_attrs(ctx, "func.return", attrs))


# ---- func.call ----------------------------------------------------------------
def _verify_call(op) -> None:
    if not isinstance(op.attr("callee"), SymbolRefAttr):
        raise VerifyError("requires attribute 'callee' (a symbol reference)")


declare_family(dialect, "call", ["func.call"], "$callee `(` $operands `)` attr-dict `:` functional-type($operands, "
               "$results)", operands=("operands*",), results=("results*",), attributes={"callee": SymbolAttr()},
               aliases={"call": "func.call"}, summary="Calls a function by symbol.",
               properties=("callee", "arg_attrs", "res_attrs"), verify=_verify_call)
