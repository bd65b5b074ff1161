"""Shared pieces of the language-server tests: the server command and small helpers."""
from __future__ import annotations

import ast
import asyncio
import os
import sys
from pathlib import Path

from lsprotocol import types as T
from pytest_lsp import ClientServerConfig

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"

SERVER = ClientServerConfig(
    server_command=[sys.executable, "-m", "mlirtext", "lsp"],
    server_env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'server'}"},
)


def position_of(text: str, needle: str, delta: int = 0, nth: int = 0) -> T.Position:
    """LSP position (UTF-16) of the nth occurrence of `needle`, plus `delta` characters."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    at += delta
    line = text.count("\n", 0, at)
    col_text = text[text.rfind("\n", 0, at) + 1:at]
    return T.Position(line=line, character=len(col_text.encode("utf-16-le")) // 2)


def offset_at(text: str, pos: T.Position) -> int:
    lines = text.split("\n")
    start = sum(len(l) + 1 for l in lines[:pos.line])
    units, i = 0, 0
    line = lines[pos.line]
    while units < pos.character and i < len(line):
        units += 2 if ord(line[i]) > 0xFFFF else 1
        i += 1
    return start + i


def range_text(text: str, r: T.Range) -> str:
    return text[offset_at(text, r.start):offset_at(text, r.end)]


async def open_and_wait(client, uri: str, text: str, version: int = 1, timeout: float = 30):
    """Open a document and wait for its diagnostics; returns them."""
    client.diagnostics.pop(uri, None)
    client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="mlir", version=version, text=text)))
    return await wait_diagnostics(client, uri, timeout)


async def wait_diagnostics(client, uri: str, timeout: float = 30):
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while uri not in client.diagnostics:
        if loop.time() > deadline:
            raise TimeoutError(f"no diagnostics for {uri}")
        await asyncio.sleep(0.01)
    return client.diagnostics[uri]


def as_code_action(a):
    """lsprotocol's client decodes `(Command | CodeAction)[]` by trying Command first, which
    turns a CodeAction's nested command into its repr; read it back."""
    if isinstance(a, T.Command) and isinstance(a.command, str) and a.command.startswith("{"):
        inner = ast.literal_eval(a.command)
        return T.CodeAction(title=a.title, command=T.Command(**inner))
    return a


async def initialize_in(client, root, options=None) -> None:
    """Initialize a session with `root` (a folder) as its workspace and `options` as its
    initializationOptions; the folder is kept as `client.root`."""
    await client.initialize_session(T.InitializeParams(
        capabilities=T.ClientCapabilities(), root_uri=root.as_uri(),
        workspace_folders=[T.WorkspaceFolder(uri=root.as_uri(), name=root.name)], initialization_options=options))
    client.root = root
