"""hlo -> tosa: stablehlo and mhlo ops that have a TOSA form, one small pattern per family.

Every pattern converts only where TOSA means the same thing: float -> int
`convert` (TOSA rounds to nearest, StableHLO truncates), float `divide` (TOSA
has only a reciprocal) and TOTALORDER or UNSIGNED compares are left alone, and
the conversion reports them. Shapes must be static: TOSA shape operands are
constants.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...dialects.hlo_attrs import enum_word, int_list
from ...ir import types as T
from ...ir.arrays import dtype_of
from ...ir.attributes import FloatAttr, IntegerAttr
from ...ir.core import Operation
from ..conversion import ConversionTarget, apply_conversion
from ..passes import Pass
from ..rewriter import RewritePattern
from .build import all_static, empty, hlo_names, i32_array, short_name, tensor_of, tosa_const, tosa_enum, tosa_shape


def _elt(value) -> T.Type:
    return T.element_type(value.type)


def _is_bool(t: T.Type) -> bool:
    return T.element_type(t) == T.i1


def _result_type(op: Operation) -> T.RankedTensorType:
    return op.results[0].type


def _unsigned(t: T.Type) -> bool:
    e = T.element_type(t)
    return isinstance(e, T.IntegerType) and e.is_unsigned


def _has_elements(t: T.Type) -> bool:
    return not isinstance(t, T.RankedTensorType) or 0 not in t.shape


class _Pattern(RewritePattern):
    """A pattern for ranked, statically shaped ops on signless/signed types with at least one
    element (what TOSA can express: no unsigned integers, no empty tensors)."""

    def match_and_rewrite(self, op, rw) -> bool:
        types = [*(v.type for v in op.operands), *(r.type for r in op.results)]
        if not all_static(*types) or any(map(_unsigned, types)) or not all(map(_has_elements, types)):
            return False
        return self.rewrite(op, rw)


#: Ops whose effects matter even when their results are empty.
_EFFECTFUL = frozenset({"custom_call", "infeed", "outfeed", "send", "recv", "all_reduce", "all_gather",
                        "all_to_all", "collective_permute", "collective_broadcast", "reduce_scatter",
                        "after_all", "create_token", "rng_bit_generator"})


class EmptyResults(RewritePattern):
    """A pure hlo op whose results are all empty tensors computes nothing: each result is a
    `tensor.empty` (TOSA has no empty tensors, and linalg has nothing to do). Tried after
    every pattern for a named op."""

    def match_and_rewrite(self, op, rw) -> bool:
        if op.dialect not in HLO_DIALECTS or op.regions or short_name(op) in _EFFECTFUL or not op.results:
            return False
        types = [r.type for r in op.results]
        if not all(isinstance(t, T.RankedTensorType) and all_static(t) and not _has_elements(t) for t in types):
            return False
        rw.replace_op(op, [empty(rw, op, t) for t in types])
        return True

    def rewrite(self, op, rw) -> bool:
        raise NotImplementedError


# ---- elementwise ----------------------------------------------------------------------------
_UNARY_FLOAT = {"exponential": "tosa.exp", "log": "tosa.log", "tanh": "tosa.tanh", "floor": "tosa.floor",
                "ceil": "tosa.ceil", "rsqrt": "tosa.rsqrt", "logistic": "tosa.sigmoid", "sine": "tosa.sin",
                "cosine": "tosa.cos"}
_BINARY = {"add": "tosa.add", "subtract": "tosa.sub", "power": "tosa.pow"}
_BITWISE = {"and": ("tosa.bitwise_and", "tosa.logical_and"), "or": ("tosa.bitwise_or", "tosa.logical_or"),
            "xor": ("tosa.bitwise_xor", "tosa.logical_xor")}


class UnaryFloat(_Pattern):
    ops = hlo_names(*_UNARY_FLOAT)

    def rewrite(self, op, rw) -> bool:
        if not T.is_float(_elt(op.operand("operand"))):
            return False
        new = rw.create(op, _UNARY_FLOAT[short_name(op)], op.operands, [_result_type(op)], location_of=op)
        rw.replace_op(op, new.results)
        return True


class Binary(_Pattern):
    ops = hlo_names(*_BINARY, "maximum", "minimum", "divide")

    def rewrite(self, op, rw) -> bool:
        kind, elt = short_name(op), _elt(op.operand("lhs"))
        if kind == "power" and not T.is_float(elt):
            return False
        if _is_bool(elt) and kind in ("add", "subtract"):
            return False  # StableHLO's boolean add is `or`: the Bitwise pattern handles it
        attrs = {}
        if kind in ("maximum", "minimum") and _is_bool(elt):
            name = "tosa.logical_or" if kind == "maximum" else "tosa.logical_and"  # true > false
        elif kind in ("maximum", "minimum"):
            name = f"tosa.{kind}"
            if T.is_float(elt):
                attrs["nan_mode"] = tosa_enum("nan_mode", "PROPAGATE")
        elif kind == "divide":
            if not T.is_integer(elt):
                return False  # a/b is not a*reciprocal(b) bit for bit
            name = "tosa.intdiv"
        else:
            name = _BINARY[kind]
        new = rw.create(op, name, op.operands, [_result_type(op)], attrs)
        rw.replace_op(op, new.results)
        return True


class Multiply(_Pattern):
    ops = hlo_names("multiply")

    def rewrite(self, op, rw) -> bool:
        if _is_bool(op.results[0].type):
            new = rw.create(op, "tosa.logical_and", op.operands, [_result_type(op)])
            rw.replace_op(op, new.results)
            return True
        shift = tosa_const(rw, op, 0, tensor_of([1], T.i8))
        new = rw.create(op, "tosa.mul", [*op.operands, shift], [_result_type(op)])
        rw.replace_op(op, new.results)
        return True


class Bitwise(_Pattern):
    ops = hlo_names(*_BITWISE, "not", "add")

    def rewrite(self, op, rw) -> bool:
        kind = short_name(op)
        boolean = _is_bool(op.operand("operand" if kind == "not" else "lhs").type)
        if kind == "add":
            if not boolean:
                return False  # the Binary pattern's
            name = "tosa.logical_or"  # StableHLO: a boolean add is a logical or
        elif kind == "not":
            name = "tosa.logical_not" if boolean else "tosa.bitwise_not"
        else:
            name = _BITWISE[kind][1 if boolean else 0]
        new = rw.create(op, name, op.operands, [_result_type(op)])
        rw.replace_op(op, new.results)
        return True


class AbsNegate(_Pattern):
    ops = hlo_names("abs", "negate")

    def rewrite(self, op, rw) -> bool:
        t = _result_type(op)
        if T.element_type(op.operand("operand").type) != t.element or isinstance(t.element, T.ComplexType):
            return False
        if short_name(op) == "abs":
            new = rw.create(op, "tosa.abs", op.operands, [t])
        elif T.is_integer(t.element):
            return False  # tosa.negate saturates (-(-128) is 127), StableHLO wraps: hlo_to_linalg
        else:
            zero = tensor_of([1], t.element)
            zps = [tosa_const(rw, op, 0, zero), tosa_const(rw, op, 0, zero)]
            new = rw.create(op, "tosa.negate", [op.operand("operand"), *zps], [t])
        rw.replace_op(op, new.results)
        return True


_GREATER = {"GT": ("tosa.greater", False), "GE": ("tosa.greater_equal", False),
            "LT": ("tosa.greater", True), "LE": ("tosa.greater_equal", True)}


class Compare(_Pattern):
    ops = hlo_names("compare")

    def rewrite(self, op, rw) -> bool:
        direction = enum_word(op.attr("comparison_direction"))
        kind = enum_word(op.attr("compare_type"))
        elt = _elt(op.operand("lhs"))
        if kind in ("TOTALORDER", "UNSIGNED") or (isinstance(elt, T.IntegerType) and elt.is_unsigned) \
                or isinstance(elt, T.ComplexType):
            return False
        a, b = op.operands
        t = _result_type(op)
        if direction in ("EQ", "NE"):
            new = rw.create(op, "tosa.equal", [a, b], [t])
            if direction == "NE":
                new = rw.create(op, "tosa.logical_not", new.results, [t])
        elif direction in _GREATER and not _is_bool(a.type):
            name, swap = _GREATER[direction]
            new = rw.create(op, name, [b, a] if swap else [a, b], [t])
        else:
            return False
        rw.replace_op(op, new.results)
        return True


class Select(_Pattern):
    ops = hlo_names("select")

    def rewrite(self, op, rw) -> bool:
        pred, a, b = op.operands
        t = _result_type(op)
        if pred.type.rank != t.rank:  # a scalar predicate: TOSA broadcasts a [1, 1, ...] one
            ones = [1] * t.rank
            pred = rw.create(op, "tosa.reshape", [pred, tosa_shape(rw, op, ones)],
                             [tensor_of(ones, T.i1)]).result
        new = rw.create(op, "tosa.select", [pred, a, b], [t])
        rw.replace_op(op, new.results)
        return True


class Clamp(_Pattern):
    ops = hlo_names("clamp")

    def rewrite(self, op, rw) -> bool:
        from ..constants import constant_value
        from ...dialects.common import splat_value
        low, x, high = op.operands
        bounds = [splat_value(constant_value(v)) for v in (low, high)]
        elt = _elt(x)
        if any(b is None for b in bounds) or isinstance(elt, T.ComplexType) or _is_bool(x.type):
            return False
        make = (lambda v: FloatAttr(float(v), elt)) if T.is_float(elt) else (lambda v: IntegerAttr(int(v), elt))
        attrs = {"min_val": make(bounds[0]), "max_val": make(bounds[1])}
        if T.is_float(elt):
            attrs["nan_mode"] = tosa_enum("nan_mode", "PROPAGATE")
        new = rw.create(op, "tosa.clamp", [x], [_result_type(op)], attrs)
        rw.replace_op(op, new.results)
        return True


class Convert(_Pattern):
    ops = hlo_names("convert")

    def rewrite(self, op, rw) -> bool:
        src, dst = _elt(op.operand("operand")), _result_type(op).element
        if T.is_float(src) and not T.is_float(dst):
            return False  # StableHLO truncates toward zero, TOSA rounds to nearest
        if isinstance(src, T.ComplexType) or isinstance(dst, T.ComplexType):
            return False
        if any(isinstance(e, T.IntegerType) and e.is_unsigned for e in (src, dst)):
            return False
        new = rw.create(op, "tosa.cast", op.operands, [_result_type(op)])
        rw.replace_op(op, new.results)
        return True


# ---- constants and shapes ---------------------------------------------------------------------
class Constant(_Pattern):
    ops = hlo_names("constant")

    def rewrite(self, op, rw) -> bool:
        t = _result_type(op)
        if isinstance(t.element, T.ComplexType):
            return False
        new = rw.create(op, "tosa.const", (), [t], {"values": op.attr("value")})
        rw.replace_op(op, new.results)
        return True


class Iota(_Pattern):
    ops = hlo_names("iota")

    def rewrite(self, op, rw) -> bool:
        t = _result_type(op)
        dim = int_list(op.attr("iota_dimension")) or [
            op.attr("iota_dimension").value]
        if isinstance(t.element, T.ComplexType):
            return False
        shape = [1] * t.rank
        shape[dim[0]] = t.shape[dim[0]]
        values = np.broadcast_to(np.arange(t.shape[dim[0]]).reshape(shape), t.shape).astype(dtype_of(t))
        rw.replace_op(op, [tosa_const(rw, op, values, t)])
        return True


class Reshape(_Pattern):
    ops = hlo_names("reshape")

    def rewrite(self, op, rw) -> bool:
        t = _result_type(op)
        new = rw.create(op, "tosa.reshape", [op.operand("operand"), tosa_shape(rw, op, t.shape)], [t])
        rw.replace_op(op, new.results)
        return True


class Transpose(_Pattern):
    ops = hlo_names("transpose")

    def rewrite(self, op, rw) -> bool:
        perm = int_list(op.attr("permutation"))
        new = rw.create(op, "tosa.transpose", op.operands, [_result_type(op)], {"perms": i32_array(perm)})
        rw.replace_op(op, new.results)
        return True


class BroadcastInDim(_Pattern):
    """Transpose the operand's dims into result order, reshape to the result's rank with
    ones, then tile: exact (no arithmetic touches the values)."""
    ops = hlo_names("broadcast_in_dim")

    def rewrite(self, op, rw) -> bool:
        x = op.operand("operand")
        src, t = x.type, _result_type(op)
        dims = int_list(op.attr("broadcast_dimensions"))
        order = sorted(range(len(dims)), key=lambda i: dims[i])
        if order != list(range(len(dims))):
            shape = [src.shape[i] for i in order]
            x = rw.create(op, "tosa.transpose", [x], [tensor_of(shape, src.element)],
                          {"perms": i32_array(order)}).result
        aligned = [1] * t.rank
        for i in order:
            aligned[dims[i]] = src.shape[i]
        if list(x.type.shape) != aligned:
            x = rw.create(op, "tosa.reshape", [x, tosa_shape(rw, op, aligned)],
                          [tensor_of(aligned, src.element)]).result
        multiples = [want // have for want, have in zip(t.shape, aligned)]
        if any(m != 1 for m in multiples):
            x = rw.create(op, "tosa.tile", [x, tosa_shape(rw, op, multiples)], [t]).result
        rw.replace_op(op, [x])
        return True


class Slice(_Pattern):
    ops = hlo_names("slice")

    def rewrite(self, op, rw) -> bool:
        start = int_list(op.attr("start_indices"))
        strides = int_list(op.attr("strides"))
        if strides is None or any(s != 1 for s in strides):
            return False
        t = _result_type(op)
        new = rw.create(op, "tosa.slice", [op.operand("operand"), tosa_shape(rw, op, start), tosa_shape(rw, op, t.shape)],
                        [t])
        rw.replace_op(op, new.results)
        return True


class Concatenate(RewritePattern):
    """tosa.concat of the operands that have elements (empty ones add nothing, and TOSA has
    no empty tensors)."""
    ops = hlo_names("concatenate")

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        inputs = [v for v in op.operands if _has_elements(v.type)]
        types = [t, *(v.type for v in op.operands)]
        if not all_static(*types) or any(map(_unsigned, types)) or not _has_elements(t):
            return False
        if len(inputs) == 1:
            rw.replace_op(op, inputs)
            return True
        dim = op.attr("dimension")
        axis = dim.value if isinstance(dim, IntegerAttr) else int_list(dim)[0]
        new = rw.create(op, "tosa.concat", inputs, [_result_type(op)], {"axis": IntegerAttr(axis, T.i32)})
        rw.replace_op(op, new.results)
        return True


class Reverse(_Pattern):
    ops = hlo_names("reverse")

    def rewrite(self, op, rw) -> bool:
        x = op.operand("operand")
        for axis in int_list(op.attr("dimensions")):
            x = rw.create(op, "tosa.reverse", [x], [_result_type(op)], {"axis": IntegerAttr(axis, T.i32)}).result
        rw.replace_op(op, [x])
        return True


# ---- reductions and contractions ------------------------------------------------------------
#: reduce body op -> (TOSA reduction, combining op for the init value, the init that needs no combining)
_REDUCTIONS = {"add": ("tosa.reduce_sum", "tosa.add", 0), "multiply": ("tosa.reduce_product", None, 1),
               "maximum": ("tosa.reduce_max", "tosa.maximum", -np.inf),
               "minimum": ("tosa.reduce_min", "tosa.minimum", np.inf),
               "and": ("tosa.reduce_all", None, True), "or": ("tosa.reduce_any", None, False)}


def reduction_kind(op: Operation):
    """`add`, `maximum`, ... when `op`'s body is one such op of its two block arguments."""
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1:
        return None
    block = op.regions[0].blocks[0]
    if len(block.ops) != 2 or len(block.arguments) != 2:
        return None
    body, ret = block.ops
    if ret.operands != [body.results[0]] or set(body.operands) != set(block.arguments) or \
            len(body.operands) != 2:
        return None
    return short_name(body)


