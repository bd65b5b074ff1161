"""irdl: MLIR's IR Definition Language: dialects whose types, attributes and operations are
declared by constraints in an `.mlir` file (`irdl.dialect @cmath { irdl.operation @norm {...} }`).

This module reads and prints the irdl ops themselves (custom syntax in `grammars/irdl.lark`);
`mlirtext/irdl_dialects.py` turns a parsed file into dialects a registry can hold.
"""
from __future__ import annotations

import re

from ..ir import types as T
from ..ir.attributes import ArrayAttr, IntegerAttr, StringAttr, SymbolRefAttr, unit
from ..ir.core import Block, Region
from ..syntax.literals import string_value, symbol_ref
from .base import ISOLATED, NO_TERMINATOR, PURE, SYMBOL, SYMBOL_TABLE, Dialect, VerifyError
from .common import create, symbol_name

dialect = Dialect("irdl", grammar="irdl")

#: The types of irdl's values: a constraint on a type or attribute, and a region constraint.
ATTRIBUTE = T.DialectType("irdl.attribute")
REGION = T.DialectType("irdl.region")

DEFINITIONS = ("irdl.type", "irdl.attribute", "irdl.operation")
#: op -> the ops it may sit in (MLIR's HasParent / ParentOneOf)
PARENTS = {
    **{name: ("irdl.dialect",) for name in DEFINITIONS},
    "irdl.parameters": ("irdl.type", "irdl.attribute"),
    **{name: ("irdl.operation",) for name in ("irdl.operands", "irdl.results", "irdl.attributes",
                                              "irdl.region", "irdl.regions")},
    **{name: DEFINITIONS for name in ("irdl.is", "irdl.any", "irdl.any_of", "irdl.all_of", "irdl.base",
                                      "irdl.parametric")},
}


def _verify_parent(op) -> None:
    want = PARENTS[op.name]
    parent = op.parent_op
    if parent is None or parent.name not in want:
        which = f"'{want[0]}'" if len(want) == 1 else "one of '" + "', '".join(want) + "'"
        raise VerifyError(f"expects parent op {which}")


def definition_of(op, ref: SymbolRefAttr):
    """The op `ref` names, looked up as MLIR's IRDL does: from the top of the module
    (`@dialect::@type`); None when there is none."""
    top = op
    while top.parent_op is not None:
        top = top.parent_op
    found = top
    for name in (ref.root, *ref.nested):
        body = found.regions[0].blocks[0].ops if found.regions and found.regions[0].blocks else []
        found = next((o for o in body if o.sym_name == name), None)
        if found is None:
            return None
    return found


def _verify_reference(op, ref) -> None:
    target = definition_of(op, ref)
    if target is None:
        raise VerifyError(f"symbol '{ref}' not found")
    if target.name not in ("irdl.type", "irdl.attribute"):
        raise VerifyError(f"symbol '{ref}' does not refer to a type or attribute definition (refers to "
                          f"'{target.name}')")


def _verify_base(op) -> None:
    _verify_parent(op)
    ref, name = op.attr("base_ref"), op.attr("base_name")
    if (ref is None) == (name is None):
        raise VerifyError("the base type or attribute should be specified by either a name or a reference")
    if name is not None and not str(name.value).startswith(("!", "#")):
        raise VerifyError("the base type or attribute name should start with '!' or '#'")
    if ref is not None:
        _verify_reference(op, ref)


def _verify_parametric(op) -> None:
    _verify_parent(op)
    _verify_reference(op, op.attr("base_type"))


#: what each list of named values calls one of its entries, in MLIR's messages
_NOUNS = {"irdl.parameters": "parameter", "irdl.operands": "operand", "irdl.results": "result",
          "irdl.regions": "region"}


def _verify_values(op) -> None:
    _verify_parent(op)
    names = op.attr("names")
    noun = _NOUNS[op.name]
    seen: dict = {}
    for i, name in enumerate(names.items if isinstance(names, ArrayAttr) else ()):
        if name.value != name.value.lower():
            raise VerifyError(f"name of {noun} #{i} should not contain uppercase letters")
        if not re.fullmatch(r"[a-z0-9_]+", name.value):
            raise VerifyError(f"name of {noun} #{i} must contain only lowercase letters, digits and underscores")
        if name.value in seen:
            raise VerifyError(f"name of {noun} #{i} is a duplicate of the name of {noun} #{seen[name.value]}")
        seen[name.value] = i


