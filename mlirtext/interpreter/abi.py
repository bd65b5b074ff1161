"""Calling a lowered function with the tensors its source took (`mlirtext.abi`).

Below the tensor levels a function's signature changes (memrefs, then bare
pointers); its original signature stays on it as `mlirtext.abi`. For an
`llvm.func`, each tensor argument is copied into a fresh allocation of the
interpreter's memory and passed as a pointer; each result pointer (several
come back in one struct) is read back with the shape and element type the
reflection gives.
"""
from __future__ import annotations

import numpy as np

from ..ir import types as T
from ..ir.arrays import check_value, dtype_of, reinterpret_bits
from ..ir.attributes import TypeAttr
from .machine import InterpreterError

ABI_ATTR = "mlirtext.abi"


def signature(fn) -> T.FunctionType:
    """The signature callers use: the reflection when there is one, else the function's own (a
    hand-written llvm.func's as builtin types: integers, floats and vectors of them; one that takes
    or returns anything else is refused, naming the type)."""
    attr = fn.attributes.get(ABI_ATTR)
    if isinstance(attr, TypeAttr) and isinstance(attr.type, T.FunctionType):
        return attr.type
    if fn.name == "llvm.func":
        from .llvm_calls import builtin_signature
        return builtin_signature(fn)
    from ..dialects.func import function_type
    return function_type(fn)


def _signedness_differs(source: T.Type, own: T.Type) -> bool:
    """`source` (from the reflection) holds unsigned integers where `own` has signless ones."""
    a, b = T.element_type(source), T.element_type(own)
    return isinstance(a, T.IntegerType) and isinstance(b, T.IntegerType) and a.is_unsigned and \
        not b.is_unsigned and a.width == b.width


def to_own_types(args: list, source_types, own_types) -> list:
    """Arguments given as the source signature's unsigned arrays, as the bits of the signless
    types the lowered function takes (other arguments as they are)."""
    out = []
    for value, source, own in zip(args, source_types, own_types):
        if _signedness_differs(source, own) and not isinstance(value, tuple):
            value = reinterpret_bits(check_value(value, source, "argument"), T.element_type(own), dtype_of(own))
        out.append(value)
    return out


def to_source_types(results: list, source_types, own_types) -> list:
    """Results of a lowered function's signless types, read back as the source's unsigned ones."""
    return [reinterpret_bits(value, T.element_type(source), dtype_of(source))
            if _signedness_differs(source, own) and not isinstance(value, tuple) else value
            for value, source, own in zip(results, source_types, own_types)]


def reflected(fn):
    """The `mlirtext.abi` signature of a func.func whose own signature is its signless form,
    or None (no reflection, or the same types)."""
    attr = fn.attributes.get(ABI_ATTR)
    if not (isinstance(attr, TypeAttr) and isinstance(attr.type, T.FunctionType)):
        return None
    return attr.type


def call_lowered(interp, fn, args: list) -> list:
    """Run llvm.func `fn` (with reflection) on tensor values."""
    from .llvm import call_function, memory_of
    ftype = signature(fn)
    name = fn.sym_name
    if len(args) != len(ftype.inputs):
        raise InterpreterError(f"@{name} takes {len(ftype.inputs)} argument(s), got {len(args)}", fn.span)
    memory = memory_of(interp)
    pointers = []
    for i, (value, t) in enumerate(zip(args, ftype.inputs)):
        try:
            array = np.ascontiguousarray(check_value(value, t, f"argument {i} of @{name}"))
        except ValueError as e:
            raise InterpreterError(str(e), fn.span) from None
        if _is_unsigned(t):  # the lowered function reads the signless bits
            array = np.ascontiguousarray(reinterpret_bits(array, _signless_of(t), dtype_of(_signless_of(t))))
        if not isinstance(t, T.ShapedType):
            pointers.append(array)
            continue
        ptr = memory.allocate(max(array.nbytes, 1), "argument", name=f"argument {i}")
        memory.bytes_at(ptr, array.nbytes, "argument", write=True)[:] = array.view(np.uint8).reshape(-1)
        pointers.append(ptr)
    out = call_function(interp, fn, pointers)
    results = list(out[0]) if len(ftype.results) > 1 else out
    values = []
    for ptr, t in zip(results, ftype.results, strict=True):
        if not isinstance(t, T.ShapedType):
            values.append(np.asarray(ptr))
            continue
        dtype = dtype_of(t)
        count = int(np.prod(t.shape, dtype=np.int64))
        raw = memory.bytes_at(ptr, count * dtype.itemsize, "result").copy()
        if _is_unsigned(t):  # written as signless bits
            signless = _signless_of(t)
            raw = reinterpret_bits(raw.view(dtype_of(signless)), T.element_type(t), dtype)
        values.append(raw.view(dtype).reshape(t.shape))
    return values


def _is_unsigned(t: T.Type) -> bool:
    e = T.element_type(t)
    return isinstance(e, T.IntegerType) and e.is_unsigned


def _signless_of(t: T.Type) -> T.IntegerType:
    return T.IntegerType(T.element_type(t).width)
