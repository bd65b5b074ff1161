"""The host program: what a function does between its dispatches, as a list of instructions,
and the type records of the module file (the compiler builds both: compiler/host_program.py).

Values live in numbered registers; the function's arguments are registers 0..n-1.

    constant  dst name             a constant of the module file (its bytes in weights.bin)
    alloc     dst shape dtype slot a buffer: from pool slot SLOT (memory plan), or fresh (-1: a result)
    view      dst src shape        a reshape of a contiguous buffer (no copy)
    dispatch  kernel ins outs      run a kernel: reads `ins`, writes `outs` in place
    return    values               the results (copied when they are not the function's own buffers)

Instructions are plain dicts, stored as JSON in the module file.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from ..ir import types as T
from ..ir.arrays import dtype_of


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
    element, dtype = rec.get("element"), rec["dtype"]
    if isinstance(element, str) and isinstance(dtype, str):
        return _dtype(element, dtype)   # (a load asks this for every buffer of every dispatch)
    return _uncached_dtype(element, dtype)


@functools.lru_cache(maxsize=256)
def _dtype(element: str, dtype: str) -> np.dtype:
    return _uncached_dtype(element, dtype)


def _uncached_dtype(element, dtype) -> np.dtype:
    elt = T.scalar_type_from_name(element) if element else None
    if elt is not None:
        try:
            return dtype_of(elt)
        except ValueError:
            pass
    return np.dtype(dtype)


def storage(rec: dict) -> dict:
    """How the kernels hold a value: the lowered type (signless, reshaped) when it differs from
    the source signature the caller sees."""
    return rec.get("storage", rec)


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
    plan: dict = field(default_factory=dict)     # slots, peak bytes (compiler/planner.py)

    def to_json(self) -> dict:
        return {"name": self.name, "inputs": self.inputs, "results": self.results,
                "instructions": self.instructions, "registers": self.registers, "plan": self.plan}

    @staticmethod
    def from_json(d: dict) -> "HostProgram":
        return HostProgram(d["name"], d["inputs"], d["results"], d["instructions"], d["registers"], d["plan"])


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
