"""math: elementwise mathematical functions on float (and some integer) values."""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import OpaqueAttr
from .base import PURE, Dialect, VerifyError
from .common import check_element_kind, create, shaped_like

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
    if isinstance(fm, OpaqueAttr) and fm.body not in ("", "none"):
        p.write(f" fastmath<{fm.body}>")
    p.write(p.op_attr_dict(op, elide=("fastmath",)), " : ")
    kind = op.name.split(".", 1)[1]
    if kind == "fpowi":
        p.write(p.type(op.operands[0].type), ", ", p.type(op.operands[1].type))
    else:
        p.write(p.type(op.operands[0].type))


def _verify(op) -> None:
    kind = op.name.split(".", 1)[1]
    n = ARITY.get(kind, 1)
    if len(op.operands) != n:
        raise VerifyError(f"expected {n} operands, got {len(op.operands)}")
    t = op.operands[0].type
    if kind in INT_UNARY or kind == "ipowi":
        check_element_kind(op, "int")
    elif kind != "fpowi":
        check_element_kind(op, "float")
    want = shaped_like(t, T.i1) if kind in CLASSIFY else t
    if op.results[0].type != want:
        raise VerifyError(f"result type must be {want}, got {op.results[0].type}")
    if kind != "fpowi" and any(o.type != t for o in op.operands):
        raise VerifyError("requires all operands to have the same type")


for _name in (*FLOAT_UNARY, *FLOAT_BINARY, *INT_UNARY, *CLASSIFY, "fma", "fpowi", "ipowi"):
    dialect.op(f"math.{_name}", f"Elementwise {_name}.", traits=(PURE,),
               properties=() if _name in INT_UNARY or _name == "ipowi" else ("fastmath",),
               verify=_verify, print=_print)


@dialect.rule("math_fastmath")
def _fastmath(ctx, children):
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
    attributes = {"fastmath": fastmath} if fastmath is not None else {}
    attributes.update(attrs or {})
    return create(ctx, name.value, operands, [result], attributes)
