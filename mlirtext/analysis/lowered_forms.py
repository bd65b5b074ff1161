"""What one op becomes at each lower level, for hover.

The op is cloned into a function of its own (the values it uses become the function's
arguments, its results are returned), and the lowering service takes that module down one
level at a time, as `mlirtext opt --lower-to` does. Results are cached by the function's
printed text, so every `stablehlo.add` on `tensor<4x8xf32>` in a file shares one entry. Work
runs on an executor; hover shows the levels finished so far and never waits for the rest.
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
#: Lines of one level's text shown in a hover before it is cut.
MAX_LINES = 40
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

    def section(self, op: Operation) -> str:
        """The Markdown of an op's lowered forms as far as they are done."""
        if not lowerable(op):
            return ""
        entry = self.request(op)
        if entry is None:
            return ""
        return format_section(entry)


def format_section(entry: Lowered) -> str:
    parts = []
    if entry.start_level:
        parts.append(f"**Lowered forms** (from {entry.start_level})")
    for level, text in entry.levels:
        lines = text.rstrip("\n").split("\n")
        if len(lines) > MAX_LINES:
            lines = lines[:MAX_LINES] + [f"// ... {len(lines) - MAX_LINES} more lines"]
        body = "\n".join(lines)
        parts.append(f"{level}:\n```mlir\n{body}\n```")
    if entry.error:
        parts.append(f"*{entry.error}*")
    elif not entry.done:
        parts.append("*lowering further levels... (hover again to see them)*")
    return "\n\n".join(parts)
