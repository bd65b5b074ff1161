"""Builtin types: immutable, hashable, printed in MLIR's own spelling.

Dialect types that mlirtext does not model (`!llvm.ptr`, `!quant.uniform<...>`)
are `DialectType`s: kept verbatim and printed back unchanged.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

#: A dynamic dimension (`?`) in a shape.
DYNAMIC = None


class Type:
    __slots__ = ()

    def __repr__(self) -> str:
        return f"<type {self}>"


@dataclass(frozen=True, slots=True, repr=False)
class IntegerType(Type):
    width: int
    signedness: str = ""  # "" signless, "s" signed, "u" unsigned

    def __str__(self) -> str:
        return f"{self.signedness}i{self.width}"

    @property
    def is_signless(self) -> bool:
        return not self.signedness

    @property
    def is_unsigned(self) -> bool:
        return self.signedness == "u"


@dataclass(frozen=True, slots=True, repr=False)
class IndexType(Type):
    def __str__(self) -> str:
        return "index"


#: Float kinds MLIR knows, with their bit widths.
FLOAT_WIDTHS = {
    "f16": 16, "bf16": 16, "f32": 32, "f64": 64, "f80": 80, "f128": 128, "tf32": 19,
    "f8E5M2": 8, "f8E4M3": 8, "f8E4M3FN": 8, "f8E5M2FNUZ": 8, "f8E4M3FNUZ": 8,
    "f8E4M3B11FNUZ": 8, "f8E3M4": 8, "f8E8M0FNU": 8,
    "f6E2M3FN": 6, "f6E3M2FN": 6, "f4E2M1FN": 4,
}


@dataclass(frozen=True, slots=True, repr=False)
class FloatType(Type):
    name: str

    def __str__(self) -> str:
        return self.name

    @property
    def width(self) -> int:
        return FLOAT_WIDTHS[self.name]


@dataclass(frozen=True, slots=True, repr=False)
class NoneType(Type):
    def __str__(self) -> str:
        return "none"


@dataclass(frozen=True, slots=True, repr=False)
class ComplexType(Type):
    element: Type

    def __str__(self) -> str:
        return f"complex<{self.element}>"


def _dims(shape, scalable=None) -> str:
    parts = []
    for i, d in enumerate(shape):
        text = "?" if d is None else str(d)
        if scalable and scalable[i]:
            text = f"[{text}]"
        parts.append(text + "x")
    return "".join(parts)


class ShapedType(Type):
    """Tensors, memrefs and vectors: a shape (None for `?`) and an element type."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def has_static_shape(self) -> bool:
        return None not in self.shape

    @property
    def num_elements(self) -> Optional[int]:
        if not self.has_static_shape:
            return None
        n = 1
        for d in self.shape:
            n *= d
        return n


@dataclass(frozen=True, slots=True, repr=False)
class RankedTensorType(ShapedType):
    shape: tuple
    element: Type
    encoding: object = None  # an Attribute, or None

    def __str__(self) -> str:
        enc = f", {self.encoding}" if self.encoding is not None else ""
        return f"tensor<{_dims(self.shape)}{self.element}{enc}>"


@dataclass(frozen=True, slots=True, repr=False)
class UnrankedTensorType(Type):
    element: Type

    def __str__(self) -> str:
        return f"tensor<*x{self.element}>"


@dataclass(frozen=True, slots=True, repr=False)
class MemRefType(ShapedType):
    shape: tuple
    element: Type
    layout: object = None        # an Attribute (affine map or strided layout), or None
    memory_space: object = None  # an Attribute, or None

    def __str__(self) -> str:
        extra = ""
        if self.layout is not None:
            extra += f", {self.layout}"
        if self.memory_space is not None:
            extra += f", {self.memory_space}"
        return f"memref<{_dims(self.shape)}{self.element}{extra}>"


@dataclass(frozen=True, slots=True, repr=False)
class UnrankedMemRefType(Type):
    element: Type
    memory_space: object = None

    def __str__(self) -> str:
        extra = f", {self.memory_space}" if self.memory_space is not None else ""
        return f"memref<*x{self.element}{extra}>"


@dataclass(frozen=True, slots=True, repr=False)
class VectorType(ShapedType):
    shape: tuple
    element: Type
    scalable: tuple = ()

    def __str__(self) -> str:
        return f"vector<{_dims(self.shape, self.scalable)}{self.element}>"


