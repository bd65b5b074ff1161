"""The host program: what a function does between its dispatches, as a list of instructions.

Built at compile time from the host function that `form-dispatch-regions`
leaves (dispatch calls, reshapes, constants, a return). Values live in
numbered registers; the function's arguments are registers 0..n-1.

    constant  dst name             a constant from the module file (constants/NAME.npy)
    alloc     dst shape dtype slot a buffer: from pool slot SLOT (memory plan), or fresh (-1: a result)
    view      dst src shape        a reshape of a contiguous buffer (no copy)
    dispatch  kernel ins outs      run a kernel: reads `ins`, writes `outs` in place
    return    values               the results (copied when they are not the function's own buffers)

Instructions are plain dicts, stored as JSON in the module file.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir import types as T


class CompileError(Exception):
    """Something the compiler cannot put into a module file, with the span it concerns."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.span = span


def type_record(t: T.Type) -> dict:
    """A value type as the module file states it: shape (None for a scalar), element, numpy dtype."""
    from ..interpreter.dtypes import dtype_of
    shape = list(t.shape) if isinstance(t, T.ShapedType) else None
    if shape is not None and any(d is None or d < 0 for d in shape):
        raise CompileError(f"dynamic shapes are not supported by the VM yet ({t})")
    return {"shape": shape, "element": str(T.element_type(t)), "dtype": portable_dtype(dtype_of(t)).str}


def portable_dtype(dtype: np.dtype) -> np.dtype:
    """`dtype`, or raw bytes of its size where its own string does not name it again (ml_dtypes'
    kinds: bf16 reads back as void, f8E5M2's '<f1' does not parse at all)."""
    try:
        if np.dtype(dtype.str) == dtype:
            return dtype
    except TypeError:
        pass
    return np.dtype(f"V{dtype.itemsize}")


def record_dtype(rec: dict) -> np.dtype:
    """The numpy dtype of a record: from its element type (bf16 and friends have no portable
    dtype string), else the stored string."""
    from ..interpreter.dtypes import dtype_of
    elt = T.scalar_type_from_name(rec.get("element", "")) if rec.get("element") else None
    if elt is not None:
        try:
            return dtype_of(elt)
        except ValueError:
            pass
    return np.dtype(rec["dtype"])


def storage(rec: dict) -> dict:
    """How the kernels hold a value: the lowered type (signless, reshaped) when it differs from
    the source signature the caller sees."""
    return rec.get("storage", rec)


def with_storage(source: dict, lowered: dict) -> dict:
    if (source["shape"], source["element"]) == (lowered["shape"], lowered["element"]):
        return source
    return {**source, "storage": lowered}


def record_type(rec: dict) -> T.Type:
    """The MLIR type of a type record (for printing values as iree-run-module does)."""
    elt = T.scalar_type_from_name(rec["element"])
    return elt if rec["shape"] is None else T.RankedTensorType(tuple(rec["shape"]), elt)


def describe(rec: dict) -> str:
    if rec["shape"] is None:
        return rec["element"]
    return "tensor<" + "".join(f"{d}x" for d in rec["shape"]) + rec["element"] + ">"


@dataclass
class HostProgram:
    name: str
    inputs: list            # type records
    results: list           # type records
    instructions: list = field(default_factory=list)
    registers: int = 0
    plan: dict = field(default_factory=dict)     # slots, peak bytes (planner.plan_memory)

    def to_json(self) -> dict:
        return {"name": self.name, "inputs": self.inputs, "results": self.results,
                "instructions": self.instructions, "registers": self.registers, "plan": self.plan}

    @staticmethod
    def from_json(d: dict) -> "HostProgram":
        return HostProgram(d["name"], d["inputs"], d["results"], d["instructions"], d["registers"], d["plan"])


_VIEWS = ("tensor.collapse_shape", "tensor.expand_shape", "tensor.cast")


def build_host_program(fn, constants: dict, source=None) -> HostProgram:
    """The host program of host function `fn` (after form-dispatch-regions); tensor constants go
    into `constants` (name -> array), shared between functions when equal. `source`: the
    function's type before lowering (unsigned types, 0-d shapes): what callers pass and get."""
    from ..dialects.func import function_type
    from ..interpreter.constants import attr_to_array
    ftype = function_type(fn)
    inputs = [type_record(t) for t in ftype.inputs]
    results = [type_record(t) for t in ftype.results]
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
            array = np.require(attr_to_array(op.attributes["value"], op.results[0].type), requirements="C")
            name = _constant_name(array, constants)
            prog.instructions.append({"op": "constant", "dst": new(op.results[0]), "name": name})
        elif op.name == "tensor.empty":  # returned or viewed as it is: a buffer, contents undefined
            rec = type_record(op.results[0].type)
            prog.instructions.append({"op": "alloc", "dst": new(op.results[0]), "shape": rec["shape"] or [],
                                      "dtype": rec["dtype"], "element": rec["element"], "slot": -1})
        elif op.name in _VIEWS:
            rec = type_record(op.results[0].type)
            prog.instructions.append({"op": "view", "dst": new(op.results[0]), "src": reg[op.operands[0]],
                                      "shape": rec["shape"]})
        elif op.name == "func.call" and "_dispatch_" in str(op.attributes["callee"]):
            outs = []
            for r in op.results:
                rec = type_record(r.type)
                dst = new(r)
                prog.instructions.append({"op": "alloc", "dst": dst, "shape": rec["shape"] or [],
                                          "dtype": rec["dtype"], "element": rec["element"], "slot": -1})
                outs.append(dst)
            prog.instructions.append({"op": "dispatch", "kernel": op.attributes["callee"].root,
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


def listing(prog: HostProgram, kernels: dict | None = None) -> str:
    """The host program as text (for `mlirtext dump` and --print-statistics)."""
    lines = [f"func @{prog.name}(" + ", ".join(f"%{i}: {describe(t)}" for i, t in enumerate(prog.inputs)) +
             ") -> (" + ", ".join(describe(t) for t in prog.results) + ")"]
    for ins in prog.instructions:
        op = ins["op"]
        if op == "constant":
            lines.append(f"  %{ins['dst']} = constant @{ins['name']}")
        elif op == "alloc":
            where = "fresh (result)" if ins["slot"] < 0 else f"slot {ins['slot']}"
            shape = "x".join(map(str, ins["shape"])) or "scalar"
            lines.append(f"  %{ins['dst']} = alloc {shape} {ins.get('element') or np.dtype(ins['dtype']).name} [{where}]")
        elif op == "view":
            lines.append(f"  %{ins['dst']} = view %{ins['src']} as {'x'.join(map(str, ins['shape']))}")
        elif op == "dispatch":
            lines.append(f"  dispatch @{ins['kernel']}(" + ", ".join(f"%{r}" for r in ins["ins"]) + ") -> (" +
                         ", ".join(f"%{r}" for r in ins["outs"]) + ")")
        elif op == "return":
            lines.append("  return " + ", ".join(f"%{r}" for r in ins["values"]))
    return "\n".join(lines)
