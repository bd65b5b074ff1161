"""vulkan-spirv and opencl-spirv: element types SPIR-V (or the OpenCL profile) has no form for,
held in wider ones before the kernel is written (as MLIR's narrow-type emulation and
`arith-emulate-unsupported-floats` do).

Rewrites each loops-level kernel in place, so that the SPIR-V emitters only meet i8/i16/i32 and f32:

- Integers narrower than a byte (i2, i4, ..., i7) are i8 values holding the sign-extended value
  (the interpreter's and the VM's form for them: one byte per element). Ops that can leave the
  width (add, mul, shifts left, truncation, ...) sign-extend their result again from its low
  bits, so results wrap at the narrow width; unsigned ops (divui, maxui, cmpi ult, extui,
  uitofp, ...) first take the low bits alone.
- Floats SPIR-V lacks (bf16, the f8 formats, f6, f4) are f32 values in registers that always hold
  a value of their format: every op on them computes in f32 and rounds its result to the format
  (round to nearest even, with the format's overflow, NaN and negative-zero rules). In memory
  they are their bits, one byte per element (bf16: two), as numpy/ml_dtypes store them; a load
  widens the bits to f32, a store narrows f32 to the bits. Both conversions are integer bit
  manipulation (no tables), written once per format family from the format's parameters, and
  they reproduce ml_dtypes (the interpreter's arithmetic) bit for bit.
- On opencl-spirv f16 as well: OpenCL 1.2 has no Float16 capability (half arithmetic), only
  loads and stores of half, so f16 is emulated as bf16 is, its bits in i16 memory. (f32 holds
  every f16 value, and f32's 24 bits make rounding an f32 sum, product, quotient or square root
  of two f16 values to f16 give the correctly rounded f16 result, as numpy computes f16.)
  vulkan-spirv keeps its native Float16.

An op on one of these types that has no emulation here is reported (a compile error naming the
kernel), never emitted wrong.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ...ir import types as T
from ...ir.arrays import array_to_attr, attr_to_array, dtype_of
from ...ir.attributes import FloatAttr, IntegerAttr, TypeAttr
from ...ir.core import Operation, Value
from ...ir.dense import DenseElementsAttr


@dataclass(frozen=True)
class FloatFormat:
    """A float format in the terms the conversions need. `kind` says what its top codes mean:
    "ieee": all-ones exponent is inf (mantissa 0) or NaN; overflow gives inf.
    "fn": no inf; only all-ones exponent and mantissa is NaN; overflow gives NaN.
    "fnuz": no inf, no -0; the code 1000...0 is the only NaN; overflow gives NaN.
    "finite": no inf, no NaN; overflow saturates (f6, f4).
    "e8m0": no sign, no zero, no mantissa: powers of two 2^(code - 127); 0xFF is NaN."""
    exponent: int
    mantissa: int
    bias: int
    kind: str

    @property
    def width(self) -> int:
        return self.exponent + self.mantissa + (0 if self.kind == "e8m0" else 1)

    @property
    def storage(self) -> T.IntegerType:
        """The integer an element takes in memory (ml_dtypes: one byte each, bf16 two)."""
        return T.i16 if self.width == 16 else T.i8


FORMATS = {
    "bf16": FloatFormat(8, 7, 127, "ieee"),
    "f8E5M2": FloatFormat(5, 2, 15, "ieee"),
    "f8E4M3": FloatFormat(4, 3, 7, "ieee"),
    "f8E3M4": FloatFormat(3, 4, 3, "ieee"),
    "f8E4M3FN": FloatFormat(4, 3, 7, "fn"),
    "f8E4M3FNUZ": FloatFormat(4, 3, 8, "fnuz"),
    "f8E5M2FNUZ": FloatFormat(5, 2, 16, "fnuz"),
    "f8E4M3B11FNUZ": FloatFormat(4, 3, 11, "fnuz"),
    "f8E8M0FNU": FloatFormat(8, 0, 127, "e8m0"),
    "f6E2M3FN": FloatFormat(2, 3, 1, "finite"),
    "f6E3M2FN": FloatFormat(3, 2, 3, "finite"),
    "f4E2M1FN": FloatFormat(2, 1, 1, "finite"),
}


#: The float formats each SPIR-V target emulates: FORMATS on both, f16 too on opencl-spirv.
F16 = FloatFormat(5, 10, 15, "ieee")
EMULATED = {"vulkan-spirv": FORMATS, "opencl-spirv": {**FORMATS, "f16": F16}}


class NarrowTypeError(Exception):
    """An op on an emulated type with no emulation here."""


def narrow_float(t, formats: dict = FORMATS) -> FloatFormat | None:
    return formats.get(t.name) if isinstance(t, T.FloatType) else None


def narrow_int(t) -> bool:
    return isinstance(t, T.IntegerType) and 1 < t.width < 8


def _held(t: T.Type, formats: dict) -> T.Type:
    """The type a value of type `t` has after the rewrite."""
    if isinstance(t, T.MemRefType):
        return dataclasses.replace(t, element=_stored(t.element, formats))
    if narrow_float(t, formats):
        return T.f32
    return T.i8 if narrow_int(t) else t


def _stored(t: T.Type, formats: dict) -> T.Type:
    """How an element of type `t` is held in memory."""
    fmt = narrow_float(t, formats)
    if fmt:
        return fmt.storage
    return T.i8 if narrow_int(t) else t


def _involved(t: T.Type, formats: dict) -> bool:
    return _held(t, formats) != t


# -- building ops -------------------------------------------------------------------------------
_EQ, _NE, _ULT, _UGT, _UGE = 0, 1, 6, 8, 9                 # arith.cmpi predicates
_OGT, _ONE, _UNO = 2, 6, 14                               # arith.cmpf predicates


class _Builder:
    """Emits ops before `anchor` (i32 and f32 scalars unless told otherwise)."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor

    def op(self, name: str, operands, result_type: T.Type, attrs=None) -> Value:
        new = Operation(name, list(operands), [result_type], attrs or {}, span=self.anchor.span,
                        location=self.anchor.location)
        self.anchor.parent.insert_before(self.anchor, new)
        return new.results[0]

    def c(self, value, t: T.Type = T.i32) -> Value:
        attr = FloatAttr(float(value), t) if isinstance(t, T.FloatType) else IntegerAttr(int(value), t)
        return self.op("arith.constant", [], t, {"value": attr})

    def _int(self, x) -> Value:
        return self.c(x) if isinstance(x, int) else x

    def binary(self, name: str, a, b) -> Value:
        return self.op(name, [self._int(a), self._int(b)], T.i32)

    def and_(self, a, b): return self.binary("arith.andi", a, b)
    def or_(self, a, b): return self.binary("arith.ori", a, b)
    def add(self, a, b): return self.binary("arith.addi", a, b)
    def sub(self, a, b): return self.binary("arith.subi", a, b)
    def shl(self, a, b): return self.binary("arith.shli", a, b)
    def shr(self, a, b): return self.binary("arith.shrui", a, b)

    def cmp(self, predicate: int, a, b) -> Value:
        return self.op("arith.cmpi", [self._int(a), self._int(b)], T.i1, {"predicate": IntegerAttr(predicate)})

    def fcmp(self, predicate: int, a, b) -> Value:
        return self.op("arith.cmpf", [a, b], T.i1, {"predicate": IntegerAttr(predicate)})

    def any(self, a, b) -> Value:
        return self.op("arith.ori", [a, b], T.i1)

    def select(self, cond, a, b, t: T.Type = T.i32) -> Value:
        if t == T.i32:
            a, b = self._int(a), self._int(b)
        return self.op("arith.select", [cond, a, b], t)

    def cast(self, name: str, x, t: T.Type) -> Value:
        return self.op(name, [x], t)


