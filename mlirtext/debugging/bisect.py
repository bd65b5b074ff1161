"""Bisect along the pipeline: which pass of the lowering to llvm first changes a function's
numbers, crashes, or leaves IR that does not verify.

The function (with what it calls) is taken into a module of its own and lowered to llvm through
`lowering_service.lower_by_level`; after EVERY pass (not every level) that changed its text the
interpreter runs it on the same inputs (a pass that changed nothing cannot have changed them) and
its results are compared, within the tolerance, with its results before that pass (as `--check-semantics` does, so the repro's `--check-semantics` command shows the same
thing). The first pass outside the tolerance, or the first that fails, is the finding: the pass,
its position, the ops it rewrote (their spans survive rewrites, so they point into the source
file) and the function as it was before the pass, to replay that one pass.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from ..interpreter import Interpreter, InterpreterError
from ..ir.core import Operation
from ..ir.source import Span
from ..syntax.printer import print_module
from ..transforms.conversions.levels import LEVELS, lowering_steps
from ..transforms.extract import function_module
from ..transforms.lowering_service import LoweringStopped, lower_by_level, origin_span, source_op_name
from ..transforms.pass_manager import Instrumentation
from ..transforms.passes import Pass, PassFailure
from ..transforms.pipeline import Nest, parse_pipeline
from ..transforms.semantics_check import Difference, Tolerance, compare
from ..verifier import verify

#: What a finding is.
DIVERGED, CRASHED, UNVERIFIABLE, FAILED = "diverged", "crashed", "does not verify", "failed"
#: Ops left out of what a pass rewrote.
FUNCTIONS = ("func.func", "llvm.func", "builtin.module")


@dataclass
class Finding:
    """The first pass that went wrong. `kind` one of DIVERGED, CRASHED (an internal error),
    UNVERIFIABLE, FAILED (the pass or the run after it reported an error); `position` counts
    passes from 1; `level` the level its step lowers to; `ops` [(op name, span)] of the source
    ops it rewrote (for a crash or a verifier failure, the op it names); `before` the function
    (and what it calls) before the pass, a module of its own; `expected` its results before the
    pass, `actual` after (None when it could not run)."""

    kind: str
    pass_spelling: str
    position: int
    level: Optional[str]
    message: str
    ops: list
    before: Operation
    function: str
    inputs: list
    expected: list
    actual: Optional[list] = None
    difference: Optional[Difference] = None


@dataclass
class BisectResult:
    """`passes` [(level, pass spelling)] run, in order (the last one is the finding's, if any),
    of `total` in the whole lowering."""

    passes: list = field(default_factory=list)
    total: int = 0
    finding: Optional[Finding] = None


class BisectError(ValueError):
    """The function cannot be bisected (no such function, cannot be lowered, does not run)."""


def bisect_pipeline(module: Operation, function: str, inputs: list, tolerance: Tolerance = Tolerance(),
                    faults: Sequence[Instrumentation] = (),
                    progress: Optional[Callable[[int, int, str], None]] = None,
                    cancelled: Optional[threading.Event] = None) -> BisectResult:
    """Lower @`function` of `module` (left as it is) to llvm, pass by pass, on `inputs`;
    `faults` are injected into the pass manager (see faults.py); `progress(position, total,
    pass)` is told of each pass as it starts. BisectError says why it cannot; `cancelled`, once
    set, stops it between two passes with lowering_service.Cancelled (the editor's cancel)."""
    fn = _symbols(module).get(function)
    if fn is None or fn.name != "func.func" or not fn.regions or not fn.regions[0].blocks:
        raise BisectError(f"there is no function @{function} with a body")
    work, _ = function_module(fn, _symbols(module).get, bodies=True)
    try:
        expected = Interpreter(work).call(function, _copies(inputs))
    except InterpreterError as e:
        raise BisectError(f"@{function} does not run on these inputs before any pass: {e}") from None
    watcher = _Watcher(function, inputs, tolerance, expected)
    try:
        result = BisectResult(total=sum(_count(parse_pipeline(text)) for _, text in lowering_steps(work, LEVELS[-1])))
    except ValueError as e:
        raise BisectError(f"@{function} cannot be lowered to llvm: {e}") from None
    watcher.passes = result.passes
    watcher.progress = (lambda position, name: progress(position, result.total, name)) if progress else None
    try:
        levels = lower_by_level(work, LEVELS[-1], printed=False, cancelled=cancelled,
                                instrumentations=[watcher, *faults])
        for level in levels:
            watcher.level = level.level
    except LoweringStopped as e:
        result.finding = watcher.finding or watcher.failure(e.diagnostics[0])
    return result


def _count(items: list) -> int:
    return sum(_count(i.items) if isinstance(i, Nest) else 1 for i in items)


def _symbols(module: Operation) -> dict:
    body = module.regions[0].blocks[0].ops if module.regions and module.regions[0].blocks else []
    return {op.sym_name: op for op in body if op.sym_name is not None}


def _copies(arrays: list) -> list:
    return [np.array(a, copy=True) for a in arrays]


def _root(op: Operation) -> Operation:
    while op.parent_op is not None:
        op = op.parent_op
    return op


class _Watcher(Instrumentation):
    """Runs the function after every pass and keeps what a finding needs."""

    def __init__(self, function: str, inputs: list, tolerance: Tolerance, expected: list):
        self.function, self.inputs, self.tolerance = function, inputs, tolerance
        self.last = expected          # the results before the pass now running
        self.level: Optional[str] = None
        self.passes: list = []
        self.progress: Optional[Callable[[int, str], None]] = None
        self.finding: Optional[Finding] = None
        self.pass_: Optional[Pass] = None
        self.before_module: Optional[Operation] = None
        self.before_text = ""
        self.before_ops: dict = {}

    def before(self, p: Pass, op: Operation) -> None:
        if p is self.pass_:
            return   # a pass on functions runs once per function: the IR before its first run is kept
        root = _root(op)
        self.pass_ = p
        self.passes.append((self._next_level(), p.spelling()))
        if self.progress is not None:
            self.progress(len(self.passes), p.name)
        self.before_module, _ = function_module(_symbols(root)[self.function], _symbols(root).get, bodies=True)
        self.before_text = print_module(self.before_module)
        self.before_ops = {id(o): o for o in root.walk()}   # (kept alive, so no id is reused)

    def _next_level(self) -> Optional[str]:
        """The level the step now running lowers to (lower_by_level names a level once it is done)."""
        if self.level is None:
            return None
        at = LEVELS.index(self.level)
        return LEVELS[at + 1] if at + 1 < len(LEVELS) else self.level

    def after(self, p: Pass, op: Operation) -> None:
        root = _root(op)
        # A pass that left the function (and what it calls) as it was cannot have changed its results:
        # the run is skipped (at the loops and llvm levels a run takes minutes on a large tensor).
        now, _ = function_module(_symbols(root)[self.function], _symbols(root).get, bodies=True)
        if print_module(now) == self.before_text:
            return
        try:
            got = Interpreter(root).call(self.function, _copies(self.inputs))
        except InterpreterError as e:
            if _does_not_verify(root):
                return  # the pass manager reports it, and failure() makes it the finding
            self.finding = self._finding(FAILED, f"@{self.function} does not run after the pass: {e}",
                                         self.rewritten(root) or _named(e.span))
            raise PassFailure(self.finding.message, e.span) from None
        diff = compare(p.name, self.function, self.last, got, self.tolerance)
        if not diff.ok and not _does_not_verify(root):
            message = (f"@{self.function}'s results changed: max |diff| {diff.max_abs:.3g}, "
                       f"max rel {diff.max_rel:.3g}, {diff.max_ulp} ulp (the tolerance is {self.tolerance})")
            self.finding = self._finding(DIVERGED, message, self.rewritten(root), got, diff)
            raise PassFailure(message)
        self.last = got

    def rewritten(self, root: Operation) -> list:
        """[(op name, span)] of the source ops behind the ops the pass created or erased."""
        now = {id(o): o for o in root.walk()}
        changed = [o for i, o in now.items() if i not in self.before_ops]
        changed += [o for i, o in self.before_ops.items() if i not in now]
        found: dict = {}
        for o in changed:
            if o.name in FUNCTIONS:
                continue   # a conversion remakes every function: the ops inside say more
            span = origin_span(o)
            if span is not None:
                found.setdefault((span.source.name, span.start, span.end), (_op_name_at(o, span), span))
        return [found[k] for k in sorted(found)]

    def failure(self, diagnostic) -> Finding:
        """The finding for a pass that stopped the lowering itself."""
        message = diagnostic.message
        if message.startswith("internal error"):
            kind = CRASHED
        elif "does not verify" in message:
            kind = UNVERIFIABLE
        else:
            kind = FAILED
        return self._finding(kind, message, _named(diagnostic.span))

    def _finding(self, kind: str, message: str, ops: list, got=None, diff=None) -> Finding:
        position = len(self.passes)
        return Finding(kind, self.pass_.spelling() if self.pass_ else "", position,
                       self.passes[-1][0] if self.passes else None, message, ops, self.before_module,
                       self.function, self.inputs, self.last, got, diff)


def _does_not_verify(root: Operation) -> bool:
    return any(d.severity == "error" for d in verify(root))


def _named(span: Optional[Span]) -> list:
    return [] if span is None else [(source_op_name(span), span)]


def _op_name_at(op: Operation, span: Span) -> str:
    """The name of the source op at `span` (what the user wrote there), else `op`'s own."""
    return source_op_name(span) or op.name
