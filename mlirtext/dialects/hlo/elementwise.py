"""Elementwise ops: the unary and binary families, complex, compare, select, clamp,
conversions, reduce_precision (and mhlo's own unary ops, copy, bitcast,
stochastic_convert; chlo's special functions): declarations with their formats' custom pieces, and
checks.
"""
from __future__ import annotations

import re

from ...ir import types as T
from ...ir.attributes import IntegerAttr
from .. import hlo_attrs as A
from ..assembly_format import Custom
from ..common import shaped_like
from .declare import HloOp
from .shared import (bitwidth, bounds_of, check_inferred, compatible_dims, compatible_elements,
                     compatible_shape_and_el, compatible_shapes, elt, fail, is_quant, is_tensor, nonneg_attr,
                     positive_attr, qtype, quoted, rank_of, raw_dims, same_shapes, shape_of, with_elt)
from .syntax import (CAST, FUNCTIONAL, UNARY_FORMAT, EnumWord, HloFormat, need, same_types, same_types_family,
                     same_types_format, sig_func)


#: Elementwise unary ops without inherent attributes.
UNARY = ("abs", "ceil", "count_leading_zeros", "floor", "imag", "is_finite", "negate", "not",
         "popcnt", "real", "round_nearest_afz", "round_nearest_even", "sign")
#: Elementwise unary transcendental ops carrying an optional `result_accuracy`.
UNARY_ACCURACY = ("cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one",
                  "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh")
#: Elementwise binary ops.
BINARY = ("add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply", "or", "power",
          "remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical", "subtract", "xor")


def _parse_complex_types(ctx, name, t):
    """custom<ComplexOpType>: `tensor<..xcomplex<E>>` (operands: the parts) or a function type."""
    if isinstance(t, T.FunctionType):
        return same_types(2).parse(ctx, name, t)
    if not isinstance(t, (T.RankedTensorType, T.UnrankedTensorType)) or \
            not isinstance(T.element_type(t), T.ComplexType):
        raise ctx.fail(f"custom op '{name}' expected tensor with complex element type")
    part = shaped_like(t, T.element_type(t).element)
    return part, part, t


def _print_complex_types(p, op):
    t = op.result_named("result").type
    e = T.element_type(t)
    if isinstance(e, T.ComplexType) and op.operand_types == [shaped_like(t, e.element)] * 2:
        return " " + p.type(t), ()
    return " " + sig_func(p, op), ()


def _parse_select_types(ctx, name, types):
    """custom<SelectOpType>: `pred type, T` or a function type."""
    if len(types) == 2:
        return types[0], types[1], types[1], types[1]
    if len(types) == 1 and isinstance(types[0], T.FunctionType):
        ftype = types[0]
        if len(ftype.inputs) != 3 or len(ftype.results) != 1:
            raise ctx.fail(f"custom op '{name}' expected a function type with 3 inputs and 1 result")
        return (*ftype.inputs, ftype.results[0])
    raise ctx.fail(f"custom op '{name}' expected functional type or list of two types")


def _print_select_types(p, op):
    pred, a, b = op.operand_types
    if a == b == op.result_named("result").type:
        return f" {p.type(pred)}, {p.type(a)}", ()
    return " " + sig_func(p, op), ()


_SELECT_TYPES = Custom("types", _parse_select_types, _print_select_types)
_COMPLEX_TYPES = Custom("type", _parse_complex_types, _print_complex_types)
_FORMAT = re.compile(r"e(\d+)m(\d+)\Z")


def _parse_exponent_mantissa(ctx, name, tok):
    """custom<ExponentMantissa>: `e5m10` -> exponent_bits 5, mantissa_bits 10 (i32)."""
    if tok.type == "STRING":  # as MLIR's parseKeyword: a string is no keyword
        raise ctx.fail(f"custom op '{name}' expected valid keyword", tok)
    m = _FORMAT.match(tok.value)
    if m is None:
        raise ctx.fail(f"custom op '{name}' expected exponent mantissa in format e#m#, saw {tok.value}", tok)
    return {"exponent_bits": IntegerAttr(int(m.group(1)), T.i32), "mantissa_bits": IntegerAttr(int(m.group(2)), T.i32)}


def _print_exponent_mantissa(p, op):
    e, m = op.attr("exponent_bits"), op.attr("mantissa_bits")
    need(isinstance(e, IntegerAttr) and isinstance(m, IntegerAttr) and e.type == T.i32 and m.type == T.i32)
    return f" e{e.value}m{m.value}", ("exponent_bits", "mantissa_bits")