# -- the conversions ----------------------------------------------------------------------------
def to_bits(b: _Builder, x: Value, fmt: FloatFormat) -> Value:
    """The code (i32, zero-extended) of f32 `x` rounded to `fmt`: to nearest, ties to even
    (e8m0: ties up), with the format's overflow and NaN rules, as ml_dtypes converts."""
    u = b.cast("arith.bitcast", x, T.i32)
    sign = b.shr(u, 31)
    a = b.and_(u, 0x7FFFFFFF)               # |x| as bits
    e32 = b.shr(a, 23)                      # f32's biased exponent
    if fmt.kind == "e8m0":
        return _to_e8m0(b, sign, a, e32)
    top, shift = fmt.exponent + fmt.mantissa, 23 - fmt.mantissa
    # Normal results: rebias the exponent, round the mantissa at its new last bit (a carry
    # moves into the exponent, as it should).
    rebased = b.sub(a, (127 - fmt.bias) << 23) if fmt.bias != 127 else a
    odd = b.and_(b.shr(rebased, shift), 1)
    magnitude = b.shr(b.add(b.add(rebased, (1 << (shift - 1)) - 1), odd), shift)
    if fmt.bias < 127:
        # Below the format's smallest normal (still an f32 normal: f32 denormals are far below
        # and come out zero): the significand shifted right by the distance, rounded.
        min_e32 = 128 - fmt.bias            # f32 exponent of the format's smallest normal
        below = b.cmp(_ULT, e32, min_e32)
        significand = b.or_(b.and_(a, 0x7FFFFF), 0x800000)
        distance = b.sub(shift + min_e32, e32)
        far = b.cmp(_UGT, distance, 31)     # (rounds to zero all the same)
        amount = b.select(below, b.select(far, 31, distance), 1)
        kept = b.shr(significand, amount)
        rest = b.and_(significand, b.sub(b.shl(1, amount), 1))
        half = b.shl(1, b.sub(amount, 1))
        tie_to_even = b.op("arith.andi", [b.cmp(_EQ, rest, half), b.cmp(_NE, b.and_(kept, 1), 0)], T.i1)
        up = b.any(b.cmp(_UGT, rest, half), tie_to_even)
        magnitude = b.select(below, b.add(kept, b.select(up, 1, 0)), magnitude)
    is_nan = b.cmp(_UGT, a, 0x7F800000)
    signed = b.shl(sign, top)
    if fmt.kind == "ieee":
        inf = ((1 << fmt.exponent) - 1) << fmt.mantissa
        magnitude = b.select(b.cmp(_UGT, magnitude, inf - 1), inf, magnitude)
        magnitude = b.select(is_nan, inf | 1 << (fmt.mantissa - 1), magnitude)   # the quiet NaN
        return b.or_(signed, magnitude)
    if fmt.kind == "fn":
        nan = (1 << top) - 1
        magnitude = b.select(b.any(is_nan, b.cmp(_UGT, magnitude, nan - 1)), nan, magnitude)
        return b.or_(signed, magnitude)
    if fmt.kind == "fnuz":
        nan = 1 << top
        code = b.select(b.cmp(_EQ, magnitude, 0), 0, b.or_(signed, magnitude))   # no -0
        return b.select(b.any(is_nan, b.cmp(_UGT, magnitude, nan - 1)), nan, code)
    largest = (1 << top) - 1                # "finite": saturate; NaN becomes a zero of the other sign
    magnitude = b.select(b.cmp(_UGT, magnitude, largest), largest, magnitude)
    flipped = b.shl(b.op("arith.xori", [sign, b.c(1)], T.i32), top)
    return b.select(is_nan, flipped, b.or_(signed, magnitude))


