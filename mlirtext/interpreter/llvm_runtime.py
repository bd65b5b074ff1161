"""External functions an llvm-level program calls: the C library's memory functions
(malloc, free, memcpy, ...), the MLIR runner utils' print functions (the ones in
`runtime_calls`, plus printMemref* on descriptors in memory), printf/puts, and libm.
"""
from __future__ import annotations

import re

import numpy as np

from ..ir.arrays import unsigned_view
from .llvm_memory import NULL, descriptor_to_array
from .machine import InterpreterError
from .runtime_calls import stdout_of

EXTERNALS: dict = {}


def external(*names):
    def register(fn):
        for name in names:
            EXTERNALS[name] = fn
        return fn
    return register


def _mem(interp):
    from .llvm import memory_of
    return memory_of(interp)


def _what(op, name: str) -> str:
    return f"'{op.name}' @{name}" if op is not None else name


def _u(v) -> int:
    a = np.asarray(v)
    return int(unsigned_view(a)) if a.dtype != np.bool_ else int(a)


def call_external(interp, name: str, args: list, op) -> list:
    """Run external function `name` (declared, no body) on `args`."""
    fn = EXTERNALS.get(name)
    if fn is not None:
        return fn(interp, op, args)
    from .runtime_calls import RUNTIME
    fn = RUNTIME.get(name)
    if fn is not None and not name.startswith("printMemref"):
        return fn(interp, op, args)
    raise InterpreterError(f"call to external function '@{name}', which the interpreter does not provide "
                           f"(it runs malloc/free/memcpy/memset/printf, the runner utils' print functions "
                           f"and libm)")


# ---- memory ------------------------------------------------------------------------------------------
@external("malloc", "_mlir_memref_to_llvm_alloc")
def _malloc(interp, op, args):
    return [_mem(interp).allocate(_u(args[0]), "heap", 16)]


@external("aligned_alloc", "_mlir_memref_to_llvm_aligned_alloc")
def _aligned_alloc(interp, op, args):
    return [_mem(interp).allocate(_u(args[1]), "heap", _u(args[0]))]


@external("calloc")
def _calloc(interp, op, args):
    return [_mem(interp).allocate(_u(args[0]) * _u(args[1]), "heap", 16)]


@external("free", "_mlir_memref_to_llvm_free")
def _free(interp, op, args):
    _mem(interp).free(args[0], _what(op, "free"))
    return []


@external("memcpy", "memmove")
def _memcpy(interp, op, args):
    _mem(interp).copy(args[0], args[1], _u(args[2]), _what(op, "memcpy"))
    return [args[0]]


@external("memset")
def _memset(interp, op, args):
    _mem(interp).fill(args[0], _u(args[1]), _u(args[2]), _what(op, "memset"))
    return [args[0]]


@external("abort", "exit")
def _abort(interp, op, args):
    raise InterpreterError("the program called abort()" if not args else f"the program called exit({int(args[0])})")


# ---- printing ----------------------------------------------------------------------------------------
@external("printString", "printCString")
def _print_string(interp, op, args):
    stdout_of(interp).write(_mem(interp).c_string(args[0], "printString"))
    return []


@external("puts")
def _puts(interp, op, args):
    stdout_of(interp).write(_mem(interp).c_string(args[0], "puts") + "\n")
    return [np.array(0, np.int32)]


_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|j|z|t|L)?([diouxXeEfFgGcsp%])")


@external("printf")
def _printf(interp, op, args):
    memory = _mem(interp)
    fmt = memory.c_string(args[0], "printf")
    rest = iter(args[1:])
    out = []
    pos = 0
    for m in _SPEC.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, length, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        width = str(_u(next(rest))) if width == "*" else (width or "")
        prec = str(_u(next(rest))) if prec == "*" else prec
        spec = "%" + flags + width + ("." + prec if prec is not None else "")
        value = next(rest)
        if conv == "s":
            out.append((spec + "s") % memory.c_string(value, "printf %s"))
        elif conv == "p":
            out.append(hex(memory.address_of(value)))
        elif conv == "c":
            out.append((spec + "c") % chr(_u(value) & 0xFF))
        elif conv in "di":
            out.append((spec + "d") % int(np.asarray(value)))
        elif conv in "ouxX":
            bits = 64 if length in ("l", "ll", "j", "z", "t") else 32
            out.append((spec + conv.replace("u", "d")) % (_u(value) & ((1 << bits) - 1)))
        else:
            out.append((spec + conv) % float(np.asarray(value)))
    out.append(fmt[pos:])
    text = "".join(out)
    stdout_of(interp).write(text)
    return [np.array(len(text), np.int32)]


_ELEMENT_DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16, "I8": np.int8, "I16": np.int16,
                   "I32": np.int32, "I64": np.int64, "Ind": np.int64, "C32": np.complex64, "C64": np.complex128,
                   "I1": np.bool_}


