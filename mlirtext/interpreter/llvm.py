"""llvm dialect semantics: arithmetic, casts, aggregates, vectors, memory, control flow, calls.

Stepped op by op on the memory of `llvm_memory` (one `Memory` per interpreter,
made on first use). Integer semantics are arith's (wrap, division by zero and
oversized shifts give fixed values, float-to-int casts saturate): where LLVM
says poison the interpreter picks a deterministic value; lowerings must not
rely on it. Intrinsics are in `llvm_intrinsics`, external functions (malloc,
free, memcpy, print functions) in `llvm_runtime`, functions, calls and branches in
`llvm_calls`.
"""
from __future__ import annotations

import numpy as np

from ..dialects import llvm_types as LT
from ..dialects.llvm import DYNAMIC_INDEX, FCMP_PREDICATES, ICMP_PREDICATES
from ..ir import types as T
from ..ir.arrays import attr_to_array, dense_to_array, dtype_of, unsigned_view, wrap_to_width
from ..ir.attributes import ArrayAttr, FloatAttr, IntegerAttr, StringAttr, SymbolRefAttr
from ..ir.dense import DenseElementsAttr
from . import arith as A
from .llvm_memory import NULL, Memory, Pointer, decode, encode, field_offset, size_of, zero_value
from .machine import InterpreterError
from .registry import impl


# ---- the memory of a run, globals and functions -------------------------------------------------
def memory_of(interp) -> Memory:
    """The interpreter's LLVM memory (made on first use)."""
    memory = getattr(interp, "llvm_memory", None)
    if memory is None:
        memory = interp.llvm_memory = Memory()
    return memory


def _global_ops(interp) -> dict:
    table = getattr(interp, "_llvm_global_ops", None)
    if table is None:
        table = {}
        for op in interp.module.walk():
            if op.name == "llvm.mlir.global" and isinstance(op.attr("sym_name"), StringAttr):
                table.setdefault(op.attr("sym_name").value, op)
        interp._llvm_global_ops = table
    return table


def symbol_pointer(interp, name: str) -> Pointer:
    """The address of global or function `name` (a global is allocated and initialized on first use)."""
    memory = memory_of(interp)
    ptr = memory.globals.get(name)
    if ptr is not None:
        return ptr
    op = _global_ops(interp).get(name)
    if op is None:
        if name in interp.functions:
            return memory.function_pointer(name)
        raise InterpreterError(f"no global or function named '@{name}'")
    t = op.attr("global_type").type
    align = op.attr("alignment")
    ptr = memory.allocate(size_of(t), "global", align.value if isinstance(align, IntegerAttr) else 16, name)
    memory.globals[name] = ptr  # before the initializer runs: it may take its own address
    value = op.attr("value")
    if value is not None:
        init = attribute_value(value, t)
    elif op.regions and op.regions[0].blocks:
        init = interp.run_region(op.regions[0], [])[0]
    else:
        init = None
    if init is not None:
        memory.store(ptr, init, t, f"initializer of @{name}", force=True)
    if "constant" in op.attributes:
        memory.allocs[ptr.alloc].readonly = True
    return ptr


def op_info(interp, op, make):
    """`make(op)` computed once per op and interpreter (types, layouts, segment sizes)."""
    cache = interp.__dict__.get("_llvm_op_cache")
    if cache is None:
        cache = interp._llvm_op_cache = {}
    entry = cache.get(id(op))
    if entry is None or entry[0] is not op:
        entry = cache[id(op)] = (op, make(op))
    return entry[1]


# ---- attributes to values -------------------------------------------------------------------------
def attribute_value(attr, t):
    """The value an attribute denotes as the runtime form of LLVM type `t`."""
    if isinstance(attr, StringAttr):
        data = attr.value.encode("latin-1", "replace")
        if isinstance(t, LT.LLVMArrayType):
            return [np.array(b, np.uint8).view(np.int8).reshape(()) for b in data]
        raise ValueError(f"a string cannot be a value of type {t}")
    if isinstance(t, LT.LLVMArrayType):
        if isinstance(attr, ArrayAttr):
            return [attribute_value(a, t.element) for a in attr.items]
        if isinstance(attr, DenseElementsAttr):
            depth, leaf = 0, t
            while isinstance(leaf, LT.LLVMArrayType):
                depth, leaf = depth + 1, leaf.element
            leaf_scalar = leaf.element if isinstance(leaf, T.VectorType) else leaf
            flat = dense_to_array(attr, dtype_of(leaf_scalar), tuple(attr.type.shape))
            return _nest(flat, depth, leaf)
        if isinstance(attr, (IntegerAttr, FloatAttr)):
            return [attribute_value(attr, t.element) for _ in range(t.size)]
    if isinstance(t, LT.LLVMStructType) and isinstance(attr, ArrayAttr):
        return tuple(attribute_value(a, ft) for a, ft in zip(attr.items, t.body))
    if LT.is_pointer(t):
        if isinstance(attr, IntegerAttr) and attr.value == 0:
            return NULL
        raise ValueError(f"cannot make a pointer from {attr}")
    if isinstance(attr, DenseElementsAttr) and not isinstance(t, T.ShapedType):
        return dense_to_array(attr, dtype_of(t), ())
    return attr_to_array(attr, t)


