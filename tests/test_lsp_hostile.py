"""The language server against a hostile client, in raw JSON-RPC frames over stdio: every
request is answered exactly once with the code JSON-RPC and LSP give, notifications get
nothing, stderr has one line per problem and no traceback, and a 10 MB document is
answered in time."""
from __future__ import annotations

import base64
import json
import os
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pytest_lsp import clients

from tests.lsp_raw import RawServer
from tests.lsp_support import ROOT

INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32600, -32601, -32602, -32603
PARSE_ERROR, NOT_INITIALIZED, CANCELLED = -32700, -32002, -32800

URI = "file:///tmp/hostile.mlir"
TEXT = (ROOT / "examples" / "mlp_stablehlo.mlir").read_text()
DOC = {"uri": URI}
HERE = {"line": 3, "character": 10}
#: Requests that take a position, each with its other params.
POSITIONED = {
    "textDocument/hover": {}, "textDocument/definition": {}, "textDocument/completion": {},
    "textDocument/signatureHelp": {}, "textDocument/prepareRename": {},
    "textDocument/references": {"context": {"includeDeclaration": True}},
    "textDocument/rename": {"newName": "y"},
}
BAD_POSITIONS = ["here", {"line": -1, "character": 0}, {"line": 0, "character": -1}, {"line": 0},
                 {"line": 1.5, "character": 0}, None, [3, 10]]