class Reduce(_Pattern):
    """One TOSA reduction per reduced dim (keeping it as 1), a reshape to the result, and
    the init value combined in unless it is the reduction's identity."""
    ops = hlo_names("reduce")

    def rewrite(self, op, rw) -> bool:
        from ...dialects.common import splat_value
        from ..constants import constant_value
        kind = reduction_kind(op)
        if len(op.operands) != 2 or kind not in _REDUCTIONS:
            return False
        x, init = op.operands
        t = _result_type(op)
        name, combine, identity = _REDUCTIONS[kind]
        boolean = _is_bool(x.type)
        if kind in ("and", "or") and not boolean or kind in ("maximum", "minimum") and boolean:
            return False
        if kind in ("maximum", "minimum") and not T.is_float(t.element):
            identity = None  # the integer identity depends on the width: always combine
        init_value = splat_value(constant_value(init))
        needs_init = init_value is None or init_value != identity
        if needs_init and combine is None:
            return False
        shape = list(x.type.shape)
        for axis in sorted(int_list(op.attr("dimensions"))):
            shape[axis] = 1
            attrs = {"axis": IntegerAttr(axis, T.i32)}
            if name in ("tosa.reduce_max", "tosa.reduce_min") and T.is_float(t.element):
                attrs["nan_mode"] = tosa_enum("nan_mode", "PROPAGATE")
            x = rw.create(op, name, [x], [tensor_of(shape, t.element)], attrs).result
        x = rw.create(op, "tosa.reshape", [x, tosa_shape(rw, op, t.shape)], [t]).result
        if needs_init:
            ones = [1] * t.rank
            init = rw.create(op, "tosa.reshape", [init, tosa_shape(rw, op, ones)], [tensor_of(ones, t.element)]).result
            x = rw.create(op, combine, [init, x], [t]).result
        rw.replace_op(op, [x])
        return True


