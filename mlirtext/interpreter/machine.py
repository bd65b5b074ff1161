"""The interpreter loop: functions, blocks, regions and the terminators that leave them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..ir.attributes import StringAttr
from ..ir.core import Block, Operation, Region
from ..ir.source import Span
from .dtypes import UnsupportedType, check_value
from .registry import IMPLS

#: Bound on blocks executed per call: a runaway loop becomes an error, not a hang.
MAX_STEPS = 50_000_000


class InterpreterError(Exception):
    """A problem running the program; `span` points at the op when known."""

    def __init__(self, message: str, span: Optional[Span] = None):
        super().__init__(message)
        self.span = span


@dataclass
class Return:
    """Leave the enclosing region with these values (func.return, scf.yield, ...)."""
    values: list


@dataclass
class Branch:
    """Continue at `block` of the same region with these block arguments."""
    block: Block
    values: list


class Interpreter:
    """Runs functions of a module. Values are numpy arrays (0-d for scalars)."""

    def __init__(self, module: Operation):
        from . import arith, func, math, tensor  # noqa: F401 - register semantics
        self.module = module
        self.functions: dict[str, Operation] = {}
        for op in module.walk():
            if op.name in ("func.func", "llvm.func") and isinstance(op.attributes.get("sym_name"), StringAttr):
                self.functions.setdefault(op.attributes["sym_name"].value, op)
        self.steps = 0

    # -- entry points ---------------------------------------------------------------
    def function(self, name: str) -> Operation:
        fn = self.functions.get(name)
        if fn is None:
            known = ", ".join(sorted(self.functions)) or "none"
            raise InterpreterError(f"no function named '@{name}' (functions: {known})")
        return fn

    def call(self, name: str, args: list) -> list:
        """Run function `name` on `args` (checked against its signature)."""
        from ..dialects.func import function_type
        fn = self.function(name)
        ftype = function_type(fn)
        if len(args) != len(ftype.inputs):
            raise InterpreterError(f"@{name} takes {len(ftype.inputs)} argument(s), got {len(args)}", fn.span)
        checked = []
        for i, (value, t) in enumerate(zip(args, ftype.inputs)):
            try:
                checked.append(check_value(value, t, f"argument {i} of @{name}"))
            except (ValueError, UnsupportedType) as e:
                raise InterpreterError(str(e), fn.span) from None
        if not fn.regions or not fn.regions[0].blocks:
            raise InterpreterError(f"@{name} is a declaration: it has no body to run", fn.span)
        return self.run_region(fn.regions[0], checked)

    # -- regions and ops ------------------------------------------------------------------
    def run_region(self, region: Region, args: list) -> list:
        """Run from the entry block until a terminator returns out of the region."""
        block = region.blocks[0]
        env: dict[int, np.ndarray] = {}
        while True:
            for arg, value in zip(block.arguments, args, strict=True):
                env[id(arg)] = value
            self.steps += 1
            if self.steps > MAX_STEPS:
                raise InterpreterError("too many steps: the program does not seem to terminate")
            control = None
            for op in block.ops:
                control = self.run_op(op, env)
                if control is not None:
                    break
            if isinstance(control, Branch):
                block, args = control.block, control.values
                continue
            if isinstance(control, Return):
                return control.values
            return []  # a block without terminator (graph regions): nothing flows out

    def run_op(self, op: Operation, env: dict):
        semantics = IMPLS.get(op.name)
        if semantics is None:
            raise InterpreterError(f"'{op.name}' has no semantics in the interpreter", op.name_span or op.span)
        try:
            operands = [env[id(v)] for v in op.operands]
        except KeyError:
            raise InterpreterError(f"'{op.name}' uses a value that was not computed", op.span) from None
        try:
            out = semantics(self, op, operands)
        except InterpreterError as e:
            if e.span is None:
                e.span = op.name_span or op.span
            raise
        except (ValueError, TypeError, ArithmeticError, IndexError, UnsupportedType) as e:
            raise InterpreterError(f"'{op.name}': {e}", op.name_span or op.span) from None
        if isinstance(out, (Return, Branch)):
            return out
        for result, value in zip(op.results, out, strict=True):
            env[id(result)] = value
        return None