def _verify_operation(op) -> None:
    """A name used by two of the operation's operands, results and regions (MLIR's order of the pairs)."""
    _verify_parent(op)
    body = op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []
    named = {}
    for inner in body:
        names = inner.attr("names")
        if inner.name in ("irdl.operands", "irdl.results", "irdl.regions") and isinstance(names, ArrayAttr):
            named[inner.name[5:]] = {n.value for n in names.items}
    for first, second in (("operands", "results"), ("regions", "results"), ("regions", "operands")):
        both = named.get(first, set()) & named.get(second, set())
        if both:
            raise VerifyError(f"contains a value named '{min(both)}' for both its {first} and {second}")


# ---- definitions: irdl.dialect / type / attribute / operation ------------------------------
def _print_definition(p, op) -> None:
    p.write(op.name, " ", p.symbol(op.attr("sym_name").value))
    p.write(p.attr_dict(op.attributes, elide=("sym_name",), keyword="attributes"))
    body = op.regions[0].blocks
    if body and body[0].ops:  # an empty body is left out, as MLIR prints it
        p.write(" ")
        p.region(op.regions[0])


dialect.op("irdl.dialect", "Define a new dialect", traits=(ISOLATED, NO_TERMINATOR, SYMBOL, SYMBOL_TABLE),
           properties=("sym_name",), print=_print_definition, operands=0, results=0, regions=1)
for _name, _summary, _verify in (("irdl.type", "Define a new type", _verify_parent),
                                 ("irdl.attribute", "Define a new attribute", _verify_parent),
                                 ("irdl.operation", "Define a new operation", _verify_operation)):
    dialect.op(_name, _summary, traits=(NO_TERMINATOR, SYMBOL), properties=("sym_name",), verify=_verify,
               print=_print_definition, operands=0, results=0, regions=1)


@dialect.rule("irdl_definition")
def _definition(ctx, children):
    keyword, name, attrs, region = children
    if region is None:  # the body left out: one empty block
        region = Region([Block()])
    attributes = dict(attrs or {})
    attributes["sym_name"] = StringAttr(symbol_name(ctx, name))
    op = create(ctx, keyword.value, attributes=attributes, regions=[region])
    ctx.state.symbol_defs.append((name.start, name.end, op))
    return op


# ---- constraints ----------------------------------------------------------------------
def _print_is(p, op) -> None:
    p.write("irdl.is ", p.attr(op.attr("expected")), p.op_attr_dict(op, elide=("expected",)))


dialect.op("irdl.is", "Constraints an attribute/type to be a specific attribute instance", traits=(PURE,),
           properties=("expected",), verify=_verify_parent, print=_print_is, operands=0, results=1, regions=0)


@dialect.rule("irdl_is")
def _is(ctx, children):
    expected, attrs = children
    return create(ctx, "irdl.is", (), [ATTRIBUTE], {"expected": expected, **(attrs or {})})


def _print_any(p, op) -> None:
    p.write("irdl.any", p.op_attr_dict(op))


dialect.op("irdl.any", "Accept any type or attribute", traits=(PURE,), verify=_verify_parent,
           print=_print_any, operands=0, results=1, regions=0)


@dialect.rule("irdl_any")
def _any(ctx, children):
    return create(ctx, "irdl.any", (), [ATTRIBUTE], children[0])


def _print_combine(p, op) -> None:
    p.write(op.name, "(", p.values(op.operands), ")", p.op_attr_dict(op))


dialect.op("irdl.any_of", "Constraints to the union of the provided constraints", traits=(PURE,),
           verify=_verify_parent, print=_print_combine, results=1, regions=0)
dialect.op("irdl.all_of", "Constraints to the intersection of the provided constraints", traits=(PURE,),
           verify=_verify_parent, print=_print_combine, results=1, regions=0)


@dialect.rule("irdl_combine")
def _combine(ctx, children):
    keyword, uses, attrs = children
    uses = uses or []
    return create(ctx, keyword.value, ctx.resolve_all(uses, [ATTRIBUTE] * len(uses)), [ATTRIBUTE], attrs)


@dialect.rule("irdl_symbol")
def _symbol(ctx, children):
    return symbol_ref(ctx, children)


