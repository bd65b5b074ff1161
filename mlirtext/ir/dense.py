"""`dense<...>` and `dense_resource<...>` elements attributes.

The body is parsed once into a flat tuple of Python scalars (or kept as the hex
blob the source wrote, or as raw bytes); the interpreter turns it into a numpy array when it runs.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Optional

from .attributes import Attribute, format_float
from .types import (ComplexType, FloatType, IntegerType, IndexType, ShapedType, Type, element_type, i1,
                    integer_range)


class DenseParseError(ValueError):
    """Bad dense literal; `offset` is relative to the start of the body."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.offset = offset


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class DenseElementsAttr(Attribute):
    """Listed `values`, or raw bytes: `hex_text` as the source wrote it (`dense<"0x...">`) or `raw`,
    the bytes themselves (a weight read from a resource blob, a layout the compiler made). Each form
    of raw bytes gives the other on demand (`hex`, `raw_bytes()`): a model's weights go from blob to
    array to a packed layout and into the module file without a hex string made and read back at
    each step (a third of a ViT's compile time)."""
    type: Type
    values: tuple = ()          # flat, row-major; one value when `splat`
    splat: bool = False
    hex_text: Optional[str] = None   # "0x..." when the source gave raw bytes
    raw: Optional[bytes] = None      # those bytes (made from `hex_text` when first asked for)
    #: the hash, once computed: CSE hashes an op's attributes at every scope it looks in, and a
    #: folded constant's tuple of tens of thousands of values is hashed element by element each time
    _hash: Optional[int] = field(default=None, init=False, compare=False)
    #: (dtype, shape, array) of the values as numpy made them once (ir/arrays.py): the constant
    #: folder reads each constant it made back at the next fold, and tens of thousands of Python
    #: scalars convert slowly
    array_memo: Optional[tuple] = field(default=None, init=False, compare=False)

    def __eq__(self, other) -> bool:
        return isinstance(other, DenseElementsAttr) and self.key == other.key

    def __hash__(self) -> int:
        if self._hash is None:
            object.__setattr__(self, "_hash", hash(self.key))
        return self._hash

    def remember_array(self, dtype, shape: tuple, array) -> None:
        object.__setattr__(self, "array_memo", (dtype, shape, array))

    def __reduce__(self):
        # (without the cached hash: strings hash differently in another process; raw bytes made
        # from the source's hex are made again there, not sent twice)
        raw = self.raw if self.hex_text is None else None
        return DenseElementsAttr, (self.type, self.values, self.splat, self.hex_text, raw)

    @property
    def is_raw(self) -> bool:
        """Whether the elements are raw bytes (`dense<"0x...">`), not listed values."""
        return self.hex_text is not None or self.raw is not None

    @property
    def hex(self) -> Optional[str]:
        """The raw bytes as printed, `"0x..."` (upper-case hex when made from bytes); None for
        listed values."""
        if self.hex_text is None and self.raw is not None:
            object.__setattr__(self, "hex_text", "0x" + self.raw.hex().upper())
        return self.hex_text

    def raw_bytes(self) -> bytes:
        """The raw bytes (ValueError when the source's hex string is not hex digits; a
        listed-values attribute has none: ValueError too)."""
        if self.raw is None:
            if self.hex_text is None:
                raise ValueError("a dense attribute of listed values has no raw bytes")
            object.__setattr__(self, "raw", bytes.fromhex(self.hex_text[2:]))
        return self.raw

    def with_type(self, type: Type) -> "DenseElementsAttr":
        """The same elements as a value of `type` (a reshape: the same element type and count)."""
        return DenseElementsAttr(type, self.values, self.splat, self.hex_text, self.raw)

    @property
    def key(self):
        # (the bytes, not their spelling: "0xab" and "0xAB" are the same constant, and a weight
        # made from bytes is hashed without printing it)
        if not self.is_raw:
            return (self.type, self.values, self.splat, None)
        try:
            return (self.type, self.values, self.splat, self.raw_bytes())
        except ValueError:   # (not hex digits, which reading the values reports: the text is the key)
            return (self.type, self.values, self.splat, self.hex_text)

    @property
    def element_type(self) -> Type:
        return element_type(self.type)

    @property
    def shape(self) -> tuple:
        return getattr(self.type, "shape", ())

    def __str__(self) -> str:
        return f"dense<{self.body_text()}> : {self.type}"

    def body_text(self) -> str:
        if self.is_raw:
            return f'"{self.hex}"'
        fmt = _formatter(self.element_type)
        if self.splat:
            return fmt(self.values[0]) if self.values else ""
        shape = self.shape
        if not shape:
            return fmt(self.values[0]) if self.values else ""
        if 0 in shape:
            return ""
        return _nest(list(map(fmt, self.values)), shape)


def _formatter(elt: Type):
    if elt == i1:
        return lambda v: "true" if v else "false"
    if isinstance(elt, (IntegerType, IndexType)):
        return str
    if isinstance(elt, FloatType):
        return _format_float_elt
    if isinstance(elt, ComplexType):
        inner = _formatter(elt.element)
        return lambda v: f"({inner(v[0])}, {inner(v[1])})"
    return lambda v: json.dumps(v) if isinstance(v, str) else str(v)


