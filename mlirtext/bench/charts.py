"""Inline SVG bar charts (no script, no network): horizontal bars, one per labelled item.

Colours come from CSS variables of the page (`--bar`, `--bar-alt`, `--ink`, `--muted`), so one
chart reads in light and dark mode alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Callable, Optional

LABEL_W = 150      # px for the item labels on the left, at least (more for long labels)
CHAR_W = 6.8       # px per character of a 12px label, a little generous
BAR_W = 230        # px for the longest bar
ROW_H = 22
VALUE_W = 175      # px for the value text right of the bars


@dataclass
class Bar:
    label: str
    value: Optional[float]          # None: no bar, `note` says why (a mismatch, a failure)
    note: str = ""
    whisker: Optional[float] = None  # a second, larger value drawn as a line (p90 beside a median)
    alt: bool = False                # drawn in the second colour (the baseline, IREE)
    quiet: bool = False              # a note that is no fault (not run here), not in the alarm colour


def bar_chart(title: str, bars: list, fmt: Callable[[float], str], reference: Optional[float] = None) -> str:
    """An SVG chart titled `title`; `reference` draws a dashed line at that value (1x for speedups)."""
    known = [v for b in bars for v in (b.value, b.whisker) if v is not None]
    if reference is not None:
        known.append(reference)
    top = max(known) if known else 1.0
    top = top if top > 0 else 1.0
    scale = BAR_W / top
    label_w = max([LABEL_W] + [int(len(b.label) * CHAR_W) + 12 for b in bars])
    height = ROW_H * len(bars) + 34
    width = label_w + BAR_W + VALUE_W
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>',
             f'<text class="chart-title" x="0" y="14">{escape(title)}</text>']
    for i, b in enumerate(bars):
        y = 24 + i * ROW_H
        parts.append(f'<text class="chart-label" x="{label_w - 8}" y="{y + 14}" text-anchor="end">'
                     f'{escape(b.label)}</text>')
        if b.value is None:
            cls = "chart-note quiet" if b.quiet else "chart-note"
            parts.append(f'<text class="{cls}" x="{label_w}" y="{y + 14}">{escape(b.note)}</text>')
            continue
        w = max(1.0, b.value * scale)
        parts.append(f'<rect class="{"bar-alt" if b.alt else "bar"}" x="{label_w}" y="{y + 3}" width="{w:.1f}" '
                     f'height="{ROW_H - 6}" rx="2"/>')
        end = w
        if b.whisker is not None and b.whisker > b.value:
            x2 = label_w + b.whisker * scale
            mid = y + ROW_H / 2
            parts.append(f'<line class="whisker" x1="{label_w + w:.1f}" y1="{mid}" x2="{x2:.1f}" y2="{mid}"/>'
                         f'<line class="whisker" x1="{x2:.1f}" y1="{mid - 5}" x2="{x2:.1f}" y2="{mid + 5}"/>')
            end = b.whisker * scale
        text = fmt(b.value) + (f" (p90 {fmt(b.whisker)})" if b.whisker is not None else "") + \
            (f" {b.note}" if b.note else "")
        parts.append(f'<text class="chart-value" x="{label_w + end + 6:.1f}" y="{y + 14}">{escape(text)}</text>')
    if reference is not None:
        x = label_w + reference * scale
        parts.append(f'<line class="reference" x1="{x:.1f}" y1="20" x2="{x:.1f}" y2="{height - 4}"/>')
    parts.append("</svg>")
    return "".join(parts)
