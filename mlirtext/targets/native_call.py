"""Calling a lowered function natively with numpy arrays, as its `mlirtext.abi` reflection says.

The calling convention is the llvm level's (`loops_to_llvm`): a tensor argument
is a pointer to its contiguous data, a scalar goes by value; a tensor result
comes back as a pointer to a fresh `malloc`ed buffer (several results: one
struct of them, returned by value). Results become numpy arrays over those
buffers (no copy), `free`d when the arrays are collected. ctypes releases the
GIL for the duration of the call.
"""
from __future__ import annotations

import ctypes
import weakref

import numpy as np

from ..dialects import llvm_types as LT
from ..interpreter.abi import ABI_ATTR
from ..ir import types as T
from ..ir.arrays import check_value, dtype_of
from ..ir.attributes import TypeAttr
from ..ir.core import Operation
from .llvm_cpu import NativeLibrary
from .llvm_ir import RESULTS_WRAPPER

_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes = [ctypes.c_void_p]
_free.restype = None

_SCALARS = {("i", 1): ctypes.c_bool, ("i", 8): ctypes.c_int8, ("i", 16): ctypes.c_int16, ("i", 32): ctypes.c_int32,
            ("i", 64): ctypes.c_int64, ("f", 32): ctypes.c_float, ("f", 64): ctypes.c_double}


class NativeCallError(ValueError):
    """Arguments that do not fit the signature, or a function that cannot be called natively."""


def c_type(t: T.Type):
    """The ctypes type of a value of (llvm-level) type t."""
    if LT.is_pointer(t) or isinstance(t, (T.ShapedType,)):
        return ctypes.c_void_p
    if isinstance(t, T.IndexType):
        return ctypes.c_int64
    if isinstance(t, T.IntegerType):
        c = _SCALARS.get(("i", t.width))
    elif isinstance(t, T.FloatType):
        c = _SCALARS.get(("f", t.width))
    else:
        c = None
    if c is None:
        raise NativeCallError(f"values of type {t} cannot cross a native call yet")
    return c


def abi_signature(fn: Operation) -> T.FunctionType:
    attr = fn.attributes.get(ABI_ATTR)
    if not (isinstance(attr, TypeAttr) and isinstance(attr.type, T.FunctionType)):
        raise NativeCallError(f"@{fn.sym_name} has no '{ABI_ATTR}' reflection: its pointers cannot be given as arrays")
    return attr.type


class NativeFunction:
    """A lowered `llvm.func` (with reflection) in a loaded library, callable with numpy arrays."""

    def __init__(self, library: NativeLibrary, fn: Operation):
        self.name = fn.sym_name
        self.signature = abi_signature(fn)
        ftype = fn.attr("function_type").type
        self.arg_types = [c_type(t) for t in ftype.params]
        results = self.signature.results
        self.library = library  # keeps the code alive
        self.results_struct = None
        if len(results) > 1:  # through the wrapper that stores the struct at a pointer (see llvm_ir)
            fields = [(f"r{i}", c_type(t)) for i, t in enumerate(ftype.result.body)]
            self.results_struct = type(f"{self.name}_results", (ctypes.Structure,), {"_fields_": fields})
            self.cfunc = ctypes.CFUNCTYPE(None, ctypes.c_void_p, *self.arg_types)(
                library.address(RESULTS_WRAPPER + self.name))
        else:
            restype = c_type(ftype.result) if results else None
            self.cfunc = ctypes.CFUNCTYPE(restype, *self.arg_types)(library.address(self.name))

    def __call__(self, *args) -> list[np.ndarray]:
        sig = self.signature
        if len(args) != len(sig.inputs):
            raise NativeCallError(f"@{self.name} takes {len(sig.inputs)} argument(s), got {len(args)}")
        keep, raw = [], []
        for i, (value, t) in enumerate(zip(args, sig.inputs)):
            try:
                array = np.ascontiguousarray(check_value(value, t, f"argument {i} of @{self.name}"))
            except ValueError as e:
                raise NativeCallError(str(e)) from None
            keep.append(array)
            raw.append(array.ctypes.data if isinstance(t, T.ShapedType) else array.item())
        if self.results_struct is not None:
            out = self.results_struct()
            self.cfunc(ctypes.addressof(out), *raw)
            values = [getattr(out, f"r{i}") for i in range(len(sig.results))]
        else:
            out = self.cfunc(*raw)
            if not sig.results:
                return []
            values = [out]
        results = []
        for value, t in zip(values, sig.results):
            results.append(_take_buffer(value, t) if isinstance(t, T.ShapedType) else
                           np.asarray(value, dtype=dtype_of(t)))
        return results


def _take_buffer(address: int, t: T.ShapedType) -> np.ndarray:
    """A malloc'ed result buffer as a numpy array, without a copy: the buffer is `free`d when
    the last array viewing it goes away."""
    dtype = dtype_of(t)
    count = int(np.prod(t.shape, dtype=np.int64))
    if not address:
        raise NativeCallError("a native function returned a null buffer")
    raw = (ctypes.c_char * max(1, count * dtype.itemsize)).from_address(address)
    weakref.finalize(raw, _free, address)
    array = np.frombuffer(raw, dtype=dtype, count=count).reshape(t.shape)
    return _narrow_ints(array, t.element)


def _narrow_ints(array: np.ndarray, element: T.Type) -> np.ndarray:
    """Integers narrower than their byte (i2, i4, ui3...): LLVM leaves the bits above the width
    unspecified in memory; the interpreter's convention is sign-extended (zero-extended if unsigned)."""
    if not isinstance(element, T.IntegerType) or element.width in (1, 8, 16, 32, 64):
        return array
    bits = array.dtype.itemsize * 8
    shift = bits - element.width
    if element.is_unsigned:
        return array & np.array((1 << element.width) - 1, dtype=array.dtype)
    return (array << shift) >> shift


def native_functions(library: NativeLibrary, module: Operation) -> dict[str, NativeFunction]:
    """Every public `llvm.func` with reflection in `module`, bound to its code in `library`."""
    out = {}
    for op in module.regions[0].blocks[0].ops:
        if op.name == "llvm.func" and ABI_ATTR in op.attributes and op.regions and op.regions[0].blocks \
                and "linkage" not in op.attributes:
            out[op.sym_name] = NativeFunction(library, op)
    return out
