"""llvm: the LLVM dialect (what code generation lowers to, and what becomes LLVM IR).

Ops are declared by family: integer and float binaries (overflow, exact,
disjoint and fast-math flags), comparisons, casts, memory (load, store,
getelementptr, alloca, atomics), control flow (br, cond_br, switch, return,
invoke), calls, functions, globals, constants, aggregates, vectors and
intrinsics. Inherent attributes are stored as MLIR's generic form spells them
(`predicate = 2 : i64`, `overflowFlags = 1 : i32`, `fastmathFlags =
#llvm.fastmath<fast>`, `rawConstantIndices = array<i32: ...>`) so the generic
print is what `mlir-opt` prints and a lowering reads one canonical form. Types
are the structured classes of `llvm_types`.
"""
from __future__ import annotations

import re

from ..ir import types as T
from ..ir.attributes import (ArrayAttr, DenseArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr,
                             OpaqueAttr, StringAttr, SymbolRefAttr, TypeAttr, UnitAttr, escape_string,
                             unit)
from ..ir.core import Region
from ..ir.signatures import OpSignature
from ..ir.symbols import resolve_symbol, symbol_table_of
from ..syntax.grammar_files import grammar_dir
from ..syntax.literals import string_value, symbol_ref
from . import llvm_types as LT
from .base import ISOLATED, PURE, RETURN_LIKE, SYMBOL, SYMBOL_TABLE, TERMINATOR, Dialect, VerifyError
from .branches import (build_cond_br, build_switch, case_values, print_cond_br, succ, successor_groups,
                       verify_branch, write_successor)
from .common import (add_arg_res_attrs, create, dense_i32_array, merge_attrs, operand_segments, safe_printer,
                     symbol_name)
from .registry import builtin_registry

dialect = Dialect("llvm", grammar="llvm", type_check=LT.check_text, type_parser=LT.parse_llvm_type)

I32, I64 = T.i32, T.i64
DYNAMIC_INDEX = -2147483648  # rawConstantIndices marker for an SSA index

INT_BINARY = ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "and", "or", "xor", "shl", "lshr", "ashr")
FLOAT_BINARY = ("fadd", "fsub", "fmul", "fdiv", "frem")
OVERFLOW_OPS = {"add", "sub", "mul", "shl", "trunc"}
EXACT_OPS = {"udiv", "sdiv", "lshr", "ashr"}
ICMP_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
FCMP_PREDICATES = ("_false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult",
                   "ule", "une", "uno", "_true")
ORDERINGS = {"not_atomic": 0, "unordered": 1, "monotonic": 2, "acquire": 4, "release": 5, "acq_rel": 6,
             "seq_cst": 7}
ORDERING_NAMES = {v: k for k, v in ORDERINGS.items()}
LINKAGES = ("private", "internal", "available_externally", "linkonce", "weak", "common", "appending",
            "extern_weak", "linkonce_odr", "weak_odr", "external")
VISIBILITIES = {"default": 0, "hidden": 1, "protected": 2}
UNNAMED_ADDR = {"local_unnamed_addr": 1, "unnamed_addr": 2}
TAIL_CALL_KINDS = ("none", "tail", "musttail", "notail")
ATOMIC_BIN_OPS = ("xchg", "add", "sub", "_and", "nand", "_or", "_xor", "max", "min", "umax", "umin",
                  "fadd", "fsub", "fmax", "fmin", "uinc_wrap", "udec_wrap", "usub_cond", "usub_sat",
                  "fmaximum", "fminimum", "fmaximumnum", "fminimumnum")


# ---- shared pieces -----------------------------------------------------------------
def _int(attr, default=0) -> int:
    return attr.value if isinstance(attr, IntegerAttr) else default


def _i64_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(values))


def _element(t):
    return t.element if isinstance(t, T.VectorType) else t


def _is_int(t) -> bool:
    return isinstance(_element(t), T.IntegerType)


def _is_float(t) -> bool:
    return isinstance(_element(t), T.FloatType)


def _with_element(t, element):
    if isinstance(t, T.VectorType):
        return T.VectorType(t.shape, element, t.scalable)
    return element


def _flag_words(ctx, flags, kind: str):
    if flags is None:
        return None
    got, words = flags
    if got != kind:
        raise ctx.fail(f"expected '{kind}<...>' here, not '{got}<...>'")
    return words


def _fastmath_attr(ctx, words) -> OpaqueAttr:
    known = {"nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc", "fast", "none"}
    for w in words:
        if w not in known:
            raise ctx.fail(f"unknown fastmath flag '{w}'")
    return OpaqueAttr(f"#llvm.fastmath<{', '.join(words) if words else 'none'}>")


def _overflow_attr(ctx, words) -> IntegerAttr:
    value = 0
    for w in words:
        if w not in ("nsw", "nuw"):
            raise ctx.fail(f"unknown overflow flag '{w}' (expected nsw or nuw)")
        value |= 1 if w == "nsw" else 2
    return IntegerAttr(value, I32)


def _fastmath_text(op) -> str:
    attr = op.attr("fastmathFlags")
    if isinstance(attr, OpaqueAttr) and attr.body not in ("", "none"):
        return f" fastmath<{', '.join(w.strip() for w in attr.body.split(','))}>"
    return ""


def _overflow_text(op) -> str:
    value = _int(op.attr("overflowFlags"))
    words = [w for bit, w in ((1, "nsw"), (2, "nuw")) if value & bit]
    return f" overflow<{', '.join(words)}>" if words else ""


def _fastmath_attributes(ctx, flags, attrs) -> dict:
    """The fastmath flag words of an op's custom form as `fastmathFlags`, its attribute
    dictionary merged in."""
    attributes = {}
    words = _flag_words(ctx, flags, "fastmath")
    if words is not None:
        attributes["fastmathFlags"] = _fastmath_attr(ctx, words)
    merge_attrs(attributes, attrs)
    _normalize_fastmath(attributes)
    return attributes


def _normalize_fastmath(attributes: dict) -> None:
    """`{fastmathFlags = #llvm.fastmath<nnan,ninf>}` (the older spelling) -> the property."""
    attr = attributes.get("fastmathFlags")
    if isinstance(attr, OpaqueAttr) and attr.text.startswith("#llvm.fastmath<"):
        words = [w.strip() for w in attr.body.split(",") if w.strip()]
        attributes["fastmathFlags"] = OpaqueAttr(f"#llvm.fastmath<{', '.join(words) or 'none'}>")


def _type_error(index: int, what: str, t) -> VerifyError:
    return VerifyError(f"operand #{index} must be {what}, but got '{t}'")


INT_LIKE = "signless integer or LLVM dialect-compatible vector of signless integer"
FLOAT_LIKE = "floating point LLVM type or LLVM dialect-compatible vector of floating point LLVM type"


# ---- binaries --------------------------------------------------------------------
#: MLIR's names (LLVMOps.td) for the binary ops' operands, the casts' one and the value ops' result.
_BINARY_NAMES = OpSignature.of(("lhs", "rhs"), ("res",))
_CAST_NAMES = OpSignature.of(("arg",), ("res",))
_VALUE_NAMES = OpSignature.of((), ("res",))


def _print_binary(p, op) -> None:
    word = ""
    if "isExact" in op.attributes:
        word = "exact "
    elif "isDisjoint" in op.attributes:
        word = "disjoint "
    p.write(op.name, " ", word, p.values(op.operands), _overflow_text(op), _fastmath_text(op))
    p.write(p.attr_dict(op.attributes, elide=("isExact", "isDisjoint", "overflowFlags", "fastmathFlags")))
    p.write(" : ", p.type(op.results[0].type))


def _verify_binary(op) -> None:
    float_op = op.name[5:] in FLOAT_BINARY or op.name == "llvm.fneg"
    for i, v in enumerate(op.operands):
        if float_op and not _is_float(v.type):
            raise _type_error(i, FLOAT_LIKE, v.type)
        if not float_op and not _is_int(v.type):
            raise _type_error(i, INT_LIKE, v.type)
    types = op.operand_types + op.result_types
    if any(t != types[0] for t in types):
        raise VerifyError("requires the same type for all operands and results")


for _name in INT_BINARY:
    props = ["overflowFlags"] if _name in OVERFLOW_OPS else []
    props += ["isExact"] if _name in EXACT_OPS else []
    props += ["isDisjoint"] if _name == "or" else []
    dialect.op(f"llvm.{_name}", f"Integer {_name} (LLVM's `{_name}` instruction).", traits=(PURE,),
               properties=props, verify=_verify_binary, print=safe_printer(_print_binary), names=_BINARY_NAMES)
for _name in FLOAT_BINARY:
    dialect.op(f"llvm.{_name}", f"Floating-point {_name[1:]} (LLVM's `{_name}`).", traits=(PURE,),
               properties=("fastmathFlags",), verify=_verify_binary, print=safe_printer(_print_binary),
               names=_BINARY_NAMES)
dialect.op("llvm.fneg", "Floating-point negation.", traits=(PURE,), properties=("fastmathFlags",),
           verify=_verify_binary, print=safe_printer(_print_binary), names=OpSignature.of(("operand",), ("res",), ()))


@dialect.rule("llvm_flags")
def _llvm_flags(ctx, children):
    kind, *words = children
    return (kind.value, [w.value for w in words if w is not None])


@dialect.rule("llvm_binary")
def _llvm_binary(ctx, children):
    name, word, lhs, rhs, flags, attrs, type = children
    kind = name.value[5:]
    attributes = {}
    if word is not None:
        wanted = "exact" if kind in EXACT_OPS else "disjoint" if kind == "or" else None
        if word.value != wanted:
            raise ctx.fail(f"unexpected '{word.value}' in '{name.value}'", word)
        attributes["isExact" if wanted == "exact" else "isDisjoint"] = unit
    if flags is not None:
        if flags[0] == "overflow" and kind in OVERFLOW_OPS:
            attributes["overflowFlags"] = _overflow_attr(ctx, flags[1])
        elif flags[0] == "fastmath" and kind in FLOAT_BINARY:
            attributes["fastmathFlags"] = _fastmath_attr(ctx, flags[1])
        else:
            raise ctx.fail(f"'{name.value}' takes no '{flags[0]}' flags")
    merge_attrs(attributes, attrs)
    _normalize_fastmath(attributes)
    operands = [ctx.resolve(lhs, type), ctx.resolve(rhs, type)]
    return create(ctx, name.value, operands, [type], attributes)


@dialect.rule("llvm_unary")
def _llvm_unary(ctx, children):
    operand, flags, attrs, type = children
    attributes = _fastmath_attributes(ctx, flags, attrs)
    return create(ctx, "llvm.fneg", [ctx.resolve(operand, type)], [type], attributes)


# ---- freeze ----------------------------------------------------------------------
def _print_unary_plain(p, op) -> None:
    p.write(op.name, " ", p.value(op.operand("val")), p.op_attr_dict(op), " : ", p.type(op.results[0].type))


def _verify_same(op) -> None:
    if op.operand("val").type != op.results[0].type:
        raise VerifyError("failed to verify that all of {val, res} have same type")


dialect.op("llvm.freeze", "Stops poison/undef propagation: a fixed but arbitrary value.",
           traits=(PURE,), verify=_verify_same, print=safe_printer(_print_unary_plain),
           names=OpSignature.of(("val",), ("res",), ()))


@dialect.rule("llvm_freeze")
def _llvm_freeze(ctx, children):
    operand, attrs, type = children
    return create(ctx, "llvm.freeze", [ctx.resolve(operand, type)], [type], dict(attrs or {}))


# ---- comparisons -------------------------------------------------------------------
def _predicates(name):
    return ICMP_PREDICATES if name == "llvm.icmp" else FCMP_PREDICATES


def _i1_like(t):
    return _with_element(t, T.i1)


def _print_cmp(p, op) -> None:
    pred = _predicates(op.name)[op.attr("predicate").value]
    p.write(op.name, " ", escape_string(pred), " ", p.values(op.operands), _fastmath_text(op))
    p.write(p.attr_dict(op.attributes, elide=("predicate", "fastmathFlags")), " : ",
            p.type(op.operand("lhs").type))


def _verify_cmp(op) -> None:
    pred = op.attr("predicate")
    names = _predicates(op.name)
    if not isinstance(pred, IntegerAttr) or not 0 <= pred.value < len(names):
        raise VerifyError(f"requires a 'predicate' attribute in 0..{len(names) - 1}")
    a, b = op.operand_types
    if a != b:
        raise VerifyError("failed to verify that all of {lhs, rhs} have same type")
    if op.name == "llvm.icmp":
        if not (_is_int(a) or LT.is_pointer_like(a)):
            raise _type_error(0, "signless integer or LLVM pointer type (or a vector of them)", a)
    elif not _is_float(a):
        raise _type_error(0, FLOAT_LIKE, a)
    if op.results[0].type != _i1_like(a):
        raise VerifyError(f"result #0 must be {_i1_like(a)}, but got '{op.results[0].type}'")


dialect.op("llvm.icmp", "Integer or pointer comparison with a predicate (\"eq\", \"slt\", ...).",
           traits=(PURE,), properties=("predicate",), verify=_verify_cmp, print=safe_printer(_print_cmp),
           names=OpSignature.of(("lhs", "rhs"), ("res",), ("predicate",)))
dialect.op("llvm.fcmp", "Floating-point comparison with an ordered/unordered predicate.",
           traits=(PURE,), properties=("predicate", "fastmathFlags"), verify=_verify_cmp,
           print=safe_printer(_print_cmp), names=OpSignature.of(("lhs", "rhs"), ("res",), ("predicate",)))


@dialect.rule("llvm_cmp")
def _llvm_cmp(ctx, children):
    name, pred, lhs, rhs, flags, attrs, type = children
    text = string_value(ctx, pred)
    names = _predicates(name.value)
    if text not in names:
        raise ctx.fail(f"'{text}' is an incorrect value of the 'predicate' attribute", pred)
    attributes = {"predicate": IntegerAttr(names.index(text), I64)}
    words = _flag_words(ctx, flags, "fastmath")
    if words is not None:
        if name.value == "llvm.icmp":
            raise ctx.fail("'llvm.icmp' takes no fastmath flags")
        attributes["fastmathFlags"] = _fastmath_attr(ctx, words)
    merge_attrs(attributes, attrs)
    _normalize_fastmath(attributes)
    operands = [ctx.resolve(lhs, type), ctx.resolve(rhs, type)]
    return create(ctx, name.value, operands, [_i1_like(type)], attributes)


# ---- casts -------------------------------------------------------------------------
CASTS = {  # name: (operand kind, result kind, size relation)
    "bitcast": ("any", "any", None), "addrspacecast": ("ptr", "ptr", None),
    "inttoptr": ("int", "ptr", None), "ptrtoint": ("ptr", "int", None), "ptrtoaddr": ("ptr", "int", None),
    "sext": ("int", "int", ">"), "zext": ("int", "int", ">"), "trunc": ("int", "int", "<"),
    "sitofp": ("int", "float", None), "uitofp": ("int", "float", None), "fptosi": ("float", "int", None),
    "fptoui": ("float", "int", None), "fpext": ("float", "float", ">"), "fptrunc": ("float", "float", "<"),
}


