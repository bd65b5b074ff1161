"""custom_call and composite: declarations, custom syntax (`@target(%x)`, `"name" %x`),
and checks.
"""
from __future__ import annotations

import re

from ...ir import types as T
from ...ir.attributes import ArrayAttr, DictionaryAttr, StringAttr, SymbolRefAttr
from ...syntax.literals import string_value
from .. import hlo_attrs as A
from ..common import symbol_name
from .declare import HloOp
from .shared import fail, func_type, int_attr, is_tensor, lookup_func, rank_of
from .syntax import custom, hlo_create, need, sig_func


def _hlo_call(ctx, children):
    name, callee, uses, attrs, ftype = children
    attributes = {"call_target_name": StringAttr(symbol_name(ctx, callee))}
    attributes.update(attrs or {})
    return hlo_create(ctx, name.value, ctx.resolve_all(uses, ftype.inputs), list(ftype.results), attributes)


def _hlo_composite(ctx, children):
    name, label, uses, attrs, ftype = children
    attributes = {"name": StringAttr(string_value(ctx, label, label.value))}
    attributes.update(attrs or {})
    return hlo_create(ctx, name.value, ctx.resolve_all(uses, ftype.inputs), list(ftype.results), attributes)


@custom
def _print_custom_call(p, op) -> None:
    target = op.attr("call_target_name")
    need(isinstance(target, StringAttr))
    p.write(op.name, " ", p.symbol(target.value), "(", p.values(op.operands), ")",
            p.op_attr_dict(op, elide=("call_target_name",)), " : ", sig_func(p, op))


@custom
def _print_composite(p, op) -> None:
    label = op.attr("name")
    need(isinstance(label, StringAttr))
    p.write(op.name, " ", str(label), " " if op.operands else "", p.values(op.operands),
            p.op_attr_dict(op, elide=("name",)), " : ", sig_func(p, op))


def _tuple_get(t, indices):
    for i in indices:
        if not isinstance(t, T.TupleType) or i < 0 or i >= len(t.types):
            return None
        t = t.types[i]
    return t


def _custom_call(op):
    stable = op.name.startswith("stablehlo.")
    api = int_attr(op, "api_version")
    if api is None:
        word = A.enum_word(op.attr("api_version"))
        api = {"API_VERSION_TYPED_FFI": 4, "API_VERSION_STATUS_RETURNING_UNIFIED": 3}.get(word)
    bc = op.attr("backend_config")
    if bc is not None and api is not None:
        if api == 4 and not isinstance(bc, DictionaryAttr):
            fail("backend_config for api_version API_VERSION_TYPED_FFI must be a dictionary attribute" if stable
                 else "unsupported user-encoded backend config, backend config must be a dictionary attribute")
        if api != 4 and isinstance(bc, DictionaryAttr):
            name = {1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                    3: "API_VERSION_STATUS_RETURNING_UNIFIED"}.get(api, "API_VERSION_UNSPECIFIED")
            fail(f"backend_config for api_version {name} must be a string attribute" if stable
                 else "unsupported dictionary attribute backend config, backend config must be a user-encoded "
                      "string attribute")
    ol, rl = op.attr("operand_layouts"), op.attr("result_layouts")
    if (ol is None) != (rl is None):
        fail("Layout attributes should be specified for either both operands and results or none")
    if isinstance(ol, ArrayAttr) and isinstance(rl, ArrayAttr):
        results = op.result_types
        if len(results) == 1 and isinstance(results[0], T.TupleType):
            results = list(results[0].types)
        if len(op.operands) != len(ol.items):
            fail(f"Number of operands must match the number of operand layouts, {len(op.operands)} != "
                 f"{len(ol.items)}")
        if len(results) != len(rl.items):
            fail(f"Number of results must match the number of result layouts, {len(results)} != {len(rl.items)}")
        for kind, types, layouts in (("operand", op.operand_types, ol.items), ("result", results, rl.items)):
            for i, (t, lay) in enumerate(zip(types, layouts)):
                if isinstance(t, T.TupleType):
                    fail("Tuple types are not fully supported with layout constraints yet")
                vals = A.int_list(lay)
                if vals is None:
                    continue
                if not is_tensor(t):
                    if vals:
                        fail(f"Only tensor types can have non-empty layout: {kind} #{i} of type '{t}' has layout "
                             f"{lay}")
                    continue
                r = rank_of(t)
                if r is not None and sorted(vals) != list(range(r)):
                    fail(f"incorrect layout {lay} for type '{t}', layout must be a permutation of [0, {r})")
    aliases = op.attr("output_operand_aliases")
    if isinstance(aliases, ArrayAttr):
        results = op.result_types
        out_t = results[0] if len(results) == 1 else T.TupleType(tuple(results))
        for a in aliases.items:
            f = A.struct_fields(a) or {}
            oi = A.int_field(f, "operand_index", 0)
            if oi < 0 or oi >= len(op.operands):
                fail(f"expects operandIndex in the output_operand_alias attribute to be in range "
                     f"[0, {len(op.operands)}); got: {oi}")
            otup, itup = A.dims_field(f, "output_tuple_indices"), A.dims_field(f, "operand_tuple_indices")
            ot = _tuple_get(out_t, otup)
            if ot is None:
                fail("output_tuple_indices in the output_operand_alias attribute out of bounds")
            it = _tuple_get(op.operand_types[oi], itup)
            if it is None:
                fail("operand_tuple_indices in the output_operand_alias attribute out of bounds")
            if it != ot:
                fail(f"shapes mismatch in the output_operand_alias attribute: operand part has type '{it}' and "
                     f"output part has type '{ot}'")


_COMPOSITE_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$")


def _composite(op):
    name = op.attr("name")
    if isinstance(name, StringAttr) and not _COMPOSITE_NAME.match(name.value):
        fail("name must be a valid namespaced op name, i.e. it must match the following regular expression: "
             "^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$ e.g. \"my_namespace.my_op\"")
    dec = op.attr("decomposition")
    if not isinstance(dec, SymbolRefAttr):
        return
    target = lookup_func(op, dec.root)
    if target is None:
        fail(f"'{dec.root}' does not reference a valid function")
    ft = func_type(target)
    if ft is None:
        return
    types = op.operand_types
    if len(types) != len(ft.inputs):
        fail(f"has {len(types)} operand(s), but decomposition has {len(ft.inputs)}")
    for i, (a, b) in enumerate(zip(types, ft.inputs)):
        if a != b:
            fail(f"operand at index {i} has type '{a}', but decomposition has type '{b}'")
    rs = op.result_types
    if len(rs) != len(ft.results):
        fail(f"has {len(rs)} result(s), but decomposition has {len(ft.results)}")
    for i, (a, b) in enumerate(zip(rs, ft.results)):
        if a != b:
            fail(f"result at index {i} has type '{a}', but decomposition has type '{b}'")


#: Grammar callbacks of custom_call's and composite's custom syntax.
RULES = {"hlo_call": _hlo_call, "hlo_composite": _hlo_composite}

OPS = (
    HloOp("composite", "A named composition of ops with a decomposition function.",
          ("name", "composite_attributes", "decomposition", "version"), (), _composite, _print_composite),
    HloOp("custom_call", "Calls an implementation-defined target.",
          ("call_target_name", "has_side_effect", "backend_config", "api_version", "called_computations",
           "operand_layouts", "result_layouts", "output_operand_aliases"), (), _custom_call, _print_custom_call),
)
