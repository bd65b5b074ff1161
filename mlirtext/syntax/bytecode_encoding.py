"""The primitives of MLIR bytecode: the magic number, varints, strings, sections, errors."""
from __future__ import annotations

from typing import Optional

MAGIC = b"ML\xefR"
#: Section ids past the last one (MLIR's bytecode::Section::kNumSections).
NUM_SECTIONS = 9


def float_literal(value: float) -> str:
    """A finite float as an MLIR float literal (MLIR wants the '.': `1.0e-05`, not `1e-05`)."""
    mantissa, e, exponent = repr(value).partition("e")
    return (mantissa if "." in mantissa else mantissa + ".0") + e + exponent


def is_bytecode(data: bytes) -> bool:
    return data[:4] == MAGIC


class BytecodeError(Exception):
    """Malformed or unsupported bytecode: one line, with the byte offset where it was found."""


def float_literal(value: float) -> str:
    """A finite float as an MLIR float literal (MLIR wants the '.': `1.0e-05`, not `1e-05`)."""
    mantissa, e, exponent = repr(value).partition("e")
    return (mantissa if "." in mantissa else mantissa + ".0") + e + exponent


def is_bytecode(data: bytes) -> bool:
    return data[:4] == MAGIC


class ByteReader:
    """A cursor over `data[start:end]`; offsets in errors are from the file's start."""

    def __init__(self, data: bytes, start: int = 0, end: Optional[int] = None):
        self.data, self.pos, self.end = data, start, len(data) if end is None else end

    def fail(self, message: str) -> BytecodeError:
        return BytecodeError(f"malformed bytecode at byte {self.pos}: {message}")

    def empty(self) -> bool:
        return self.pos >= self.end

    def byte(self) -> int:
        if self.pos >= self.end:
            raise self.fail("unexpected end of data")
        self.pos += 1
        return self.data[self.pos - 1]

    def bytes(self, n: int) -> bytes:
        if n > self.end - self.pos:
            raise self.fail(f"{n} bytes wanted, {self.end - self.pos} left")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def varint(self) -> int:
        first = self.byte()
        if first & 1:
            return first >> 1
        if first == 0:
            return int.from_bytes(self.bytes(8), "little")
        extra = (first & -first).bit_length() - 1      # trailing zeros: the number of further bytes
        return int.from_bytes(bytes([first]) + self.bytes(extra), "little") >> (extra + 1)

    def signed(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def array(self, item) -> list:
        """A varint count, then that many `item(self)`."""
        return [item(self) for _ in range(self.varint())]

    def flagged(self) -> tuple[int, bool]:
        v = self.varint()
        return v >> 1, bool(v & 1)

    def cstring(self) -> str:
        nul = self.data.find(b"\0", self.pos, self.end)
        if nul < 0:
            raise self.fail("string without its terminating NUL")
        text = self.data[self.pos:nul].decode("utf-8", "replace")
        self.pos = nul + 1
        return text

    def align(self, alignment: int) -> None:
        if alignment & (alignment - 1) or alignment == 0:
            raise self.fail(f"alignment {alignment} is not a power of two")
        while self.pos % alignment:
            if self.byte() != 0xCB:
                raise self.fail("expected alignment padding byte 0xCB")

    def section(self) -> tuple[int, "ByteReader"]:
        at = self.pos
        head = self.byte()
        length = self.varint()
        sid = head & 0x7F
        if sid >= NUM_SECTIONS:
            self.pos = at
            raise self.fail(f"invalid section id {sid}")
        if head & 0x80:
            self.align(self.varint())
        start = self.pos
        self.bytes(length)
        return sid, ByteReader(self.data, start, start + length)