def _kind_ok(t, kind) -> bool:
    e = _element(t)
    if kind == "int":
        return isinstance(e, T.IntegerType)
    if kind == "float":
        return isinstance(e, T.FloatType)
    if kind == "ptr":
        return LT.is_pointer(e)
    return True


def _bits(t):
    e = _element(t)
    if isinstance(e, T.IntegerType):
        return e.width
    if isinstance(e, T.FloatType):
        return T.FLOAT_WIDTHS.get(e.name)
    return None


def _print_cast(p, op) -> None:
    word = " nneg" if "nonNeg" in op.attributes else ""
    p.write(op.name, word, " ", p.value(op.operand("arg")), _overflow_text(op), _fastmath_text(op))
    p.write(p.attr_dict(op.attributes, elide=("nonNeg", "overflowFlags", "fastmathFlags")))
    p.write(" : ", p.type(op.operand("arg").type), " to ", p.type(op.results[0].type))


def _verify_cast(op) -> None:
    kind = op.name[5:]
    src_kind, dst_kind, size = CASTS[kind]
    src, dst = op.operand("arg").type, op.results[0].type
    if not _kind_ok(src, src_kind):
        raise _type_error(0, {"int": INT_LIKE, "float": FLOAT_LIKE,
                              "ptr": "LLVM pointer type or LLVM dialect-compatible vector of LLVM pointer type"
                              }[src_kind], src)
    if not _kind_ok(dst, dst_kind):
        raise VerifyError(f"result #0 has an invalid type '{dst}' for '{op.name}'")
    if isinstance(src, T.VectorType) != isinstance(dst, T.VectorType) and kind != "bitcast":
        what = ("input type is a vector but output type is " if isinstance(src, T.VectorType)
                else "input type is a scalar but output type is a vector")
        raise VerifyError(what + ("an integer" if isinstance(dst, T.IntegerType) else "a scalar")
                          if isinstance(src, T.VectorType) else what)
    if isinstance(src, T.VectorType) and isinstance(dst, T.VectorType) and src.shape != dst.shape \
            and kind != "bitcast":
        raise VerifyError("input and output vectors are of incompatible shape")
    if size is not None:
        a, b = _bits(src), _bits(dst)
        if a is not None and b is not None and not (a < b if size == ">" else a > b):
            what = "integer" if src_kind == "int" else "floating point"
            raise VerifyError(f"{what} width of the output type is "
                              + ("smaller" if size == ">" else "larger")
                              + f" or equal to the {what} width of the input type")
    if kind == "bitcast":
        if LT.is_pointer_like(src) != LT.is_pointer_like(dst):
            raise VerifyError("can only cast pointers from and to pointers")
        sa, da = _element(src), _element(dst)
        if LT.is_pointer(sa) and LT.is_pointer(da) and sa != da:
            raise VerifyError("cannot cast pointers of different address spaces, use 'llvm.addrspacecast' "
                              "instead")
        a, b = _total_bits(src), _total_bits(dst)
        if a is not None and b is not None and a != b:
            raise VerifyError("invalid cast: operand and result have different bit widths")


def _total_bits(t):
    b = _bits(t)
    if b is None:
        return None
    if isinstance(t, T.VectorType):
        if t.scalable:
            return None
        for d in t.shape:
            b *= d
    return b


for _name in CASTS:
    props = ["overflowFlags"] if _name in OVERFLOW_OPS else []
    props += ["nonNeg"] if _name in ("zext", "uitofp") else []
    dialect.op(f"llvm.{_name}", f"Cast ({_name}).", traits=(PURE,), properties=props,
               verify=_verify_cast, print=safe_printer(_print_cast), names=_CAST_NAMES)


@dialect.rule("llvm_cast")
def _llvm_cast(ctx, children):
    name, word, operand, flags, attrs, src, dst = children
    kind = name.value[5:]
    attributes = {}
    if word is not None:
        if word.value != "nneg" or kind not in ("zext", "uitofp"):
            raise ctx.fail(f"unexpected '{word.value}' in '{name.value}'", word)
        attributes["nonNeg"] = unit
    words = _flag_words(ctx, flags, "overflow")
    if words is not None:
        if kind not in OVERFLOW_OPS:
            raise ctx.fail(f"'{name.value}' takes no overflow flags")
        attributes["overflowFlags"] = _overflow_attr(ctx, words)
    merge_attrs(attributes, attrs)
    return create(ctx, name.value, [ctx.resolve(operand, src)], [dst], attributes)


# ---- select ---------------------------------------------------------------------
def _print_select(p, op) -> None:
    p.write("llvm.select ", p.values(op.operands), _fastmath_text(op))
    p.write(p.attr_dict(op.attributes, elide=("fastmathFlags",)), " : ", p.type(op.operand("condition").type), ", ",
            p.type(op.results[0].type))


def _verify_select(op) -> None:
    cond, a, b = op.operand_types
    if a != b or op.results[0].type != a:
        raise VerifyError("failed to verify that all of {trueValue, falseValue, res} have same type")
    if cond != T.i1 and cond != _i1_like(a):
        raise _type_error(0, "1-bit signless integer or LLVM dialect-compatible vector of 1-bit signless "
                          "integer", cond)


dialect.op("llvm.select", "Chooses between two values by an i1 condition.", traits=(PURE,),
           properties=("fastmathFlags",), verify=_verify_select, print=safe_printer(_print_select),
           names=OpSignature.of(("condition", "trueValue", "falseValue"), ("res",), ()))


@dialect.rule("llvm_select")
def _llvm_select(ctx, children):
    cond, a, b, flags, attrs, cond_type, type = children
    attributes = _fastmath_attributes(ctx, flags, attrs)
    operands = [ctx.resolve(cond, cond_type), ctx.resolve(a, type), ctx.resolve(b, type)]
    return create(ctx, "llvm.select", operands, [type], attributes)


# ---- memory -------------------------------------------------------------------------
@dialect.rule("llvm_word")
def _llvm_word(ctx, children):
    word, arg = children
    if arg is not None:
        return (word, string_value(ctx, arg))
    return (word, None)


@dialect.rule("llvm_align")
def _llvm_align(ctx, children):
    name, value, tok = children[0]
    if name != "alignment":
        raise ctx.fail(f"expected 'alignment', got '{name}'", tok)
    if isinstance(value, IntegerAttr):
        value = IntegerAttr(value.value, I64)
    return {"alignment": value}


@dialect.rule("llvm_words")
def _llvm_words(ctx, children):
    return list(children)


def _memory_words(ctx, words, allowed: set, attributes: dict, orderings: int = 1) -> None:
    """`atomic syncscope("x") monotonic invariant ...` into attributes."""
    i = 0
    seen_orderings = []
    atomic = False
    while i < len(words):
        word, arg = words[i]
        w = word.value
        if w == "atomic" and "atomic" in allowed:
            atomic = True
        elif w == "syncscope" and arg is not None:
            attributes["syncscope"] = StringAttr(arg)
        elif w in ORDERINGS and (atomic or "atomic" not in allowed):
            seen_orderings.append(w)
        elif w in allowed and arg is None:
            attributes["invariantGroup" if w == "invariant_group" else w] = unit
        else:
            raise ctx.fail(f"unexpected '{w}'", word)
        i += 1
    if orderings == 1 and seen_orderings:
        if len(seen_orderings) != 1:
            raise ctx.fail("expected one atomic ordering")
        attributes["ordering"] = IntegerAttr(ORDERINGS[seen_orderings[0]], I64)
    elif orderings == 2:
        if len(seen_orderings) != 2:
            raise ctx.fail("expected success and failure orderings")
        attributes["success_ordering"] = IntegerAttr(ORDERINGS[seen_orderings[0]], I64)
        attributes["failure_ordering"] = IntegerAttr(ORDERINGS[seen_orderings[1]], I64)
    elif atomic:
        raise ctx.fail("expected an atomic ordering after 'atomic'")


def _move_inherent(attributes: dict, attrs, names) -> dict:
    """Older spellings put inherent attributes (`alignment`) in the attribute dictionary."""
    for k, v in (attrs or {}).items():
        if k == "alignment" and isinstance(v, IntegerAttr):
            v = IntegerAttr(v.value, I64)
        attributes[k] = v
    return attributes


def _atomic_text(op, key="ordering") -> str:
    ordering = _int(op.attributes.get(key))
    if not ordering:
        return ""
    return " atomic" + _scope_text(op) + " " + ORDERING_NAMES[ordering]


def _scope_text(op) -> str:
    scope = op.attr("syncscope")
    return f" syncscope({escape_string(scope.value)})" if isinstance(scope, StringAttr) else ""


def _align_text(op) -> str:
    align = op.attr("alignment")
    return f" <alignment = {align.value}>" if isinstance(align, IntegerAttr) else ""


_MEM_ELIDE = ("volatile_", "ordering", "syncscope", "alignment", "invariant", "invariantGroup")


def _print_load(p, op) -> None:
    p.write("llvm.load ", "volatile " if "volatile_" in op.attributes else "", p.value(op.operand("addr")))
    p.write(_atomic_text(op))
    if "invariant" in op.attributes:
        p.write(" invariant")
    if "invariantGroup" in op.attributes:
        p.write(" invariant_group")
    p.write(_align_text(op), p.attr_dict(op.attributes, elide=_MEM_ELIDE))
    p.write(" : ", p.type(op.operand("addr").type), " -> ", p.type(op.results[0].type))


def _print_store(p, op) -> None:
    p.write("llvm.store ", "volatile " if "volatile_" in op.attributes else "", p.values(op.operands))
    p.write(_atomic_text(op))
    if "invariantGroup" in op.attributes:
        p.write(" invariant_group")
    p.write(_align_text(op), p.attr_dict(op.attributes, elide=_MEM_ELIDE))
    p.write(" : ", p.type(op.operand("value").type), ", ", p.type(op.operand("addr").type))


def _check_pointer(op, index: int) -> None:
    t = op.operands[index].type
    if not LT.is_pointer(t):
        raise _type_error(index, "LLVM pointer type", t)


def _check_loadable(t, what: str) -> None:
    if LT.is_void(t) or isinstance(t, (LT.LLVMFunctionType,)) or (
            isinstance(t, T.DialectType) and t.text in ("llvm.label", "llvm.metadata", "llvm.token")):
        raise VerifyError(f"{what} must be LLVM type with size, but got '{t}'")


def _check_atomic(op, t, key="ordering", forbidden=()) -> None:
    ordering = _int(op.attributes.get(key))
    if not ordering:
        return
    if ORDERING_NAMES.get(ordering) in forbidden:
        raise VerifyError(f"unsupported ordering '{ORDERING_NAMES[ordering]}'")
    if "alignment" not in op.attributes:
        raise VerifyError("expected alignment for atomic access")
    e = t
    ok = LT.is_pointer(e) or isinstance(e, T.FloatType)
    if isinstance(e, T.IntegerType):
        ok = e.width >= 8 and (e.width & (e.width - 1)) == 0
    if not ok:
        raise VerifyError(f"unsupported type '{t}' for atomic access")


def _verify_load(op) -> None:
    _check_pointer(op, 0)
    _check_loadable(op.results[0].type, "result #0")
    _check_atomic(op, op.results[0].type, forbidden=("release", "acq_rel"))


def _verify_store(op) -> None:
    _check_pointer(op, 1)
    _check_loadable(op.operand("value").type, "operand #0")
    _check_atomic(op, op.operand("value").type, forbidden=("acquire", "acq_rel"))


_MEM_PROPS = ("alignment", "volatile_", "nontemporal", "invariant", "invariantGroup", "ordering",
              "syncscope", "access_groups", "alias_scopes", "noalias_scopes", "tbaa", "dereferenceable")
dialect.op("llvm.load", "Loads a value of the result type from a pointer.", properties=_MEM_PROPS,
           verify=_verify_load, print=safe_printer(_print_load), names=OpSignature.of(("addr",), ("res",), ()))
dialect.op("llvm.store", "Stores a value through a pointer.", properties=_MEM_PROPS,
           verify=_verify_store, print=safe_printer(_print_store), names=OpSignature.of(("value", "addr"), (), ()))


def _volatile(ctx, word, attributes) -> None:
    if word is not None:
        if word.value != "volatile":
            raise ctx.fail(f"expected 'volatile', got '{word.value}'", word)
        attributes["volatile_"] = unit


@dialect.rule("llvm_load")
def _llvm_load(ctx, children):
    vol, ptr = children[0], children[1]
    words, align, attrs, ptype, rtype = children[2:-4], children[-4], children[-3], children[-2], children[-1]
    attributes = {}
    _volatile(ctx, vol, attributes)
    _memory_words(ctx, words, {"atomic", "invariant", "invariant_group"}, attributes)
    attributes.update(align or {})
    _move_inherent(attributes, attrs, _MEM_PROPS)
    return create(ctx, "llvm.load", [ctx.resolve(ptr, ptype)], [rtype], attributes)


@dialect.rule("llvm_store")
def _llvm_store(ctx, children):
    vol, value, ptr = children[0], children[1], children[2]
    words, align, attrs, vtype, ptype = children[3:-4], children[-4], children[-3], children[-2], children[-1]
    attributes = {}
    _volatile(ctx, vol, attributes)
    _memory_words(ctx, words, {"atomic", "invariant_group"}, attributes)
    attributes.update(align or {})
    _move_inherent(attributes, attrs, _MEM_PROPS)
    return create(ctx, "llvm.store", [ctx.resolve(value, vtype), ctx.resolve(ptr, ptype)], [], attributes)


# ---- getelementptr --------------------------------------------------------------------
GEP_FLAGS = {"nusw": 2, "nuw": 4, "inbounds": 3}  # inbounds = inbounds_flag (1) | nusw


def gep_indices(op) -> list:
    """The op's indices in order: ints for constants, Values for SSA indices."""
    raw = op.attr("rawConstantIndices")
    values = iter(op.operands_named("dynamicIndices"))
    return [next(values) if i == DYNAMIC_INDEX else i for i in (raw.values if raw is not None else ())]


def _gep_flags_text(value: int) -> str:
    words = []
    if value & 1:
        words.append("inbounds")
    elif value & 2:
        words.append("nusw")
    if value & 4:
        words.append("nuw")
    return "|".join(words)


def _print_gep(p, op) -> None:
    flags = _gep_flags_text(_int(op.attr("noWrapFlags")))
    p.write("llvm.getelementptr ", flags + " " if flags else "", p.value(op.operand("base")), "[")
    p.write(", ".join(p.value(i) if not isinstance(i, int) else str(i) for i in gep_indices(op)), "]")
    p.write(p.attr_dict(op.attributes, elide=("rawConstantIndices", "elem_type", "noWrapFlags", "inbounds")))
    p.write(" : ", p.function_type(op.operand_types, op.result_types), ", ",
            p.type(op.attr("elem_type").type))