def _format_float_elt(v) -> str:
    if isinstance(v, str):  # a hex bit pattern kept from the source
        return v
    return format_float(v)


def _nest(items: list, shape: tuple) -> str:
    """Group innermost dimension first; a loop, not recursion, so any rank prints."""
    for dim in reversed(shape):
        items = ["[" + ", ".join(items[i:i + dim]) + "]" for i in range(0, len(items), dim)]
    return items[0]


_JSON_SAFE = re.compile(r"[\[\]\s,0-9eE+\-.truefals]*\Z")
_BAD_JSON_FLOAT = re.compile(r"\d\.(?!\d)|(?<![\d])\.\d")
_TOKEN = re.compile(r"""\s*(?:(?P<num>[-+]?(?:0x[0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?))
                         |(?P<word>true|false|[-+]?inf|nan)|(?P<str>"(?:[^"\\]|\\.)*")|(?P<p>[\[\](),]))""", re.X)


def parse_dense(body: str, type: Type) -> DenseElementsAttr:
    """Parse the text between `dense<` and `>` for a value of `type`."""
    text = body.strip()
    if not isinstance(type, ShapedType):
        raise DenseParseError(f"elements literal type must be a shaped type, got {type}")
    if None in type.shape:  # as MLIR; printing would need the sizes the type does not give
        raise DenseParseError(f"elements literal type must have static shape, got {type}")
    elt = type.element
    if text.startswith('"0x') and text.endswith('"'):
        return DenseElementsAttr(type, hex_text=text[1:-1])
    if text == "":
        if type.num_elements != 0:
            raise DenseParseError(f"expected {type.num_elements} elements for {type}, got none")
        return DenseElementsAttr(type, ())
    try:
        tree = _read_tree(text)
        if not isinstance(tree, list):
            return DenseElementsAttr(type, _in_range((_convert(tree, elt),), elt), splat=True)
        flat: list = []
        shape = _flatten(tree, flat, 0, [])
        if shape[-1] == _LEAF:
            shape.pop()
    except RecursionError:  # the readers recurse per '[': `dense<[[[[...` thousands deep
        raise DenseParseError("elements literal nested too deeply") from None
    except DenseParseError:
        raise
    except ValueError as e:   # Python's int() refuses more than 4,300 decimal digits
        if "digits" not in str(e):
            raise
        raise DenseParseError("an integer in the elements literal has too many digits") from None
    expected = tuple(type.shape)
    if isinstance(elt, ComplexType):
        # a complex splat may be written as a pair: dense<(1.0, 2.0)>
        pass
    if tuple(shape) != expected:
        raise DenseParseError(
            f"inferred shape of elements literal ([{', '.join(map(str, shape))}]) does not match "
            f"type ([{', '.join('?' if d is None else str(d) for d in expected)}])")
    return DenseElementsAttr(type, _in_range(_convert_all(flat, elt), elt))


def _in_range(values: tuple, elt: Type) -> tuple:
    """`values`, when each fits integer element type `elt` (min and max: one pass each in C)."""
    if values and isinstance(elt, (IntegerType, IndexType)) and elt != i1:
        least, greatest = integer_range(elt)
        if min(values) < least or max(values) > greatest:
            raise DenseParseError(f"integer constant out of range for element type {elt}")
    return values


def _convert_all(flat: list, elt: Type) -> tuple:
    """`_convert` for every element; whole-list fast paths, as a 5 MB literal has millions."""
    kinds = set(map(type, flat))
    if kinds <= {int} and isinstance(elt, (IntegerType, IndexType)) and elt != i1:
        return tuple(flat)
    if kinds <= {int, float} and isinstance(elt, FloatType):
        return tuple(map(float, flat))
    return tuple(_convert(v, elt) for v in flat)


def _read_tree(text: str):
    # `"." in` first: the float regex alone takes seconds on a 5 MB literal of integers.
    if _JSON_SAFE.match(text) and ("." not in text or not _BAD_JSON_FLOAT.search(text)):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return _parse_tree(text)


#: Marks, in a shape being inferred, the level below the innermost dimension.
_LEAF = -1


def _flatten(tree, out: list, depth: int, shape: list) -> list:
    """Append the scalars of nested lists `tree` to `out`; the shape, maybe ending in _LEAF.

    Each level is all lists or all scalars, checked per level (not per item) so
    that a flat list of millions of numbers is one `extend`.
    """
    if depth == len(shape):
        shape.append(len(tree))
    elif shape[depth] != len(tree):
        raise DenseParseError(_INCONSISTENT)
    kinds = set(map(type, tree))
    below = shape[depth + 1] if depth + 1 < len(shape) else None
    if list not in kinds:
        if below is not None and below != _LEAF:
            raise DenseParseError(_INCONSISTENT)
        if below is None:
            shape.append(_LEAF)
        out.extend(tree)
    elif len(kinds) == 1 and below != _LEAF:
        for item in tree:
            _flatten(item, out, depth + 1, shape)
    else:
        raise DenseParseError(_INCONSISTENT)
    return shape