def _bf16():
    import ml_dtypes
    return ml_dtypes.bfloat16


def _print_memref_at(interp, desc_ptr, rank: int, kind: str, prefix: str) -> None:
    """printMemref of the ranked descriptor stored at `desc_ptr` (ptr, ptr, i64, sizes, strides)."""
    from .runtime_calls import format_memref
    memory = _mem(interp)
    words = memory.bytes_at(desc_ptr, 8 * (3 + 2 * rank), "printMemref descriptor").view(np.int64)
    aligned = memory.pointer_at(int(words[1]))
    offset = int(words[2])
    sizes, strides = [int(x) for x in words[3:3 + rank]], [int(x) for x in words[3 + rank:]]
    dtype = _bf16() if kind == "BF16" else _ELEMENT_DTYPES[kind]
    pieces = [NULL, aligned, offset] + sizes + strides
    array = descriptor_to_array(memory, pieces, dtype, copy=True)
    body = format_memref(array, prefix).split("\n", 1)[1]
    head = (f"{prefix}base@ = {hex(memory.address_of(aligned))} rank = {rank} offset = {offset} "
            f"sizes = [{', '.join(map(str, sizes))}] strides = [{', '.join(map(str, strides))}] data = \n")
    stdout_of(interp).write(head + body)


def _print_memref(kind):
    def unranked(interp, op, args):  # (rank, descriptor pointer), the lowered memref<*xT>
        _print_memref_at(interp, args[1], int(np.asarray(args[0])), kind, "Unranked Memref ")
        return []

    def ciface(interp, op, args):  # a pointer to {i64 rank, ptr descriptor}
        memory = _mem(interp)
        words = memory.bytes_at(args[0], 16, "printMemref descriptor").view(np.int64)
        _print_memref_at(interp, memory.pointer_at(int(words[1])), int(words[0]), kind, "Unranked Memref ")
        return []
    return unranked, ciface


for _kind in list(_ELEMENT_DTYPES) + ["BF16"]:
    _plain, _c = _print_memref(_kind)
    EXTERNALS[f"printMemref{_kind}"] = _plain
    EXTERNALS[f"_mlir_ciface_printMemref{_kind}"] = _c


def _ranked_view(interp, unranked_ptr, item: int, what: str) -> np.ndarray:
    """A writable view of the memref an unranked descriptor {i64 rank, ptr desc} in memory denotes,
    with elements as raw `item`-byte records."""
    memory = _mem(interp)
    words = memory.bytes_at(unranked_ptr, 16, what).view(np.int64)
    rank, desc = int(words[0]), memory.pointer_at(int(words[1]))
    fields = memory.bytes_at(desc, 8 * (3 + 2 * rank), what).view(np.int64)
    pieces = [NULL, memory.pointer_at(int(fields[1])), int(fields[2])] + [int(x) for x in fields[3:]]
    return descriptor_to_array(memory, pieces, np.dtype(f"V{item}"), copy=False)


@external("memrefCopy")
def _memref_copy(interp, op, args):
    """memref.copy's lowering for non-contiguous memrefs: (element size, unranked src, unranked dst)."""
    item = _u(args[0])
    src = _ranked_view(interp, args[1], item, "memrefCopy source")
    dst = _ranked_view(interp, args[2], item, "memrefCopy target")
    if src.shape != dst.shape:
        raise InterpreterError(f"memrefCopy: shapes differ ({src.shape} vs {dst.shape})")
    dst[...] = src.copy()
    return []


# ---- libm ----------------------------------------------------------------------------------------------
_LIBM = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log2": np.log2, "log10": np.log10,
    "log1p": np.log1p, "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt, "cbrt": np.cbrt, "fabs": np.abs,
    "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "round": None,
    "roundeven": np.rint, "rint": np.rint, "nearbyint": np.rint, "pow": np.power, "atan2": np.arctan2,
    "fmod": np.fmod, "copysign": np.copysign, "fmin": np.fmin, "fmax": np.fmax, "fma": lambda a, b, c: a * b + c,
    "erf": None, "erfc": None,
}


def _libm(name, fn, dtype):
    def run(interp, op, args):
        if name == "round":
            from .llvm_intrinsics import round_half_away
            out = round_half_away(np.asarray(args[0], np.float64))
        elif fn is None:
            import math
            out = np.vectorize(getattr(math, name), otypes=[np.float64])(*[np.asarray(a, np.float64) for a in args])
        else:
            with np.errstate(all="ignore"):
                out = fn(*[np.asarray(a, np.float64) for a in args])
        return [np.asarray(out).astype(dtype)]
    return run


for _name, _fn in _LIBM.items():
    EXTERNALS.setdefault(_name, _libm(_name, _fn, np.float64))
    EXTERNALS.setdefault(_name + "f", _libm(_name, _fn, np.float32))
