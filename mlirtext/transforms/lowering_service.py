"""The one way down: a module lowered level by level, with what each level looks like.

`lower_by_level` runs the steps of `conversions/levels.py` (each a conversion pass, then
canonicalize, cse and the optimisations of the level it arrives at) as `Pass` objects through
the pass manager, and yields the module at its own level, then after each step. Every user of
lowering calls it: `mlirtext opt --lower-to`, hover's lowered forms, the editor's lower action
and pipeline command, and the bench's journey.

Lowering is in place: a `Level`'s `module` is the module being lowered, so read it (or keep its
`text`) before asking for the next level. `printed=False` skips printing, for callers that want
only the last level's IR.

Origins: the rewriter gives every op it creates the span of the op it replaces, so each printed
line that starts an op can say which source op it came from. Ops a pattern builds without the
rewriter (the body of a `linalg.generic` it makes) have no span of their own and take their
enclosing op's.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional, Sequence

from ..diagnostics import Diagnostic
from ..ir.core import Operation
from ..ir.source import Span
from ..syntax.printer import Printer
from .conversions.levels import LEVELS, level_of, lowering_steps
from .pass_manager import Instrumentation, PassManager
from .pipeline import parse_pipeline


@dataclass
class Level:
    """The module at one level: `level` (None for a module of no level, which stays as it is),
    `passes` [(pass name, seconds)] of the step that arrived here ([] for the starting level),
    and, when printed, its `text` without the `module {` wrapper, per line of it the span of
    the source op the op starting there came from (`origins`), and `op_counts`."""

    level: Optional[str]
    module: Operation
    passes: list = field(default_factory=list)
    text: Optional[str] = None
    origins: list = field(default_factory=list)
    op_counts: dict = field(default_factory=dict)


class LoweringStopped(Exception):
    """A step failed: `level` is the one it was lowering to, `diagnostics` the pass manager's."""

    def __init__(self, level: str, diagnostics: list[Diagnostic]):
        self.level, self.diagnostics = level, diagnostics
        super().__init__(f"lowering to {level} stops: {describe_problem(diagnostics[0])}")


class Cancelled(Exception):
    """The client cancelled: the lowering stopped between two passes."""


def lower_by_level(module: Operation, target: str = LEVELS[-1], *, start: Optional[str] = None,
                   cancelled: Optional[threading.Event] = None, instrumentations: Sequence[Instrumentation] = (),
                   printed: bool = True,
                   print_level: Optional[Callable[[Operation], tuple[str, list]]] = None) -> Iterator[Level]:
    """The levels of `module` from its own down to `target`, each yielded as soon as it is done
    (for one function of a module, lower `extract.function_module` of it).
    `print_level`: how a level's text and origins are made (default `print_with_origins`; a
    caller that printed the module after its last pass already hands that text back).

    ValueError (raised here, before any work) says why the module cannot go down to `target`;
    a failed step raises LoweringStopped, a cancel Cancelled (both from the iteration). A
    module of no level has only its starting level, unless `start` names the level it is
    taken to be at: it then shows at each level below, unchanged. `instrumentations` watch
    every pass (the clock that times them runs innermost)."""
    steps = lowering_steps(module, target, start)
    return _levels(module, steps, level_of(module) or start, cancelled, list(instrumentations),
                   (print_level or print_with_origins) if printed else None)


def _levels(module: Operation, steps: list, first: Optional[str], cancelled, instrumentations: list,
            printed: Optional[Callable]) -> Iterator[Level]:
    yield _level(first, module, [], printed)
    for level, pipeline_text in steps:
        if cancelled is not None and cancelled.is_set():
            raise Cancelled()
        clock = _PassClock(cancelled)
        if pipeline_text:
            problems = PassManager(parse_pipeline(pipeline_text), instrumentations=[*instrumentations, clock]
                                   ).run(module)
            if cancelled is not None and cancelled.is_set():
                raise Cancelled()
            if problems:
                raise LoweringStopped(level, problems)
        yield _level(level, module, clock.timing, printed)


