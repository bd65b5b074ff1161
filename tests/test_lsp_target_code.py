"""Each target's code in the language server: the pipeline command's `targets` and the dispatch
section of hover, end to end through the real server."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from mlirtext.analysis.target_code import available_targets
from tests.lsp_support import ROOT, SERVER, open_and_wait, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

MLP = (ROOT / "examples" / "mlp_stablehlo.mlir").read_text()
URI = "file:///tmp/targets_mlp.mlir"
GPU = [t for t in ("cuda", "rocm", "vulkan-spirv", "opencl-spirv") if t in available_targets()]


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(capabilities=T.ClientCapabilities()))
    assert list(await open_and_wait(lsp_client, URI, MLP)) == []
    yield
    await lsp_client.shutdown_session()


async def hover(client, needle: str, nth: int = 0, delta: int = 3) -> str:
    result = await client.text_document_hover_async(T.HoverParams(
        text_document=T.TextDocumentIdentifier(uri=URI), position=position_of(MLP, needle, delta, nth)))
    return result.contents.value if result else ""


async def pipeline(client, *args):
    return await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.pipeline", arguments=[URI, *args]))


async def test_hover_on_a_dispatch_op_links_to_its_code_then_names_its_kernel(client: LanguageClient):
    text = await hover(client, "stablehlo.maximum")
    assert text.startswith("**stablehlo.maximum**")
    # Before the pipeline command compiled @mlp: no note about it, the link opens the view that compiles it.
    assert "not computed" not in text and "Dispatch" not in text
    assert "[Every level and the target code of @mlp in the pipeline view](command:mlirtext.showPipeline?" in text
    await pipeline(client, "mlp")
    text = ""
    for _ in range(100):   # the next level may still be lowering
        text = await hover(client, "stablehlo.maximum")
        if "**Next level**" in text:
            break
    assert "**Dispatch 0 of @mlp**: kernel `mlp_dispatch_0` (targets: llvm-cpu)" in text
    assert "llvm-cpu (" in text and "entry `mlp_dispatch_0`" in text
    assert "```llvm" not in text   # the kernel's code is in the pipeline view's target column
    if GPU:
        assert f"**Dispatch 1 of @mlp**: kernel `mlp_dispatch_1` (targets: {', '.join(GPU)})" in text
    # The next level first (short), then the dispatch, then the link to the rest.
    assert text.index("**Next level**") < text.index("**Dispatch") < text.index("(command:mlirtext.showPipeline?")
    # The second matmul, and a value (no section).
    assert "**Dispatch 2 of @mlp**: kernel `mlp_dispatch_2`" in await hover(client, "stablehlo.dot_general", 1)
    value = await hover(client, "%h =", delta=1)
    assert value.startswith("`%h`") and "Dispatch" not in value and "command:" not in value


async def test_pipeline_answers_each_targets_kernels(client: LanguageClient):
    result = await pipeline(client, "mlp")
    assert result["error"] is None
    assert [t["target"] for t in result["targets"]] == list(available_targets())
    assert "define" in result["target"]   # the field old clients read: the llvm level's LLVM IR
    lines = MLP.split("\n")
    dots = [i for i, l in enumerate(lines) if "stablehlo.dot_general" in l]
    assert [d["name"] for d in result["dispatches"]][:1] == ["mlp_dispatch_0"]
    assert result["dispatches"][0]["lines"] == [dots[0]]
    cpu = result["targets"][0]
    assert cpu["target"] == "llvm-cpu" and cpu["language"] == "llvm" and cpu["error"] is None
    kernel = cpu["kernels"][0]
    assert kernel["name"] == "mlp_dispatch_0" and kernel["dispatch"] == 0 and kernel["entry"] == "mlp_dispatch_0"
    assert kernel["code"].startswith("define void @mlp_dispatch_0(") and kernel["size"] > 0
    assert kernel["implementation"].startswith("micro-kernel") and dots[0] in kernel["lines"]
    for entry in result["targets"][1:]:
        assert entry["error"] is None, entry
        assert [k["name"] for k in entry["kernels"]] == [f"mlp_dispatch_{i}" for i in range(4)]
        assert all(k["threads"] >= 1 and k["size"] > 0 and k["code"] for k in entry["kernels"])
        assert entry["kernels"][1]["threads"] == 64


async def test_pipeline_takes_a_list_of_targets(client: LanguageClient):
    result = await pipeline(client, "mlp", None, ["vulkan-spirv", "tpu"])
    assert [t["target"] for t in result["targets"]] == ["vulkan-spirv", "tpu"]
    assert result["targets"][1]["error"] == "unknown target 'tpu' (targets: llvm-cpu, cuda, rocm, vulkan-spirv, opencl-spirv)"
    if "vulkan-spirv" in GPU:
        assert 'OpEntryPoint GLCompute %main "mlp_dispatch_0"' in result["targets"][0]["kernels"][0]["code"]
    else:
        assert "spirv-as not found" in result["targets"][0]["error"]
    assert (await pipeline(client, "mlp", None, 7)) == {
        "error": 'targets must be a list of target names, e.g. ["llvm-cpu", "cuda"]'}
    # The whole module (no function): the same kernels, lines in the document.
    whole = await pipeline(client, None, 0, ["llvm-cpu"])
    assert [k["name"] for k in whole["targets"][0]["kernels"]] == ["mlp_dispatch_0", "mlp_dispatch_2"]
    # (the last add is the second matmul's epilogue)
    last_add = next(i for i, l in enumerate(MLP.split("\n")) if "%y = stablehlo.add" in l)
    assert last_add in whole["targets"][0]["kernels"][1]["lines"]


async def test_target_code_command_alone_and_a_pipeline_without_targets(client: LanguageClient):
    """The pipeline view asks for the levels without targets (fast), then for the targets alone."""
    async def target_code(*args):
        return await client.workspace_execute_command_async(T.ExecuteCommandParams(
            command="mlirtext.targetCode", arguments=[URI, *args]))
    levels_only = await pipeline(client, "mlp", None, [])
    assert levels_only["error"] is None and len(levels_only["levels"]) == 5
    assert levels_only["targets"] == [] and levels_only["dispatches"] == []
    alone = await target_code("mlp")
    assert alone["error"] is None and [t["target"] for t in alone["targets"]] == list(available_targets())
    full = await pipeline(client, "mlp")
    assert alone["targets"] == full["targets"] and alone["dispatches"] == full["dispatches"]
    assert (await target_code("nope"))["error"] == "no function named @nope in /tmp/targets_mlp.mlir"