def _print_base(p, op) -> None:
    base = op.attr("base_ref") or op.attr("base_name")
    p.write("irdl.base", f" {p.attr(base)}" if base is not None else "",
            p.op_attr_dict(op, elide=("base_ref", "base_name")))


dialect.op("irdl.base", "Constraints an attribute/type base", properties=("base_ref", "base_name"),
           verify=_verify_base, print=_print_base, operands=0, results=1, regions=0)


@dialect.rule("irdl_base")
def _base(ctx, children):
    base, attrs = children
    attributes = dict(attrs or {})
    if isinstance(base, SymbolRefAttr):
        attributes["base_ref"] = base
    elif base is not None:
        attributes["base_name"] = StringAttr(string_value(ctx, base))
    return create(ctx, "irdl.base", (), [ATTRIBUTE], attributes)


def _print_c_pred(p, op) -> None:
    p.write("irdl.c_pred ", p.attr(op.attr("pred")), p.op_attr_dict(op, elide=("pred",)))


# A C++ predicate only C++ code generated from the definition can evaluate. MLIR's IRDL gives it
# no parent constraint and no verifier: when a dialect is loaded (`--irdl-file`) it is not a
# constraint at all (see irdl_dialects.py).
dialect.op("irdl.c_pred", "Constraints an attribute using a C++ predicate", traits=(PURE,),
           properties=("pred",), print=_print_c_pred, operands=0, results=1, regions=0)


@dialect.rule("irdl_c_pred")
def _c_pred(ctx, children):
    pred, attrs = children
    return create(ctx, "irdl.c_pred", (), [ATTRIBUTE], {"pred": StringAttr(string_value(ctx, pred)), **(attrs or {})})


def _print_parametric(p, op) -> None:
    p.write("irdl.parametric ", p.attr(op.attr("base_type")), "<", p.values(op.operands), ">",
            p.op_attr_dict(op, elide=("base_type",)))


dialect.op("irdl.parametric", "Constraints an attribute/type base and its parameters", traits=(PURE,),
           properties=("base_type",), verify=_verify_parametric, print=_print_parametric, results=1, regions=0)


@dialect.rule("irdl_parametric")
def _parametric(ctx, children):
    base, uses, attrs = children
    uses = uses or []
    return create(ctx, "irdl.parametric", ctx.resolve_all(uses, [ATTRIBUTE] * len(uses)), [ATTRIBUTE],
                  {"base_type": base, **(attrs or {})})


# ---- what a definition declares: parameters, operands, results, attributes, regions ----------
def _print_values(p, op) -> None:
    names = op.attr("names")
    kinds = op.attr("variadicity")
    parts = []
    for i, v in enumerate(op.operands):
        name = f"{names.items[i].value}: " if isinstance(names, ArrayAttr) else ""
        kind = kinds.items[i].value if isinstance(kinds, ArrayAttr) else "single"
        parts.append(name + ("" if kind == "single" else kind + " ") + p.value(v))
    p.write(op.name, "(", ", ".join(parts), ")", p.op_attr_dict(op, elide=("names", "variadicity")))


for _name, _summary in (("irdl.operands", "Define the operands of an operation"),
                        ("irdl.results", "Define the results of an operation"),
                        ("irdl.parameters", "Define the constraints on parameters of a type/attribute definition")):
    dialect.op(_name, _summary, properties=("names", "variadicity"), verify=_verify_values,
               print=_print_values, results=0, regions=0)


@dialect.rule("irdl_values")
def _values(ctx, children):
    keyword, *entries, attrs = children
    entries = [e for e in entries if e is not None]
    operands = [ctx.resolve(use, ATTRIBUTE) for _, _, use in entries]
    attributes = {**_names(ctx, keyword.value, entries), **(attrs or {})}
    kinds = [kind.value if kind is not None else "single" for _, kind, _ in entries]
    if keyword.value == "irdl.parameters":
        if any(k != "single" for k in kinds):
            raise ctx.fail("parameters cannot be optional or variadic")
    else:
        attributes["variadicity"] = ArrayAttr(tuple(StringAttr(k) for k in kinds))
    return create(ctx, keyword.value, operands, (), attributes)