class DotGeneral(_Pattern):
    """Transpose each side to (batch, free, contracting) / (batch, contracting, free), flatten to
    rank 3, `tosa.matmul`, and reshape to StableHLO's result order (batch, lhs free, rhs free)."""
    ops = hlo_names("dot_general", "dot")

    def rewrite(self, op, rw) -> bool:
        from ...dialects.hlo_attrs import dot_dims
        lhs, rhs = op.operands
        lt, rt, t = lhs.type, rhs.type, _result_type(op)
        if short_name(op) == "dot":
            if lt.rank != 2 or rt.rank not in (1, 2):
                return False
            dims = {"lhs_batching_dimensions": [], "rhs_batching_dimensions": [],
                    "lhs_contracting_dimensions": [1], "rhs_contracting_dimensions": [0]}
        else:
            dims = dot_dims(op.attr("dot_dimension_numbers"))
        if dims is None or not _matmul_types(lt.element, rt.element, t.element):
            return False
        lb, rb = dims["lhs_batching_dimensions"], dims["rhs_batching_dimensions"]
        lc, rc = dims["lhs_contracting_dimensions"], dims["rhs_contracting_dimensions"]
        lf = [d for d in range(lt.rank) if d not in lb and d not in lc]
        rf = [d for d in range(rt.rank) if d not in rb and d not in rc]
        size = lambda ty, ds: int(np.prod([ty.shape[d] for d in ds], dtype=np.int64))
        B, M, K, N = size(lt, lb), size(lt, lf), size(lt, lc), size(rt, rf)
        a = _to_rank3(rw, op, lhs, lb + lf + lc, [B, M, K])
        b = _to_rank3(rw, op, rhs, rb + rc + rf, [B, K, N])
        zero = lambda e: tosa_const(rw, op, 0, tensor_of([1], e))
        # f16/bf16 products are summed in f32 and rounded once (TOSA's "fp32 accumulate" modes), as
        # the StableHLO reference interpreter does: an f16 accumulator would round at every step.
        acc = T.f32 if T.is_float(t.element) else t.element
        out = rw.create(op, "tosa.matmul", [a, b, zero(lt.element), zero(rt.element)],
                        [tensor_of([B, M, N], acc)]).result
        if acc != t.element:
            out = rw.create(op, "tosa.cast", [out], [tensor_of([B, M, N], t.element)]).result
        if [B, M, N] != list(t.shape):
            out = rw.create(op, "tosa.reshape", [out, tosa_shape(rw, op, t.shape)], [t]).result
        rw.replace_op(op, [out])
        return True