def _to_e8m0(b: _Builder, sign, a, e32) -> Value:
    """Powers of two, rounded half up between neighbours (the midpoint of 2^k and 2^(k+1) is
    1.5 * 2^k); below 2^-127 stays 2^-127; zero, negatives, inf, NaN and overflow are NaN."""
    mantissa = b.and_(a, 0x7FFFFF)
    normal = b.add(e32, b.select(b.cmp(_UGE, mantissa, 0x400000), 1, 0))
    denormal = b.select(b.cmp(_UGE, mantissa, 0x600000), 1, 0)   # f32 denormals: 2^-127 or 2^-126
    code = b.select(b.cmp(_EQ, e32, 0), denormal, normal)
    bad = b.any(b.any(b.cmp(_NE, sign, 0), b.cmp(_EQ, a, 0)), b.cmp(_UGE, code, 0xFF))
    return b.select(bad, 0xFF, code)


def from_bits(b: _Builder, code: Value, fmt: FloatFormat) -> Value:
    """The f32 value (exact) of `code` (i32, zero-extended) in format `fmt`."""
    if fmt.kind == "e8m0":
        bits = b.select(b.cmp(_EQ, code, 0), 0x00400000, b.shl(code, 23))     # 2^-127 is an f32 denormal
        bits = b.select(b.cmp(_EQ, code, 0xFF), 0x7FC00000, bits)
        return b.cast("arith.bitcast", bits, T.f32)
    if fmt.bias == 127:                     # bf16: f32's exponent range, fewer mantissa bits
        return b.cast("arith.bitcast", b.shl(code, 32 - fmt.width), T.f32)
    top, shift = fmt.exponent + fmt.mantissa, 23 - fmt.mantissa
    sign = b.shl(b.shr(code, top), 31)
    magnitude = b.and_(code, (1 << top) - 1)
    exponent = b.shr(magnitude, fmt.mantissa)
    normal = b.add(b.shl(magnitude, shift), (127 - fmt.bias) << 23)
    # a subnormal is its mantissa times 2^(1 - bias - mantissa bits): exact, and a normal f32
    scaled = b.op("arith.mulf", [b.cast("arith.uitofp", magnitude, T.f32),
                                 b.c(2.0 ** (1 - fmt.bias - fmt.mantissa), T.f32)], T.f32)
    bits = b.select(b.cmp(_EQ, exponent, 0), b.cast("arith.bitcast", scaled, T.i32), normal)
    all_ones = (1 << fmt.exponent) - 1
    if fmt.kind == "ieee":
        special = b.or_(0x7F800000, b.shl(b.and_(magnitude, (1 << fmt.mantissa) - 1), shift))
        bits = b.select(b.cmp(_EQ, exponent, all_ones), special, bits)
    elif fmt.kind == "fn":
        bits = b.select(b.cmp(_EQ, magnitude, (1 << top) - 1), 0x7FC00000, bits)
    bits = b.or_(sign, bits)
    if fmt.kind == "fnuz":
        bits = b.select(b.cmp(_EQ, code, 1 << top), 0x7FC00000, bits)
    return b.cast("arith.bitcast", bits, T.f32)


