"""builtin: the module op and unrealized_conversion_cast."""
from __future__ import annotations

from ..ir.attributes import StringAttr
from ..ir.core import Block
from .base import ISOLATED, NO_TERMINATOR, SYMBOL_TABLE, Dialect, VerifyError
from .common import create, symbol_name

dialect = Dialect("builtin", grammar="builtin")


def _print_module(p, op) -> None:
    p.write("module")
    name = op.attributes.get("sym_name")
    if isinstance(name, StringAttr):
        p.write(" " + p.symbol(name.value))
    p.write(p.attr_dict(op.attributes, elide=("sym_name",), keyword="attributes"), " ")
    p.region(op.regions[0])


def _verify_module(op) -> None:
    if len(op.regions) != 1 or len(op.regions[0].blocks) > 1:
        raise VerifyError("expects a single region with a single block")
    if op.regions[0].blocks and op.regions[0].blocks[0].arguments:
        raise VerifyError("expects a body without block arguments")


dialect.op("builtin.module", "A top-level container of ops: functions, globals, nested modules.",
           traits=(ISOLATED, SYMBOL_TABLE, NO_TERMINATOR), properties=("sym_name", "sym_visibility"),
           verify=_verify_module, print=_print_module)


@dialect.rule("builtin_module")
def _module(ctx, children):
    _, name, attrs, region = children
    attributes = dict(attrs or {})
    if name is not None:
        attributes["sym_name"] = StringAttr(symbol_name(ctx, name))
    if not region.blocks:
        region.add_block(Block())
    return create(ctx, "builtin.module", attributes=attributes, regions=[region])


@dialect.rule("module_attrs", "func_attrs")
def _keyword_attrs(ctx, children):
    return children[0]


def _print_cast(p, op) -> None:
    p.write("builtin.unrealized_conversion_cast")
    if op.operands:
        p.write(" ", p.values(op.operands))
    p.write(p.op_attr_dict(op))
    if op.operands:
        p.write(" : ", p.types(op.operand_types))
    p.write(" to ", p.types(op.result_types))


dialect.op("builtin.unrealized_conversion_cast",
           "Casts values between type systems while a conversion is half done.",
           print=_print_cast)


@dialect.rule("unrealized_cast")
def _cast(ctx, children):
    uses, attrs, from_types, to_types = children
    operands = ctx.resolve_all(uses, from_types or [])
    return create(ctx, "builtin.unrealized_conversion_cast", operands, to_types, attrs)
