"""check: test assertions, as two dialects spell them under one prefix.

IREE's check dialect (what `iree-opt` 3.13 knows) writes operands in
parentheses: `check.expect_eq(%a, %b) : T`, `check.expect_almost_eq_const(%a,
dense<...> : T, atol 1.0e-3) : T`, `check.expect_true(%c) : i32`. StableHLO's
interpreter has its own check dialect with bare operands:
`check.expect_eq_const %a, dense<...> : T`, `check.expect_almost_eq %a, %b,
tolerance = 0.1 : T`, `check.expect_close %a, %b, max_ulp_difference = 3 : T, T`,
`check.expect_serialized_eq %a, probe_id = "p" : T`.

Both are read into the same ops; `op.form` records "stablehlo" when the source
used StableHLO's spelling, and the printer writes the op back that way. The
expected values stay real attributes (`value`, a DenseElementsAttr) and the
tolerances typed attributes, so the interpreter can run the checks.
"""
from __future__ import annotations

import struct

from ..ir import types as T
from ..ir.attributes import FloatAttr, IntegerAttr, StringAttr, escape_string, format_float
from ..ir.dense import DenseElementsAttr, DenseResourceAttr
from ..syntax.lexer import Tok
from ..syntax.literals import number_value, string_value
from ..ir.signatures import OpSignature
from .base import Dialect, VerifyError
from .common import create, merge_unique_attrs

dialect = Dialect("check", grammar="check")

HLO = "stablehlo"
UNARY = ("expect_true", "expect_false", "expect_all_true")
BINARY = ("expect_eq", "expect_almost_eq")
CONST = ("expect_eq_const", "expect_almost_eq_const")
HLO_ONLY = ("expect_close", "expect_serialized_eq")
ALMOST = ("expect_almost_eq", "expect_almost_eq_const")

HAL_DEVICE = T.DialectType("hal.device")
HAL_BUFFER_VIEW = T.DialectType("hal.buffer_view")

#: The operands by the names both dialects' ODS give them (IREE's `check.expect_eq` is
#: `$device? $lhs $rhs`, StableHLO's `$lhs $rhs`: the optional HAL device, IREE's alone, is
#: told apart by the operand count, as MLIR's segment-free optional operand is).
_OPERANDS = {
    "expect_true": ("operand",), "expect_false": ("operand",), "expect_all_true": ("device?", "operand"),
    "expect_eq": ("device?", "lhs", "rhs"), "expect_almost_eq": ("device?", "lhs", "rhs"),
    "expect_eq_const": ("device?", "lhs"), "expect_almost_eq_const": ("device?", "lhs"),
    "expect_close": ("actual", "expected"), "expect_serialized_eq": ("expected",),
}


def _f32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


#: IREE's defaults for the almost-equal tolerances (f32 attributes, always present after parsing).
DEFAULT_ATOL = FloatAttr(1e-4, T.f32)
DEFAULT_RTOL = FloatAttr(0.0, T.f32)


def _short(op) -> str:
    return op.name.split(".", 1)[1]


def is_stablehlo_form(op) -> bool:
    """Whether `op` is (or must be printed as) StableHLO's check op: the source spelled it so,
    only StableHLO has it, or (an op read in generic form) only StableHLO's rules accept it."""
    if op.form == HLO or _short(op) in HLO_ONLY or "tolerance" in op.attributes:
        return True
    if op.form is None and "atol" not in op.attributes and not has_device_operand(op):
        try:
            _verify_iree(op)
        except VerifyError:
            try:
                _verify_stablehlo(op)
                return True
            except VerifyError:
                return False
    return False


def has_device_operand(op) -> bool:
    return bool(op.operands) and op.operands[0].type == HAL_DEVICE


def _data_operands(op) -> list:
    return op.operands[1:] if has_device_operand(op) else list(op.operands)


# ---- printing --------------------------------------------------------------------------
def _number(attr) -> str:
    if isinstance(attr, FloatAttr):
        return attr.hex if attr.hex is not None else format_float(attr.value)
    if isinstance(attr, IntegerAttr):
        return str(attr.value)
    return str(attr)


