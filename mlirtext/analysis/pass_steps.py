"""Every pass of a lowering as a step: the module after it, printed with each op line's origin.

`StepRecorder` watches the pass manager: after each pass it prints the module (with each op
line's origin, as the pipeline view's levels are printed), counts its ops and times the pass;
after a pass that replaced no object of the IR it repeats the step before, and a level's text is
its last step's (`printed`).
`explore` lowers a module with one, and names each step's level; `search_steps` finds text
across the steps. What a step changed is `pass_explorer.py`'s.
"""
from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..ir.core import Operation
from ..ir.source import Span
from ..transforms.conversions.levels import level_of
from ..transforms.lowering_service import lower_by_level, print_with_origins
from ..transforms.pass_manager import Instrumentation

#: SSA value and block numbers: renumbered at every print, they say nothing about a change.
_NUMBERED = re.compile(r"([%^][A-Za-z_]*)\d+")
_BLOCK = re.compile(r"\^[A-Za-z_]*\d+")
_VALUE = re.compile(r"%[\w$.\-]+")
_DEFS = re.compile(r"^\s*((?:%[\w$.\-]+(?::\d+)?\s*,\s*)*%[\w$.\-]+(?::\d+)?)\s*=")
_OP_NAME = re.compile(r'^\s*(?:(?:%[\w$.\-]+(?::\d+)?\s*,\s*)*%[\w$.\-]+(?::\d+)?\s*=\s*)?"?([a-z_][\w$]*\.[A-Za-z_][\w$.]*)')


@dataclass
class OpLine:
    """An op as printed at one step: its line in the step's text, name and origin span."""
    line: int
    name: str
    origin: Optional[Span]
    text: str
    canonical: str = ""

    @property
    def key(self):
        """What the op is matched by across steps: its origin, else (no origin) its own text."""
        if self.origin is not None:
            return ("origin", self.origin.start, self.origin.end, self.name)
        return ("text", _normalised(self.text))


@dataclass
class Step:
    """The module after one pass (`pass_name` None: before the first pass)."""
    index: int
    pass_name: Optional[str]
    level: Optional[str]
    seconds: float
    ops_before: int
    ops_after: int
    changed: bool
    text: str
    origins: list
    ops: list = field(default_factory=list)


def _normalised(text: str) -> str:
    return _NUMBERED.sub(r"\1#", text.strip())


def op_lines(text: str, origins: list) -> list[OpLine]:
    """The ops of a printed step: each line that starts an op (one the printer noted an origin
    for, or one that reads as an op), with its `canonical` text: each value an op of the step
    defines named by that op's identity (its key, which of the ops with that key it is, which
    result), so that a value renumbered by the printer reads the same at two steps and an
    operand that now comes from another op does not."""
    out = []
    for n, line in enumerate(text.rstrip("\n").split("\n")):
        origin = origins[n] if n < len(origins) else None
        m = _OP_NAME.match(line)
        if m is not None:
            out.append(OpLine(n, m.group(1), origin, line))
    names: dict = {}
    seen: Counter = Counter()
    for op in out:
        defs = _DEFS.match(op.text)
        seen[op.key] += 1
        if defs is not None:
            for i, name in enumerate(d.strip().split(":")[0] for d in defs.group(1).split(",")):
                names[name] = f"%<{op.key}#{seen[op.key]}:{i}>"
    for op in out:
        op.canonical = _VALUE.sub(lambda v: names.get(v.group(0), v.group(0)), _BLOCK.sub(r"^bb#", op.text.strip()))
    return out


