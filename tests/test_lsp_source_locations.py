"""Go to definition on an op's `loc(...)` (issue 25), end to end through the real server: an
inline file location, a `#loc` alias, a name location, a call site (callee and caller) and a fused
location (each file) open the file at its line and column, when the file is in a workspace folder
or beside the document; a file that is not there is no target."""
from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from mlirtext.analysis.source_links import location_text_at

from .lsp_support import SERVER, initialize_in, open_and_wait, position_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODEL = "import jax\n" * 40   # the lines a location names only need to exist

TEXT = """\
#loc1 = loc("model.py":3:11)
module {
  func.func @f(%a: tensor<4xf32> loc("model.py":1:1)) -> tensor<4xf32> {
    %0 = stablehlo.exponential %a : tensor<4xf32> loc("model.py":9:20)
    %1 = stablehlo.negate %0 : tensor<4xf32> loc(#loc1)
    %2 = stablehlo.abs %1 : tensor<4xf32> loc("jit(f)/abs"("sub/layers.py":12:5))
    %3 = stablehlo.add %2, %a : tensor<4xf32> loc(callsite("sub/layers.py":4:2 at "model.py":30:8))
    %4 = stablehlo.tanh %3 : tensor<4xf32> loc(fused["model.py":5:3, "sub/layers.py":6:1, "gone.py":1:1])
    %5 = stablehlo.sine %4 : tensor<4xf32> loc(#loc3)
    %6 = stablehlo.cosine %5 : tensor<4xf32> loc("gone.py":2:2)
    return %6 : tensor<4xf32> loc(#loc4)
  } loc(unknown)
}
#loc2 = loc("here.py":7:1)
#loc3 = loc(callsite(#loc2 at #loc1))
#loc4 = loc("gone.py":3:3)
"""


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    (root / "model.py").write_text(MODEL)
    (root / "sub").mkdir()
    (root / "sub" / "layers.py").write_text(MODEL)
    # The document lives in a folder of its own, beside here.py (not in the workspace's top).
    (root / "ir").mkdir()
    (root / "ir" / "here.py").write_text(MODEL)
    await initialize_in(lsp_client, root)
    lsp_client.root = root
    uri = (root / "ir" / "f.mlir").as_uri()
    assert list(await open_and_wait(lsp_client, uri, TEXT)) == []
    lsp_client.uri = uri
    yield
    await lsp_client.shutdown_session()


async def targets(client, needle: str, delta: int = 0, nth: int = 0) -> list:
    found = await client.text_document_definition_async(T.DefinitionParams(
        text_document=T.TextDocumentIdentifier(uri=client.uri), position=position_of(TEXT, needle, delta, nth)))
    root = client.root.as_uri() + "/"
    return [(d.uri.removeprefix(root), d.range.start.line + 1, d.range.start.character + 1) for d in found]


async def test_an_inline_file_location(client: LanguageClient):
    # Anywhere in the loc(...): on `loc`, in the file name, on the line number.
    for delta in (0, 6, 15):
        assert await targets(client, 'loc("model.py":9:20)', delta) == [("model.py", 9, 20)]
    # On an argument's location too.
    assert await targets(client, 'loc("model.py":1:1)', 2) == [("model.py", 1, 1)]


async def test_a_loc_alias_and_its_definition(client: LanguageClient):
    assert await targets(client, "loc(#loc1)\n", 6) == [("model.py", 3, 11)]
    assert await targets(client, '#loc1 = loc("model.py"', 10) == [("model.py", 3, 11)]


async def test_a_name_location_leads_to_its_file(client: LanguageClient):
    assert await targets(client, 'loc("jit(f)/abs"', 5) == [("sub/layers.py", 12, 5)]


async def test_a_call_site_gives_the_callee_and_the_caller(client: LanguageClient):
    assert await targets(client, "loc(callsite(", 5) == [("sub/layers.py", 4, 2), ("model.py", 30, 8)]
    # Through aliases, the callee found beside the document (ir/here.py), not in the workspace's top.
    assert await targets(client, "loc(#loc3)", 6) == [("ir/here.py", 7, 1), ("model.py", 3, 11)]


async def test_a_fused_location_gives_each_file_that_exists(client: LanguageClient):
    assert await targets(client, "loc(fused[", 30) == [("model.py", 5, 3), ("sub/layers.py", 6, 1)]


async def test_a_missing_file_and_an_unknown_location_give_nothing(client: LanguageClient):
    assert await targets(client, 'loc("gone.py":2:2)', 5) == []
    assert await targets(client, "loc(unknown)", 5) == []
    # An alias whose files are not there still leads to the alias.
    assert await targets(client, "loc(#loc4)", 6) == [("ir/f.mlir", 16, 1)]
    # Off the location, definition is as before: the value's definition.
    [(uri, line, _)] = await targets(client, "%0 : tensor<4xf32> loc(#loc1)")
    assert uri == "ir/f.mlir" and line == 4


async def test_the_location_around_the_cursor_is_the_outermost_on_its_line():
    line = 'x loc(callsite("a(b).py":1:2 at "c.py":3:4)) y'
    assert location_text_at(line, line.index("a(b)")) == (2, len(line) - 2)
    assert location_text_at(line, 0) is None and location_text_at(line, len(line) - 1) is None
    assert location_text_at('%loc(x) = 1', 2) is None   # `loc(` only as a keyword
