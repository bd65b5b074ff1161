"""Bytes of a file that are not UTF-8, reported where the editor's text has their U+FFFD."""
from __future__ import annotations

from mlirtext.analysis.encoding import encoding_diagnostics, invalid_sequences


def test_each_invalid_sequence_is_found_at_its_replacement_character():
    data = "é".encode() + b"\xff\xfe" + "€".encode()[:2] + b"x" + "\ufffd".encode() + b"\x80"
    text, found = invalid_sequences(data)
    assert text == data.decode("utf-8", "replace") == "é\ufffd\ufffd\ufffdx\ufffd\ufffd"
    # One U+FFFD per maximal invalid subpart (a cut-off three-byte sequence is one), as editors decode.
    assert found == [(1, 2, 3), (2, 3, 4), (3, 4, 6), (6, 10, 11)]
    assert invalid_sequences("ok \ufffd".encode()) == ("ok \ufffd", [])


def test_diagnostics_only_for_bytes_that_are_not_utf8():
    data = b"// a\xffb\n\xef\xbb\xbf"
    text = data.decode("utf-8", "replace")
    (d,) = encoding_diagnostics(text, data)
    assert (d.start, d.end, d.severity) == (4, 5, "error")
    assert d.message.startswith("invalid UTF-8 byte 0xff at byte offset 4: MLIR files are UTF-8 text")
    # The editor drops a byte order mark: the offsets follow.
    (d,) = encoding_diagnostics(text, b"\xef\xbb\xbf" + data)
    assert (d.start, d.message.split(":")[0]) == (4, "invalid UTF-8 byte 0xff at byte offset 7")
    assert encoding_diagnostics("// a\ufffdb\n", None) == []                       # no file to read
    assert encoding_diagnostics("// a\ufffdb\n", "// a\ufffdb\n".encode()) == []   # the file's own U+FFFD
    assert encoding_diagnostics("// ab\n", b"// a\xffb\n") == []                   # no U+FFFD in the text
