"""tosa -> linalg on tensors.

Elementwise ops become one `linalg.generic` each, with TOSA's broadcasting
(a dimension of size 1 against a larger one) written into the indexing maps
and the scalar body in arith/math; `matmul` becomes `linalg.batch_matmul` on
a zero-filled init; reductions become `linalg.reduce` and an `expand_shape`
that keeps the reduced dimension; shape ops become tensor ops.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...dialects.linalg import structured_op
from ...ir import types as T
from ...ir.arrays import attr_to_array
from ...ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr
from ...ir.core import Block, Operation, Region
from ..constants import constant_value
from ..conversion import ConversionTarget, apply_conversion
from ..passes import Pass
from ..rewriter import RewritePattern
from .build import all_static, common_cast, dims_text, scalar_const, tensor_of

from .build import FASTMATH_NONE, Body, elementwise_generic, empty, insert


def i64_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i64, tuple(int(v) for v in values))


def _filled(rw, before, value, t: T.RankedTensorType):
    scalar = scalar_const(rw, before, value, t.element)
    return insert(rw, before, structured_op("linalg.fill", [scalar], [empty(rw, before, t)])).result


# ---- scalar bodies of TOSA's elementwise ops --------------------------------------------------------
def _float_or_int(float_name: str, int_name: str):
    def build(b: Body, args, op):
        t = args[0].type
        if T.is_float(t):
            return b.op(float_name, args, t, {"fastmath": FASTMATH_NONE})
        return b.op(int_name, args, t)
    return build


def _same(name: str, fastmath: bool = False):
    def build(b: Body, args, op):
        return b.op(name, args, op.results[0].type.element, {"fastmath": FASTMATH_NONE} if fastmath else None)
    return build


def _compare(float_pred: int, int_pred: int, swap: bool = False):
    def build(b: Body, args, op):
        a, c = (args[1], args[0]) if swap else (args[0], args[1])
        if T.is_float(a.type):
            return b.op("arith.cmpf", [a, c], T.i1, {"predicate": IntegerAttr(float_pred, T.i64),
                                                     "fastmath": FASTMATH_NONE})
        return b.op("arith.cmpi", [a, c], T.i1, {"predicate": IntegerAttr(int_pred, T.i64)})
    return build


def _negate(b: Body, args, op):
    x = args[0]
    if T.is_float(x.type):
        return b.op("arith.negf", [x], x.type, {"fastmath": FASTMATH_NONE})
    return b.op("arith.subi", [b.const(0, x.type), x], x.type)


def _abs(b: Body, args, op):
    x = args[0]
    if T.is_float(x.type):
        return b.op("math.absf", [x], x.type, {"fastmath": FASTMATH_NONE})
    return b.op("math.absi", [x], x.type)


def _sigmoid(b: Body, args, op):
    """1 / (1 + exp(-x)), as TOSA defines it."""
    x = args[0]
    t = x.type
    fm = {"fastmath": FASTMATH_NONE}
    neg = b.op("arith.negf", [x], t, fm)
    e = b.op("math.exp", [neg], t, fm)
    den = b.op("arith.addf", [b.const(1.0, t), e], t, fm)
    return b.op("arith.divf", [b.const(1.0, t), den], t, fm)


def _reciprocal(b: Body, args, op):
    x = args[0]
    return b.op("arith.divf", [b.const(1.0, x.type), x], x.type, {"fastmath": FASTMATH_NONE})


def _clamp(b: Body, args, op):
    x = args[0]
    t = x.type
    low, high = op.attr("min_val").value, op.attr("max_val").value
    if T.is_float(t):
        fm = {"fastmath": FASTMATH_NONE}
        lo = b.op("arith.maximumf", [x, b.const(low, t)], t, fm)
        return b.op("arith.minimumf", [lo, b.const(high, t)], t, fm)
    lo = b.op("arith.maxsi", [x, b.const(low, t)], t)
    return b.op("arith.minsi", [lo, b.const(high, t)], t)


def _cast(b: Body, args, op):
    x = args[0]
    src, dst = x.type, op.results[0].type.element
    common = common_cast(b, x, dst)
    if common is not None:
        return common
    if T.is_float(dst):
        return b.op("arith.sitofp", [x], dst)
    if dst == T.i1:
        return b.op("arith.cmpi", [x, b.const(0, src)], T.i1, {"predicate": IntegerAttr(1, T.i64)})  # ne
    if src == T.i1:
        return b.op("arith.extui", [x], dst)
    if src.width < dst.width:
        return b.op("arith.extsi", [x], dst)
    return b.op("arith.trunci", [x], dst)


def _intdiv(b: Body, args, op):
    return b.op("arith.divsi", args, args[0].type)


def _logical_shift_right(b: Body, args, op):
    return b.op("arith.shrui", args, args[0].type)


def _arith_shift_right(b: Body, args, op):
    """With `round`, TOSA adds the last bit shifted out: a >> s, plus 1 where s > 0 and
    bit s-1 of a is set (as MLIR's tosa-to-linalg does)."""
    a, amount = args
    t = a.type
    shifted = b.op("arith.shrsi", [a, amount], t)
    if op.attr("round") in (None, IntegerAttr(0, T.i1)):
        return shifted
    one, zero = b.const(1, t), b.const(0, t)
    positive = b.op("arith.cmpi", [amount, zero], T.i1, {"predicate": IntegerAttr(4, T.i64)})  # sgt
    last = b.op("arith.shrsi", [a, b.op("arith.subi", [amount, one], t)], t)
    # Shifting by s - 1 = -1 is poison in MLIR and LLVM, and `andi` would pass the poison on:
    # `select` takes the carry only where s > 0.
    last_bit = b.op("arith.andi", [last, one], t)
    carry = b.op("arith.select", [positive, last_bit, zero], t)
    return b.op("arith.addi", [shifted, carry], t)


def _clz(b: Body, args, op):
    return b.op("math.ctlz", args, args[0].type)


def _bitwise_not(b: Body, args, op):
    x = args[0]
    return b.op("arith.xori", [x, b.const(-1 if x.type != T.i1 else 1, x.type)], x.type)


def _max_min(float_name: str, int_name: str):
    def build(b: Body, args, op):
        t = args[0].type
        if T.is_float(t):
            case = op.attr("nan_mode")
            if case is not None and "IGNORE" in str(case):
                return None  # maxnumf/minnumf: not yet
            return b.op(float_name, args, t, {"fastmath": FASTMATH_NONE})
        return b.op(int_name, args, t)
    return build


# arith.cmpf predicates: 2 = ogt, 3 = oge, 1 = oeq; arith.cmpi: 4 = sgt, 5 = sge, 0 = eq.
ELEMENTWISE = {
    "tosa.add": _float_or_int("arith.addf", "arith.addi"),
    "tosa.sub": _float_or_int("arith.subf", "arith.subi"),
    "tosa.maximum": _max_min("arith.maximumf", "arith.maxsi"),
    "tosa.minimum": _max_min("arith.minimumf", "arith.minsi"),
    "tosa.pow": _same("math.powf", fastmath=True),
    "tosa.intdiv": _intdiv,
    "tosa.bitwise_and": _same("arith.andi"), "tosa.bitwise_or": _same("arith.ori"),
    "tosa.bitwise_xor": _same("arith.xori"), "tosa.bitwise_not": _bitwise_not,
    "tosa.logical_and": _same("arith.andi"), "tosa.logical_or": _same("arith.ori"),
    "tosa.logical_xor": _same("arith.xori"), "tosa.logical_not": _bitwise_not,
    "tosa.logical_left_shift": _same("arith.shli"), "tosa.logical_right_shift": _logical_shift_right,
    "tosa.arithmetic_right_shift": _arith_shift_right, "tosa.clz": _clz,
    "tosa.greater": _compare(2, 4), "tosa.greater_equal": _compare(3, 5), "tosa.equal": _compare(1, 0),
    "tosa.exp": _same("math.exp", True), "tosa.log": _same("math.log", True),
    "tosa.tanh": _same("math.tanh", True), "tosa.floor": _same("math.floor", True),
    "tosa.ceil": _same("math.ceil", True), "tosa.rsqrt": _same("math.rsqrt", True),
    "tosa.sin": _same("math.sin", True), "tosa.cos": _same("math.cos", True),
    "tosa.sigmoid": _sigmoid, "tosa.reciprocal": _reciprocal, "tosa.abs": _abs,
    "tosa.clamp": _clamp, "tosa.cast": _cast,
}


def _constant_shift(value) -> int | None:
    from ...dialects.common import splat_value
    shift = splat_value(constant_value(value))
    return None if shift is None else int(shift)


def _mul(shift: int):
    """TOSA's MUL: integers multiply in the result type (i32 from i8/i16 operands); with a
    shift the product is formed in i64 and rounded: (a * b + (1 << (shift - 1))) >> shift."""
    def build(b: Body, args, op):
        t = op.results[0].type.element
        if T.is_float(t):
            return b.op("arith.mulf", args, t, {"fastmath": FASTMATH_NONE})
        if shift == 0:
            x, y = (v if v.type == t else b.op("arith.extsi", [v], t) for v in args)
            return b.op("arith.muli", [x, y], t)
        x, y = (b.op("arith.extsi", [v], T.i64) for v in args)
        product = b.op("arith.addi", [b.op("arith.muli", [x, y], T.i64), b.const(1 << (shift - 1), T.i64)], T.i64)
        return b.op("arith.trunci", [b.op("arith.shrsi", [product, b.const(shift, T.i64)], T.i64)], t)
    return build


def _is_zero_const(value) -> bool:
    """A constant whose elements are all 0 (read as numbers: bf16 and f8 constants may be kept as
    their bits, in hex)."""
    try:
        return not attr_to_array(constant_value(value), value.type).astype(float).any()
    except ValueError:  # not a constant, or not one of numbers
        return False


class Elementwise(RewritePattern):
    ops = tuple(ELEMENTWISE) + ("tosa.mul", "tosa.negate", "tosa.select")

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        inputs = list(op.operands)
        if op.name == "tosa.mul":
            shift = _constant_shift(inputs[2]) if len(inputs) > 2 else 0
            if shift is None:
                return False  # a shift known only at run time: not yet
            inputs, build = inputs[:2], _mul(shift)
        elif op.name == "tosa.negate":
            floats = T.is_float(t.element)  # float zero points are zero by definition
            if not floats and not (_is_zero_const(inputs[1]) and _is_zero_const(inputs[2])):
                return False  # zero points: not yet
            inputs, build = inputs[:1], _negate
        elif op.name == "tosa.select":
            def build(b, args, op):
                return b.op("arith.select", args, args[1].type)
        else:
            build = ELEMENTWISE[op.name]
        if not all_static(t, *(v.type for v in inputs)) or any(v.type.rank != t.rank for v in inputs):
            return False
        probe = Block([T.element_type(v.type) for v in inputs])
        if build(Body(probe), probe.arguments, op) is None:
            return False  # the scalar form is not supported for these attributes
        generic = elementwise_generic(rw, op, inputs, t, lambda b, args: build(b, args, op))
        rw.replace_op(op, generic.results)
        return True


# ---- constants, shapes, data movement ------------------------------------------------------------
class Const(RewritePattern):
    ops = ("tosa.const",)

    def match_and_rewrite(self, op, rw) -> bool:
        new = rw.create(op, "arith.constant", (), [op.results[0].type], {"value": op.attr("values")})
        rw.replace_op(op, new.results)
        return True


def _shape_values(value) -> list[int] | None:
    from ...dialects.hlo_attrs import int_list
    owner = getattr(value, "op", None)
    if owner is None or owner.name != "tosa.const_shape":
        return None
    return int_list(owner.attr("values"))


class Reshape(RewritePattern):
    """Collapse to one dimension, then expand to the new shape (rank 0 on either side
    needs no intermediate step)."""
    ops = ("tosa.reshape",)

    def match_and_rewrite(self, op, rw) -> bool:
        x = op.operand("input1")
        src, dst = x.type, op.results[0].type
        if not all_static(src, dst):
            return False
        if src.rank == 0 or dst.rank == 0:
            name = "tensor.expand_shape" if src.rank == 0 else "tensor.collapse_shape"
            value = self._reshape(rw, op, name, x, [], dst)
        else:
            flat = x
            if src.rank != 1:
                flat = self._reshape(rw, op, "tensor.collapse_shape", x, [list(range(src.rank))],
                                     tensor_of([src.num_elements], src.element))
            value = flat
            if dst.rank != 1:
                value = self._reshape(rw, op, "tensor.expand_shape", flat, [list(range(dst.rank))], dst)
            elif flat.type != dst:
                return False
        rw.replace_op(op, [value])
        return True

    @staticmethod
    def _reshape(rw, op, name, x, groups, out):
        attrs = {"reassociation": ArrayAttr(tuple(ArrayAttr(tuple(IntegerAttr(i) for i in g)) for g in groups))}
        if name == "tensor.expand_shape":
            attrs["static_output_shape"] = i64_array(out.shape)
        return rw.create(op, name, [x], [out], attrs).result


class Transpose(RewritePattern):
    ops = ("tosa.transpose",)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if not all_static(t):
            return False
        perms = list(op.attr("perms").values)
        new = insert(rw, op, structured_op("linalg.transpose", [op.operand("input1")], [empty(rw, op, t)],
                                            {"permutation": i64_array(perms)}))
        rw.replace_op(op, new.results)
        return True


class Tile(RewritePattern):
    """Only the broadcasting use of tile (every tiled dimension has size 1)."""
    ops = ("tosa.tile",)

    def match_and_rewrite(self, op, rw) -> bool:
        x = op.operand("input1")
        t = op.results[0].type
        multiples = _shape_values(op.operand("multiples"))
        if multiples is None or not all_static(x.type, t) or \
                any(m != 1 and s != 1 for m, s in zip(multiples, x.type.shape)):
            return False
        generic = elementwise_generic(rw, op, [x], t, lambda b, args: args[0])
        rw.replace_op(op, generic.results)
        return True


class MatMul(RewritePattern):
    ops = ("tosa.matmul",)

    def match_and_rewrite(self, op, rw) -> bool:
        a, b, a_zp, b_zp = op.operands
        t = op.results[0].type
        if not (_is_zero_const(a_zp) and _is_zero_const(b_zp)) or not all_static(t):
            return False
        init = _filled(rw, op, 0, t)
        new = insert(rw, op, structured_op("linalg.batch_matmul", [a, b], [init]))
        rw.replace_op(op, new.results)
        return True


#: TOSA reduction -> (scalar combining op for floats, for integers/booleans, identity as a float)
_REDUCE = {"tosa.reduce_sum": ("arith.addf", "arith.addi", 0.0),
           "tosa.reduce_product": ("arith.mulf", "arith.muli", 1.0),
           "tosa.reduce_max": ("arith.maximumf", "arith.maxsi", float("-inf")),
           "tosa.reduce_min": ("arith.minimumf", "arith.minsi", float("inf")),
           "tosa.reduce_all": (None, "arith.andi", 1), "tosa.reduce_any": (None, "arith.ori", 0)}


class Reduce(RewritePattern):
    ops = tuple(_REDUCE)

    def match_and_rewrite(self, op, rw) -> bool:
        x = op.operand("input")
        t = op.results[0].type
        axis = op.attr("axis").value
        if not all_static(x.type, t):
            return False
        float_name, int_name, identity = _REDUCE[op.name]
        elt = t.element
        if T.is_float(elt):
            name = float_name
        else:
            name = int_name
            if op.name in ("tosa.reduce_max", "tosa.reduce_min") and elt != T.i1:
                bits = elt.width
                identity = -(1 << (bits - 1)) if op.name == "tosa.reduce_max" else (1 << (bits - 1)) - 1
            identity = int(identity)
        if name is None or "IGNORE" in str(op.attr("nan_mode")):
            return False
        reduced_shape = [d for i, d in enumerate(x.type.shape) if i != axis]
        reduced = tensor_of(reduced_shape, elt)
        init = _filled(rw, op, identity, reduced)
        block = Block([elt, elt])
        block.arguments[0].name, block.arguments[1].name = "in", "init"
        attrs = {"fastmath": FASTMATH_NONE} if T.is_float(elt) else {}
        combined = Operation(name, [block.arguments[0], block.arguments[1]], [elt], attrs)
        block.append(combined)
        block.append(Operation("linalg.yield", [combined.results[0]], []))
        reduce = Operation("linalg.reduce", [x, init], [reduced], {"dimensions": i64_array([axis])},
                           [Region([block])])
        value = insert(rw, op, reduce).result
        groups = _keep_dim_groups(len(reduced_shape), axis)
        value = Reshape._reshape(rw, op, "tensor.expand_shape", value, groups, t)
        rw.replace_op(op, [value])
        return True


def _keep_dim_groups(reduced_rank: int, axis: int) -> list[list[int]]:
    """Reassociation that re-inserts a size-1 dimension at `axis`: it joins the group of
    the dimension after it (or before it, at the end); rank 0 needs no groups."""
    if reduced_rank == 0:
        return []
    groups = [[i if i < axis else i + 1] for i in range(reduced_rank)]
    if axis < reduced_rank:
        groups[axis] = [axis, axis + 1]
    else:
        groups[-1] = [reduced_rank - 1, reduced_rank]
    return groups


class Slice(RewritePattern):
    ops = ("tosa.slice",)

    def match_and_rewrite(self, op, rw) -> bool:
        start, size = _shape_values(op.operand("start")), _shape_values(op.operand("size"))
        t = op.results[0].type
        if start is None or size is None or not all_static(t):
            return False
        rank = len(start)
        attrs = {"static_offsets": i64_array(start), "static_sizes": i64_array(size),
                 "static_strides": i64_array([1] * rank),
                 "operandSegmentSizes": DenseArrayAttr(T.i32, (1, 0, 0, 0))}
        new = rw.create(op, "tensor.extract_slice", [op.operand("input1")], [t], attrs)
        rw.replace_op(op, new.results)
        return True


class Concat(RewritePattern):
    ops = ("tosa.concat",)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if not all_static(t, *(v.type for v in op.operands)):
            return False
        new = rw.create(op, "tensor.concat", op.operands, [t], {"dim": IntegerAttr(op.attr("axis").value)})
        rw.replace_op(op, new.results)
        return True


class Reverse(RewritePattern):
    ops = ("tosa.reverse",)

    def match_and_rewrite(self, op, rw) -> bool:
        x = op.operand("input1")
        t = op.results[0].type
        if not all_static(t):
            return False
        axis = op.attr("axis").value
        exprs = [f"-d{i} + {t.shape[i] - 1}" if i == axis else f"d{i}" for i in range(t.rank)]
        in_map = OpaqueAttr(f"affine_map<({dims_text(t.rank)}) -> ({', '.join(exprs)})>")
        generic = elementwise_generic(rw, op, [x], t, lambda b, args: args[0])
        generic.attributes["indexing_maps"] = ArrayAttr((in_map, generic.attr("indexing_maps").items[1]))
        rw.replace_op(op, generic.results)
        return True


PATTERNS = [Elementwise(), Const(), Reshape(), Transpose(), Tile(), MatMul(), Reduce(), Slice(), Concat(),
            Reverse()]

TARGET = ConversionTarget("linalg", legal_dialects=frozenset({"linalg", "tensor", "arith", "math", "func",
                                                              "builtin", "check", "util", "scf"}))


@dataclass(frozen=True)
class ConvertTosaToLinalg(Pass):
    name = "convert-tosa-to-linalg"
    summary = "Lower TOSA to linalg on tensors (elementwise to linalg.generic, matmul, reductions, shapes)"

    def run(self, op: Operation) -> None:
        from .linalg_generalize import PATTERNS as GENERALIZE
        from .tosa_structured_to_linalg import PATTERNS as STRUCTURED
        apply_conversion(op, PATTERNS + STRUCTURED + GENERALIZE, TARGET)
