"""A function's run profiled for the editor: the per-dispatch table with the document lines of
the source ops each dispatch was made from, and per source op its share of the run time (the
share of the dispatches it went into).

The function is compiled from its printed text (`device_run`, cached), so the kernels' source
ops carry places in that text; a parse of the same text walks in the same order as the cloned
module it was printed from, whose ops keep their document spans: that pairs the two.
"""
from __future__ import annotations

from typing import Callable

from .. import api
from ..debugging.dispatch_trace import kernel_sources
from ..vm.profile import Profile
from . import device_run

#: Calls profiled (after an unprofiled warm-up call), at most; fewer when a call is slow.
PROFILED_CALLS = 5
TIME_BUDGET_S = 0.5
PROFILED_DEVICES = ("local-sync", "local-task")


def profile_function(text: str, name: str, args: list, device: str, module, filename: str,
                     document_line: Callable) -> dict:
    """`text` (printed from `module`, a clone whose ops keep their spans) compiled and run on
    `device`, its calls profiled. `document_line(span)`: the document line of a span of
    `module`, or None. Raises device_run.DeviceRunError (and the VM's errors)."""
    if device not in PROFILED_DEVICES:
        raise device_run.DeviceRunError(f"a profile is of native code: device {device} has no dispatches to time "
                                        f"(devices: {', '.join(PROFILED_DEVICES)})")
    fn, compile_seconds = device_run.loaded_function(text, filename, name, device)
    fn(*args)   # makes the buffer pool, starts the threads
    profile = Profile(name, device, kernel_sources(fn.module.file.reference_kernels()))
    fn.profiled(args, profile)
    while len(profile.calls) < PROFILED_CALLS and sum(profile.calls) < TIME_BUDGET_S:
        fn.profiled(args, profile)
    lines = _document_lines(text, module, filename, document_line)
    rows = []
    for row in profile.rows():
        sources = row.pop("sources")
        row["lines"] = sorted({lines[s["at"]] for s in sources if lines.get(s["at"]) is not None})
        row["ops"] = [s["op"] for s in sources]
        rows.append(row)
    per_line: dict = {}
    for row in rows:
        for line in row["lines"]:
            entry = per_line.setdefault(line, {"line": line, "share": 0.0, "seconds": 0.0, "dispatches": []})
            entry["share"] += row["share"]
            entry["seconds"] += row["total"] / row["calls"]
            entry["dispatches"].append(row["name"])
    whole = sum(profile.calls)
    return {"function": name, "device": device, "calls": len(profile.calls), "seconds": whole / len(profile.calls),
            "compile_seconds": compile_seconds, "rows": rows,
            "host_share": max(0.0, 1 - sum(r["share"] for r in rows)),
            "ops": sorted(per_line.values(), key=lambda e: e["line"]),
            "table": profile.table()}


def _document_lines(text: str, module, filename: str, document_line: Callable) -> dict:
    """{"FILE:LINE:COL" of an op in `text`, as kernel_sources names it: the document line of the
    same op of `module`}."""
    parsed = api.parse_and_verify(text, filename)
    out: dict = {}
    if not parsed.ok:
        return out
    for printed, original in zip(parsed.module.walk(), module.walk()):
        if printed.span is None or original.span is None or printed.name != original.name:
            continue
        line, col = printed.span.line_col
        out[f"{printed.span.source.name}:{line}:{col}"] = document_line(original.span)
    return out

