"""The host program of a host function, built at compile time (the format: vm/program.py).

`form-dispatch-regions` leaves each public function as a host function: dispatch calls,
reshapes, constants and a return. Each becomes instructions on numbered registers; tensor
constants go to the module's constants, once each.
"""
from __future__ import annotations

import numpy as np

from ..dialects.func import function_type
from ..dialects.tensor import VIEWS, view_source
from ..ir import types as T
from ..ir.arrays import UnsupportedType, attr_to_array, dtype_of
from ..limits import MemoryLimitError
from ..vm.program import HostProgram, portable_dtype


class CompileError(Exception):
    """Something the compiler cannot put into a module file, with the span it concerns."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.span = span


def type_record(t: T.Type) -> dict:
    """A value type as the module file states it: shape (None for a scalar), element, numpy dtype."""
    shape = list(t.shape) if isinstance(t, T.ShapedType) else None
    if shape is not None and any(d is None or d < 0 for d in shape):
        raise CompileError(f"dynamic shapes are not supported by the VM yet ({t})")
    try:
        dtype = dtype_of(t)
    except UnsupportedType as e:
        raise CompileError(f"the VM cannot hold {t}: {e}") from None
    return {"shape": shape, "element": str(T.element_type(t)), "dtype": portable_dtype(dtype).str}


def with_storage(source: dict, lowered: dict) -> dict:
    if (source["shape"], source["element"]) == (lowered["shape"], lowered["element"]):
        return source
    return {**source, "storage": lowered}


def build_host_program(fn, constants: dict, source=None, constant_ops: dict | None = None) -> HostProgram:
    """The host program of host function `fn` (after form-dispatch-regions); tensor constants go
    into `constants` (name -> array), shared between functions when equal, and each constant op
    into `constant_ops` (op -> name) when given. `source`: the function's type before lowering
    (unsigned types, 0-d shapes): what callers pass and get."""
    ftype = function_type(fn)
    try:
        inputs = [type_record(t) for t in ftype.inputs]
        results = [type_record(t) for t in ftype.results]
    except CompileError as e:
        raise CompileError(str(e), fn.span) from None
    if source is not None and len(source.inputs) == len(inputs) and len(source.results) == len(results):
        inputs = [with_storage(type_record(t), r) for t, r in zip(source.inputs, inputs)]
        results = [with_storage(type_record(t), r) for t, r in zip(source.results, results)]
    prog = HostProgram(fn.sym_name, inputs, results)
    reg: dict = {}
    for i, arg in enumerate(fn.regions[0].blocks[0].arguments):
        reg[arg] = i
        if arg.name and not arg.name.isdigit():
            prog.inputs[i]["name"] = arg.name  # errors name the argument as the source did
    prog.registers = len(reg)

    def new(value) -> int:
        reg[value] = prog.registers
        prog.registers += 1
        return reg[value]

    for op in fn.regions[0].blocks[0].ops:
        if op.name == "arith.constant":
            try:
                array = np.require(attr_to_array(op.attr("value"), op.results[0].type), requirements="C")
            except (MemoryLimitError, ValueError) as e:  # (UnsupportedType is a ValueError)
                raise CompileError(str(e), op.span) from None
            name = _constant_name(array, constants)
            if constant_ops is not None:
                constant_ops[op] = name
            prog.instructions.append({"op": "constant", "dst": new(op.results[0]), "name": name})
        elif op.name == "tensor.empty":  # returned or viewed as it is: a buffer, contents undefined
            rec = type_record(op.results[0].type)
            prog.instructions.append({"op": "alloc", "dst": new(op.results[0]), "shape": rec["shape"] or [],
                                      "dtype": rec["dtype"], "element": rec["element"], "slot": -1})
        elif op.name in VIEWS:
            rec = type_record(op.results[0].type)
            prog.instructions.append({"op": "view", "dst": new(op.results[0]), "src": reg[view_source(op)],
                                      "shape": rec["shape"]})
        elif op.name == "func.call" and "_dispatch_" in str(op.attr("callee")):
            outs = []
            for r in op.results:
                rec = type_record(r.type)
                dst = new(r)
                prog.instructions.append({"op": "alloc", "dst": dst, "shape": rec["shape"] or [],
                                          "dtype": rec["dtype"], "element": rec["element"], "slot": -1})
                outs.append(dst)
            prog.instructions.append({"op": "dispatch", "kernel": op.attr("callee").root,
                                      "ins": [reg[v] for v in op.operands], "outs": outs})
        elif op.name == "func.return":
            prog.instructions.append({"op": "return", "values": [reg[v] for v in op.operands]})
        else:
            raise CompileError(f"'{op.name}' cannot run in the host program (form-dispatch-regions should "
                               "have put it into a dispatch)", op.name_span or op.span)
    return prog


def _constant_name(array: np.ndarray, constants: dict) -> str:
    for name, existing in constants.items():
        if existing.dtype == array.dtype and existing.shape == array.shape and existing.tobytes() == array.tobytes():
            return name
    name = f"c{len(constants)}"
    constants[name] = array
    return name
