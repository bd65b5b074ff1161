"""The editor's "find what broke", end to end through the real server: the code action on a function,
`mlirtext.bisect` with a fault injected (markers on the guilty op, a repro that replays it), and
"Reduce this failure" once a bisect found the lowering crashing."""
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from tests.lsp_support import ROOT, SERVER, as_code_action, open_and_wait, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROGRAM = """\
// two functions: the action is on the one under the cursor
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.sub %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = tosa.add %0, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = tosa.maximum %1, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
URI = "file:///tmp/debugging.mlir"


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(T.InitializeParams(capabilities=T.ClientCapabilities(
        window=T.WindowClientCapabilities(work_done_progress=True))))
    yield
    await lsp_client.shutdown_session()


async def actions_at(client, pos) -> dict:
    found = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=URI), range=T.Range(start=pos, end=pos),
        context=T.CodeActionContext(diagnostics=[])))
    return {a.title: a.command for a in map(as_code_action, found) if isinstance(a, T.CodeAction) and a.command}


async def execute(client, command: str, *args):
    return await client.workspace_execute_command_async(T.ExecuteCommandParams(command=command, arguments=list(args)))


async def test_the_action_is_offered_on_the_function_under_the_cursor(client: LanguageClient):
    assert list(await open_and_wait(client, URI, PROGRAM)) == []
    offered = await actions_at(client, position_of(PROGRAM, "tosa.add %0", 2))
    command = offered["Find where @f's numbers diverge"]
    assert (command.command, command.arguments) == ("mlirtext.findDivergence", ["f"])
    assert not any(title.startswith("Reduce") for title in offered)   # nothing crashed yet
    assert "Find where @g's numbers diverge" in await actions_at(client, position_of(PROGRAM, "tosa.add %x", 2))


async def test_a_sound_function_has_no_marker(client: LanguageClient):
    found = await execute(client, "mlirtext.bisect", URI, "f", ["4xf32=1 2 3 4", "4xf32=0.5"])
    assert found["kind"] is None and found["markers"] == [] and "keep @f's results" in found["summary"]


async def test_a_miscompile_is_marked_on_the_guilty_op_and_the_repro_replays_it(client: LanguageClient):
    found = await execute(client, "mlirtext.bisect", URI, "f", None, 0, ["--debug-miscompile=canonicalize:arith.subf"])
    assert found["kind"] == "diverged" and found["pass"].startswith("canonicalize"), found
    assert "'canonicalize{max-num-rewrites=-1}', diverged" in found["summary"]
    [marker] = found["markers"]
    line, character = marker["start"]
    assert (marker["op"], line) == ("tosa.sub", 2) and PROGRAM.splitlines()[2][character:].startswith("%0 = tosa.sub")
    assert "pass 2 of" in marker["message"]
    # The repro directory's command shows the same divergence.
    repro = Path(found["repro"])
    assert (repro / "before.mlir").exists()
    words = shlex.split((repro / "README").read_text().splitlines()[-1])
    done = subprocess.run([sys.executable, "-m", "mlirtext", *words[1:]], cwd=repro, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1 and "changed the results of @f" in done.stderr
    assert found["difference"]["max_ulp"] > 8 and found["difference"]["max_abs"] > 0
    # The next bisect of @f replaces its repro, in the same server directory.
    again = await execute(client, "mlirtext.bisect", URI, "f", None, 0, ["--debug-miscompile=cse:arith.addf"])
    assert Path(again["repro"]).parent == repro.parent and not repro.exists() and Path(again["repro"]).exists()
    # A bisect that blames no pass removes the last one.
    assert (await execute(client, "mlirtext.bisect", URI, "f"))["kind"] is None
    assert not Path(again["repro"]).exists()


async def test_a_kernel_wrong_on_a_device_is_named_with_its_dispatch_and_source_ops(client: LanguageClient):
    # What the pipeline view marks: the dispatch (index, the profile's name for it, its kernel) and its
    # source ops' lines, which a click reveals; the ops are marked in the editor too.
    wrong = ["--debug-wrong-kernel=local-task:f_dispatch_0"]
    found = await execute(client, "mlirtext.bisect", URI, "f", None, 0, wrong, ["local-sync", "local-task"])
    assert found["kind"] is None, found   # (no pass to blame: the lowering keeps the numbers)
    dispatch = found["dispatch"]
    assert {k: dispatch[k] for k in ("device", "index", "total", "name", "kernel")} == {
        "device": "local-task", "index": 0, "total": 1, "name": "f#0", "kernel": "f_dispatch_0"}
    assert dispatch["ops"] == [{"op": "tosa.sub", "line": 2}, {"op": "tosa.maximum", "line": 4}]
    assert dispatch["difference"]["max_ulp"] > 8
    assert "on local-task, dispatch 0 of 1 (kernel @f_dispatch_0) differs from the reference" in found["summary"]
    assert [(m["op"], m["start"][0]) for m in found["markers"]] == [("tosa.sub", 2), ("tosa.maximum", 4)]
    assert all("dispatch 0 of 1" in m["message"] for m in found["markers"])
    clean = await execute(client, "mlirtext.bisect", URI, "f", None, 0, [], ["local-task"])
    assert "dispatch" not in clean and "every dispatch on local-task agrees" in clean["summary"]
    bad = await execute(client, "mlirtext.bisect", URI, "f", None, 0, ["--debug-wrong-kernel=vulkan:f_dispatch_0"],
                        ["local-task"])
    assert "'vulkan' is not one of the devices checked" in bad["error"]
    alone = await execute(client, "mlirtext.bisect", URI, "f", None, 0, wrong)
    assert "no devices are checked against the reference" in alone["error"]


async def test_a_crash_offers_reduce_this_failure_which_reduces_it(client: LanguageClient):
    crash = ["--debug-crash=convert-tosa-to-linalg:linalg.generic"]
    found = await execute(client, "mlirtext.bisect", URI, "f", None, 0, crash)
    assert found["kind"] == "crashed" and found["markers"], found
    offered = await actions_at(client, position_of(PROGRAM, "tosa.add %0", 2))
    command = offered["Reduce this failure (@f's lowering crashes)"]
    assert (command.command, command.arguments) == ("mlirtext.reduceFailure", ["f"])
    reduced = await execute(client, "mlirtext.reduce", URI, "f")   # (the bisect's fault, remembered)
    assert "error" not in reduced, reduced
    assert reduced["summary"].startswith("reduce: 5 -> 3 ops") and "tosa." in reduced["text"]
    assert reduced["text"].count(" = ") == 1   # one op of the three is enough to crash the conversion
    # (lowered only to linalg, where the bisect found the crash), and the reduction's own files are gone
    assert reduced["still"].startswith("still so: mlirtext opt FILE --lower-to=linalg --debug-crash")
    assert [p.name for p in Path(reduced["path"]).parent.iterdir()] == ["f.reduced.mlir"]


async def test_bad_requests_get_an_error(client: LanguageClient):
    assert "no function named @nope" in (await execute(client, "mlirtext.bisect", URI, "nope"))["error"]
    assert "takes 2 argument(s)" in (await execute(client, "mlirtext.bisect", URI, "f", ["4xf32=1"]))["error"]
    bad = await execute(client, "mlirtext.bisect", URI, "f", None, 0, ["--debug-miscompile=nopass:arith.addf"])
    assert "there is no pass 'nopass'" in bad["error"]
    assert "is not interesting" in (await execute(client, "mlirtext.reduce", URI, "g", []))["error"]