def _verify_gep(op) -> None:
    base = op.operand("base").type
    if not LT.is_pointer_like(base):
        raise _type_error(0, "LLVM pointer type or LLVM dialect-compatible vector of LLVM pointer type", base)
    elem = op.attr("elem_type")
    if not isinstance(elem, TypeAttr):
        raise VerifyError("requires an 'elem_type' type attribute")
    raw = op.attr("rawConstantIndices")
    if not isinstance(raw, DenseArrayAttr):
        raise VerifyError("requires a 'rawConstantIndices' attribute")
    if sum(1 for i in raw.values if i == DYNAMIC_INDEX) != len(op.operands_named("dynamicIndices")):
        raise VerifyError("expected as many dynamic indices as specified in 'rawConstantIndices'")
    for v in op.operands_named("dynamicIndices"):
        if not _is_int(v.type):
            raise VerifyError(f"index must be an integer or a vector of integers, but got '{v.type}'")
    t = elem.type
    for n, index in enumerate(gep_indices(op)[1:], start=1):
        if isinstance(t, LT.LLVMStructType):
            if not isinstance(index, int):
                raise VerifyError(f"expected index {n} indexing a struct to be constant")
            if t.body is None or not 0 <= index < len(t.body):
                raise VerifyError(f"index {n} indexing a struct is out of bounds")
            t = t.body[index]
        elif isinstance(t, LT.LLVMArrayType):
            t = t.element
        elif isinstance(t, T.VectorType):
            t = t.element
        elif isinstance(t, LT.LLVMType) or isinstance(t, (T.IntegerType, T.FloatType)) or LT.is_pointer(t):
            raise VerifyError(f"type '{t}' cannot be indexed (index #{n})")
        else:
            return
    res = op.results[0].type
    if not LT.is_pointer_like(res):
        raise VerifyError(f"result #0 must be LLVM pointer type or LLVM dialect-compatible vector of LLVM "
                          f"pointer type, but got '{res}'")


dialect.op("llvm.getelementptr", "Address arithmetic: a pointer offset by typed indices.",
           traits=(PURE,), properties=("rawConstantIndices", "elem_type", "noWrapFlags", "inbounds"),
           verify=_verify_gep, print=safe_printer(_print_gep),
           names=OpSignature.of(("base", "dynamicIndices*"), ("res",), ("rawConstantIndices", "elem_type")))


@dialect.rule("llvm_gep_flags")
def _llvm_gep_flags(ctx, children):
    value = 0
    for tok in children:
        if tok.value not in GEP_FLAGS:
            raise ctx.fail(f"unknown getelementptr flag '{tok.value}'", tok)
        value |= GEP_FLAGS[tok.value]
    return value


@dialect.rule("llvm_gep_index")
def _llvm_gep_index(ctx, children):
    return children[0]


@dialect.rule("llvm_gep")
def _llvm_gep(ctx, children):
    flags, base = children[0], children[1]
    indices = [c for c in children[2:-3] if c is not None]
    attrs, ftype, elem = children[-3], children[-2], children[-1]
    inputs = list(ftype.inputs)
    if not inputs:
        raise ctx.fail("expected the base pointer type in the function type")
    dynamic = [i for i in indices if not isinstance(i, tuple)]
    if len(dynamic) != len(inputs) - 1:
        raise ctx.fail(f"{len(dynamic)} dynamic indices present, but the type lists {len(inputs) - 1}")
    raw = []
    for i in indices:
        if isinstance(i, tuple):
            text, tok = i
            if "." in text:
                raise ctx.fail("expected an integer index", tok)
            raw.append(int(text, 0))
        else:
            raw.append(DYNAMIC_INDEX)
    operands = [ctx.resolve(base, inputs[0])] + [ctx.resolve(tok, t) for tok, t in zip(dynamic, inputs[1:])]
    attributes = {"elem_type": TypeAttr(elem), "rawConstantIndices": dense_i32_array(raw)}
    if flags:
        attributes["noWrapFlags"] = IntegerAttr(flags, I32)
    merge_attrs(attributes, attrs)
    if "inbounds" in attributes and isinstance(attributes["inbounds"], UnitAttr):  # older spelling
        del attributes["inbounds"]
        attributes["noWrapFlags"] = IntegerAttr(_int(attributes.get("noWrapFlags")) | 3, I32)
    if len(ftype.results) != 1:
        raise ctx.fail("expected one result type")
    return create(ctx, "llvm.getelementptr", operands, ftype.results, attributes)


# ---- alloca ---------------------------------------------------------------------------
def _print_alloca(p, op) -> None:
    p.write("llvm.alloca ", "inalloca " if "inalloca" in op.attributes else "", p.value(op.operand("arraySize")))
    p.write(" x ", p.type(op.attr("elem_type").type))
    p.write(p.attr_dict(op.attributes, elide=("elem_type", "inalloca")))
    p.write(" : ", p.function_type(op.operand_types, op.result_types))


def _verify_alloca(op) -> None:
    size = op.operand("arraySize").type
    if not _is_int(size) or isinstance(size, T.VectorType):
        raise _type_error(0, "signless integer", size)
    if not LT.is_pointer(op.results[0].type):
        raise VerifyError(f"result #0 must be LLVM pointer type, but got '{op.results[0].type}'")
    if not isinstance(op.attr("elem_type"), TypeAttr):
        raise VerifyError("requires an 'elem_type' type attribute")


dialect.op("llvm.alloca", "Stack allocation of `size` elements of a type.",
           properties=("alignment", "elem_type", "inalloca"), verify=_verify_alloca,
           print=safe_printer(_print_alloca), names=OpSignature.of(("arraySize",), ("res",), ("elem_type",)))


@dialect.rule("llvm_alloca")
def _llvm_alloca(ctx, children):
    word, size, elem, attrs, ftype = children
    attributes = {"elem_type": TypeAttr(elem)}
    if word is not None:
        if word.value != "inalloca":
            raise ctx.fail(f"expected 'inalloca', got '{word.value}'", word)
        attributes["inalloca"] = unit
    _move_inherent(attributes, attrs, ())
    if _int(attributes.get("alignment"), None) == 0:  # MLIR's parser drops a zero alignment
        del attributes["alignment"]
    if len(ftype.inputs) != 1 or len(ftype.results) != 1:
        raise ctx.fail("expected a type (size type) -> pointer type")
    return create(ctx, "llvm.alloca", [ctx.resolve(size, ftype.inputs[0])], ftype.results, attributes)


# ---- atomics and fences ----------------------------------------------------------------
def _print_atomicrmw(p, op) -> None:
    p.write("llvm.atomicrmw ", "volatile " if "volatile_" in op.attributes else "",
            ATOMIC_BIN_OPS[op.attr("bin_op").value], " ", p.values(op.operands))
    p.write(_scope_text(op))
    p.write(" ", ORDERING_NAMES[op.attr("ordering").value], _align_text(op))
    p.write(p.attr_dict(op.attributes, elide=("volatile_", "bin_op", "syncscope", "ordering", "alignment")))
    p.write(" : ", p.type(op.operand("ptr").type), ", ", p.type(op.operand("val").type))


def _verify_atomicrmw(op) -> None:
    _check_pointer(op, 0)
    if op.operand("val").type != op.results[0].type:
        raise VerifyError("failed to verify that result #0 and operand #1 have the same type")
    kind = ATOMIC_BIN_OPS[_int(op.attr("bin_op"))]
    t = op.operand("val").type
    if kind.startswith("f") and not _is_float(t):
        raise VerifyError("expected LLVM IR floating point type")
    if kind in ("max", "min", "umax", "umin", "add", "sub", "_and", "nand", "_or", "_xor") and not _is_int(t):
        raise VerifyError("expected LLVM IR integer type")
    if _int(op.attr("ordering")) in (0, 1):
        raise VerifyError("expected at least 'monotonic' ordering")


dialect.op("llvm.atomicrmw", "Atomic read-modify-write through a pointer.",
           properties=("bin_op", "ordering", "syncscope", "alignment", "volatile_"),
           verify=_verify_atomicrmw, print=safe_printer(_print_atomicrmw),
           names=OpSignature.of(("ptr", "val"), ("res",), ("bin_op", "ordering")))


@dialect.rule("llvm_atomicrmw")
def _llvm_atomicrmw(ctx, children):
    w1, w2, ptr, val = children[:4]
    words, align, attrs = children[4:-4], children[-4], children[-3]
    ptype, vtype = children[-2], children[-1]
    attributes = dict(align or {})
    if w2 is not None:
        _volatile(ctx, w1, attributes)
        w1 = w2
    if w1.value not in ATOMIC_BIN_OPS:
        raise ctx.fail(f"unknown atomic operation '{w1.value}'", w1)
    attributes["bin_op"] = IntegerAttr(ATOMIC_BIN_OPS.index(w1.value), I64)
    _memory_words(ctx, words, set(), attributes)
    if "ordering" not in attributes:
        raise ctx.fail("expected an atomic ordering")
    _move_inherent(attributes, attrs, ())
    operands = [ctx.resolve(ptr, ptype), ctx.resolve(val, vtype)]
    return create(ctx, "llvm.atomicrmw", operands, [vtype], attributes)


def _print_cmpxchg(p, op) -> None:
    p.write("llvm.cmpxchg ", "weak " if "weak" in op.attributes else "",
            "volatile " if "volatile_" in op.attributes else "", p.values(op.operands))
    p.write(_scope_text(op))
    p.write(" ", ORDERING_NAMES[op.attr("success_ordering").value], " ",
            ORDERING_NAMES[op.attr("failure_ordering").value], _align_text(op))
    p.write(p.attr_dict(op.attributes, elide=("weak", "volatile_", "syncscope", "success_ordering",
                                              "failure_ordering", "alignment")))
    p.write(" : ", p.type(op.operand("ptr").type), ", ", p.type(op.operand("cmp").type))


def _verify_cmpxchg(op) -> None:
    _check_pointer(op, 0)
    t = op.operand("cmp").type
    if op.operand("val").type != t:
        raise VerifyError("failed to verify that operand #2 and operand #1 have the same type")
    if op.results[0].type != LT.LLVMStructType((t, T.i1)):
        raise VerifyError("result must be !llvm.struct<(T, i1)> of the compared type")
    if _int(op.attr("success_ordering")) < 2 or _int(op.attr("failure_ordering")) < 2:
        raise VerifyError("ordering must be at least 'monotonic'")
    if ORDERING_NAMES.get(_int(op.attr("failure_ordering"))) in ("release", "acq_rel"):
        raise VerifyError("failure ordering cannot be 'release' or 'acq_rel'")


dialect.op("llvm.cmpxchg", "Atomic compare-and-exchange; yields the old value and a success bit.",
           properties=("success_ordering", "failure_ordering", "syncscope", "alignment", "weak",
                       "volatile_"), verify=_verify_cmpxchg, print=safe_printer(_print_cmpxchg),
           names=OpSignature.of(("ptr", "cmp", "val"), ("res",), ("success_ordering", "failure_ordering")))


@dialect.rule("llvm_cmpxchg")
def _llvm_cmpxchg(ctx, children):
    lead, ptr, cmp, new = children[:4]
    words, align, attrs = children[4:-4], children[-4], children[-3]
    ptype, vtype = children[-2], children[-1]
    attributes = dict(align or {})
    for tok in lead or ():
        if tok.value == "weak":
            attributes["weak"] = unit
        elif tok.value == "volatile":
            attributes["volatile_"] = unit
        else:
            raise ctx.fail(f"unexpected '{tok.value}'", tok)
    _memory_words(ctx, words, set(), attributes, orderings=2)
    _move_inherent(attributes, attrs, ())
    operands = [ctx.resolve(ptr, ptype), ctx.resolve(cmp, vtype), ctx.resolve(new, vtype)]
    return create(ctx, "llvm.cmpxchg", operands, [LT.LLVMStructType((vtype, T.i1))], attributes)


def _print_fence(p, op) -> None:
    p.write("llvm.fence")
    p.write(_scope_text(op))
    p.write(" ", ORDERING_NAMES[op.attr("ordering").value])
    p.write(p.attr_dict(op.attributes, elide=("syncscope", "ordering")))


def _verify_fence(op) -> None:
    if ORDERING_NAMES.get(_int(op.attr("ordering"))) in (None, "not_atomic", "unordered",
                                                                     "monotonic"):
        raise VerifyError("can be given only acquire, release, acq_rel, and seq_cst orderings")


dialect.op("llvm.fence", "A memory fence.", properties=("ordering", "syncscope"), verify=_verify_fence,
           print=safe_printer(_print_fence), names=OpSignature.of((), (), ("ordering",)))


@dialect.rule("llvm_fence")
def _llvm_fence(ctx, children):
    words, attrs = children[:-1], children[-1]
    attributes = {}
    _memory_words(ctx, words, set(), attributes)
    if "ordering" not in attributes:
        raise ctx.fail("expected an ordering")
    return create(ctx, "llvm.fence", (), (), merge_attrs(attributes, attrs))


# ---- control flow ---------------------------------------------------------------------
@dialect.rule("llvm_succ")
def _llvm_succ(ctx, children):
    return succ(ctx, children)


def _print_br(p, op) -> None:
    p.write(op.name, " ")
    write_successor(p, op.successors[0], op.operands)
    p.write(p.op_attr_dict(op))


dialect.op("llvm.br", "Unconditional branch to a block, passing its arguments.", traits=(TERMINATOR, PURE),
           properties=("loop_annotation",), verify=verify_branch, print=safe_printer(_print_br),
           names=OpSignature.of(("destOperands*",), (), ()))


@dialect.rule("llvm_br")
def _llvm_br(ctx, children):
    (block, values), attrs = children
    return create(ctx, "llvm.br", values, (), dict(attrs or {}), successors=[block])


def _verify_cond_br(op) -> None:
    condition = operand_segments(op, 3)[0]
    cond = condition[0].type if len(condition) == 1 else None
    if cond != T.i1:
        raise _type_error(0, "1-bit signless integer", cond)
    verify_branch(op)


dialect.op("llvm.cond_br", "Branches to one of two blocks on an i1 condition.", traits=(TERMINATOR, PURE),
           properties=("branch_weights", "loop_annotation", "operandSegmentSizes"),
           verify=_verify_cond_br, print=safe_printer(print_cond_br),
           names=OpSignature.of(("condition", "trueDestOperands*", "falseDestOperands*"), (), ()))


@dialect.rule("llvm_weights")
def _llvm_weights(ctx, children):
    return dense_i32_array(int(t.value, 0) for t in children if t is not None)


@dialect.rule("llvm_cond_br")
def _llvm_cond_br(ctx, children):
    return build_cond_br(ctx, "llvm.cond_br", children)


