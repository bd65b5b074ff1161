"""loops -> llvm: scf, cf, memref, arith, math and func to the LLVM dialect.

Conventions (stated, as MLIR's `--finalize-memref-to-llvm` has its own):
- A memref is a bare `!llvm.ptr` to the start of its allocation; its shape,
  strides and offset are static, so they live in the types and become
  constants in the address arithmetic (`offset + sum(index * stride)`).
- `index` is `i64`. Allocation is `malloc`, deallocation `free`.
- A function keeps its source signature as reflection, `mlirtext.abi` (set by
  the first step that changes it: hlo -> tosa where unsigned integers become
  signless, else linalg -> loops), which tells callers how to pass tensors as
  pointers and read results back. Several results come back
  as one `!llvm.struct` of them.

Each function is rewritten as a whole: its blocks are walked in order, loop and
branch structure (`scf.for`, `scf.if`, `cf.br`) becomes LLVM blocks, and every
other op is translated with its operands mapped to their lowered values.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...dialects import llvm_types as LT
from ...dialects.memref import view_source
from ...ir import types as T
from ...ir.arrays import array_to_attr, attr_to_array
from ...ir.attributes import DenseArrayAttr, FloatAttr, IntegerAttr, OpaqueAttr, StringAttr, SymbolRefAttr, \
    TypeAttr, UnitAttr
from ...ir.core import Block, Operation, Region, Value
from ...ir.dense import DenseElementsAttr
from ..passes import Pass, PassFailure
from .bufferize import strides_of
from .narrow_floats import NarrowFloats, bits_of, involves, is_narrow, storage

PTR = LT.llvm_type("llvm.ptr")
I64 = T.i64
GEP_DYNAMIC = -2147483648  # rawConstantIndices marker for an index given as an operand

_INT_BINARY = {"arith.addi": "llvm.add", "arith.subi": "llvm.sub", "arith.muli": "llvm.mul",
               "arith.divsi": "llvm.sdiv", "arith.divui": "llvm.udiv", "arith.remsi": "llvm.srem",
               "arith.remui": "llvm.urem", "arith.andi": "llvm.and", "arith.ori": "llvm.or",
               "arith.xori": "llvm.xor", "arith.shli": "llvm.shl", "arith.shrsi": "llvm.ashr",
               "arith.shrui": "llvm.lshr"}
_FLOAT_BINARY = {"arith.addf": "llvm.fadd", "arith.subf": "llvm.fsub", "arith.mulf": "llvm.fmul",
                 "arith.divf": "llvm.fdiv", "arith.remf": "llvm.frem"}
_INTRINSIC_BINARY = {"arith.maximumf": "llvm.intr.maximum", "arith.minimumf": "llvm.intr.minimum",
                     "arith.maxnumf": "llvm.intr.maxnum", "arith.minnumf": "llvm.intr.minnum",
                     "arith.maxsi": "llvm.intr.smax", "arith.minsi": "llvm.intr.smin",
                     "arith.maxui": "llvm.intr.umax", "arith.minui": "llvm.intr.umin",
                     "math.powf": "llvm.intr.pow", "math.copysign": "llvm.intr.copysign"}
_INTRINSIC_UNARY = {"math.exp": "llvm.intr.exp", "math.exp2": "llvm.intr.exp2", "math.log": "llvm.intr.log",
                    "math.log2": "llvm.intr.log2", "math.log10": "llvm.intr.log10",
                    "math.sqrt": "llvm.intr.sqrt", "math.absf": "llvm.intr.fabs", "math.floor": "llvm.intr.floor",
                    "math.ceil": "llvm.intr.ceil", "math.round": "llvm.intr.round",
                    "math.roundeven": "llvm.intr.roundeven", "math.trunc": "llvm.intr.trunc",
                    "math.sin": "llvm.intr.sin", "math.cos": "llvm.intr.cos", "math.tan": "llvm.intr.tan",
                    "math.tanh": "llvm.intr.tanh", "math.ctpop": "llvm.intr.ctpop"}
_INTRINSIC_TERNARY = {"math.fma": "llvm.intr.fma"}
#: math ops without an LLVM intrinsic: calls to libm (the name for f64; f32 adds `f`).
_LIBM = {"math.expm1": "expm1", "math.log1p": "log1p", "math.atan2": "atan2", "math.cbrt": "cbrt",
         "math.erf": "erf", "math.erfc": "erfc", "math.asin": "asin", "math.acos": "acos", "math.atan": "atan",
         "math.sinh": "sinh", "math.cosh": "cosh", "math.asinh": "asinh", "math.acosh": "acosh",
         "math.atanh": "atanh"}
_CASTS = {"arith.extf": "llvm.fpext", "arith.truncf": "llvm.fptrunc", "arith.sitofp": "llvm.sitofp",
          "arith.uitofp": "llvm.uitofp", "arith.fptosi": "llvm.fptosi", "arith.fptoui": "llvm.fptoui",
          "arith.extsi": "llvm.sext", "arith.extui": "llvm.zext", "arith.trunci": "llvm.trunc",
          "arith.bitcast": "llvm.bitcast"}


def convert_type(t: T.Type) -> T.Type:
    if isinstance(t, T.IndexType):
        return I64
    if is_narrow(t):  # f8 / f6 / f4: their bits, in an integer of the same width
        return storage(t)
    if isinstance(t, T.MemRefType):
        return PTR
    return t


def layout(t: T.MemRefType) -> tuple[list[int], int]:
    """Static (strides, offset) of a memref type, in elements."""
    if t.layout is None:
        return strides_of(t.shape), 0
    m = re.fullmatch(r"strided<\[([^\]]*)\](?:,\s*offset:\s*(-?\d+))?>", str(t.layout))
    if m is None or "?" in str(t.layout):
        raise ValueError(f"layout {t.layout} is not static")
    return [int(s) for s in m.group(1).split(",") if s.strip()], int(m.group(2) or 0)


def element_bytes(t: T.Type) -> int:
    if is_narrow(t):
        return 1
    if isinstance(t, T.FloatType):
        return {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}.get(t.name) or _unsupported(f"element type {t}")
    if isinstance(t, (T.IntegerType,)):
        return max(1, (t.width + 7) // 8)
    if isinstance(t, T.IndexType):
        return 8
    return _unsupported(f"element type {t}")


def _unsupported(what: str):
    raise ValueError(f"{what} has no LLVM lowering yet")


@dataclass
class _Loop:
    header: Block   # ^h(iv, iters...): tests iv < upper
    after: Block    # where the loop exits to, with the final iters as arguments
    step: Value
    iv: Value


class FunctionLowering:
    def __init__(self, fn: Operation, module: "ModuleLowering"):
        self.fn, self.module = fn, module
        self.values: dict = {}
        self.blocks: dict = {}
        self.region = Region()
        self.block: Block = None

    # -- building --------------------------------------------------------------------------------
    def emit(self, name: str, operands=(), result_types=(), attributes=None, origin: Operation = None,
             successors=()) -> Operation:
        op = Operation(name, list(operands), list(result_types), attributes or {}, successors=successors)
        if origin is not None:
            op.span, op.name_span, op.location = origin.span, origin.name_span, origin.location
        self.block.append(op)
        return op

    def const(self, value, t: T.Type = I64, origin=None) -> Value:
        attr = FloatAttr(float(value), t) if T.is_float(t) else IntegerAttr(int(value), t)
        return self.emit("llvm.mlir.constant", (), [t], {"value": attr}, origin).result

    def new_block(self, arg_types=()) -> Block:
        return self.region.add_block(Block(list(arg_types)))

    def v(self, value: Value) -> Value:
        return self.values[value]

    # -- the function ------------------------------------------------------------------------------
    def run(self) -> Operation:
        from ...dialects.func import function_type
        ftype = function_type(self.fn)
        results = [convert_type(t) for t in ftype.results]
        ret = "void" if not results else _short(results[0]) if len(results) == 1 else \
            f"struct<({', '.join(map(_short, results))})>"
        self.ret_type = None if not results else results[0] if len(results) == 1 else \
            LT.llvm_type(f"llvm.{ret}")
        args = ", ".join(_short(convert_type(t)) for t in ftype.inputs)
        attrs = {"sym_name": StringAttr(self.fn.sym_name),
                 "function_type": TypeAttr(LT.llvm_type(f"llvm.func<{ret} ({args})>"))}
        for key in ("sym_visibility",):
            if key in self.fn.attributes and self.fn.attributes[key] == StringAttr("private"):
                attrs["linkage"] = OpaqueAttr("#llvm.linkage<private>")
        for key, value in self.fn.attributes.items():  # reflection (mlirtext.abi, mlirtext.out_params)
            if key.startswith("mlirtext."):
                attrs[key] = value
        new = Operation("llvm.func", (), (), attrs, [self.region], span=self.fn.span, location=self.fn.location)
        new.name_span = self.fn.name_span
        old_blocks = self.fn.regions[0].blocks if self.fn.regions else []
        for old in old_blocks:
            block = self.new_block([convert_type(a.type) for a in old.arguments])
            block.label = old.label
            self.blocks[old] = block
            for a, b in zip(old.arguments, block.arguments):
                b.name = a.name
                self.values[a] = b
        for old in old_blocks:
            self.block = self.blocks[old]
            self.lower_ops(old.ops)
        return new

    def lower_ops(self, ops) -> None:
        for op in ops:
            try:
                self.lower(op)
            except ValueError as e:
                raise PassFailure(f"failed to legalize '{op.name}' to llvm: {e}", op.name_span or op.span) from None

    def lower(self, op: Operation) -> None:
        if involves(op):  # arithmetic on a float type LLVM lacks: computed in f32
            NarrowFloats(self).lower(op)
            return
        handler = _HANDLERS.get(op.name)
        name = op.name
        if handler is not None:
            handler(self, op)
        elif name in _INT_BINARY or name in _FLOAT_BINARY:
            self.same(op, _INT_BINARY.get(name) or _FLOAT_BINARY[name])
        elif name in _INTRINSIC_BINARY or name in _INTRINSIC_UNARY or name in _INTRINSIC_TERNARY:
            self.same(op, _INTRINSIC_BINARY.get(name) or _INTRINSIC_UNARY.get(name) or _INTRINSIC_TERNARY[name],
                      keep_attrs=False)
        elif name in _CASTS:
            self.same(op, _CASTS[name], keep_attrs=False)
        else:
            raise ValueError("no lowering for this op")

    def same(self, op: Operation, name: str, keep_attrs: bool = True) -> None:
        attrs = {}
        if keep_attrs and "fastmath" in op.attributes and name.startswith("llvm.f"):
            # Only `reassoc` goes through (sums that may be vectorised: compiler/reductions.py); the
            # other flags would let LLVM assume what the interpreter does not (no NaNs, ...).
            flags = op.attr("fastmath")
            reassoc = isinstance(flags, OpaqueAttr) and "reassoc" in flags.body.replace(" ", "").split(",")
            attrs["fastmathFlags"] = OpaqueAttr(f"#llvm.fastmath<{'reassoc' if reassoc else 'none'}>")
        new = self.emit(name, [self.v(x) for x in op.operands], [convert_type(t) for t in op.result_types],
                        attrs, op)
        self.map_results(op, new)

    def map_results(self, op: Operation, new: Operation) -> None:
        for old, r in zip(op.results, new.results, strict=True):
            r.name = old.name
            self.values[old] = r

    # -- arith and math beyond one-to-one -------------------------------------------------------------
    def _constant(self, op: Operation) -> None:
        attr = op.attr("value")
        t = convert_type(op.results[0].type)
        if isinstance(attr, IntegerAttr) and isinstance(attr.type, T.IndexType):
            attr = IntegerAttr(attr.value, I64)
        if isinstance(attr, FloatAttr) and is_narrow(attr.type):
            attr = IntegerAttr(_signed_bits(bits_of(attr.value, attr.type), t.width), t)
        if not isinstance(attr, (IntegerAttr, FloatAttr)):
            raise ValueError("only scalar constants exist at the loops level")
        new = self.emit("llvm.mlir.constant", (), [t], {"value": attr}, op)
        self.map_results(op, new)

    def _compare(self, op: Operation) -> None:
        name = "llvm.icmp" if op.name == "arith.cmpi" else "llvm.fcmp"
        new = self.emit(name, [self.v(x) for x in op.operands], [T.i1],
                        {"predicate": op.attr("predicate")}, op)  # same enum numbering as arith
        self.map_results(op, new)

    def _select(self, op: Operation) -> None:
        self.same(op, "llvm.select", keep_attrs=False)

    def _index_cast(self, op: Operation) -> None:
        src, dst = convert_type(op.operand("in").type), convert_type(op.result_named("out").type)
        x = self.v(op.operand("in"))
        if src.width == dst.width:
            self.values[op.results[0]] = x
            return
        unsigned = op.name == "arith.index_castui"
        name = "llvm.trunc" if src.width > dst.width else "llvm.zext" if unsigned else "llvm.sext"
        self.map_results(op, self.emit(name, [x], [dst], None, op))

    def _negf(self, op: Operation) -> None:
        self.same(op, "llvm.fneg")

    def _rsqrt(self, op: Operation) -> None:
        t = op.results[0].type
        root = self.emit("llvm.intr.sqrt", [self.v(op.operand("operand"))], [t], None, op).result
        self.map_results(op, self.emit("llvm.fdiv", [self.const(1.0, t, op), root], [t], None, op))

    def _sincos(self, op: Operation) -> None:
        """math.sincos: llvm.intr.sin and llvm.intr.cos of the one operand."""
        x = self.v(op.operand("operand"))
        for result, intrinsic in ((op.result_named("sin"), "llvm.intr.sin"), (op.result_named("cos"), "llvm.intr.cos")):
            new = self.emit(intrinsic, [x], [convert_type(result.type)], None, op).result
            new.name = result.name
            self.values[result] = new

    def _absi(self, op: Operation) -> None:
        t = op.results[0].type
        self.map_results(op, self.emit("llvm.intr.abs", [self.v(op.operand("operand"))], [t],
                                       {"is_int_min_poison": IntegerAttr(0, T.i1)}, op))

    def _floordivsi(self, op: Operation) -> None:
        """a floordiv b = a/b rounded toward -inf: the quotient minus one where the
        remainder is non-zero and has the other sign than b."""
        a, b = (self.v(x) for x in op.operands)
        t = convert_type(op.results[0].type)
        q = self.emit("llvm.sdiv", [a, b], [t], None, op).result
        r = self.emit("llvm.srem", [a, b], [t], None, op).result
        zero = self.const(0, t, op)
        nonzero = self.emit("llvm.icmp", [r, zero], [T.i1], {"predicate": IntegerAttr(1)}, op).result
        r_neg = self.emit("llvm.icmp", [r, zero], [T.i1], {"predicate": IntegerAttr(2)}, op).result
        b_neg = self.emit("llvm.icmp", [b, zero], [T.i1], {"predicate": IntegerAttr(2)}, op).result
        differ = self.emit("llvm.xor", [r_neg, b_neg], [T.i1], None, op).result
        fix = self.emit("llvm.and", [nonzero, differ], [T.i1], None, op).result
        one = self.emit("llvm.zext", [fix], [t], None, op).result
        self.map_results(op, self.emit("llvm.sub", [q, one], [t], None, op))

    def _ctlz(self, op: Operation) -> None:
        t = op.results[0].type
        self.map_results(op, self.emit("llvm.intr.ctlz", [self.v(op.operand("operand"))], [t],
                                       {"is_zero_poison": IntegerAttr(0, T.i1)}, op))

    def _isfinite(self, op: Operation) -> None:
        """|x| != inf, ordered (false for NaN)."""
        x = self.v(op.operand("operand"))
        magnitude = self.emit("llvm.intr.fabs", [x], [x.type], None, op).result
        self.map_results(op, self.emit("llvm.fcmp", [magnitude, self.const(float("inf"), x.type, op)], [T.i1],
                                       {"predicate": IntegerAttr(6, T.i64)}, op))  # one

    def _libm(self, op: Operation) -> None:
        """A call to the C math library, as MLIR's math-to-libm does (`expm1f` for f32,
        `expm1` for f64; f16 and bf16 are computed in f32)."""
        t = op.results[0].type
        work = t if t in (T.f32, T.f64) else T.f32
        args = [self.v(x) for x in op.operands]
        if work != t:
            args = [self.emit("llvm.fpext", [a], [work], None, op).result for a in args]
        name = _LIBM[op.name] + ("f" if work == T.f32 else "")
        self.module.declare(name, work, [work] * len(args))
        value = self.emit("llvm.call", args, [work], _call_attrs(name, len(args)), op)
        if work != t:
            value = self.emit("llvm.fptrunc", [value.result], [t], None, op)
        self.map_results(op, value)

    # -- memory --------------------------------------------------------------------------------------
    def address(self, memref: Value, indices, origin) -> Value:
        """Pointer to element `indices` (lowered i64 values) of `memref` (an original value)."""
        strides, offset = layout(memref.type)
        linear = None
        for index, stride in zip(indices, strides):
            term = index
            if stride != 1:
                term = self.emit("llvm.mul", [term, self.const(stride, I64, origin)], [I64], None, origin).result
            linear = term if linear is None else self.emit("llvm.add", [linear, term], [I64], None, origin).result
        if offset:
            off = self.const(offset, I64, origin)
            linear = off if linear is None else self.emit("llvm.add", [linear, off], [I64], None, origin).result
        if linear is None:
            return self.v(memref)
        return self.emit("llvm.getelementptr", [self.v(memref), linear], [PTR],
                         {"elem_type": TypeAttr(convert_type(memref.type.element)),
                          "rawConstantIndices": DenseArrayAttr(T.i32, (GEP_DYNAMIC,))}, origin).result

    # An i1 element is a byte in memory (0 or 1, as numpy's bools): it is loaded and stored as that
    # byte, truncated and zero-extended. (LLVM does not vectorise loads of i1, whose size is not its
    # store size: a loop over a mask became a thousand scalar loads and insertelements, a fifth of a
    # ViT's LLVM time for its softmax's all-masked test, and slower code.)
    def _load(self, op: Operation) -> None:
        ptr = self.address(op.operand("memref"), [self.v(i) for i in op.operands_named("indices")], op)
        t = convert_type(op.results[0].type)
        if t == T.i1:
            byte = self.emit("llvm.load", [ptr], [T.i8], None, op).result
            self.map_results(op, self.emit("llvm.trunc", [byte], [t], None, op))
            return
        self.map_results(op, self.emit("llvm.load", [ptr], [t], None, op))

    def _store(self, op: Operation) -> None:
        ptr = self.address(op.operand("memref"), [self.v(i) for i in op.operands_named("indices")], op)
        value = self.v(op.operand("value"))
        if value.type == T.i1:
            value = self.emit("llvm.zext", [value], [T.i8], None, op).result
        self.emit("llvm.store", [value, ptr], (), None, op)

    def _alloc(self, op: Operation) -> None:
        t = op.results[0].type
        if not t.has_static_shape:
            raise ValueError("dynamic shapes are not supported yet")
        size = self.const(max(1, t.num_elements) * element_bytes(t.element), I64, op)
        self.module.declare("malloc", PTR, [I64])
        call = self.emit("llvm.call", [size], [PTR], _call_attrs("malloc", 1), op)
        self.map_results(op, call)

    def _dealloc(self, op: Operation) -> None:
        self.module.declare("free", None, [PTR])
        self.emit("llvm.call", [self.v(op.operand("memref"))], (), _call_attrs("free", 1), op)

    def _view(self, op: Operation) -> None:
        """Subviews and reshapes keep the base pointer: the new type carries the layout."""
        self.values[op.results[0]] = self.v(view_source(op))

    def _get_global(self, op: Operation) -> None:
        name = op.attr("name").root
        self.map_results(op, self.emit("llvm.mlir.addressof", (), [PTR],
                                       {"global_name": SymbolRefAttr(name)}, op))

    def _dim(self, op: Operation) -> None:
        index = self.module.constant_index(op.operand("index"))
        self.values[op.result_named("result")] = self.const(op.operand("source").type.shape[index], I64, op)

    def _copy(self, op: Operation) -> None:
        src, dst = op.operand("source"), op.operand("target")
        s_strides, s_off = layout(src.type)
        d_strides, d_off = layout(dst.type)
        contiguous = strides_of(src.type.shape)
        if s_strides == contiguous and d_strides == contiguous:
            size = src.type.num_elements * element_bytes(src.type.element)
            src_ptr = self.address(src, [], op) if not s_off else self.offset_ptr(src, s_off, op)
            dst_ptr = self.address(dst, [], op) if not d_off else self.offset_ptr(dst, d_off, op)
            self.emit("llvm.intr.memcpy", [dst_ptr, src_ptr, self.const(size, I64, op)], (),
                      {"isVolatile": IntegerAttr(0, T.i1)}, op)
            return
        self.copy_loops(src, dst, op)

    def offset_ptr(self, memref: Value, offset: int, origin) -> Value:
        return self.emit("llvm.getelementptr", [self.v(memref), self.const(offset, I64, origin)], [PTR],
                         {"elem_type": TypeAttr(convert_type(memref.type.element)),
                          "rawConstantIndices": DenseArrayAttr(T.i32, (GEP_DYNAMIC,))}, origin).result

    def copy_loops(self, src: Value, dst: Value, origin: Operation) -> None:
        """An element-by-element copy between strided memrefs: a loop nest in LLVM blocks."""
        loops = []
        for extent in src.type.shape:
            loops.append(self.open_loop(self.const(0, I64, origin), self.const(extent, I64, origin),
                                        self.const(1, I64, origin), origin))
        ivs = [loop.iv for loop in loops]
        value = self.emit("llvm.load", [self.address(src, ivs, origin)], [convert_type(src.type.element)], None,
                          origin).result
        self.emit("llvm.store", [value, self.address(dst, ivs, origin)], (), None, origin)
        for loop in reversed(loops):
            self.close_loop(loop, origin)

    # -- control flow ------------------------------------------------------------------------------
    def open_loop(self, lower: Value, upper: Value, step: Value, origin, iter_values=()) -> _Loop:
        """Branch to a header block `^h(iv, iters...)` that tests `iv < upper`; continue
        emitting in the body block. `close_loop` adds the step and branches back."""
        header = self.new_block([I64] + [v.type for v in iter_values])
        body = self.new_block()
        after = Block([v.type for v in iter_values])  # placed after the body, by close_loop
        self.emit("llvm.br", [lower, *iter_values], (), None, origin, successors=[header])
        self.block = header
        iv = header.arguments[0]
        cond = self.emit("llvm.icmp", [iv, upper], [T.i1], {"predicate": IntegerAttr(2)}, origin).result
        iters = list(header.arguments[1:])  # the loop exits with the current iteration values
        self.emit("llvm.cond_br", [cond, *iters], (),
                  {"operandSegmentSizes": DenseArrayAttr(T.i32, (1, 0, len(iters)))},
                  origin, successors=[body, after])
        self.block = body
        return _Loop(header, after, step, iv)

    def close_loop(self, loop: _Loop, origin, yielded=()) -> None:
        next_iv = self.emit("llvm.add", [loop.iv, loop.step], [I64], None, origin).result
        self.emit("llvm.br", [next_iv, *yielded], (), None, origin, successors=[loop.header])
        self.block = self.region.add_block(loop.after)

    def _for(self, op: Operation) -> None:
        lower, upper, step, *inits = (self.v(x) for x in op.operands)
        loop = self.open_loop(lower, upper, step, op, inits)
        body = op.regions[0].blocks[0]
        loop.iv.name = body.arguments[0].name
        self.values[body.arguments[0]] = loop.iv
        for arg, value in zip(body.arguments[1:], loop.header.arguments[1:]):
            self.values[arg] = value
        self.lower_ops(body.ops[:-1])
        yielded = [self.v(x) for x in body.ops[-1].operands]
        self.close_loop(loop, op, yielded)
        for result, value in zip(op.results, loop.after.arguments):
            self.values[result] = value

    def _if(self, op: Operation) -> None:
        then_block, else_block = self.new_block(), self.new_block()
        after = self.new_block([convert_type(t) for t in op.result_types])
        self.emit("llvm.cond_br", [self.v(op.operand("condition"))], (),
                  {"operandSegmentSizes": DenseArrayAttr(T.i32, (1, 0, 0))}, op, successors=[then_block, else_block])
        for region, block in zip(op.regions, (then_block, else_block)):
            self.block = block
            if region.blocks:
                self.lower_ops(region.blocks[0].ops[:-1])
                yielded = [self.v(x) for x in region.blocks[0].ops[-1].operands]
            else:
                yielded = []
            self.emit("llvm.br", yielded, (), None, op, successors=[after])
        self.block = after
        for result, value in zip(op.results, after.arguments):
            self.values[result] = value

    def _while(self, op: Operation) -> None:
        """^before(args): cond_br to ^after(forwarded) or the exit(forwarded); ^after: br ^before."""
        before_old, after_old = (r.blocks[0] for r in op.regions)
        before = self.new_block([convert_type(a.type) for a in before_old.arguments])
        after = self.new_block([convert_type(a.type) for a in after_old.arguments])
        exit_block = Block([convert_type(t) for t in op.result_types])
        self.emit("llvm.br", [self.v(x) for x in op.operands], (), None, op, successors=[before])
        for old, block in ((before_old, before), (after_old, after)):
            for a, b in zip(old.arguments, block.arguments):
                b.name = a.name
                self.values[a] = b
        self.block = before
        self.lower_ops(before_old.ops[:-1])
        cond, *forwarded = (self.v(x) for x in before_old.ops[-1].operands)
        n = len(forwarded)
        self.emit("llvm.cond_br", [cond, *forwarded, *forwarded], (),
                  {"operandSegmentSizes": DenseArrayAttr(T.i32, (1, n, n))}, op, successors=[after, exit_block])
        self.block = after
        self.lower_ops(after_old.ops[:-1])
        self.emit("llvm.br", [self.v(x) for x in after_old.ops[-1].operands], (), None, op, successors=[before])
        self.block = self.region.add_block(exit_block)
        for result, value in zip(op.results, exit_block.arguments):
            self.values[result] = value

    def _br(self, op: Operation) -> None:
        self.emit("llvm.br", [self.v(x) for x in op.operands], (), None, op,
                  successors=[self.blocks[op.successors[0]]])

    def _cond_br(self, op: Operation) -> None:
        seg = op.attr("operandSegmentSizes")
        self.emit("llvm.cond_br", [self.v(x) for x in op.operands], (),
                  {"operandSegmentSizes": seg} if seg is not None else None, op,
                  successors=[self.blocks[b] for b in op.successors])

    def _return(self, op: Operation) -> None:
        values = [self.v(x) for x in op.operands]
        if len(values) > 1:
            packed = self.emit("llvm.mlir.undef", (), [self.ret_type], None, op).result
            for i, v in enumerate(values):
                packed = self.emit("llvm.insertvalue", [packed, v], [self.ret_type],
                                   {"position": DenseArrayAttr(T.i64, (i,))}, op).result
            values = [packed]
        self.emit("llvm.return", values, (), None, op)

    def _call(self, op: Operation) -> None:
        callee = op.attr("callee").root
        results = [convert_type(t) for t in op.result_types]
        if len(results) > 1:
            raise ValueError("calls with several results are not supported yet")
        call = self.emit("llvm.call", [self.v(x) for x in op.operands], results,
                         _call_attrs(callee, len(op.operands)), op)
        self.map_results(op, call)


def _signed_bits(bits: int, width: int) -> int:
    return bits - (1 << width) if bits >= 1 << (width - 1) else bits


def _narrow_bits(value: DenseElementsAttr, t: T.MemRefType, count: int):
    """A dense f8 / f6 / f4 initializer as the integers holding its bits."""
    import numpy as np
    width = t.element.width
    bits = np.asarray(attr_to_array(value, T.RankedTensorType(t.shape, t.element))).reshape(-1).view(np.uint8)
    bits = (bits.astype(np.int64) & ((1 << width) - 1))
    signed = np.where(bits >= 1 << (width - 1), bits - (1 << width), bits)
    st = storage(t.element)
    return array_to_attr(np.broadcast_to(signed, (count,)).astype(np.int8), T.RankedTensorType((count,), st))


def _call_attrs(callee: str, n: int) -> dict:
    return {"callee": SymbolRefAttr(callee), "op_bundle_sizes": DenseArrayAttr(T.i32, ()),
            "operandSegmentSizes": DenseArrayAttr(T.i32, (n, 0))}


def _short(t: T.Type) -> str:
    """A type as written inside `!llvm.func<...>` / `!llvm.struct<...>` (llvm types without `!llvm.`)."""
    text = str(t)
    return text[len("!llvm."):] if text.startswith("!llvm.") else text


_HANDLERS = {
    "arith.constant": FunctionLowering._constant, "arith.cmpi": FunctionLowering._compare,
    "arith.cmpf": FunctionLowering._compare, "arith.select": FunctionLowering._select,
    "arith.index_cast": FunctionLowering._index_cast, "arith.index_castui": FunctionLowering._index_cast,
    "arith.negf": FunctionLowering._negf, "arith.floordivsi": FunctionLowering._floordivsi,
    "math.rsqrt": FunctionLowering._rsqrt, "math.absi": FunctionLowering._absi,
    "math.sincos": FunctionLowering._sincos,
    "math.ctlz": FunctionLowering._ctlz, "math.isfinite": FunctionLowering._isfinite,
    **{name: FunctionLowering._libm for name in _LIBM},
    "memref.load": FunctionLowering._load, "memref.store": FunctionLowering._store,
    "memref.alloc": FunctionLowering._alloc, "memref.alloca": FunctionLowering._alloc,
    "memref.dealloc": FunctionLowering._dealloc, "memref.subview": FunctionLowering._view,
    "memref.collapse_shape": FunctionLowering._view, "memref.expand_shape": FunctionLowering._view,
    "memref.cast": FunctionLowering._view, "memref.get_global": FunctionLowering._get_global,
    "memref.dim": FunctionLowering._dim, "memref.copy": FunctionLowering._copy,
    "scf.for": FunctionLowering._for, "scf.if": FunctionLowering._if, "scf.while": FunctionLowering._while,
    "cf.br": FunctionLowering._br, "cf.cond_br": FunctionLowering._cond_br,
    "func.return": FunctionLowering._return, "func.call": FunctionLowering._call,
}


class ModuleLowering:
    def __init__(self, module: Operation):
        self.module = module
        self.body = module.regions[0].blocks[0]
        self.declared = {op.sym_name for op in self.body.ops if op.sym_name}

    def declare(self, name: str, result, args) -> None:
        if name in self.declared:
            return
        self.declared.add(name)
        ret = _short(result) if result is not None else "void"
        ftype = LT.llvm_type(f"llvm.func<{ret} ({', '.join(_short(a) for a in args)})>")
        self.body.append(Operation("llvm.func", (), (), {"sym_name": StringAttr(name),
                                                          "function_type": TypeAttr(ftype)}))

    @staticmethod
    def constant_index(value: Value) -> int:
        owner = getattr(value, "op", None)
        if owner is None or owner.name != "arith.constant":
            raise ValueError("a dynamic dimension index")
        return owner.attr("value").value

    def global_op(self, op: Operation) -> Operation:
        t = op.attr("type").type
        value = op.attr("initial_value")
        count = t.num_elements
        array = LT.llvm_type(f"llvm.array<{count} x {convert_type(t.element)}>")
        attrs = {"sym_name": op.attr("sym_name"), "linkage": OpaqueAttr("#llvm.linkage<private>"),
                 "global_type": TypeAttr(array), "addr_space": IntegerAttr(0, T.i32)}
        if "constant" in op.attributes:
            attrs["constant"] = UnitAttr()
        if isinstance(value, DenseElementsAttr) and is_narrow(t.element):
            attrs["value"] = _narrow_bits(value, t, count)
        elif isinstance(value, DenseElementsAttr):
            flat = T.RankedTensorType((count,), t.element)
            attrs["value"] = value.with_type(flat)
        return Operation("llvm.mlir.global", (), (), attrs, span=op.span, location=op.location)

    def run(self) -> None:
        for op in list(self.body.ops):
            if op.name == "memref.global":
                new = self.global_op(op)
            elif op.name == "func.func":
                new = FunctionLowering(op, self).run() if op.regions and op.regions[0].blocks else \
                    self.declaration(op)
            else:
                continue
            self.body.insert_before(op, new)
            op.erase()

    def declaration(self, fn: Operation) -> Operation:
        from ...dialects.func import function_type
        ftype = function_type(fn)
        results = [convert_type(t) for t in ftype.results]
        if len(results) > 1:
            raise PassFailure("external functions with several results are not supported yet", fn.span)
        ret = _short(results[0]) if results else "void"
        args = ", ".join(_short(convert_type(t)) for t in ftype.inputs)
        return Operation("llvm.func", (), (), {"sym_name": StringAttr(fn.sym_name), "function_type": TypeAttr(
            LT.llvm_type(f"llvm.func<{ret} ({args})>"))}, span=fn.span)


@dataclass(frozen=True)
class ConvertLoopsToLLVM(Pass):
    name = "convert-loops-to-llvm"
    summary = "Lower scf/cf/memref/arith/math/func to the LLVM dialect (bare-pointer memrefs, index as i64)"
    anchor = "builtin.module"

    def run(self, module: Operation) -> None:
        ModuleLowering(module).run()
