"""The pass explorer: what each step of a lowering (`pass_steps.py`) changed.

`diff_steps` compares a step with the one before it with ops matched by origin (the span of
the source op they came from), not by line: an op is the same op at two steps when it has the
same origin and name, so a pass that reorders ops shows them moved, and one that rewrites
`stablehlo.add` into `tosa.add` shows one op removed and one added for that source op.
`inline_diff` is the listing the pipeline view shows (`steps_json`), `explain_table` the table
of `mlirtext opt --explain`.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from typing import Optional

from ..ir.source import Span
from .pass_steps import Step

@dataclass
class OpChange:
    """One op's fate at a step: `kind` is added, removed, changed (same op, other text) or
    moved (same op, other place among the ops it is matched with). `before`/`after` are the
    OpLines at the two steps (None for an added / removed op)."""
    kind: str
    before: Optional[OpLine]
    after: Optional[OpLine]

    @property
    def name(self) -> str:
        return (self.after or self.before).name


@dataclass
class StepDiff:
    """`changes` (OpChanges, in `after`'s order, removed ops at their old place) and `pairs`:
    every (before, after) OpLine pair matched, changed or not."""
    changes: list
    pairs: list

    def count(self, kind: str) -> int:
        return sum(1 for c in self.changes if c.kind == kind)

    def summary(self) -> str:
        """What the step rewrote, in a few words: `stablehlo.add -> tosa.add; 2 moved`."""
        removed = Counter(c.name for c in self.changes if c.kind == "removed")
        added = Counter(c.name for c in self.changes if c.kind == "added")
        parts = []
        if removed or added:
            left = ", ".join(_counted(removed)) or "nothing"
            right = ", ".join(_counted(added)) or "nothing"
            parts.append(f"{left} -> {right}")
        for kind in ("changed", "moved"):
            n = self.count(kind)
            if n:
                parts.append(f"{n} {kind}")
        return "; ".join(parts) or "no op changed"


def _counted(counts: Counter, most: int = 4) -> list[str]:
    items = counts.most_common()
    out = [f"{n}x {name}" if n > 1 else name for name, n in items[:most]]
    if len(items) > most:
        out.append(f"{sum(n for _, n in items[most:])} more")
    return out


def diff_steps(before: Step, after: Step) -> StepDiff:
    """The ops added, removed, changed and moved from `before` to `after`, matched by origin."""
    waiting: dict = {}
    for op in before.ops:
        waiting.setdefault(op.key, []).append(op)
    taken: dict = {}
    pairs, changes = [], []
    for op in after.ops:
        queue = waiting.get(op.key)
        used = taken.get(op.key, 0)
        if queue is not None and used < len(queue):
            taken[op.key] = used + 1
            pairs.append((queue[used], op))
        else:
            changes.append(OpChange("added", None, op))
    matched_before = {id(b) for b, _ in pairs}
    changes += [OpChange("removed", op, None) for op in before.ops if id(op) not in matched_before]
    staying = _increasing(pairs)
    for i, (b, a) in enumerate(pairs):
        if b.canonical != a.canonical:
            changes.append(OpChange("changed", b, a))
        elif i not in staying:
            changes.append(OpChange("moved", b, a))
    changes.sort(key=lambda c: c.after.line if c.after else c.before.line)
    return StepDiff(changes, pairs)


def _increasing(pairs: list) -> set:
    """Indices of the pairs (in after order) on a longest run increasing in before order: the
    ops that kept their place; the others moved."""
    tails, tail_index, parent = [], [], [-1] * len(pairs)
    for i, (b, _) in enumerate(pairs):
        k = bisect_left(tails, b.line)
        if k == len(tails):
            tails.append(b.line)
            tail_index.append(i)
        else:
            tails[k], tail_index[k] = b.line, i
        parent[i] = tail_index[k - 1] if k else -1
    keep, i = set(), tail_index[-1] if tail_index else -1
    while i >= 0:
        keep.add(i)
        i = parent[i]
    return keep


def inline_diff(after: Step, diff: StepDiff) -> list[tuple[str, str, Optional[int]]]:
    """`after`'s text as (kind, line text, line in `after` or None) with the removed ops put
    back where they were: kind is added, removed, changed, moved or "" for a line as it was.
    A removed op goes before the first op made from the same source op (what replaced it), or
    else before the first op that was after it and is still there."""
    marks = {c.after.line: c.kind for c in diff.changes if c.after is not None}
    anchors = sorted((b.line, a.line) for b, a in diff.pairs)
    replacements: dict = {}
    for c in diff.changes:
        if c.kind == "added" and c.after.origin is not None:
            replacements.setdefault(_span_key(c.after.origin), c.after.line)
    insert_at: dict = {}
    for c in diff.changes:
        if c.kind == "removed":
            at = replacements.get(_span_key(c.before.origin)) if c.before.origin is not None else None
            if at is None:
                k = bisect_left(anchors, (c.before.line, -1))
                at = anchors[k][1] if k < len(anchors) else None
            insert_at.setdefault(at, []).append(c.before)
    out = []
    for n, line in enumerate(after.text.rstrip("\n").split("\n")):
        for op in insert_at.pop(n, []):
            out.append(("removed", op.text, None))
        out.append((marks.get(n, ""), line, n))
    for op in insert_at.pop(None, []):
        out.append(("removed", op.text, None))
    return out


def _span_key(span: Span) -> tuple:
    return span.start, span.end


def explain_table(steps: list) -> str:
    """`mlirtext opt --explain`: one row per pass: its level, wall time, ops before -> after and
    what it rewrote (`diff_steps`' summary), then the total."""
    rows = [("#", "pass", "level", "time", "ops", "rewrote")]
    total = 0.0
    for before, after in zip(steps, steps[1:]):
        if after.pass_name is None:   # the next chunk's start
            continue
        total += after.seconds
        what = diff_steps(before, after).summary() if after.changed else "(unchanged)"
        rows.append((str(after.index), after.pass_name or "", after.level or "-", _ms(after.seconds),
                     f"{after.ops_before} -> {after.ops_after}", what))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["  ".join(cell.ljust(w) if i != 3 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             + "  " + r[5] for r in rows]
    changed = sum(1 for s in steps if s.changed)
    lines.append(f"{len(rows) - 1} passes, {changed} changed the IR, {_ms(total)} in all")
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


#: Unchanged lines kept around each change in the view's diffs; longer runs are one "skip" line.
CONTEXT_LINES = 3


def steps_json(steps: list, line_of) -> list[dict]:
    """The steps for the pipeline view: per step its pass, level, time, op counts, whether it
    changed, and for a step that changed the inline diff against the step before (`lines`:
    kind, text, and the document line of the op's source op, by `line_of(span)`; a run of more
    than 2 * CONTEXT_LINES unchanged lines between changes is one line of kind "skip" whose
    text says how many), the count of each kind of change and the summary. The first step
    (the input) is whole."""
    out = []
    for i, step in enumerate(steps):
        entry = {"index": step.index, "pass": step.pass_name, "level": step.level, "seconds": step.seconds,
                 "ops_before": step.ops_before, "ops_after": step.ops_after, "changed": step.changed,
                 "lines": [], "counts": {}, "summary": ""}
        if i == 0 or step.changed:
            if i == 0:
                listing = [("", line, n) for n, line in enumerate(step.text.rstrip("\n").split("\n"))]
                removed_origin = {}
            else:
                diff = diff_steps(steps[i - 1], step)
                listing = inline_diff(step, diff)
                removed_origin = {c.before.text: c.before.origin for c in diff.changes if c.kind == "removed"}
                entry["counts"] = {k: diff.count(k) for k in ("added", "removed", "changed", "moved")}
                entry["summary"] = diff.summary()
            for kind, text, n in (listing if i == 0 else _with_context(listing)):
                if kind == "skip":
                    entry["lines"].append({"kind": kind, "text": text, "origin": None})
                    continue
                span = step.origins[n] if n is not None and n < len(step.origins) else removed_origin.get(text)
                entry["lines"].append({"kind": kind, "text": text, "origin": line_of(span) if span else None})
        out.append(entry)
    return out


def _with_context(listing: list) -> list:
    """`listing` with each run of unchanged lines longer than 2 * CONTEXT_LINES (CONTEXT_LINES
    at its ends) cut to its ends around one ("skip", "N unchanged lines", None)."""
    out, run = [], []

    def flush(last: bool) -> None:
        keep_head = CONTEXT_LINES if out else 0          # (no context before the first change)
        keep_tail = 0 if last else CONTEXT_LINES
        if len(run) > keep_head + keep_tail + 1:
            out.extend(run[:keep_head])
            out.append(("skip", f"{len(run) - keep_head - keep_tail} unchanged lines", None))
            out.extend(run[len(run) - keep_tail:])
        else:
            out.extend(run)
        run.clear()
    for item in listing:
        if item[0] == "":
            run.append(item)
        else:
            flush(False)
            out.append(item)
    flush(True)
    return out
