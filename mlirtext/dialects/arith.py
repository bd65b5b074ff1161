"""arith: integer and float arithmetic on scalars, vectors and tensors.

Ops are declared by family, each with its assembly format: same-type binaries
(integer and float), the extended binaries, comparisons, select, casts; only the
constant's syntax is written by hand (grammars/arith.lark), as in MLIR.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import IntegerAttr, OpaqueAttr, TypeAttr, UnitAttr, unit
from ..ir.signatures import OpSignature
from .assembly_format import Custom, EnumAttr, declare_family
from .base import PURE, Dialect, VerifyError
from .common import (check_element_kind, check_same_types, check_type, create, explicit_attrs, is_like,
                     same_shape, shaped_like, splat_value)

dialect = Dialect("arith", grammar="arith")  # the constant's syntax and the flag words

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


def _flag_words(properties, op) -> tuple[str, tuple]:
    """The custom form's flag words (` exact`, ` nneg`, ` overflow<nsw>`, ` fastmath<fast>`)
    in MLIR's order, and the attribute keys they stand for (elided from the attribute
    dictionary). Only the op's own flags (`properties`): an attribute of another name or of
    an unexpected form stays in the dictionary."""
    words, keys = [], []
    for key, word in (("isExact", "exact"), ("nonNeg", "nneg")):
        if key in properties and isinstance(op.attributes.get(key), UnitAttr):
            words.append(word)
            keys.append(key)
    for key, word in (("overflowFlags", "overflow"), ("fastmath", "fastmath")):
        attr = op.attributes.get(key)
        if key in properties and isinstance(attr, OpaqueAttr) and attr.text.startswith(f"#arith.{word}<"):
            keys.append(key)
            if attr.body.strip() not in ("", "none"):
                words.append(f"{word}<{attr.body}>")
    return "".join(" " + w for w in words), tuple(keys)


def _flags(ctx, ops: dict, op_name: str, flag) -> dict:
    """The inherent attribute of a flag word (`overflow<nsw>`, `exact`, ...) an op was
    written with; a flag the op does not have is an error."""
    if flag is None:
        return {}
    (key, value), tok = flag
    if key not in ops[op_name].properties:
        raise ctx.fail(f"'{op_name}' has no '{tok.value}' flag", tok)
    return {key: value}


def flags_directive(owner: Dialect) -> Custom:
    """`custom<Flags>`: the optional flag word of the ops of `owner` (arith's, and math's
    `fastmath<...>`); which op has which flag is in each op's properties."""
    return Custom("[arith_flags]", lambda ctx, op_name, flag: _flags(ctx, owner.ops, op_name, flag),
                  lambda p, op: _flag_words(owner.ops[op.name].properties, op))


def _rounding_words(p, op) -> tuple[str, tuple]:
    """` to_nearest_even` (the custom form's rounding word) and the key it stands for."""
    mode = op.attr("roundingmode")
    if "roundingmode" in dialect.ops[op.name].properties and isinstance(mode, IntegerAttr) and \
            mode.type == T.i32 and 0 <= mode.value < len(ROUNDING_MODES):
        return " " + ROUNDING_MODES[mode.value], ("roundingmode",)
    return "", ()


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


#: `custom<Flags>` and `custom<Rounding>` (`downward`, ...: truncations' rounding mode).
FLAGS = flags_directive(dialect)
ROUNDING = Custom("[arith_rounding]", lambda ctx, op_name, word: _flags(ctx, dialect.ops, op_name, word),
                  _rounding_words)
_CUSTOM = {"Flags": FLAGS, "Rounding": ROUNDING}


# ---- binaries ----------------------------------------------------------------------
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


def _binary(name: str) -> dict:
    """What differs between the binaries: summary, flags, verifier."""
    kind = name.split(".", 1)[1]
    if kind in FLOAT_BINARY:
        return dict(summary=f"Elementwise floating-point {kind}.", properties=("fastmath",),
                    verify=_float_binary_verify)
    return dict(summary=f"Elementwise integer {kind[:-1] if kind.endswith('i') else kind}.",
                properties=("overflowFlags",) if kind in OVERFLOW_OPS else ("isExact",) if kind in EXACT_OPS
                else (), verify=_int_binary_verify)


declare_family(dialect, "binary", [f"arith.{n}" for n in INT_BINARY + FLOAT_BINARY],
               "$lhs `,` $rhs custom<Flags> attr-dict `:` type($result)",
               operands=("lhs", "rhs"), results=("result",), infer={"lhs": "result", "rhs": "result"},
               custom=_CUSTOM, per_op=_binary, traits=(PURE,), fold=_fold_binary)