def _nest(flat: np.ndarray, depth: int, leaf):
    if depth == 0:
        if isinstance(leaf, T.VectorType):
            return flat.reshape(leaf.shape).copy()
        return np.asarray(flat).reshape(()).copy()
    return [_nest(flat[i], depth - 1, leaf) for i in range(flat.shape[0])]


# ---- integer and float arithmetic --------------------------------------------------------------
_INT_OPS = {"add": "addi", "sub": "subi", "mul": "muli", "udiv": "divui", "sdiv": "divsi", "urem": "remui",
            "srem": "remsi", "and": "andi", "or": "ori", "xor": "xori", "shl": "shli", "lshr": "shrui",
            "ashr": "shrsi"}
_FLOAT_OPS = {"fadd": "addf", "fsub": "subf", "fmul": "mulf", "fdiv": "divf", "frem": "remf"}


_WRAPPING = {"add", "sub", "mul", "and", "or", "xor"}  # numpy's ufuncs wrap these at the dtype's width


def _result_type_info(op):
    t = op.results[0].type
    e = t.element if isinstance(t, T.VectorType) else t
    odd_width = isinstance(e, T.IntegerType) and e.width not in (1, 8, 16, 32, 64)
    return t, dtype_of(t), odd_width


def _int_binary(name, fn):
    plain = name in _WRAPPING

    def run(interp, op, args):
        a, b = args
        t, dtype, odd_width = op_info(interp, op, _result_type_info)
        if a.dtype == np.bool_:  # i1: compute on 0/1 and keep the low bit
            with np.errstate(all="ignore"):
                return [np.asarray((fn(a.astype(np.uint8), b.astype(np.uint8)) & 1) != 0)]
        if plain and not odd_width:
            return [np.asarray(fn(a, b))]
        with np.errstate(all="ignore"):
            out = np.asarray(fn(a, b))
        if out.dtype != dtype:
            out = out.astype(dtype)
        return [wrap_to_width(out, t) if odd_width else out]
    return run


def _float_binary(fn):
    def run(interp, op, args):
        a, b = args
        with np.errstate(all="ignore"):
            return [np.asarray(fn(a, b)).astype(a.dtype, copy=False)]
    return run


for _name, _arith in _INT_OPS.items():
    impl(f"llvm.{_name}")(_int_binary(_name, A.INT_BINARY[_arith]))
for _name, _arith in _FLOAT_OPS.items():
    impl(f"llvm.{_name}")(_float_binary(A.FLOAT_BINARY[_arith]))


@impl("llvm.fneg")
def _fneg(interp, op, args):
    return [np.negative(args[0])]


@impl("llvm.freeze", "llvm.intr.launder.invariant.group", "llvm.intr.strip.invariant.group")
def _identity(interp, op, args):
    return [args[0]]


def _addresses(interp, v):
    memory = memory_of(interp)
    if isinstance(v, Pointer):
        return np.array(memory.address_of(v), np.uint64)
    return np.array([memory.address_of(p) for p in np.asarray(v, object).reshape(-1)],
                    np.uint64).reshape(np.shape(v))


@impl("llvm.icmp")
def _icmp(interp, op, args):
    a, b = args
    fn, pointers = op_info(interp, op, lambda o: (A.CMPI_FUNCTIONS[ICMP_PREDICATES[o.attr("predicate").value]],
                                                  LT.is_pointer_like(o.operand("lhs").type)))
    if pointers:
        a, b = _addresses(interp, a), _addresses(interp, b)
    return [np.asarray(fn(a, b))]


@impl("llvm.fcmp")
def _fcmp(interp, op, args):
    a, b = args
    name = FCMP_PREDICATES[op.attr("predicate").value].lstrip("_")
    with np.errstate(invalid="ignore"):
        return [np.asarray(A.CMPF_FUNCTIONS[name](a, b))]


