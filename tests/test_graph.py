"""The graph view's data: a function as a data-flow graph (`analysis/graph.py`) and the request
that places it in the document at each level, with dispatches and profile times
(`analysis/graph_request.py`)."""
from __future__ import annotations

import json

import pytest

from mlirtext.analysis.document import Document
from mlirtext.analysis.graph_request import graph_command, profile_times
from tests.lsp_support import ROOT

MLP = (ROOT / "examples" / "mlp_stablehlo.mlir").read_text()
DENSE = (ROOT / "examples" / "dense_linalg.mlir").read_text()


def graph(text: str, function: str, levels=None, **kw) -> dict:
    return graph_command(Document("file:///tmp/g.mlir", text), function, levels, **kw)


def by_op(level: dict, name: str) -> list:
    return [n for n in level["nodes"] if n["op"] == name]


def edges_between(level: dict, source: str, target: str) -> list:
    return [e for e in level["edges"] if e["source"] == source and e["target"] == target]


def line_of(text: str, needle: str) -> int:
    return text[:text.index(needle)].count("\n")


def test_the_mlp_at_its_own_level_has_its_ops_values_arguments_and_result():
    result = graph(MLP, "mlp")
    assert result["error"] is None and result["available"] == ["hlo", "tosa", "linalg", "loops", "llvm"]
    [level] = result["levels"]
    assert level["level"] == "hlo" and level["source"] and level["ops"] == 8
    inputs = [n for n in level["nodes"] if n["kind"] == "input"]
    outputs = [n for n in level["nodes"] if n["kind"] == "output"]
    assert [n["label"] for n in inputs] == ["%x", "%w1", "%b1", "%w2", "%b2"]
    assert [n["type"] for n in outputs] == ["tensor<4x4xf32>"] and not by_op(level, "func.return")
    first_dot, second_dot = by_op(level, "stablehlo.dot_general")
    assert first_dot["range"][:2] == [line_of(MLP, "%0 = stablehlo.dot_general"), 2]
    assert first_dot["dialect"] == "stablehlo" and first_dot["label"] == "dot_general"
    # %x and %w1 flow into the first matmul; %h (the relu) into the second; %y is the result.
    assert [e["value"] for e in level["edges"] if e["target"] == first_dot["id"]] == ["%x", "%w1"]
    relu = by_op(level, "stablehlo.maximum")[0]
    assert [e["value"] for e in edges_between(level, relu["id"], second_dot["id"])] == ["%h"]
    last_add = by_op(level, "stablehlo.add")[1]
    assert edges_between(level, last_add["id"], outputs[0]["id"])[0]["value"] == "%y"
    assert all(n["parent"] is None and n["children"] == 0 for n in level["nodes"])


def test_each_op_carries_the_dispatch_it_went_into_and_a_fused_producer_its_consumers():
    result = graph(MLP, "mlp")
    names = {d["id"]: d for d in result["dispatches"]}
    assert sorted(names) == [0, 1, 2, 3] and result["dispatch_error"] is None
    level = result["levels"][0]
    first_dot, second_dot = by_op(level, "stablehlo.dot_general")
    assert "linalg.batch_matmul" in names[first_dot["dispatch"]]["ops"]
    assert first_dot["dispatch"] != second_dot["dispatch"] and not first_dot["fused"]
    assert names[first_dot["dispatch"]]["lines"] == [line_of(MLP, "%0 = stablehlo.dot_general")]
    # The bias add and its broadcast went into the relu's elementwise kernel.
    relu = by_op(level, "stablehlo.maximum")[0]
    add, broadcast = by_op(level, "stablehlo.add")[0], by_op(level, "stablehlo.broadcast_in_dim")[0]
    assert add["dispatch"] == broadcast["dispatch"] == relu["dispatch"] and add["fused"] and broadcast["fused"]
    assert by_op(level, "stablehlo.constant")[0]["dispatch"] is None