_EXPONENT_MANTISSA = Custom("(BARE_ID | STRING)", _parse_exponent_mantissa, _print_exponent_mantissa)


def _bounded_compatible(inferred, actual) -> bool:
    """A static dimension of `actual` must fit the bound of a dynamic one of `inferred`."""
    si, sa, b = shape_of(inferred), shape_of(actual), bounds_of(inferred)
    if si is None or sa is None or b is None or len(si) != len(sa) or len(b) != len(si):
        return True
    return all(not (di is None and bd is not None and da is not None and da > bd)
               for di, da, bd in zip(si, sa, b))


def check_inferred_bounded(op, inferred) -> None:
    if list(inferred) == op.result_types:
        return  # exactly the inferred types: compatible, and within their own bounds
    check_inferred(op, inferred)
    for a, b in zip(inferred, op.result_types):
        if not _bounded_compatible(a, b):
            fail(f"inferred type(s) {quoted(inferred)} are incompatible with return type(s) of operation "
                 f"{quoted(op.result_types)}")


def _real_of(e):
    return e.element if isinstance(e, T.ComplexType) else e


def verify_binary_quant(op) -> None:
    if len(op.operands) != 2 or not op.results:
        return
    l, r, o = op.operand_types[0], op.operand_types[1], op.result_types[0]
    ql, qr, qo = qtype(l), qtype(r), qtype(o)
    if (ql is None) != (qo is None) or (qr is None) != (qo is None):
        fail("all operands and results to be either quantized or non-quantized")
    if qo is None:
        return

    if ql.width != qo.width or qr.width != qo.width:
        fail("mismatched operands and result quantization storage types")
    if ql.expressed != qo.expressed or qr.expressed != qo.expressed:
        fail("mismatched operands and result quantization expressed types")
    if (ql.per_axis or qr.per_axis) and not qo.per_axis:
        fail("result is not per_axis quantized but lhs or rhs are")
    if ql.per_axis and ql.axis != qo.axis:
        fail("quantization_dimension of lhs and result are not same")
    if qr.per_axis and qr.axis != qo.axis:
        fail("quantization_dimension of rhs and result are not same")


def verify_result_accuracy(op) -> None:
    a = op.attr("result_accuracy")
    if a is None:
        return
    text = str(a)
    m = re.search(r"mode\s*=\s*#\w+\.result_accuracy_mode<\s*(\w+)\s*>", text)
    mode = m.group(1) if m else "DEFAULT"
    nums = {}
    for k in ("atol", "rtol", "ulps"):
        mm = re.search(k + r"\s*=\s*(-?[\d.eE+-]+)", text)
        nums[k] = float(mm.group(1)) if mm else 0.0
    if mode in ("DEFAULT", "HIGHEST") and any(v != 0 for v in nums.values()):
        fail(f"Invalid tolerances for ResultAccuracyAttr with mode {mode}, must be all zero.")
    if any(v < 0 for v in nums.values()):
        fail("Negative tolerance")


def _elementwise(op):
    types = op.operand_types + op.result_types
    if types and types.count(types[0]) == len(types):
        return  # one type throughout (the common case): none of the checks below can fail
    if not same_shapes(types):
        fail("requires the same shape for all operands and results")
    tensors = [t for t in types if is_tensor(t)]
    if any(not _bounded_compatible(a, b) for a in tensors for b in tensors):
        fail("requires compatible types for all operands and results")
    if tensors and not all(compatible_elements(tensors[0], t) for t in tensors):
        if not any(is_quant(t) for t in tensors):
            fail("requires compatible types for all operands and results")


def _compatible_with_result(op) -> None:
    """HLO_CompatibleOperandsAndResultType, a trait checked before the shape trait: every type is
    compatible with the result's (shapes with `?`, quantized types by storage and expressed type)."""
    types = op.operand_types + op.result_types
    if not op.results or types.count(types[0]) == len(types):
        return
    r = op.result_types[0]
    if not all(compatible_shapes(t, r) and compatible_elements(t, r) for t in types):
        fail("requires compatible types for all operands and results")


def _same_type_op(op):
    verify_result_accuracy(op)
    if op.name == "stablehlo.add":  # the one without the trait: its own quantization rules instead
        _elementwise(op)
        if any(is_quant(t) for t in op.operand_types + op.result_types):
            verify_binary_quant(op)
    else:
        _compatible_with_result(op)
        _elementwise(op)
    if op.operands and op.results:
        check_inferred_bounded(op, [op.operand_types[0]])


def _abs(op):
    t = op.operand("operand").type
    check_inferred(op, [with_elt(t, _real_of(elt(t)))])