@impl("llvm.select")
def _select(interp, op, args):
    cond, a, b = args
    if np.ndim(cond) == 0:
        return [a if bool(cond) else b]
    return [np.where(cond, a, b).astype(np.asarray(a).dtype, copy=False)]


# ---- casts ------------------------------------------------------------------------------------
def int_width(t) -> int:
    e = t.element if isinstance(t, T.VectorType) else t
    return e.width if isinstance(e, T.IntegerType) else 64


def _zext_source(a: np.ndarray, t) -> np.ndarray:
    """`a` as non-negative integers (of its LLVM width)."""
    if a.dtype == np.bool_:
        return a.astype(np.uint8)
    bits = int_width(t)
    if bits in (8, 16, 32, 64):
        return unsigned_view(a)
    return a.astype(np.int64) & ((1 << bits) - 1)


def _cast_types(op) -> tuple:
    return op.operand("arg").type, op.results[0].type


@impl("llvm.trunc", "llvm.zext", "llvm.sext", "llvm.fptrunc", "llvm.fpext", "llvm.fptosi", "llvm.fptoui",
      "llvm.sitofp", "llvm.uitofp")
def _cast(interp, op, args):
    (a,) = args
    kind = op.name[5:]
    src_t, dst_t = op_info(interp, op, _cast_types)
    dtype = dtype_of(dst_t)
    with np.errstate(all="ignore"):
        if kind == "trunc":
            if dtype == np.bool_:
                return [np.asarray((a & 1) != 0)]
            return [A.result_value(op, a.astype(dtype))]
        if kind in ("zext", "uitofp"):
            return [A.result_value(op, _zext_source(a, src_t).astype(dtype))]
        if kind in ("sext", "sitofp"):
            if a.dtype == np.bool_:
                a = np.where(a, -1, 0).astype(np.int8)
            return [A.result_value(op, a.astype(dtype))]
        if kind in ("fptosi", "fptoui"):
            if dtype == np.bool_:
                return [np.asarray(np.trunc(a) != 0)]
            bits = int_width(dst_t)
            if kind == "fptoui":
                lo, hi = 0, (1 << bits) - 1
                target = np.dtype(f"u{dtype.itemsize}")
            else:
                lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
                target = np.dtype(f"i{dtype.itemsize}")
            # out of range is poison: saturate (NaN -> 0), as arith does
            out = saturating_float_to_int(a, lo, hi, target)
            return [A.result_value(op, out.view(dtype) if out.dtype.itemsize == dtype.itemsize else out.astype(dtype))]
        return [np.asarray(a.astype(dtype))]  # fptrunc, fpext


def saturating_float_to_int(a: np.ndarray, lo: int, hi: int, target: np.dtype) -> np.ndarray:
    """trunc(a) clamped to [lo, hi] (exact at 64 bits, where hi is not a float), NaN -> 0."""
    x = np.nan_to_num(np.trunc(a.astype(np.float64)), nan=0.0)
    top = float(hi) + 1.0                       # 2**bits-ish: exactly representable
    inside = np.clip(x, float(lo), np.nextafter(top, 0.0))
    out = inside.astype(target)
    return np.where(x >= top, np.array(hi).astype(target), out)


@impl("llvm.bitcast")
def _bitcast(interp, op, args):
    (a,) = args
    src_t, dst_t = op_info(interp, op, _cast_types)
    if LT.is_pointer_like(src_t) and LT.is_pointer_like(dst_t):
        return [a]
    memory = memory_of(interp)
    raw = np.frombuffer(encode(a, src_t, memory), np.uint8)
    if size_of(dst_t) > len(raw):
        raw = np.concatenate([raw, np.zeros(size_of(dst_t) - len(raw), np.uint8)])
    return [decode(raw, 0, dst_t, memory)]


@impl("llvm.addrspacecast")
def _addrspacecast(interp, op, args):
    return [args[0]]


@impl("llvm.ptrtoint", "llvm.ptrtoaddr")
def _ptrtoint(interp, op, args):
    addr = _addresses(interp, args[0])
    dtype = dtype_of(op.results[0].type)
    return [A.result_value(op, addr.astype(np.uint64).astype(dtype))]


@impl("llvm.inttoptr")
def _inttoptr(interp, op, args):
    memory = memory_of(interp)
    a = _zext_source(np.asarray(args[0]), op_info(interp, op, lambda o: o.operand("arg").type))
    if a.ndim == 0:
        return [memory.pointer_at(int(a))]
    out = np.empty(a.shape, object)
    out.reshape(-1)[:] = [memory.pointer_at(int(x)) for x in a.reshape(-1)]
    return [out]


