"""math: elementwise mathematical functions on float (and some integer) values."""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import OpaqueAttr
from .base import PURE, Dialect, VerifyError
from .common import (check_element_kind, check_same_types, check_type, create, explicit_attrs, same_shape,
                     shaped_like)

dialect = Dialect("math", grammar="math")

FLOAT_UNARY = ("absf", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "cos", "cosh",
               "erf", "erfc", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p", "log2", "round",
               "roundeven", "rsqrt", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
FLOAT_BINARY = ("atan2", "copysign", "powf")
INT_UNARY = ("absi", "ctlz", "cttz", "ctpop")
CLASSIFY = ("isnan", "isinf", "isfinite", "isnormal")
#: Number of operands per op (1 unless listed).
ARITY = {**{n: 2 for n in FLOAT_BINARY}, "fma": 3, "fpowi": 2, "ipowi": 2}


def _print(p, op) -> None:
    p.write(op.name, " ", p.values(op.operands))
    fm = op.attributes.get("fastmath")
    elide = ()
    if isinstance(fm, OpaqueAttr) and fm.text.startswith("#arith.fastmath<"):
        elide = ("fastmath",)
        if fm.body.strip() not in ("", "none"):
            p.write(f" fastmath<{fm.body}>")
    p.write(p.op_attr_dict(op, elide=elide), " : ")
    kind = op.name.split(".", 1)[1]
    if kind == "fpowi":
        p.write(p.type(op.operands[0].type), ", ", p.type(op.operands[1].type))
    else:
        p.write(p.type(op.operands[0].type))


def _verify(op) -> None:
    kind = op.name.split(".", 1)[1]
    n = ARITY.get(kind, 1)
    if len(op.operands) != n or len(op.results) != 1:
        raise VerifyError(f"expected {n} operands and 1 result, got {len(op.operands)} and {len(op.results)}")
    t = op.operands[0].type
    if kind == "fpowi":
        check_type(t, "operand #0", "float")
        check_type(op.operands[1].type, "operand #1", "int")
        if op.results[0].type != t:
            raise VerifyError("failed to verify that all of {lhs, result} have same type")
        if not same_shape(t, op.operands[1].type):
            raise VerifyError("failed to verify that lhs and rhs have the same shape")
        return
    check_element_kind(op, "int" if kind in INT_UNARY or kind == "ipowi" else "float")
    if kind in CLASSIFY:
        check_type(op.results[0].type, "result #0", "bool")
        if op.results[0].type != shaped_like(t, T.i1):
            raise VerifyError("failed to verify that result type has i1 element type and same shape "
                              "as operand")
        return
    check_same_types(op)


for _name in (*FLOAT_UNARY, *FLOAT_BINARY, *INT_UNARY, *CLASSIFY, "fma", "fpowi", "ipowi"):
    dialect.op(f"math.{_name}", f"Elementwise {_name}.", traits=(PURE,),
               properties=() if _name in INT_UNARY or _name == "ipowi" else ("fastmath",),
               verify=_verify, print=_print, operands=ARITY.get(_name, 1), results=1, regions=0,
               successors=0)


@dialect.rule("math_fastmath")
def _fastmath(ctx, children):
    from .arith import FASTMATH_WORDS
    for t in children:
        if t.value not in FASTMATH_WORDS:
            raise ctx.fail(f"unknown fastmath flag '{t.value}' (expected one of "
                           f"{', '.join(FASTMATH_WORDS)})", t)
    return OpaqueAttr(f"#arith.fastmath<{','.join(t.value for t in children)}>")


@dialect.rule("math_elementwise")
def _math_elementwise(ctx, children):
    name, uses, fastmath, attrs, types = children
    kind = name.value.split(".", 1)[1]
    n = ARITY.get(kind, 1)
    if len(uses) != n:
        raise ctx.fail(f"'{name.value}' takes {n} operand{'s' if n > 1 else ''}, got {len(uses)}")
    if kind == "fpowi":
        if len(types) != 2:
            raise ctx.fail("expected two types: the float base and the integer power")
        operand_types = types
    else:
        if len(types) != 1:
            raise ctx.fail("expected one type")
        operand_types = types * n
    operands = [ctx.resolve(u, t) for u, t in zip(uses, operand_types)]
    result = shaped_like(types[0], T.i1) if kind in CLASSIFY else types[0]
    if fastmath is not None and "fastmath" not in dialect.ops[name.value].properties:
        raise ctx.fail(f"'{name.value}' has no 'fastmath' flag")
    attributes = {"fastmath": fastmath} if fastmath is not None else {}
    attributes.update(explicit_attrs(ctx, name.value, attrs))
    return create(ctx, name.value, operands, [result], attributes)