def quantize(b: _Builder, x: Value, fmt: FloatFormat) -> Value:
    """f32 `x` rounded to `fmt`, as f32."""
    return from_bits(b, to_bits(b, x, fmt), fmt)


def _f64_to_f32_odd(b: _Builder, x: Value) -> Value:
    """f64 `x` as f32 rounded to odd (toward zero, then the last bit set when inexact): rounding
    that to a narrower format to nearest gives what rounding `x` directly would (no double
    rounding error)."""
    y = b.cast("arith.truncf", x, T.f32)
    back = b.cast("arith.extf", y, T.f64)
    bits = b.cast("arith.bitcast", y, T.i32)
    away = b.fcmp(_OGT, b.op("math.absf", [back], T.f64), b.op("math.absf", [x], T.f64))
    bits = b.select(away, b.sub(bits, 1), bits)
    bits = b.select(b.fcmp(_ONE, back, x), b.or_(bits, 1), bits)
    return b.cast("arith.bitcast", bits, T.f32)


# -- narrow integers held in i8 -----------------------------------------------------------------
def _sign_extend(b: _Builder, x: Value, width: int) -> Value:
    """i8 `x` with its low `width` bits sign-extended (the value wrapped to iN)."""
    spare = b.c(8 - width, T.i8)
    return b.op("arith.shrsi", [b.op("arith.shli", [x, spare], T.i8), spare], T.i8)


def _low_bits(b: _Builder, x: Value, width: int) -> Value:
    """i8 `x`'s low `width` bits, zero-extended (the unsigned value of an iN)."""
    return b.op("arith.andi", [x, b.c((1 << width) - 1, T.i8)], T.i8)


#: Ops on narrow integers whose i8 result may leave the narrow width: sign-extended again after.
_WRAPPING = frozenset({"arith.addi", "arith.subi", "arith.muli", "arith.shli", "arith.divsi", "arith.ceildivsi",
                       "arith.floordivsi", "math.absi"})
#: Ops that need the unsigned value of their narrow operands (then sign-extend their result).
_UNSIGNED = frozenset({"arith.divui", "arith.remui", "arith.maxui", "arith.minui", "arith.ceildivui",
                       "arith.shrui"})
#: Ops with nothing to do beyond their new types: they carry values, compute the same on
#: sign-extended integers as on the narrow ones, or read exact f32 values as they are.
_AS_THEY_ARE = frozenset({"arith.select", "scf.for", "scf.if", "scf.while", "scf.yield", "scf.condition",
                          "memref.alloc", "memref.alloca", "memref.dealloc", "memref.get_global", "memref.copy",
                          "memref.subview", "memref.collapse_shape", "memref.expand_shape",
                          "memref.reinterpret_cast", "memref.cast", "memref.dim", "func.return", "func.call",
                          "arith.andi", "arith.ori", "arith.xori", "arith.maxsi", "arith.minsi", "arith.remsi",
                          "arith.shrsi", "arith.cmpf"})
