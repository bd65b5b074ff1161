"""Code actions: lower a function or the module, fold constants, quick fixes.

An action's edit replaces exactly the text of the function (or the `// -----`
chunk, for the module) and nothing else: comments and formatting around it
stay byte-identical. Offering an action is cheap (no lowering); `compute` does
the work when the action is chosen, and answers a message instead of an edit
when the lowering cannot be done.
"""
from __future__ import annotations

import re
from typing import Optional, Union

from ..diagnostics import Diagnostic
from ..ir.core import Operation
from ..syntax.printer import print_module
from ..transforms.lowering_service import describe_problem, lower_to, print_with_origins
from ..transforms.pass_manager import PassManager
from ..transforms.pipeline import parse_pipeline
from .document import Chunk, Document, Piece
from .extraction import SourceMap, chunk_module, function_module_of, problem
from .file_tests import expectation_fixes

REWRITE = "refactor.rewrite"
_FUNCS = ("func.func",)


def function_at(doc: Document, offset: int) -> Optional[tuple[Piece, Operation]]:
    """The top-level function whose text contains `offset`."""
    piece = doc.piece_at(offset)
    if piece is None:
        return None
    local = offset - piece.base
    for op in piece.parsed.top_ops:
        if op.name in _FUNCS and op.span is not None and op.span.start <= local <= op.span.end \
                and op.regions and op.regions[0].blocks:
            return piece, op
        if op.name == "builtin.module" and op.span is not None and op.span.start <= local <= op.span.end:
            for inner in op.regions[0].blocks[0].ops if op.regions and op.regions[0].blocks else []:
                if inner.name in _FUNCS and inner.span is not None and inner.span.start <= local <= inner.span.end:
                    return piece, inner
    return None


def level_of_op(op: Operation) -> Optional[str]:
    from ..transforms.conversions.levels import level_of
    return level_of(op)


def available(doc: Document, start: int, end: int) -> list[tuple[str, str, list]]:
    """(title, kind, arguments for `compute`) of the actions at a range."""
    from ..transforms.conversions.levels import LEVELS, STEPS
    out = []
    found = function_at(doc, start)
    if found is not None:
        piece, fn = found
        name = fn.sym_name
        level = level_of_op(fn)
        if level is not None and level in STEPS:
            below = LEVELS[LEVELS.index(level) + 1:]
            out.append((f"Lower @{name} to {below[0]} (next level)", REWRITE,
                        ["lower-function", piece.chunk, name, below[0]]))
            for target in below[1:]:
                out.append((f"Lower @{name} to {target}", REWRITE, ["lower-function", piece.chunk, name, target]))
        if any(op.name.endswith((".constant", ".const")) for op in fn.walk()):
            out.append((f"Fold constants in @{name}", REWRITE, ["fold-function", piece.chunk, name, None]))
    piece = doc.piece_at(start)
    if piece is not None:
        chunk = doc.chunk_of(piece)
        levels = {level_of_op(p.parsed.module) for p in chunk.pieces if p.parsed.module is not None} - {None}
        if levels:
            top = min(levels, key=LEVELS.index)
            if top in STEPS:
                for target in LEVELS[LEVELS.index(top) + 1:]:
                    out.append((f"Lower module to {target}", REWRITE, ["lower-module", piece.chunk, None, target]))
    return out


def compute(doc: Document, action: str, chunk_index: int, name: Optional[str], level: Optional[str],
            ) -> Union[str, list]:
    """The edits [(start, end, text)] of an action, or a message saying why there are none."""
    if not 0 <= chunk_index < len(doc.chunks):
        return "the document changed: the action no longer applies"
    chunk = doc.chunks[chunk_index]
    if action == "lower-module":
        return _lower_chunk(doc, chunk, level)
    entry = chunk.symbols.get(name)
    if entry is None or entry[1].name not in _FUNCS:
        return f"no function named @{name} in this file any more"
    piece, fn = entry
    if action == "lower-function":
        return _rewrite_function(doc, chunk, piece, fn, lambda m: _lower(m, level))
    if action == "fold-function":
        return _rewrite_function(doc, chunk, piece, fn, _fold)
    return f"unknown action '{action}'"


def _lower(module: Operation, level: str) -> Optional[str]:
    try:
        problems = lower_to(module, level)
    except ValueError as e:
        problems = [Diagnostic("error", str(e))]
    return f"cannot lower to {level}: {describe_problem(problems[0])}" if problems else None


def _fold(module: Operation) -> Optional[str]:
    problems = PassManager(parse_pipeline("canonicalize")).run(module)
    return f"cannot fold constants: {describe_problem(problems[0])}" if problems else None


def _rewrite_function(doc, chunk, piece, fn, transform) -> Union[str, list]:
    module, declared = function_module_of(chunk, fn)
    found = problem(doc, [piece], module, SourceMap(chunk, piece))
    if found is not None:
        return f"@{fn.sym_name} does not verify on its own: {found}"
    stopped = transform(module)
    if stopped is not None:
        return stopped
    for op in list(module.regions[0].blocks[0].ops):
        if op.sym_name in declared:
            op.detach()
    new_text, _ = print_with_origins(module)
    start, end = piece.base + fn.span.start, piece.base + fn.span.end
    if not doc.text[start:end].endswith("\n"):
        new_text = new_text.rstrip("\n")
    return [(start, end, new_text)]


def _lower_chunk(doc: Document, chunk: Chunk, level: str) -> Union[str, list]:
    module = chunk_module(chunk)
    found = problem(doc, chunk.pieces, module, SourceMap(chunk))
    if found is not None:
        return f"the module does not verify: {found}"
    stopped = _lower(module, level)
    if stopped is not None:
        return stopped
    new_text = print_module(module)
    text = doc.text[chunk.start:chunk.end]
    return [(chunk.start, chunk.end, new_text if text.endswith("\n") else new_text.rstrip("\n"))]


# -- quick fixes ------------------------------------------------------------------------------
_INFERRED = re.compile(r"inferred type\(s\) '([^']+)' are incompatible with return type\(s\) of operation '([^']+)'$")


def quick_fixes(doc: Document, start: int, end: int) -> list[tuple[str, list]]:
    """(title, edits) for diagnostics in the range that have one obvious repair, then "Insert
    expected-error for this diagnostic" for each (`file_tests.py`)."""
    from .index import OP, target_at
    out = []
    for d in doc.diagnostics:
        if d.end < start or d.start > end:
            continue
        m = _INFERRED.search(d.message)
        if m is None:
            continue
        inferred, written = m.groups()
        target = target_at(doc, d.start)
        if target is None or target.kind != OP or target.obj.span is None:
            continue
        op = target.obj
        s, e = target.piece.base + op.span.start, target.piece.base + op.span.end
        at = doc.text.rfind(written, s, e)
        if at != -1:
            out.append((f"Change the result type to '{inferred}' (the type the op infers)",
                        [(at, at + len(written), inferred)]))
    return out + expectation_fixes(doc, start, end)
