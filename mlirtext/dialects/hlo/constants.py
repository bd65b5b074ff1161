"""Ops that make values: constant, iota, dynamic_iota, rng, rng_bit_generator (and
mhlo's xla.rng_get_and_update_state, chlo's constant and constant_like): declarations, the
constant's custom syntax, and checks.
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.attributes import TypeAttr
from ...ir.dense import DenseElementsAttr, DenseResourceAttr, SelfTypedDenseAttr
from .. import hlo_attrs as A
from .declare import HloOp
from .shared import (check_inferred, compatible_shapes, constant_ints, elt, fail, int_attr, is_quant, nonneg_attr,
                     rank_of, shape_of, shape_operand_check, storage, tensor)
from .syntax import FUNCTIONAL, I64, EnumWord, HloFormat, custom, hlo_create, need


def _hlo_constant(ctx, children):
    name, value = children
    t = getattr(value, "type", None)
    if t is None or isinstance(value, TypeAttr):
        raise ctx.fail("expected a typed attribute such as `dense<...> : tensor<...>`")
    return hlo_create(ctx, name.value, (), [t], {"value": value})


def _hlo_constant_attrs(ctx, children):
    name, attrs, value = children
    op = _hlo_constant(ctx, [name, value])
    for key, attr in (attrs or {}).items():
        if key == "value":
            raise ctx.fail(f"'{name.value}' takes its value after the attribute dictionary, not in it")
        op.attributes[key] = attr
    return op


def _hlo_constant_generic(ctx, children):
    name, props, attrs, ftype = children
    attributes = dict(props or {})
    attributes.update(attrs or {})
    if ftype.inputs:
        raise ctx.fail(f"'{name.value}' takes no operands")
    return hlo_create(ctx, name.value, (), list(ftype.results), attributes)


@custom
def _print_constant(p, op) -> None:
    value = op.attr("value")
    need(value is not None and getattr(value, "type", None) == op.results[0].type)
    need(not isinstance(value, TypeAttr))
    attrs = p.op_attr_dict(op, elide=("value",))
    # after an attribute dictionary the grammar takes only a dense literal (`hlo_constant_value`)
    need(not attrs or isinstance(value, (DenseElementsAttr, SelfTypedDenseAttr, DenseResourceAttr)))
    p.write(op.name, attrs, " ", str(value) if attrs else p.attr(value))


def _hlo_rng_state(ctx, children):
    return hlo_create(ctx, "mhlo.xla.rng_get_and_update_state", (),
                      [T.RankedTensorType((2,), T.IntegerType(64, "u"))],
                      children[0] or {})


def _constant(op):
    v = op.attr("value")
    if not op.results or v is None:
        return
    rt = op.result_types[0]
    vt = getattr(v, "type", None)
    if isinstance(vt, T.RankedTensorType) and not vt.has_static_shape:
        fail("elements literal type must have static shape")
    if isinstance(rt, T.RankedTensorType) and not rt.has_static_shape:
        fail(f"result #0 must be statically shaped tensor of any type values, but got '{rt}'")
    if isinstance(vt, T.Type) and vt != rt and not (is_quant(rt) and compatible_shapes(vt, rt)
                                                   and rank_of(vt) == rank_of(rt)
                                                   and storage(elt(rt)) == elt(vt)):
        fail(f"inferred type(s) '{vt}' are incompatible with return type(s) of operation '{rt}'")


def _iota(op):
    nonneg_attr(op, "iota_dimension")
    r = rank_of(op.result_named("result").type)
    if r == 0:
        fail("does not support scalars.")
    d = int_attr(op, "iota_dimension", 0)
    if r is not None and d >= r:
        fail("iota dimension cannot go beyond the output rank.")


def _dynamic_iota(op):
    nonneg_attr(op, "iota_dimension")
    result = op.result_named("result").type
    r = rank_of(result)
    d = int_attr(op, "iota_dimension", 0)
    if r is not None and d >= r:
        fail("iota dimension cannot go beyond the output rank.")
    shape_operand_check(op, op.operand("output_shape"), result)


def _rng(op):
    kind = A.enum_word(op.attr("rng_distribution"))
    a, b, shape = op.operand("a"), op.operand("b"), op.operand("shape")
    if kind == "NORMAL" and not (isinstance(elt(a.type), T.FloatType) and isinstance(elt(b.type), T.FloatType)):
        fail("mu and sigma must be floats")
    vals = constant_ints(shape)
    ss = shape_of(shape.type)
    if vals is not None:
        dims = vals
    elif ss and ss[0] is not None:
        dims = [None] * ss[0]
    else:
        return
    check_inferred(op, [tensor(dims, elt(b.type))])


def _rng_bit_generator(op):
    a, b = op.operand("initial_state").type, op.result_named("output_state").type
    if not (rank_of(a) in (None, rank_of(b)) and compatible_shapes(a, b)) and rank_of(b) is not None:
        fail(f"output state shape must be compatible with initial state shape. Got: '{a}' and '{b}'")


#: Grammar callbacks of the constant's custom syntax (and mhlo's rng state op's).
RULES = {"hlo_constant": _hlo_constant, "hlo_constant_attrs": _hlo_constant_attrs,
         "hlo_constant_generic": _hlo_constant_generic, "hlo_rng_state": _hlo_rng_state}

OPS = (
    HloOp("constant", "A constant tensor.", ("value",), verify=_constant, print=_print_constant),
    HloOp("iota", "Values counting up along a dimension.", ("iota_dimension",), verify=_iota,
          format=HloFormat("iota", "`dim` `=` $iota_dimension attr-dict `:` type($result)", (),
                           {"iota_dimension": I64})),
    HloOp("dynamic_iota", "iota with the shape given as a tensor.", ("iota_dimension",), verify=_dynamic_iota,
          format=HloFormat("dynamic_iota", "$output_shape `,` `dim` `=` $iota_dimension " + FUNCTIONAL,
                           ("output_shape",), {"iota_dimension": I64})),
    HloOp("rng", "Random numbers from a distribution.", ("rng_distribution",), (), _rng, inferred=True,
          format=HloFormat("rng", "$a `,` $b `,` $shape `,` `distribution` `=` $rng_distribution " + FUNCTIONAL,
                           ("a", "b", "shape"),
                           {"rng_distribution": lambda prefix: EnumWord(prefix, "rng_distribution")})),
    HloOp("rng_bit_generator", "Random bits from a state.", ("rng_algorithm",), verify=_rng_bit_generator,
          format=HloFormat("rng_bit_generator", "$initial_state `,` `algorithm` `=` $rng_algorithm " + FUNCTIONAL,
                           ("initial_state",), {"rng_algorithm": lambda prefix: EnumWord(prefix, "rng_algorithm")},
                           results=("output_state", "output"))),
)

#: mhlo's own.
MHLO_OPS = (
    HloOp("xla.rng_get_and_update_state", "Reads and bumps the RNG state.", ("delta",), ()),
)

#: chlo's.
CHLO_OPS = (
    HloOp("constant_like", "A splat constant shaped like its operand.", ("value",), operands=("operand",)),
    HloOp("constant", "A constant.", ("value",), operands=(), results=("output",)),
)
