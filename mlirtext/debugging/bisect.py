"""Bisect along the pipeline: which pass of the lowering to llvm first changes a function's
numbers, crashes, or leaves IR that does not verify.

The function (with what it calls) is taken into a module of its own and lowered to llvm through
`lowering_service.lower_by_level`, level first: the interpreter runs it once after each step (one
level down) that changed its text, on the same inputs, and its results are compared, within the
tolerance, with those before the step. Only inside the first step outside the tolerance does it
run after every pass of that step that changed the text (a pass that changed nothing cannot have
changed them; the function as each pass left it is kept while its step runs, so nothing is lowered
twice), each compared with the results before that pass (as `--check-semantics` does, so the
repro's `--check-semantics` command shows the same thing). A long pipeline so costs one run per
level plus one per pass of one level, not one per pass; a pass that only merged or moved constants
(equivalence.py: `cse` after each conversion) is not run after either. The first pass outside the tolerance, or
the first that fails, is the finding: the pass, its position, the ops it rewrote (their spans
survive rewrites, so they point into the source file) and the function as it was before the pass,
to replay that one pass.
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
from ..transforms.passes import Pass
from ..transforms.pipeline import Nest, parse_pipeline
from ..transforms.semantics_check import Difference, Tolerance, compare
from .equivalence import same_but_constants
from .faults import Fault
from .narrow import ConversionNarrower

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
    pass, `actual` after (None when it could not run); `rewrote` how many source ops the pass
    rewrote when `ops` is the one of them bisect narrowed the blame to (a conversion's), else None."""

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
    rewrote: Optional[int] = None


@dataclass
class BisectResult:
    """`passes` [(level, pass spelling)] run, in order (the last one is the finding's, if any),
    of `total` in the whole lowering; `runs` how many times the function ran after a pass (the
    one run before any pass left out)."""

    passes: list = field(default_factory=list)
    total: int = 0
    finding: Optional[Finding] = None
    runs: int = 0


class BisectError(ValueError):
    """The function cannot be bisected (no such function, cannot be lowered, does not run)."""


def bisect_pipeline(module: Operation, function: str, inputs: list, tolerance: Tolerance = Tolerance(),
                    faults: Sequence[Instrumentation] = (),
                    progress: Optional[Callable[[int, int, str], None]] = None,
                    cancelled: Optional[threading.Event] = None) -> BisectResult:
    """Lower @`function` of `module` (left as it is) to llvm on `inputs`, level first: the function
    runs once after each step (a level) and, inside the first step whose results leave the
    tolerance, after each pass of it; `faults` are injected into the pass manager (see faults.py);
    `progress(position, total, pass)` is told of each pass as it starts. BisectError says why it
    cannot; `cancelled`, once set, stops it between two passes with lowering_service.Cancelled
    (the editor's cancel)."""
    fn = _symbols(module).get(function)
    if fn is None or fn.name != "func.func" or not fn.regions or not fn.regions[0].blocks:
        raise BisectError(f"there is no function @{function} with a body")
    work, _ = function_module(fn, _symbols(module).get, bodies=True)
    try:
        expected = Interpreter(work).call(function, _copies(inputs))
    except InterpreterError as e:
        raise BisectError(f"@{function} does not run on these inputs before any pass: {e}") from None
    try:
        result = BisectResult(total=sum(_count(parse_pipeline(text)) for _, text in lowering_steps(work, LEVELS[-1])))
    except ValueError as e:
        raise BisectError(f"@{function} cannot be lowered to llvm: {e}") from None
    watcher = _Watcher(function, inputs, tolerance, expected, result)
    watcher.progress = (lambda position, name: progress(position, result.total, name)) if progress else None
    levels = lower_by_level(work, LEVELS[-1], printed=False, cancelled=cancelled, instrumentations=[watcher, *faults])
    try:
        for level in levels:
            watcher.level = level.level
            result.finding = watcher.check_step()
            if result.finding is not None:
                break
    except LoweringStopped as e:
        # The passes of this step before the one that stopped it come first, as they ran first.
        failed = watcher.failure(e.diagnostics[0])
        result.finding = watcher.check_passes(before=failed.position) or failed
    finally:
        levels.close()
    if result.finding is not None and result.finding.kind == DIVERGED:
        _narrow(result, tolerance, faults)
    return result


def _narrow(result: BisectResult, tolerance: Tolerance, faults: Sequence[Instrumentation]) -> None:
    """A conversion that changed the numbers is blamed on the one source op whose rewrite alone does
    it, when there is one (narrow.py)."""
    finding = result.finding
    narrower = ConversionNarrower(finding.before, finding.pass_spelling, finding.function, finding.inputs,
                                  finding.expected, tolerance,
                                  lambda: [f.fresh() for f in faults if isinstance(f, Fault)], _copies)
    one = narrower.narrow(finding.ops)
    result.runs += narrower.runs
    if one is not None:
        finding.rewrote, finding.ops = len(finding.ops), one


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


@dataclass
class _Change:
    """A pass that changed the function's text: the function (and what it calls) before and after
    it, each a module of its own, and [(op name, span)] of the source ops behind what it rewrote."""

    position: int
    level: Optional[str]
    spelling: str
    before: Operation
    after: Operation
    ops: list


