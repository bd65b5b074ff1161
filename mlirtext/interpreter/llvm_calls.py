"""llvm dialect semantics, part 2: functions and calls, branches, and the entry points
(`call_entry` for `Interpreter.call`, `call_with_memrefs` for lowered memref functions,
`builtin_signature` for `mlirtext run`)."""
from __future__ import annotations

import numpy as np

from ..dialects.branches import case_values
from ..dialects import llvm_types as LT
from ..ir import types as T
from ..ir.arrays import check_value
from ..ir.attributes import DenseArrayAttr, SymbolRefAttr
from .llvm import int_width, memory_of
from .llvm_memory import Pointer
from .machine import Branch, InterpreterError, Return
from .registry import impl


# ---- functions ----------------------------------------------------------------------------------
def call_function(interp, fn, args: list) -> list:
    """Run llvm.func `fn` on `args`; its stack allocations die when it returns."""
    name = fn.sym_name
    if not fn.regions or not fn.regions[0].blocks:
        from .llvm_runtime import call_external
        return call_external(interp, name, args, None)
    memory = memory_of(interp)
    mark = len(memory.stack)
    try:
        return interp.run_region(fn.regions[0], args)
    finally:
        for ident in memory.stack[mark:]:
            memory.allocs[ident].freed = True
        del memory.stack[mark:]


def call_entry(interp, fn, args: list) -> list:
    """`Interpreter.call` of an llvm.func: check the arguments against its LLVM signature."""
    from ..dialects.llvm import function_type
    name = fn.sym_name
    ftype = function_type(fn)
    if len(args) != len(ftype.params):
        raise InterpreterError(f"@{name} takes {len(ftype.params)} argument(s), got {len(args)}", fn.span)
    checked = []
    for i, (value, t) in enumerate(zip(args, ftype.params)):
        what = f"argument {i} of @{name}"
        if LT.is_pointer(t):
            if not isinstance(value, Pointer):
                raise InterpreterError(f"{what}: expected a pointer (llvm_memory.Pointer), got "
                                       f"{type(value).__name__}", fn.span)
            checked.append(value)
        elif isinstance(t, (LT.LLVMStructType, LT.LLVMArrayType)):
            checked.append(value)
        else:
            try:
                checked.append(check_value(value, t, what))
            except ValueError as e:
                raise InterpreterError(str(e), fn.span) from None
    if not fn.regions or not fn.regions[0].blocks:
        raise InterpreterError(f"@{name} is a declaration: it has no body to run", fn.span)
    return call_function(interp, fn, checked)


def call_with_memrefs(interp, name: str, args: list, memrefs=None) -> list:
    """Call llvm.func `name` as lowered from a function on memrefs: each memref argument (an
    array; by default every array of rank >= 1, else the positions in `memrefs`) is copied
    into LLVM memory and passed as its expanded descriptor (allocated, aligned, offset,
    sizes..., strides...); other arguments pass as they are. After the call each array is
    updated in place from memory, as a memref would be, and the results are returned."""
    from .llvm_memory import descriptor_to_array, memref_to_descriptor
    memory = memory_of(interp)
    if memrefs is None:
        memrefs = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim >= 1]
    flat, written = [], []
    for i, a in enumerate(args):
        if i in memrefs:
            pieces = memref_to_descriptor(memory, a)
            flat += pieces
            written.append((a, pieces))
        else:
            flat.append(a)
    results = interp.call(name, flat)
    for a, pieces in written:
        if a.flags.writeable:
            a[...] = descriptor_to_array(memory, pieces, a.dtype, copy=False)
    return results


def builtin_signature(fn):
    """An llvm.func's signature as a builtin FunctionType (for `mlirtext run`): only integer,
    float and vector parameters and results can be given and printed on a command line."""
    from ..dialects.llvm import function_type
    ftype = function_type(fn)
    name = fn.sym_name
    for what, types in (("takes", ftype.params), ("returns", () if LT.is_void(ftype.result) else (ftype.result,))):
        for t in types:
            e = t.element if isinstance(t, T.VectorType) else t
            if not isinstance(e, (T.IntegerType, T.FloatType, T.IndexType)):
                raise InterpreterError(f"@{name} {what} {t}: only integers, floats and vectors of them can be "
                                       f"passed to or printed from an llvm.func here", fn.span)
    results = () if LT.is_void(ftype.result) else (ftype.result,)
    return T.FunctionType(tuple(ftype.params), results)


