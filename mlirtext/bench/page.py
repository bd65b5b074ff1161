"""The report as one self-contained HTML page: inline CSS and SVG, no script, nothing fetched.

Sections (each an element with an id): summary (the table), charts, graph (the function's data-flow
graph, an SVG), journey (the text at every level with its op counts per dialect, then the
target's LLVM IR), passes (with their times),
dispatches (each dispatch and what its kernel became), module (the module file's sections), and
method (how the figures were measured). Every piece of text is escaped.
"""
from __future__ import annotations

import zlib
from html import escape

from .. import api
from ..transforms.conversions.levels import level_of
from .charts import Bar, bar_chart
from .graph_svg import graph_svg
from .journey import module_journey
from .measure import BASELINE_TARGET
from .rows import BASELINE, FAILED, MISMATCH, NOT_RUN
from .table import COLUMNS, cells, seconds_text, size_text

STYLE = """
:root { --bg: #ffffff; --ink: #1d2330; --muted: #5b6475; --line: #d8dde6; --panel: #f5f7fa;
        --bar: #3b6fd8; --bar-alt: #9aa3b2; --bad: #c0392b; --good: #1e8449; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #16181d; --ink: #e4e7ee; --muted: #9aa3b2; --line: #343a46; --panel: #1f232b;
          --bar: #6f9bff; --bar-alt: #6b7385; --bad: #ff7b6b; --good: #5fd38d; }
}
body { background: var(--bg); color: var(--ink); font: 14px/1.45 system-ui, sans-serif; margin: 24px auto;
       max-width: 1200px; padding: 0 16px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 18px; margin-top: 32px;
     border-bottom: 1px solid var(--line); padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
.muted { color: var(--muted); }
table { border-collapse: collapse; margin: 8px 0; } th, td { padding: 4px 10px; border-bottom: 1px solid var(--line);
        text-align: right; vertical-align: top; } th:first-child, td:first-child { text-align: left; }
td, th { white-space: nowrap; } td.text, th.text { text-align: left; white-space: normal; }
td.text:first-child { white-space: nowrap; }
tr.mismatch td, tr.failed td { color: var(--bad); } tr.baseline td, tr.not-run td { color: var(--muted); }
.status-ok { color: var(--good); }
pre { background: var(--panel); border: 1px solid var(--line); padding: 8px; overflow-x: auto; font-size: 12px;
      max-height: 480px; }
details { margin: 4px 0; } summary { cursor: pointer; }
.charts { display: flex; flex-wrap: wrap; gap: 18px 28px; }
svg.chart text { fill: var(--ink); font: 12px system-ui, sans-serif; }
svg.chart .chart-title { font-weight: 600; } svg.chart .chart-note { fill: var(--bad); }
svg.chart .chart-note.quiet { fill: var(--muted); }
svg.chart .bar { fill: var(--bar); } svg.chart .bar-alt { fill: var(--bar-alt); }
svg.chart .whisker { stroke: var(--ink); stroke-width: 1.5; }
svg.chart .reference { stroke: var(--muted); stroke-dasharray: 4 3; }
.level-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); gap: 12px; }
.level-grid section { background: var(--panel); border: 1px solid var(--line); border-radius: 6px;
                      padding: 4px 12px 8px; min-width: 0; }
.level-grid h3 { margin-top: 6px; }
.stack { display: flex; height: 14px; width: 100%; border-radius: 3px; overflow: hidden; margin: 4px 0; }
.stack span { display: block; height: 100%; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 4px; }
.levels { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; margin: 8px 0; }
.level { background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: 4px 10px; }
.passbar { display: inline-block; height: 10px; background: var(--bar); border-radius: 2px; }
.graph-scroll { overflow: auto; max-height: 720px; border: 1px solid var(--line); border-radius: 6px; }
svg.graph text { font: 11px ui-monospace, monospace; text-anchor: middle; fill: #1d2330; }
svg.graph .graph-type { font-size: 9.5px; fill: #2d3442; }
svg.graph .graph-edge { fill: none; stroke: var(--muted); stroke-width: 1.2; }
svg.graph .graph-node rect { stroke: var(--line); }
svg.graph .graph-end rect { fill: var(--panel); stroke: var(--ink); stroke-dasharray: 3 2; }
svg.graph .graph-end text { fill: var(--ink); }
"""