def _matmul_types(a: T.Type, b: T.Type, out: T.Type) -> bool:
    """Element types where tosa.matmul computes what dot_general does."""
    if a != b:
        return False
    if T.is_float(a):
        return out == a and a in (T.f32, T.f16, T.bf16)
    return a == T.i8 and out == T.i32 or a == T.i16 and out == T.IntegerType(48)


def _to_rank3(rw, op, value, order: list[int], shape3: list[int]):
    t = value.type
    if order != list(range(t.rank)):
        value = rw.create(op, "tosa.transpose", [value], [tensor_of([t.shape[d] for d in order], t.element)],
                          {"perms": i32_array(order)}).result
    if list(value.type.shape) != shape3:
        value = rw.create(op, "tosa.reshape", [value, tosa_shape(rw, op, shape3)],
                          [tensor_of(shape3, t.element)]).result
    return value


PATTERNS = [UnaryFloat(), Binary(), Multiply(), Bitwise(), AbsNegate(), Compare(), Select(), Clamp(),
            Convert(), Constant(), Iota(), Reshape(), Transpose(), BroadcastInDim(), Slice(),
            Concatenate(), Reverse(), Reduce(), DotGeneral(), EmptyResults()]

HLO_DIALECTS = frozenset({"stablehlo", "mhlo", "chlo"})
TARGET = ConversionTarget("tosa", legal_dialects=frozenset({"tosa", "func", "builtin", "arith", "math",
                                                            "tensor", "linalg", "check", "util", "scf"}))


@dataclass(frozen=True)
class ConvertHloToTosa(Pass):
    name = "convert-hlo-to-tosa"
    summary = "Lower stablehlo/mhlo to TOSA (ops without an exact TOSA form to linalg); report the ones left"

    def run(self, op: Operation) -> None:
        from .hlo_structured_to_linalg import PATTERNS as STRUCTURED
        from .hlo_op_lowerings import PATTERNS as OTHER_OPS
        from .hlo_to_linalg import PATTERNS as TO_LINALG
        from .linalg_generalize import PATTERNS as GENERALIZE
        apply_conversion(op, PATTERNS + TO_LINALG + STRUCTURED + OTHER_OPS + GENERALIZE, TARGET)
