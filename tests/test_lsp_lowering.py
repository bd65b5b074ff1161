"""Lowered forms in hover, code actions (lower, fold) and the run / pipeline commands,
end to end through the real server."""
from __future__ import annotations

import json
import re
from urllib.parse import unquote

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.lsp_support import ROOT, SERVER, as_code_action, offset_at, open_and_wait, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

MLP = (ROOT / "examples" / "mlp_stablehlo.mlir").read_text()

TWO_FUNCS = """\
// A comment before the function: the lowering edit must leave it alone.
func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<2.0> : tensor<4xf32>
  %0 = stablehlo.multiply %x, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A comment between the functions.
func.func @other(%x: tensor<4xi32>) -> tensor<4xi32> {
  %c1 = arith.constant dense<1> : tensor<4xi32>
  %c2 = arith.constant dense<2> : tensor<4xi32>
  %s = arith.addi %c1, %c2 : tensor<4xi32>
  %0 = arith.addi %x, %s : tensor<4xi32>
  return %0 : tensor<4xi32>
}
// trailing comment
"""

applied: list = []


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    @lsp_client.feature(T.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: T.ApplyWorkspaceEditParams):
        applied.append(params.edit)
        return T.ApplyWorkspaceEditResult(applied=True)

    await lsp_client.initialize_session(T.InitializeParams(capabilities=T.ClientCapabilities(
        window=T.WindowClientCapabilities(work_done_progress=True),
        workspace=T.WorkspaceClientCapabilities(apply_edit=True))))
    yield
    await lsp_client.shutdown_session()


def apply(text: str, edits: list[T.TextEdit]) -> str:
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset_at(text, e.range.start)] + e.new_text + text[offset_at(text, e.range.end):]
    return text


async def hover(client, uri, pos) -> str:
    result = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=pos))
    return result.contents.value if result else ""


async def test_hover_leads_with_the_summary_and_the_next_level(client: LanguageClient):
    uri = "file:///tmp/mlp.mlir"
    assert list(await open_and_wait(client, uri, MLP)) == []
    pos = position_of(MLP, "stablehlo.add %0", 2)
    text = ""
    for _ in range(100):  # the first hover may come before the levels are done
        text = await hover(client, uri, pos)
        if "(then linalg, loops, llvm)" in text:
            break
    # The op's summary and types, then what it becomes one level down (its ops alone), then the link.
    assert text.startswith("**stablehlo.add**: Elementwise add.\n\noperands: `tensor<4x16xf32>`")
    next_level = text.index("**Next level**: tosa (from hlo)\n```mlir\n%2 = tosa.add %0, %1 :")
    link = text.index("[Every level and the target code of @mlp in the pipeline view](command:mlirtext.showPipeline?")
    assert text.index("results: `tensor<4x16xf32>`") < next_level < link
    assert text.rstrip().endswith("(then linalg, loops, llvm)")
    # The link names the function, the op's line and the document, for the pipeline view to mark it.
    arguments = re.search(r"\(command:mlirtext\.showPipeline\?([^ )]+)", text).group(1)
    assert json.loads(unquote(arguments)) == ["mlp", pos.line, uri]
    # The further levels and the target code are behind the link, not in the box.
    for behind in ("linalg.generic", "scf.for", "llvm.fadd", "not computed", "Dispatch"):
        assert behind not in text, behind
    # A second op with the same text (another add on the same types) is served from the cache.
    text2 = await hover(client, uri, position_of(MLP, "stablehlo.add %3", 2))
    assert "**Next level**: tosa" in text2 and "(then linalg, loops, llvm)" in text2


async def code_actions(client, uri, text, needle):
    pos = position_of(text, needle)
    found = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=T.Range(start=pos, end=pos),
        context=T.CodeActionContext(diagnostics=[])))
    return [as_code_action(a) for a in found]


async def test_lower_function_action_replaces_exactly_the_function(client: LanguageClient):
    uri = "file:///tmp/two.mlir"
    assert list(await open_and_wait(client, uri, TWO_FUNCS)) == []
    actions = await code_actions(client, uri, TWO_FUNCS, "stablehlo.multiply")
    titles = [a.title for a in actions]
    assert "Lower @scale to tosa (next level)" in titles and "Lower @scale to loops" in titles
    assert "Fold constants in @scale" in titles and "Lower module to linalg" in titles
    action = next(a for a in actions if a.title == "Lower @scale to linalg")
    applied.clear()
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command=action.command.command, arguments=action.command.arguments))
    assert result["applied"] is True
    edits = applied[-1].changes[uri]
    assert len(edits) == 1
    new = apply(TWO_FUNCS, edits)
    start = TWO_FUNCS.index("func.func @scale")
    end = TWO_FUNCS.index("}\n", start) + 1
    assert new[:start] == TWO_FUNCS[:start]               # byte-identical before ...
    assert new.endswith(TWO_FUNCS[end:])                   # ... and after the function
    lowered = new[start:len(new) - len(TWO_FUNCS[end:])]
    assert "linalg.generic" in lowered and "stablehlo" not in lowered and "func.func @scale" in lowered


