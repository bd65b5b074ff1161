"""The C runtime functions MLIR's integration tests call (libmlir_runner_utils /
libmlir_c_runner_utils): printMemref*, printF32, printNewline, rtclock, ...

`func.call` of a declared-only function with one of these names runs it here. The
output goes to `interp.stdout` when set, else to sys.stdout, in the runtime's exact
format (`Unranked Memref base@ = 0x... rank = 2 offset = 0 sizes = [..] strides = [..] data = `).
"""
from __future__ import annotations

import sys
import time

import numpy as np

from .memref import layout_of

RUNTIME: dict = {}


def runtime(*names):
    def register(fn):
        for name in names:
            RUNTIME[name] = fn
        return fn
    return register


def stdout_of(interp):
    return getattr(interp, "stdout", None) or sys.stdout


def format_scalar(v) -> str:
    """An element as C++ `std::ostream << value` prints it (floats: 6 significant digits)."""
    v = np.asarray(v)
    kind = v.dtype.kind
    if kind == "b":
        return "1" if bool(v) else "0"
    if kind in "iu":
        return str(int(v))
    if kind == "c":
        return f"({format_scalar(v.real)},{format_scalar(v.imag)})"
    f = float(v.astype(np.float64)) if kind != "f" else float(v)
    if f != f:
        return "-nan" if np.signbit(f) else "nan"
    if f in (float("inf"), float("-inf")):
        return "inf" if f > 0 else "-inf"
    return "%g" % f


def format_memref(arr: np.ndarray, prefix: str = "Unranked Memref ") -> str:
    """printMemref*'s text: the descriptor line, then the data in nested brackets."""
    a = np.asarray(arr)
    offset, sizes, strides = layout_of(a)
    address = a.__array_interface__["data"][0] - offset * (a.dtype.itemsize or 1)
    head = (f"{prefix}base@ = {hex(address)} rank = {a.ndim} offset = {offset} "
            f"sizes = [{', '.join(map(str, sizes))}] strides = [{', '.join(map(str, strides))}] data = \n")
    parts: list[str] = []
    rank = a.ndim

    def emit(view, dim):
        if dim == 0:
            parts.append(format_scalar(view))
            return
        n = view.shape[0]
        if n == 0:
            parts.append("[" * dim + "]" * dim)
            return
        sep = ", \n" if dim > 1 else ", "  # RunnerUtils.h: `os << ", "; if (dim > 1) os << "\n";`
        parts.append("[")
        emit(view[0], dim - 1)
        if n <= 1:
            parts.append("]")
            return
        parts.append(sep)
        for i in range(1, n - 1):
            parts.append(" " * (rank - dim + 1))
            emit(view[i], dim - 1)
            parts.append(sep)
        parts.append(" " * (rank - dim + 1))
        emit(view[n - 1], dim - 1)
        parts.append("]")

    if rank == 0:
        parts.append("[")
        emit(a, 0)
        parts.append("]")
    else:
        emit(a, rank)
    return head + "".join(parts) + "\n"


def _operand_array(op, args, i=0):
    a = np.asarray(args[i])
    if not type(op.operands[i].type).__name__.endswith("MemRefType"):
        a = np.ascontiguousarray(a).copy()  # a tensor: bufferized into a fresh identity-layout buffer
    return a


def _print_memref(prefix):
    def run(interp, op, args):
        stdout_of(interp).write(format_memref(_operand_array(op, args), prefix))
        return []
    return run


def _print_shape(interp, op, args):
    text = format_memref(_operand_array(op, args), "Unranked Memref ")
    stdout_of(interp).write(text.split(" data = ")[0] + "\n")
    return []


def _verify_memref(interp, op, args):
    """verifyMemRef*: the number of elements that differ (floats: relative error > 1e-6 for f32,
    1e-12 for f64), or -1 when the shapes differ."""
    actual, expected = (np.asarray(a) for a in args[:2])
    if actual.shape != expected.shape:
        return [np.array(-1, dtype=np.int64)]
    if actual.dtype.kind == "f":
        eps = 1e-12 if actual.dtype == np.float64 else 1e-6
        ok = np.isfinite(actual) & np.isfinite(expected) & (np.abs(actual - expected) <= eps * np.abs(expected))
    else:
        ok = actual == expected
    return [np.array(int((~ok).sum()), dtype=np.int64)]


for _t in ("I8", "I32", "I64", "F32", "F64"):
    RUNTIME[f"printMemrefShape{_t}"] = _print_shape
for _t in ("I32", "F32", "F64"):
    RUNTIME[f"verifyMemRef{_t}"] = _verify_memref


for _t in ("F32", "F64", "F16", "BF16", "I8", "I16", "I32", "I64", "Ind", "C32", "C64", "I1"):
    RUNTIME[f"printMemref{_t}"] = _print_memref("Unranked Memref ")
    for _r in range(0, 5):
        RUNTIME[f"printMemref{_r}d{_t}"] = _print_memref("Memref ")
RUNTIME["printMemrefVector4x4xf32"] = _print_memref("Memref ")


def _write(text):
    def run(interp, op, args):
        stdout_of(interp).write(text)
        return []
    return run


RUNTIME.update({"printNewline": _write("\n"), "printComma": _write(", "), "printOpen": _write("( "),
                "printClose": _write(" )")})


@runtime("printF32", "printF64", "printF16", "printBF16")
def _print_float(interp, op, args):
    stdout_of(interp).write("%g" % float(np.asarray(args[0]).astype(np.float64)) if np.isfinite(
        np.asarray(args[0]).astype(np.float64)) else format_scalar(args[0]))
    return []


@runtime("printI64", "printU64", "printI32")
def _print_int(interp, op, args):
    v = np.asarray(args[0])
    if op.attr("callee").root == "printU64":
        v = v.view(np.uint64) if v.dtype.itemsize == 8 else v
    stdout_of(interp).write(str(int(v)))
    return []


@runtime("rtclock")
def _rtclock(interp, op, args):
    return [np.array(time.perf_counter(), dtype=np.float64)]


def call(interp, op, name, args):
    """Run runtime function `name`; None when it is not one."""
    fn = RUNTIME.get(name)
    if fn is None:
        return None
    return fn(interp, op, args)
