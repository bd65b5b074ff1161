"""The quant dialect's own bytecode encoding of its types (QuantDialectBytecode.td), read as type text.

Codes 1 `any` (without, 2 with, an expressed type), 3 `calibrated`, 4 `uniform`, 5 `uniform`
per axis; flags bit 0 is "signed"; scales are doubles (their bits as a signed varint). The
text is what MLIR prints, with the storage range only where it is not the type's full range.
"""
from __future__ import annotations

import re
import struct
from typing import Callable

from .bytecode_encoding import ByteReader, float_literal


def _double(r: ByteReader) -> str:
    return float_literal(struct.unpack("<d", (r.signed() & ((1 << 64) - 1)).to_bytes(8, "little"))[0])


def _storage(flags: int, storage: str, lo: int, hi: int) -> str:
    m = re.fullmatch(r"i(\d+)", storage)
    if not m:
        return storage if (lo, hi) == (0, 0) else f"{storage}<{lo}:{hi}>"
    width, signed = int(m.group(1)), bool(flags & 1)
    text = ("i" if signed else "u") + str(width)
    full = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    return text if (lo, hi) == full else f"{text}<{lo}:{hi}>"


def _scale(scale: str, zero_point: int) -> str:
    return scale if zero_point == 0 else f"{scale}:{zero_point}"


def quant_type(r: ByteReader, type_of: Callable[[ByteReader], str]) -> str:
    code = r.varint()
    if code in (1, 2):
        flags, storage = r.varint(), type_of(r)
        expressed = type_of(r) if code == 2 else None
        text = _storage(flags, storage, r.signed(), r.signed())
        return f"!quant.any<{text}" + (f":{expressed}>" if expressed else ">")
    if code == 3:
        expressed = type_of(r)
        return f"!quant.calibrated<{expressed}<{_double(r)}:{_double(r)}>>"
    if code == 4:
        flags, storage, expressed = r.varint(), type_of(r), type_of(r)
        scale, zero_point, lo, hi = _double(r), r.signed(), r.signed(), r.signed()
        return f"!quant.uniform<{_storage(flags, storage, lo, hi)}:{expressed}, {_scale(scale, zero_point)}>"
    if code == 5:
        flags, storage, expressed, axis = r.varint(), type_of(r), type_of(r), r.varint()
        lo, hi = r.signed(), r.signed()
        scales = [_double(r) for _ in range(r.varint())]
        zero_points = [r.signed() for _ in range(r.varint())]
        if len(scales) != len(zero_points):
            raise r.fail("a per-axis quantized type with unequal scales and zero points")
        pairs = ", ".join(_scale(s, z) for s, z in zip(scales, zero_points))
        return f"!quant.uniform<{_storage(flags, storage, lo, hi)}:{expressed}:{axis}, {{{pairs}}}>"
    raise r.fail(f"quant type code {code} is not supported")
