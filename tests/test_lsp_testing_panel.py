"""The Testing panel's commands (`mlirtext.testItems`, `mlirtext.runTests`) and the "Insert
expected-error for this diagnostic" code action, through the real server; and the run of a
workspace file that is not open. The outcomes are those of `mlirtext opt --verify-diagnostics`
and `mlirtext check` on the same file."""
from __future__ import annotations

import re
import threading

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from mlirtext.analysis.document import Document
from mlirtext.analysis.file_tests import run
from mlirtext.checking import check_text
from tests.lsp_support import SERVER, initialize_in, open_and_wait, position_of, range_text
from tests.test_diagnostics import run_cli

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: A chunk whose annotation is met, one whose annotation names the wrong message, a passing and a
#: failing check function, and a function without checks (a program, not a test).
TESTS = """\
// RUN: mlirtext opt --verify-diagnostics --split-input-file %s

func.func @wrong_result(%a: i32) -> f32 {
  // expected-error@+1 {{type of return operand 0 ('i32') doesn't match function result type ('f32')}}
  return %a : i32
}

// -----

func.func @mixed(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{requires the same shape}}
  %0 = "arith.addf"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>
  return %a : tensor<4xf32>
}

// -----

func.func @adds() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 4]> : tensor<2xi32>
  func.return
}

func.func @adds_wrong() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = stablehlo.add %0, %0 : tensor<2xi32>
  check.expect_eq_const %1, dense<[2, 5]> : tensor<2xi32>
  func.return
}

func.func @no_checks() {
  func.return
}
"""

