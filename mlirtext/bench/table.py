"""The bench report as a text table (for people) and as JSON (for machines)."""
from __future__ import annotations

import math
from typing import Optional

from .rows import BASELINE, FAILED, MISMATCH, NOT_RUN, Row

COLUMNS = ("target / device", "size", "compile", "load", "first call", "median", "p90", "peak memory",
           "speedup", "outputs")


def size_text(n: Optional[int]) -> str:
    if n is None:
        return "-"
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB" if n < 1048576 else f"{n / 1048576:.1f} MiB"


def seconds_text(s: Optional[float]) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def outputs_text(row: Row) -> str:
    if row.status == BASELINE:
        return "baseline"
    if row.status == MISMATCH:
        return f"MISMATCH: max error {row.agreement.max_error:.3g} ({row.message})"
    if row.status == FAILED:
        return f"FAILED: {row.message}"
    if row.status == NOT_RUN:
        return f"not run here: {row.message}"
    return f"match (max error {row.agreement.max_error:.2g})"


def cells(row: Row) -> list:
    """The row's cells; a row that does not match the baseline shows no speed."""
    timing_ok = row.status not in (MISMATCH, FAILED)
    return [row.label, size_text(row.artifact_bytes), seconds_text(row.compile_s), seconds_text(row.load_s),
            seconds_text(row.first_call_s if timing_ok else None), seconds_text(row.median_s),
            seconds_text(row.p90_s), size_text(row.peak_bytes),
            f"{row.speedup:.2f}x" if row.speedup is not None else "-", outputs_text(row)]


def format_table(report) -> str:
    body = [list(COLUMNS)] + [cells(r) for r in report.rows]
    widths = [max(len(line[i]) for line in body) for i in range(len(COLUMNS) - 1)]
    lines = []
    for n, line in enumerate(body):
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths)))
                     + "  " + line[-1])
        if n == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


def format_report(report) -> str:
    head = f"mlirtext bench: {report.filename} @{report.function}"
    inputs = f"inputs: {', '.join(report.inputs)}: {report.input_source}" if report.inputs else "inputs: none"
    base = report.baseline
    notes = [f"baseline: {base.label} (mlirtext's interpreter: numpy, op by op); speedup = baseline time / "
             "row time", f"outputs compared with the baseline: {report.tolerance}",
             f"timing: {report.method}"]
    return "\n".join([head, inputs, "", format_table(report), ""] + notes) + "\n"


def _round(x: Optional[float], digits: int = 9) -> Optional[float]:
    return None if x is None else round(x, digits)


def _finite(x: float) -> Optional[float]:
    """JSON has no infinity: a shape or NaN mismatch (infinite error) is null, its message says why."""
    return x if math.isfinite(x) else None


def report_json(report) -> dict:
    rows = []
    for r in report.rows:
        timing_ok = r.status not in (MISMATCH, FAILED)
        rows.append({
            "target": r.target, "device": r.device, "status": r.status, "message": r.message,
            "artifact_bytes": r.artifact_bytes, "compile_s": _round(r.compile_s), "load_s": _round(r.load_s),
            "first_call_s": _round(r.first_call_s) if timing_ok else None,
            "median_s": _round(r.median_s), "p90_s": _round(r.p90_s), "peak_bytes": r.peak_bytes,
            "speedup": _round(r.speedup, 4), "max_error": _finite(r.agreement.max_error) if r.agreement else None,
            "outputs_compared": r.agreement is not None, "samples": len(r.samples) if timing_ok else 0,
        })
    s = report.settings
    return {"file": report.filename, "function": report.function, "inputs": report.inputs,
            "baseline": {"target": report.baseline.target, "device": report.baseline.device},
            "tolerance": report.tolerance,
            "method": {"text": report.method, "warmup_calls": s.warmup, "rounds": s.rounds,
                       "interleaved": True, "measured": "call only, inputs already staged",
                       "peak_memory": "the VM's memory plan (pool + results), not measured"},
            "rows": rows,
            "compile_phases": {target: {k: _round(v) for k, v in phases.items()}
                               for target, phases in report.compile_phases.items()}}
