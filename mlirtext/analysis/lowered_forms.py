"""What one op becomes at each lower level, for hover.

The op is cloned into a function of its own (the values it uses become the function's
arguments, its results are returned), and the lowering service takes that module down one
level at a time, as `mlirtext opt --lower-to` does. Results are cached by the function's
printed text, so every `stablehlo.add` on `tensor<4x8xf32>` in a file shares one entry. Work
runs on an executor; hover shows the next level once it is finished (and names the levels
below it finished so far) and never waits for the rest.
"""
from __future__ import annotations

import threading
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from typing import Optional

from ..dialects import lookup
from ..dialects.base import TERMINATOR
from ..ir.core import Operation
from ..syntax.printer import print_module
from ..transforms.extract import op_module
from ..transforms.lowering_service import Cancelled, LoweringStopped, lower_by_level
from ..verifier import verify
from .document import Document
from .index import OP, target_at

#: Ops that are structure, not computation: hovering them shows no lowered forms.
_STRUCTURE = {"builtin.module", "func.func", "llvm.func", "func.return", "func.call"}
#: Lines of the next level's text shown in a hover before it is cut (the pipeline view has it all).
NEXT_LEVEL_LINES = 12
#: Ops whose text is longer than this (big constants) get no lowered forms.
MAX_OP_TEXT = 20_000


def op_at(doc: Document, offset: int) -> Optional[Operation]:
    """The op whose name is under `offset`, when it is one with lowered forms."""
    target = target_at(doc, offset)
    if target is None or target.kind != OP:
        return None
    return target.obj if lowerable(target.obj) else None


def lowerable(op: Operation) -> bool:
    if op.name in _STRUCTURE or op.parent is None:
        return False
    if op.span is not None and op.span.end - op.span.start > MAX_OP_TEXT:
        return False  # a megabyte constant: printing it at four levels helps nobody
    definition = lookup(op.name)
    return definition is not None and not definition.has(TERMINATOR)


def op_function_text(op: Operation) -> Optional[str]:
    """The text of the op alone in a module (`op_module`), the cache key; None when it
    cannot be printed alone."""
    try:
        return print_module(op_module(op))
    except Exception:  # noqa: BLE001 - an op that cannot be printed alone has no lowered forms
        return None


@dataclass
class Lowered:
    """The lowered forms of one op text: levels done so far, and why it stopped."""

    key: str
    start_level: Optional[str] = None
    levels: list = field(default_factory=list)   # [(level, text)]
    error: Optional[str] = None
    done: bool = False
    future: Optional[Future] = None


def lower_levels(module: Operation, entry: Lowered, cancelled: Optional[threading.Event] = None) -> Lowered:
    """Fill `entry` with the levels below the one of `module` (an `op_module`), each one
    visible as soon as it is done."""
    try:
        problems = [d for d in verify(module) if d.severity == "error"]
        if problems:
            entry.error = f"the op does not stand alone: {problems[0].message}"
            return entry
        levels = lower_by_level(module, cancelled=cancelled)
        entry.start_level = next(levels).level
        if entry.start_level is None:
            entry.error = "no level-specific op: it stays as it is"
        for level in levels:
            entry.levels.append((level.level, level.text))
    except LoweringStopped as e:
        entry.error = str(e)
    except Cancelled:
        entry.error = "cancelled"
    except Exception as e:  # noqa: BLE001 - shown in the hover, never raised
        entry.error = f"internal error while lowering: {type(e).__name__}: {e}"
    finally:
        entry.done = True
    return entry


class LoweredForms:
    """The cache of lowered forms, computed on `executor`."""

    def __init__(self, executor: Executor, size: int = 2000):
        self.executor = executor
        self.size = size
        self.entries: dict[str, Lowered] = {}
        self.by_op: dict[int, tuple[Operation, Optional[str]]] = {}
        self.lock = threading.Lock()

    def key_of(self, op: Operation) -> Optional[str]:
        cached = self.by_op.get(id(op))
        if cached is not None and cached[0] is op:
            return cached[1]
        key = op_function_text(op)
        if len(self.by_op) > 20000:
            self.by_op.clear()
        self.by_op[id(op)] = (op, key)
        return key

    def request(self, op: Operation) -> Optional[Lowered]:
        """The entry for `op`, its computation started if new; never waits."""
        key = self.key_of(op)
        if key is None:
            return None
        with self.lock:
            entry = self.entries.get(key)
            if entry is None:
                if len(self.entries) >= self.size:
                    self.entries.clear()
                entry = self.entries[key] = Lowered(key)
                entry.future = self.executor.submit(lower_levels, op_module(op), entry)
        return entry

    def entry_of(self, op: Operation) -> Optional[Lowered]:
        """The entry of an op with lowered forms, as far as it is done; None for other ops."""
        return self.request(op) if lowerable(op) else None


def next_level_section(entry: Lowered) -> str:
    """The Markdown of what the op becomes one level down (cut at NEXT_LEVEL_LINES), or why
    there is none (yet)."""
    if not entry.levels:
        if entry.error:
            return f"*{entry.error}*"
        return "" if entry.done else "*lowering to the next level... (hover again to see it)*"
    level, text = entry.levels[0]
    lines = _body(text.rstrip("\n").split("\n"))
    if len(lines) > NEXT_LEVEL_LINES:
        lines = lines[:NEXT_LEVEL_LINES] + [f"// ... {len(lines) - NEXT_LEVEL_LINES} more lines"]
    body = "\n".join(lines)
    source = f" (from {entry.start_level})" if entry.start_level else ""
    return f"**Next level**: {level}{source}\n```mlir\n{body}\n```"


def _body(lines: list[str]) -> list[str]:
    """The ops of the op's function (`op_module`), without its header and return, which say
    nothing about the op; `lines` as they are when they are not one such function."""
    if len(lines) < 4 or not lines[0].startswith("func.func @") or lines[-1] != "}" \
            or not lines[-2].lstrip().startswith(("return", "func.return")):
        return lines
    return [line[2:] if line.startswith("  ") else line for line in lines[1:-2]]


def further_levels(entry: Lowered) -> str:
    """What follows the next level, in a few words: the levels below it done so far, where the
    lowering stopped, or that it goes on; '' when nothing does."""
    if not entry.levels:
        return ""
    parts = []
    below = [level for level, _ in entry.levels[1:]]
    if below:
        parts.append("then " + ", ".join(below))
    if entry.error:
        parts.append(entry.error)
    elif not entry.done:
        parts.append("lowering further levels...")
    return "; ".join(parts)
