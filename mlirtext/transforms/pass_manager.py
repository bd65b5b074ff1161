"""Running pipelines: nesting on ops, verification after each pass, instrumentation.

Instrumentations watch every pass run (`before(pass, op)` / `after(pass, op)`):
IR printing (`--print-ir-before-all`, `-after-all`, `-after-change`) and timing
(`--timing`) live here; the semantics check (`--check-semantics`) plugs in the same way.
"""
from __future__ import annotations

import difflib
import time
from collections import defaultdict
from typing import Callable, Optional, Union

from ..diagnostics import Diagnostic
from ..dialects.registry import Registry
from ..ir.core import Operation
from ..limits import MemoryLimitError
from ..syntax.gc_pause import rare_full_collections
from ..syntax.printer import print_module
from ..verifier import verify
from .driver import DidNotConverge
from .passes import Pass, PassFailure
from .pipeline import Nest


class Instrumentation:
    def before(self, p: Pass, op: Operation) -> None:
        pass

    def after(self, p: Pass, op: Operation) -> None:
        pass


class PassManager:
    def __init__(self, items: list[Union[Pass, Nest]], verify_each: bool = True,
                 instrumentations: list[Instrumentation] = (), registry: Optional[Registry] = None):
        """`registry`: the dialects whose rules the verification after each pass applies (the
        built-in ones when None)."""
        self.items = items
        self.verify_each = verify_each
        self.registry = registry
        self.instrumentations = list(instrumentations)
        self.current = ""  # the pass running, for reports

    def run(self, root: Operation) -> list[Diagnostic]:
        """Run the pipeline on `root` (a `builtin.module`); the diagnostics of the first failure."""
        try:
            with rare_full_collections():
                self._run_items(self.items, root)
        except PassFailure as e:
            return e.diagnostics
        except DidNotConverge as e:
            return [Diagnostic("error", str(e))]
        except RecursionError:
            return [Diagnostic("error", "the IR is nested too deeply for the passes")]
        except MemoryLimitError as e:  # a pass that evaluates a constant too large to hold
            return [Diagnostic("error", f"pass '{self.current}': {e}")]
        except Exception as e:  # noqa: BLE001 - a bug in a pass is reported, never a traceback
            return [Diagnostic("error", f"internal error in pass '{self.current}': {type(e).__name__}: {e} "
                               "(please report this with the input file)", op_being_handled(e))]
        return []

    def _run_items(self, items, op: Operation) -> None:
        for item in items:
            if isinstance(item, Nest):
                for target in _targets(op, item.anchor):
                    self._run_items(item.items, target)
            else:
                for target in _targets(op, item.anchor or op.name):
                    self._run_pass(item, target)

    def _run_pass(self, p: Pass, op: Operation) -> None:
        self.current = p.name
        for inst in self.instrumentations:
            inst.before(p, op)
        p.run(op)
        for inst in reversed(self.instrumentations):  # nested like scopes: the last opened closes first
            inst.after(p, op)
        if self.verify_each:
            problems = [d for d in verify(_root(op), self.registry) if d.severity == "error"]
            if problems:
                raise PassFailure(f"pass '{p.name}' produced IR that does not verify: {problems[0].message}",
                                  problems[0].span, problems[0].notes)


def op_being_handled(e: BaseException):
    """The span of the op a crashed pass was on: the innermost frame of the traceback with a local
    that is an op with a span (a pass's pattern or helper names the op it works on), or None."""
    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        for value in frame.f_locals.values():
            while isinstance(value, Operation) and value.span is None:
                value = value.parent_op   # an op built without the rewriter: its enclosing op's span
            if isinstance(value, Operation) and value.name != "builtin.module":
                return value.span
    return None


def _targets(op: Operation, anchor: str) -> list[Operation]:
    """`op` itself when it is an `anchor`, else the `anchor` ops directly inside it."""
    if op.name == anchor:
        return [op]
    return [child for region in op.regions for block in region.blocks for child in block.ops
            if child.name == anchor]


def _root(op: Operation) -> Operation:
    while op.parent_op is not None:
        op = op.parent_op
    return op


def pass_title(p: Pass) -> str:
    return f"{type(p).__name__} ({p.name})"


class PrintIR(Instrumentation):
    """`--print-ir-before-all`, `--print-ir-after-all`, `--print-ir-after-change`, in mlir-opt's
    format; with `diff` (`--diff`), each dump after a pass is a unified diff against the IR
    before it, and a pass that changed nothing prints nothing."""

    def __init__(self, write: Callable[[str], None], before: bool = False, after: bool = False,
                 after_change: bool = False, diff: bool = False):
        self.write = write
        self.print_before, self.print_after = before, after
        self.after_change = after_change or (diff and after)
        self.diff = diff
        self.last: dict[int, str] = {}

    def before(self, p: Pass, op: Operation) -> None:
        text = print_module(op) if (self.print_before or self.after_change) else ""
        if self.after_change:
            self.last[id(op)] = text
        if self.print_before:
            self.write(f"// -----// IR Dump Before {pass_title(p)} //----- //\n{text}\n")

    def after(self, p: Pass, op: Operation) -> None:
        if not (self.print_after or self.after_change):
            return
        text = print_module(op)
        old = self.last.pop(id(op), None)
        if self.after_change and old == text:
            return
        if self.diff and old is not None:
            name = pass_title(p)
            lines = difflib.unified_diff(_lines(old), _lines(text),
                                         f"before {name}", f"after {name}")
            self.write(f"// -----// IR Diff After {name} //----- //\n{''.join(lines)}\n")
            return
        self.write(f"// -----// IR Dump After {pass_title(p)} //----- //\n{text}\n")


def _lines(text: str) -> list[str]:
    return (text if text.endswith("\n") else text + "\n").splitlines(keepends=True)


class Timing(Instrumentation):
    """`--timing`: wall time per pass, reported like mlir-opt's execution time report."""

    def __init__(self):
        self.totals: dict[str, float] = defaultdict(float)
        self.started: list[float] = []
        self.begin = time.perf_counter()

    def before(self, p: Pass, op: Operation) -> None:
        self.started.append(time.perf_counter())

    def after(self, p: Pass, op: Operation) -> None:
        self.totals[pass_title(p)] += time.perf_counter() - self.started.pop()

    def report(self) -> str:
        total = max(time.perf_counter() - self.begin, 1e-9)
        rule = "===" + "-" * 73 + "==="
        lines = [rule, "Execution time report".center(79), rule,
                 f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]
        for name, seconds in self.totals.items():
            lines.append(f"  {seconds:8.4f} ({100 * seconds / total:5.1f}%)  {name}")
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        return "\n".join(lines) + "\n"