# ---- constants and values ------------------------------------------------------------------------
@impl("llvm.mlir.constant")
def _constant(interp, op, args):
    return [attribute_value(op.attr("value"), op.results[0].type)]


@impl("llvm.mlir.undef", "llvm.mlir.poison", "llvm.mlir.zero")
def _zero(interp, op, args):
    return [zero_value(op.results[0].type)]


@impl("llvm.mlir.addressof")
def _addressof(interp, op, args):
    ref = op.attr("global_name")
    return [symbol_pointer(interp, ref.root if isinstance(ref, SymbolRefAttr) else str(ref))]


# ---- aggregates ---------------------------------------------------------------------------------
def _position(op) -> list:
    return list(op.attr("position").values)


@impl("llvm.extractvalue")
def _extractvalue(interp, op, args):
    v = args[0]
    for i in _position(op):
        v = v[i]
    return [v]


def _replace(container, path, value):
    i = path[0]
    inner = value if len(path) == 1 else _replace(container[i], path[1:], value)
    if isinstance(container, tuple):
        return container[:i] + (inner,) + container[i + 1:]
    out = list(container)
    out[i] = inner
    return out


@impl("llvm.insertvalue")
def _insertvalue(interp, op, args):
    container, value = args
    return [_replace(container, _position(op), value)]


# ---- vectors ------------------------------------------------------------------------------------
def _element(v, i):
    e = v[i]
    return e if isinstance(e, Pointer) else np.asarray(e).copy()


@impl("llvm.extractelement")
def _extractelement(interp, op, args):
    vec, pos = args
    i = int(_zext_source(np.asarray(pos), op_info(interp, op, lambda o: o.operand("position").type)))
    if i >= vec.shape[0]:  # poison: a fixed value
        return [zero_value(op.results[0].type)]
    return [_element(vec, i)]


@impl("llvm.insertelement")
def _insertelement(interp, op, args):
    vec, value, pos = args
    i = int(_zext_source(np.asarray(pos), op_info(interp, op, lambda o: o.operand("position").type)))
    out = vec.copy()
    if i < out.shape[0]:
        out[i] = value
    return [out]


@impl("llvm.shufflevector")
def _shufflevector(interp, op, args):
    a, b = args
    both = np.concatenate([a.reshape(-1), b.reshape(-1)])
    mask = np.array(op.attr("mask").values, np.int64)
    out = both[np.where(mask < 0, 0, mask)]
    if (mask < 0).any():  # undefined lanes: zero
        out = np.where(mask < 0, zero_value(T.VectorType((1,), op.results[0].type.element))[0], out)
    return [out.astype(a.dtype, copy=False)]


# ---- memory -------------------------------------------------------------------------------------
@impl("llvm.alloca")
def _alloca(interp, op, args):
    memory = memory_of(interp)
    t, size_t, align = op_info(interp, op, lambda o: (o.attr("elem_type").type, o.operand("arraySize").type,
                                                      o.attr("alignment")))
    count = int(_zext_source(np.asarray(args[0]), size_t))
    ptr = memory.allocate(count * size_of(t), "stack", align.value if isinstance(align, IntegerAttr) else 16)
    memory.stack.append(ptr.alloc)
    return [ptr]


def _gep_plan(op):
    """(constant byte offset, [(dynamic operand index, scale)]): the GEP as a linear form."""
    t = op.attr("elem_type").type
    raw = op.attr("rawConstantIndices").values
    const, dynamic, k = 0, [], 0
    for n, r in enumerate(raw):
        if n == 0:
            scale = size_of(t)
        elif isinstance(t, LT.LLVMStructType):
            if r == DYNAMIC_INDEX:
                raise InterpreterError("'llvm.getelementptr': a struct index must be a constant")
            const += field_offset(t, r)
            t = t.body[r]
            continue
        else:  # array or vector
            t = t.element
            scale = size_of(t)
        if r == DYNAMIC_INDEX:
            k += 1
            dynamic.append((k, scale))
        else:
            const += r * scale
    return const, dynamic


@impl("llvm.getelementptr")
def _gep(interp, op, args):
    base = args[0]
    if not isinstance(base, Pointer):
        raise InterpreterError("'llvm.getelementptr': vectors of pointers are not supported")
    const, dynamic = op_info(interp, op, _gep_plan)
    offset = const
    for i, scale in dynamic:
        index = args[i]
        if index.ndim:
            raise InterpreterError("'llvm.getelementptr': vector indices are not supported")
        offset += int(index) * scale
    return [Pointer(base.alloc, base.offset + offset)]


