"""The pass explorer (`analysis/pass_steps.py`, `analysis/pass_explorer.py`): every pass of a
lowering as a step, diffs of ops matched by origin, search across steps; and `mlirtext opt
--diff` / `--explain`."""
from __future__ import annotations

from pathlib import Path

import pytest

from mlirtext.analysis.pass_explorer import diff_steps, explain_table, inline_diff
from mlirtext.analysis.pass_steps import StepRecorder, explore, search_steps
from mlirtext.api import parse_and_verify
from mlirtext.cli import main
from mlirtext.ir.attributes import StringAttr
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

MLP = (Path(__file__).resolve().parent.parent / "examples" / "mlp_stablehlo.mlir").read_text()

# cse removes the second constant; canonicalize then has nothing to do
DUPLICATES = """\
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.constant dense<1.0> : tensor<4xf32>
  %b = arith.constant dense<1.0> : tensor<4xf32>
  %0 = arith.addf %x, %a : tensor<4xf32>
  %1 = arith.addf %0, %b : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""


def _module(text: str):
    result = parse_and_verify(text, "t.mlir")
    assert not result.diagnostics, result.diagnostics
    return result.module


@pytest.fixture(scope="module")
def mlp_steps():
    return explore(_module(MLP), "llvm")


def test_every_pass_is_a_step_with_level_time_and_op_counts(mlp_steps):
    levels, steps = mlp_steps
    assert [l.level for l in levels] == ["hlo", "tosa", "linalg", "loops", "llvm"]
    assert steps[0].pass_name is None and steps[0].level == "hlo" and not steps[0].changed
    # the steps are exactly the passes each level reports, in order
    assert [(s.level, s.pass_name) for s in steps[1:]] == [(l.level, name) for l in levels for name, _ in l.passes]
    for before, after in zip(steps, steps[1:]):
        assert after.ops_before == before.ops_after
        assert after.seconds >= 0
        assert after.changed == (after.text != before.text)
    # each level's last step is what the level shows
    last = {s.level: s for s in steps}
    assert all(last[l.level].text == l.text for l in levels)
    first = steps[1]
    assert first.pass_name == "convert-hlo-to-tosa" and first.changed
    assert first.ops_before == 10 and first.ops_after > first.ops_before


def test_a_conversion_shows_each_source_op_replaced_not_a_line_diff(mlp_steps):
    _, steps = mlp_steps
    diff = diff_steps(steps[0], steps[1])
    removed = sorted(c.name for c in diff.changes if c.kind == "removed")
    assert removed == sorted(["stablehlo.constant", "stablehlo.dot_general", "stablehlo.dot_general",
                              "stablehlo.broadcast_in_dim", "stablehlo.broadcast_in_dim", "stablehlo.add",
                              "stablehlo.add", "stablehlo.maximum"])
    added = [c for c in diff.changes if c.kind == "added"]
    assert {c.name for c in added} >= {"tosa.matmul", "tosa.add", "tosa.maximum"}
    # every added op says which source op it came from: the removed op of the same origin
    origins = {(c.before.origin.start, c.before.origin.end) for c in diff.changes if c.kind == "removed"}
    assert all((c.after.origin.start, c.after.origin.end) in origins for c in added)
    # the inline listing puts the removed stablehlo.maximum right before the tosa.maximum that replaced it
    listing = inline_diff(steps[1], diff)
    kinds = [(k, t.split("=")[-1].split()[0]) for k, t, _ in listing if "maximum" in t]
    assert kinds == [("removed", "stablehlo.maximum"), ("added", "tosa.maximum")]
    assert "stablehlo.maximum -> " not in diff.summary() and "tosa.matmul" in diff.summary()


def test_renumbered_values_are_not_changes_and_removed_ops_are(mlp_steps):
    _, steps = mlp_steps
    cse = next(s for s in steps if s.pass_name == "cse" and s.level == "tosa")
    diff = diff_steps(steps[cse.index - 1], cse)
    # cse drops duplicate constants; the ops after them are renumbered (%5 -> %4), not changed
    assert diff.count("removed") == cse.ops_before - cse.ops_after > 0
    assert diff.count("added") == 0
    assert all(c.kind in ("removed", "changed") for c in diff.changes)
    unchanged = next(s for s in steps if s.index and not s.changed)
    assert diff_steps(steps[unchanged.index - 1], unchanged).changes == []


def test_an_op_moved_by_a_pass_is_moved_not_removed_and_added():
    module = _module(DUPLICATES)
    recorder = StepRecorder()
    recorder.start(module)
    steps = recorder.steps
    # Move the first addf after the second (a "pass" done by hand), and record it as a step.
    block = module.regions[0].blocks[0].ops[0].regions[0].blocks[0]
    consts = [op for op in block.ops if op.name == "arith.constant"]
    b = consts[1]
    block.ops.remove(b)
    block.ops.insert(0, b)
    recorder.record("by-hand", module)
    diff = diff_steps(steps[0], steps[1])
    assert [(c.kind, c.name) for c in diff.changes] == [("moved", "arith.constant")]


def test_search_finds_a_text_at_every_step_that_has_it(mlp_steps):
    _, steps = mlp_steps
    found = search_steps(steps, "TOSA.MATMUL")
    assert {i for i, _, _ in found} == {s.index for s in steps if s.level == "tosa" and (s.changed or s.index == 1)}
    assert all("tosa.matmul" in line for _, _, line in found)
    assert search_steps(steps, "") == [] and search_steps(steps, "no such op") == []


def test_the_recorder_works_as_any_instrumentation():
    module = _module(DUPLICATES)
    recorder = StepRecorder()
    assert PassManager(parse_pipeline("canonicalize,cse"), instrumentations=[recorder]).run(module) == []
    assert [s.pass_name for s in recorder.steps] == [None, "canonicalize", "cse"]
    table = explain_table(recorder.steps)
    assert "6 -> 5" in table and "arith.constant -> nothing; 1 changed" in table  # (the second addf now uses %a)
    assert "2 passes, 1 changed the IR" in table


def test_opt_diff_prints_unified_diffs_of_the_passes_that_changed(tmp_path, capsys):
    path = tmp_path / "d.mlir"
    path.write_text(DUPLICATES)
    assert main(["opt", str(path), "--canonicalize", "--cse", "--print-ir-after-all", "--diff",
                 "-o", str(tmp_path / "out.mlir")]) == 0
    err = capsys.readouterr().err
    assert "IR Diff After CSE (cse)" in err and "Canonicalizer" not in err
    assert "-    %b = arith.constant dense<1.0> : tensor<4xf32>" in err
    assert "+++ after CSE (cse)" in err


def test_opt_explain_prints_the_table(tmp_path, capsys):
    path = tmp_path / "mlp.mlir"
    path.write_text(MLP)
    assert main(["opt", str(path), "--lower-to=linalg", "--explain", "-o", str(tmp_path / "out.mlir")]) == 0
    err = capsys.readouterr().err
    rows = [l for l in err.splitlines() if l[:1].isdigit()]
    assert rows[0].split()[1:3] == ["convert-hlo-to-tosa", "tosa"]
    assert "10 -> 32" in rows[0] and "tosa.matmul" in rows[0]
    assert "(unchanged)" in err and "passes," in err


@pytest.mark.parametrize("flags, message", [
    (["--cse", "--diff"], "--diff shows the dumps after passes"),
    (["--diff", "--print-ir-after-all"], "--diff shows what passes do"),
    (["--explain"], "--explain shows what passes do"),
])
def test_opt_diff_and_explain_need_what_they_show(tmp_path, capsys, flags, message):
    path = tmp_path / "d.mlir"
    path.write_text(DUPLICATES)
    assert main(["opt", str(path), *flags]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_the_pipeline_command_gives_every_step_with_its_inline_diff_in_document_lines():
    from mlirtext.analysis import commands
    from mlirtext.analysis.document import Document
    text = "// the MLP\n" + MLP
    doc = Document("file:///mlp.mlir", text, 1)
    result = commands.pipeline(doc, "mlp", targets=[])
    assert result["error"] is None
    steps = result["steps"]
    passes = [p["pass"] for l in result["levels"] for p in l["passes"]]
    assert [s["pass"] for s in steps] == [None, *passes]
    first, hlo_to_tosa = steps[0], steps[1]
    assert [l["text"] for l in first["lines"]] == result["levels"][0]["text"].rstrip("\n").split("\n")
    assert hlo_to_tosa["changed"] and hlo_to_tosa["counts"]["removed"] == 8
    lines = text.split("\n")
    maximum = lines.index(next(l for l in lines if "stablehlo.maximum" in l))
    marked = [(l["kind"], l["text"].split("=")[1].split()[0], l["origin"]) for l in hlo_to_tosa["lines"]
              if "maximum" in l["text"]]
    assert marked == [("removed", "stablehlo.maximum", maximum), ("added", "tosa.maximum", maximum)]
    unchanged = [s for s in steps[1:] if not s["changed"]]
    assert unchanged and all(s["lines"] == [] and s["counts"] == {} for s in unchanged)


def test_long_runs_of_unchanged_lines_are_cut_to_their_context_in_the_views_diffs(mlp_steps):
    from mlirtext.analysis.pass_explorer import CONTEXT_LINES, steps_json
    _, steps = mlp_steps
    whole = steps_json(steps, lambda span: span.start)
    cse = next(s for s in whole if s["pass"] == "cse" and s["level"] == "llvm")
    assert cse["changed"]
    skips = [l for l in cse["lines"] if l["kind"] == "skip"]
    assert skips and all(l["text"].endswith(" unchanged lines") and l["origin"] is None for l in skips)
    # every change is there, and no run of unchanged lines is longer than the two contexts (and one)
    step = steps[cse["index"]]
    diff = diff_steps(steps[cse["index"] - 1], step)
    shown = [l for l in cse["lines"] if l["kind"] not in ("", "skip")]
    assert len(shown) == len(diff.changes)
    run = longest = 0
    for l in cse["lines"]:
        run = run + 1 if l["kind"] == "" else 0
        longest = max(longest, run)
    assert longest <= 2 * CONTEXT_LINES + 1   # (one line is not skipped: the skip would take a line too)
    # the lines cut are counted: what is shown plus what is skipped is the whole listing
    skipped = sum(int(l["text"].split()[0]) for l in skips)
    assert len(cse["lines"]) - len(skips) + skipped == len(inline_diff(step, diff))
    # the input is whole
    assert not [l for l in whole[0]["lines"] if l["kind"] == "skip"]


def test_an_operand_that_now_comes_from_another_op_is_a_change_a_renumbering_is_not():
    numbered = ("func.func @a(%x: f32) -> f32 {\n  %0 = arith.addf %x, %x : f32\n  %1 = arith.addf %x, %x : f32\n"
                "  %2 = arith.mulf %0, %1 : f32\n  %3 = arith.subf %2, %x : f32\n  return %3 : f32\n}\n")
    module = _module(numbered)
    recorder = StepRecorder()
    assert PassManager(parse_pipeline("cse"), instrumentations=[recorder]).run(module) == []
    before, after = recorder.steps
    diff = diff_steps(before, after)
    # cse drops the second addf: the mulf now takes the first twice (a change); the subf, which
    # the printer may renumber, and the return are not changes
    assert sorted((c.kind, c.name) for c in diff.changes) == [("changed", "arith.mulf"), ("removed", "arith.addf")]


def test_a_pass_that_replaced_nothing_repeats_the_step_before_and_an_edit_in_place_does_not():
    recorder = StepRecorder()
    module = _module(DUPLICATES)
    recorder.start(module)
    cse = PassManager(parse_pipeline("cse"), instrumentations=[recorder])
    assert cse.run(module) == [] and recorder.steps[-1].changed
    assert PassManager(parse_pipeline("canonicalize"), instrumentations=[recorder]).run(module) == []
    unchanged = recorder.steps[-1]
    assert not unchanged.changed and unchanged.text is recorder.steps[-2].text   # not printed again
    # A level's text is the last step's while no pass has run since.
    assert recorder.printed(module)[0] is unchanged.text
    # An attribute replaced in place (no op replaced) is a change.
    add = next(op for op in module.walk() if op.name == "arith.addf")
    add.attributes["fastmath"] = StringAttr("fast")
    recorder.record("edit", module)
    assert recorder.steps[-1].changed and "fast" in recorder.steps[-1].text