def _colour(dialect: str) -> str:
    """A stable colour per dialect name (the same dialect looks the same on every level)."""
    return f"hsl({zlib.crc32(dialect.encode()) % 360} 55% 52%)"


def _table(report) -> str:
    head = "".join(f'<th class="{"text" if c in (COLUMNS[0], COLUMNS[-1]) else ""}">{escape(c)}</th>'
                   for c in COLUMNS)
    body = []
    for row in report.rows:
        cls = {BASELINE: "baseline", MISMATCH: "mismatch", FAILED: "failed", NOT_RUN: "not-run"}.get(row.status, "ok")
        tds = []
        for i, c in enumerate(cells(row)):
            text_cls = ' class="text"' if i in (0, len(COLUMNS) - 1) else ""
            tds.append(f"<td{text_cls}>{escape(c)}</td>")
        body.append(f'<tr class="{cls}">' + "".join(tds) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _charts(report) -> str:
    rows = report.rows

    def missing(r) -> str:
        if r.status == MISMATCH:
            return f"mismatch (max error {r.agreement.max_error:.3g}): no speed"
        return {FAILED: "failed", NOT_RUN: "not run here"}.get(r.status, "not measured")

    latency = [Bar(r.label, r.median_s, whisker=r.p90_s, alt=r.status == BASELINE) if r.measured
               else Bar(r.label, None, missing(r), quiet=r.status == NOT_RUN) for r in rows]
    speedup = [Bar(r.label, r.speedup, alt=r.status == BASELINE) if r.speedup is not None
               else Bar(r.label, None, missing(r), quiet=r.status == NOT_RUN) for r in rows]
    sizes, seen = [], set()
    for r in rows:
        if r.artifact_bytes is not None and r.target not in seen:
            seen.add(r.target)
            sizes.append(Bar(r.target, r.artifact_bytes, alt=r.target.startswith("iree")))
    memory = [Bar(r.label, r.peak_bytes, alt=r.status == BASELINE) if r.peak_bytes is not None
              else Bar(r.label, None, "not reported by this runtime", quiet=True) for r in rows if r.call is not None]
    startup = [Bar(r.label, (r.load_s or 0) + r.first_call_s, alt=r.status == BASELINE)
               for r in rows if r.first_call_s is not None and r.status not in (MISMATCH, FAILED)]
    phases = [Bar(f"{target}: {phase}", s, alt=target == BASELINE_TARGET)
              for target, by_phase in report.compile_phases.items() for phase, s in by_phase.items()]
    charts = [bar_chart("Latency per call (median, whisker: p90)", latency, seconds_text),
              bar_chart("Speedup over the baseline (dashed: 1x)", speedup, lambda v: f"{v:.2f}x", reference=1.0),
              bar_chart("Artifact size (module file)", sizes, lambda v: size_text(int(v))),
              bar_chart("Peak memory of a call (memory plan)", memory, lambda v: size_text(int(v))),
              bar_chart("Start-up: load + first call", startup, seconds_text),
              bar_chart("Compile time by phase", phases, seconds_text)]
    return '<div class="charts">' + "".join(charts) + "</div>"


def _op_counts(counts: dict) -> str:
    totals = {d: sum(ops.values()) for d, ops in counts.items()}
    whole = sum(totals.values()) or 1
    stack = "".join(f'<span style="width:{100 * n / whole:.2f}%;background:{_colour(d)}" title="{escape(d)}: {n}">'
                    "</span>" for d, n in totals.items())
    legend = " ".join(f'<span class="swatch" style="background:{_colour(d)}"></span>{escape(d)} {n}'
                      for d, n in totals.items())
    ops = ", ".join(f"{escape(op)} {n}" for ops in counts.values() for op, n in ops.items())
    return (f'<div class="stack">{stack}</div><div>{legend} <span class="muted">({whole} ops)</span></div>'
            f'<details><summary>ops</summary><div class="muted">{ops}</div></details>')


def _journey(j) -> str:
    if not j.levels:
        return f"<p>The pipeline could not start: {escape(j.error or 'unknown reason')}</p>"
    strip = " &rarr; ".join(f'<span class="level">{escape(l.level)}</span>' for l in j.levels)
    if j.target_ir:
        strip += ' &rarr; <span class="level">LLVM IR</span>'
    parts = [f'<div class="levels">{strip}</div>',
             '<p class="muted">The whole module lowered level by level (as <code>mlirtext opt --lower-to</code> '
             'does, before dispatch formation); the compiled module\'s dispatches are below.</p>']
    cards = []
    for l in j.levels:
        lines = l.text.count("\n")
        cards.append(f'<section class="level-text" id="level-{escape(l.level)}"><h3>{escape(l.level)}</h3>'
                     f'{_op_counts(l.op_counts)}<details><summary>text ({lines} lines)</summary>'
                     f'<pre>{escape(l.text)}</pre></details></section>')
    if j.target_ir:
        cards.append(f'<section class="level-text" id="level-llvm-ir"><h3>target code: LLVM IR</h3><details>'
                     f'<summary>text ({j.target_ir.count(chr(10))} lines)</summary><pre>{escape(j.target_ir)}</pre>'
                     "</details></section>")
    parts.append(f'<div class="level-grid">{"".join(cards)}</div>')
    if j.error:
        parts.append(f'<p class="muted">{escape(j.error)}</p>')
    return "".join(parts)


def _passes(j) -> str:
    entries = [(l.level, name, s) for l in j.levels for name, s in l.passes]
    if not entries:
        return "<p>No passes ran (the module is already at its lowest level).</p>"
    top = max(s for _, _, s in entries) or 1.0
    total = sum(s for _, _, s in entries)
    rows = "".join(f'<tr><td class="text">{escape(level)}</td><td class="text">{escape(name)}</td>'
                   f"<td>{escape(seconds_text(s))}</td>"
                   f'<td class="text"><span class="passbar" style="width:{max(1, 300 * s / top):.0f}px"></span></td>'
                   "</tr>" for level, name, s in entries)
    return (f"<p>{len(entries)} passes, {escape(seconds_text(total))} in all.</p><table><thead><tr>"
            '<th class="text">to level</th><th class="text">pass</th><th>time</th><th class="text"></th></tr>'
            f"</thead><tbody>{rows}</tbody></table>")


def _dispatches(j) -> str:
    # The reference target's kernels are the linalg shown in every table: its own table is left
    # out when another target has one.
    shown = {t: f for t, f in j.dispatches.items() if t != "reference"} or j.dispatches
    parts = []
    for target, functions in shown.items():
        for fn in functions:
            rows = []
            for d in fn.dispatches:
                code = ""
                if d.mlir:
                    code += f"<details><summary>linalg</summary><pre>{escape(d.mlir)}</pre></details>"
                if d.code:
                    code += f"<details><summary>{escape(d.code_kind)}</summary><pre>{escape(d.code)}</pre></details>"
                rows.append(f'<tr><td>{d.index}</td><td class="text">@{escape(d.kernel)}</td>'
                            f'<td class="text">{escape(d.signature)}</td>'
                            f'<td class="text">{escape(d.became)}{code}</td></tr>')
            parts.append(f"<h3>{escape(target)}: @{escape(fn.name)}, {len(fn.dispatches)} dispatches</h3>"
                         '<table><thead><tr><th>#</th><th class="text">kernel</th><th class="text">bindings</th>'
                         f'<th class="text">became</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
                         f"<details><summary>host program</summary><pre>{escape(fn.listing)}</pre></details>")
    return "".join(parts)


def _profiles(report) -> str:
    """`bench --profile`: each VM device's per-dispatch table (vm/profile.py)."""
    parts = []
    for profile in report.profiles:
        rows = profile.rows()
        whole = sum(profile.calls) or 1e-12
        host = max(0.0, 1 - sum(r["share"] for r in rows))
        cells = "".join(
            f'<tr><td class="text">{escape(r["name"])}</td><td class="text">@{escape(r["kernel"])}</td>'
            f'<td>{r["calls"]}</td><td>{escape(seconds_text(r["total"]))}</td><td>{escape(seconds_text(r["median"]))}</td>'
            f'<td>{100 * r["share"]:.1f}%</td><td class="text"><span class="passbar" style="width:{max(1, 300 * r["share"]):.0f}px">'
            "</span></td></tr>" for r in rows)
        cells += (f'<tr><td class="text">host</td><td class="text">inputs, buffers, results</td><td>{len(profile.calls)}</td>'
                  f'<td>{escape(seconds_text(host * whole))}</td><td></td><td>{100 * host:.1f}%</td>'
                  f'<td class="text"><span class="passbar" style="width:{max(1, 300 * host):.0f}px"></span></td></tr>')
        parts.append(f"<h3>{escape(profile.device)}: {len(profile.calls)} profiled calls, "
                     f"{escape(seconds_text(whole / len(profile.calls)))} each</h3>"
                     '<table><thead><tr><th class="text">dispatch</th><th class="text">kernel</th><th>calls</th>'
                     '<th>total</th><th>median</th><th>share</th><th class="text"></th></tr></thead>'
                     f"<tbody>{cells}</tbody></table>")
    return "".join(parts)


def _graph(report, text: str) -> str:
    """The benchmarked function's graph at the level it is written at."""
    result = api.parse_and_verify(text, report.filename)
    if not result.ok:
        return f"<p>No graph: {escape(result.diagnostics[0].format())}</p>"
    fn = next((op for op in result.module.walk() if op.name == "func.func" and op.sym_name == report.function), None)
    if fn is None:
        return f"<p>No graph: no function @{escape(report.function)}.</p>"
    return graph_svg(fn, level_of(result.module), _colour)


def _dumps(j) -> str:
    return "".join(f"<details><summary>{escape(target)}: sections (as <code>mlirtext dump</code> prints them)"
                   f"</summary><pre>{escape(text)}</pre></details>" for target, text in j.dumps.items())


def render_page(report, text: str) -> str:
    """The page for a bench `report` of module `text`."""
    j = module_journey(text, report.filename, report.modules)
    title = f"mlirtext bench: {report.filename} @{report.function}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>{escape(title)}</title><style>{STYLE}</style></head>
<body>
<h1>{escape(title)}</h1>
<p class="muted">inputs: {escape(f"{', '.join(report.inputs)}: {report.input_source}" if report.inputs else "none")}</p>
<section id="summary"><h2>Deployment table</h2>{_table(report)}
<p class="muted">Baseline: {escape(report.baseline.label)} (mlirtext's interpreter: numpy, op by op). Outputs
compared with the baseline: {escape(report.tolerance)}.</p></section>
<section id="charts"><h2>Charts</h2>{_charts(report)}</section>
<section id="graph"><h2>Graph of the function</h2>{_graph(report, text)}</section>
<section id="journey"><h2>Journey of the module</h2>{_journey(j)}</section>
<section id="passes"><h2>Passes and their times</h2>{_passes(j)}</section>
<section id="dispatches"><h2>Dispatches and their kernels</h2>{_dispatches(j)}</section>
{f'<section id="profile"><h2>Profile (the dispatches one at a time)</h2>{_profiles(report)}</section>' if report.profiles else ""}
<section id="module"><h2>Module files</h2>{_dumps(j)}</section>
<section id="method"><h2>Method</h2><p>{escape(report.method)}</p></section>
</body></html>
"""