def test_a_region_is_a_group_and_a_captured_value_crosses_into_it():
    [level] = graph(DENSE, "dense")["levels"]
    generic = by_op(level, "linalg.generic")[0]
    inside = [n for n in level["nodes"] if n["parent"] == generic["id"]]
    assert [n["op"] for n in inside] == ["arith.addf", "arith.maximumf", "linalg.yield"]
    assert generic["children"] == 3
    # (the matmul's body is a group too)
    assert [n["op"] for n in level["nodes"] if n["parent"] == by_op(level, "linalg.matmul")[0]["id"]] == [
        "arith.mulf", "arith.addf", "linalg.yield"]
    # %zero is defined outside the region and read inside it; the block's own arguments are not edges.
    zero = by_op(level, "arith.constant")[0]
    addf, maximum, _ = inside
    assert [e["value"] for e in edges_between(level, zero["id"], maximum["id"])] == ["%zero"]
    assert not [e for e in level["edges"] if e["target"] == addf["id"]]
    assert [e["value"] for e in edges_between(level, addf["id"], maximum["id"])] == ["%s"]


def test_a_lowered_level_places_each_op_at_the_source_op_it_came_from():
    result = graph(MLP, "mlp", ["source", "linalg"])
    assert [l["level"] for l in result["levels"]] == ["hlo", "linalg"]
    assert [l["source"] for l in result["levels"]] == [True, False]
    linalg = result["levels"][1]
    matmuls = by_op(linalg, "linalg.batch_matmul")
    assert len(matmuls) == 2
    assert [m["range"][0] for m in matmuls] == [line_of(MLP, "%0 = stablehlo.dot_general"),
                                                line_of(MLP, "%3 = stablehlo.dot_general")]
    assert all(m["dispatch"] is not None for m in matmuls)
    assert any(n["parent"] is not None for n in linalg["nodes"])      # generic bodies, as groups
    # Lowered only as far as asked: one level at the bottom is enough to stop.
    assert [l["level"] for l in graph(MLP, "mlp", ["tosa"])["levels"]] == ["tosa"]


def test_a_profile_gives_each_source_op_its_share_of_the_dispatch_times(tmp_path):
    dot_line = line_of(MLP, "%0 = stablehlo.dot_general") + 1
    relu_line = line_of(MLP, "%h = stablehlo.maximum") + 1
    add_line = line_of(MLP, "%2 = stablehlo.add") + 1
    trace = {"function": "mlp", "device": "local-sync", "dispatches": [
        {"index": 0, "kernel": "mlp_dispatch_0", "seconds": 0.003,
         "sources": [{"op": "stablehlo.dot_general", "at": f"mlp.mlir:{dot_line}:3"}]},
        {"index": 1, "kernel": "mlp_dispatch_1", "seconds": 0.002,
         "sources": [{"op": "stablehlo.add", "at": f"mlp.mlir:{add_line}:3"},
                     {"op": "stablehlo.maximum", "at": f"mlp.mlir:{relu_line}:3"}]}]}
    (tmp_path / "dispatches.json").write_text(json.dumps(trace))
    result = graph(MLP, "mlp", profile=str(tmp_path))
    assert result["profile"] == {"function": "mlp", "device": "local-sync", "seconds": pytest.approx(0.005),
                                 "dispatches": 2}
    level = result["levels"][0]
    assert by_op(level, "stablehlo.dot_general")[0]["seconds"] == pytest.approx(0.003)
    assert by_op(level, "stablehlo.maximum")[0]["seconds"] == pytest.approx(0.001)
    assert by_op(level, "stablehlo.dot_general")[1]["seconds"] is None
    assert profile_times({"dispatches": []})[0]["seconds"] == 0.0


def test_bad_requests_get_one_line_answers(tmp_path):
    assert graph(MLP, "nope")["error"] == "no function named @nope in file:///tmp/g.mlir"
    assert graph(MLP, "mlp", ["hlo", "vector"])["error"].startswith("unknown level 'vector' (levels: source, hlo")
    assert graph(MLP, "mlp", "hlo")["error"].startswith("levels must be a list")
    assert "not a dispatch trace" in graph(MLP, "mlp", profile=str(tmp_path))["error"]