def check_stderr(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    for line in stderr.splitlines():
        assert line.startswith("mlirtext-lsp: "), line   # one line per record, nothing else


def check_answered_once(server: RawServer) -> None:
    """Every request sent has exactly one response, and no response answers anything else."""
    counts = Counter({i: len(r) for i, r in server.responses.items()})
    assert all(n == 1 for n in counts.values()), {i: n for i, n in counts.items() if n != 1}
    assert set(counts) == set(server.sent), (set(server.sent) - set(counts), set(counts) - set(server.sent))


def error_code(answer: dict):
    return answer.get("error", {}).get("code")


@pytest.fixture(scope="module")
def server():
    s = RawServer()
    assert "capabilities" in s.initialize()["result"]
    s.open(URI, TEXT)
    assert s.diagnostics(URI) == []
    yield s
    code, stderr = s.stop()
    check_stderr(stderr)
    check_answered_once(s)
    assert code == 0


def test_params_that_do_not_parse_get_invalid_params(server):
    sent = []
    for method, extra in POSITIONED.items():
        for position in BAD_POSITIONS:
            params = {"textDocument": DOC, **extra}
            if position is not None:
                params["position"] = position
            sent.append((method, server.request(method, params)))
        sent.append((method, server.request(method, {"position": HERE, **extra})))   # no textDocument
        sent.append((method, server.request(method)))                                 # no params at all
    whole = ["textDocument/documentSymbol", "textDocument/foldingRange", "textDocument/semanticTokens/full"]
    for method in whole:
        sent += [(method, server.request(method, {"textDocument": "file:///x"})),
                 (method, server.request(method, {"textDocument": {"uri": 5}})),
                 (method, server.request(method, [DOC]))]
    bad_range = {"start": {"line": -1, "character": 0}, "end": HERE}
    sent += [("textDocument/codeAction", server.request("textDocument/codeAction", {
                 "textDocument": DOC, "range": bad_range, "context": {"diagnostics": []}})),
             ("textDocument/inlayHint", server.request("textDocument/inlayHint", {"textDocument": DOC,
                                                                                  "range": "all"})),
             ("workspace/symbol", server.request("workspace/symbol", {"query": 42})),
             ("workspace/executeCommand", server.request("workspace/executeCommand", {"arguments": []}))]
    for method, msg_id in sent:
        answer = server.response(msg_id)
        assert error_code(answer) == INVALID_PARAMS, (method, answer)
        assert answer["error"]["message"].startswith(f"{method}: invalid params: "), answer
        assert "$.params" in answer["error"]["message"]
    # The range check of lsprotocol says what was wrong.
    answer = server.call("textDocument/hover", {"textDocument": DOC, "position": {"line": -1, "character": 0}})
    assert "should be in range" in answer["error"]["message"] and "-1" in answer["error"]["message"]
    # The same requests with good params are answered.
    for method, extra in POSITIONED.items():
        answer = server.call(method, {"textDocument": DOC, "position": {"line": 1, "character": 12}, **extra})
        assert "result" in answer, (method, answer)
    assert "mlp" in server.call("textDocument/hover", {"textDocument": DOC, "position": {"line": 1, "character": 12}}
                                )["result"]["contents"]["value"]


def test_semantic_tokens_of_a_range(server):
    def absolute(data):
        line, col, out = 0, 0, []
        for i in range(0, len(data), 5):
            line, col = line + data[i], (col + data[i + 1]) if data[i] == 0 else data[i + 1]
            out.append((line, col, *data[i + 2:i + 5]))
        return out
    full = absolute(server.call("textDocument/semanticTokens/full", {"textDocument": DOC})["result"]["data"])
    part = absolute(server.call("textDocument/semanticTokens/range", {"textDocument": DOC, "range": {
        "start": {"line": 2, "character": 0}, "end": {"line": 4, "character": 0}}})["result"]["data"])
    assert part and set(part) <= set(full) and any(t[0] in (2, 3) for t in part)


def test_unknown_methods(server):
    for method in ("mlirtext/nothing", "$/nothing", "textDocument/notAMethod", ""):
        answer = server.call(method, {})
        assert error_code(answer) == METHOD_NOT_FOUND and method in answer["error"]["message"], answer
    # Notifications are never answered; an unknown `$/` one is not even logged.
    before = len(server.responses)
    server.notify("$/unknownNotification", {"x": 1})
    server.notify("mlirtext/unknownNotification", {})
    server.notify("textDocument/didOpen", {"textDocument": "not an item"})
    server.notify("textDocument/didChange", None)
    assert server.call("textDocument/documentSymbol", {"textDocument": DOC})["result"]
    assert len(server.responses) == before + 1
    stderr = server.stderr_text()   # one line for an unknown notification, none for a `$/` one
    assert stderr.count("mlirtext/unknownNotification") == 1 and "$/unknownNotification" not in stderr


def test_messages_that_are_not_requests(server):
    def null_id_answers():
        return server.responses.get(None, [])
    server.send_body(b"{not json")
    server.send_body(b"\xff\xfe not utf-8")
    server.send_body(b'{"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover", "params": '
                     + b"[" * 100_000 + b"]" * 100_000 + b"}")   # deeper than the JSON reader goes
    server.send([1, 2, 3])
    server.send("a string")
    server.send({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "textDocument/hover"})
    server.send({"jsonrpc": "2.0", "id": True, "method": "textDocument/hover"})
    deadline = time.monotonic() + 30
    while len(null_id_answers()) < 7 and time.monotonic() < deadline:
        time.sleep(0.05)
    codes = sorted(error_code(a) for a in null_id_answers())
    assert codes == sorted([PARSE_ERROR] * 3 + [INVALID_REQUEST] * 4), codes
    server.responses.pop(None)   # seven answers with id null: not one request answered seven times
    answer = server.response(server.request("textDocument/hover", jsonrpc="1.0"))
    assert error_code(answer) == INVALID_REQUEST
    assert error_code(server.response(server.request(7))) == INVALID_REQUEST   # a method that is not a string


def test_a_failing_handler_answers_internal_error(server):
    # A client can send any arguments to a command; applyAction's first two are a URI and a version.
    answer = server.call("workspace/executeCommand", {"command": "mlirtext.applyAction", "arguments": []})
    assert error_code(answer) == INTERNAL_ERROR, answer
    assert "data" not in answer["error"] and "\n" not in answer["error"]["message"]   # no traceback
    assert "ValueError" in answer["error"]["message"]
    answer = server.call("workspace/executeCommand", {"command": "no.such.command", "arguments": []})
    assert error_code(answer) == INVALID_PARAMS
    # The run commands answer their own errors in their result (the extension shows them).
    answer = server.call("workspace/executeCommand", {"command": "mlirtext.run", "arguments": [42, {"x": 1}]})
    assert "error" in answer["result"]


#: JSON values of every kind, nested a little.
JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False)
                    | st.text(max_size=12), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=10), inner, max_size=3), max_leaves=8)
#: Each request method with good params, which the fuzz test damages.
GOOD = {**{m: {"textDocument": DOC, "position": HERE, **extra} for m, extra in POSITIONED.items()},
        "textDocument/documentSymbol": {"textDocument": DOC}, "textDocument/foldingRange": {"textDocument": DOC},
        "textDocument/semanticTokens/full": {"textDocument": DOC},
        "textDocument/semanticTokens/range": {"textDocument": DOC, "range": {"start": HERE, "end": HERE}},
        "textDocument/codeAction": {"textDocument": DOC, "range": {"start": HERE, "end": HERE},
                                    "context": {"diagnostics": []}},
        "textDocument/inlayHint": {"textDocument": DOC, "range": {"start": HERE, "end": HERE}},
        "textDocument/formatting": {"textDocument": DOC, "options": {"tabSize": 2, "insertSpaces": True}},
        "textDocument/rangeFormatting": {"textDocument": DOC, "range": {"start": HERE, "end": HERE},
                                         "options": {"tabSize": 2, "insertSpaces": True}},
        "workspace/symbol": {"query": "m"},
        "workspace/executeCommand": {"command": "mlirtext.targetCode", "arguments": [URI, "mlp", 0, []]},
        # The bytes of a .mlirbc file (here: text MLIR, which a .mlirbc may also hold) and a text to encode.
        "mlirtext/decodeBytecode": {"uri": URI, "data": base64.b64encode(b"module {}\n").decode()},
        "mlirtext/encodeBytecode": {"uri": URI, "text": "module {}\n"}}


