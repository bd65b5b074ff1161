"""Floats LLVM has no type for (f8*, f6*, f4*) at the loops -> llvm step.

As MLIR does (its LLVM type converter and `arith-emulate-unsupported-floats`), a value of
such a type is an integer of the same width holding its bits, and arithmetic on it runs in
f32: operands are widened, the op is computed in f32 and the result is narrowed back.

- Widening reads a constant table of the 2^width values as f32 (exact).
- Narrowing rounds to nearest, ties as the format rounds them: a branchless binary search
  over the midpoints between consecutive non-negative values of the format (and, where
  the format overflows to inf or NaN, the value past its largest finite one), then the
  sign. The tables are built from the format's own conversion (ml_dtypes, the same that
  gives the interpreter its numbers), so overflow, NaN and negative zero behave as there.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...dialects import llvm_types as LT
from ...ir import types as T
from ...ir.arrays import array_to_attr, dtype_of
from ...ir.attributes import DenseArrayAttr, IntegerAttr, OpaqueAttr, StringAttr, TypeAttr, UnitAttr
from ...ir.core import Operation

PTR = LT.llvm_type("llvm.ptr")
GEP_DYNAMIC = -2147483648


#: Formats without a sign bit (powers of two only: no zero, NaN for anything not positive).
UNSIGNED = frozenset({"f8E8M0FNU"})


def is_narrow(t) -> bool:
    """A float type with no LLVM equivalent."""
    return isinstance(t, T.FloatType) and t.width <= 8


def storage(t: T.FloatType) -> T.IntegerType:
    return T.IntegerType(t.width)


def bits_of(value, t: T.FloatType) -> int:
    """The bit pattern of float `value` in format `t`."""
    return int(np.array([value], np.float32).astype(dtype_of(t)).view(np.uint8)[0]) & ((1 << t.width) - 1)


@lru_cache(maxsize=None)
def tables(name: str):
    """(values of every code as f32, midpoints, tie-rounds-up flags, candidate codes, NaN code,
    code of -0.0) for format `name`."""
    t = T.FloatType(name)
    dt = dtype_of(t)
    n = 1 << t.width
    values = np.arange(n, dtype=np.uint8).view(dt).astype(np.float32)
    sign = n if name in UNSIGNED else 1 << (t.width - 1)
    positive = sorted((float(values[c]), c) for c in range(sign) if np.isfinite(values[c]) and values[c] >= 0)

    def code(x) -> int:
        return int(np.array([x], np.float32).astype(dt).view(np.uint8)[0]) & (n - 1)

    over = code(np.inf)
    if not np.isfinite(values[over]):  # overflow goes past the largest finite value
        (prev, _), (top, _) = positive[-2], positive[-1]
        positive.append((top + (top - prev), over))
    mids = [(a + b) / 2 for (a, _), (b, _) in zip(positive, positive[1:])]
    tie_up = [int(code(m) == c) for m, (_, c) in zip(mids, positive[1:])]
    return values, mids, tie_up, [c for _, c in positive], code(np.nan), code(-0.0)


class NarrowFloats:
    """Emits the widening / narrowing code of one function (`fl`, a FunctionLowering)."""

    def __init__(self, fl):
        self.fl = fl

    def table(self, name: str, element: T.Type, values) -> object:
        """Address of a private constant global holding `values` (declared once per module)."""
        module = self.fl.module
        if name not in module.declared:
            module.declared.add(name)
            arr = np.asarray(values, np.float32) if T.is_float(element) else \
                np.asarray(values, np.int64).astype(np.uint8).view(np.int8)
            count = len(arr)
            attrs = {"sym_name": StringAttr(name), "linkage": OpaqueAttr("#llvm.linkage<private>"),
                     "global_type": TypeAttr(LT.llvm_type(f"llvm.array<{count} x {element}>")),
                     "addr_space": IntegerAttr(0, T.i32), "constant": UnitAttr(),
                     "value": array_to_attr(arr, T.RankedTensorType((count,), element))}
            body = module.body
            body.insert_before(body.ops[0], Operation("llvm.mlir.global", (), (), attrs))
        from ...ir.attributes import SymbolRefAttr
        return self.fl.emit("llvm.mlir.addressof", (), [PTR], {"global_name": SymbolRefAttr(name)}).result

    def load(self, table, element, index, origin):
        fl = self.fl
        ptr = fl.emit("llvm.getelementptr", [table, index], [PTR],
                      {"elem_type": TypeAttr(element), "rawConstantIndices": DenseArrayAttr(T.i32, (GEP_DYNAMIC,))},
                      origin).result
        return fl.emit("llvm.load", [ptr], [element], None, origin).result

    def widen(self, bits, t: T.FloatType, origin):
        """f32 value of the bits `bits` (an iN value) of format `t`."""
        values = tables(t.name)[0]
        table = self.table(f"__mlirtext_{t.name}_values", T.f32, values)
        index = self.fl.emit("llvm.zext", [bits], [T.i64], None, origin).result
        return self.load(table, T.f32, index, origin)

    def narrow(self, x, t: T.FloatType, origin):
        """The bits (iN) of f32 value `x` rounded to format `t`."""
        fl = self.fl
        _, mids, tie_up, codes, nan_code, neg_zero = tables(t.name)
        size = 1
        while size < len(mids) + 1:
            size *= 2
        pad = size - len(mids)
        mid_table = self.table(f"__mlirtext_{t.name}_midpoints", T.f32, mids + [np.inf] * pad)
        up_table = self.table(f"__mlirtext_{t.name}_ties_up", T.i8, tie_up + [0] * pad)
        code_table = self.table(f"__mlirtext_{t.name}_codes", T.i8, codes + [codes[-1]] * pad)
        i64 = T.i64

        def c(v, ty=i64):
            return fl.const(v, ty, origin)

        def op(name, operands, ty, attrs=None):
            return fl.emit(name, operands, [ty], attrs, origin).result

        def fcmp(pred, a, b):
            return op("llvm.fcmp", [a, b], T.i1, {"predicate": IntegerAttr(pred, T.i64)})

        magnitude = op("llvm.intr.fabs", [x], T.f32)
        i = c(0)
        step = size // 2
        while step:  # i = how many midpoints lie below |x|
            j = op("llvm.add", [i, c(step)], i64)
            below = fcmp(4, self.load(mid_table, T.f32, op("llvm.sub", [j, c(1)], i64), origin), magnitude)  # olt
            i = op("llvm.select", [below, j, i], i64)
            step //= 2
        at_mid = fcmp(1, self.load(mid_table, T.f32, i, origin), magnitude)  # oeq: a tie
        up = op("llvm.trunc", [self.load(up_table, T.i8, i, origin)], T.i1)
        bump = op("llvm.zext", [op("llvm.and", [at_mid, up], T.i1)], i64)
        st = storage(t)
        code = self.load(code_table, T.i8, op("llvm.add", [i, bump], i64), origin)
        if st.width < 8:
            code = op("llvm.trunc", [code], st)
        is_nan = fcmp(14, x, x)  # uno
        if t.name in UNSIGNED:
            nonpositive = fcmp(5, x, c(0.0, T.f32))  # ole
            return op("llvm.select", [op("llvm.or", [is_nan, nonpositive], T.i1), c(nan_code, st), code], st)
        as_int = op("llvm.bitcast", [x], T.i32)
        negative = fl.emit("llvm.icmp", [as_int, c(0, T.i32)], [T.i1], {"predicate": IntegerAttr(2)}, origin).result
        is_zero = fl.emit("llvm.icmp", [code, c(0, st)], [T.i1], {"predicate": IntegerAttr(0)}, origin).result
        signed = op("llvm.or", [code, c(1 << (t.width - 1), st)], st)
        signed = op("llvm.select", [is_zero, c(neg_zero, st), signed], st)
        value = op("llvm.select", [negative, signed, code], st)
        return op("llvm.select", [is_nan, c(nan_code, st), value], st)

    # -- ops -------------------------------------------------------------------------------------------
    def to_f32(self, value, t, origin):
        """A lowered value of type `t` as f32 (narrow formats through the table)."""
        fl = self.fl
        if is_narrow(t):
            return self.widen(value, t, origin)
        if t == T.f32:
            return value
        name = "llvm.fpext" if t.width < 32 else "llvm.fptrunc"
        return fl.emit(name, [value], [T.f32], None, origin).result

    def from_f32(self, value, t, origin):
        fl = self.fl
        if is_narrow(t):
            return self.narrow(value, t, origin)
        if t == T.f32:
            return value
        name = "llvm.fpext" if t.width > 32 else "llvm.fptrunc"
        return fl.emit(name, [value], [t], None, origin).result

    def lower(self, op: Operation) -> None:
        """`op`, whose operands or result are of a narrow float type, computed in f32."""
        fl = self.fl
        name = op.name
        args = [fl.v(x) for x in op.operands]
        types = [x.type for x in op.operands]
        out = op.results[0].type if op.results else None
        if name == "arith.bitcast":  # the bits are the value already
            fl.values[op.results[0]] = args[0]
            return
        if name in ("arith.extf", "arith.truncf"):
            result = self.from_f32(self.to_f32(args[0], types[0], op), out, op)
        elif name in ("arith.sitofp", "arith.uitofp"):
            f = fl.emit("llvm.sitofp" if name == "arith.sitofp" else "llvm.uitofp", [args[0]], [T.f32], None, op).result
            result = self.narrow(f, out, op)
        elif name in ("arith.fptosi", "arith.fptoui"):
            f = self.widen(args[0], types[0], op)
            result = fl.emit("llvm.fptosi" if name == "arith.fptosi" else "llvm.fptoui", [f], [out], None, op).result
        elif name in ("arith.scaling_extf", "arith.scaling_truncf"):
            # extf(x) * extf(scale), truncf(x / extf(scale)): the scale is a power of two
            x, scale = (self.to_f32(v, t, op) for v, t in zip(args, types))
            combine = "llvm.fmul" if name == "arith.scaling_extf" else "llvm.fdiv"
            result = self.from_f32(fl.emit(combine, [x, scale], [T.f32], None, op).result, out, op)
        elif name == "arith.cmpf":
            a, b = (self.widen(v, t, op) for v, t in zip(args, types))
            result = fl.emit("llvm.fcmp", [a, b], [T.i1], {"predicate": op.attr("predicate")}, op).result
        elif name in _F32_OPS:
            wide = [self.widen(v, t, op) for v, t in zip(args, types)]
            f = fl.emit(_F32_OPS[name], wide, [T.f32], None, op).result
            result = self.narrow(f, out, op)
        else:
            raise ValueError(f"no lowering for this op on {out or types[0]}")
        fl.values[op.results[0]] = result


_F32_OPS = {"arith.addf": "llvm.fadd", "arith.subf": "llvm.fsub", "arith.mulf": "llvm.fmul",
            "arith.divf": "llvm.fdiv", "arith.remf": "llvm.frem", "arith.negf": "llvm.fneg",
            "arith.maximumf": "llvm.intr.maximum", "arith.minimumf": "llvm.intr.minimum",
            "arith.maxnumf": "llvm.intr.maxnum", "arith.minnumf": "llvm.intr.minnum",
            "math.absf": "llvm.intr.fabs", "math.sqrt": "llvm.intr.sqrt", "math.exp": "llvm.intr.exp"}

#: Ops that only move bits: they need no arithmetic on narrow floats.
MOVES = frozenset({"memref.load", "memref.store", "memref.alloc", "memref.alloca", "memref.dealloc",
                   "memref.subview", "memref.collapse_shape", "memref.expand_shape", "memref.cast",
                   "memref.get_global", "memref.dim", "memref.copy", "arith.select", "arith.constant",
                   "scf.for", "scf.if", "scf.while", "scf.yield", "scf.condition", "cf.br", "cf.cond_br",
                   "func.return", "func.call"})


def involves(op: Operation) -> bool:
    if op.name in MOVES:
        return False
    return any(is_narrow(T.element_type(t)) for t in (*(v.type for v in op.operands), *op.result_types))
