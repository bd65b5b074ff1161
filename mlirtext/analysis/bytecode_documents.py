"""A `.mlirbc` file edited as text: its bytecode as custom-form text, and edited text back to bytecode.

The editor shows a bytecode file through a virtual document: reading decodes the bytes (MLIR
bytecode, or text MLIR that happens to carry the extension) to the custom form the user edits,
and saving encodes the text back to bytecode, only when it parses and verifies, so a broken
edit never replaces the file. The text shows the module's locations (`loc(...)` after each op
and argument, for hover and go to definition, and kept when saved) unless every one is unknown.
Every failure is one line, naming the file.
"""
from __future__ import annotations

from typing import Optional

from ..api import parse_and_verify, to_text
from ..diagnostics import has_errors
from ..dialects.registry import Registry
from ..syntax.bytecode import BytecodeError, is_bytecode, to_text as bytecode_text
from ..syntax.bytecode_writer import BytecodeWriteError, from_module


class BytecodeDocumentError(Exception):
    """Why a bytecode file cannot be shown, or an edited text cannot be saved as one: one line."""


def decode(data: bytes, name: str, registry: Optional[Registry] = None) -> str:
    """The text the editor shows for `data`: the custom form when the module parses and
    verifies, else the generic form the bytecode reads as (its diagnostics then show on it)."""
    if is_bytecode(data):
        try:
            generic = bytecode_text(data)
        except BytecodeError as e:
            raise BytecodeDocumentError(f"{name}: {e}") from None
    else:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BytecodeDocumentError(f"{name}: neither MLIR bytecode (no 'ML\\xefR' magic number) nor UTF-8 "
                                        f"text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    result = parse_and_verify(generic, name, registry)
    if has_errors(result.diagnostics) or result.module is None:
        return generic
    return to_text(result, print_locations=_has_locations(result.module), registry=registry)


def _has_locations(module) -> bool:
    """Does any op or block argument have a location other than `loc(unknown)`?"""
    for op in module.walk():
        if op.location is not None and str(op.location) != "loc(unknown)":
            return True
        for region in op.regions:
            for block in region.blocks:
                if any(a.location is not None and str(a.location) != "loc(unknown)" for a in block.arguments):
                    return True
    return False


def encode(text: str, name: str, registry: Optional[Registry] = None) -> bytes:
    """`text` as MLIR bytecode; BytecodeDocumentError with the first error when it does not parse
    and verify, or holds what bytecode cannot (a `dense_resource` without its blob)."""
    result = parse_and_verify(text, name, registry)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if errors or result.module is None:
        first = errors[0].format().splitlines()[0] if errors else f"{name}: no module"
        more = f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        raise BytecodeDocumentError(f"not saved as bytecode: {first}{more}")
    try:
        return from_module(result.module, result.aliases)
    except BytecodeWriteError as e:
        raise BytecodeDocumentError(f"not saved as bytecode: {name}: {e}") from None