def damaged(params, path: list, value):
    """`params` with the value at `path` (keys or indexes, as far as they lead) replaced."""
    if not path or not isinstance(params, (dict, list)) or not params:
        return value
    keys = list(params) if isinstance(params, dict) else list(range(len(params)))
    key = keys[path[0] % len(keys)]
    copy = dict(params) if isinstance(params, dict) else list(params)
    copy[key] = damaged(params[key], path[1:], value)
    return copy


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(sorted(GOOD)), path=st.lists(st.integers(0, 5), max_size=4), value=JSON)
def test_damaged_params_are_answered_once(server, method, path, value):
    answer = server.call(method, damaged(GOOD[method], path, value))
    assert "result" in answer or error_code(answer) == INVALID_PARAMS, answer   # never an internal error


def test_cancelled_requests_are_answered_once(server):
    ids = [server.request("textDocument/semanticTokens/full", {"textDocument": DOC}) for _ in range(5)]
    for msg_id in ids:
        server.notify("$/cancelRequest", {"id": msg_id})
    server.notify("$/cancelRequest", {"id": 10**9})   # unknown: ignored
    for msg_id in ids:
        answer = server.response(msg_id)
        assert "result" in answer or error_code(answer) == CANCELLED, answer


def test_before_initialize_and_after_shutdown():
    s = RawServer()
    try:
        answer = s.call("textDocument/hover", {"textDocument": DOC, "position": HERE})
        assert error_code(answer) == NOT_INITIALIZED, answer
        assert "result" in s.initialize()
        s.open(URI, TEXT)
        again = s.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        assert error_code(again) == INVALID_REQUEST and "already" in again["error"]["message"], again
        assert s.diagnostics(URI) == []   # the document is still open
        assert s.call("shutdown")["result"] is None
        for method, params in (("textDocument/hover", {"textDocument": DOC, "position": HERE}),
                               ("textDocument/documentSymbol", {"textDocument": DOC}), ("shutdown", None),
                               ("no/such", {})):
            answer = s.call(method, params)
            assert error_code(answer) == INVALID_REQUEST and "shut down" in answer["error"]["message"], answer
        s.notify("textDocument/didClose", {"textDocument": DOC})   # ignored
        s.notify("exit")
        assert s.process.wait(30) == 0
    finally:
        code, stderr = s.stop()
    check_stderr(stderr)
    check_answered_once(s)
    assert code == 0


#: Real editors' `initialize` params, as pytest-lsp recorded them: the newest of each editor
#: (all eight recorded versions pass too; three keep the test short).
REAL_CLIENTS = [p for p in sorted(Path(clients.__file__).parent.glob("*.json"))
                if p.stem in ("visual_studio_code_v1.65.2", "neovim_v0.11.0", "emacs_v29.1")]


@pytest.mark.parametrize("recorded", REAL_CLIENTS, ids=lambda p: p.stem)
def test_real_clients_initialize(recorded):
    """The strict JSON types (no 1.5 for an integer) still take what real editors send."""
    s = RawServer()
    try:
        answer = s.call("initialize", {**json.loads(recorded.read_text()), "processId": None, "rootUri": None})
        assert "capabilities" in answer.get("result", {}), answer
        s.notify("initialized", {})
        s.open(URI, TEXT)
        assert s.diagnostics(URI) == []
        assert s.call("textDocument/documentSymbol", {"textDocument": DOC})["result"]
    finally:
        code, stderr = s.stop()
    check_stderr(stderr)
    check_answered_once(s)
    assert code == 0


def ten_megabytes() -> str:
    """The bundled examples (four real functions), repeated with renamed symbols and aliases to 10 MB."""
    examples = "".join(p.read_text() for p in sorted((ROOT / "examples").glob("*.mlir")))
    copies, size, k = [], 0, 0
    while size < 10_000_000:
        copy = re.sub(r"([@#!])([A-Za-z_]\w*)(?![\w.])", lambda m: f"{m.group(1)}{m.group(2)}_{k}", examples)
        copies.append(copy)
        size, k = size + len(copy), k + 1
    return "".join(copies)


