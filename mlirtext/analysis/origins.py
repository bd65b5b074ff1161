"""Where each printed op came from: the pipeline view's "click an op, see its source op".

Lowering keeps an op's source position: the rewriter gives every op it creates the span of
the op it replaces (`PatternRewriter.create`). So a module printed at any level can say, for
each line that starts an op, the line of the document that op came from. Ops a pattern
builds without the rewriter (the body of a `linalg.generic` it makes) have no span of their
own and take their enclosing op's.
"""
from __future__ import annotations

from typing import Callable, Optional

from ..ir.core import Operation
from ..syntax.printer import Printer


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


def print_with_origins(module: Operation, origin_line: Callable[[Operation], Optional[int]]
                       ) -> tuple[str, list[Optional[int]]]:
    """The module's text without its `module {` wrapper (as the pipeline shows it), and for
    each line of it the source line (0-based) of the op starting there, or None."""
    printer = _LinePrinter()
    text = printer.print_top(module)
    line_of_piece, line = [], 0
    for piece in printer.out:
        line_of_piece.append(line)
        line += piece.count("\n")
    lines = text.rstrip("\n").split("\n")
    origins: list[Optional[int]] = [None] * len(lines)
    for index, op in printer.starts.values():
        if op is not module and index < len(line_of_piece):
            origins[line_of_piece[index]] = origin_line(op)
    if lines and lines[0].rstrip() == "module {" and lines[-1] == "}":
        lines = [l[2:] if l.startswith("  ") else l for l in lines[1:-1]]
        origins = origins[1:-1]
    return "\n".join(lines) + "\n", origins


def span_origin(module: Operation, to_document: Callable[[int], Optional[int]]
                ) -> Callable[[Operation], Optional[int]]:
    """An `origin_line` for ops of `module`: their span (or their nearest enclosing op's)
    in the text `module` was parsed from, as a document line through `to_document`
    (offset in that text -> document line, or None outside the part that maps)."""
    source = module.span.source if module.span is not None else None

    def origin(op: Operation) -> Optional[int]:
        while op is not None and op.span is None and op.name != "builtin.module":
            op = op.parent_op
        if op is None or op.span is None or op.name == "builtin.module" or op.span.source is not source:
            return None   # made from nothing in the source, or from text a pattern parsed
        return to_document(op.span.start)
    return origin