def _scalar_access(t):
    """(numpy dtype, size) when `t` is a plain int/float that a load can read with one view."""
    if isinstance(t, (T.IntegerType, T.FloatType, T.IndexType)) and not (
            isinstance(t, T.IntegerType) and t.width not in (8, 16, 32, 64)):
        dtype = dtype_of(t)
        return dtype, dtype.itemsize
    return None


@impl("llvm.load")
def _load(interp, op, args):
    memory = memory_of(interp)
    fast = op_info(interp, op, lambda o: _scalar_access(o.results[0].type))
    if fast is not None:
        ptr = args[0]
        a = memory.checked(ptr, fast[1], "'llvm.load'")
        return [a.data[ptr.offset:ptr.offset + fast[1]].view(fast[0]).reshape(()).copy()]
    return [memory.load(args[0], op.results[0].type, "'llvm.load'")]


@impl("llvm.store")
def _store(interp, op, args):
    value, ptr = args
    memory = memory_of(interp)
    fast = op_info(interp, op, lambda o: _scalar_access(o.operand("value").type))
    if fast is not None and isinstance(value, np.ndarray) and value.dtype == fast[0]:
        a = memory.checked(ptr, fast[1], "'llvm.store'", write=True)
        a.data[ptr.offset:ptr.offset + fast[1]] = value.reshape(1).view(np.uint8)
        return []
    memory.store(ptr, value, op.operand("value").type, "'llvm.store'")
    return []


_RMW = {
    "xchg": lambda old, v: v, "add": np.add, "sub": np.subtract, "_and": np.bitwise_and,
    "nand": lambda old, v: ~np.bitwise_and(old, v), "_or": np.bitwise_or, "_xor": np.bitwise_xor,
    "max": np.maximum, "min": np.minimum, "umax": A.umax, "umin": A.umin,
    "fadd": np.add, "fsub": np.subtract, "fmax": np.fmax, "fmin": np.fmin,
    "fmaximum": np.maximum, "fminimum": np.minimum,
}


@impl("llvm.atomicrmw")
def _atomicrmw(interp, op, args):
    from ..dialects.llvm import ATOMIC_BIN_OPS
    ptr, value = args
    t, kind = op_info(interp, op, lambda o: (o.operand("val").type, ATOMIC_BIN_OPS[o.attr("bin_op").value]))
    fn = _RMW.get(kind)
    if fn is None:
        raise InterpreterError(f"'llvm.atomicrmw' {kind.lstrip('_')} is not supported")
    memory = memory_of(interp)
    old = memory.load(ptr, t, "'llvm.atomicrmw'")
    with np.errstate(all="ignore"):
        new = np.asarray(fn(old, value)).astype(old.dtype) if not isinstance(old, Pointer) else value
    memory.store(ptr, new, t, "'llvm.atomicrmw'")
    return [old]


@impl("llvm.cmpxchg")
def _cmpxchg(interp, op, args):
    ptr, expected, new = args
    t = op_info(interp, op, lambda o: o.operand("cmp").type)
    memory = memory_of(interp)
    old = memory.load(ptr, t, "'llvm.cmpxchg'")
    same = (old == expected) if isinstance(old, Pointer) else bool(np.asarray(old == expected))
    if same:
        memory.store(ptr, new, t, "'llvm.cmpxchg'")
    return [(old, np.array(same))]


@impl("llvm.fence", "llvm.intr.lifetime.start", "llvm.intr.lifetime.end", "llvm.intr.invariant.end",
      "llvm.intr.experimental.noalias.scope.decl", "llvm.intr.debugtrap", "llvm.intr.stackrestore")
def _nothing(interp, op, args):
    return []


@impl("llvm.intr.invariant.start")
def _invariant_start(interp, op, args):
    return [NULL]


@impl("llvm.intr.stacksave")
def _stacksave(interp, op, args):
    return [NULL]


from . import llvm_calls, llvm_intrinsics  # noqa: E402,F401 - register control flow, calls, llvm.intr.*
from .llvm_calls import builtin_signature, call_entry, call_function, call_with_memrefs, invoke_symbol  # noqa: E402

__all__ = ["memory_of", "symbol_pointer", "call_function", "call_entry", "attribute_value", "invoke_symbol",
           "builtin_signature", "call_with_memrefs", "op_info"]