def _print_switch(p, op) -> None:
    groups = successor_groups(op)
    value = op.operand("value")
    p.write("llvm.switch ", p.value(value), " : ", p.type(value.type), ", ")
    write_successor(p, op.successors[0], groups[0])
    p.write(" [")
    values = case_values(op.attr("case_values"))
    indent = "  " * (p.level + 1)
    cases = []
    for v, block, ops in zip(values, op.successors[1:], groups[1:]):
        mark = len(p.out)
        write_successor(p, block, ops)
        text = "".join(p.out[mark:])
        del p.out[mark:]
        cases.append(f"{indent}{v}: {text}")
    if cases:
        p.write("\n", ",\n".join(cases))
    p.write("\n", "  " * p.level, "]")
    p.write(p.attr_dict(op.attributes, elide=("operandSegmentSizes", "case_values", "case_operand_segments",
                                              "branch_weights")))


def _verify_switch(op) -> None:
    value = operand_segments(op, 3)[0]
    if len(value) != 1 or not _is_int(value[0].type) or isinstance(value[0].type, T.VectorType):
        raise VerifyError("operand #0 must be signless integer")
    values = case_values(op.attr("case_values"))
    if len(values) != len(op.successors) - 1:
        raise VerifyError("expects number of case values to match number of case destinations")
    verify_branch(op)


dialect.op("llvm.switch", "Multi-way branch on an integer value.", traits=(TERMINATOR, PURE),
           properties=("case_values", "case_operand_segments", "branch_weights", "operandSegmentSizes"),
           verify=_verify_switch, print=safe_printer(_print_switch),
           names=OpSignature.of(("value", "defaultOperands*", "caseOperands*"), (), ()))


@dialect.rule("llvm_case", "cf_case")
def _llvm_case(ctx, children):
    (text, tok), target = children
    if "." in text:
        raise ctx.fail("expected an integer case value", tok)
    return (int(text, 0), target)


@dialect.rule("llvm_switch")
def _llvm_switch(ctx, children):
    flag, type, default = children[0], children[1], children[2]
    cases = [c for c in children[3:-1] if c is not None]
    return build_switch(ctx, "llvm.switch", flag, type, default, cases, children[-1],
                        lambda n: T.VectorType((n,), type))


# ---- return, unreachable, resume --------------------------------------------------------
def _print_return(p, op) -> None:
    p.write("llvm.return", p.op_attr_dict(op))
    if op.operands:
        value = op.operand("arg")
        p.write(" ", p.value(value), " : ", p.type(value.type))


def _verify_return(op) -> None:
    if len(op.operands) > 1:
        raise VerifyError("expects at most 1 operand")
    parent = op.parent_op
    if parent is None:
        return
    if parent.name == "llvm.func":
        ftype = parent.attr("function_type")
        if not isinstance(ftype, TypeAttr) or not isinstance(ftype.type, LT.LLVMFunctionType):
            return
        expected = ftype.type.result
        if LT.is_void(expected):
            if op.operands:
                raise VerifyError("expected no operands")
            return
        if not op.operands:
            raise VerifyError("expected 1 operand")
        if op.operand("arg").type != expected:
            raise VerifyError("mismatching result types")
    elif parent.name == "llvm.mlir.global":
        gtype = parent.attr("global_type")
        if len(op.operands) != 1:
            raise VerifyError("expected 1 operand")
        if isinstance(gtype, TypeAttr) and op.operand("arg").type != gtype.type:
            raise VerifyError("mismatching result types")


dialect.op("llvm.return", "Returns from an LLVM function (or yields a global's initializer).",
           traits=(TERMINATOR, RETURN_LIKE, PURE), verify=_verify_return, print=safe_printer(_print_return),
           names=OpSignature.of(("arg?",), (), ()))


@dialect.rule("llvm_return")
def _llvm_return(ctx, children):
    attrs, value, type = children
    operands = [ctx.resolve(value, type)] if value is not None else []
    return create(ctx, "llvm.return", operands, (), dict(attrs or {}))


def _print_bare(p, op) -> None:
    p.write(op.name, p.op_attr_dict(op))


dialect.op("llvm.unreachable", "Marks a point control never reaches.", traits=(TERMINATOR,),
           print=safe_printer(_print_bare))


@dialect.rule("llvm_nullary_op")
def _llvm_nullary_op(ctx, children):
    name, attrs = children
    return create(ctx, name.value, (), (), dict(attrs or {}))


dialect.op("llvm.resume", "Resumes propagation of an in-flight exception.", traits=(TERMINATOR,),
           print=safe_printer(lambda p, op: p.write("llvm.resume ", p.value(op.operand("value")), p.op_attr_dict(op),
                                             " : ", p.type(op.operand("value").type))),
           names=OpSignature.of(("value",), (), ()))


@dialect.rule("llvm_resume")
def _llvm_resume(ctx, children):
    value, attrs, type = children
    return create(ctx, "llvm.resume", [ctx.resolve(value, type)], (), dict(attrs or {}))


# ---- calls -------------------------------------------------------------------------
def _add_bundles(attributes: dict, bundles) -> list:
    """The operand bundles' sizes and tags into `attributes`; their operands, in order."""
    attributes["op_bundle_sizes"] = dense_i32_array(len(v) for _, v in bundles or ())
    if bundles:
        attributes["op_bundle_tags"] = ArrayAttr(tuple(StringAttr(t) for t, _ in bundles))
    return [v for _, values in bundles or () for v in values]


def _dicts(op, key: str, n: int) -> list:
    attr = op.attributes.get(key)
    out = []
    for i in range(n):
        d = {}
        if isinstance(attr, ArrayAttr) and i < len(attr.items) and isinstance(attr.items[i], DictionaryAttr):
            d = attr.items[i].as_dict()
        out.append(d)
    return out


@dialect.rule("llvm_callee")
def _llvm_callee(ctx, children):
    return children[0]


@dialect.rule("llvm_vararg")
def _llvm_vararg(ctx, children):
    return children[0]


@dialect.rule("llvm_bundles")
def _llvm_bundles(ctx, children):
    return [c for c in children if c is not None]


@dialect.rule("llvm_bundle")
def _llvm_bundle(ctx, children):
    tag, uses, types = children
    return (string_value(ctx, tag), ctx.resolve_all(uses, types or []) if uses else [])


@dialect.rule("llvm_targ")
def _llvm_targ(ctx, children):
    return (children[0], children[1])


@dialect.rule("llvm_fn_single", "llvm_func_single")
def _llvm_fn_single(ctx, children):
    return [(children[0], None)]


@dialect.rule("llvm_fn_multi", "llvm_func_multi")
def _llvm_fn_multi(ctx, children):
    return [c for c in children if c is not None]


@dialect.rule("llvm_fn_type")
def _llvm_fn_type(ctx, children):
    return ([c for c in children[:-1] if c is not None], children[-1])


@dialect.rule("llvm_call_sig")
def _llvm_call_sig(ctx, children):
    return (children[0], children[1])


def _call_words(ctx, words, attributes) -> None:
    for tok in words or ():
        w = tok.value
        if w in TAIL_CALL_KINDS:
            if w != "none":
                attributes["TailCallKind"] = OpaqueAttr(f"#llvm.tailcallkind<{w}>")
        elif _is_cconv(w):
            if w != "ccc":
                attributes["CConv"] = OpaqueAttr(f"#llvm.cconv<{w}>")
        else:
            raise ctx.fail(f"unexpected '{w}' (expected a calling convention or tail call kind)", tok)


def _is_cconv(w: str) -> bool:
    return w.endswith("cc") or w.startswith("cc_") or w in ("ccc", "fastcc", "coldcc")


def _call_parts(ctx, words, callee, uses, vararg, bundles, attrs, sig, name):
    """Operands and attributes shared by llvm.call and llvm.invoke."""
    callee_type, (args, results) = sig
    attributes = {}
    _call_words(ctx, words, attributes)
    operands = []
    if callee.type == "SYMBOL":
        if callee_type is not None:
            raise ctx.fail("a direct call takes no callee type", callee)
        attributes["callee"] = symbol_ref(ctx, [callee])
    else:
        if callee_type is None:
            raise ctx.fail("an indirect call needs the callee's type: `: !llvm.ptr, (...) -> ...`", callee)
        operands.append(ctx.resolve(callee, callee_type))
    operands += ctx.resolve_all(uses, [t for t, _ in args])
    if vararg is not None:
        attributes["var_callee_type"] = TypeAttr(vararg)
    result_types = [t for t, _ in results if not LT.is_void(t)]
    add_arg_res_attrs(attributes, [a for _, a in args], [a for _, a in results])
    bundle_ops = _add_bundles(attributes, bundles)
    merge_attrs(attributes, attrs)
    _normalize_fastmath(attributes)
    return operands, bundle_ops, result_types, attributes


def _bundle_groups(op, bundle_ops):
    sizes = op.attr("op_bundle_sizes")
    tags = op.attr("op_bundle_tags")
    if not isinstance(sizes, DenseArrayAttr) or not isinstance(tags, ArrayAttr):
        return []
    out, i = [], 0
    for s, tag in zip(sizes.values, tags.items):
        out.append((tag.value, bundle_ops[i:i + s]))
        i += s
    return out


def _write_bundles(p, op, bundle_ops) -> None:
    groups = _bundle_groups(op, bundle_ops)
    if not groups:
        return
    parts = []
    for tag, values in groups:
        inner = f"{p.values(values)} : {p.types([v.type for v in values])}" if values else ""
        parts.append(f"{escape_string(tag)}({inner})")
    p.write(" [", ", ".join(parts), "]")


def _write_call_words(p, op) -> None:
    cconv = op.attr("CConv")
    if isinstance(cconv, OpaqueAttr) and cconv.body not in ("", "ccc"):
        p.write(cconv.body, " ")
    tail = op.attr("TailCallKind")
    if isinstance(tail, OpaqueAttr) and tail.body not in ("", "none"):
        p.write(tail.body, " ")


def _write_sig(p, op, args, callee_value) -> None:
    arg_attrs = _dicts(op, "arg_attrs", len(args))
    res_attrs = _dicts(op, "res_attrs", len(op.results))
    p.write(" : ")
    if callee_value is not None:
        p.write(p.type(callee_value.type), ", ")
    p.write("(", ", ".join(p.type(v.type) + p.attr_dict(a) for v, a in zip(args, arg_attrs)), ") -> ")
    if len(op.results) == 1 and not res_attrs[0]:
        p.write(p.type(op.results[0].type))
    else:
        p.write("(", ", ".join(p.type(r.type) + p.attr_dict(a) for r, a in zip(op.results, res_attrs)), ")")


_CALL_ELIDE = ("callee", "var_callee_type", "CConv", "TailCallKind", "op_bundle_sizes", "op_bundle_tags",
               "operandSegmentSizes", "arg_attrs", "res_attrs")


def _print_call(p, op) -> None:
    groups = operand_segments(op, 2)
    args, bundle_ops = list(groups[0]), list(groups[1])
    callee = op.attr("callee")
    callee_value = None if callee is not None else args.pop(0)
    p.write("llvm.call ")
    _write_call_words(p, op)
    p.write(str(callee) if callee is not None else p.value(callee_value), "(", p.values(args), ")")
    var = op.attr("var_callee_type")
    if isinstance(var, TypeAttr):
        p.write(" vararg(", p.type(var.type), ")")
    _write_bundles(p, op, bundle_ops)
    elide = _CALL_ELIDE
    fm = op.attr("fastmathFlags")
    if isinstance(fm, OpaqueAttr) and fm.body in ("", "none"):
        elide = elide + ("fastmathFlags",)
    p.write(p.attr_dict(op.attributes, elide=elide))
    _write_sig(p, op, args, callee_value)


def _lookup_symbol(op, ref):
    def is_table(o):
        d = builtin_registry().lookup(o.name)
        return d is not None and d.has(SYMBOL_TABLE)
    table = symbol_table_of(op.parent_op, is_table) if op.parent_op is not None else None
    while table is not None:
        target = resolve_symbol(table, ref)
        if target is not None:
            return target
        table = symbol_table_of(table.parent_op, is_table) if table.parent_op is not None else None
    return None


def _verify_call_like(op, args, callee_value) -> None:
    callee = op.attr("callee")
    if callee is None:
        if callee_value is None or not LT.is_pointer(callee_value.type):
            raise VerifyError("indirect call expects a pointer as callee: "
                              f"'{callee_value.type if callee_value is not None else None}'")
        var = op.attr("var_callee_type")
        if isinstance(var, TypeAttr) and isinstance(var.type, LT.LLVMFunctionType):
            _check_signature(op, var.type, args)
        return
    target = _lookup_symbol(op, callee)
    if target is None or target.name != "llvm.func":
        if op.parent_op is None:
            return
        raise VerifyError(f"'{str(callee)[1:]}' does not reference a valid LLVM function")
    ftype = target.attr("function_type")
    if not isinstance(ftype, TypeAttr) or not isinstance(ftype.type, LT.LLVMFunctionType):
        return
    if ftype.type.vararg and "var_callee_type" not in op.attributes:
        raise VerifyError("missing var_callee_type attribute for vararg call")
    _check_signature(op, ftype.type, args)


def _check_signature(op, ftype, args) -> None:
    params = ftype.params
    if len(args) < len(params) or (not ftype.vararg and len(args) != len(params)):
        raise VerifyError(f"incorrect number of operands ({len(args)}) for callee (expecting: "
                          f"{len(params)})")
    for i, (v, t) in enumerate(zip(args, params)):
        if v.type != t:
            raise VerifyError(f"operand type mismatch for operand {i}: '{v.type}' != '{t}'")
    if LT.is_void(ftype.result):
        if op.results:
            raise VerifyError("calling function with void result must not produce values")
    elif not op.results:
        raise VerifyError("expected function call to produce a value")
    elif op.results[0].type != ftype.result:
        raise VerifyError(f"result type mismatch: '{op.results[0].type}' != '{ftype.result}'")


def _verify_call(op) -> None:
    groups = operand_segments(op, 2)
    args = list(groups[0])
    callee_value = None if "callee" in op.attributes else (args.pop(0) if args else None)
    if len(op.results) > 1:
        raise VerifyError("expected at most one result")
    _verify_call_like(op, args, callee_value)


_CALL_PROPS = ("callee", "var_callee_type", "CConv", "TailCallKind", "fastmathFlags", "op_bundle_sizes",
               "op_bundle_tags", "operandSegmentSizes", "arg_attrs", "res_attrs", "branch_weights",
               "memory_effects", "convergent", "no_unwind", "will_return", "noreturn", "returns_twice",
               "hot", "cold", "noduplicate", "no_caller_saved_registers", "nocallback", "modular_format",
               "nobuiltins", "allocsize", "optsize", "minsize", "builtin", "nobuiltin", "save_reg_params",
               "zero_call_used_regs", "trap_func_name", "default_func_attrs", "no_inline", "always_inline",
               "inline_hint", "access_groups", "alias_scopes", "noalias_scopes", "tbaa")
dialect.op("llvm.call", "Calls a function directly (@f) or through a pointer.", properties=_CALL_PROPS,
           verify=_verify_call, print=safe_printer(_print_call),
           names=OpSignature.of(("callee_operands*", "op_bundle_operands*"), ("result?",), ("callee",)))


