"""Faults injected into one pass on purpose, so that a bisect's answer can be checked end to end.

Each fault names a pass and an op (`PASS:OP`, e.g. `canonicalize:arith.mulf`) and strikes once:
right after the first run of pass PASS that leaves an op named OP in the IR it ran on, on the
first such op in walk order. The fault is an instrumentation; put it LAST in the pass manager's
list, so that it strikes before the other instrumentations look at the pass's result.

- `Miscompile` (`--debug-miscompile=PASS:OP`): OP's first result, which must be a scalar
  integer, index or float, is nudged: every use of it takes `result + 1` for an integer or index,
  `result + 2**-10` (0.0009765625, exact in every float type) for a float. The constant and the
  add are new ops with OP's span (or its enclosing op's), of OP's dialect family: `llvm.mlir.constant` and
  `llvm.add`/`llvm.fadd` for an `llvm.*` op, else `arith.constant` and `arith.addi`/`arith.addf`.
- `Crash` (`--debug-crash`, for tests): the pass raises a RuntimeError while on OP.
- `Unverifiable` (`--debug-unverifiable`, for tests): the pass leaves IR that does not verify:
  OP is moved to the front of its block, before the values it uses are defined (OP must have an
  operand defined by an op in the same block).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..ir import types as T
from ..ir.attributes import FloatAttr, IntegerAttr
from ..ir.core import Operation, OpResult
from ..transforms.lowering_service import origin_span
from ..transforms.pass_manager import Instrumentation
from ..transforms.passes import Pass, PassFailure

#: What a float result is nudged by: a power of two, so exact in f16, bf16, f32 and f64.
FLOAT_NUDGE = 2.0 ** -10
#: What an integer or index result is nudged by.
INTEGER_NUDGE = 1


class FaultSpecError(ValueError):
    """A `PASS:OP` that does not name a pass and an op."""


@dataclass(frozen=True)
class FaultSpec:
    pass_name: str
    op_name: str

    @staticmethod
    def parse(text: str, known_passes) -> "FaultSpec":
        pass_name, colon, op_name = text.partition(":")
        if not colon or not pass_name or "." not in op_name:
            raise FaultSpecError(f"'{text}' is not PASS:OP (for example canonicalize:arith.mulf)")
        if pass_name not in known_passes:
            raise FaultSpecError(f"'{text}': there is no pass '{pass_name}' (mlirtext opt --list-passes)")
        return FaultSpec(pass_name, op_name)

    def __str__(self) -> str:
        return f"{self.pass_name}:{self.op_name}"


class Fault(Instrumentation):
    """Strikes once, after the first run of the named pass that leaves a named op."""

    #: The command-line switch that injects this fault.
    switch = ""

    def __init__(self, spec: FaultSpec):
        self.spec = spec
        self.struck: Optional[Operation] = None

    def after(self, p: Pass, op: Operation) -> None:
        if self.struck is not None or p.name != self.spec.pass_name:
            return
        target = next((o for o in op.walk() if o.name == self.spec.op_name), None)
        if target is not None:
            self.struck = target
            self.strike(target)

    def strike(self, target: Operation) -> None:
        raise NotImplementedError

    def fresh(self) -> "Fault":
        """The same fault, not struck yet (to inject it into another run of the pass)."""
        return type(self)(self.spec)

    def flag(self) -> str:
        return f"{self.switch}={self.spec}"


class Miscompile(Fault):
    switch = "--debug-miscompile"

    def strike(self, target: Operation) -> None:
        if not target.results:
            raise PassFailure(f"{self.flag()}: '{target.name}' has no result to perturb", target.span)
        result = target.results[0]
        t = result.type
        if not (T.is_float(t) or T.is_integer(t) or isinstance(t, T.IndexType)) or t == T.i1:
            raise PassFailure(f"{self.flag()}: '{target.name}' gives {t}; only a scalar integer, index or "
                              "float result can be perturbed", target.span)
        llvm = target.dialect == "llvm"
        if T.is_float(t):
            value, add = FloatAttr(FLOAT_NUDGE, t), "llvm.fadd" if llvm else "arith.addf"
        else:
            value, add = IntegerAttr(INTEGER_NUDGE, t), "llvm.add" if llvm else "arith.addi"
        const = Operation("llvm.mlir.constant" if llvm else "arith.constant", (), [t], {"value": value},
                          span=origin_span(target))
        block = target.parent
        block.insert_after(target, const)
        uses = list(result.uses)
        nudged = Operation(add, [result, const.results[0]], [t], {}, span=origin_span(target))
        block.insert_after(const, nudged)
        for use in uses:
            use.op.set_operand(use.index, nudged.results[0])


class Crash(Fault):
    switch = "--debug-crash"

    def strike(self, target: Operation) -> None:
        raise RuntimeError(f"{self.flag()}: crashed on '{target.name}'")


class Unverifiable(Fault):
    switch = "--debug-unverifiable"

    def strike(self, target: Operation) -> None:
        block = target.parent
        if not any(isinstance(v, OpResult) and v.owner.parent is block for v in target.operands):
            raise PassFailure(f"{self.flag()}: '{target.name}' uses no value defined before it in its "
                              "block, so moving it cannot break dominance", target.span)
        target.move_before(block.ops[0])


#: switch -> the fault it injects, in the order faults are put into a pass manager.
FAULTS = {cls.switch: cls for cls in (Miscompile, Crash, Unverifiable)}