@dataclass(frozen=True, slots=True, repr=False)
class TupleType(Type):
    types: tuple

    def __str__(self) -> str:
        return f"tuple<{', '.join(map(str, self.types))}>"


@dataclass(frozen=True, slots=True, repr=False)
class FunctionType(Type):
    inputs: tuple
    results: tuple

    def __str__(self) -> str:
        return f"({', '.join(map(str, self.inputs))}) -> {format_result_types(self.results)}"


def format_result_types(results) -> str:
    """Result types as MLIR writes them after `->`: bare when exactly one non-function type."""
    if len(results) == 1 and not isinstance(results[0], FunctionType):
        return str(results[0])
    return f"({', '.join(map(str, results))})"


@dataclass(frozen=True, slots=True, repr=False)
class DialectType(Type):
    """A dialect type kept verbatim: `text` is everything after `!`."""

    text: str

    def __str__(self) -> str:
        return "!" + self.text

    @property
    def dialect(self) -> str:
        end = len(self.text)
        for stop in ".<":
            i = self.text.find(stop)
            if i != -1:
                end = min(end, i)
        return self.text[:end]

    @property
    def mnemonic(self) -> str:
        """`llvm.struct<...>` -> `struct`."""
        rest = self.text[len(self.dialect):]
        if not rest.startswith("."):
            return ""
        rest = rest[1:]
        i = rest.find("<")
        return rest if i == -1 else rest[:i]

    @property
    def body(self) -> str:
        """The text between the outermost angle brackets, or ''."""
        i = self.text.find("<")
        return self.text[i + 1:-1] if i != -1 and self.text.endswith(">") else ""


def make_dialect_type(text: str, parse: Optional[Callable[[str], Optional[Type]]] = None) -> Type:
    """`!text` as a Type: what `parse` (the type parser of the text's dialect, which the parser
    asks its registry for: `Registry.type_parser`) makes of it, else the text verbatim."""
    if parse is not None:
        t = parse(text)
        if t is not None:
            return t
    return DialectType(text)


# Commonly used instances.
i1 = IntegerType(1)
i8 = IntegerType(8)
i16 = IntegerType(16)
i32 = IntegerType(32)
i64 = IntegerType(64)
index = IndexType()
f16 = FloatType("f16")
bf16 = FloatType("bf16")
f32 = FloatType("f32")
f64 = FloatType("f64")
none = NoneType()

_INT_CACHE: dict = {}


def scalar_type_from_name(name: str) -> Optional[Type]:
    """The builtin scalar type spelled `name` (`i32`, `ui8`, `f32`, `index`...), or None."""
    t = _INT_CACHE.get(name)
    if t is not None:
        return t
    if name in FLOAT_WIDTHS:
        t = FloatType(name)
    elif name == "index":
        t = index
    elif name == "none":
        t = none
    else:
        sign = ""
        digits = name
        if name[:2] in ("si", "ui"):
            sign, digits = name[0], name[2:]
        elif name[:1] == "i":
            digits = name[1:]
        else:
            return None
        # isascii(): str.isdigit() also accepts digits like '¹' that int() rejects.
        if not (digits.isascii() and digits.isdigit()) or digits.startswith("0") or int(digits) > 16777215:
            return None
        t = IntegerType(int(digits), sign)
    _INT_CACHE[name] = t
    return t


def integer_range(t: Type) -> tuple:
    """(least, greatest) value a literal of integer or index type `t` may have, as MLIR's parser
    takes them: a signless integer holds its signed and its unsigned values; index is 64 bits."""
    width = 64 if isinstance(t, IndexType) else t.width
    if isinstance(t, IntegerType) and t.is_unsigned:
        return 0, (1 << width) - 1
    if isinstance(t, IntegerType) and t.signedness == "s":
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return -(1 << (width - 1)), (1 << width) - 1


def element_type(t: Type) -> Type:
    """The element type of a shaped type, or the type itself."""
    if isinstance(t, (ShapedType, UnrankedTensorType, UnrankedMemRefType)):
        return t.element
    return t


def is_float(t: Type) -> bool:
    return isinstance(t, FloatType)


def is_integer(t: Type) -> bool:
    return isinstance(t, (IntegerType, IndexType))