def _real(op):
    if not same_shapes(op.operand_types + op.result_types):
        fail("requires the same shape for all operands and results")
    t = op.operand("operand").type
    check_inferred(op, [with_elt(t, _real_of(elt(t)))])


def _complex(op):
    if not same_shapes(op.operand_types + op.result_types):
        fail("requires the same shape for all operands and results")
    t = op.operand("lhs").type
    if elt(t) != elt(op.operand("rhs").type):
        fail("requires the same element type for all operands")
    check_inferred(op, [with_elt(t, T.ComplexType(elt(t)))])


def _is_finite(op):
    if not same_shapes(op.operand_types + op.result_types):
        fail("all non-scalar operands/results must have the same shape and base type")
    check_inferred(op, [with_elt(op.operand("operand").type, T.i1)])


_DIRECTIONS = {"EQ", "NE", "GE", "GT", "LE", "LT"}


def _compare(op):
    d = op.attr("comparison_direction")
    if d is not None and A.enum_word(d) not in _DIRECTIONS:
        fail("attribute 'comparison_direction' failed to satisfy constraint: Which comparison operation to "
             "perform.")
    if not same_shapes(op.operand_types + op.result_types):
        fail("requires the same shape for all operands and results")
    lhs = op.operand("lhs").type
    if not compatible_elements(lhs, op.operand("rhs").type):
        fail("requires compatible types for all operands")
    check_inferred(op, [with_elt(lhs, T.i1)])


def _select(op):
    p, a, b = (op.operand(n).type for n in ("pred", "on_true", "on_false"))
    if not compatible_shape_and_el(a, b):
        fail("requires compatible types for non-predicate operands")
    ps = shape_of(p)
    if ps is not None and len(ps) != 0 and not (rank_of(a) in (None, len(ps)) and compatible_shapes(p, a)):
        fail("requires the same shape for all operands")
    check_inferred(op, [a])


def _bitcast_convert(op):
    a, b = op.operand("operand").type, op.result_named("result").type
    ea, eb = elt(a), elt(b)
    if isinstance(ea, T.ComplexType) != isinstance(eb, T.ComplexType):
        fail(f"cannot convert between real and complex types, but got: '{a}' and '{b}'")
    wa, wb = bitwidth(ea), bitwidth(eb)
    sa, sb = shape_of(a), shape_of(b)
    if wa is None or wb is None or sa is None or sb is None:
        return
    if wa < wb:
        small, big = sa, sb
    else:
        small, big = sb, sa
    if wa != wb:
        if len(small) != len(big) + 1:
            fail(f"rank of smaller element type ({len(small)}) should be 1 more than rank of larger element type "
                 f"({len(big)}), but {len(small)} != {len(big)} + 1.")
        prefix = small[:-1]
        sw, bw = min(wa, wb), max(wa, wb)
        if small[-1] is not None and small[-1] * sw != bw:
            fail(f"requires compatible bit widths. Got: '{a}' and '{b}', but {sw} * {small[-1]} != {bw}.")
    else:
        prefix = small
    for x, y in zip(prefix, big):
        if not compatible_dims(x, y):
            fail(f"operand and result shapes must match except for the innermost dimension of the shape with "
                 f"the smaller element type. Got: '{a}' and '{b}'.")


def _clamp(op):
    if len(op.operands) != 3:
        return
    mn, x, mx = op.operand_types
    xs = shape_of(x)
    if xs is None:
        return
    for name, t in (("min", mn), ("max", mx)):
        s = shape_of(t)
        if s is not None and len(s) != 0 and not (len(s) == len(xs) and compatible_shapes(t, x)):
            fail(f"{name} shape [{raw_dims(s)}] is not scalar and is not compatible to operand shape "
                 f"[{raw_dims(xs)}]")
    check_inferred(op, [x])


def _reduce_precision(op):
    positive_attr(op, "exponent_bits", 32)
    nonneg_attr(op, "mantissa_bits", 32)


def _logical(op):
    for i, t in enumerate(op.operand_types):
        e = elt(t)
        if is_tensor(t) and not isinstance(e, T.IntegerType):
            fail(f"operand #{i} must be ranked tensor of bool or 2/4/8/16/32/64-bit integer values, but got '{t}'")
    _same_type_op(op)


def _stochastic_convert(op):
    a, b = bitwidth(elt(op.operand("operand").type)), bitwidth(elt(op.operand("random").type))
    if a is not None and b is not None and a != b:
        fail(f"requires the random's bitwidth to match the operand's, but got: {b} and {a}")


_BINARY_FORMAT = HloFormat("binary", "$lhs `,` $rhs " + same_types_format("lhs", "rhs"), ("lhs", "rhs"),
                           custom={"SameTypes": same_types(2)})
