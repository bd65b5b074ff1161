"""math: elementwise mathematical functions on float (and some integer) values.

Every op's syntax is declared by its family's format; the optional `fastmath<...>`
word is arith's `custom<Flags>` directive (math ops carry arith's fastmath flags).
"""
from __future__ import annotations

from ..ir import types as T
from .arith import flags_directive
from .assembly_format import declare_family
from .base import PURE, Dialect, VerifyError
from .common import check_element_kind, check_same_types, check_type, same_shape, shaped_like

dialect = Dialect("math")

FLOAT_UNARY = ("absf", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "cos", "cosh",
               "erf", "erfc", "exp", "exp2", "expm1", "floor", "log", "log10", "log1p", "log2", "round",
               "roundeven", "rsqrt", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
FLOAT_BINARY = ("atan2", "copysign", "powf")
INT_UNARY = ("absi", "ctlz", "cttz", "ctpop")
CLASSIFY = ("isnan", "isinf", "isfinite", "isnormal")

_CUSTOM = {"Flags": flags_directive(dialect)}


def _verify(op) -> None:
    kind = op.name.split(".", 1)[1]
    if kind == "fpowi":
        t, power = op.operand("lhs").type, op.operand("rhs").type
        check_type(t, "operand #0", "float")
        check_type(power, "operand #1", "int")
        if op.result_named("result").type != t:
            raise VerifyError("failed to verify that all of {lhs, result} have same type")
        if not same_shape(t, power):
            raise VerifyError("failed to verify that lhs and rhs have the same shape")
        return
    check_element_kind(op, "int" if kind in INT_UNARY or kind == "ipowi" else "float")
    if kind in CLASSIFY:
        result = op.result_named("result").type
        check_type(result, "result #0", "bool")
        if result != shaped_like(op.operand("operand").type, T.i1):
            raise VerifyError("failed to verify that result type has i1 element type and same shape "
                              "as operand")
        return
    check_same_types(op)


def _own(name: str) -> dict:
    """Each op's summary; the integer ops have no fastmath flag."""
    kind = name.split(".", 1)[1]
    return dict(summary=f"Elementwise {kind}.",
                properties=() if kind in INT_UNARY or kind == "ipowi" else ("fastmath",))


def _family(family: str, kinds, format: str, operands, infer: dict) -> None:
    declare_family(dialect, family, [f"math.{k}" for k in kinds], format, operands=operands,
                   results=("result",), infer=infer, custom=_CUSTOM, per_op=_own, traits=(PURE,), verify=_verify)


def _to_i1(t):
    return shaped_like(t, T.i1)


_FLAGS_AND_TYPE = "custom<Flags> attr-dict `:` type($result)"
_family("unary", FLOAT_UNARY + INT_UNARY, f"$operand {_FLAGS_AND_TYPE}", ("operand",), {"operand": "result"})
_family("binary", FLOAT_BINARY + ("ipowi",), f"$lhs `,` $rhs {_FLAGS_AND_TYPE}", ("lhs", "rhs"),
        {"lhs": "result", "rhs": "result"})
_family("fma", ("fma",), f"$a `,` $b `,` $c {_FLAGS_AND_TYPE}", ("a", "b", "c"),
        {"a": "result", "b": "result", "c": "result"})
# `math.isnan %x : f32` gives an i1 of the operand's shape
_family("classify", CLASSIFY, "$operand custom<Flags> attr-dict `:` type($operand)", ("operand",),
        {"result": ("operand", _to_i1)})
# `math.fpowi %x, %n : f32, i32`: a float base and an integer power
_family("fpowi", ("fpowi",), "$lhs `,` $rhs custom<Flags> attr-dict `:` type($lhs) `,` type($rhs)",
        ("lhs", "rhs"), {"result": "lhs"})



def _verify_sincos(op) -> None:
    check_element_kind(op, "float")
    t = op.operand("operand").type
    if op.result_named("sin").type != t or op.result_named("cos").type != t:
        raise VerifyError("failed to verify that all of {operand, sin, cos} have same type")


# `%s, %c = math.sincos %x : f32`
declare_family(dialect, "sincos", ["math.sincos"], "$operand custom<Flags> attr-dict `:` type($operand)",
               operands=("operand",), results=("sin", "cos"), infer={"sin": "operand", "cos": "operand"},
               custom=_CUSTOM, summary="Sine and cosine of one value.", traits=(PURE,), properties=("fastmath",),
               verify=_verify_sincos)