declare_family(dialect, "unary", ["arith.negf"], "$operand custom<Flags> attr-dict `:` type($result)",
               operands=("operand",), results=("result",), infer={"operand": "result"}, custom=_CUSTOM,
               summary="Elementwise floating-point negation.", traits=(PURE,), properties=("fastmath",),
               verify=_float_binary_verify)


# ---- extended binaries -------------------------------------------------------------
def _verify_extended(op) -> None:
    check_element_kind(op, "int_nz")
    t = op.operand("lhs").type
    if op.name == "arith.addui_extended":
        overflow = op.result_named("overflow").type
        check_type(overflow, "result #1", "bool")
        if op.operand("rhs").type != t or op.result_named("sum").type != t:
            raise VerifyError("failed to verify that all of {lhs, rhs, sum} have same type")
        if overflow != shaped_like(t, T.i1):
            raise VerifyError("failed to verify that overflow has the shape of sum, with i1 elements")
    elif any(x != t for x in (op.operand("rhs").type, *op.result_types)):
        raise VerifyError("failed to verify that all of {lhs, rhs, low, high} have same type")


_EXTENDED_SUMMARY = "Integer arithmetic producing a wide result as two values."
# `: i32` for the multiplications (both halves have the operand type), `: i32, i1` for add.
declare_family(dialect, "mul_extended", ["arith.mulsi_extended", "arith.mului_extended"],
               "$lhs `,` $rhs attr-dict `:` type($lhs)", operands=("lhs", "rhs"), results=("low", "high"),
               infer={"rhs": "lhs", "low": "lhs", "high": "lhs"}, summary=_EXTENDED_SUMMARY, traits=(PURE,),
               verify=_verify_extended)
declare_family(dialect, "addui_extended", ["arith.addui_extended"],
               "$lhs `,` $rhs attr-dict `:` type($sum) `,` type($overflow)", operands=("lhs", "rhs"),
               results=("sum", "overflow"), infer={"lhs": "sum", "rhs": "sum"}, summary=_EXTENDED_SUMMARY,
               traits=(PURE,), verify=_verify_extended)


# ---- comparisons -----------------------------------------------------------------
def _predicates(op_name: str):
    return CMPI_PREDICATES if op_name == "arith.cmpi" else CMPF_PREDICATES


def _verify_cmp(op) -> None:
    pred = op.attr("predicate")
    names = _predicates(op.name)
    if pred is None:
        raise VerifyError("requires attribute 'predicate'")
    if not isinstance(pred, IntegerAttr) or pred.type != T.i64 or not 0 <= pred.value < len(names):
        raise VerifyError(f"attribute 'predicate' must be an i64 in 0..{len(names) - 1}, got {pred}")
    check_element_kind(op, "int_nz" if op.name == "arith.cmpi" else "float")
    result = op.result_named("result").type
    check_type(result, "result #0", "bool")
    a, b = op.operand("lhs").type, op.operand("rhs").type
    if a != b:
        raise VerifyError("failed to verify that all of {lhs, rhs} have same type")
    if result != shaped_like(a, T.i1):
        raise VerifyError("failed to verify that result type has i1 element type and same shape "
                          "as operands")


def _to_i1(t):
    return shaped_like(t, T.i1)


# `arith.cmpi slt, %a, %b : i32`; the predicate may be quoted (`"slt"`).
for _name, _words, _summary, _properties in (
        ("cmpi", CMPI_PREDICATES, "Elementwise integer comparison with a predicate (eq, slt, ugt, ...).",
         ("predicate",)),
        ("cmpf", CMPF_PREDICATES, "Elementwise float comparison with an ordered/unordered predicate.",
         ("predicate", "fastmath"))):
    declare_family(dialect, _name, [f"arith.{_name}"], "$predicate `,` $lhs `,` $rhs custom<Flags> attr-dict "
                   "`:` type($lhs)", operands=("lhs", "rhs"), results=("result",),
                   attributes={"predicate": EnumAttr(_words, T.i64, "comparison predicate")},
                   infer={"rhs": "lhs", "result": ("lhs", _to_i1)}, custom=_CUSTOM, summary=_summary,
                   traits=(PURE,), properties=_properties, verify=_verify_cmp)


# ---- select ------------------------------------------------------------------
def _parse_select_types(ctx, op_name, types):
    """`: T` (an i1 condition) or `: C, T`: the condition's type and the value type."""
    if len(types) == 1:
        return T.i1, types[0]
    if len(types) == 2:
        return types[0], types[1]
    raise ctx.fail("expected one or two types")


def _print_select_types(p, op) -> tuple[str, tuple]:
    cond, value = op.operand("condition").type, op.result_named("result").type
    return " " + (p.type(value) if cond == T.i1 else f"{p.type(cond)}, {p.type(value)}"), ()


