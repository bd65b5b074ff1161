"""The sections below an op's own hover, short so that the box shows them whole: what the op
becomes one level down, the dispatch it went into (once the pipeline command has compiled its
function), and a link that opens the rest (every level, the target code) in the pipeline view,
at the op."""
from __future__ import annotations

import json
from typing import Optional
from urllib.parse import quote

from ..ir.core import Operation
from .document import Document
from .index import OP, target_at
from .lowered_forms import Lowered, LoweredForms, further_levels, lowerable, next_level_section
from .target_code import HOVER_DIALECTS, TargetCache, function_of, hover_section

#: The extension's "Show Pipeline" command; it takes (function, document line of the op, document uri).
SHOW_PIPELINE = "mlirtext.showPipeline"


def op_sections(doc: Document, offset: int, lowered: LoweredForms, targets: TargetCache) -> list[str]:
    """[next level, dispatch, link to the pipeline view] for the op under `offset` (each '' when
    it has none); starts its lowering when it is new, never waits for it."""
    target = target_at(doc, offset)
    if target is None or target.kind != OP:
        return []
    op: Operation = target.obj
    entry = lowered.entry_of(op)
    return [next_level_section(entry) if entry is not None else "",
            hover_section(doc, offset, targets),
            pipeline_link(doc, target.piece, op, entry)]


def pipeline_link(doc: Document, piece, op: Operation, entry: Optional[Lowered]) -> str:
    """A `command:` link that opens the pipeline view of the op's function with the op marked at
    every level, and what it will show below the next level; '' for an op of no named function or
    with nothing to show there."""
    if not (lowerable(op) or op.dialect in HOVER_DIALECTS):
        return ""
    fn = function_of(op)
    if fn is None or not fn.sym_name or op.span is None or op.span.source is not piece.parsed.source:
        return ""
    line, _ = doc.lines.position(piece.base + op.span.start)
    arguments = quote(json.dumps([fn.sym_name, line, doc.uri]), safe="")
    link = (f"[Every level and the target code of @{fn.sym_name} in the pipeline view]"
            f"(command:{SHOW_PIPELINE}?{arguments} \"Show Pipeline, this op marked at every level\")")
    more = further_levels(entry) if entry is not None else ""
    return f"{link} ({more})" if more else link