def _level(level: Optional[str], module: Operation, passes: list, printed: Optional[Callable]) -> Level:
    if printed is None:
        return Level(level, module, passes)
    text, origins = printed(module)
    return Level(level, module, passes, text, origins, op_counts(module))


def lower_to(module: Operation, target: str, instrumentations: Sequence[Instrumentation] = ()) -> list[Diagnostic]:
    """Lower `module` in place down to `target`: [] when done, else the diagnostics of the
    step that stopped. ValueError (before any work) says why it cannot go there."""
    levels = lower_by_level(module, target, instrumentations=instrumentations, printed=False)
    try:
        for _ in levels:
            pass
    except LoweringStopped as e:
        return e.diagnostics
    return []


def describe_problem(d: Diagnostic) -> str:
    """One line: the message, and the start of the text of the op it is at. (The span is in
    the text the module was parsed from, which may not be the file the user sees: the op's own
    text is what they can find.)"""
    where = ""
    if d.span is not None:
        op_text = d.span.source.text[d.span.start:d.span.end].split("\n", 1)[0][:60]
        where = f" (at '{op_text}')" if op_text else ""
    return f"{d.message}{where}"


def op_counts(module: Operation) -> dict:
    """{dialect: {op name: count}} of everything inside `module`."""
    counts: dict = {}
    for name, n in sorted(Counter(op.name for op in module.walk() if op is not module).items()):
        counts.setdefault(name.split(".", 1)[0], {})[name] = n
    return counts


class _PassClock(Instrumentation):
    """Times each pass; stops the pipeline between passes once `cancelled` is set."""

    def __init__(self, cancelled: Optional[threading.Event]):
        self.cancelled = cancelled
        self.timing: list = []
        self.started = 0.0

    def before(self, p, op) -> None:
        if self.cancelled is not None and self.cancelled.is_set():
            raise Cancelled()
        self.started = time.perf_counter()

    def after(self, p, op) -> None:
        self.timing.append((p.name, time.perf_counter() - self.started))


# -- printing with origins ------------------------------------------------------------------------
class _LinePrinter(Printer):
    """The printer, noting where in its output each op starts."""

    def __init__(self):
        super().__init__()
        self.starts: dict[int, tuple[int, Operation]] = {}   # id(op) -> (index into out, op)

    def operation(self, op: Operation) -> None:
        # A custom form that fails part way is dropped and printed again generically: the
        # ops inside are then printed a second time, and the later note replaces the first.
        self.starts[id(op)] = (len(self.out), op)
        super().operation(op)


def print_with_origins(module: Operation) -> tuple[str, list[Optional[Span]]]:
    """The module's text without its `module {` wrapper (one indent less), and for each line
    of it the span of the source op the op starting there came from, or None."""
    printer = _LinePrinter()
    text = printer.print_top(module)
    line_of_piece, line = [], 0
    for piece in printer.out:
        line_of_piece.append(line)
        line += piece.count("\n")
    lines = text.rstrip("\n").split("\n")
    origins: list[Optional[Span]] = [None] * len(lines)
    for index, op in printer.starts.values():
        if op is not module and index < len(line_of_piece):
            origins[line_of_piece[index]] = origin_span(op)
    if lines and lines[0].rstrip() == "module {" and lines[-1] == "}":
        lines = [l[2:] if l.startswith("  ") else l for l in lines[1:-1]]
        origins = origins[1:-1]
    return "\n".join(lines) + "\n", origins


def origin_span(op: Operation) -> Optional[Span]:
    """The span of `op`, or of its nearest enclosing op that has one (never a module's)."""
    while op is not None and op.span is None and op.name != "builtin.module":
        op = op.parent_op
    if op is None or op.name == "builtin.module":
        return None
    return op.span


def source_op_name(span: Span) -> str:
    """The name of the op written at `span`: `%0, %1 = "x.y"(...)` -> x.y, `return %0` -> return."""
    text = span.source.text[span.start:span.end]
    head = text.split("=", 1)[1] if text.lstrip().startswith("%") and "=" in text else text
    words = head.split()
    return words[0].strip('"').split("(")[0] if words else ""