def _print_iree(p, op) -> None:
    short = _short(op)
    data = _data_operands(op)
    p.write(op.name)
    if has_device_operand(op):
        p.write("<", p.value(op.operand("device")), ">")
    p.write("(", p.values(data[:1]))
    if short in CONST:
        p.write(", ", p.attr(op.attr("value")))
    elif len(data) > 1:
        p.write(", ", p.value(data[1]))
    elided = ["value"]
    if short in ALMOST:
        elided += ["atol", "rtol"]
        atol, rtol = op.attr("atol"), op.attr("rtol")
        if isinstance(atol, FloatAttr) and _f32(atol.value) != _f32(DEFAULT_ATOL.value):
            p.write(", atol ", _number(atol))
        if isinstance(rtol, FloatAttr) and rtol.value != 0.0:
            p.write(", rtol ", _number(rtol))
    p.write(")", p.op_attr_dict(op, elide=elided), " : ", p.type(data[0].type) if data else "")


def _print_stablehlo(p, op) -> None:
    short = _short(op)
    attrs = op.attributes
    names = [n for n in _OPERANDS[short] if n != "device?"]  # StableHLO's ops have no device
    p.write(op.name, " ", p.value(op.operand(names[0])))
    if short in CONST:
        p.write(", ", p.attr(attrs["value"]))
    elif len(names) > 1:
        p.write(", ", p.value(op.operand(names[1])))
    elided = ("value", "tolerance", "max_ulp_difference", "min_ulp_difference", "probe_id", "iteration")
    if short == "expect_close":
        if "max_ulp_difference" in attrs:
            p.write(", max_ulp_difference = ", _number(attrs["max_ulp_difference"]))
        if "min_ulp_difference" in attrs:
            p.write(", min_ulp_difference = ", _number(attrs["min_ulp_difference"]))
        p.write(" :", p.op_attr_dict(op, elide=elided), " ", p.types(op.operand_types))
        return
    if short == "expect_serialized_eq":
        probe = attrs.get("probe_id")
        p.write(", probe_id = ", escape_string(probe.value) if isinstance(probe, StringAttr) else '""')
        if "iteration" in attrs:
            p.write(", iter = ", _number(attrs["iteration"]))
    if "tolerance" in attrs:
        p.write(", tolerance = ", _number(attrs["tolerance"]))
    p.write(p.op_attr_dict(op, elide=elided))
    if short not in CONST:
        p.write(" : ", p.type(op.operand(names[0]).type))


def _print(p, op) -> None:
    if is_stablehlo_form(op):
        _print_stablehlo(p, op)
    else:
        _print_iree(p, op)


# ---- verification ------------------------------------------------------------------------
def _element(t):
    return T.element_type(t)


def _is_tensor(t) -> bool:
    return isinstance(t, (T.RankedTensorType, T.UnrankedTensorType))


def _is_signless_int(t) -> bool:
    return isinstance(t, T.IntegerType) and t.is_signless


def _float_or_complex(t, complex_ok: bool) -> bool:
    e = _element(t)
    return T.is_float(e) or (complex_ok and isinstance(e, T.ComplexType))


def _expect_count(op, n: int) -> None:
    if len(op.operands) != n:
        raise VerifyError(f"expected {n} operands, but found {len(op.operands)}")


def _check_value(op, lhs_type, names: str) -> None:
    value = op.attr("value")
    if not isinstance(value, (DenseElementsAttr, DenseResourceAttr)):
        raise VerifyError("requires attribute 'value' (an elements attribute)")
    if value.type != lhs_type:
        raise VerifyError(f"failed to verify that all of {{{names}}} have same type")


def _verify_iree(op) -> None:
    short = _short(op)
    data = _data_operands(op)
    if short in ("expect_true", "expect_false"):
        _expect_count(op, 1)
        t = op.operand("operand").type
        if not _is_signless_int(t):
            raise VerifyError(f"operand #0 must be signless integer, but got '{t}'")
        return
    index = 1 if has_device_operand(op) else 0
    if short == "expect_all_true":
        _expect_count(op, index + 1)
        t = data[0].type
        if not (t == HAL_BUFFER_VIEW or (_is_tensor(t) and _is_signless_int(_element(t)))):
            raise VerifyError(f"operand #{index} must be buffer_view or tensor of signless integer values, "
                              f"but got '{t}'")
        return
    floats = short in ALMOST
    what = "tensor of floating-point values" if floats else "tensor of any type values"
    for i, v in enumerate(data):
        t = v.type
        ok = t == HAL_BUFFER_VIEW and short in BINARY or _is_tensor(t) and (not floats or T.is_float(_element(t)))
        if not ok:
            prefix = "buffer_view or " if short in BINARY else ""
            raise VerifyError(f"operand #{index + i} must be {prefix}{what}, but got '{t}'")
    if short in BINARY:
        _expect_count(op, index + 2)
        if data[0].type != data[1].type:
            raise VerifyError("failed to verify that all of {lhs, rhs} have same type")
    else:
        _expect_count(op, index + 1)
        _check_value(op, data[0].type, "lhs, value")
    if floats:
        for key in ("atol", "rtol"):
            a = op.attributes.get(key)
            if a is not None and not (isinstance(a, FloatAttr) and a.type == T.f32):
                raise VerifyError(f"attribute '{key}' failed to satisfy constraint: 32-bit float attribute")


