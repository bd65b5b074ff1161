"""The two requests behind the editor's `.mlirbc` documents, and the checks of their params.

`mlirtext/decodeBytecode` {uri, data} and `mlirtext/encodeBytecode` {uri, text}: bytes travel as
base64 (JSON has no bytes). Like the commands, they answer a problem with an `error` field (one
line, which the extension shows), not a JSON-RPC error: a damaged file is the user's news, not
the server's failure.
"""
from __future__ import annotations

from mlirtext.analysis.workspace import Workspace

DECODE_BYTECODE = "mlirtext/decodeBytecode"
ENCODE_BYTECODE = "mlirtext/encodeBytecode"


def bytecode_request(params, field: str) -> dict:
    """{name: the file's name for messages, field: its string value} or {error}."""
    if hasattr(params, "_asdict"):   # pygls hands a method it has no type for its params as a namedtuple
        params = params._asdict()
    if not isinstance(params, dict):
        params = {}
    uri, value = params.get("uri"), params.get(field)
    if not isinstance(uri, str) or not isinstance(value, str):
        return {"error": f"expected params {{uri: string, {field}: string}}"}
    return {"name": Workspace.filename(uri), field: value}