@dialect.rule("llvm_call")
def _llvm_call(ctx, children):
    words, callee, uses, vararg, bundles, attrs, sig = children
    operands, bundle_ops, results, attributes = _call_parts(ctx, words, callee, uses, vararg, bundles, attrs,
                                                            sig, "llvm.call")
    attributes["operandSegmentSizes"] = dense_i32_array((len(operands), len(bundle_ops)))
    if len(results) > 1:
        raise ctx.fail("expected at most one result type")
    return create(ctx, "llvm.call", operands + bundle_ops, results, attributes)


def _print_invoke(p, op) -> None:
    args, normal, unwind, bundle_ops = (list(g) for g in operand_segments(op, 4))
    callee = op.attr("callee")
    callee_value = None if callee is not None else args.pop(0)
    p.write("llvm.invoke ")
    _write_call_words(p, op)
    p.write(str(callee) if callee is not None else p.value(callee_value), "(", p.values(args), ") to ")
    write_successor(p, op.successors[0], normal)
    p.write(" unwind ")
    write_successor(p, op.successors[1], unwind)
    var = op.attr("var_callee_type")
    if isinstance(var, TypeAttr):
        p.write(" vararg(", p.type(var.type), ")")
    _write_bundles(p, op, bundle_ops)
    p.write(p.attr_dict(op.attributes, elide=_CALL_ELIDE + ("branch_weights",)))
    _write_sig(p, op, args, callee_value)


def _verify_invoke(op) -> None:
    args = list(operand_segments(op, 4)[0])
    callee_value = None if "callee" in op.attributes else (args.pop(0) if args else None)
    verify_branch(op)
    unwind = op.successors[1]
    if not unwind.ops or unwind.ops[0].name != "llvm.landingpad":
        raise VerifyError("second successor must start with a 'llvm.landingpad' operation")
    # As MLIR: an invoke's callee signature is not checked against the call (only llvm.call's is).
    if callee_value is not None and not LT.is_pointer(callee_value.type):
        raise VerifyError(f"indirect call expects a pointer as callee: '{callee_value.type}'")


dialect.op("llvm.invoke", "A call that continues at one block or unwinds to another.",
           traits=(TERMINATOR,), properties=_CALL_PROPS, verify=_verify_invoke, print=safe_printer(_print_invoke),
           names=OpSignature.of(("callee_operands*", "normalDestOperands*", "unwindDestOperands*",
                                 "op_bundle_operands*"), ("result?",), ("callee",)))


@dialect.rule("llvm_invoke")
def _llvm_invoke(ctx, children):
    words, callee, uses, (nb, nv), (ub, uv), vararg, bundles, attrs, sig = children
    operands, bundle_ops, results, attributes = _call_parts(ctx, words, callee, uses, vararg, bundles, attrs,
                                                            sig, "llvm.invoke")
    attributes["operandSegmentSizes"] = dense_i32_array((len(operands), len(nv), len(uv), len(bundle_ops)))
    return create(ctx, "llvm.invoke", operands + nv + uv + bundle_ops, results, attributes,
                  successors=[nb, ub])


def _print_call_intrinsic(p, op) -> None:
    args, bundle_ops = (list(g) for g in operand_segments(op, 2))
    p.write("llvm.call_intrinsic ", escape_string(op.attr("intrin").value), "(", p.values(args), ")")
    _write_bundles(p, op, bundle_ops)
    p.write(p.attr_dict(op.attributes, elide=("intrin", "op_bundle_sizes", "op_bundle_tags",
                                              "operandSegmentSizes", "arg_attrs", "res_attrs")))
    _write_sig(p, op, args, None)


dialect.op("llvm.call_intrinsic", "Calls an LLVM intrinsic by name.",
           properties=("intrin", "fastmathFlags", "op_bundle_sizes", "op_bundle_tags", "operandSegmentSizes",
                       "arg_attrs", "res_attrs"), print=safe_printer(_print_call_intrinsic),
                       names=OpSignature.of(("args*", "op_bundle_operands*"), ("results?",), ("intrin",)))


@dialect.rule("llvm_call_intrinsic")
def _llvm_call_intrinsic(ctx, children):
    name, uses, bundles, attrs, (args, results) = children
    attributes = {"intrin": StringAttr(string_value(ctx, name))}
    operands = ctx.resolve_all(uses, [t for t, _ in args])
    bundle_ops = _add_bundles(attributes, bundles)
    attributes["operandSegmentSizes"] = dense_i32_array((len(operands), len(bundle_ops)))
    add_arg_res_attrs(attributes, [a for _, a in args], [a for _, a in results])
    merge_attrs(attributes, attrs)
    return create(ctx, "llvm.call_intrinsic", operands + bundle_ops,
                  [t for t, _ in results if not LT.is_void(t)], attributes)


def _print_inline_asm(p, op) -> None:
    tail = op.attr("tail_call_kind")
    if (tail is not None and not (isinstance(tail, OpaqueAttr) and tail.body == "none")) \
            or "asm_dialect" in op.attributes or "operand_attrs" in op.attributes:
        raise ValueError("printed in generic form")  # keywords this printer does not write
    p.write("llvm.inline_asm ")
    for w in ("has_side_effects", "is_align_stack"):
        if w in op.attributes:
            p.write(w, " ")
    rest = p.attr_dict(op.attributes, elide=("has_side_effects", "is_align_stack", "asm_string",
                                             "constraints", "tail_call_kind"))
    if rest:
        p.write(rest.strip(), " ")
    p.write(escape_string(op.attr("asm_string").value), ", ",
            escape_string(op.attr("constraints").value))
    if op.operands:
        p.write(" ", p.values(op.operands))
    p.write(" : ", p.function_type(op.operand_types, op.result_types))


dialect.op("llvm.inline_asm", "Inline assembly with constraints.",
           properties=("asm_string", "constraints", "has_side_effects", "is_align_stack", "tail_call_kind",
                       "asm_dialect", "operand_attrs"), print=safe_printer(_print_inline_asm),
                       names=OpSignature.of(("operands*",), ("res?",), ("asm_string", "constraints")))


@dialect.rule("llvm_inline_asm")
def _llvm_inline_asm(ctx, children):
    words, attrs, asm, constraints, uses, ftype = children
    attributes = {"asm_string": StringAttr(string_value(ctx, asm)),
                  "constraints": StringAttr(string_value(ctx, constraints))}
    for tok in words or ():
        if tok.value not in ("has_side_effects", "is_align_stack"):
            raise ctx.fail(f"unexpected '{tok.value}'", tok)
        attributes[tok.value] = unit
    merge_attrs(attributes, attrs)
    return create(ctx, "llvm.inline_asm", ctx.resolve_all(uses, ftype.inputs), ftype.results, attributes)


dialect.op("llvm.va_arg", "Reads the next variadic argument.",
           print=safe_printer(lambda p, op: p.write("llvm.va_arg ", p.value(op.operand("arg")), p.op_attr_dict(op),
                                             " : ", p.function_type(op.operand_types, op.result_types))),
           names=OpSignature.of(("arg",), ("res",), ()))


@dialect.rule("llvm_va_arg")
def _llvm_va_arg(ctx, children):
    value, attrs, ftype = children
    return create(ctx, "llvm.va_arg", ctx.resolve_all([value], ftype.inputs), ftype.results,
                  dict(attrs or {}))


def _print_landingpad(p, op) -> None:
    p.write("llvm.landingpad", " cleanup" if "cleanup" in op.attributes else "")
    for v in op.operands:
        kind = "filter" if isinstance(v.type, LT.LLVMArrayType) else "catch"
        p.write(f" ({kind} ", p.value(v), " : ", p.type(v.type), ")")
    p.write(p.attr_dict(op.attributes, elide=("cleanup",)), " : ", p.type(op.results[0].type))


def _verify_landingpad(op) -> None:
    parent = op.parent_op
    if parent is not None and parent.name == "llvm.func" and "personality" not in parent.attributes:
        raise VerifyError("llvm.landingpad needs to be in a function with a personality")
    if not op.operands and "cleanup" not in op.attributes:
        raise VerifyError("landingpad instruction expects at least one clause or cleanup attribute")


dialect.op("llvm.landingpad", "The landing site of an unwinding invoke.", properties=("cleanup",),
           verify=_verify_landingpad, print=safe_printer(_print_landingpad),
           names=OpSignature.of(("operands*",), ("res",), ()))


@dialect.rule("llvm_clause")
def _llvm_clause(ctx, children):
    kind, value, type = children
    if kind.value not in ("catch", "filter"):
        raise ctx.fail(f"expected 'catch' or 'filter', got '{kind.value}'", kind)
    return ctx.resolve(value, type)


@dialect.rule("llvm_landingpad")
def _llvm_landingpad(ctx, children):
    word, clauses, attrs, type = children[0], children[1:-2], children[-2], children[-1]
    attributes = {}
    if word is not None:
        if word.value != "cleanup":
            raise ctx.fail(f"expected 'cleanup', got '{word.value}'", word)
        attributes["cleanup"] = unit
    return create(ctx, "llvm.landingpad", [c for c in clauses if c is not None], [type],
                  merge_attrs(attributes, attrs))


# ---- functions ------------------------------------------------------------------------
def function_type(op) -> LT.LLVMFunctionType:
    attr = op.attr("function_type")
    if isinstance(attr, TypeAttr) and isinstance(attr.type, LT.LLVMFunctionType):
        return attr.type
    raise VerifyError("requires a 'function_type' attribute of LLVM function type")


def _linkage(op) -> str:
    attr = op.attr("linkage")
    return attr.body if isinstance(attr, OpaqueAttr) and attr.body else "external"


def _symbol_words(ctx, words, attributes, allowed) -> None:
    """Linkage, visibility, unnamed_addr, calling convention, thread_local, constant."""
    for tok in words or ():
        w = tok.value
        if w in LINKAGES:
            attributes["linkage"] = OpaqueAttr(f"#llvm.linkage<{w}>")
        elif w in VISIBILITIES and "visibility" in allowed:
            if VISIBILITIES[w]:
                attributes["visibility_"] = IntegerAttr(VISIBILITIES[w], I64)
        elif w in UNNAMED_ADDR:
            attributes["unnamed_addr"] = IntegerAttr(UNNAMED_ADDR[w], I64)
        elif "cconv" in allowed and _is_cconv(w):
            if w != "ccc":
                attributes["CConv"] = OpaqueAttr(f"#llvm.cconv<{w}>")
        elif w == "thread_local" and w in allowed:
            attributes["tls_mode"] = IntegerAttr(1, I64)  # general dynamic, as MLIR's parser sets it
        elif w == "constant" and w in allowed:
            attributes["constant"] = unit
        else:
            raise ctx.fail(f"unexpected '{w}'", tok)


def _write_symbol_words(p, op, always_linkage: bool) -> None:
    linkage = _linkage(op)
    if always_linkage or linkage != "external":
        p.write(linkage, " ")
    vis = _int(op.attr("visibility_"))
    if vis:
        p.write({1: "hidden", 2: "protected"}[vis], " ")
    if "thread_local_" in op.attributes or _int(op.attr("tls_mode")):
        p.write("thread_local ")
    ua = _int(op.attr("unnamed_addr"))
    if ua:
        p.write({1: "local_unnamed_addr", 2: "unnamed_addr"}[ua], " ")
    cconv = op.attr("CConv")
    if isinstance(cconv, OpaqueAttr) and cconv.body not in ("", "ccc"):
        p.write(cconv.body, " ")
    if "constant" in op.attributes:
        p.write("constant ")


_FUNC_ELIDE = ("sym_name", "function_type", "linkage", "visibility_", "unnamed_addr", "CConv", "arg_attrs",
               "res_attrs")


def _print_func(p, op) -> None:
    ftype = function_type(op)
    p.write("llvm.func ")
    _write_symbol_words(p, op, False)
    p.write(p.symbol(op.attr("sym_name").value), "(")
    body = op.regions[0] if op.regions else None
    entry = body.blocks[0] if body is not None and body.blocks else None
    arg_attrs = _dicts(op, "arg_attrs", len(ftype.params))
    params = []
    for i, t in enumerate(ftype.params):
        text = p.type(t) if entry is None else f"{p.value(entry.arguments[i])}: {p.type(t)}"
        params.append(text + p.attr_dict(arg_attrs[i]))
    if ftype.vararg:
        params.append("...")
    p.write(", ".join(params), ")")
    if not LT.is_void(ftype.result):
        res = _dicts(op, "res_attrs", 1)[0]
        p.write(" -> ", f"({p.type(ftype.result)}{p.attr_dict(res)})" if res else p.type(ftype.result))
    vscale = op.attr("vscale_range")
    elide = _FUNC_ELIDE
    if isinstance(vscale, OpaqueAttr) and vscale.text.startswith("#llvm.vscale_range<"):
        m = re.fullmatch(r"minRange = (\d+), maxRange = (\d+)", vscale.body.strip())
        if m:
            p.write(f" vscale_range({m.group(1)}, {m.group(2)})")
            elide = elide + ("vscale_range",)
    comdat = op.attr("comdat")
    if isinstance(comdat, SymbolRefAttr):
        p.write(f" comdat({comdat})")
        elide = elide + ("comdat",)
    p.write(p.attr_dict(op.attributes, elide=elide, keyword="attributes"))
    if entry is not None:
        p.write(" ")
        p.region(body, print_entry_args=False)


def _verify_func(op) -> None:
    ftype = function_type(op)
    if not isinstance(op.attr("sym_name"), StringAttr):
        raise VerifyError("requires a 'sym_name' string attribute")
    if not op.regions or not op.regions[0].blocks:
        if _linkage(op) not in ("external", "extern_weak"):
            raise VerifyError("external functions must have 'external' or 'extern_weak' linkage")
        return
    entry = op.regions[0].blocks[0]
    if len(entry.arguments) != len(ftype.params):
        raise VerifyError(f"entry block must have {len(ftype.params)} arguments to match function signature")
    for i, (arg, t) in enumerate(zip(entry.arguments, ftype.params)):
        if arg.type != t:
            raise VerifyError(f"entry block argument #{i} does not match the function signature ('{arg.type}' "
                              f"vs '{t}')", arg.span)


dialect.op("llvm.func", "An LLVM function: a symbol with an LLVM function type and a body.",
           traits=(ISOLATED, SYMBOL),
           properties=("sym_name", "function_type", "linkage", "dso_local", "CConv", "comdat", "convergent",
                       "personality", "garbageCollector", "passthrough", "arg_attrs", "res_attrs",
                       "function_entry_count", "memory_effects", "visibility_", "arm_streaming",
                       "arm_locally_streaming", "arm_streaming_compatible", "arm_new_za", "arm_in_za",
                       "arm_out_za", "arm_inout_za", "arm_preserves_za", "section", "unnamed_addr",
                       "alignment", "vscale_range", "frame_pointer", "target_cpu", "tune_cpu",
                       "target_features", "unsafe_fp_math", "no_infs_fp_math", "no_nans_fp_math",
                       "no_signed_zeros_fp_math", "denormal_fp_math", "denormal_fp_math_f32",
                       "fp_contract", "instrument_function_entry", "instrument_function_exit", "no_inline",
                       "always_inline", "inline_hint", "no_unwind", "will_return", "optimize_none",
                       "vec_type_hint", "work_group_size_hint", "reqd_work_group_size",
                       "intel_reqd_sub_group_size", "uwtable_kind", "sym_visibility"),
           verify=_verify_func, print=safe_printer(_print_func),
           names=OpSignature.of((), (), ("sym_name", "function_type")))