#: Bounds per request, generous for a loaded CI machine (the figures to report are the
#: server's CPU seconds, printed): the first request of each kind computes the answer for
#: the version (whole-document answers are kept per version), later ones reuse it.
FIRST_BOUND_S, BOUND_S = 15.0, 5.0


def test_ten_megabyte_document():
    text = ten_megabytes()
    lines = text.split("\n")
    functions = text.count("func.func @")
    middle = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("func.func @mlp_"))
    name_at = {"line": middle, "character": lines[middle].index("@") + 2}
    use = next(i for i in range(middle, len(lines)) if "stablehlo.add %0, %1" in lines[i])
    value_at = {"line": use, "character": lines[use].index("%0") + 1}
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": len(lines), "character": 0}}
    viewport = {"start": {"line": middle, "character": 0}, "end": {"line": middle + 60, "character": 0}}
    requests = [
        ("textDocument/documentSymbol", {"textDocument": DOC}),
        ("textDocument/foldingRange", {"textDocument": DOC}),
        ("textDocument/semanticTokens/full", {"textDocument": DOC}),
        ("textDocument/semanticTokens/range", {"textDocument": DOC, "range": viewport}),
        ("textDocument/hover", {"textDocument": DOC, "position": value_at}),
        ("textDocument/definition", {"textDocument": DOC, "position": value_at}),
        ("textDocument/references", {"textDocument": DOC, "position": name_at,
                                     "context": {"includeDeclaration": True}}),
        ("textDocument/prepareRename", {"textDocument": DOC, "position": name_at}),
        ("textDocument/rename", {"textDocument": DOC, "position": name_at, "newName": "renamed"}),
        ("textDocument/completion", {"textDocument": DOC, "position": value_at}),
        ("textDocument/signatureHelp", {"textDocument": DOC, "position": value_at}),
        ("textDocument/codeAction", {"textDocument": DOC, "range": {"start": value_at, "end": value_at},
                                     "context": {"diagnostics": []}}),
        ("textDocument/inlayHint", {"textDocument": DOC, "range": whole}),
        ("workspace/symbol", {"query": "mlp_1"}),
    ]
    s = RawServer()
    try:
        s.initialize()
        started = time.perf_counter()
        s.open(URI, text)
        assert s.diagnostics(URI, timeout=600) == []
        opened = time.perf_counter() - started
        first, times, cpu, cpu_again, answers = {}, {}, {}, {}, {}
        for method, params in requests:
            first[method], cpu[method], _ = s.timed(method, params, timeout=120)
        for method, params in requests:
            times[method], cpu_again[method], answers[method] = s.timed(method, params, timeout=120)
        print(f"\n10 MB document ({len(text) / 1e6:.1f} MB, {len(lines)} lines, {functions} functions): "
              f"open to diagnostics {opened:.2f} s (load average {os.getloadavg()[0]:.1f})\n"
              f"  {'request':34s} {'first':>7s} {'(server CPU)':>12s} {'again':>7s} {'(server CPU)':>12s}")

        def used(seconds):
            return f"{seconds:6.2f}s" if seconds is not None else "?"
        for method, seconds in times.items():
            print(f"  {method:34s} {first[method]:6.3f}s {used(cpu[method]):>12s} {seconds:6.3f}s "
                  f"{used(cpu_again[method]):>12s}")
    finally:
        code, stderr = s.stop()
    check_stderr(stderr)
    check_answered_once(s)
    assert all("result" in a for a in answers.values()), [a for a in answers.values() if "result" not in a]
    functions_listed = [s for s in answers["textDocument/documentSymbol"]["result"] if s["kind"] == 12]
    assert len(functions_listed) == functions and functions_listed[-1]["name"].endswith(f"_{functions // 4 - 1}")
    assert len(answers["textDocument/semanticTokens/full"]["result"]["data"]) > 5 * functions * 10
    in_view = answers["textDocument/semanticTokens/range"]["result"]["data"]
    assert 5 * 50 < len(in_view) < 5 * 5000 and in_view[0] >= middle - 60   # the viewport's functions only
    assert len(answers["textDocument/foldingRange"]["result"]) >= functions
    assert "tensor<4x16xf32>" in answers["textDocument/hover"]["result"]["contents"]["value"]
    assert answers["textDocument/definition"]["result"][0]["range"]["start"]["line"] < use
    assert len(answers["textDocument/references"]["result"]) >= 1
    assert answers["workspace/symbol"]["result"]
    slow = {m: round(t, 2) for m, t in first.items() if t > FIRST_BOUND_S}
    slow.update({m: round(t, 2) for m, t in times.items() if t > BOUND_S})
    assert not slow, slow