async def test_fold_constants_action(client: LanguageClient):
    uri = "file:///tmp/two.mlir"
    actions = await code_actions(client, uri, TWO_FUNCS, "%s = arith.addi")
    action = next(a for a in actions if a.title == "Fold constants in @other")
    applied.clear()
    await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command=action.command.command, arguments=action.command.arguments))
    new = apply(TWO_FUNCS, applied[-1].changes[uri])
    assert "dense<3>" in new and "%c1" not in new
    assert new.startswith(TWO_FUNCS[:TWO_FUNCS.index("func.func @other")])


async def test_run_command_with_inputs_and_random_inputs(client: LanguageClient):
    uri = "file:///tmp/two.mlir"
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.run", arguments=[uri, "scale", ["4xf32=1 2 3 4"]]))
    assert result["outputs"] == ["4xf32=2 4 6 8"], result
    assert result["seconds"] >= 0
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.run", arguments=[uri, "other"]))
    assert len(result["inputs"]) == 1 and result["outputs"][0].startswith("4xi32=")
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.run", arguments=[uri, "nope"]))
    assert "no function named @nope" in result["error"]


async def test_pipeline_command(client: LanguageClient):
    uri = "file:///tmp/mlp.mlir"
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.pipeline", arguments=[uri, "mlp"]))
    assert result["error"] is None, result["error"]
    levels = [l["level"] for l in result["levels"]]
    assert levels == ["hlo", "tosa", "linalg", "loops", "llvm"]
    assert result["levels"][0]["op_counts"]["stablehlo"]["stablehlo.add"] == 2
    assert "llvm" in result["levels"][-1]["op_counts"]
    assert any(p["pass"] == "convert-hlo-to-tosa" for p in result["levels"][1]["passes"])
    assert all(p["seconds"] >= 0 for l in result["levels"] for p in l["passes"])


async def test_run_command_on_a_native_device_compiles_once(client: LanguageClient):
    uri = "file:///tmp/two.mlir"

    async def run(device):
        return await client.workspace_execute_command_async(T.ExecuteCommandParams(
            command="mlirtext.run", arguments=[uri, "scale", ["4xf32=1 2 3 4"], 0, device]))
    first = await run("local-sync")
    assert first["outputs"] == ["4xf32=2 4 6 8"] and first["device"] == "local-sync", first
    assert first["compile_seconds"] > 0 and first["calls"] >= 1 and "warm-up" in first["timing"]
    again = await run("local-task")   # the same function text: the module file is cached
    assert again["outputs"] == ["4xf32=2 4 6 8"] and again["device"] == "local-task"
    assert again["compile_seconds"] is None
    assert (await run("reference"))["compile_seconds"] is None
    bad = await run("tpu")
    assert bad == {"error": "unknown device 'tpu' (devices: reference, local-sync, local-task)"}


async def test_run_devices_compares_each_device_with_the_reference(client: LanguageClient):
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.runDevices", arguments=["file:///tmp/mlp.mlir", "mlp", None, 3]))
    runs = {r["device"]: r for r in result["runs"]}
    assert list(runs) == ["reference", "local-sync", "local-task"], result
    assert len(result["inputs"]) == 5
    for device in ("local-sync", "local-task"):
        r = runs[device]
        assert r["error"] is None and r["match"] is True and 0 <= r["max_diff"] < 1e-5, r
        assert r["seconds"] > 0 and r["outputs"][0].startswith("4x4xf32=")
    assert runs["reference"]["match"] is None and runs["reference"]["seconds"] > 0
    # A function that does not compile for llvm-cpu: the reference still runs, the others say why.
    text = ("func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
            "  %0 = stablehlo.add %x, %x : tensor<?xf32>\n  return %0 : tensor<?xf32>\n}\n")
    await open_and_wait(client, "file:///tmp/dynamic.mlir", text)
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.runDevices", arguments=["file:///tmp/dynamic.mlir", "f", ["3xf32=1 2 3"]]))
    runs = {r["device"]: r for r in result["runs"]}
    assert runs["reference"]["outputs"] == ["3xf32=2 4 6"], result
    assert runs["local-sync"]["error"], result


async def test_profile_command_gives_each_dispatch_and_source_op_its_share(client: LanguageClient):
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.profile", arguments=["file:///tmp/mlp.mlir", "mlp", None, 0, "local-sync"]))
    assert "error" not in result, result
    assert result["device"] == "local-sync" and result["calls"] >= 1 and len(result["rows"]) == 2   # (two matmuls)
    assert sum(r["share"] for r in result["rows"]) + result["host_share"] == pytest.approx(1.0)
    assert result["ops"] and all(op["dispatches"] and 0 < op["share"] <= 1 for op in result["ops"])
    bad = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.profile", arguments=["file:///tmp/mlp.mlir", "mlp", None, 0, "reference"]))
    assert "native code" in bad["error"]
    none = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.profile", arguments=[]))
    assert "error" in none