@dialect.rule("llvm_named_param")
def _llvm_named_param(ctx, children):
    tok, type, attrs, loc = children
    return (tok, type, attrs, loc)


@dialect.rule("llvm_anonymous_param")
def _llvm_anonymous_param(ctx, children):
    type, attrs = children
    return (None, type, attrs, None)


@dialect.rule("llvm_variadic_param")
def _llvm_variadic_param(ctx, children):
    return "..."


@dialect.rule("llvm_params")
def _llvm_params(ctx, children):
    params = list(children)
    vararg = bool(params) and params[-1] == "..."
    if vararg:
        params.pop()
    if "..." in params:
        raise ctx.fail("'...' must be the last parameter")
    named = [p for p in params if p[0] is not None]
    if named and len(named) != len(params):
        raise ctx.fail("expected SSA identifier: name every argument or none")
    if named:
        ctx.set_entry_args([(tok, type, loc) for tok, type, _, loc in params])
    return (params, vararg)


@dialect.rule("llvm_func_attrs")
def _llvm_func_attrs(ctx, children):
    return children[0]


@dialect.rule("llvm_func_extra")
def _llvm_func_extra(ctx, children):
    """`vscale_range(1, 16)`, `comdat(@c::@f)` after the signature."""
    word, *values = children
    if word.value == "vscale_range" and len(values) == 2 and all(isinstance(v, IntegerAttr) for v in values):
        return ("vscale_range", OpaqueAttr(f"#llvm.vscale_range<minRange = {values[0].value}, "
                                           f"maxRange = {values[1].value}>"))
    if word.value == "comdat" and len(values) == 1 and isinstance(values[0], SymbolRefAttr):
        return ("comdat", values[0])
    raise ctx.fail(f"unexpected '{word.value}(...)' in llvm.func", word)


@dialect.rule("llvm_func")
def _llvm_func(ctx, children):
    words, name, params, results = children[:4]
    extras, attrs, region = children[4:-2], children[-2], children[-1]
    ctx.pending_args = None  # a declaration leaves its named arguments unused
    params, vararg = params if params is not None else ([], False)
    results = results or []
    if len(results) > 1:
        raise ctx.fail("expected a single result type", name)
    result = results[0][0] if results else LT.VOID
    ftype = LT.LLVMFunctionType(result, tuple(p[1] for p in params), vararg)
    attributes = {"sym_name": StringAttr(symbol_name(ctx, name)), "function_type": TypeAttr(ftype),
                  "unnamed_addr": IntegerAttr(0, I64)}  # as MLIR's parser sets it (generic print)
    _symbol_words(ctx, words, attributes, {"visibility", "cconv"})
    add_arg_res_attrs(attributes, [p[2] for p in params], [r[1] for r in results])
    for extra in extras:
        if extra is not None:
            attributes[extra[0]] = extra[1]
    merge_attrs(attributes, attrs)
    if region is not None and params and params[0][0] is None and region.blocks:
        raise ctx.fail("expected named arguments for a function with a body", name)
    return create(ctx, "llvm.func", attributes=attributes, regions=[region if region is not None else Region()])


# ---- globals ----------------------------------------------------------------------
_GLOBAL_ELIDE = ("sym_name", "global_type", "linkage", "visibility_", "unnamed_addr", "thread_local_",
                 "tls_mode", "constant", "value")


def _print_global(p, op) -> None:
    p.write("llvm.mlir.global ")
    _write_symbol_words(p, op, True)
    p.write(p.symbol(op.attr("sym_name").value), "(")
    value = op.attr("value")
    if value is not None:
        p.write(p.attr(value))
    p.write(")", p.attr_dict(op.attributes, elide=_GLOBAL_ELIDE))
    body = op.regions[0] if op.regions else None
    if not isinstance(value, StringAttr) or (body is not None and body.blocks):
        p.write(" : ", p.type(op.attr("global_type").type))
    if body is not None and body.blocks:
        p.write(" ")
        p.region(body)


def _verify_global(op) -> None:
    gtype = op.attr("global_type")
    if not isinstance(gtype, TypeAttr):
        raise VerifyError("requires a 'global_type' type attribute")
    value = op.attr("value")
    has_body = bool(op.regions and op.regions[0].blocks)
    if value is not None and has_body:
        raise VerifyError("cannot have both initializer value and region")
    if isinstance(value, StringAttr):
        t = gtype.type
        n = len(value.value.encode("latin-1", "replace"))
        if not (isinstance(t, LT.LLVMArrayType) and t.element == T.i8 and t.size == n):
            raise VerifyError("requires an i8 array type of the length equal to that of the string attribute")
    if "linkage" in op.attributes and _linkage(op) == "appending":
        t = gtype.type
        if not isinstance(t, LT.LLVMArrayType):
            raise VerifyError("expected array type for 'appending' linkage")
    if has_body:
        block = op.regions[0].blocks[-1]
        last = block.ops[-1] if block.ops else None
        if last is None or last.name != "llvm.return":
            raise VerifyError("initializer region must end with 'llvm.return'")
        if len(last.operands) != 1 or last.operand("arg").type != gtype.type:
            raise VerifyError("initializer region type mismatch: expected the global's type")


dialect.op("llvm.mlir.global", "A global variable or constant, with a value or an initializer region.",
           traits=(ISOLATED, SYMBOL),
           properties=("global_type", "constant", "sym_name", "linkage", "dso_local", "thread_local_",
                       "externally_initialized", "value", "alignment", "addr_space", "unnamed_addr",
                       "section", "comdat", "dbg_exprs", "visibility_", "target_specific_attrs", "tls_mode"),
           verify=_verify_global, print=safe_printer(_print_global),
           names=OpSignature.of((), (), ("sym_name", "global_type", "value")))


@dialect.rule("llvm_global")
def _llvm_global(ctx, children):
    words, name, value, attrs, type, region = children
    attributes = {"sym_name": StringAttr(symbol_name(ctx, name)), "linkage": OpaqueAttr("#llvm.linkage<external>"),
                  "unnamed_addr": IntegerAttr(0, I64)}
    _symbol_words(ctx, words, attributes, {"visibility", "thread_local", "constant"})
    if type is None:
        if isinstance(value, StringAttr):
            type = LT.LLVMArrayType(len(value.value.encode("latin-1", "replace")), T.i8)
        elif value is not None and getattr(value, "type", None) is not None:
            type = value.type
        else:
            raise ctx.fail("type can only be omitted for string globals or typed initial values", name)
    attributes["global_type"] = TypeAttr(type)
    if value is not None:
        attributes["value"] = value
    _move_inherent(attributes, attrs, ())
    return create(ctx, "llvm.mlir.global", attributes=attributes,
                  regions=[region if region is not None else Region()])


# ---- constants and values -------------------------------------------------------------
def _print_constant(p, op) -> None:
    p.write("llvm.mlir.constant(", p.attr(op.attr("value")), ")",
            p.attr_dict(op.attributes, elide=("value",)), " : ", p.type(op.results[0].type))


def _verify_constant(op) -> None:
    value = op.attr("value")
    t = op.results[0].type
    if value is None:
        raise VerifyError("requires attribute 'value'")
    if isinstance(value, StringAttr):
        n = len(value.value.encode("latin-1", "replace"))
        if not isinstance(t, LT.LLVMArrayType):
            raise VerifyError("expected array type for string constant")
        if t.element != T.i8 or t.size != n:
            raise VerifyError(f"expected array type of {n} i8 elements for the string constant")
        return
    if isinstance(value, IntegerAttr) and isinstance(t, T.FloatType):
        raise VerifyError("expected integer type")
    shape = getattr(getattr(value, "type", None), "shape", None)
    if shape is not None and isinstance(t, T.VectorType):
        n = 1
        for d in shape:
            n = n * (d or 0)
        m = 1
        for d in t.shape:
            m *= d
        if n != m:
            raise VerifyError(f"type and attribute have a different number of elements: {m} vs. {n}")


dialect.op("llvm.mlir.constant", "A constant of an LLVM-compatible type.", traits=(PURE,),
           properties=("value",), verify=_verify_constant, print=safe_printer(_print_constant),
           names=OpSignature.of((), ("res",), ("value",)))


@dialect.rule("llvm_constant")
def _llvm_constant(ctx, children):
    value, attrs, type = children
    # Newer MLIR reads `llvm.mlir.constant(42) : i47` as an i64 attribute converted on
    # translation; iree-opt 3.13 wants the attribute typed like the result. Same value.
    if isinstance(value, IntegerAttr) and isinstance(type, T.IntegerType) and value.type != type \
            and isinstance(value.type, (T.IntegerType, T.IndexType)):
        value = IntegerAttr(_wrap(value.value, type.width), type)
    elif isinstance(value, FloatAttr) and isinstance(type, T.FloatType) and value.type != type \
            and value.hex is None:
        value = FloatAttr(value.value, type)
    return create(ctx, "llvm.mlir.constant", (), [type], merge_attrs({"value": value}, attrs))


def _wrap(value: int, width: int) -> int:
    """`value` as a two's-complement integer of `width` bits (printed signed, as MLIR does)."""
    if width == 1:
        return value & 1
    value &= (1 << width) - 1
    return value - (1 << width) if value >> (width - 1) else value


def _print_value_op(p, op) -> None:
    p.write(op.name, p.op_attr_dict(op), " : ", p.type(op.results[0].type))


for _name, _summary in (("undef", "An undefined value of a type."), ("poison", "A poison value of a type."),
                        ("zero", "The zero value of a type (null for pointers).")):
    dialect.op(f"llvm.mlir.{_name}", _summary, traits=(PURE,), print=safe_printer(_print_value_op),
               names=_VALUE_NAMES)


@dialect.rule("llvm_value_op")
def _llvm_value_op(ctx, children):
    name, attrs, type = children
    return create(ctx, name.value, (), [type], dict(attrs or {}))


def _print_addressof(p, op) -> None:
    p.write("llvm.mlir.addressof ", str(op.attr("global_name")),
            p.attr_dict(op.attributes, elide=("global_name",)), " : ", p.type(op.results[0].type))


def _verify_addressof(op) -> None:
    ref = op.attr("global_name")
    if not isinstance(ref, SymbolRefAttr):
        raise VerifyError("requires a 'global_name' symbol reference")
    if not LT.is_pointer(op.results[0].type):
        raise VerifyError(f"result #0 must be LLVM pointer type, but got '{op.results[0].type}'")
    target = _lookup_symbol(op, ref)
    if target is None or target.name not in ("llvm.mlir.global", "llvm.func", "llvm.mlir.alias",
                                             "llvm.mlir.ifunc"):
        if op.parent_op is None:
            return
        raise VerifyError("must reference a global defined by 'llvm.mlir.global', 'llvm.mlir.alias' or "
                          "'llvm.func' or 'llvm.mlir.ifunc'")
    if target.name == "llvm.mlir.global":
        space = _int(target.attr("addr_space"))
        got = op.results[0].type.address_space if isinstance(op.results[0].type, LT.LLVMPointerType) else 0
        if space != got:
            raise VerifyError("pointer address space must match address space of the referenced global")


dialect.op("llvm.mlir.addressof", "The address of a global or function.", traits=(PURE,),
           properties=("global_name",), verify=_verify_addressof, print=safe_printer(_print_addressof),
           names=OpSignature.of((), ("res",), ("global_name",)))


@dialect.rule("llvm_addressof")
def _llvm_addressof(ctx, children):
    sym, attrs, type = children
    return create(ctx, "llvm.mlir.addressof", (), [type],
                  merge_attrs({"global_name": symbol_ref(ctx, [sym])}, attrs))


def _print_named_metadata(p, op) -> None:
    p.write("llvm.named_metadata ", escape_string(op.attr("metadata_name").value), " ",
            p.attr(op.attr("nodes")), p.attr_dict(op.attributes, elide=("metadata_name", "nodes")))


dialect.op("llvm.named_metadata", "Module-level named metadata.", properties=("metadata_name", "nodes"),
           print=safe_printer(_print_named_metadata), names=OpSignature.of((), (), ("metadata_name", "nodes")))


@dialect.rule("llvm_named_metadata")
def _llvm_named_metadata(ctx, children):
    name, nodes, attrs = children
    return create(ctx, "llvm.named_metadata", (), (),
                  merge_attrs({"metadata_name": StringAttr(string_value(ctx, name)), "nodes": nodes}, attrs))


@dialect.rule("llvm_tag")
def _llvm_tag(ctx, children):
    key, value = children
    if key.value != "id":
        raise ctx.fail(f"expected 'id', got '{key.value}'", key)
    return int(value.value, 0)


dialect.op("llvm.blockaddress", "The address of a tagged block.", traits=(PURE,), properties=("block_addr",),
           print=safe_printer(lambda p, op: p.write("llvm.blockaddress ", op.attr("block_addr").text[len(
               "#llvm.blockaddress"):], p.attr_dict(op.attributes, elide=("block_addr",)), " : ",
               p.type(op.results[0].type))), names=OpSignature.of((), ("res",), ("block_addr",)))
dialect.op("llvm.blocktag", "Tags a block so `llvm.blockaddress` can name it.", properties=("tag",),
           print=safe_printer(lambda p, op: p.write("llvm.blocktag ", op.attr("tag").text[len("#llvm.blocktag"):],
                                             p.attr_dict(op.attributes, elide=("tag",)))),
           names=OpSignature.of((), (), ("tag",)))


@dialect.rule("llvm_blockaddress")
def _llvm_blockaddress(ctx, children):
    fkey, sym, tkey, tag, attrs, type = children
    if fkey.value != "function" or tkey.value != "tag":
        raise ctx.fail("expected `<function = @f, tag = <id = N>>`")
    text = f"#llvm.blockaddress<function = {sym.value}, tag = <id = {tag}>>"
    return create(ctx, "llvm.blockaddress", (), [type], merge_attrs({"block_addr": OpaqueAttr(text)}, attrs))


@dialect.rule("llvm_blocktag")
def _llvm_blocktag(ctx, children):
    tag, attrs = children
    return create(ctx, "llvm.blocktag", (), (), merge_attrs({"tag": OpaqueAttr(f"#llvm.blocktag<id = {tag}>")}, attrs))


# ---- aggregates -------------------------------------------------------------------------
def aggregate_element(t, position, ctx=None):
    """The type at `position` inside a struct/array type (MLIR's messages when it has none)."""
    for i, index in enumerate(position):
        if isinstance(t, LT.LLVMStructType) and t.body is not None:
            if not 0 <= index < len(t.body):
                raise VerifyError(f"position out of bounds: {index}")
            t = t.body[index]
        elif isinstance(t, LT.LLVMArrayType):
            if not 0 <= index < t.size:
                raise VerifyError(f"position out of bounds: {index}")
            t = t.element
        else:
            raise VerifyError(f"expected LLVM IR Dialect aggregate type, got '{t}'")
    return t