def _verify_stablehlo(op) -> None:
    short = _short(op)
    complex_ok = short in ALMOST or short == "expect_close"
    for i, v in enumerate(op.operands):
        t = v.type
        if not _is_tensor(t) or (complex_ok and not _float_or_complex(t, True)):
            what = "tensor of floating-point or complex-type values" if complex_ok else "tensor"
            raise VerifyError(f"operand #{i} must be {what}, but got '{t}'")
    attrs = op.attributes
    if short in CONST:
        _expect_count(op, 1)
        _check_value(op, op.operand("lhs").type, "lhs, value")
    elif short == "expect_serialized_eq":
        _expect_count(op, 1)
        if not isinstance(attrs.get("probe_id"), StringAttr):
            raise VerifyError("requires attribute 'probe_id'")
    else:
        _expect_count(op, 2)
        first, second = ("actual", "expected") if short == "expect_close" else ("lhs", "rhs")
        if op.operand(first).type != op.operand(second).type:
            if short == "expect_close":
                raise VerifyError("failed to verify that all of {actual, expected} have same type")
            raise VerifyError("requires all operands to have the same type")
    if short == "expect_close" and not isinstance(attrs.get("max_ulp_difference"), IntegerAttr):
        raise VerifyError("requires attribute 'max_ulp_difference'")
    tol = attrs.get("tolerance")
    if tol is not None and not (isinstance(tol, FloatAttr) and tol.type == T.f64):
        raise VerifyError("attribute 'tolerance' failed to satisfy constraint: 64-bit float attribute")


def _verify(op) -> None:
    if is_stablehlo_form(op):
        _verify_stablehlo(op)
    else:
        _verify_iree(op)


_SUMMARIES = {
    "expect_true": "Checks that an integer operand is non-zero.",
    "expect_false": "Checks that an integer operand is zero.",
    "expect_all_true": "Checks that every element of a tensor (or buffer view) is non-zero.",
    "expect_eq": "Checks that two tensors are exactly equal.",
    "expect_eq_const": "Checks that a tensor equals a constant (the `value` attribute).",
    "expect_almost_eq": "Checks that two float tensors are equal within a tolerance.",
    "expect_almost_eq_const": "Checks that a float tensor equals a constant within a tolerance.",
    "expect_close": "StableHLO: checks that two float tensors are within a ULP distance.",
    "expect_serialized_eq": "StableHLO: checks a tensor against a value serialized by a probe.",
}
for _short_name, _summary in _SUMMARIES.items():
    dialect.op(f"check.{_short_name}", _summary,
               properties=("value", "atol", "rtol", "tolerance", "max_ulp_difference",
                           "min_ulp_difference", "probe_id", "iteration"),
               verify=_verify, print=_print, names=OpSignature.of(_OPERANDS[_short_name]))


# ---- parsing ----------------------------------------------------------------------------
def _number_value(ctx, number, want: str):
    text, tok = number
    value = number_value(text)
    if want == "int":
        if not isinstance(value, int):
            raise ctx.fail("expected an integer value", tok)
        return value
    return float(value)


@dialect.rule("check_device")
def _check_device(ctx, children):
    return children[0]


@dialect.rule("check_tol")
def _check_tol(ctx, children):
    kind, number = children
    return (kind, _number_value(ctx, number, "float"))


@dialect.rule("check_kw")
def _check_kw(ctx, children):
    name, value = children
    return (name, value)


