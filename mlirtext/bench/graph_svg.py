"""The bench report's graph: the benchmarked function as a static SVG, drawn from the graph
view's data (`analysis/graph.py`) with a small layered layout (the editor's view lays out with
ELK in the webview; a report has no script).

Layout: each op on the layer after the deepest op it reads (longest path from the arguments),
the function's results on the last layer; within a layer, ops ordered by the mean position of
the ops they read (one sweep down), then centred. An op with regions is one node (its region's
ops counted on it). Past MAX_NODES ops only the first ones are drawn, with a note.
"""
from __future__ import annotations

from html import escape
from typing import Callable, Optional

from ..ir.core import Operation
from ..analysis.graph import function_graph

MAX_NODES = 600
CHAR = 7.0
NODE_H = 34
LAYER_GAP = 30
NODE_GAP = 14
MARGIN = 10


def graph_svg(fn: Operation, level: Optional[str], colour: Callable[[str], str]) -> str:
    """An <svg> of function op `fn`'s data-flow graph, ops filled by `colour(dialect)`."""
    graph = function_graph(fn, level, lambda op: None)
    nodes = [n for n in graph["nodes"] if n["parent"] is None]
    note = ""
    if len(nodes) > MAX_NODES:
        note = f"the first {MAX_NODES} of {len(nodes)} nodes"
        nodes = nodes[:MAX_NODES]
    parent = {n["id"]: n["parent"] for n in graph["nodes"]}

    def top(node_id: str) -> str:
        while parent.get(node_id) is not None:
            node_id = parent[node_id]
        return node_id

    shown = {n["id"] for n in nodes}
    edges = []
    for e in graph["edges"]:
        source, target = top(e["source"]), top(e["target"])
        if source != target and source in shown and target in shown and (source, target) not in edges:
            edges.append((source, target))
    layers = _layers(nodes, edges)
    at = _place(nodes, edges, layers)
    width = max((x + w for x, _, w in at.values()), default=0) + MARGIN
    height = max((y for _, y, _ in at.values()), default=0) + NODE_H + MARGIN
    parts = []
    for source, target in edges:
        sx, sy, sw = at[source]
        tx, ty, tw = at[target]
        x1, y1, x2, y2 = sx + sw / 2, sy + NODE_H, tx + tw / 2, ty
        bend = (y2 - y1) / 2
        parts.append(f'<path class="graph-edge" d="M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + bend:.1f} '
                     f'{x2:.1f},{y2 - bend:.1f} {x2:.1f},{y2:.1f}"/>')
    for n in nodes:
        x, y, w = at[n["id"]]
        end = n["kind"] != "op"
        style = "" if end else f' style="fill:{colour(n["dialect"])}"'
        label = n["label"] + (f" (+{n['children']})" if n["children"] else "")
        middle = x + w / 2
        parts.append(f'<g class="graph-node{" graph-end" if end else ""}"><title>{escape(n["op"] or n["label"])}: '
                     f'{escape(n["type"])}</title><rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{NODE_H}" '
                     f'rx="{NODE_H / 2 if end else 4}"{style}/><text x="{middle:.1f}" y="{y + 15}">{escape(label)}'
                     f'</text><text class="graph-type" x="{middle:.1f}" y="{y + 28}">{escape(_clip(n["type"], 30))}'
                     '</text></g>')
    return (f'<p class="muted">@{escape(str(graph["function"]))} at the {escape(str(level))} level: '
            f'{graph["ops"]} ops ({len(nodes)} nodes, {len(edges)} edges{"; " + note if note else ""}); an op with '
            f'regions is one node (+N: the ops inside).</p><div class="graph-scroll"><svg class="graph" '
            f'xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}">{"".join(parts)}</svg></div>')


def _width(n: dict) -> float:
    return max(56.0, max(len(n["label"]) + (4 if n["children"] else 0), min(len(n["type"]), 30) * 0.85) * CHAR + 16)


def _layers(nodes: list, edges: list) -> dict:
    """node id -> layer: inputs at 0, each op one below the deepest op it reads, outputs last."""
    preds: dict = {}
    for s, t in edges:
        preds.setdefault(t, []).append(s)
    layer: dict = {}
    for n in nodes:           # program order: what an op reads comes before it
        if n["kind"] == "input":
            layer[n["id"]] = 0
        elif n["kind"] == "op":
            layer[n["id"]] = 1 + max((layer.get(p, 0) for p in preds.get(n["id"], [])), default=0)
    last = max(layer.values(), default=0) + 1
    for n in nodes:
        if n["kind"] == "output":
            layer[n["id"]] = last
    return layer


def _place(nodes: list, edges: list, layer: dict) -> dict:
    """node id -> (x, y, width), each layer ordered by its nodes' predecessors and centred."""
    preds: dict = {}
    for s, t in edges:
        preds.setdefault(t, []).append(s)
    rows: dict = {}
    for n in nodes:
        rows.setdefault(layer[n["id"]], []).append(n)
    at: dict = {}
    centre: dict = {}
    widths = {}
    for index in sorted(rows):
        row = rows[index]
        row.sort(key=lambda n: sum(centre[p] for p in preds.get(n["id"], []) if p in centre)
                 / max(1, sum(1 for p in preds.get(n["id"], []) if p in centre)) if preds.get(n["id"]) else 0)
        x = MARGIN
        for n in row:
            w = _width(n)
            at[n["id"]] = (x, MARGIN + index * (NODE_H + LAYER_GAP), w)
            centre[n["id"]] = x + w / 2
            x += w + NODE_GAP
        widths[index] = x - NODE_GAP
    full = max(widths.values(), default=0)
    for index, row in rows.items():
        shift = (full - widths[index]) / 2
        for n in row:
            x, y, w = at[n["id"]]
            at[n["id"]] = (x + shift, y, w)
    return at


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"