_INCONSISTENT = "tensor literal is invalid; ranks are not consistent between elements"


def _parse_tree(text: str):
    """A small recursive reader for literals json cannot take (hex, complex, 1., strings)."""
    pos = 0

    def next_tok():
        nonlocal pos
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise DenseParseError(f"unexpected character in elements literal: {text[pos:pos + 10]!r}", pos)
        pos = m.end()
        return m

    def value():
        m = next_tok()
        if m.group("p") == "[":
            items = []
            save = pos
            m2 = next_tok()
            if m2.group("p") == "]":
                return items
            restore(save)
            while True:
                items.append(value())
                m2 = next_tok()
                if m2.group("p") == "]":
                    return items
                if m2.group("p") != ",":
                    raise DenseParseError("expected ',' or ']' in elements literal", m2.start())
        if m.group("p") == "(":
            re_part = value()
            sep = next_tok()
            if sep.group("p") != ",":
                raise DenseParseError("expected ',' in complex literal", sep.start())
            im_part = value()
            close = next_tok()
            if close.group("p") != ")":
                raise DenseParseError("expected ')' in complex literal", close.start())
            return (re_part, im_part)
        if m.group("num") is not None:
            t = m.group("num")
            if "0x" in t:
                return t  # hex bit pattern or hex integer, decided by the element type
            return float(t) if any(c in t for c in ".eE") else int(t)
        if m.group("word") is not None:
            w = m.group("word")
            return {"true": True, "false": False}.get(w, w)
        if m.group("str") is not None:
            return json.loads(m.group("str"))
        raise DenseParseError(f"unexpected '{m.group(0).strip()}' in elements literal", m.start())

    def restore(p):
        nonlocal pos
        pos = p

    result = value()
    if _TOKEN.match(text, pos) and text[pos:].strip():
        raise DenseParseError("unexpected text after elements literal", pos)
    return result


def _convert(v, elt: Type):
    """A parsed scalar as the Python value for element type `elt`."""
    if isinstance(elt, ComplexType):
        if isinstance(v, tuple):
            return (_convert(v[0], elt.element), _convert(v[1], elt.element))
        raise DenseParseError(f"expected a complex literal '(re, im)' for element type {elt}")
    if isinstance(v, tuple):
        raise DenseParseError(f"complex literal for non-complex element type {elt}")
    if elt == i1:
        if isinstance(v, bool) or v in (0, 1):
            return int(v)
        raise DenseParseError(f"expected a boolean for element type i1, got {v}")
    if isinstance(elt, (IntegerType, IndexType)):
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, str) and v.lstrip("+-").startswith("0x"):
            return int(v, 16)
        if isinstance(v, float):
            raise DenseParseError(f"expected an integer for element type {elt}, got {v}")
        if isinstance(v, str):
            raise DenseParseError(f"expected an integer for element type {elt}, got {v}")
        return v
    if isinstance(elt, FloatType):
        if isinstance(v, bool):
            raise DenseParseError(f"expected a float for element type {elt}, got {'true' if v else 'false'}")
        if isinstance(v, str):
            if v.lstrip("+-").startswith("0x"):
                return v.upper().replace("0X", "0x")
            raise DenseParseError(f"expected a float for element type {elt}, got {v}")
        return float(v)
    return v


@dataclass(frozen=True, slots=True, repr=False)
class DenseResourceAttr(Attribute):
    """`dense_resource<handle> : type`; the blob lives in the file's dialect_resources."""

    handle: str
    type: Type

    def __str__(self) -> str:
        return f"dense_resource<{self.handle}> : {self.type}"


@dataclass(frozen=True, slots=True, repr=False)
class SelfTypedDenseAttr(Attribute):
    """`dense<tensor<2x!tosa.mxint8> : [127 : i8, -128 : i8]>`: elements of a dialect element
    type, with the shaped type inside the literal; kept verbatim (`type` is that shaped type)."""

    text: str
    type: Type

    def __str__(self) -> str:
        return self.text


def self_typed_dense_type(text: str, make_type) -> Optional[Type]:
    """The shaped type at the start of a self-typed dense literal's body (`dense<tensor<2x!d.t> : ...>`):
    `make_type(element_text)` builds the element type; None when the body does not start that way."""
    m = re.match(r"dense<\s*(tensor|vector)<", text)
    if m is None:
        return None
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"<": 1, ">": -1}.get(text[i], 0)
        i += 1
    inner = text[m.end():i - 1]
    if depth or not text[i:].lstrip().startswith(":"):
        return None
    dims = re.match(r"((?:(?:\d+|\?)x)*)", inner)
    shape = tuple(None if d == "?" else int(d) for d in dims.group(1).split("x")[:-1])
    elt = make_type(inner[dims.end():].strip())
    if elt is None:
        return None
    from .types import RankedTensorType, VectorType
    return (RankedTensorType if m.group(1) == "tensor" else VectorType)(shape, elt)