def _position(op):
    attr = op.attr("position")
    if not isinstance(attr, DenseArrayAttr):
        raise VerifyError("requires a 'position' attribute (array<i64: ...>)")
    return list(attr.values)


def _print_extractvalue(p, op) -> None:
    container = op.operand("container")
    p.write("llvm.extractvalue ", p.value(container), "[", ", ".join(map(str, _position(op))), "]",
            p.attr_dict(op.attributes, elide=("position",)), " : ", p.type(container.type))


def _verify_extractvalue(op) -> None:
    container = op.operand("container").type
    t = aggregate_element(container, _position(op))
    if t != op.results[0].type:
        raise VerifyError(f"Type mismatch: extracting from {container} should produce {t} but this op "
                          f"returns {op.results[0].type}")


def _print_insertvalue(p, op) -> None:
    container, value = op.operands
    p.write("llvm.insertvalue ", p.value(value), ", ", p.value(container), "[",
            ", ".join(map(str, _position(op))), "]", p.attr_dict(op.attributes, elide=("position",)), " : ",
            p.type(container.type))


def _verify_insertvalue(op) -> None:
    container, value = op.operands
    t = aggregate_element(container.type, _position(op))
    if t != value.type:
        raise VerifyError(f"Type mismatch: cannot insert {value.type} into {container.type}")
    if op.results[0].type != container.type:
        raise VerifyError("result type must match the container type")


dialect.op("llvm.extractvalue", "Reads a member of a struct or array value.", traits=(PURE,),
           properties=("position",), verify=_verify_extractvalue, print=safe_printer(_print_extractvalue),
           names=OpSignature.of(("container",), ("res",), ("position",)))
dialect.op("llvm.insertvalue", "A struct or array value with one member replaced.", traits=(PURE,),
           properties=("position",), verify=_verify_insertvalue, print=safe_printer(_print_insertvalue),
           names=OpSignature.of(("container", "value"), ("res",), ("position",)))


@dialect.rule("llvm_position")
def _llvm_position(ctx, children):
    return [int(t.value, 0) for t in children if t is not None]


def _element_at(ctx, t, position, tok):
    try:
        return aggregate_element(t, position)
    except VerifyError as e:
        raise ctx.fail(str(e), tok)


@dialect.rule("llvm_extractvalue")
def _llvm_extractvalue(ctx, children):
    container, position, attrs, type = children
    result = _element_at(ctx, type, position, container)
    return create(ctx, "llvm.extractvalue", [ctx.resolve(container, type)], [result],
                  merge_attrs({"position": _i64_array(position)}, attrs))


@dialect.rule("llvm_insertvalue")
def _llvm_insertvalue(ctx, children):
    value, container, position, attrs, type = children
    vtype = _element_at(ctx, type, position, container)
    operands = [ctx.resolve(container, type), ctx.resolve(value, vtype)]
    return create(ctx, "llvm.insertvalue", operands, [type], merge_attrs({"position": _i64_array(position)}, attrs))


# ---- vectors ---------------------------------------------------------------------------
def _print_extractelement(p, op) -> None:
    vec, pos = op.operands
    p.write("llvm.extractelement ", p.value(vec), "[", p.value(pos), " : ", p.type(pos.type), "]",
            p.op_attr_dict(op), " : ", p.type(vec.type))


def _verify_vector_element(vec_type, value_type) -> None:
    if not isinstance(vec_type, T.VectorType):
        raise VerifyError(f"operand #0 must be LLVM dialect-compatible vector type, but got '{vec_type}'")
    if vec_type.element != value_type:
        raise VerifyError(f"Type mismatch: the element type of {vec_type} is {vec_type.element}, not "
                          f"{value_type}")


def _verify_extractelement(op) -> None:
    vec, pos = op.operands
    _verify_vector_element(vec.type, op.results[0].type)
    if not _is_int(pos.type):
        raise _type_error(1, "signless integer", pos.type)


def _print_insertelement(p, op) -> None:
    vec, value, pos = op.operands
    p.write("llvm.insertelement ", p.value(value), ", ", p.value(vec), "[", p.value(pos), " : ",
            p.type(pos.type), "]", p.op_attr_dict(op), " : ", p.type(vec.type))


def _verify_insertelement(op) -> None:
    vec, value, pos = op.operands
    _verify_vector_element(vec.type, value.type)
    if op.results[0].type != vec.type:
        raise VerifyError("result type must match the vector type")


dialect.op("llvm.extractelement", "Reads one element of a vector.", traits=(PURE,),
           verify=_verify_extractelement, print=safe_printer(_print_extractelement),
           names=OpSignature.of(("vector", "position"), ("res",), ()))
dialect.op("llvm.insertelement", "A vector with one element replaced.", traits=(PURE,),
           verify=_verify_insertelement, print=safe_printer(_print_insertelement),
           names=OpSignature.of(("vector", "value", "position"), ("res",), ()))


@dialect.rule("llvm_extractelement")
def _llvm_extractelement(ctx, children):
    vec, pos, pos_type, attrs, type = children
    if not isinstance(type, T.VectorType):
        raise ctx.fail(f"expected a vector type, got '{type}'")
    operands = [ctx.resolve(vec, type), ctx.resolve(pos, pos_type)]
    return create(ctx, "llvm.extractelement", operands, [type.element], dict(attrs or {}))


@dialect.rule("llvm_insertelement")
def _llvm_insertelement(ctx, children):
    value, vec, pos, pos_type, attrs, type = children
    if not isinstance(type, T.VectorType):
        raise ctx.fail(f"expected a vector type, got '{type}'")
    operands = [ctx.resolve(vec, type), ctx.resolve(value, type.element), ctx.resolve(pos, pos_type)]
    return create(ctx, "llvm.insertelement", operands, [type], dict(attrs or {}))


def _print_shufflevector(p, op) -> None:
    p.write("llvm.shufflevector ", p.values(op.operands), " [",
            ", ".join(map(str, op.attr("mask").values)), "]",
            p.attr_dict(op.attributes, elide=("mask",)), " : ", p.type(op.operand("v1").type))


def _verify_shufflevector(op) -> None:
    a, b = op.operand_types
    if a != b:
        raise VerifyError("failed to verify that all of {v1, v2} have same type")
    if not isinstance(a, T.VectorType):
        raise _type_error(0, "LLVM dialect-compatible vector type", a)
    mask = op.attr("mask")
    if not isinstance(mask, DenseArrayAttr):
        raise VerifyError("requires a 'mask' attribute")
    if a.scalable and any(m != 0 for m in mask.values):
        raise VerifyError("expected a splat operation for scalable vectors")
    want = T.VectorType((len(mask.values),), a.element, a.scalable)
    if op.results[0].type != want:
        raise VerifyError(f"result type must be {want}")


dialect.op("llvm.shufflevector", "Selects elements of two vectors by a constant mask.", traits=(PURE,),
           properties=("mask",), verify=_verify_shufflevector, print=safe_printer(_print_shufflevector),
           names=OpSignature.of(("v1", "v2"), ("res",), ("mask",)))


@dialect.rule("llvm_shufflevector")
def _llvm_shufflevector(ctx, children):
    a, b = children[0], children[1]
    mask = [int(text, 0) for text, _ in (c for c in children[2:-2] if c is not None)]
    attrs, type = children[-2], children[-1]
    if not isinstance(type, T.VectorType):
        raise ctx.fail(f"expected a vector type, got '{type}'")
    result = T.VectorType((len(mask),), type.element, type.scalable)
    operands = [ctx.resolve(a, type), ctx.resolve(b, type)]
    return create(ctx, "llvm.shufflevector", operands, [result], merge_attrs({"mask": dense_i32_array(mask)}, attrs))


# ---- intrinsics --------------------------------------------------------------------------
FASTMATH_INTRINSICS = {
    "fabs", "sqrt", "exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "pow", "powi", "fma", "fmuladd", "floor", "ceil", "round",
    "roundeven", "trunc", "rint", "nearbyint", "copysign", "minnum", "maxnum", "minimum", "maximum",
    "ldexp", "vector.reduce.fmax", "vector.reduce.fmin", "vector.reduce.fmaximum",
    "vector.reduce.fminimum", "frexp", "sincos",
}
#: Intrinsics whose operands and single result have one type (elementwise math).
SAME_TYPE_INTRINSICS = {
    "fabs", "sqrt", "exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "pow", "fma", "fmuladd", "floor", "ceil", "round", "roundeven",
    "trunc", "rint", "nearbyint", "copysign", "minnum", "maxnum", "minimum", "maximum", "bitreverse",
    "ctpop", "bswap", "smax", "smin", "umax", "umin", "fshl", "fshr", "sadd.sat", "uadd.sat", "ssub.sat",
    "usub.sat", "sshl.sat", "ushl.sat",
}
FLOAT_INTRINSICS = {
    "fabs", "sqrt", "exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "pow", "fma", "fmuladd", "floor", "ceil", "round", "roundeven",
    "trunc", "rint", "nearbyint", "copysign", "minnum", "maxnum", "minimum", "maximum",
}


def _print_intr(p, op) -> None:
    p.write(op.name, "(", p.values(op.operands), ")", _fastmath_text(op))
    p.write(p.attr_dict(op.attributes, elide=("fastmathFlags",)), " : ",
            p.function_type(op.operand_types, op.result_types))


def _verify_intr(op) -> None:
    kind = op.name[len("llvm.intr."):]
    if kind in ("powi", "ldexp") and len(op.operands) == 2:
        val, power = op.operand("val").type, op.operand("power").type
        if not isinstance(power, T.IntegerType):
            raise _type_error(1, "signless integer", power)
        if not _is_float(val) or op.results[0].type != val:
            raise VerifyError("requires a floating-point operand #0 of the result type")
    if kind in SAME_TYPE_INTRINSICS:
        if len(op.results) != 1:
            raise VerifyError("expected one result")
        t = op.results[0].type
        for i, v in enumerate(op.operands):
            if v.type != t:
                raise VerifyError("requires the same type for all operands and results")
        if kind in FLOAT_INTRINSICS and not _is_float(t):
            raise _type_error(0, "floating point LLVM type or LLVM dialect-compatible vector of floating "
                              "point LLVM type", t)
        if kind not in FLOAT_INTRINSICS and not _is_int(t):
            raise _type_error(0, INT_LIKE, t)


def intrinsic_names() -> list:
    """The `llvm.intr.*` ops with the call-like custom form (from the grammar)."""
    text = (grammar_dir() / "llvm.lark").read_text()
    block = text[text.index("!llvm_intr_name:"):text.index("// `llvm.intr.lifetime.start")]
    return re.findall(r'"(llvm\.intr\.[^"]+)"', block)


#: The intrinsics whose operands MLIR names otherwise than `$in` (one) or `$a, $b[, $c]`.
_INTRINSIC_OPERANDS = {
    "powi": ("val", "power"), "ldexp": ("val", "power"), "lrint": ("val",), "llrint": ("val",),
    "lround": ("val",), "llround": ("val",), "frexp": ("val",), "sincos": ("val",),
    "expect": ("val", "expected"), "ptrmask": ("ptr", "mask"),
    "trap": (), "debugtrap": (), "stacksave": (), "stepvector": (),
}
_TERNARY_INTRINSICS = {"fma", "fmuladd", "fshl", "fshr"}
_UNARY_INTRINSICS = {"fabs", "sqrt", "exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "asin",
                     "acos", "atan", "sinh", "cosh", "tanh", "floor", "ceil", "round", "roundeven", "trunc", "rint",
                     "nearbyint", "bitreverse", "ctpop", "bswap", "vector.reduce.fmax", "vector.reduce.fmin",
                     "vector.reduce.fmaximum", "vector.reduce.fminimum"}


def intrinsic_signature(kind: str) -> OpSignature:
    """MLIR's operand names for the call-like intrinsic `llvm.intr.<kind>` (LLVMIntrinsicOps.td)."""
    if kind in _INTRINSIC_OPERANDS:
        operands = _INTRINSIC_OPERANDS[kind]
    elif kind in _UNARY_INTRINSICS:
        operands = ("in",)
    else:
        operands = ("a", "b", "c") if kind in _TERNARY_INTRINSICS else ("a", "b")
    return OpSignature.of(operands, ("res",) if kind not in ("trap", "debugtrap") else ())


for _name in intrinsic_names():
    _kind = _name[len("llvm.intr."):]
    dialect.op(_name, f"The LLVM intrinsic `llvm.{_kind}`.", traits=(PURE,),
               properties=("fastmathFlags",) if _kind in FASTMATH_INTRINSICS else (),
               verify=_verify_intr, print=safe_printer(_print_intr), names=intrinsic_signature(_kind))


@dialect.rule("llvm_intr")
def _llvm_intr(ctx, children):
    name, uses, flags, attrs, ftype = children
    attributes = _fastmath_attributes(ctx, flags, attrs)
    return create(ctx, name.value, ctx.resolve_all(uses, ftype.inputs), ftype.results, attributes)


def _print_intr_ptr(p, op) -> None:
    (v,) = op.operands  # (ptr or arg_list)
    p.write(op.name, " ", p.value(v), p.op_attr_dict(op), " : ", p.type(v.type))


for _name, _operand in (("lifetime.start", "ptr"), ("lifetime.end", "ptr"), ("vastart", "arg_list"),
                       ("vaend", "arg_list"), ("stackrestore", "ptr")):
    dialect.op(f"llvm.intr.{_name}", f"The LLVM intrinsic `llvm.{_name}`.", print=safe_printer(_print_intr_ptr),
               names=OpSignature.of((_operand,), ()))
for _name in ("launder.invariant.group", "strip.invariant.group"):
    dialect.op(f"llvm.intr.{_name}", f"The LLVM intrinsic `llvm.{_name}`.", traits=(PURE,),
               print=safe_printer(_print_intr_ptr), names=OpSignature.of(("ptr",), ("res",)))


@dialect.rule("llvm_intr_ptr")
def _llvm_intr_ptr(ctx, children):
    name, value, attrs, type = children
    results = [type] if name.value.endswith("invariant.group") else []
    return create(ctx, name.value, [ctx.resolve(value, type)], results, dict(attrs or {}))


dialect.op("llvm.intr.eh.typeid.for", "The LLVM intrinsic `llvm.eh.typeid.for`.",
           print=safe_printer(lambda p, op: p.write(op.name, " ", p.value(op.operand("type_info")), p.op_attr_dict(op),
                                             " : ", p.function_type(op.operand_types, op.result_types))),
           names=OpSignature.of(("type_info",), ("res",), ()))


@dialect.rule("llvm_intr_typed")
def _llvm_intr_typed(ctx, children):
    name, value, attrs, ftype = children
    return create(ctx, name.value, ctx.resolve_all([value], ftype.inputs), ftype.results, dict(attrs or {}))


