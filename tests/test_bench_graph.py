"""The bench report's graph (`bench/graph_svg.py`): the function's data-flow graph as a static
SVG, laid out in layers."""
from __future__ import annotations

import re

from mlirtext import api
from mlirtext.bench.graph_svg import MAX_NODES, graph_svg
from tests.lsp_support import ROOT

MLP = (ROOT / "examples" / "mlp_stablehlo.mlir").read_text()
DENSE = (ROOT / "examples" / "dense_linalg.mlir").read_text()


def function(text: str, name: str):
    module = api.parse_and_verify(text, "f.mlir").module
    return next(op for op in module.walk() if op.sym_name == name)


def nodes(svg: str) -> dict:
    """label -> [(x, y)] of each node drawn."""
    out: dict = {}
    for x, y, label in re.findall(r'<rect x="([\d.]+)" y="(\d+)"[^>]*/><text [^>]*>([^<]*)</text>', svg):
        out.setdefault(label, []).append((float(x), int(y)))
    return out


def test_the_mlp_is_drawn_in_layers_from_its_arguments_to_its_result():
    svg = graph_svg(function(MLP, "mlp"), "hlo", lambda d: "#abcdef")
    at = nodes(svg)
    assert sorted(at) == sorted(["%x", "%w1", "%b1", "%w2", "%b2", "constant", "dot_general", "broadcast_in_dim",
                                 "add", "maximum", "result 0"])
    assert len(at["dot_general"]) == 2 and len(at["add"]) == 2
    y = {label: min(p[1] for p in points) for label, points in at.items()}
    assert y["%x"] < y["dot_general"] < y["add"] < y["maximum"] < y["result 0"]
    assert max(p[1] for p in at["dot_general"]) > y["maximum"]          # the second matmul reads the relu
    assert svg.count('class="graph-edge"') == 13 and svg.count('style="fill:#abcdef"') == 8
    assert "@mlp at the hlo level: 8 ops (14 nodes, 13 edges)" in svg


def test_an_op_with_regions_is_one_node_with_its_count():
    svg = graph_svg(function(DENSE, "dense"), "linalg", lambda d: "red")
    at = nodes(svg)
    assert "generic (+3)" in at and "matmul (+3)" in at and "addf" not in at
    # %zero is read by the fill and, inside the generic, by the maximumf: one edge to each node.
    assert svg.count('class="graph-edge"') == 10


def test_a_large_function_draws_its_first_nodes_with_a_note():
    body = "".join(f"  %v{i + 1} = stablehlo.add %v{i}, %v{i} : tensor<2xf32>\n" for i in range(MAX_NODES + 20))
    text = (f"func.func @f(%v0: tensor<2xf32>) -> tensor<2xf32> {{\n{body}"
            f"  return %v{MAX_NODES + 20} : tensor<2xf32>\n}}\n")
    svg = graph_svg(function(text, "f"), "hlo", lambda d: "red")
    assert f"the first {MAX_NODES} of {MAX_NODES + 22} nodes" in svg
    assert svg.count("<rect") == MAX_NODES
