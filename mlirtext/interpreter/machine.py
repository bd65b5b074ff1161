"""The interpreter loop: functions, blocks, regions and the terminators that leave them."""
from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Optional


from ..ir import types as T
from ..ir.arrays import UnsupportedType, check_allocation, check_value
from ..ir.attributes import StringAttr
from ..ir.core import Block, Operation, Region
from ..ir.source import Span
from ..limits import MemoryLimitError
from .registry import BUILTIN, Semantics

#: Modules of this package that register semantics with `@impl` (imported on first use).
SEMANTICS = ("arith", "func", "math", "tensor", "bufferization", "check", "util", "tosa", "hlo_control", "hlo_structured", "hlo_reduce", "hlo_indexing", "hlo_sort", "hlo_elementwise", "hlo_unary", "hlo_convert", "hlo_shape", "chlo", "hlo_rng", "hlo_collective", "interpreter_ops", "linalg", "scf", "cf", "memref", "flow", "runtime_calls", "llvm", "custom_calls")

@functools.cache
def builtin_semantics() -> Semantics:
    """The built-in semantics, every module of `SEMANTICS` imported (each registers its ops on
    import), once: folding asks for them for every op it evaluates."""
    for module_name in SEMANTICS:
        importlib.import_module(f"{__package__}.{module_name}")
    return BUILTIN


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


class Scope(dict):
    """Values of one region run; a lookup that misses goes to the enclosing region's scope
    (regions see the values defined above them: scf.for bodies, linalg.generic bodies, ...)."""
    __slots__ = ("parent",)

    def __init__(self, parent=None):
        super().__init__()
        self.parent = parent

    def __missing__(self, key):
        if self.parent is None:
            raise KeyError(key)
        return self.parent[key]


class Interpreter:
    """Runs functions of a module. Values are numpy arrays (0-d for scalars)."""

    #: The scope of the region being run (the parent of the next region run).
    scope = None

    def __init__(self, module: Operation, semantics: Optional[Semantics] = None):
        """`semantics`: what ops run with (the built-in semantics when None)."""
        self.semantics = semantics if semantics is not None else builtin_semantics()
        self.module = module
        self.functions: dict[str, Operation] = {}
        for op in module.walk():
            if op.name in ("func.func", "llvm.func") and isinstance(op.attr("sym_name"), StringAttr):
                self.functions.setdefault(op.attr("sym_name").value, op)
        self.steps = 0
        #: Regions whose ops' results were checked against the memory limit (id -> region, kept
        #: alive so that an id is not reused).
        self.sized: dict[int, Region] = {}
        #: Failed `check.*` assertions (check.py appends `CheckFailure`s; the function goes on).
        self.failures: list = []

    # -- entry points ---------------------------------------------------------------
    def function(self, name: str) -> Operation:
        fn = self.functions.get(name)
        if fn is None:
            known = ", ".join(sorted(self.functions)) or "none"
            raise InterpreterError(f"no function named '@{name}' (functions: {known})")
        return fn

    def call(self, name: str, args: list, reflect: bool = True) -> list:
        """Run function `name` on `args` (checked against its signature). With `reflect`
        (callers outside the program), a lowered function takes and returns the values of its
        source signature (`mlirtext.abi`): unsigned arrays pass as their signless bits."""
        from ..dialects.func import function_type
        fn = self.function(name)
        if fn.name == "llvm.func":
            from .abi import ABI_ATTR, call_lowered
            if ABI_ATTR in fn.attributes:  # a lowered function: called with its source's tensors
                return call_lowered(self, fn, args)
            from .llvm import call_entry
            return call_entry(self, fn, args)
        ftype = function_type(fn)
        if reflect:
            from .abi import reflected, to_own_types, to_source_types
            source = reflected(fn)
            if source is not None and len(source.inputs) == len(args) == len(ftype.inputs):
                args = to_own_types(args, source.inputs, ftype.inputs)
                return to_source_types(self.call(name, args, reflect=False), source.results, ftype.results)
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
        if id(region) not in self.sized:
            self.check_sizes(region)
        block = region.blocks[0]
        outer = self.scope
        env = self.scope = Scope(outer)
        try:
            return self._run_blocks(block, args, env)
        finally:
            self.scope = outer

    def check_sizes(self, region: Region) -> None:
        """Before a region first runs: every result of static shape its ops make fits the memory
        limit, so a huge constant, buffer or broadcast is an error at the op before numpy is asked
        for the memory. Once per region: a loop body pays one lookup per iteration. (Dynamic
        shapes are checked by the op that makes the buffer, once its sizes are known: tensor.empty,
        memref.alloc/alloca, tensor.generate/splat/pad/concat, the dynamic HLO broadcasts, iotas, pads.)"""
        for block in region.blocks:
            for op in block.ops:
                for result in op.results:
                    t = result.type
                    if isinstance(t, T.ShapedType) and t.has_static_shape:
                        try:
                            check_allocation(t, t.shape)
                        except UnsupportedType:  # the op's semantics report it if it runs
                            pass
                        except MemoryLimitError as e:
                            raise InterpreterError(str(e), op.name_span or op.span) from None
        self.sized[id(region)] = region

    def _run_blocks(self, block: Block, args: list, env: "Scope") -> list:
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
        semantics = self.semantics.impls.get(op.name)
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
        except (ValueError, TypeError, ArithmeticError, IndexError, UnsupportedType, MemoryLimitError) as e:
            raise InterpreterError(f"'{op.name}': {e}", op.name_span or op.span) from None
        except MemoryError:  # below the limit, but more than the machine has free now
            raise InterpreterError(f"'{op.name}': out of memory", op.name_span or op.span) from None
        if isinstance(out, (Return, Branch)):
            return out
        for result, value in zip(op.results, out, strict=True):
            env[id(result)] = value
        return None