def _verify_select(op) -> None:
    cond = op.operand("condition").type
    a, b = op.operand("true_value").type, op.operand("false_value").type
    check_type(cond, "operand #0", "bool")
    if a != b or op.result_named("result").type != a:
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


declare_family(dialect, "select", ["arith.select"], "$condition `,` $true_value `,` $false_value attr-dict `:` "
               "custom<SelectTypes>(type($condition), type($result))",
               operands=("condition", "true_value", "false_value"), results=("result",),
               infer={"true_value": "result", "false_value": "result"},
               custom={"SelectTypes": Custom("types", _parse_select_types, _print_select_types)},
               summary="Chooses between two values by an i1 condition (scalar or elementwise).",
               traits=(PURE,), verify=_verify_select, fold=_fold_select)


# ---- casts -------------------------------------------------------------------
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
    src, dst = op.operand("in").type, op.result_named("out").type
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


def _cast_properties(name: str) -> dict:
    kind = name.split(".", 1)[1]
    return dict(summary=f"Elementwise cast ({kind}).", properties=(
        ("overflowFlags",) if kind == "trunci" else ("roundingmode", "fastmath") if kind == "truncf" else
        ("fastmath",) if kind == "extf" else ("nonNeg",) if kind in NNEG_OPS else ()))


declare_family(dialect, "cast", [f"arith.{n}" for n in CASTS],
               "$in custom<Rounding> custom<Flags> attr-dict `:` type($in) `to` type($out)",
               operands=("in",), results=("out",), custom=_CUSTOM, per_op=_cast_properties, traits=(PURE,),
               verify=_verify_cast)


# ---- scaled casts (OCP microscaling: x * 2^scale) -------------------------------
def _verify_scaling(op) -> None:
    src, scale, dst = op.operand("in").type, op.operand("scale").type, op.result_named("out").type
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


# `arith.scaling_truncf %x, %scale downward fastmath<nnan> : f32, f8E8M0FNU to f4E2M1FN`
declare_family(dialect, "scaling", ["arith.scaling_extf", "arith.scaling_truncf"],
               "$in `,` $scale custom<Rounding> custom<Flags> attr-dict `:` type($in) `,` type($scale) `to` "
               "type($out)", operands=("in", "scale"), results=("out",), custom=_CUSTOM, traits=(PURE,),
               verify=_verify_scaling, per_op=lambda name: dict(
                   summary="Elementwise extension of a scaled float: extf(x) * 2^scale.",
                   properties=("fastmath",)) if name == "arith.scaling_extf" else dict(
                   summary="Elementwise truncation of a scaled float: truncf(x / 2^scale).",
                   properties=("roundingmode", "fastmath")))


# ---- constant ----------------------------------------------------------------
# Hand-written syntax, as in MLIR (ConstantOp has a custom parser): the value's type is the
# result type, and after an attribute dictionary only values that cannot be mistaken for
# one may follow (grammars/arith.lark).
def _print_constant(p, op) -> None:
    attrs = p.op_attr_dict(op, elide=("value",))
    value = op.attr("value")
    # after an attribute dictionary the grammar takes no alias (`#name`): write the value out
    p.write("arith.constant", attrs, " ", str(value) if attrs else p.attr(value))


def constant_type(value):
    if isinstance(value, TypeAttr):
        return None
    return getattr(value, "type", None)


def _verify_constant(op) -> None:
    t = constant_type(op.attr("value"))
    if t is None or t != op.result_named("result").type:
        raise VerifyError("failed to verify that all of {value, result} have same type")
    if isinstance(t, T.IntegerType) and not t.is_signless:
        raise VerifyError("integer return type must be signless")
    e = T.element_type(t)
    if not (T.is_integer(e) or T.is_float(e) or isinstance(e, T.ComplexType)):
        raise VerifyError("value must be an integer, float, or elements attribute")


dialect.op("arith.constant", "A constant scalar, vector or tensor value.", traits=(PURE,),
           properties=("value",), verify=_verify_constant, print=_print_constant, operands=0, results=1,
           regions=0, successors=0, names=OpSignature.of((), ("result",), ("value",)))


@dialect.rule("arith_constant")
def _arith_constant(ctx, children):
    *attrs, value = children
    t = constant_type(value)
    if t is None:
        raise ctx.fail("expected a typed attribute (for example `1 : i32` or `dense<...> : tensor<...>`)")
    attributes = explicit_attrs(ctx, "arith.constant", attrs[0] if attrs else None)
    attributes["value"] = value
    return create(ctx, "arith.constant", (), [t], attributes)
