"""`mlirtext sweep report`: a suite's latest run against its previous run and against the best each
test ever did: new failures, fixed tests, slowdowns beyond noise; as text or one HTML page."""
from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass, field

from . import store
from .results import STATUSES, better, worse

#: A test is slower only when it took both this many times as long and this many seconds more:
#: times of one test on a loaded 2-core machine vary by tens of percent and a few tenths of a second.
SLOWDOWN_RATIO, SLOWDOWN_SECONDS = 1.5, 1.0


@dataclass
class Report:
    suite: str
    latest: dict
    previous: dict | None
    counts: Counter
    new_failures: list = field(default_factory=list)   # (test, now, before, error)
    fixed: list = field(default_factory=list)          # (test, now, before)
    slower: list = field(default_factory=list)         # (test, seconds now, seconds before)
    below_best: list = field(default_factory=list)     # (test, now, best, best run's id)


def build(db, suite: str | None = None) -> Report:
    history = store.runs(db, suite)
    if not history:
        raise store.StoreError(f"no sweep of {suite!r} in the database" if suite else "the database has no sweep")
    latest = history[0]
    history = [r for r in history if r["suite"] == latest["suite"]]
    now = store.results_of(db, latest["id"])
    report = Report(latest["suite"], latest, history[1] if len(history) > 1 else None,
                    Counter(r.status for r in now.values()))
    if report.previous:
        before = store.results_of(db, report.previous["id"])
        for test, r in sorted(now.items()):
            b = before.get(test)
            if b is None:
                continue
            if worse(r.status, b.status):
                report.new_failures.append((test, r.status, b.status, r.error))
            elif better(r.status, b.status):
                report.fixed.append((test, r.status, b.status))
            if r.seconds > SLOWDOWN_RATIO * b.seconds and r.seconds - b.seconds > SLOWDOWN_SECONDS:
                report.slower.append((test, r.seconds, b.seconds))
    best: dict = {}   # test -> (best status, the latest run that gave it)
    for run in reversed(history[1:]):
        for test, r in store.results_of(db, run["id"]).items():
            if test not in best or not worse(r.status, best[test][0]):
                best[test] = (r.status, run["id"])
    for test, r in sorted(now.items()):
        if test in best and worse(r.status, best[test][0]):
            report.below_best.append((test, r.status, best[test][0], best[test][1]))
    return report


def _run_line(run: dict) -> str:
    return (f"run {run['id']} of {run['suite']}, {run['started']}, {run['seconds']:.0f} s, "
            f"commit {run['commit'] or '?'}, {run['machine']}")


def text(report: Report) -> str:
    lines = ["latest: " + _run_line(report.latest),
             "  " + ", ".join(f"{s} {report.counts[s]}" for s in STATUSES if report.counts[s])]
    if report.previous:
        lines.append("previous: " + _run_line(report.previous))
    else:
        lines.append("no previous run of this suite to compare with")
    for title, rows, fmt in (
            ("new failures", report.new_failures, lambda t: f"{t[0]}: {t[1]} (was {t[2]}): {t[3]}"),
            ("fixed", report.fixed, lambda t: f"{t[0]}: {t[1]} (was {t[2]})"),
            (f"slower (over {SLOWDOWN_RATIO:g}x and {SLOWDOWN_SECONDS:g} s more)", report.slower,
             lambda t: f"{t[0]}: {t[1]:.2f} s (was {t[2]:.2f} s)"),
            ("worse than their best ever", report.below_best,
             lambda t: f"{t[0]}: {t[1]} (best {t[2]}, run {t[3]})")):
        if report.previous or title.startswith("worse"):
            lines.append(f"{title}: {len(rows)}")
            lines += ["  " + fmt(row) for row in rows]
    return "\n".join(lines)


STYLE = """body{font:14px system-ui,sans-serif;margin:2em;color:#222}h1{font-size:20px}h2{font-size:16px;
margin-top:1.6em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f3f3f3}.pass{color:#186a1e}.bad{color:#b00020;font-weight:600}.counts span{margin-right:1.2em}
.muted{color:#777}"""


def page(report: Report) -> str:
    e = html.escape
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>mlirtext sweep: {e(report.suite)}</title>"
             f"<style>{STYLE}</style></head><body><h1>mlirtext sweep report: {e(report.suite)}</h1>",
             f"<p>latest: {e(_run_line(report.latest))}</p>",
             f"<p class='muted'>previous: {e(_run_line(report.previous)) if report.previous else 'none'}</p>",
             "<p class='counts'>" + "".join(f"<span class='{'pass' if s == 'pass' else 'bad'}'>{s}: "
                                             f"{report.counts[s]}</span>" for s in STATUSES if report.counts[s])
             + "</p>"]

    def table(title, head, rows):
        parts.append(f"<h2>{e(title)} ({len(rows)})</h2>")
        if rows:
            parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr>" + "".join(
                "<tr>" + "".join(f"<td>{e(c if isinstance(c, str) else f'{c:.2f}' if isinstance(c, float) else str(c))}"
                                 "</td>" for c in row) + "</tr>" for row in rows) + "</table>")
        else:
            parts.append("<p class='muted'>none</p>")
    table("New failures since the previous run", ("test", "now", "before", "error"), report.new_failures)
    table("Fixed since the previous run", ("test", "now", "before"), report.fixed)
    table(f"Slower than the previous run (over {SLOWDOWN_RATIO:g}x and {SLOWDOWN_SECONDS:g} s more)",
          ("test", "seconds now", "seconds before"), report.slower)
    table("Worse than their best ever", ("test", "now", "best", "best run"), report.below_best)
    parts.append("</body></html>\n")
    return "".join(parts)