# ---- control flow ------------------------------------------------------------------------------
def _groups(op, args, n):
    sizes = op.attr("operandSegmentSizes").values
    if n == 3 and sizes[0] == 1 and sizes[1] == 0 and sizes[2] == 0:
        return [[args[0]], [], []]
    out, i = [], 0
    for s in sizes[:n]:
        out.append(list(args[i:i + s]))
        i += s
    return out


@impl("llvm.return")
def _return(interp, op, args):
    return Return(list(args))


@impl("llvm.br")
def _br(interp, op, args):
    return Branch(op.successors[0], list(args))


@impl("llvm.cond_br")
def _cond_br(interp, op, args):
    (cond,), t, f = _groups(op, args, 3)
    if bool(cond):
        return Branch(op.successors[0], t)
    return Branch(op.successors[1], f)


@impl("llvm.switch")
def _switch(interp, op, args):
    (flag,), default, cases = _groups(op, args, 3)
    values = case_values(op.attr("case_values"))
    seg = op.attr("case_operand_segments")
    sizes = list(seg.values) if isinstance(seg, DenseArrayAttr) else [0] * len(values)
    bits = int_width(op.operand("value").type)
    mask = (1 << bits) - 1
    key = int(flag) & mask
    i = 0
    for n, (value, size) in enumerate(zip(values, sizes)):
        if int(value) & mask == key:
            return Branch(op.successors[n + 1], cases[i:i + size])
        i += size
    return Branch(op.successors[0], default)


@impl("llvm.unreachable")
def _unreachable(interp, op, args):
    raise InterpreterError("'llvm.unreachable' was reached")


@impl("llvm.intr.trap")
def _trap(interp, op, args):
    raise InterpreterError("'llvm.intr.trap': the program trapped")


@impl("llvm.intr.assume")
def _assume(interp, op, args):
    if args and not bool(args[0]):
        raise InterpreterError("'llvm.intr.assume': the assumed condition is false")
    return []


# ---- calls ------------------------------------------------------------------------------------------
def _callee(interp, op, args):
    """(function name, arguments) of a call-like op."""
    callee = op.attr("callee")
    if isinstance(callee, SymbolRefAttr):
        return callee.root, args
    if not args:
        raise InterpreterError(f"'{op.name}' has no callee")
    name = memory_of(interp).function_at(args[0])
    if name is None:
        raise InterpreterError(f"'{op.name}': the callee pointer {args[0]} does not point to a function")
    return name, args[1:]


def invoke_symbol(interp, op, name: str, args: list) -> list:
    fn = interp.functions.get(name)
    if fn is not None and fn.name == "llvm.func" and fn.regions and fn.regions[0].blocks:
        return call_function(interp, fn, args)
    if fn is not None and fn.name == "func.func" and fn.regions and fn.regions[0].blocks:
        return interp.call(name, args)
    from .llvm_runtime import call_external
    return call_external(interp, name, args, op)


@impl("llvm.call")
def _call(interp, op, args):
    (call_args,) = _groups(op, args, 1)
    name, call_args = _callee(interp, op, call_args)
    results = invoke_symbol(interp, op, name, call_args)
    return list(results)[:len(op.results)]


@impl("llvm.invoke")
def _invoke(interp, op, args):
    call_args, normal, _unwind = _groups(op, args, 3)
    if op.results:  # a terminator cannot also define values in this interpreter loop
        raise InterpreterError("'llvm.invoke' with a result is not supported")
    name, call_args = _callee(interp, op, call_args)
    invoke_symbol(interp, op, name, call_args)  # exceptions do not exist here: never unwinds
    return Branch(op.successors[0], normal)


@impl("builtin.unrealized_conversion_cast")
def _unrealized_cast(interp, op, args):
    if len(args) != len(op.results):
        raise InterpreterError("'builtin.unrealized_conversion_cast' changes the number of values: "
                               "it has no meaning to run")
    return list(args)
