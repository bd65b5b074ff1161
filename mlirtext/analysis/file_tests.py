"""A file's tests, as the editor's Testing panel lists and runs them.

Two kinds: each `// -----` chunk with `expected-error` (`-warning`, `-remark`, `-note`)
annotations, run as `mlirtext opt --verify-diagnostics --split-input-file` runs it; and each
test function (`mlirtext check`'s rule: a public `@main` without arguments, else every public
function without arguments) that asserts with `check.expect_*`, run as `mlirtext check
--split-input-file` runs it. Listing reads the analysed document (no parse of its own); running
parses the item's chunk again from the text, as the command line would, so a run sees exactly
what the command line sees. Also the "Insert expected-error for this diagnostic" quick fix.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Optional

from ..api import verified
from ..checking import ERROR, FAILED, PASSED, check_chunk, pick_tests, uses_checks
from ..dialects.registry import Registry
from ..ir.source import SourceFile
from ..syntax.parser import parse
from ..verify_diagnostics import expectations, mismatches
from .document import Chunk, Document

CHUNK, FUNCTION = "chunk", "function"

#: A RUN line that lets ops of unknown dialects through (mlir-opt's error otherwise, as on the
#: command line).
_ALLOW_UNREGISTERED = re.compile(r"^\s*//\s*RUN:.*-allow-unregistered-dialect", re.M)


@dataclass
class PanelItem:
    """One test of a document: `start`, `end` are document offsets."""

    id: str
    kind: str
    label: str
    start: int
    end: int
    chunk: int
    function: Optional[str] = None


@dataclass
class Failure:
    """What did not hold, where (document offsets), and the two sides for a diff (either may be
    empty: an unexpected diagnostic was expected by nothing)."""

    message: str
    start: int
    end: int
    expected: str = ""
    actual: str = ""


@dataclass
class Outcome:
    id: str
    status: str                   # PASSED, FAILED or ERROR
    message: str = ""             # one line: why it did not pass
    failures: list = field(default_factory=list)
    seconds: float = 0.0


# -- listing ------------------------------------------------------------------------------------
def items(doc: Document) -> list[PanelItem]:
    """The document's tests, in source order (a chunk before the test functions inside it)."""
    source = SourceFile(doc.filename, doc.text)
    out = []
    for index, chunk in enumerate(doc.chunks):
        count = len(expectations(source, chunk.start, chunk.end))
        if count:
            start, end = _trimmed(doc.text, chunk.start, chunk.end)
            line = doc.lines.position(start)[0] + 1
            out.append(PanelItem(f"chunk:{index}", CHUNK, f"chunk {index + 1} (line {line}): {count} expected "
                                 f"diagnostic{'s' if count != 1 else ''}", start, end, index))
        out.extend(_function_items(chunk, index))
    return out