class _Watcher(Instrumentation):
    """Keeps, for the step (level) now running, the function before and after every pass that
    changed it; `check_step` runs it once at the step's end and, when its results moved, after
    each of those passes in turn (`check_passes`)."""

    def __init__(self, function: str, inputs: list, tolerance: Tolerance, expected: list, result: BisectResult):
        self.function, self.inputs, self.tolerance = function, inputs, tolerance
        self.result = result
        self.last = expected          # the results before the step now running
        self.level: Optional[str] = None
        self.progress: Optional[Callable[[int, str], None]] = None
        self.changes: list[_Change] = []
        self.pass_: Optional[Pass] = None
        self.before_module: Optional[Operation] = None
        self.before_text = ""
        self.before_ops: dict = {}

    def before(self, p: Pass, op: Operation) -> None:
        if p is self.pass_:
            return   # a pass on functions runs once per function: the IR before its first run is kept
        root = _root(op)
        self.pass_ = p
        self.result.passes.append((self._next_level(), p.spelling()))
        if self.progress is not None:
            self.progress(len(self.result.passes), p.name)
        self.before_module = self._function(root)
        self.before_text = print_module(self.before_module)
        self.before_ops = {id(o): o for o in root.walk()}   # (kept alive, so no id is reused)

    def _next_level(self) -> Optional[str]:
        """The level the step now running lowers to (lower_by_level names a level once it is done)."""
        if self.level is None:
            return None
        at = LEVELS.index(self.level)
        return LEVELS[at + 1] if at + 1 < len(LEVELS) else self.level

    def _function(self, root: Operation) -> Operation:
        module, _ = function_module(_symbols(root)[self.function], _symbols(root).get, bodies=True)
        return module

    def after(self, p: Pass, op: Operation) -> None:
        # A pass that left the function (and what it calls) as it was cannot have changed its results:
        # it is not run after it (at the loops and llvm levels a run takes minutes on a large tensor).
        root = _root(op)
        now = self._function(root)
        if print_module(now) == self.before_text:
            return
        position = len(self.result.passes)
        if self.changes and self.changes[-1].position == position:
            self.changes.pop()   # the same pass on the next function: the IR after its last run counts
        if same_but_constants(self.before_module, now):
            return   # constants merged or moved (cse after a conversion): the results cannot have changed
        self.changes.append(_Change(position, self.result.passes[-1][0], p.spelling(), self.before_module, now,
                                    self.rewritten(root)))

    def check_step(self) -> Optional[Finding]:
        """At the end of a step: run the function once; when its results left the tolerance (or it does
        not run), the first pass of the step to blame (`check_passes`), else None."""
        changes, self.changes = self.changes, []
        if not changes:
            return None
        got = self._run(changes[-1].after)
        if not isinstance(got, InterpreterError) and compare("", self.function, self.last, got, self.tolerance).ok:
            self.last = got
            return None
        self.changes = changes
        found = self.check_passes(last_run=got)
        if found is None:
            # No pass alone moved them beyond the tolerance (their errors add up): as a bisect pass by
            # pass would, go on from the step's results.
            self.last, self.changes = got, []
        return found

    def check_passes(self, before: Optional[int] = None, last_run=None) -> Optional[Finding]:
        """Run the function after each pass of the step that changed it (those at positions below
        `before`, when given) and compare with its results before that pass: the first that leaves
        the tolerance or does not run is the finding. `last_run` the results after the last one,
        already known."""
        changes = [c for c in self.changes if before is None or c.position < before]
        for i, change in enumerate(changes):
            got = last_run if last_run is not None and i == len(changes) - 1 else self._run(change.after)
            if isinstance(got, InterpreterError):
                return self._finding(change, FAILED, f"@{self.function} does not run after the pass: {got}",
                                     change.ops or _named(got.span))
            diff = compare(change.spelling.split("{")[0], self.function, self.last, got, self.tolerance)
            if not diff.ok:
                message = (f"@{self.function}'s results changed: max |diff| {diff.max_abs:.3g}, "
                           f"max rel {diff.max_rel:.3g}, {diff.max_ulp} ulp (the tolerance is {self.tolerance})")
                return self._finding(change, DIVERGED, message, change.ops, got, diff)
            self.last = got
        return None

    def _run(self, module: Operation):
        """The function's results in `module`, or the InterpreterError that stopped it."""
        self.result.runs += 1
        try:
            return Interpreter(module).call(self.function, _copies(self.inputs))
        except InterpreterError as e:
            return e

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
        """The finding for the pass now running, which stopped the lowering itself."""
        message = diagnostic.message
        if message.startswith("internal error"):
            kind = CRASHED
        elif "does not verify" in message:
            kind = UNVERIFIABLE
        else:
            kind = FAILED
        passes = self.result.passes
        running = _Change(len(passes), passes[-1][0] if passes else None,
                          self.pass_.spelling() if self.pass_ else "", self.before_module, None, [])
        return self._finding(running, kind, message, _named(diagnostic.span))

    def _finding(self, change: _Change, kind: str, message: str, ops: list, got=None, diff=None) -> Finding:
        return Finding(kind, change.spelling, change.position, change.level, message, ops, change.before,
                       self.function, self.inputs, self.last, got, diff)


def _named(span: Optional[Span]) -> list:
    return [] if span is None else [(source_op_name(span), span)]


def _op_name_at(op: Operation, span: Span) -> str:
    """The name of the source op at `span` (what the user wrote there), else `op`'s own."""
    return source_op_name(span) or op.name
