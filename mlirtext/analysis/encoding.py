"""Bytes of a file that are not UTF-8, as errors where the editor shows them.

An editor decodes such a file with U+FFFD in place of each invalid sequence (VS Code does, as
WHATWG's decoder and Python's "replace" handler do: one U+FFFD per maximal invalid subpart) and
sends the server that text, in which a U+FFFD in a comment parses fine. mlirtext reads only UTF-8
(`mlirtext opt` refuses the file), so when the text has a U+FFFD the file's own bytes are read
and each invalid sequence is reported where its U+FFFD is.
"""
from __future__ import annotations

import codecs
import threading
from typing import Optional

from .document import DocDiagnostic

#: The invalid sequences (byte start, byte end) the decoder met, per thread.
_met = threading.local()


def _record(error: UnicodeDecodeError):
    _met.spans.append((error.start, error.end))
    return "\ufffd", error.end


codecs.register_error("mlirtext-record-invalid", _record)


def invalid_sequences(data: bytes) -> tuple[str, list[tuple[int, int, int]]]:
    """(`data` decoded with U+FFFD for each invalid sequence, [(its offset in that text, byte
    start, byte end)])."""
    _met.spans = []
    try:
        text = data.decode("utf-8", "mlirtext-record-invalid")
        spans = _met.spans
    finally:
        _met.spans = []
    found, chars, previous = [], 0, 0
    for start, end in spans:
        chars += len(data[previous:start].decode("utf-8"))   # valid between two invalid sequences
        found.append((chars, start, end))
        chars += 1
        previous = end
    return text, found


def encoding_diagnostics(text: str, data: Optional[bytes]) -> list[DocDiagnostic]:
    """Errors for the bytes of `data` (the file `text` was read from; None when there is none)
    that are not UTF-8, at their U+FFFD in `text`. When `text` is no longer what `data` decodes to
    (edited since), each U+FFFD that remains is reported, as the file on disk says why it is there."""
    if data is None or "\ufffd" not in text:
        return []
    decoded, found = invalid_sequences(data)
    if not found:
        return []   # the U+FFFD are the file's own (bytes EF BF BD): valid UTF-8
    bom = 1 if decoded.startswith("\ufeff") and not text.startswith("\ufeff") else 0   # editors drop it
    if decoded[bom:] == text:
        return [DocDiagnostic(at - bom, at - bom + 1, "error", _message(data[start:end], start), [])
                for at, start, end in found]
    _, start, end = found[0]
    line = data.count(b"\n", 0, start) + 1
    reason = f"the file on disk is not UTF-8 text ({_bytes(data[start:end])} at byte offset {start}, line {line})"
    return [DocDiagnostic(at, at + 1, "error", f"U+FFFD replacement character: {reason}; save the file as UTF-8", [])
            for at in _replacements(text)]


def _message(sequence: bytes, offset: int) -> str:
    return (f"invalid UTF-8 {'byte' if len(sequence) == 1 else 'bytes'} {_bytes(sequence)} at byte offset {offset}: "
            "MLIR files are UTF-8 text (the editor shows U+FFFD in its place, and saving writes U+FFFD there)")


def _bytes(sequence: bytes) -> str:
    return " ".join(f"0x{b:02x}" for b in sequence)


def _replacements(text: str) -> list[int]:
    found, at = [], text.find("\ufffd")
    while at >= 0:
        found.append(at)
        at = text.find("\ufffd", at + 1)
    return found