#: Float ops computed in f32 and rounded to the narrow format of their result.
_FLOAT_OPS = frozenset({"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.negf",
                        "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf"})


# -- the rewrite ----------------------------------------------------------------------------------
def emulate_narrow_types(module: Operation, target: str = "vulkan-spirv") -> None:
    """Rewrite every kernel of loops-level `module` (and its memref.globals) in place, for the
    formats `target` lacks (EMULATED). Raises NarrowTypeError naming the kernel, `target` and
    the op that has no emulation."""
    formats = EMULATED[target]
    body = module.regions[0].blocks[0]
    for op in body.ops:
        if op.name == "memref.global":
            _global(op, formats)
        elif op.name == "func.func" and op.regions and op.regions[0].blocks:
            try:
                _Kernel(op, formats).run()
            except NarrowTypeError as e:
                raise NarrowTypeError(f"kernel @{op.sym_name}: {target}: {e}") from None


def _global(op: Operation, formats: dict) -> None:
    """A constant's element bits as the integers that hold them (narrow integers sign-extended)."""
    t = op.attr("type").type
    if not _involved(t.element, formats):
        return
    stored = _held(t, formats)
    op.attributes["type"] = TypeAttr(stored)
    value = op.attr("initial_value")
    if not isinstance(value, DenseElementsAttr):   # uninitialised: nothing to convert
        return
    array = np.asarray(attr_to_array(value, T.RankedTensorType(t.shape, t.element)))
    if narrow_int(t.element):
        shift = 8 - t.element.width
        bits = ((array.astype(np.int64) << shift).astype(np.int8) >> shift).astype(np.int8)
    else:
        bits = array.view(np.uint8 if stored.element == T.i8 else np.uint16)
        bits = bits.view(np.int8 if stored.element == T.i8 else np.int16)
    op.attributes["initial_value"] = array_to_attr(bits, T.RankedTensorType(t.shape, stored.element))


