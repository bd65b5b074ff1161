"""Builtin attributes: immutable values printed in MLIR's own spelling.

Dialect attributes that mlirtext does not model (`#stablehlo<...>`,
`#llvm.linkage<...>`) are `OpaqueAttr`s kept verbatim; a dialect module reads
their body when it needs the meaning.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Optional

from .types import FloatType, Type, i1, i64, f64


class Attribute:
    __slots__ = ()

    def __repr__(self) -> str:
        return f"<attr {self}>"


@dataclass(frozen=True, slots=True, repr=False)
class IntegerAttr(Attribute):
    value: int
    type: Type = i64

    def __str__(self) -> str:
        if self.type == i1:
            return "true" if self.value else "false"
        if self.type == i64:
            return str(self.value)
        return f"{self.value} : {self.type}"


def BoolAttr(value: bool) -> IntegerAttr:  # noqa: N802 - reads like MLIR's BoolAttr
    return IntegerAttr(1 if value else 0, i1)


_HEX_FORMATS = {"f64": ("<d", "<Q", 16), "f32": ("<f", "<I", 8), "f16": ("<e", "<H", 4)}


def float_bits_hex(value: float, type_name: str) -> Optional[str]:
    """The bit pattern of `value` as MLIR prints non-finite floats (`0x7FC00000`)."""
    fmt = _HEX_FORMATS.get(type_name)
    if fmt is not None:
        bits = struct.unpack(fmt[1], struct.pack(fmt[0], value))[0]
        return f"0x{bits:0{fmt[2]}X}"
    if type_name == "bf16":
        bits = struct.unpack("<I", struct.pack("<f", value))[0] >> 16
        return f"0x{bits:04X}"
    return None


def format_float(value: float) -> str:
    """A float literal MLIR reads back to the same value."""
    text = repr(float(value))
    if "e" in text and "." not in text.split("e")[0]:
        mant, exp = text.split("e")
        text = f"{mant}.0e{exp}"
    return text


@dataclass(frozen=True, slots=True, repr=False)
class FloatAttr(Attribute):
    value: float
    type: Type = f64
    hex: Optional[str] = None  # the bit pattern when the source wrote one

    def __str__(self) -> str:
        if self.hex is not None:
            body = self.hex
        elif math.isfinite(self.value):
            body = format_float(self.value)
        else:
            body = float_bits_hex(self.value, str(self.type)) or format_float(self.value)
        # a bare hex literal would read back as an integer: non-finite f64 values keep their type
        bare = self.type == f64 and self.hex is None and math.isfinite(self.value)
        return body if bare else f"{body} : {self.type}"


def escape_string(value: str) -> str:
    out = []
    for ch in value:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@dataclass(frozen=True, slots=True, repr=False)
class StringAttr(Attribute):
    value: str
    type: Optional[Type] = None

    def __str__(self) -> str:
        text = escape_string(self.value)
        return text if self.type is None else f"{text} : {self.type}"


@dataclass(frozen=True, slots=True, repr=False)
class UnitAttr(Attribute):
    def __str__(self) -> str:
        return "unit"


@dataclass(frozen=True, slots=True, repr=False)
class ArrayAttr(Attribute):
    items: tuple

    def __str__(self) -> str:
        return f"[{', '.join(map(str, self.items))}]"

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True, slots=True, repr=False)
class DenseArrayAttr(Attribute):
    """`array<i64: 1, 2, 3>`."""

    element_type: Type
    values: tuple

    def __str__(self) -> str:
        if not self.values:
            return f"array<{self.element_type}>"
        if self.element_type == i1:
            vals = ", ".join("true" if v else "false" for v in self.values)
        elif isinstance(self.element_type, FloatType):
            vals = ", ".join(format_float(v) for v in self.values)
        else:
            vals = ", ".join(str(v) for v in self.values)
        return f"array<{self.element_type}: {vals}>"

    def __iter__(self):
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)


_BARE_KEY = None


def format_attr_name(name: str) -> str:
    """A dictionary key: bare when it is a valid identifier, else a string."""
    global _BARE_KEY
    if _BARE_KEY is None:
        import re
        _BARE_KEY = re.compile(r"[A-Za-z_][\w$.]*\Z")
    return name if _BARE_KEY.match(name) else escape_string(name)


def format_attr_entry(name: str, value: Attribute) -> str:
    if isinstance(value, UnitAttr):
        return format_attr_name(name)
    return f"{format_attr_name(name)} = {value}"


@dataclass(frozen=True, slots=True, repr=False)
class DictionaryAttr(Attribute):
    items: tuple  # ((name, Attribute), ...)

    def __str__(self) -> str:
        return "{" + ", ".join(format_attr_entry(k, v) for k, v in self.items) + "}"

    def get(self, name: str, default=None):
        for k, v in self.items:
            if k == name:
                return v
        return default

    def as_dict(self) -> dict:
        return dict(self.items)


@dataclass(frozen=True, slots=True, repr=False)
class SymbolRefAttr(Attribute):
    root: str
    nested: tuple = ()

    def __str__(self) -> str:
        return "::".join(format_symbol(n) for n in (self.root, *self.nested))


def format_symbol(name: str) -> str:
    import re
    return "@" + (name if re.fullmatch(r"[A-Za-z_][\w$.]*", name) else escape_string(name))


@dataclass(frozen=True, slots=True, repr=False)
class TypeAttr(Attribute):
    type: Type

    def __str__(self) -> str:
        return str(self.type)


@dataclass(frozen=True, slots=True, repr=False)
class OpaqueAttr(Attribute):
    """A dialect attribute or builtin form kept verbatim (`text` is printed as is)."""

    text: str

    def __str__(self) -> str:
        return self.text

    @property
    def dialect(self) -> str:
        """`#stablehlo<comparison_direction GT>` -> `stablehlo`."""
        body = self.text[1:] if self.text.startswith("#") else self.text
        end = len(body)
        for stop in ".<":
            i = body.find(stop)
            if i != -1:
                end = min(end, i)
        return body[:end]

    @property
    def body(self) -> str:
        i = self.text.find("<")
        return self.text[i + 1:-1] if i != -1 and self.text.endswith(">") else ""


@dataclass(frozen=True, slots=True, repr=False)
class LocationAttr(Attribute):
    """`loc(...)`, kept verbatim."""

    text: str

    def __str__(self) -> str:
        return self.text


unit = UnitAttr()
true = BoolAttr(True)
false = BoolAttr(False)


def int_attr(value: int, type: Type = i64) -> IntegerAttr:
    return IntegerAttr(int(value), type)