#: The checks of the unary and binary ops other than `_same_type_op`.
_OWN_CHECKS = {"abs": _abs, "real": _real, "imag": _real, "is_finite": _is_finite, "not": _logical,
               "and": _logical, "or": _logical, "xor": _logical}

OPS = (
    *(HloOp(n, f"Elementwise {n}.", verify=_OWN_CHECKS.get(n, _same_type_op), format=UNARY_FORMAT)
      for n in UNARY),
    *(HloOp(n, f"Elementwise {n}.", ("result_accuracy",), verify=_same_type_op, format=UNARY_FORMAT)
      for n in UNARY_ACCURACY),
    HloOp("convert", "Elementwise convert.", format=UNARY_FORMAT),
    *(HloOp(n, f"Elementwise {n}.", verify=_OWN_CHECKS.get(n, _same_type_op), format=_BINARY_FORMAT)
      for n in BINARY if n != "complex"),
    HloOp("complex", "Elementwise complex.", verify=_complex,
          format=HloFormat("complex", "$lhs `,` $rhs attr-dict `:` custom<ComplexTypes>(type($lhs), type($rhs), "
                           "type($result))", ("lhs", "rhs"), custom={"ComplexTypes": _COMPLEX_TYPES})),
    HloOp("clamp", "Clamps between a minimum and a maximum.", verify=_clamp,
          format=HloFormat("clamp", "$min `,` $operand `,` $max " + same_types_format("min", "operand", "max"),
                           ("min", "operand", "max"), custom={"SameTypes": same_types(3)})),
    HloOp("select", "Elementwise choice by a predicate.", verify=_select,
          format=HloFormat("select", "$pred `,` $on_true `,` $on_false attr-dict `:` custom<SelectTypes>("
                           "type($pred), type($on_true), type($on_false), type($result))",
                           ("pred", "on_true", "on_false"), custom={"SelectTypes": _SELECT_TYPES})),
    HloOp("compare", "Elementwise comparison.", ("comparison_direction", "compare_type"), verify=_compare,
          format=HloFormat("compare", "$comparison_direction `,` $lhs `,` $rhs (`,` $compare_type^)? " + FUNCTIONAL,
                           ("lhs", "rhs"),
                           {"comparison_direction": lambda prefix: EnumWord(prefix, "comparison_direction"),
                            "compare_type": lambda prefix: EnumWord(prefix, "comparison_type")})),
    HloOp("bitcast_convert", "Elementwise bitcast_convert.", verify=_bitcast_convert, format=CAST),
    HloOp("reduce_precision", "Rounds to a smaller float format.", ("exponent_bits", "mantissa_bits"),
          verify=_reduce_precision,
          format=HloFormat("reduce_precision", "$operand `,` `format` `=` custom<ExponentMantissa> "
                           + same_types_format("operand", result="output"), ("operand",),
                           custom={"ExponentMantissa": _EXPONENT_MANTISSA, "SameTypes": same_types(1)},
                           results=("output",))),
)

#: mhlo's own.
MHLO_OPS = (
    *(HloOp(n, f"Elementwise {n}.", verify=_same_type_op)
      for n in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "erf")),
    HloOp("bitcast", "Bitcast with a layout change.", format=same_types_family("bitcast", "operand")),
    HloOp("copy", "Copies a value.", ("cross_program_prefetch_index",), format=same_types_family("copy", "operand")),
    HloOp("stochastic_convert", "Converts with stochastic rounding.", verify=_stochastic_convert,
          format=same_types_family("stochastic_convert", "operand", "random")),
)

#: chlo's elementwise unary special functions.
CHLO_UNARY = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "digamma", "erf",
              "erf_inv", "erfc", "is_inf", "is_neg_inf", "is_pos_inf", "lgamma", "sinh", "square", "tan")
#: chlo's same-shape binaries.
CHLO_BINARY = ("next_after", "polygamma", "zeta", "mulhi")
_CHLO_UNARY_FORMAT = HloFormat("unary", "$operand attr-dict `:` type($operand) `->` type($result)", ("operand",))
_CHLO_BINARY_FORMAT = HloFormat("binary", "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)",
                                ("lhs", "rhs"))

#: chlo's (checked by their type constraints alone).
CHLO_OPS = (
    *(HloOp(n, f"Elementwise {n}.", format=_CHLO_UNARY_FORMAT) for n in CHLO_UNARY),
    *(HloOp(n, f"Elementwise {n}.", format=_CHLO_BINARY_FORMAT) for n in CHLO_BINARY),
)
