"""arith: integer and float arithmetic on scalars, vectors and tensors.

Ops are declared by family: same-type binaries (integer and float), the
extended binaries, comparisons, select, casts and constants.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import IntegerAttr, OpaqueAttr, TypeAttr
from .base import PURE, Dialect, VerifyError
from .common import check_element_kind, check_same_types, create, same_shape, shaped_like

dialect = Dialect("arith", grammar="arith")

INT_BINARY = ("addi", "subi", "muli", "divsi", "divui", "ceildivsi", "ceildivui", "floordivsi",
              "remsi", "remui", "andi", "ori", "xori", "shli", "shrsi", "shrui",
              "maxsi", "maxui", "minsi", "minui", "mulhisi", "mulhiui")
FLOAT_BINARY = ("addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf")
EXTENDED = ("mulsi_extended", "mului_extended", "addui_extended")
CASTS = ("extsi", "extui", "extf", "trunci", "truncf", "sitofp", "uitofp", "fptosi", "fptoui",
         "index_cast", "index_castui", "bitcast")
CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                   "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")
#: Ops whose integer overflow flags print as `overflow<...>`.
OVERFLOW_OPS = {"addi", "subi", "muli", "shli", "trunci"}


def _flags_text(op) -> str:
    for key, word in (("overflowFlags", "overflow"), ("fastmath", "fastmath")):
        attr = op.attributes.get(key)
        if isinstance(attr, OpaqueAttr) and attr.body not in ("", "none"):
            return f" {word}<{attr.body}>"
    return ""


_FLAG_KEYS = ("overflowFlags", "fastmath")


# ---- binaries ----------------------------------------------------------------------
def _print_binary(p, op) -> None:
    p.write(op.name, " ", p.values(op.operands), _flags_text(op))
    p.write(p.op_attr_dict(op, elide=_FLAG_KEYS), " : ", p.type(op.results[0].type))


def _int_binary_verify(op) -> None:
    check_same_types(op)
    check_element_kind(op, "int")


def _float_binary_verify(op) -> None:
    check_same_types(op)
    check_element_kind(op, "float")


for _name in INT_BINARY:
    dialect.op(f"arith.{_name}", f"Elementwise integer {_name[:-1] if _name.endswith('i') else _name}.",
               traits=(PURE,), properties=("overflowFlags",) if _name in OVERFLOW_OPS else (),
               verify=_int_binary_verify, print=_print_binary)
for _name in FLOAT_BINARY:
    dialect.op(f"arith.{_name}", f"Elementwise floating-point {_name}.", traits=(PURE,),
               properties=("fastmath",), verify=_float_binary_verify, print=_print_binary)
dialect.op("arith.negf", "Elementwise floating-point negation.", traits=(PURE,), properties=("fastmath",),
           verify=_float_binary_verify, print=_print_binary)


def _flags(ctx, op_name: str, flags):
    """`overflow<nsw>` / `fastmath<fast>` as the op's inherent attribute."""
    if flags is None:
        return {}
    kind, words = flags
    if kind == "overflow":
        return {"overflowFlags": OpaqueAttr(f"#arith.overflow<{', '.join(words)}>")}
    return {"fastmath": OpaqueAttr(f"#arith.fastmath<{','.join(words)}>")}


@dialect.rule("arith_flags")
def _arith_flags(ctx, children):
    kind, *words = children
    return (kind.value, [w.value for w in words])


@dialect.rule("arith_binary")
def _arith_binary(ctx, children):
    name, lhs, rhs, flags, attrs, type = children
    operands = [ctx.resolve(lhs, type), ctx.resolve(rhs, type)]
    attributes = _flags(ctx, name.value, flags)
    attributes.update(attrs or {})
    return create(ctx, name.value, operands, [type], attributes)


@dialect.rule("arith_unary")
def _arith_unary(ctx, children):
    name, operand, flags, attrs, type = children
    attributes = _flags(ctx, name.value, flags)
    attributes.update(attrs or {})
    return create(ctx, name.value, [ctx.resolve(operand, type)], [type], attributes)


# ---- extended binaries -------------------------------------------------------------
def _print_extended(p, op) -> None:
    p.write(op.name, " ", p.values(op.operands), p.op_attr_dict(op), " : ", p.types(op.result_types))