class _Kernel:
    def __init__(self, fn: Operation, formats: dict):
        self.fn = fn
        self.formats = formats
        self.was: dict = {}     # value -> its type before the rewrite

    def narrow(self, t: T.Type) -> FloatFormat | None:
        return narrow_float(t, self.formats)

    def run(self) -> None:
        from ...dialects.func import function_type
        ops = list(self.fn.walk())[1:]
        values = [a for op in [self.fn, *ops] for r in op.regions for blk in r.blocks for a in blk.arguments]
        values += [r for op in ops for r in op.results]
        for v in values:
            if _involved(v.type, self.formats):
                self.was[v] = v.type
                v.type = _held(v.type, self.formats)
        if not self.was:
            return
        entry = self.fn.regions[0].blocks[0]
        for arg in entry.arguments:   # (kernels take tensors as memrefs; scalars are index values)
            if arg in self.was and not isinstance(arg.type, T.MemRefType):
                raise NarrowTypeError(f"a scalar kernel argument of type {self.was[arg]}")
        for op in ops:
            if any(v in self.was for v in (*op.operands, *op.results)):
                self.rewrite(op)
        ftype = function_type(self.fn)
        self.fn.attributes["function_type"] = TypeAttr(
            T.FunctionType(tuple(a.type for a in entry.arguments), ftype.results))

    def type_of(self, v: Value) -> T.Type:
        return self.was.get(v, v.type)

    # -- helpers ------------------------------------------------------------------------------------
    def follow(self, op: Operation, convert) -> None:
        """Make the users of `op`'s result read `convert(builder after op, result)` instead (a
        value standing for the same value of the same original type)."""
        result = op.results[0]
        uses = list(result.uses)
        ops = op.parent.ops
        new = convert(_Builder(ops[ops.index(op) + 1]), result)
        self.was[new] = self.type_of(result)
        for use in uses:
            use.op.set_operand(use.index, new)

    def replace(self, op: Operation, new: Value) -> None:
        self.was[new] = self.type_of(op.results[0])
        op.results[0].replace_all_uses_with(new)
        op.erase()

    def held_value(self, b: _Builder, bits: Value, t: T.Type) -> Value:
        """The register form of an element of type `t` loaded as its storage integer `bits`."""
        fmt = self.narrow(t)
        if fmt:
            wide = b.cast("arith.extui", bits, T.i32)
            return from_bits(b, b.and_(wide, (1 << fmt.width) - 1), fmt)
        return _sign_extend(b, bits, t.width)

    # -- ops ----------------------------------------------------------------------------------------
    def rewrite(self, op: Operation) -> None:
        name = op.name
        handler = getattr(self, "op_" + name.replace(".", "_"), None)
        if handler is not None:
            return handler(op)
        result_t = self.type_of(op.results[0]) if op.results else None
        if name in _FLOAT_OPS or (name.startswith("math.") and not any(
                narrow_int(self.type_of(v)) for v in (*op.operands, *op.results))):
            if self.narrow(result_t):   # operands are exact f32 already: compute, then round
                self.follow(op, lambda b, r: quantize(b, r, self.narrow(result_t)))
            return None
        if name in _WRAPPING and narrow_int(result_t):
            self.follow(op, lambda b, r: _sign_extend(b, r, result_t.width))
            return None
        if name in _UNSIGNED and any(narrow_int(self.type_of(v)) for v in op.operands):
            b = _Builder(op)
            for i, v in enumerate(list(op.operands)):
                if narrow_int(self.type_of(v)):
                    op.set_operand(i, _low_bits(b, v, self.type_of(v).width))
            if narrow_int(result_t):
                self.follow(op, lambda b, r: _sign_extend(b, r, result_t.width))
            return None
        if name in _AS_THEY_ARE:
            return None
        shown = next(str(self.type_of(v)) for v in (*op.operands, *op.results) if v in self.was)
        raise NarrowTypeError(f"'{name}' on {shown} has no emulation here")

    def op_memref_load(self, op: Operation) -> None:
        t = op.operand("memref").type.element
        element = self.type_of(op.results[0])
        op.results[0].type = t   # the bits, widened for the users
        self.follow(op, lambda b, bits: self.held_value(b, bits, element))

    def op_memref_store(self, op: Operation) -> None:
        value = op.operand("value")
        fmt = self.narrow(self.type_of(value))
        if fmt:   # (a narrow integer is stored as the sign-extended byte it is held in)
            b = _Builder(op)
            op.set_operand(0, b.cast("arith.trunci", to_bits(b, value, fmt), fmt.storage))

    def op_arith_constant(self, op: Operation) -> None:
        t, attr = self.type_of(op.results[0]), op.attr("value")
        if isinstance(attr, FloatAttr) and self.narrow(t):
            exact = np.array([attr.value], np.float64).astype(dtype_of(t)).astype(np.float32)[0]
            op.attributes["value"] = FloatAttr(float(exact), T.f32)
        elif isinstance(attr, IntegerAttr) and narrow_int(t):
            low = attr.value & ((1 << t.width) - 1)
            op.attributes["value"] = IntegerAttr(low - (1 << t.width) if low >> (t.width - 1) else low, T.i8)
        else:
            raise NarrowTypeError(f"a non-scalar constant of {t}")

    def op_arith_cmpi(self, op: Operation) -> None:
        if op.attr("predicate").value >= 6:   # unsigned comparisons: the low bits alone
            b = _Builder(op)
            for i, v in enumerate(list(op.operands)):
                op.set_operand(i, _low_bits(b, v, self.type_of(v).width))

    def float_value(self, b: _Builder, x: Value, t: T.Type) -> Value:
        """Value `x` of float type `t` (held form) as f32, for a conversion to a narrow format:
        f64 rounded to odd so that the conversion rounds once."""
        if t == T.f64:
            return _f64_to_f32_odd(b, x)
        if t == T.f32 or self.narrow(t):
            return x
        return b.cast("arith.extf", x, T.f32)

    def convert(self, b: _Builder, x: Value, src: T.Type, dst: T.Type) -> Value:
        """Float `x` (held form of `src`) as the held form of `dst`."""
        fmt = self.narrow(dst)
        if fmt:
            return quantize(b, self.float_value(b, x, src), fmt)
        if dst == T.f32:
            return x
        return b.cast("arith.extf" if dst.width > 32 else "arith.truncf", x, dst)

    def op_arith_extf(self, op: Operation) -> None:
        x = op.operand("in")
        src, dst = self.type_of(x), self.type_of(op.results[0])
        self.replace(op, self.convert(_Builder(op), x, src, dst))

    op_arith_truncf = op_arith_extf

    def op_arith_sitofp(self, op: Operation) -> None:
        x = op.operand("in")
        src, dst = self.type_of(x), self.type_of(op.results[0])
        if narrow_int(src) and op.name == "arith.uitofp":
            op.set_operand(0, _low_bits(_Builder(op), x, src.width))
        fmt = self.narrow(dst)
        if fmt:   # converted to f32 (the op's new type), then rounded
            self.follow(op, lambda b, r: quantize(b, r, fmt))

    op_arith_uitofp = op_arith_sitofp

    def op_arith_fptosi(self, op: Operation) -> None:
        """To a narrow integer: as the interpreter does, saturated to the byte holding it (NaN is
        0), then wrapped to the width."""
        dst = self.type_of(op.results[0])
        if not narrow_int(dst):
            return None   # from a narrow float: its f32 value converts as any f32 does
        b = _Builder(op)
        source = op.operand("in")
        x = self.float_value(b, source, self.type_of(source))
        low, high = (0.0, 255.0) if op.name == "arith.fptoui" else (-128.0, 127.0)
        x = b.op("arith.maximumf", [x, b.c(low, T.f32)], T.f32)
        x = b.op("arith.minimumf", [x, b.c(high, T.f32)], T.f32)
        x = b.select(b.fcmp(_UNO, x, x), b.c(0.0, T.f32), x, T.f32)
        byte = b.cast("arith.trunci", b.cast("arith.fptosi", x, T.i32), T.i8)
        self.replace(op, _sign_extend(b, byte, dst.width))

    op_arith_fptoui = op_arith_fptosi

    def op_arith_bitcast(self, op: Operation) -> None:
        x, b = op.operand("in"), _Builder(op)
        src, dst = self.type_of(x), self.type_of(op.results[0])
        if self.narrow(src):
            bits = b.cast("arith.trunci", to_bits(b, x, self.narrow(src)), T.i8 if dst.width <= 8 else T.i16)
            self.replace(op, _sign_extend(b, bits, dst.width) if narrow_int(dst) else bits)
        elif self.narrow(dst):   # (held_value takes the low bits of a narrow integer's byte)
            self.replace(op, self.held_value(b, x, dst))
        else:   # between integers of one width: nothing changes
            self.replace(op, x)

    def op_arith_scaling_extf(self, op: Operation) -> None:
        """x * scale (or x / scale for scaling_truncf), in f32, rounded to the result's format."""
        b = _Builder(op)
        (x, scale), (xt, st) = op.operands, (self.type_of(v) for v in op.operands)
        x, scale = self.convert(b, x, xt, T.f32), self.convert(b, scale, st, T.f32)
        combined = b.op("arith.mulf" if op.name == "arith.scaling_extf" else "arith.divf", [x, scale], T.f32)
        self.replace(op, self.convert(b, combined, T.f32, self.type_of(op.results[0])))

    op_arith_scaling_truncf = op_arith_scaling_extf

    def op_arith_extsi(self, op: Operation) -> None:
        x = op.operand("in")
        src, dst = self.type_of(x), self.type_of(op.results[0])
        if op.name == "arith.extui" and narrow_int(src):
            x = _low_bits(_Builder(op), x, src.width)
        if dst.width <= 8:   # into another narrow integer or i8: the held byte already is the value
            self.replace(op, x)
        else:
            op.set_operand(0, x)

    op_arith_extui = op_arith_extsi

    def op_arith_trunci(self, op: Operation) -> None:
        x = op.operand("in")
        src, dst = self.type_of(x), self.type_of(op.results[0])
        if not narrow_int(dst):   # from a narrow integer to i1: its low bit, as from any integer
            return None
        b = _Builder(op)
        if src.width > 8:
            x = b.cast("arith.trunci", x, T.i8)
        self.replace(op, _sign_extend(b, x, dst.width))

    def op_arith_index_cast(self, op: Operation) -> None:
        x = op.operand("in")
        src, dst = self.type_of(x), self.type_of(op.results[0])
        b = _Builder(op)
        if narrow_int(src):
            if op.name == "arith.index_castui":
                op.set_operand(0, _low_bits(b, x, src.width))
            return None
        self.replace(op, _sign_extend(b, b.cast(op.name, x, T.i8), dst.width))

    op_arith_index_castui = op_arith_index_cast