BROKEN = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
    return %a : tensor<4xi32>
}
"""


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    (root / "on_disk.mlir").write_text(TESTS)
    await initialize_in(lsp_client, root)
    yield
    await lsp_client.shutdown_session()


async def command(client, name, *args):
    return await client.workspace_execute_command_async(T.ExecuteCommandParams(command=name, arguments=list(args)))


async def test_items_are_the_annotated_chunks_and_the_check_functions(client: LanguageClient):
    uri = (client.root / "open.mlir").as_uri()
    await open_and_wait(client, uri, TESTS)
    answer = await command(client, "mlirtext.testItems", uri)
    assert answer["error"] is None
    found = [(i["id"], i["kind"], i["label"]) for i in answer["items"]]
    assert found == [
        ("chunk:0", "chunk", "chunk 1 (line 1): 1 expected diagnostic"),
        ("chunk:1", "chunk", "chunk 2 (line 10): 1 expected diagnostic"),
        ("function:2:adds", "function", "@adds"),
        ("function:2:adds_wrong", "function", "@adds_wrong")]
    adds = answer["items"][2]["range"]
    assert adds[:2] == [position_of(TESTS, "func.func @adds()").line, 0]
    assert range_text(TESTS, _range(answer["items"][1]["range"])).startswith("func.func @mixed")


async def test_running_a_file_gives_what_the_command_line_gives(client: LanguageClient, tmp_path, capsys):
    uri = (client.root / "open.mlir").as_uri()
    await open_and_wait(client, uri, TESTS)
    answer = await command(client, "mlirtext.runTests", uri, None)
    assert answer["error"] is None
    status = {r["id"]: r["status"] for r in answer["results"]}
    assert status == {"chunk:0": "passed", "chunk:1": "failed", "function:2:adds": "passed",
                      "function:2:adds_wrong": "failed"}
    # chunk 2: its annotation is unmet, and the diagnostic it should have named is unexpected
    mixed = next(r for r in answer["results"] if r["id"] == "chunk:1")
    unmet = next(f for f in mixed["failures"] if f["expected"])
    assert unmet["expected"] == "error: requires the same shape"
    assert unmet["actual"] == "error: 'arith.addf' op requires the same type for all operands and results"
    assert range_text(TESTS, _range(unmet["range"])) == "expected-error@+1 {{requires the same shape}}"
    unexpected = next(f for f in mixed["failures"] if not f["expected"])
    assert unexpected["message"].startswith("unexpected error: 'arith.addf' op requires the same type")
    assert _range(unexpected["range"]).start.line == position_of(TESTS, '"arith.addf"').line
    # the failing check: at its line, with the element's two values
    wrong = next(r for r in answer["results"] if r["id"] == "function:2:adds_wrong")
    [failure] = wrong["failures"]
    assert (failure["expected"], failure["actual"]) == ("element [1]: 5", "element [1]: 4")
    assert _range(failure["range"]).start.line == position_of(TESTS, "dense<[2, 5]>").line
    # the command line agrees
    path = tmp_path / "tests.mlir"
    path.write_text(TESTS)
    code, _, err = run_cli(["opt", "--verify-diagnostics", "--split-input-file", str(path)], capsys)
    reported = re.findall(r"^.*tests\.mlir:(\d+):\d+: error: (.*)$", err, re.M)
    assert code == 1 and sorted((int(line) - 1, m) for line, m in reported) == sorted(
        (f["range"][0], f["message"]) for f in mixed["failures"])
    report = check_text(TESTS, str(path), True)
    assert [(r.name, r.status) for r in report.results if r.name.startswith("adds")] == [
        ("adds", "passed"), ("adds_wrong", "failed")]


async def test_one_item_runs_alone_and_a_workspace_file_runs_unopened(client: LanguageClient):
    uri = (client.root / "on_disk.mlir").as_uri()
    items = await command(client, "mlirtext.testItems", uri)
    assert [i["id"] for i in items["items"]] == ["chunk:0", "chunk:1", "function:2:adds", "function:2:adds_wrong"]
    answer = await command(client, "mlirtext.runTests", uri, ["function:2:adds", "chunk:7"])
    assert [(r["id"], r["status"]) for r in answer["results"]] == [("function:2:adds", "passed"),
                                                                   ("chunk:7", "error")]
    assert answer["results"][1]["message"].startswith("no test 'chunk:7' in ")


async def test_bad_requests_get_an_error(client: LanguageClient):
    missing = (client.root / "missing.mlir").as_uri()
    assert (await command(client, "mlirtext.testItems", missing))["error"] == f"unknown document '{missing}'"
    (client.root / "notes.txt").write_text(TESTS)   # only .mlir files are read from disk
    other = (client.root / "notes.txt").as_uri()
    assert (await command(client, "mlirtext.testItems", other))["error"] == f"unknown document '{other}'"
    assert (await command(client, "mlirtext.runTests", 42))["error"] == "unknown document '42'"
    uri = (client.root / "on_disk.mlir").as_uri()
    assert (await command(client, "mlirtext.runTests", uri, "chunk:0"))["error"] == \
        "the test ids are a list of strings, or null for every test"


async def test_code_action_inserts_the_expectation_above_the_line(client: LanguageClient):
    uri = (client.root / "broken.mlir").as_uri()
    [diagnostic] = await open_and_wait(client, uri, BROKEN)
    actions = await client.text_document_code_action_async(T.CodeActionParams(
        text_document=T.TextDocumentIdentifier(uri=uri), range=diagnostic.range,
        context=T.CodeActionContext(diagnostics=[diagnostic])))
    [insert] = [a for a in actions if a.title == "Insert expected-error for this diagnostic"]
    assert insert.kind == T.CodeActionKind.QuickFix
    [edit] = insert.edit.changes[uri]
    assert edit.range.start == edit.range.end == T.Position(line=2, character=0)
    assert edit.new_text == f"    // expected-error@+1 {{{{{diagnostic.message}}}}}\n"
    # with it in place the file passes --verify-diagnostics: run it as the Testing panel does
    fixed = BROKEN.replace("    return", edit.new_text + "    return")
    client.text_document_did_change(T.DidChangeTextDocumentParams(
        text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[T.TextDocumentContentChangeWholeDocument(text=fixed)]))
    items = await command(client, "mlirtext.testItems", uri)
    assert [i["label"] for i in items["items"]] == ["chunk 1 (line 1): 1 expected diagnostic"]
    answer = await command(client, "mlirtext.runTests", uri, None)
    assert [r["status"] for r in answer["results"]] == ["passed"]


def _range(r: list) -> T.Range:
    return T.Range(start=T.Position(line=r[0], character=r[1]), end=T.Position(line=r[2], character=r[3]))


async def test_a_cancelled_run_stops_before_the_next_test():
    """`mlirtext.runTests` honours $/cancelRequest through this event (as the other long commands do)."""
    doc = Document("file:///t.mlir", TESTS)
    said = []
    stop = threading.Event()

    def report(label):
        said.append(label)
        stop.set()   # cancelled while the first test runs
    outcomes = run(doc, None, cancelled=stop, report=report)
    assert said == ["chunk 1 (line 1): 1 expected diagnostic"] and [o.id for o in outcomes] == ["chunk:0"]


async def test_unknown_dialects_pass_when_the_run_line_allows_them():
    """As mlir-opt: an op of an unknown dialect is an error unless -allow-unregistered-dialect."""
    text = """// RUN: mlir-opt %s -verify-diagnostics -allow-unregistered-dialect
func.func @f(%a: i32) -> f32 {
  "foo.bar"() : () -> ()
  // expected-error@+1 {{doesn't match function result type}}
  return %a : i32
}
"""
    assert [o.status for o in run(Document("file:///u.mlir", text))] == ["passed"]
    strict = text.replace(" -allow-unregistered-dialect", "")
    [outcome] = run(Document("file:///u.mlir", strict))
    assert outcome.status == "failed" and "unexpected error: operation being parsed with an unregistered dialect" \
        in outcome.message
