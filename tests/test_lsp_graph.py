"""The graph view's command (`mlirtext.graph`) through the real server: the graph at once,
then with the dispatches formed, and a one-line error for a bad request."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.lsp_support import ROOT, SERVER, open_and_wait

pytestmark = pytest.mark.asyncio(loop_scope="module")

MLP = (ROOT / "examples" / "mlp_stablehlo.mlir").read_text()
URI = "file:///tmp/graph_mlp.mlir"


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(capabilities=T.ClientCapabilities()))
    assert list(await open_and_wait(lsp_client, URI, MLP)) == []
    yield
    await lsp_client.shutdown_session()


async def graph(client, *args):
    return await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.graph", arguments=[URI, *args]))


async def test_the_graph_comes_first_then_with_its_dispatches(client: LanguageClient):
    first = await graph(client, "mlp", ["source", "linalg"], None, False)
    assert first["error"] is None and [l["level"] for l in first["levels"]] == ["hlo", "linalg"]
    assert first["dispatches"] == [] and all(n["dispatch"] is None for n in first["levels"][0]["nodes"])
    dot = next(n for n in first["levels"][0]["nodes"] if n["op"] == "stablehlo.dot_general")
    assert dot["range"][:2] == [MLP[:MLP.index("%0 = stablehlo.dot_general")].count("\n"), 2]
    second = await graph(client, "mlp", ["source"])
    assert len(second["dispatches"]) == 4
    dot = next(n for n in second["levels"][0]["nodes"] if n["op"] == "stablehlo.dot_general")
    assert dot["dispatch"] == 0


async def test_a_bad_request_gets_an_error(client: LanguageClient):
    assert (await graph(client, "nope"))["error"] == "no function named @nope in /tmp/graph_mlp.mlir"
    assert (await graph(client, "mlp", ["vector"]))["error"].startswith("unknown level 'vector'")
    result = await client.workspace_execute_command_async(T.ExecuteCommandParams(
        command="mlirtext.graph", arguments=["file:///tmp/unknown.mlir", "mlp"]))
    assert result["error"] == "unknown document 'file:///tmp/unknown.mlir'"
