"""`dense_resource<handle>` attributes read into real constants.

Importers such as torch-mlir write a model's weights as `dense_resource<handle> : tensor<...>` and put
the bytes in a `{-# dialect_resources: { builtin: { handle: "0x<align><data>" } } #-}` block at the
end of the file. Every consumer (interpreter, lowerings, code generation) understands a
`DenseElementsAttr`, so the blobs are turned into raw-byte dense attributes right after parsing;
the blobs used that way leave the metadata block (printing them twice would double a model's size).
"""
from __future__ import annotations

import re
from typing import Optional, Union

from ..diagnostics import Diagnostic
from .dense import DenseElementsAttr, DenseResourceAttr
from .types import IntegerType, ShapedType, element_type

Entries = dict  # name -> str (a quoted value, kept with its quotes, or a bare word) | Entries

#: a token's start: a quote (the string's end is found by `_string_end`), punctuation or a bare word
_TOKEN = re.compile(r'\s*(?:(")|([{}:,])|([^\s{}:,"]+))')
#: a string with escapes (a backslash escapes any character but a newline)
_ESCAPED = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


class MetadataError(ValueError):
    pass


def parse_metadata(text: str) -> Entries:
    """The `key: value` tree inside `{-# ... #-}` (values: quoted strings, bare words, or trees)."""
    body = text.strip()
    if not (body.startswith("{-#") and body.endswith("#-}")):
        raise MetadataError("a metadata block starts with '{-#' and ends with '#-}'")
    entries, _ = _entries(_tokens(body, 3, len(body) - 3), 0, closing=None)
    return entries


def _tokens(text: str, pos: int, stop: int) -> list[str]:
    """The tokens of `text[pos:stop]` (read in place: a weight's blob is tens of megabytes)."""
    out = []
    while pos < stop:
        m = _TOKEN.match(text, pos, stop)
        if m is None or m.end() == pos:
            if text[pos:stop].strip():
                raise MetadataError(f"unexpected text in the metadata block: {text[pos:min(pos + 20, stop)]!r}")
            break
        if m.group(1):
            end = _string_end(text, m.end(), stop)
            if end == -1 or text.find("\\", m.end(), end) != -1 and not _ESCAPED.fullmatch(text, m.start(1), end):
                raise MetadataError(f"unexpected text in the metadata block: {text[pos:min(pos + 20, stop)]!r}")
            out.append(text[m.start(1):end])
            pos = end
        else:
            out.append(m.group(2) or m.group(3))
            pos = m.end()
    return out


def _string_end(text: str, pos: int, stop: int) -> int:
    """Just past the quote that closes the string whose body starts at `pos` (a quote after an even
    run of backslashes), or -1. A search for the quote, not a regex stepping through each character."""
    while True:
        quote = text.find('"', pos, stop)
        if quote == -1:
            return -1
        escape = quote
        while escape > pos and text[escape - 1] == "\\":
            escape -= 1
        if (quote - escape) % 2 == 0:
            return quote + 1
        pos = quote + 1


def _entries(tokens: list[str], pos: int, closing: Optional[str]) -> tuple[Entries, int]:
    entries: Entries = {}
    while pos < len(tokens) and tokens[pos] != closing:
        key = tokens[pos].strip('"')
        if pos + 2 >= len(tokens) or tokens[pos + 1] != ":":
            raise MetadataError(f"expected 'key: value' in the metadata block after {key!r}")
        value: Union[str, Entries]
        if tokens[pos + 2] == "{":
            value, pos = _entries(tokens, pos + 3, "}")
            pos += 1  # the closing brace
        else:
            value, pos = tokens[pos + 2], pos + 3
        entries[key] = value
        if pos < len(tokens) and tokens[pos] == ",":
            pos += 1
    if closing is not None and pos >= len(tokens):
        raise MetadataError("unbalanced '{' in the metadata block")
    return entries, pos


def format_metadata(entries: Entries) -> Optional[str]:
    """The block for `entries` as MLIR prints it; None when nothing is left."""
    if not entries:
        return None
    return "{-#\n" + _format(entries, 1) + "\n#-}"


def _format(entries: Entries, depth: int) -> str:
    pad = "  " * depth
    lines = []
    for key, value in entries.items():
        shown = value if isinstance(value, str) else "{\n" + _format(value, depth + 1) + f"\n{pad}}}"
        lines.append(f"{pad}{key}: {shown}")
    return ",\n".join(lines)


def blob_bytes(quoted: str) -> bytes:
    """The data of a resource blob: `"0x" + 4-byte little-endian alignment + data`, as hex."""
    start, stop = (1, len(quoted) - 1) if len(quoted) >= 2 and quoted[0] == quoted[-1] == '"' else (0, len(quoted))
    if not quoted.startswith("0x", start, stop) or stop - start < 10:
        raise MetadataError("a resource blob is a hex string \"0x...\" starting with its 4-byte alignment")
    try:
        return bytes.fromhex(quoted[start + 10:stop])   # (one copy of tens of megabytes, not three)
    except ValueError:
        raise MetadataError("a resource blob holds hex digits only") from None


def dense_from_blob(data: bytes, type) -> DenseElementsAttr:
    """A raw-bytes dense attribute of `type` holding `data` (bools packed into bits, as `dense<"0x...">` holds them)."""
    if isinstance(element_type(type), IntegerType) and element_type(type).width == 1:
        import numpy as np  # here, for i1 blobs only: every parse imports this module, and numpy costs 0.1 s
        data = np.packbits(np.frombuffer(data, np.uint8) != 0, bitorder="little").tobytes()
    return DenseElementsAttr(type, raw=data)


def _expected_bytes(type) -> Optional[int]:
    elt = element_type(type)
    width = getattr(elt, "width", None)
    count = type.num_elements if isinstance(type, ShapedType) else None
    if not isinstance(width, int) or count is None:
        return None
    return count * max(1, width // 8) if width % 8 == 0 or width == 1 else None


def inline_dense_resources(module, metadata: Optional[str]) -> tuple[Optional[str], list[Diagnostic]]:
    """Replace each `dense_resource<h>` whose blob the metadata holds by its dense constant.

    Returns the metadata without the blobs used (verbatim when none was; None if nothing is left)
    and the problems: only a block that cannot be read. A handle without a usable blob (none, or
    one whose size does not fit the type) stays as it is, as MLIR's parser leaves it; running it
    then says which value it cannot read."""
    if not metadata or "dialect_resources" not in metadata:
        return metadata, []
    try:
        entries = parse_metadata(metadata)
    except MetadataError as e:
        return metadata, [Diagnostic("error", f"file metadata: {e}", module.span)]
    blobs = entries.get("dialect_resources", {}).get("builtin", {})
    if not isinstance(blobs, dict) or not blobs:
        return metadata, []
    used = set()
    for op in module.walk():
        for name, attr in op.attributes.items():
            if not isinstance(attr, DenseResourceAttr) or attr.handle not in blobs:
                continue
            try:
                data = blob_bytes(blobs[attr.handle])
            except MetadataError:
                continue
            want = _expected_bytes(attr.type)
            if want is not None and len(data) != want:
                continue
            op.attributes[name] = dense_from_blob(data, attr.type)
            used.add(attr.handle)
    if not used:
        return metadata, []
    for handle in used:
        del blobs[handle]
    if not blobs:
        del entries["dialect_resources"]["builtin"]
        if not entries["dialect_resources"]:
            del entries["dialect_resources"]
    return format_metadata(entries), []