def _verify_extended(op) -> None:
    if len(op.results) != 2:
        raise VerifyError("requires two results")
    t = op.operands[0].type
    if op.operands[1].type != t or op.results[0].type != t:
        raise VerifyError("requires the same type for both operands and the first result")


for _name in EXTENDED:
    dialect.op(f"arith.{_name}", "Integer arithmetic producing a wide result as two values.",
               traits=(PURE,), verify=_verify_extended, print=_print_extended)


@dialect.rule("arith_extended")
def _arith_extended(ctx, children):
    name, lhs, rhs, attrs, types = children
    if len(types) == 1:
        low = types[0]
        high = shaped_like(low, T.i1) if name.value == "arith.addui_extended" else low
        types = [low, high]
    operands = [ctx.resolve(lhs, types[0]), ctx.resolve(rhs, types[0])]
    return create(ctx, name.value, operands, types, attrs)


# ---- comparisons -----------------------------------------------------------------
def _predicates(op_name: str):
    return CMPI_PREDICATES if op_name == "arith.cmpi" else CMPF_PREDICATES


def _print_cmp(p, op) -> None:
    pred = op.attributes["predicate"].value
    p.write(op.name, " ", _predicates(op.name)[pred], ", ", p.values(op.operands), _flags_text(op))
    p.write(p.op_attr_dict(op, elide=("predicate", "fastmath")), " : ", p.type(op.operands[0].type))


def _verify_cmp(op) -> None:
    pred = op.attributes.get("predicate")
    names = _predicates(op.name)
    if not isinstance(pred, IntegerAttr) or not 0 <= pred.value < len(names):
        raise VerifyError(f"requires a 'predicate' attribute in 0..{len(names) - 1}")
    a, b = op.operand_types
    if a != b:
        raise VerifyError("requires all operands to have the same type")
    check_element_kind(op, "int" if op.name == "arith.cmpi" else "float")
    want = shaped_like(a, T.i1)
    if op.results[0].type != want:
        raise VerifyError(f"result type must be {want}, got {op.results[0].type}")


dialect.op("arith.cmpi", "Elementwise integer comparison with a predicate (eq, slt, ugt, ...).",
           traits=(PURE,), properties=("predicate",), verify=_verify_cmp, print=_print_cmp)
dialect.op("arith.cmpf", "Elementwise float comparison with an ordered/unordered predicate.",
           traits=(PURE,), properties=("predicate", "fastmath"), verify=_verify_cmp, print=_print_cmp)


@dialect.rule("arith_cmp")
def _arith_cmp(ctx, children):
    name, pred, lhs, rhs, flags, attrs, type = children
    names = _predicates(name.value)
    if pred.value not in names:
        raise ctx.fail(f"unknown comparison predicate \"{pred.value}\"", pred)
    attributes = {"predicate": IntegerAttr(names.index(pred.value), T.i64)}
    attributes.update(_flags(ctx, name.value, flags))
    attributes.update(attrs or {})
    operands = [ctx.resolve(lhs, type), ctx.resolve(rhs, type)]
    return create(ctx, name.value, operands, [shaped_like(type, T.i1)], attributes)


# ---- select ------------------------------------------------------------------
def _print_select(p, op) -> None:
    cond, value = op.operands[0].type, op.results[0].type
    p.write("arith.select ", p.values(op.operands), p.op_attr_dict(op), " : ")
    p.write(p.type(value) if cond == T.i1 else f"{p.type(cond)}, {p.type(value)}")


def _verify_select(op) -> None:
    cond, a, b = op.operand_types
    if a != b or op.results[0].type != a:
        raise VerifyError("requires the same type for the true value, false value and result")
    if cond != T.i1 and cond != shaped_like(a, T.i1):
        raise VerifyError(f"condition must be i1 or {shaped_like(a, T.i1)}, got {cond}")


dialect.op("arith.select", "Chooses between two values by an i1 condition (scalar or elementwise).",
           traits=(PURE,), verify=_verify_select, print=_print_select)


