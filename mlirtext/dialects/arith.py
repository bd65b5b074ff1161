"""arith: integer and float arithmetic on scalars, vectors and tensors.

Ops are declared by family: same-type binaries (integer and float), the
extended binaries, comparisons, select, casts and constants.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import IntegerAttr, OpaqueAttr, TypeAttr, UnitAttr, unit
from .base import PURE, Dialect, VerifyError
from .common import (check_element_kind, check_same_types, check_type, create, explicit_attrs, is_like,
                     same_shape, shaped_like, splat_value)

dialect = Dialect("arith", grammar="arith")

INT_BINARY = ("addi", "subi", "muli", "divsi", "divui", "ceildivsi", "ceildivui", "floordivsi",
              "remsi", "remui", "andi", "ori", "xori", "shli", "shrsi", "shrui",
              "maxsi", "maxui", "minsi", "minui")
FLOAT_BINARY = ("addf", "subf", "mulf", "divf", "remf", "maximumf", "minimumf", "maxnumf", "minnumf")
EXTENDED = ("mulsi_extended", "mului_extended", "addui_extended")
CASTS = ("extsi", "extui", "extf", "trunci", "truncf", "sitofp", "uitofp", "fptosi", "fptoui",
         "index_cast", "index_castui", "bitcast")
CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                   "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")
ROUNDING_MODES = ("to_nearest_even", "downward", "upward", "toward_zero", "to_nearest_away")
OVERFLOW_WORDS = ("none", "nsw", "nuw")
FASTMATH_WORDS = ("none", "reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "fast")
#: The optional properties each op family has (MLIR's ArithOps.td).
OVERFLOW_OPS = {"addi", "subi", "muli", "shli", "trunci"}
EXACT_OPS = {"divsi", "divui", "shrsi", "shrui"}
NNEG_OPS = {"extui", "uitofp", "index_castui"}


def _flags_text(op) -> tuple[str, tuple]:
    """The custom form's flag words (` to_nearest_even`, ` exact`, ` overflow<nsw>`, ...) in
    MLIR's order, and the attribute keys they stand for (elided from the attribute dictionary).
    An attribute of an unexpected form stays in the dictionary instead."""
    words, keys = [], []
    mode = op.attributes.get("roundingmode")
    if isinstance(mode, IntegerAttr) and mode.type == T.i32 and 0 <= mode.value < len(ROUNDING_MODES):
        words.append(ROUNDING_MODES[mode.value])
        keys.append("roundingmode")
    for key, word in (("isExact", "exact"), ("nonNeg", "nneg")):
        if isinstance(op.attributes.get(key), UnitAttr):
            words.append(word)
            keys.append(key)
    for key, word in (("overflowFlags", "overflow"), ("fastmath", "fastmath")):
        attr = op.attributes.get(key)
        if isinstance(attr, OpaqueAttr) and attr.text.startswith(f"#arith.{word}<"):
            keys.append(key)
            if attr.body.strip() not in ("", "none"):
                words.append(f"{word}<{attr.body}>")
    return "".join(" " + w for w in words), tuple(keys)


#: Counts of the ops with n operands and one result (see OpDef.counts).
_COUNTS = {n: dict(operands=n, results=1, regions=0, successors=0) for n in range(4)}


# ---- binaries ----------------------------------------------------------------------
def _print_binary(p, op) -> None:
    flags, keys = _flags_text(op)
    p.write(op.name, " ", p.values(op.operands), flags)
    p.write(p.op_attr_dict(op, elide=keys), " : ", p.type(op.results[0].type))


def _int_binary_verify(op) -> None:
    check_element_kind(op, "int_nz")
    check_same_types(op)


def _float_binary_verify(op) -> None:
    check_element_kind(op, "float")
    check_same_types(op)


#: Folds of x OP c for a splat constant c: op -> {c: "lhs" (the result is x) | "rhs" (it is c)}.
#: Only identities that hold bit for bit (so no x*0 -> 0 for floats: NaN*0 is NaN).
_RIGHT_IDENTITIES = {"addi": {0: "lhs"}, "subi": {0: "lhs"}, "muli": {1: "lhs", 0: "rhs"},
                     "divsi": {1: "lhs"}, "divui": {1: "lhs"}, "andi": {0: "rhs"}, "ori": {0: "lhs"},
                     "xori": {0: "lhs"}, "shli": {0: "lhs"}, "shrsi": {0: "lhs"}, "shrui": {0: "lhs"},
                     "mulf": {1.0: "lhs"}, "divf": {1.0: "lhs"}}
#: Commutative ops also fold c OP x.
_COMMUTATIVE = {"addi", "muli", "andi", "ori", "xori", "mulf"}


def _fold_binary(op, constants):
    kind = op.name[len("arith."):]
    rules = _RIGHT_IDENTITIES.get(kind, {})
    lhs, rhs = op.operands
    sides = [(constants[1], lhs, rhs)]
    if kind in _COMMUTATIVE:
        sides.append((constants[0], rhs, lhs))
    for const, other, const_value in sides:
        c = splat_value(const)
        if c is None or isinstance(c, tuple):
            continue
        action = rules.get(c)
        if action is not None and other.type == op.results[0].type:
            return [other if action == "lhs" else const_value]
    if kind in ("andi", "ori") and lhs is rhs:
        return [lhs]
    return None


for _name in INT_BINARY:
    dialect.op(f"arith.{_name}", f"Elementwise integer {_name[:-1] if _name.endswith('i') else _name}.",
               traits=(PURE,), properties=("overflowFlags",) if _name in OVERFLOW_OPS else
               ("isExact",) if _name in EXACT_OPS else (),
               verify=_int_binary_verify, print=_print_binary, fold=_fold_binary, **_COUNTS[2])
for _name in FLOAT_BINARY:
    dialect.op(f"arith.{_name}", f"Elementwise floating-point {_name}.", traits=(PURE,),
               properties=("fastmath",), verify=_float_binary_verify, print=_print_binary,
               fold=_fold_binary, **_COUNTS[2])
dialect.op("arith.negf", "Elementwise floating-point negation.", traits=(PURE,), properties=("fastmath",),
           verify=_float_binary_verify, print=_print_binary, **_COUNTS[1])


def _flags(ctx, op_name: str, *flags) -> dict:
    """The inherent attributes of the flag words (`overflow<nsw>`, `exact`, ...) an op was
    written with; a flag the op does not have is an error."""
    properties = dialect.ops[op_name].properties
    out = {}
    for flag in flags:
        if flag is None:
            continue
        (key, value), tok = flag
        if key not in properties:
            raise ctx.fail(f"'{op_name}' has no '{tok.value}' flag", tok)
        out[key] = value
    return out


@dialect.rule("arith_flag_list")
def _arith_flag_list(ctx, children):
    kind, *words = children
    allowed = OVERFLOW_WORDS if kind.value == "overflow" else FASTMATH_WORDS
    for w in words:
        if w.value not in allowed:
            raise ctx.fail(f"unknown {kind.value} flag '{w.value}' (expected one of "
                           f"{', '.join(allowed)})", w)
    if kind.value == "overflow":
        attr = ("overflowFlags", OpaqueAttr(f"#arith.overflow<{', '.join(w.value for w in words)}>"))
    else:
        attr = ("fastmath", OpaqueAttr(f"#arith.fastmath<{','.join(w.value for w in words)}>"))
    return attr, kind


@dialect.rule("arith_exact")
def _arith_exact(ctx, children):
    return ("isExact", unit), children[0]


@dialect.rule("arith_nneg")
def _arith_nneg(ctx, children):
    return ("nonNeg", unit), children[0]


@dialect.rule("arith_rounding")
def _arith_rounding(ctx, children):
    tok = children[0]
    return ("roundingmode", IntegerAttr(ROUNDING_MODES.index(tok.value), T.i32)), tok


@dialect.rule("arith_binary")
def _arith_binary(ctx, children):
    name, lhs, rhs, flags, attrs, type = children
    operands = [ctx.resolve(lhs, type), ctx.resolve(rhs, type)]
    attributes = _flags(ctx, name.value, flags)
    attributes.update(explicit_attrs(ctx, name.value, attrs))
    return create(ctx, name.value, operands, [type], attributes)


@dialect.rule("arith_unary")
def _arith_unary(ctx, children):
    name, operand, flags, attrs, type = children
    attributes = _flags(ctx, name.value, flags)
    attributes.update(explicit_attrs(ctx, name.value, attrs))
    return create(ctx, name.value, [ctx.resolve(operand, type)], [type], attributes)


# ---- extended binaries -------------------------------------------------------------
def _print_extended(p, op) -> None:
    """`: i32` for the multiplications (both halves have the operand type), `: i32, i1` for add."""
    types = op.result_types if op.name == "arith.addui_extended" else op.result_types[:1]
    p.write(op.name, " ", p.values(op.operands), p.op_attr_dict(op), " : ", p.types(types))


def _verify_extended(op) -> None:
    check_element_kind(op, "int_nz")
    t = op.operands[0].type
    if op.name == "arith.addui_extended":
        check_type(op.results[1].type, "result #1", "bool")
        if op.operands[1].type != t or op.results[0].type != t:
            raise VerifyError("failed to verify that all of {lhs, rhs, sum} have same type")
        if op.results[1].type != shaped_like(t, T.i1):
            raise VerifyError("failed to verify that overflow has the shape of sum, with i1 elements")
    elif any(x != t for x in (op.operands[1].type, *op.result_types)):
        raise VerifyError("failed to verify that all of {lhs, rhs, low, high} have same type")


for _name in EXTENDED:
    dialect.op(f"arith.{_name}", "Integer arithmetic producing a wide result as two values.",
               traits=(PURE,), verify=_verify_extended, print=_print_extended,
               operands=2, results=2, regions=0, successors=0)


@dialect.rule("arith_extended")
def _arith_extended(ctx, children):
    name, lhs, rhs, attrs, types = children
    if name.value == "arith.addui_extended":
        if len(types) != 2:
            raise ctx.fail("expected two types: the sum and the overflow flag (`: i32, i1`)")
    elif len(types) != 1:
        raise ctx.fail("expected one type: the operand type (both results have it)")
    else:
        types = [types[0], types[0]]
    operands = [ctx.resolve(lhs, types[0]), ctx.resolve(rhs, types[0])]
    return create(ctx, name.value, operands, types, explicit_attrs(ctx, name.value, attrs))


# ---- comparisons -----------------------------------------------------------------
def _predicates(op_name: str):
    return CMPI_PREDICATES if op_name == "arith.cmpi" else CMPF_PREDICATES


def _print_cmp(p, op) -> None:
    pred = op.attributes["predicate"].value
    flags, keys = _flags_text(op)
    p.write(op.name, " ", _predicates(op.name)[pred], ", ", p.values(op.operands), flags)
    p.write(p.op_attr_dict(op, elide=("predicate",) + keys), " : ", p.type(op.operands[0].type))


def _verify_cmp(op) -> None:
    pred = op.attributes.get("predicate")
    names = _predicates(op.name)
    if pred is None:
        raise VerifyError("requires attribute 'predicate'")
    if not isinstance(pred, IntegerAttr) or pred.type != T.i64 or not 0 <= pred.value < len(names):
        raise VerifyError(f"attribute 'predicate' must be an i64 in 0..{len(names) - 1}, got {pred}")
    check_element_kind(op, "int_nz" if op.name == "arith.cmpi" else "float")
    check_type(op.results[0].type, "result #0", "bool")
    a, b = op.operand_types
    if a != b:
        raise VerifyError("failed to verify that all of {lhs, rhs} have same type")
    if op.results[0].type != shaped_like(a, T.i1):
        raise VerifyError("failed to verify that result type has i1 element type and same shape "
                          "as operands")


dialect.op("arith.cmpi", "Elementwise integer comparison with a predicate (eq, slt, ugt, ...).",
           traits=(PURE,), properties=("predicate",), verify=_verify_cmp, print=_print_cmp, **_COUNTS[2])
dialect.op("arith.cmpf", "Elementwise float comparison with an ordered/unordered predicate.",
           traits=(PURE,), properties=("predicate", "fastmath"), verify=_verify_cmp, print=_print_cmp,
           **_COUNTS[2])


@dialect.rule("arith_cmp")
def _arith_cmp(ctx, children):
    name, pred, lhs, rhs, flags, attrs, type = children
    names = _predicates(name.value)
    word = pred.value[1:-1] if pred.value.startswith('"') else pred.value  # `slt` or `"slt"`
    if word not in names:
        raise ctx.fail(f"unknown comparison predicate \"{word}\"", pred)
    attributes = {"predicate": IntegerAttr(names.index(word), T.i64)}
    attributes.update(_flags(ctx, name.value, flags))
    attributes.update(explicit_attrs(ctx, name.value, attrs))
    operands = [ctx.resolve(lhs, type), ctx.resolve(rhs, type)]
    return create(ctx, name.value, operands, [shaped_like(type, T.i1)], attributes)


# ---- select ------------------------------------------------------------------
def _print_select(p, op) -> None:
    cond, value = op.operands[0].type, op.results[0].type
    p.write("arith.select ", p.values(op.operands), p.op_attr_dict(op), " : ")
    p.write(p.type(value) if cond == T.i1 else f"{p.type(cond)}, {p.type(value)}")


def _verify_select(op) -> None:
    cond, a, b = op.operand_types
    check_type(cond, "operand #0", "bool")
    if a != b or op.results[0].type != a:
        raise VerifyError("failed to verify that all of {true_value, false_value, result} "
                          "have same type")
    if cond != T.i1 and cond != shaped_like(a, T.i1):
        raise VerifyError("failed to verify that condition is signless i1 or has matching shape")


def _fold_select(op, constants):
    cond, a, b = op.operands
    if a is b:
        return [a]
    c = splat_value(constants[0])
    if c is None:
        return None
    return [a if c else b]


dialect.op("arith.select", "Chooses between two values by an i1 condition (scalar or elementwise).",
           traits=(PURE,), verify=_verify_select, print=_print_select, fold=_fold_select, **_COUNTS[3])


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
    return create(ctx, "arith.select", operands, [type], explicit_attrs(ctx, "arith.select", attrs))


# ---- casts -------------------------------------------------------------------
def _print_cast(p, op) -> None:
    flags, keys = _flags_text(op)
    p.write(op.name, " ", p.value(op.operands[0]), flags)
    p.write(p.op_attr_dict(op, elide=keys), " : ", p.type(op.operands[0].type), " to ",
            p.type(op.results[0].type))


def _width(t) -> int:
    e = T.element_type(t)
    if isinstance(e, T.FloatType):
        return T.FLOAT_WIDTHS.get(e.name, 0)
    return e.width if hasattr(e, "width") else 64


_INDEX_CAST_KIND = "signless-non-zero-bitwidth-integer-like or memref of signless-integer"
_BITCAST_KIND = ("non-zero-bitwidth-signless-integer-or-float-like or memref of non-zero-bitwidth "
                 "signless integer or float")
#: (operand kind, result kind) of each cast (see ELEMENT_KINDS in common.py).
_CAST_KINDS = {"extsi": ("fixed_int", "fixed_int"), "extui": ("fixed_int", "fixed_int"),
               "trunci": ("fixed_int", "fixed_int"), "extf": ("float", "float"),
               "truncf": ("float", "float"), "sitofp": ("fixed_int", "float"),
               "uitofp": ("fixed_int", "float"), "fptosi": ("float", "fixed_int"),
               "fptoui": ("float", "fixed_int")}


def _verify_cast(op) -> None:
    src, dst = op.operands[0].type, op.results[0].type
    kind = op.name.split(".", 1)[1]
    if kind in _CAST_KINDS:
        check_type(src, "operand #0", _CAST_KINDS[kind][0])
        check_type(dst, "result #0", _CAST_KINDS[kind][1])
    else:  # index_cast(ui), bitcast: memrefs too
        what = _INDEX_CAST_KIND if kind.startswith("index_cast") else _BITCAST_KIND
        ok = ((lambda t: is_like(t, "int_nz", memref=True)) if kind.startswith("index_cast") else
              (lambda t: is_like(t, "fixed_int", memref=True) or is_like(t, "float", memref=True)))
        for t, name in ((src, "operand #0"), (dst, "result #0")):
            if not ok(t):
                raise VerifyError(f"{name} must be {what}, but got '{t}'")
    if not same_shape(src, dst):
        raise VerifyError("failed to verify that input and output have the same tensor dimensions")
    se, de = T.element_type(src), T.element_type(dst)
    if kind in ("extsi", "extui", "extf"):
        ok = _width(se) < _width(de)
    elif kind in ("trunci", "truncf"):
        ok = _width(se) > _width(de)
    elif kind.startswith("index_cast"):
        ok = (se == T.index) != (de == T.index)
    elif kind == "bitcast":
        ok = _width(se) == _width(de)
    else:
        ok = True
    if not ok:
        raise VerifyError(f"operand type '{src}' and result type '{dst}' are cast incompatible")


for _name in CASTS:
    dialect.op(f"arith.{_name}", f"Elementwise cast ({_name}).", traits=(PURE,),
               properties=("overflowFlags",) if _name == "trunci" else
               ("roundingmode", "fastmath") if _name == "truncf" else
               ("fastmath",) if _name == "extf" else ("nonNeg",) if _name in NNEG_OPS else (),
               verify=_verify_cast, print=_print_cast, **_COUNTS[1])


@dialect.rule("arith_cast")
def _arith_cast(ctx, children):
    name, operand, rounding, flags, attrs, src, dst = children
    attributes = _flags(ctx, name.value, rounding, flags)
    attributes.update(explicit_attrs(ctx, name.value, attrs))
    return create(ctx, name.value, [ctx.resolve(operand, src)], [dst], attributes)


# ---- scaled casts (OCP microscaling: x * 2^scale) -------------------------------
def _print_scaling(p, op) -> None:
    flags, keys = _flags_text(op)
    p.write(op.name, " ", p.value(op.operands[0]), ", ", p.value(op.operands[1]), flags)
    p.write(p.op_attr_dict(op, elide=keys), " : ", p.type(op.operands[0].type), ", ",
            p.type(op.operands[1].type), " to ", p.type(op.results[0].type))


def _verify_scaling(op) -> None:
    src, scale, dst = op.operands[0].type, op.operands[1].type, op.results[0].type
    for t, name in ((src, "operand #0"), (scale, "operand #1"), (dst, "result #0")):
        check_type(t, name, "float")
    shaped = [isinstance(t, (T.VectorType, T.RankedTensorType, T.UnrankedTensorType)) for t in (src, scale, dst)]
    if (shaped[0] or shaped[1]) and not shaped[2]:
        raise VerifyError("if an operand is non-scalar, then there must be at least one non-scalar result")
    if not (same_shape(src, dst) and same_shape(scale, dst)):
        raise VerifyError("failed to verify that input and output have the same tensor dimensions")
    wider = _width(T.element_type(dst)) > _width(T.element_type(src))
    if wider != (op.name == "arith.scaling_extf"):
        raise VerifyError(f"operand types '{src}', '{scale}' and result type '{dst}' are cast incompatible")


dialect.op("arith.scaling_extf", "Elementwise extension of a scaled float: extf(x) * 2^scale.",
           traits=(PURE,), properties=("fastmath",), verify=_verify_scaling, print=_print_scaling,
           **_COUNTS[2])
dialect.op("arith.scaling_truncf", "Elementwise truncation of a scaled float: truncf(x / 2^scale).",
           traits=(PURE,), properties=("roundingmode", "fastmath"), verify=_verify_scaling,
           print=_print_scaling, **_COUNTS[2])


@dialect.rule("arith_scaling")
def _arith_scaling(ctx, children):
    name, operand, scale, rounding, flags, attrs, src, scale_type, dst = children
    attributes = _flags(ctx, name.value, rounding, flags)
    attributes.update(explicit_attrs(ctx, name.value, attrs))
    return create(ctx, name.value, [ctx.resolve(operand, src), ctx.resolve(scale, scale_type)], [dst],
                  attributes)


# ---- constant ----------------------------------------------------------------
def _print_constant(p, op) -> None:
    attrs = p.op_attr_dict(op, elide=("value",))
    value = op.attributes["value"]
    # after an attribute dictionary the grammar takes no alias (`#name`): write the value out
    p.write("arith.constant", attrs, " ", str(value) if attrs else p.attr(value))


def constant_type(value):
    if isinstance(value, TypeAttr):
        return None
    return getattr(value, "type", None)


def _verify_constant(op) -> None:
    value = op.attributes.get("value")
    t = constant_type(value)
    if t is None or t != op.results[0].type:
        raise VerifyError("failed to verify that all of {value, result} have same type")
    if isinstance(t, T.IntegerType) and not t.is_signless:
        raise VerifyError("integer return type must be signless")
    e = T.element_type(t)
    if not (T.is_integer(e) or T.is_float(e) or isinstance(e, T.ComplexType)):
        raise VerifyError("value must be an integer, float, or elements attribute")


dialect.op("arith.constant", "A constant scalar, vector or tensor value.", traits=(PURE,),
           properties=("value",), verify=_verify_constant, print=_print_constant, **_COUNTS[0])


@dialect.rule("arith_constant")
def _arith_constant(ctx, children):
    *attrs, value = children
    t = constant_type(value)
    if t is None:
        raise ctx.fail("expected a typed attribute (for example `1 : i32` or `dense<...> : tensor<...>`)")
    attributes = explicit_attrs(ctx, "arith.constant", attrs[0] if attrs else None)
    attributes["value"] = value
    return create(ctx, "arith.constant", (), [t], attributes)