@dialect.rule("check_iree")
def _check_iree(ctx, children):
    name, device, lhs, arg, *tols, attrs, type = children
    short = name.value.split(".", 1)[1]
    if short in HLO_ONLY:
        raise ctx.fail(f"custom op '{name.value}' expected ',' after its first operand "
                       "(StableHLO's form: operands without parentheses)", name)
    operands = []
    if device is not None:
        if short in ("expect_true", "expect_false"):
            raise ctx.fail("expected '('", device)
        operands.append(ctx.resolve(device, HAL_DEVICE))
    operands.append(ctx.resolve(lhs, type))
    attributes = {}
    is_value = isinstance(arg, Tok) and arg.type == "VALUE_ID"
    if short in UNARY:
        if arg is not None:
            raise ctx.fail("expected ')'")
    elif short in BINARY:
        if arg is None or not is_value:
            raise ctx.fail("expected SSA operand")
        operands.append(ctx.resolve(arg, type))
    else:  # *_const
        if arg is None or is_value:
            raise ctx.fail("expected attribute value")
        attributes["value"] = arg
    if short in ALMOST:
        attributes["atol"], attributes["rtol"] = DEFAULT_ATOL, DEFAULT_RTOL
        seen = set()
        for kind, value in tols:
            if kind.value in seen:
                raise ctx.fail(f"'{kind.value}' given twice", kind)
            seen.add(kind.value)
            attributes[kind.value] = FloatAttr(value, T.f32)
    elif tols:
        raise ctx.fail("expected ')'", tols[0][0])
    return create(ctx, name.value, operands, (), merge_unique_attrs(ctx, attributes, attrs))


def _hlo_keywords(ctx, short: str, kws) -> dict:
    allowed = {"expect_almost_eq": ("tolerance",), "expect_almost_eq_const": ("tolerance",),
               "expect_close": ("max_ulp_difference", "min_ulp_difference"),
               "expect_serialized_eq": ("probe_id", "iter")}.get(short, ())
    out = {}
    for name, value in kws:
        key = name.value
        if key not in allowed:
            raise ctx.fail(f"unexpected keyword '{key}' for 'check.{short}'", name)
        if key == "probe_id":
            if isinstance(value, tuple):
                raise ctx.fail("expected a string", value[1])
            out[key] = StringAttr(string_value(ctx, value))
            continue
        if not isinstance(value, tuple):
            raise ctx.fail("expected a number", value)
        if key == "tolerance":
            out[key] = FloatAttr(_number_value(ctx, value, "float"), T.f64)
        elif key == "iter":
            out["iteration"] = IntegerAttr(_number_value(ctx, value, "int"), T.IntegerType(32, "u"))
        else:
            out[key] = IntegerAttr(_number_value(ctx, value, "int"), T.IntegerType(64, "u"))
    return out


def _hlo_op(ctx, name, operands, attributes):
    op = create(ctx, name.value, operands, (), attributes)
    op.form = HLO
    return op


@dialect.rule("check_hlo_const")
def _check_hlo_const(ctx, children):
    name, lhs, value, *kws, attrs = children
    short = name.value.split(".", 1)[1]
    if short not in CONST:
        raise ctx.fail(f"custom op '{name.value}' expected an SSA operand, not an attribute", name)
    t = getattr(value, "type", None)
    if not isinstance(value, (DenseElementsAttr, DenseResourceAttr)) or t is None:
        raise ctx.fail("expected an elements attribute (`dense<...> : tensor<...>`)")
    attributes = {"value": value}
    attributes.update(_hlo_keywords(ctx, short, kws))
    return _hlo_op(ctx, name, [ctx.resolve(lhs, t)], merge_unique_attrs(ctx, attributes, attrs))


@dialect.rule("check_hlo_values")
def _check_hlo_values(ctx, children):
    name, lhs, rhs, *kws, attrs, attrs2, types = children
    short = name.value.split(".", 1)[1]
    if short in UNARY or short in CONST:
        raise ctx.fail(f"custom op '{name.value}' expected '('", name)
    attributes = _hlo_keywords(ctx, short, kws)
    if short == "expect_close" and "max_ulp_difference" not in attributes:
        raise ctx.fail("expected 'max_ulp_difference'")
    if short == "expect_serialized_eq":
        if rhs is not None:
            raise ctx.fail("expected 'probe_id'", rhs)
        if "probe_id" not in attributes:
            raise ctx.fail("expected 'probe_id'")
        toks = [lhs]
    else:
        if rhs is None:
            raise ctx.fail("expected ','")
        toks = [lhs, rhs]
    if short == "expect_close":
        if len(types) != 2:
            raise ctx.fail(f"expected 2 types, got {len(types)}")
    elif len(types) != 1:
        raise ctx.fail(f"expected 1 type, got {len(types)}")
    else:
        types = types * len(toks)
    operands = [ctx.resolve(t, ty) for t, ty in zip(toks, types)]
    merge_unique_attrs(ctx, attributes, attrs)
    return _hlo_op(ctx, name, operands, merge_unique_attrs(ctx, attributes, attrs2))