async def test_pipeline_gives_each_printed_op_its_source_line(client: LanguageClient):
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.pipeline", arguments=["file:///tmp/mlp.mlir", "mlp"]))
    source = MLP.split("\n")
    first_dot = next(i for i, l in enumerate(source) if "%0 = stablehlo.dot_general" in l)
    add = next(i for i, l in enumerate(source) if "%2 = stablehlo.add" in l)
    for level in result["levels"]:
        lines = level["text"].rstrip("\n").split("\n")
        assert len(level["origins"]) == len(lines), level["level"]
        from_source = [o for o in level["origins"] if o is not None]
        assert from_source and all(0 <= o < len(source) for o in from_source)
        assert first_dot in from_source, level["level"]
        # From linalg on, elementwise fusion merges the add into the maximum after it: one origin.
        assert (add in from_source) == (level["level"] in ("hlo", "tosa")), level["level"]
    hlo, tosa = result["levels"][0], result["levels"][1]
    for text, origin in zip(hlo["text"].split("\n"), hlo["origins"]):   # the source level maps onto itself
        if origin is not None:
            assert text.strip()[:20] == source[origin].strip()[:20]
    matmuls = [o for t, o in zip(tosa["text"].split("\n"), tosa["origins"]) if "tosa.matmul" in t]
    assert matmuls[0] == first_dot and len(matmuls) == 2
    # Lowered by the whole module too: offsets in the document, the same lines.
    whole = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.pipeline", arguments=["file:///tmp/mlp.mlir", None]))
    assert whole["levels"][1]["origins"] == tosa["origins"]


async def test_quick_fix_sets_the_inferred_result_type(client: LanguageClient):
    text = ("func.func @f(%x: tensor<2x3xf32>) {\n"
            "  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x2xf32>\n"
            "  return\n}\n")
    uri = "file:///tmp/quickfix.mlir"
    diagnostics = await open_and_wait(client, uri, text)
    assert "inferred type(s) 'tensor<3x2xf32>'" in diagnostics[0].message
    pos = position_of(text, "stablehlo.transpose")
    found = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=T.Range(start=pos, end=pos),
        context=T.CodeActionContext(diagnostics=list(diagnostics))))
    fix = next(a for a in found if isinstance(a, T.CodeAction) and a.kind == T.CodeActionKind.QuickFix)
    assert apply(text, fix.edit.changes[uri]) == text.replace("-> tensor<2x2xf32>", "-> tensor<3x2xf32>")


async def test_long_commands_report_progress(client: LanguageClient):
    client.progress_reports.clear()
    uri = "file:///tmp/mlp.mlir"
    await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.pipeline", arguments=[uri, None]))
    reports = [r for values in client.progress_reports.values() for r in values]
    assert any(isinstance(r, T.WorkDoneProgressBegin) and r.title == "Lowering pipeline" for r in reports)
    assert any(isinstance(r, T.WorkDoneProgressEnd) for r in reports)


async def test_cancelling_a_pipeline_stops_it(client: LanguageClient):
    import asyncio
    import time
    body = "".join(f"  %{i + 1} = stablehlo.add %{i}, %{i} : tensor<8x8xf32>\n" for i in range(40))
    text = "".join(f"func.func @f{k}(%0: tensor<8x8xf32>) -> tensor<8x8xf32> {{\n{body}"
                   f"  return %40 : tensor<8x8xf32>\n}}\n" for k in range(40))
    uri = "file:///tmp/cancel.mlir"
    assert list(await open_and_wait(client, uri, text)) == []
    client.progress_reports.clear()
    started = time.monotonic()
    future = client.protocol.send_request("workspace/executeCommand", T.ExecuteCommandParams(
        command="mlirtext.pipeline", arguments=[uri, None]), msg_id="pipeline-to-cancel")
    await asyncio.sleep(0.5)
    client.protocol.notify("$/cancelRequest", T.CancelParams(id="pipeline-to-cancel"))
    try:
        answer = await asyncio.wrap_future(future)
        assert answer["error"] == "cancelled"
    except Exception as e:  # noqa: BLE001 - an error response is also a fine answer to a cancel
        assert "cancel" in str(e).lower()
    # The worker stops at its next pass boundary and says so in its progress.
    for _ in range(200):
        ends = [r for values in client.progress_reports.values() for r in values
                if isinstance(r, T.WorkDoneProgressEnd)]
        if ends:
            break
        await asyncio.sleep(0.05)
    assert ends and ends[0].message == "cancelled"
    assert time.monotonic() - started < 20
    h = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=uri), position=position_of(text, "%3 =", 1)))
    assert "`%3`" in h.contents.value