def _print_intr_vector(p, op) -> None:
    pos = op.attr("pos").value
    if op.name.endswith("insert"):
        sub = op.operand("srcvec")
        p.write(op.name, " ", p.value(sub), ", ", p.value(op.operand("dstvec")), f"[{pos}]",
                p.attr_dict(op.attributes, elide=("pos",)), " : ", p.type(sub.type), " into ",
                p.type(op.results[0].type))
    else:
        vec = op.operand("srcvec")
        p.write(op.name, " ", p.value(vec), f"[{pos}]", p.attr_dict(op.attributes, elide=("pos",)),
                " : ", p.type(op.results[0].type), " from ", p.type(vec.type))


dialect.op("llvm.intr.vector.insert", "Inserts a subvector at a constant position.", traits=(PURE,),
           properties=("pos",), print=safe_printer(_print_intr_vector),
           names=OpSignature.of(("dstvec", "srcvec"), ("res",), ("pos",)))
dialect.op("llvm.intr.vector.extract", "Extracts a subvector at a constant position.", traits=(PURE,),
           properties=("pos",), print=safe_printer(_print_intr_vector),
           names=OpSignature.of(("srcvec",), ("res",), ("pos",)))


@dialect.rule("llvm_intr_vector")
def _llvm_intr_vector(ctx, children):
    name, a, b, pos, attrs, t1, word, t2 = children
    attributes = merge_attrs({"pos": IntegerAttr(int(pos.value, 0), I64)}, attrs)
    if name.value.endswith("insert"):
        if b is None or word.value != "into":
            raise ctx.fail("expected `%sub, %vec[pos] : T into T`")
        operands = [ctx.resolve(b, t2), ctx.resolve(a, t1)]
        return create(ctx, name.value, operands, [t2], attributes)
    if b is not None or word.value != "from":
        raise ctx.fail("expected `%vec[pos] : T from T`")
    return create(ctx, name.value, [ctx.resolve(a, t2)], [t1], attributes)


def _print_assume(p, op) -> None:
    args, bundle_ops = op.operands[:1], list(op.operands[1:])
    p.write("llvm.intr.assume ", p.value(args[0]))
    _write_bundles(p, op, bundle_ops)
    p.write(p.attr_dict(op.attributes, elide=("op_bundle_sizes", "op_bundle_tags", "operandSegmentSizes")),
            " : ", p.type(args[0].type))


dialect.op("llvm.intr.assume", "Tells the optimizer a condition holds.",
           properties=("op_bundle_sizes", "op_bundle_tags"), print=safe_printer(_print_assume),
           names=OpSignature.of(("cond", "op_bundle_operands*"), (), ()))


@dialect.rule("llvm_intr_assume")
def _llvm_intr_assume(ctx, children):
    cond, bundles, attrs, type = children
    attributes = {"op_bundle_sizes": dense_i32_array(len(v) for _, v in bundles or ())}
    bundle_ops = []
    if bundles:
        attributes["op_bundle_tags"] = ArrayAttr(tuple(StringAttr(t) for t, _ in bundles))
        for _, v in bundles:
            bundle_ops += v
    return create(ctx, "llvm.intr.assume", [ctx.resolve(cond, type)] + bundle_ops, (), merge_attrs(attributes, attrs))


dialect.op("llvm.intr.invariant.start", "Marks memory as invariant.", properties=("size",),
           print=safe_printer(lambda p, op: p.write(op.name, " ", str(op.attr("size").value), ", ",
                                             p.value(op.operand("ptr")), p.attr_dict(op.attributes, elide=("size",)),
                                             " : ", p.type(op.operand("ptr").type))),
           names=OpSignature.of(("ptr",), ("res",), ("size",)))
dialect.op("llvm.intr.invariant.end", "Ends an invariant region.", properties=("size",),
           print=safe_printer(lambda p, op: p.write(op.name, " ", p.value(op.operand("start")), ", ",
                                             str(op.attr("size").value), ", ", p.value(op.operand("ptr")),
                                             p.attr_dict(op.attributes, elide=("size",)), " : ",
                                             p.type(op.operand("ptr").type))),
           names=OpSignature.of(("start", "ptr"), (), ("size",)))


@dialect.rule("llvm_intr_invariant_start")
def _llvm_intr_invariant_start(ctx, children):
    size, ptr, attrs, type = children
    return create(ctx, "llvm.intr.invariant.start", [ctx.resolve(ptr, type)], [LT.PTR],
                  merge_attrs({"size": IntegerAttr(int(size.value, 0), I64)}, attrs))


@dialect.rule("llvm_intr_invariant_end")
def _llvm_intr_invariant_end(ctx, children):
    start, size, ptr, attrs, type = children
    operands = [ctx.resolve(start, LT.PTR), ctx.resolve(ptr, type)]
    return create(ctx, "llvm.intr.invariant.end", operands, (),
                  merge_attrs({"size": IntegerAttr(int(size.value, 0), I64)}, attrs))


def _print_vacopy(p, op) -> None:
    src, dest = op.operand("src_list"), op.operand("dest_list")
    p.write(op.name, " ", p.value(src), " to ", p.value(dest), p.op_attr_dict(op), " : ", p.type(src.type), ", ",
            p.type(dest.type))


dialect.op("llvm.intr.vacopy", "Copies a va_list.", print=safe_printer(_print_vacopy),
           names=OpSignature.of(("dest_list", "src_list"), (), ()))


@dialect.rule("llvm_intr_vacopy")
def _llvm_intr_vacopy(ctx, children):
    src, dst, attrs, src_type, dst_type = children
    return create(ctx, "llvm.intr.vacopy", [ctx.resolve(dst, dst_type), ctx.resolve(src, src_type)], (),
                  dict(attrs or {}))


dialect.op("llvm.intr.experimental.noalias.scope.decl", "Declares a noalias scope.", properties=("scope",),
           print=safe_printer(lambda p, op: p.write(op.name, " ", p.attr(op.attr("scope")),
                                             p.attr_dict(op.attributes, elide=("scope",)))),
           names=OpSignature.of((), (), ("scope",)))


@dialect.rule("llvm_intr_scope_decl")
def _llvm_intr_scope_decl(ctx, children):
    scope, attrs = children
    return create(ctx, "llvm.intr.experimental.noalias.scope.decl", (), (), merge_attrs({"scope": scope}, attrs))


ROUNDING = {"tonearest": 1, "downward": 3, "upward": 2, "towardzero": 0, "tonearestaway": 4, "dynamic": 7}
EXCEPTIONS = {"ignore": 0, "maytrap": 1, "strict": 2}
ROUNDING_NAMES = {v: k for k, v in ROUNDING.items()}
EXCEPTION_NAMES = {v: k for k, v in EXCEPTIONS.items()}


def _fp_words(ctx, words, attributes) -> None:
    for tok in words:
        if tok.value in ROUNDING:
            attributes["roundingmode"] = IntegerAttr(ROUNDING[tok.value], I64)
        elif tok.value in EXCEPTIONS:
            attributes["fpExceptionBehavior"] = IntegerAttr(EXCEPTIONS[tok.value], I64)
        else:
            raise ctx.fail(f"unexpected '{tok.value}'", tok)


def _fp_words_text(op) -> str:
    out = ""
    if "roundingmode" in op.attributes:
        out += " " + ROUNDING_NAMES[op.attr("roundingmode").value]
    if "fpExceptionBehavior" in op.attributes:
        out += " " + EXCEPTION_NAMES[op.attr("fpExceptionBehavior").value]
    return out


def _print_constrained(p, op) -> None:
    if _fastmath_text(op):
        raise ValueError("printed in generic form")  # fast-math flags have no custom spelling here
    p.write(op.name, " ", p.values(op.operands), _fp_words_text(op),
            p.attr_dict(op.attributes, elide=("roundingmode", "fpExceptionBehavior", "fastmathFlags")), " : ")
    if op.name.endswith(("fptrunc", "fpext", "sitofp", "uitofp")):
        p.write(p.type(op.operand("arg_0").type), " to ", p.type(op.results[0].type))
    else:
        p.write(p.type(op.results[0].type))


#: MLIR names a constrained intrinsic's operands arg_0, arg_1, ...
for _name, _arity in (("fadd", 2), ("fsub", 2), ("fmul", 2), ("fdiv", 2), ("frem", 2), ("fma", 3), ("fmuladd", 3),
                      ("fptrunc", 1), ("fpext", 1), ("sitofp", 1), ("uitofp", 1)):
    dialect.op(f"llvm.intr.experimental.constrained.{_name}", f"Constrained floating-point {_name}.",
               properties=("roundingmode", "fpExceptionBehavior", "fastmathFlags"),
               print=safe_printer(_print_constrained),
               names=OpSignature.of(tuple(f"arg_{i}" for i in range(_arity)), ("res",)))


@dialect.rule("llvm_intr_constrained")
def _llvm_intr_constrained(ctx, children):
    name = children[0]
    rest = list(children[1:])
    to_type = rest.pop()
    type = rest.pop()
    attrs = rest.pop()
    values = [c for c in rest if c is not None and c.type == "VALUE_ID"]
    words = [c for c in rest if c is not None and c.type != "VALUE_ID"]
    attributes = {}
    _fp_words(ctx, words, attributes)
    merge_attrs(attributes, attrs)
    if to_type is not None:
        return create(ctx, name.value, [ctx.resolve(values[0], type)], [to_type], attributes)
    return create(ctx, name.value, [ctx.resolve(v, type) for v in values], [type], attributes)


def _print_constrained_call(p, op) -> None:
    p.write(op.name, " ", escape_string(op.attr("intrinsic").value), "(", p.values(op.operands), ")",
            _fp_words_text(op), p.attr_dict(op.attributes, elide=("intrinsic", "roundingmode",
                                                                  "fpExceptionBehavior")),
            " : ", p.function_type(op.operand_types, op.result_types))


dialect.op("llvm.intr.experimental.constrained_fp_call", "A constrained floating-point intrinsic call.",
           properties=("intrinsic", "roundingmode", "fpExceptionBehavior"), print=safe_printer(_print_constrained_call),
           names=OpSignature.of(("args*",), ("res",), ("intrinsic",)))


@dialect.rule("llvm_constrained_call")
def _llvm_constrained_call(ctx, children):
    name, uses = children[0], children[1]
    words, attrs, ftype = [w for w in children[2:-2] if w is not None], children[-2], children[-1]
    attributes = {"intrinsic": StringAttr(string_value(ctx, name))}
    _fp_words(ctx, words, attributes)
    merge_attrs(attributes, attrs)
    return create(ctx, "llvm.intr.experimental.constrained_fp_call", ctx.resolve_all(uses, ftype.inputs),
                  ftype.results, attributes)


# ---- intrinsics in generic form only (iree-opt 3.13 has no custom form for them) ------------
def _verify_same_int(op) -> None:
    if len(op.operands) != 1 or len(op.results) != 1 or op.operand("in").type != op.results[0].type:
        raise VerifyError("requires one operand and one result of the same type")
    t = op.operand("in").type
    if not _is_int(t):
        raise _type_error(0, INT_LIKE, t)


def _verify_mem_intr(op) -> None:
    for i in (0, 1) if op.name != "llvm.intr.memset" else (0,):
        if i < len(op.operands) and not LT.is_pointer(op.operands[i].type):
            raise _type_error(i, "LLVM pointer type", op.operands[i].type)


for _name, _prop in (("abs", "is_int_min_poison"), ("ctlz", "is_zero_poison"), ("cttz", "is_zero_poison")):
    dialect.op(f"llvm.intr.{_name}", f"The LLVM intrinsic `llvm.{_name}`.", traits=(PURE,), properties=(_prop,),
               verify=_verify_same_int, names=OpSignature.of(("in",), ("res",)))
#: memcpy and memmove copy `src` to `dst`; memset fills `dst` with `val` (`len` bytes: an operand, or the
#: attribute of the `.inline` forms).
for _name, _operands, _props in (("memcpy", ("dst", "src", "len"), ("isVolatile",)),
                                 ("memmove", ("dst", "src", "len"), ("isVolatile",)),
                                 ("memset", ("dst", "val", "len"), ("isVolatile",)),
                                 ("memcpy.inline", ("dst", "src"), ("isVolatile", "len")),
                                 ("memset.inline", ("dst", "val"), ("isVolatile", "len"))):
    dialect.op(f"llvm.intr.{_name}", f"The LLVM intrinsic `llvm.{_name}`.",
               properties=_props + ("access_groups", "alias_scopes", "noalias_scopes", "tbaa"),
               verify=_verify_mem_intr, names=OpSignature.of(_operands, (), _props))
dialect.op("llvm.intr.is.fpclass", "The LLVM intrinsic `llvm.is.fpclass`.", traits=(PURE,), properties=("bit",),
           names=OpSignature.of(("in",), ("res",), ("bit",)))


def _print_intr_nullary(p, op) -> None:
    p.write(op.name, p.op_attr_dict(op))
    if op.results:
        p.write(" : ", p.type(op.results[0].type))


for _name, _pure in (("trap", False), ("debugtrap", False), ("stacksave", False), ("stepvector", True)):
    dialect.op(f"llvm.intr.{_name}", f"The LLVM intrinsic `llvm.{_name}`.", traits=(PURE,) if _pure else (),
               print=safe_printer(_print_intr_nullary),
               names=OpSignature.of((), ("res",) if _name in ("stacksave", "stepvector") else ()))


@dialect.rule("llvm_intr_nullary")
def _llvm_intr_nullary(ctx, children):
    name, attrs, type = children
    wants_result = name.value in ("llvm.intr.stacksave", "llvm.intr.stepvector")
    if wants_result != (type is not None):
        raise ctx.fail(f"'{name.value}' " + ("needs a result type" if wants_result else "has no result"), name)
    return create(ctx, name.value, (), [type] if type is not None else [], dict(attrs or {}))


dialect.op("llvm.intr.expect", "The LLVM intrinsic `llvm.expect`.", traits=(PURE,),
           print=safe_printer(lambda p, op: p.write(op.name, " ", p.values(op.operands), p.op_attr_dict(op), " : ",
                                             p.type(op.results[0].type))),
           names=OpSignature.of(("val", "expected"), ("res",), ()))
dialect.op("llvm.intr.ptrmask", "The LLVM intrinsic `llvm.ptrmask`.", traits=(PURE,),
           print=safe_printer(lambda p, op: p.write(op.name, " ", p.values(op.operands), p.op_attr_dict(op), " : ",
                                             p.function_type(op.operand_types, op.result_types))),
           names=OpSignature.of(("ptr", "mask"), ("res",), ()))


@dialect.rule("llvm_intr_expect")
def _llvm_intr_expect(ctx, children):
    a, b, attrs, type = children
    return create(ctx, "llvm.intr.expect", [ctx.resolve(a, type), ctx.resolve(b, type)], [type], dict(attrs or {}))


@dialect.rule("llvm_intr_ptrmask")
def _llvm_intr_ptrmask(ctx, children):
    a, b, attrs, ftype = children
    return create(ctx, "llvm.intr.ptrmask", ctx.resolve_all([a, b], ftype.inputs), ftype.results, dict(attrs or {}))
