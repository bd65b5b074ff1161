"""The graph view's request (`mlirtext.graph`): a function of a document as a data-flow graph
(`graph.function_graph`) at the levels asked for, each op placed in the document (a lowered
op at the source op it came from), with the dispatch each op went into and, from a dispatch
trace (`mlirtext run --trace-dispatches`), the time of each source op.

Levels are names (`hlo`, ..., `llvm`) or "source" (the level the function is written at); the
function is lowered only as far as the lowest level asked for."""
from __future__ import annotations

import threading
from typing import Callable, Optional

from ..debugging.dispatch_trace import TraceError, read_trace
from ..ir.core import Operation
from ..transforms.conversions.levels import LEVELS, level_of
from ..transforms.lowering_service import Cancelled, LoweringStopped, lower_by_level, origin_span
from .document import ANALYSIS_LOCK, Document
from .extraction import SourceMap
from .graph import function_graph
from .target_code import CompiledSource, TargetCache, compiled_source

SOURCE = "source"


def _noop(message: str) -> None:
    pass


def graph_command(doc: Document, function: str, levels=None, profile: Optional[str] = None,
                  dispatches: bool = True, cache: Optional[TargetCache] = None,
                  cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """{"function", "levels": [the graph at each level asked, from the top down, with "source":
    whether it is the level written], "available": [every level the function can be shown at],
    "dispatches": [{"id", "name", "ops", "lines"}], "dispatch_error", "profile": {"function",
    "device", "seconds", "dispatches"} or None, "error"}.
    `levels`: a list of level names (default ["source"]). `dispatches=False` leaves dispatch
    formation out (it takes seconds on a function of thousands of ops: the view asks for the
    graph without it first, then with it)."""
    wanted = [SOURCE] if levels is None else levels
    if not isinstance(wanted, list) or not wanted or not all(isinstance(x, str) for x in wanted):
        return {"error": "levels must be a list of level names, e.g. [\"source\", \"linalg\"]"}
    unknown = [x for x in wanted if x != SOURCE and x not in LEVELS]
    if unknown:
        return {"error": f"unknown level '{unknown[0]}' (levels: {SOURCE}, {', '.join(LEVELS)})"}
    name = (function or "").lstrip("@")
    chunk = next((c for c in doc.chunks if name in c.symbols), None)
    if chunk is None:
        return {"error": f"no function named @{name} in {doc.filename}"}
    piece, fn = chunk.symbols[name]
    where = SourceMap(chunk, piece)
    times = {}
    out = {"function": name, "levels": [], "available": [], "dispatches": [], "dispatch_error": None,
           "profile": None, "error": None}
    if profile:
        try:
            out["profile"], times = profile_times(read_trace(profile))
        except TraceError as e:
            return {"error": str(e)}
    start = level_of(fn) or "linalg"
    out["available"] = list(LEVELS[LEVELS.index(start):])
    lowered_levels = [x for x in LEVELS[LEVELS.index(start) + 1:] if x in wanted]
    # What is compiled (the function with its callees, cloned and printed: the dispatch cache's
    # key) and a clone to lower cost most of the answer on a large function: only when needed.
    source = None
    if dispatches or lowered_levels:
        compiled = compiled_source(doc, chunk, piece, fn)
        if isinstance(compiled, str):
            return {"error": compiled}
        source, where = compiled
    place_dispatch: dict = {}
    if dispatches:
        report("forming dispatches")
        formed = (cache or TargetCache()).dispatches_of(source)
        if isinstance(formed, str):
            out["dispatch_error"] = formed
        else:
            for d in formed:
                out["dispatches"].append({"id": d.index, "name": d.name, "ops": d.ops,
                                          "lines": sorted({_line(doc, where, source, p) for p in d.places} - {None})})
                for place in d.places:
                    place_dispatch.setdefault(place, d.index)
    placing = _Placing(doc, where, source, place_dispatch, times)

    def add(function_op: Operation, level: str, written: bool) -> None:
        report(f"graph at {level}")
        graph = function_graph(function_op, level, placing.range, placing.dispatch)
        fused_dispatches(graph)
        placing.add_times(graph)
        out["levels"].append({**graph, "source": written})

    if SOURCE in wanted or start in wanted:
        with ANALYSIS_LOCK:   # the document's own IR (spans and all), read as it is
            add(fn, start, True)
    if not lowered_levels:
        return out
    try:
        for level in lower_by_level(source.module.clone(), start="linalg", cancelled=cancelled, printed=False):
            if level.level in lowered_levels:
                lowered = _function_named(level.module, name)
                if lowered is not None:
                    add(lowered, level.level, False)
            if level.level == lowered_levels[-1]:
                break
            if level.level != LEVELS[-1]:
                report(f"lowering to {LEVELS[LEVELS.index(level.level) + 1]}")
    except Cancelled:
        return {**out, "error": "cancelled"}
    except LoweringStopped as e:
        out["error"] = str(e)
    except ValueError as e:
        out["error"] = str(e)
    return out


def profile_times(trace: dict) -> tuple[dict, dict]:
    """({"function", "device", "seconds", "dispatches"}, {(line, column) 1-based: seconds}) of a trace:
    each dispatch's time shared evenly among the source ops its kernel was made from."""
    times: dict = {}
    total = 0.0
    records = trace.get("dispatches", [])
    for record in records:
        seconds = float(record.get("seconds") or 0.0)
        total += seconds
        sources = record.get("sources") or []
        for s in sources:
            parts = str(s.get("at", "")).rsplit(":", 2)
            if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                key = (int(parts[1]), int(parts[2]))
                times[key] = times.get(key, 0.0) + seconds / len(sources)
    return {"function": trace.get("function"), "device": trace.get("device"), "seconds": total,
            "dispatches": len(records)}, times


#: Ops cloned into every dispatch that reads them: where they are says nothing of fusion.
_INCIDENTAL = frozenset({"arith.constant", "stablehlo.constant", "mhlo.constant", "tosa.const", "tensor.empty"})


def fused_dispatches(graph: dict) -> None:
    """An op of no dispatch of its own whose results all go into one dispatch was fused into it
    (an elementwise producer, a broadcast): it gets that dispatch, with "fused": True."""
    users: dict = {}
    for edge in graph["edges"]:
        users.setdefault(edge["source"], []).append(edge["target"])
    by_id = {node["id"]: node for node in graph["nodes"]}
    for node in reversed(graph["nodes"]):     # users come after their producers
        node.setdefault("fused", False)
        if node["kind"] != "op" or node["dispatch"] is not None or node["op"] in _INCIDENTAL:
            continue
        found = {by_id[u]["dispatch"] for u in users.get(node["id"], [])}
        if len(found) == 1 and None not in found:
            node["dispatch"], node["fused"] = found.pop(), True


class _Placing:
    """Where an op of any level is in the document, and which dispatch it went into: the op's
    own span (source level), else the span of the op it came from."""

    def __init__(self, doc: Document, where: SourceMap, source: Optional[CompiledSource], dispatches: dict,
                 times: dict):
        self.doc, self.where, self.source, self.dispatches, self.times = doc, where, source, dispatches, times

    def range(self, op) -> Optional[list]:
        """`op`: an op, or a value (a function argument: where its name is written)."""
        span = origin_span(op) if isinstance(op, Operation) else op.span
        start = None if span is None else self.where.offset(span)
        if start is None:
            return None
        line, char = self.doc.lines.position(start)
        end_line, end_char = self.doc.lines.position(start + (span.end - span.start))
        return [line, char, end_line, end_char]

    def dispatch(self, op: Operation) -> Optional[int]:
        if self.source is None:
            return None
        span = origin_span(op)
        place = None if span is None else self.source.index.get((span.source, span.start))
        return self.dispatches.get(place)

    def add_times(self, graph: dict) -> None:
        """Each node's `seconds` (None without a profile or a time for its source op)."""
        for node in graph["nodes"]:
            rng = node["range"]
            node["seconds"] = None if rng is None or node["kind"] != "op" else \
                self.times.get((rng[0] + 1, rng[1] + 1))


def _line(doc: Document, where: SourceMap, source: CompiledSource, place: int) -> Optional[int]:
    offset = where.offset(source.span(place))
    return None if offset is None else doc.lines.position(offset)[0]


def _function_named(module: Operation, name: str) -> Optional[Operation]:
    return next((op for op in module.regions[0].blocks[0].ops if op.sym_name == name), None)
