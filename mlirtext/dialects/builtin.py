"""builtin: the module op and unrealized_conversion_cast."""
from __future__ import annotations

from ..ir.attributes import StringAttr
from ..ir.core import Block
from .base import ISOLATED, NO_TERMINATOR, SYMBOL_TABLE, Dialect, VerifyError
from .common import create, explicit_attrs, symbol_name

dialect = Dialect("builtin", grammar="builtin")


def _print_module(p, op) -> None:
    p.write("module")
    name = op.attr("sym_name")
    if isinstance(name, StringAttr):
        p.write(" " + p.symbol(name.value))
    if "sym_visibility" in op.attributes:
        p.write(" <", p.attr_dict({"sym_visibility": op.attr("sym_visibility")}).strip()[1:-1], ">")
    p.write(p.attr_dict(op.attributes, elide=("sym_name", "sym_visibility"), keyword="attributes"), " ")
    p.region(op.regions[0])


def _verify_module(op) -> None:
    if len(op.regions[0].blocks) > 1:
        raise VerifyError("expects region #0 to have 0 or 1 blocks")
    if not op.regions[0].blocks:
        raise VerifyError("region #0 ('bodyRegion') failed to verify constraint: region with 1 blocks")
    if op.regions[0].blocks and op.regions[0].blocks[0].arguments:
        raise VerifyError("expects a body without block arguments")
    for key in op.attributes:
        if key not in ("sym_name", "sym_visibility") and "." not in key:
            raise VerifyError(f"can only contain attributes with dialect-prefixed names, found: '{key}'")


dialect.op("builtin.module", "A top-level container of ops: functions, globals, nested modules.",
           traits=(ISOLATED, SYMBOL_TABLE, NO_TERMINATOR), properties=("sym_name", "sym_visibility"),
           verify=_verify_module, print=_print_module, operands=0, results=0, regions=1, successors=0)


@dialect.rule("builtin_module")
def _module(ctx, children):
    _, name, props, attrs, region = children
    attributes = explicit_attrs(ctx, "builtin.module", attrs)
    attributes.update(props or {})
    if name is not None:
        attributes["sym_name"] = StringAttr(symbol_name(ctx, name))
    if not region.blocks:
        region.add_block(Block())
    op = create(ctx, "builtin.module", attributes=attributes, regions=[region])
    if name is not None:
        ctx.state.symbol_defs.append((name.start, name.end, op))
    return op


@dialect.rule("module_props")
def _module_props(ctx, children):
    out = {}
    for name, value, tok in children:
        if name != "sym_visibility":
            raise ctx.fail(f"expected 'sym_visibility' (the only property written in `<...>`), "
                           f"got '{name}'", tok)
        out[name] = value
    return out


@dialect.rule("module_attrs", "func_attrs")
def _keyword_attrs(ctx, children):
    return children[0]


def _print_cast(p, op) -> None:
    p.write("builtin.unrealized_conversion_cast")
    if op.operands:
        p.write(" ", p.values(op.operands), " : ", p.types(op.operand_types))
    p.write(" to ", p.types(op.result_types), p.op_attr_dict(op))


dialect.op("builtin.unrealized_conversion_cast",
           "Casts values between type systems while a conversion is half done.",
           print=_print_cast, regions=0, successors=0)


@dialect.rule("unrealized_cast")
def _cast(ctx, children):
    uses, from_types, to_types, attrs = children
    operands = ctx.resolve_all(uses, from_types or [])
    return create(ctx, "builtin.unrealized_conversion_cast", operands, to_types, attrs)