def _function_items(chunk: Chunk, index: int) -> list[PanelItem]:
    functions = [(piece, op) for piece in chunk.pieces for op in piece.parsed.top_ops if op.name == "func.func"]
    by_name = {name: op for name, (_, op) in chunk.symbols.items() if op.name == "func.func"}
    placed = {id(op): piece for piece, op in functions}
    out = []
    for fn in pick_tests([op for _, op in functions]):
        if fn.span is None or not uses_checks(fn, by_name):
            continue
        base = placed[id(fn)].base
        out.append(PanelItem(f"function:{index}:{fn.sym_name}", FUNCTION, f"@{fn.sym_name}",
                             base + fn.span.start, base + fn.span.end, index, fn.sym_name))
    return out


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """text[start:end] without the white space around it (a chunk's range starts on its first line)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# -- running ------------------------------------------------------------------------------------
def run(doc: Document, ids: Optional[list] = None, registry: Optional[Registry] = None,
        time_limit: Optional[float] = None, cancelled=None, report=None) -> list[Outcome]:
    """Run the items named by `ids` (every item when None); an id that names no item any more is an
    error outcome. `cancelled` (a threading.Event) stops before the next item; `report(text)` says which
    item is running."""
    listed = {item.id: item for item in items(doc)}
    wanted = list(listed) if ids is None else list(ids)
    allow_unregistered = _ALLOW_UNREGISTERED.search(doc.text) is not None
    source = SourceFile(doc.filename, doc.text)
    parsed: dict = {}
    out = []
    for item_id in wanted:
        if cancelled is not None and cancelled.is_set():
            break
        item = listed.get(item_id)
        if item is None:
            out.append(Outcome(item_id, ERROR, f"no test '{item_id}' in {doc.filename} any more"))
            continue
        if report is not None:
            report(item.label)
        t0 = time.perf_counter()
        chunk = doc.chunks[item.chunk]
        result = parsed.get(item.chunk)
        if result is None:
            result = parsed[item.chunk] = verified(parse(
                doc.text, doc.filename, chunk.start, chunk.end, source, registry=registry,
                allow_unregistered=allow_unregistered), registry)
        outcome = _run_chunk(doc, item, result) if item.kind == CHUNK else _run_function(doc, item, result,
                                                                                           time_limit)
        outcome.seconds = time.perf_counter() - t0
        out.append(outcome)
    return out


def _run_chunk(doc: Document, item: PanelItem, result) -> Outcome:
    """As --verify-diagnostics: every diagnostic expected, every annotation met."""
    found = mismatches(result.source, result.start, result.end, result.diagnostics)
    if not found:
        return Outcome(item.id, PASSED)
    failures = [Failure(m.message, *_span_range(m.span), m.expected, "\n".join(m.actual)) for m in found]
    return Outcome(item.id, FAILED, f"{len(found)} mismatch{'es' if len(found) != 1 else ''}: {found[0].message}",
                   failures)


def _run_function(doc: Document, item: PanelItem, result, time_limit: Optional[float]) -> Outcome:
    """As `mlirtext check`: the function runs on the interpreter, every check.* must hold."""
    _, results = check_chunk(result, doc.text, time_limit, {item.function})
    if not results:
        return Outcome(item.id, ERROR, f"@{item.function} is not a test function any more")
    r = results[0]
    if r.status == PASSED:
        return Outcome(item.id, PASSED)
    if r.status == ERROR:
        start, end = _line_range(doc, r.error_line) if r.error_line is not None else (item.start, item.start)
        return Outcome(item.id, ERROR, r.reason, [Failure(r.reason, start, end)])
    failures = [Failure(str(f), *_span_range(f.span), f.expected_text, f.got_text) for f in r.failures]
    return Outcome(item.id, FAILED, r.reason, failures)


def _span_range(span) -> tuple[int, int]:
    """A span of the chunk's parse: its offsets are the document's (the chunk was parsed in place)."""
    if span is None:
        return 0, 0
    return span.start, max(span.end, span.start)


def _line_range(doc: Document, line: int) -> tuple[int, int]:
    """The text of a 1-based line."""
    start = doc.lines.offset(line - 1, 0)
    return start, start + len(doc.lines.line_text(line - 1))


# -- the quick fix --------------------------------------------------------------------------------
#: The diagnostic severities an annotation can expect (a note is part of its error).
_ANNOTATED = ("error", "warning", "remark")
#: A line that holds only an annotation about a line below it: stacked above a diagnostic's line.
_STACKED = re.compile(r"^\s*//\s*expected-(?:error|warning|remark|note)(?:-re)?\s*@\+(\d+)")


def expectation_fixes(doc: Document, start: int, end: int) -> list[tuple[str, list]]:
    """(title, edits) "Insert expected-error for this diagnostic" for each diagnostic in the range:
    `// expected-<severity>@+N {{message}}` above the diagnostic's line, as indented, above any
    annotations stacked there already (N counts them)."""
    out = []
    seen = set()
    for d in doc.diagnostics:
        if d.end < start or d.start > end or d.severity not in _ANNOTATED:
            continue
        line = doc.lines.position(d.start)[0]
        message = d.message.splitlines()[0] if d.message else ""
        message = message.split("}}")[0].strip()   # the annotation's text ends at the first `}}`
        key = (line, d.severity, message)
        if key in seen or not message:
            continue
        seen.add(key)
        at, above = line, 1
        while at > 0 and _STACKED.match(doc.lines.line_text(at - 1)):
            at -= 1
            above += 1
        text = doc.lines.line_text(line)
        indent = text[:len(text) - len(text.lstrip())]
        insert = doc.lines.offset(at, 0)
        out.append((f"Insert expected-{d.severity} for this diagnostic",
                    [(insert, insert, f"{indent}// expected-{d.severity}@+{above} {{{{{message}}}}}\n")]))
    return out


# -- the answers the server sends ------------------------------------------------------------------
def items_answer(doc: Document) -> dict:
    """`mlirtext.testItems`: {"items": [{id, kind, label, range, chunk, function}], "error": None};
    a range is [line, character, line, character] (0-based, UTF-16), as the other answers give it."""
    return {"items": [{"id": i.id, "kind": i.kind, "label": i.label, "range": _lsp_range(doc, i.start, i.end),
                       "chunk": i.chunk, "function": i.function} for i in items(doc)], "error": None}


def run_answer(doc: Document, ids: Optional[list], registry: Optional[Registry] = None, cancelled=None,
               report=None) -> dict:
    """`mlirtext.runTests`: {"results": [{id, status, message, seconds, failures: [{message, range,
    expected, actual}]}], "error": None}."""
    outcomes = run(doc, ids, registry, cancelled=cancelled, report=report)
    return {"results": [{"id": o.id, "status": o.status, "message": o.message, "seconds": round(o.seconds, 4),
                         "failures": [{"message": f.message, "range": _lsp_range(doc, f.start, f.end),
                                       "expected": f.expected, "actual": f.actual} for f in o.failures]}
                        for o in outcomes], "error": None}


def _lsp_range(doc: Document, start: int, end: int) -> list:
    return [*doc.lines.position(start), *doc.lines.position(end)]
