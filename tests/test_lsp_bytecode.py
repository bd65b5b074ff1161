"""`.mlirbc` files in the editor (issue 25): the server's `mlirtext/decodeBytecode` and
`mlirtext/encodeBytecode`, end to end through the real server. A corpus case written as bytecode
by iree-opt reads as custom-form text, and that text, saved, is bytecode iree-opt reads to the
same generic form; damaged bytes and text that does not parse get one line each."""
from __future__ import annotations

import asyncio
import base64
import subprocess

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from mlirtext.syntax.bytecode import MAGIC

from . import corpus
from .bytecode_status import iree_bytecode
from .corpus_status import generic_forms
from .lsp_support import SERVER, initialize_in
from .oracle import iree_opt_path

pytestmark = pytest.mark.asyncio(loop_scope="module")

#: A stablehlo case from the corpus (the same as test_bytecode.py's stablehlo family).
CASE = "stablehlo/stablehlo__tests__ops_stablehlo#3"


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    await initialize_in(lsp_client, tmp_path_factory.mktemp("ws"))
    yield
    await lsp_client.shutdown_session()


async def request(client, method: str, params) -> dict:
    answer = await asyncio.wrap_future(client.protocol.send_request(method, params))
    return answer._asdict()   # pygls' client reads an untyped answer as a namedtuple


async def decode(client, data: bytes, uri: str = "file:///ws/model.mlirbc") -> dict:
    return await request(client, "mlirtext/decodeBytecode",
                         {"uri": uri, "data": base64.b64encode(data).decode("ascii")})


async def encode(client, text: str, uri: str = "file:///ws/model.mlirbc") -> dict:
    return await request(client, "mlirtext/encodeBytecode", {"uri": uri, "text": text})


def _iree_generic_of_bytecode(data: bytes) -> str:
    """iree-opt's generic print of a bytecode file."""
    proc = subprocess.run([iree_opt_path(), "--mlir-print-op-generic", "-"], input=data, capture_output=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


@pytest.mark.skipif(not corpus.available(), reason="needs ../shared/corpus")
async def test_a_corpus_case_round_trips_through_the_editor(client: LanguageClient):
    [case] = [c for c in corpus.cases() if c.case_id == CASE]
    [data] = iree_bytecode([case.text])
    assert data is not None and data.startswith(MAGIC)
    answer = await decode(client, data)
    text = answer["text"]
    assert "stablehlo.add %" in text and '"func.func"' not in text, text[:400]  # the custom form
    saved = await encode(client, text)
    written = base64.b64decode(saved["data"])
    assert written.startswith(MAGIC)
    [(original, why)] = generic_forms([case.text])
    assert original is not None, why
    assert generic_forms([_iree_generic_of_bytecode(written)])[0][0] == original


async def test_an_edit_is_saved_into_the_bytecode(client: LanguageClient):
    text = ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = arith.addf %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")
    shown = (await decode(client, base64.b64decode((await encode(client, text))["data"])))["text"]
    edited = shown.replace("arith.addf", "arith.mulf")
    assert edited != shown
    written = base64.b64decode((await encode(client, edited))["data"])
    assert '"arith.mulf"' in _iree_generic_of_bytecode(written)


async def test_text_mlir_in_a_mlirbc_file_is_shown_as_it_is(client: LanguageClient):
    text = "// kept as written\nfunc.func @f(%a: i32) -> i32 {\n  return %a : i32\n}\n"
    assert (await decode(client, text.encode()))["text"] == text


async def test_damaged_bytecode_is_one_line(client: LanguageClient):
    [data] = iree_bytecode(["func.func @f(%a: i32) -> i32 {\n  return %a : i32\n}\n"])
    answer = await decode(client, data[:len(data) // 2])
    assert set(answer) == {"error"}
    assert answer["error"].startswith("/ws/model.mlirbc: malformed bytecode at byte ")
    assert "\n" not in answer["error"]
    answer = await decode(client, b"\xff\xfe not mlir")
    assert "neither MLIR bytecode" in answer["error"] and "\n" not in answer["error"]


async def test_text_that_does_not_parse_is_not_encoded(client: LanguageClient):
    answer = await encode(client, "func.func @f(%a: i32) -> i32 {\n  %0 = arith.addi %a, : i32\n  return %0 : i32\n}\n")
    assert set(answer) == {"error"}
    assert answer["error"].startswith("not saved as bytecode: /ws/model.mlirbc:2:")
    assert "expected SSA value" in answer["error"] and "\n" not in answer["error"]
    # The verifier's errors too (a use of an undefined value).
    answer = await encode(client, "func.func @f(%a: i32) -> f32 {\n  return %a : i32\n}\n")
    assert "error" in answer and "\n" not in answer["error"]


async def test_bad_params_are_an_error_field(client: LanguageClient):
    answer = await request(client, "mlirtext/decodeBytecode", {"uri": "file:///x.mlirbc", "data": "%%%"})
    assert answer == {"error": "/x.mlirbc: 'data' is not base64"}
    answer = await request(client, "mlirtext/encodeBytecode", {"uri": 3})
    assert answer == {"error": "expected params {uri: string, text: string}"}
    for params in ([1, 2], None, "x"):
        answer = await request(client, "mlirtext/decodeBytecode", params)
        assert answer == {"error": "expected params {uri: string, data: string}"}