@dialect.rule("arith_select")
def _arith_select(ctx, children):
    cond, a, b, attrs, types = children
    if len(types) == 1:
        cond_type, type = T.i1, types[0]
    elif len(types) == 2:
        cond_type, type = types
    else:
        raise ctx.fail("expected one or two types")
    operands = [ctx.resolve(cond, cond_type), ctx.resolve(a, type), ctx.resolve(b, type)]
    return create(ctx, "arith.select", operands, [type], attrs)


# ---- casts -------------------------------------------------------------------
def _print_cast(p, op) -> None:
    p.write(op.name, " ", p.value(op.operands[0]), _flags_text(op))
    p.write(p.op_attr_dict(op, elide=_FLAG_KEYS), " : ", p.type(op.operands[0].type), " to ",
            p.type(op.results[0].type))


def _width(t) -> int:
    e = T.element_type(t)
    return e.width if hasattr(e, "width") else 64


def _verify_cast(op) -> None:
    src, dst = op.operands[0].type, op.results[0].type
    if not same_shape(src, dst):
        raise VerifyError(f"'{src}' and '{dst}' are not cast compatible (shapes differ)")
    kind = op.name.split(".", 1)[1]
    se, de = T.element_type(src), T.element_type(dst)
    if kind in ("extsi", "extui", "extf") and not _width(se) < _width(de):
        raise VerifyError("result type must be wider than operand type")
    if kind in ("trunci", "truncf") and not _width(se) > _width(de):
        raise VerifyError("result type must be shorter than operand type")
    wants = {"extsi": ("int", "int"), "extui": ("int", "int"), "trunci": ("int", "int"),
             "extf": ("float", "float"), "truncf": ("float", "float"), "sitofp": ("int", "float"),
             "uitofp": ("int", "float"), "fptosi": ("float", "int"), "fptoui": ("float", "int"),
             "index_cast": ("int", "int"), "index_castui": ("int", "int")}.get(kind)
    if wants:
        for t, want in zip((se, de), wants):
            if (want == "int") != T.is_integer(t) or (want == "float") != T.is_float(t):
                raise VerifyError(f"'{src}' and '{dst}' are not cast compatible")
    if kind.startswith("index_cast") and (se == T.index) == (de == T.index):
        raise VerifyError("exactly one of the operand and result must be index")
    if kind == "bitcast" and _width(se) != _width(de):
        raise VerifyError("operand and result must have the same bit width")


for _name in CASTS:
    dialect.op(f"arith.{_name}", f"Elementwise cast ({_name}).", traits=(PURE,),
               properties=("overflowFlags",) if _name == "trunci" else
               ("fastmath",) if _name == "truncf" else (),
               verify=_verify_cast, print=_print_cast)


@dialect.rule("arith_cast")
def _arith_cast(ctx, children):
    name, operand, flags, attrs, src, dst = children
    attributes = _flags(ctx, name.value, flags)
    attributes.update(attrs or {})
    return create(ctx, name.value, [ctx.resolve(operand, src)], [dst], attributes)


# ---- constant ----------------------------------------------------------------
def _print_constant(p, op) -> None:
    p.write("arith.constant ", p.attr(op.attributes["value"]))


def constant_type(value):
    if isinstance(value, TypeAttr):
        return None
    return getattr(value, "type", None)


def _verify_constant(op) -> None:
    value = op.attributes.get("value")
    t = constant_type(value)
    if t is None:
        raise VerifyError("requires a typed 'value' attribute")
    if t != op.results[0].type:
        raise VerifyError(f"value type {t} must match result type {op.results[0].type}")
    e = T.element_type(t)
    if not (T.is_integer(e) or T.is_float(e) or isinstance(e, T.ComplexType)):
        raise VerifyError(f"value must be an integer, float or elements attribute, got {t}")


dialect.op("arith.constant", "A constant scalar, vector or tensor value.", traits=(PURE,),
           properties=("value",), verify=_verify_constant, print=_print_constant)


@dialect.rule("arith_constant")
def _arith_constant(ctx, children):
    value = children[0]
    t = constant_type(value)
    if t is None:
        raise ctx.fail("expected a typed attribute (for example `1 : i32` or `dense<...> : tensor<...>`)")
    return create(ctx, "arith.constant", (), [t], {"value": value})
