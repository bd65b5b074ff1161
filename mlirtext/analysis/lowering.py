"""Lowering a module in place to a level, as `mlirtext opt --lower-to` does, with
problems as one line of text naming the op that stops it."""
from __future__ import annotations

import threading
from typing import Optional

from ..ir.core import Operation


def lower_module(module: Operation, level: str, cancelled: Optional[threading.Event] = None,
                 timing: Optional[list] = None) -> Optional[str]:
    """Lower `module` to `level`; None when done, else why not. `timing` collects
    (pass name, seconds) when given."""
    from ..transforms.conversions.levels import LEVELS, level_of, lowering_pipeline
    from ..transforms.pass_manager import PassManager
    from ..transforms.pipeline import parse_pipeline
    current = level_of(module)
    if current is not None and LEVELS.index(current) >= LEVELS.index(level):
        return None  # already there (hlo ops without a TOSA form go straight to linalg)
    try:
        text = lowering_pipeline(module, level)
    except ValueError as e:
        return str(e)
    if not text:
        return None
    instruments = [_PassClock(timing, cancelled)] if timing is not None or cancelled is not None else []
    problems = PassManager(parse_pipeline(text), instrumentations=instruments).run(module)
    if problems:
        return describe_problem(problems[0])
    return None


def describe_problem(d) -> str:
    # The span is in the text that was lowered (the function alone), not the document:
    # show the op's text, which the user can find, rather than a line number.
    where = ""
    if d.span is not None:
        op_text = d.span.source.text[d.span.start:d.span.end].split("\n", 1)[0][:60]
        where = f" (at '{op_text}')" if op_text else ""
    return f"{d.message}{where}"


class _PassClock:
    """Times each pass; stops the pipeline between passes once `cancelled` is set."""

    def __init__(self, timing: Optional[list], cancelled: Optional[threading.Event]):
        self.timing = timing
        self.cancelled = cancelled
        self.started = 0.0

    def before(self, p, op) -> None:
        import time
        if self.cancelled is not None and self.cancelled.is_set():
            raise Cancelled()
        self.started = time.perf_counter()

    def after(self, p, op) -> None:
        import time
        if self.timing is not None:
            self.timing.append((p.name, time.perf_counter() - self.started))


class Cancelled(Exception):
    """Raised between passes when the client cancelled the request."""


def strip_module(module: Operation) -> str:
    """The printed module without its `module {` wrapper (one level of indent removed)."""
    from ..syntax.printer import print_module
    text = print_module(module)
    lines = text.rstrip("\n").split("\n")
    if lines and lines[0].rstrip() == "module {" and lines[-1] == "}":
        lines = [l[2:] if l.startswith("  ") else l for l in lines[1:-1]]
    return "\n".join(lines) + "\n"