def _names(ctx, keyword: str, entries) -> dict:
    """{"names": [...]}: every entry is named, as MLIR's IRDL requires (`irdl.results(sum: %0)`)."""
    for name, kind, use in entries:
        if name is None or name.type == "INTEGER":
            raise ctx.fail(f"custom op '{keyword}' expected valid keyword", name or kind or use)
    return {"names": ArrayAttr(tuple(StringAttr(name.value) for name, _, _ in entries))} if entries else {}


@dialect.rule("irdl_value")
def _value(ctx, children):
    return tuple(children)


def _print_attributes(p, op) -> None:
    names = op.attr("attributeValueNames")
    entries = (f'"{n.value}" = {p.value(v)}' for n, v in zip(names.items, op.operands))
    p.write("irdl.attributes {", ", ".join(entries), "}")


def _verify_attributes(op) -> None:
    _verify_parent(op)
    names = op.attr("attributeValueNames")
    items = names.items if isinstance(names, ArrayAttr) else ()
    if len(items) != len(op.operands):
        raise VerifyError(f"the number of attribute names and their constraints must be the same but got "
                          f"{len(items)} and {len(op.operands)} respectively")
    seen = set()
    for name in items:
        if name.value in seen:
            raise VerifyError(f"attribute \"{name.value}\" is used more than once")
        seen.add(name.value)


dialect.op("irdl.attributes", "Define the attributes of an operation", properties=("attributeValueNames",),
           verify=_verify_attributes, print=_print_attributes, results=0, regions=0)


@dialect.rule("irdl_attributes")
def _attributes(ctx, children):
    entries = [e for e in children if e is not None]
    operands = [ctx.resolve(use, ATTRIBUTE) for _, use in entries]
    names = ArrayAttr(tuple(StringAttr(string_value(ctx, name)) for name, _ in entries))
    return create(ctx, "irdl.attributes", operands, (), {"attributeValueNames": names})


@dialect.rule("irdl_attribute_entry")
def _attribute_entry(ctx, children):
    return tuple(children)


def _print_region(p, op) -> None:
    p.write("irdl.region")
    if "constrainedArguments" in op.attributes:
        p.write("(", p.values(op.operands), ")")
    blocks = op.attr("numberOfBlocks")
    if blocks is not None:
        p.write(" with size ", str(blocks.value))
    p.write(p.op_attr_dict(op, elide=("constrainedArguments", "numberOfBlocks")))


def _verify_region(op) -> None:
    _verify_parent(op)
    blocks = op.attr("numberOfBlocks")
    if blocks is not None and blocks.value < 1:
        raise VerifyError(f"the number of blocks is expected to be >= 1 but got {blocks.value}")


dialect.op("irdl.region", "Define a region of an operation", properties=("numberOfBlocks", "constrainedArguments"),
           verify=_verify_region, print=_print_region, results=1, regions=0)


@dialect.rule("irdl_region")
def _region(ctx, children):
    arguments, size, attrs = children
    attributes = dict(attrs or {})
    operands = []
    if arguments is not None:
        operands = ctx.resolve_all(arguments, [ATTRIBUTE] * len(arguments))
        attributes["constrainedArguments"] = unit
    if size is not None:
        attributes["numberOfBlocks"] = IntegerAttr(size, T.i32)
    return create(ctx, "irdl.region", operands, [REGION], attributes)


@dialect.rule("irdl_block_count")
def _block_count(ctx, children):
    return int("".join(token.value for token in children if token is not None), 0)


@dialect.rule("irdl_region_arguments")
def _region_arguments(ctx, children):
    return children[0] or []


def _print_regions(p, op) -> None:
    names = op.attr("names")
    parts = [(f"{names.items[i].value}: " if isinstance(names, ArrayAttr) else "") + p.value(v)
             for i, v in enumerate(op.operands)]
    p.write("irdl.regions(", ", ".join(parts), ")", p.op_attr_dict(op, elide=("names",)))


dialect.op("irdl.regions", "Define the regions of an operation", properties=("names",), verify=_verify_values,
           print=_print_regions, results=0, regions=0)


@dialect.rule("irdl_regions")
def _regions(ctx, children):
    *entries, attrs = children
    entries = [e for e in entries if e is not None]
    if any(kind is not None for _, kind, _ in entries):
        raise ctx.fail("regions cannot be optional or variadic")
    return create(ctx, "irdl.regions", [ctx.resolve(use, REGION) for _, _, use in entries], (),
                  {**_names(ctx, "irdl.regions", entries), **(attrs or {})})