class StepRecorder(Instrumentation):
    """Records a Step after every pass: the module's text (with origins), op counts before and
    after, whether the text changed, and the pass's wall time (printing excluded). A step's
    level is the one the module is at after it (`level_of`; `explore` names the level its pass
    lowers to instead)."""

    def __init__(self):
        self.steps: list[Step] = []
        self.started = 0.0
        self.root: Optional[Operation] = None
        self.state: Optional[list] = None    # `ir_state` of the module at the last step
        self.running = False                 # a pass started and not recorded yet

    def start(self, module: Operation) -> None:
        """A step with no pass: the module before its first pass."""
        self.root = module
        self.record(None, module)

    def before(self, p, op) -> None:
        root = _root(op)
        if root is not self.root:   # the first pass, or the next chunk of a split input
            self.start(root)
        self.running = True
        self.started = time.perf_counter()

    def after(self, p, op) -> None:
        seconds = time.perf_counter() - self.started
        self.record(p.name, _root(op), seconds)

    def record(self, name: Optional[str], module: Operation, seconds: float = 0.0) -> Step:
        """A step for `module` as it is now, after the pass `name` (None: a starting point). A
        pass that left every object the text is made of as it was (canonicalize with nothing to
        fold: a third of a lowering's passes) repeats the step before it, unprinted."""
        previous = self.steps[-1] if self.steps and name is not None else None
        state = ir_state(module)
        if previous is not None and same_state(state, self.state):
            step = Step(len(self.steps), name, previous.level, seconds, previous.ops_after, previous.ops_after,
                        False, previous.text, previous.origins, previous.ops)
        else:
            text, origins = print_with_origins(module)
            count = sum(1 for o in module.walk() if o is not module)
            step = Step(len(self.steps), name, level_of(module), seconds,
                        previous.ops_after if previous else count, count,
                        previous is not None and previous.text != text, text, origins, op_lines(text, origins))
        self.state, self.running = state, False
        self.steps.append(step)
        return step

    def printed(self, module: Operation) -> tuple[str, list]:
        """`print_with_origins(module)`, taken from the last step when no pass has run since (a
        level's text is its last pass's step: the pipeline view's levels are not printed twice)."""
        if not self.steps:
            self.start(module)
        if self.root is module and not self.running:
            return self.steps[-1].text, self.steps[-1].origins
        return print_with_origins(module)


def ir_state(module: Operation) -> list:
    """Every object the module's text is made of, in order: its ops (name, span, location,
    operands, results, attributes and which are properties), blocks (and their labels), block
    arguments and successors, and their types and names.
    IR objects are replaced, not edited, when a pass rewrites them, so two states with the same
    objects print the same (the list holds them: no id is reused meanwhile)."""
    out: list = []
    add = out.append
    for op in module.walk():
        add(op)
        add(op.name)
        add(op.span)
        add(op.form)
        add(op.location)
        add(op.property_names)
        out.extend(op.operands)
        for r in op.results:
            add(r)
            add(r.type)
            add(r.name)
        for key, value in op.attributes.items():
            add(key)
            add(value)
        out.extend(op.successors)
        for region in op.regions:
            add(region)
            for block in region.blocks:
                add(block)
                add(block.label)
                for arg in block.arguments:
                    add(arg)
                    add(arg.type)
                    add(arg.name)
        add(None)   # the end of the op's own objects (an operand moved to the next op shows)
    return out


def same_state(a: Optional[list], b: Optional[list]) -> bool:
    """Whether two `ir_state`s hold the same objects (a name made again compares unequal: it
    is printed again, which is only slower)."""
    return a is not None and b is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b))


def _root(op: Operation) -> Operation:
    while op.parent_op is not None:
        op = op.parent_op
    return op


def explore(module: Operation, target: str, *, start: Optional[str] = None, cancelled=None) -> tuple[list, list]:
    """Lower `module` (in place) down to `target` recording every pass: (levels, steps).
    Raises as `lower_by_level` does."""
    recorder = StepRecorder()
    levels = list(explore_levels(module, target, recorder, start=start, cancelled=cancelled))
    return levels, recorder.steps


def explore_levels(module: Operation, target: str, recorder: StepRecorder, *, start: Optional[str] = None,
                   cancelled=None) -> Iterator:
    """`lower_by_level` with `recorder` watching every pass: each level as it is done, its
    steps in `recorder.steps` by then, each step's `level` the level its pass lowers to (the
    first step's: the module's own)."""
    named = 0
    for level in lower_by_level(module, target, start=start, cancelled=cancelled, instrumentations=[recorder],
                                print_level=recorder.printed):
        if not recorder.steps:
            recorder.start(module)
        for step in recorder.steps[named:]:
            step.level = level.level
        named = len(recorder.steps)
        yield level


def search_steps(steps: list, query: str) -> list[tuple[int, int, str]]:
    """(step index, line, text) of every line of every step that holds `query` (any case);
    an unchanged step repeats the one before it, so only the steps that changed (and the first)
    are searched."""
    needle = query.lower()
    if not needle:
        return []
    out = []
    for step in steps:
        if step.index and not step.changed:
            continue
        for n, line in enumerate(step.text.rstrip("\n").split("\n")):
            if needle in line.lower():
                out.append((step.index, n, line))
    return out
