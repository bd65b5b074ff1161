"""MLIR bytecode (`.mlirbc`, https://mlir.llvm.org/docs/BytecodeFormat/) read into MLIR text.

The reader decodes every section (strings, dialects and op names, attributes and
types with their offsets, properties, resources, the IR) and writes the module in
generic form, which the text parser then turns into IR: one way from input to IR,
so a bytecode file gets the same IR, spans, verifier and editor features as the
text it stands for. Attributes and types are stored as their assembly text, or in a
dialect's own encoding: builtin's is decoded here, stablehlo's and quant's in their
modules; an op's properties by the tables of `bytecode_properties`.

Not decoded: other dialects' own encodings (the error names the dialect), and locations
(read, not attached: the text has none). Bad input raises `BytecodeError`, one line
with the byte offset.
"""
from __future__ import annotations

import re
import struct
from typing import Optional

import numpy as np

from ..dialects import lookup
from .bytecode_encoding import MAGIC, BytecodeError, ByteReader, is_bytecode  # noqa: F401 (the API)
from .bytecode_properties import UNNAMED_TRAILING, attribute_order, is_required, segment_counts
from .bytecode_quant import quant_type
from .bytecode_stablehlo import stablehlo_attribute, stablehlo_type

# Section ids (MLIR's bytecode::Section).
_STRING, _DIALECT, _ATTR_TYPE, _ATTR_TYPE_OFFSET, _IR, _RESOURCE, _RESOURCE_OFFSET, _DIALECT_VERSIONS, \
    _PROPERTIES = range(9)
#: The versions this reader knows: 6 is what iree-opt 3.13 writes (native properties
#: with ODS segment sizes as sparse arrays), 4 what mlirtext writes (inherent attributes in
#: the attribute dictionary, op names without a "registered" flag).
_MIN_VERSION, _MAX_VERSION = 4, 6
_NATIVE_PROPERTIES = 5

# Op encoding mask bits (bytecode::OpEncodingMask).
_HAS_ATTRS, _HAS_RESULTS, _HAS_OPERANDS, _HAS_SUCCESSORS, _HAS_REGIONS, _HAS_USE_LIST_ORDERS, \
    _HAS_PROPERTIES = (1 << i for i in range(7))

_DYNAMIC = -(1 << 63)    # ShapedType::kDynamic
_FLOAT_BITS = {"bf16": 16, "f16": 16, "f32": 32, "f64": 64, "f80": 80, "f128": 128}
#: numpy forms of the element types whose dense elements are printed as values.
_DTYPES = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "si8": np.int8, "si16": np.int16,
           "si32": np.int32, "si64": np.int64, "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32,
           "ui64": np.uint64, "index": np.int64, "f16": np.float16, "f32": np.float32, "f64": np.float64}
_HEX_ABOVE = 100

#: Builtin type codes 21 on: the small float types, in MLIR's order.
_SMALL_FLOATS = ("tf32", "f8E5M2", "f8E4M3", "f8E4M3FN", "f8E5M2FNUZ", "f8E4M3FNUZ", "f8E4M3B11FNUZ", "f8E3M4",
                 "f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E8M0FNU")
_IDENTITY_MAP = re.compile(r"affine_map<\((d\d+(?:, d\d+)*)?\) -> \(\1\)>")


def _quote(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.extend(f"\\{b:02X}" for b in ch.encode("utf-8"))
    return '"' + "".join(out) + '"'


def _nested(texts: list, shape: list) -> str:
    """Elements in row-major order as MLIR's nested list literal of `shape` (`[]` when empty)."""
    if not shape:
        return texts[0]
    if len(shape) == 1:
        return "[" + ", ".join(texts) + "]"
    step = len(texts) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(texts[k * step:(k + 1) * step], shape[1:]) for k in range(shape[0])) + "]"


def _unquote(body: str) -> str:
    """The inverse of `_quote` (without the quotes)."""
    return re.sub(r'\\([0-9A-F]{2}(?:\\[0-9A-F]{2})*|["\\])',
                  lambda m: m.group(1) if len(m.group(1)) == 1 else
                  bytes.fromhex(m.group(1).replace("\\", "")).decode("utf-8", "replace"), body)


def _symbol(name: str) -> str:
    return "@" + (name if re.fullmatch(r"[A-Za-z_][\w$.-]*", name) else _quote(name))


def _float_text(bits: int, width: int, ty: str) -> str:
    """A float attribute's value as text that reads back to the same bits."""
    if ty in ("f32", "f64", "f16"):
        value = np.frombuffer(bits.to_bytes(width // 8, "little"), {"f16": np.float16, "f32": np.float32,
                                                                    "f64": np.float64}[ty])[0]
        if np.isfinite(value):
            text = repr(float(value)) if ty == "f64" else str(value)
            mantissa, e, exponent = text.partition("e")
            return (mantissa if "." in mantissa else mantissa + ".0") + e + exponent    # MLIR wants the '.'

    return f"0x{bits:0{width // 4}X}"


class _Decoder:
    def __init__(self, data: bytes):
        self.data = data
        self.strings: list[str] = []
        self.dialects: list[str] = []
        self.op_names: list[tuple[str, bool]] = []
        self.attr_spans: list = []     # (dialect, custom, start, end) per attribute, then per type
        self.type_spans: list = []
        self.attrs: dict = {}
        self.types: dict = {}
        self.resources: list[str] = []          # key of each resource handle, in index order
        self.resource_text: dict = {}           # dialect -> [(key, text value)]
        self.properties: list[tuple[int, int]] = []
        self.version = 0
        self.value_types: dict = {}     # value name -> its type, to fill in operand types at the end
        self.n_values = self.n_blocks = 0

    # -- header and sections --------------------------------------------------------------
    def decode(self) -> str:
        r = ByteReader(self.data)
        if r.bytes(4) != MAGIC:
            raise BytecodeError("not MLIR bytecode: the file does not start with 'ML\\xefR'")
        self.version = r.varint()
        if not _MIN_VERSION <= self.version <= _MAX_VERSION:
            raise BytecodeError(f"unsupported bytecode version {self.version} at byte 4 "
                                f"(this reader knows {_MIN_VERSION} to {_MAX_VERSION})")
        r.cstring()     # producer
        sections: dict = {}
        while not r.empty():
            at = r.pos
            sid, sub = r.section()
            if sid in sections:
                r.pos = at
                raise r.fail(f"section {sid} appears twice")
            sections[sid] = sub
        for need in (_STRING, _DIALECT, _ATTR_TYPE, _ATTR_TYPE_OFFSET, _IR, _PROPERTIES):
            if need not in sections and not (need == _PROPERTIES and self.version < _NATIVE_PROPERTIES):
                raise BytecodeError(f"malformed bytecode at byte {len(self.data)}: missing section {need}")
        self._strings(sections[_STRING])
        self._dialect_section(sections[_DIALECT])
        self._offsets(sections[_ATTR_TYPE_OFFSET], sections[_ATTR_TYPE])
        if (_RESOURCE in sections) != (_RESOURCE_OFFSET in sections):
            raise BytecodeError(f"malformed bytecode at byte {len(self.data)}: a resource section without "
                                "its offset section")
        if _RESOURCE in sections:
            self._resource_section(sections[_RESOURCE], sections[_RESOURCE_OFFSET])
        if _PROPERTIES in sections:
            self._properties_section(sections[_PROPERTIES])
        body = self._ir(sections[_IR])
        return body + self._resource_metadata()

    def _strings(self, r: ByteReader) -> None:
        n = r.varint()
        lengths = [r.varint() for _ in range(n)][::-1]
        start = r.end - sum(lengths)
        if start < r.pos:
            raise r.fail("string lengths exceed the string section")
        for length in lengths:      # each length counts the string's terminating NUL
            if not length or self.data[start + length - 1]:
                raise r.fail("a string of the string section without its terminating NUL")
            self.strings.append(self.data[start:start + length - 1].decode("utf-8", "replace"))
            start += length

    def string(self, r: ByteReader, index: Optional[int] = None) -> str:
        at = r.pos
        i = r.varint() if index is None else index
        if i >= len(self.strings):
            r.pos = at
            raise r.fail(f"string index {i} out of range")
        return self.strings[i]

    def _dialect_section(self, r: ByteReader) -> None:
        for _ in range(r.varint()):
            index, versioned = r.flagged()
            self.dialects.append(self.string(r, index))
            if versioned:
                sid, _version = r.section()
                if sid != _DIALECT_VERSIONS:
                    raise r.fail("expected a dialect version section")
        r.varint()      # number of op names, a reservation hint
        while not r.empty():
            dialect = self._dialect(r)
            for _ in range(r.varint()):
                index, registered = r.flagged() if self.version >= _NATIVE_PROPERTIES else (r.varint(), True)
                self.op_names.append((f"{dialect}.{self.string(r, index)}", registered))

    def _dialect(self, r: ByteReader) -> str:
        at = r.pos
        i = r.varint()
        if i >= len(self.dialects):
            r.pos = at
            raise r.fail(f"dialect index {i} out of range")
        return self.dialects[i]

    def _offsets(self, r: ByteReader, data: ByteReader) -> None:
        num_attrs, num_types = r.varint(), r.varint()
        pos = data.pos
        spans = []
        while not r.empty():
            dialect = self._dialect(r)
            for _ in range(r.varint()):
                size, custom = r.flagged()
                spans.append((dialect, custom, pos, pos + size))
                pos += size
        if len(spans) != num_attrs + num_types or pos > data.end:
            raise r.fail("attribute/type offsets do not match their section")
        self.attr_spans, self.type_spans = spans[:num_attrs], spans[num_attrs:]

    # -- attributes and types, as text ----------------------------------------------------
    def attr(self, r: ByteReader) -> str:
        at = r.pos
        i = r.varint()
        if i >= len(self.attr_spans):
            r.pos = at
            raise r.fail(f"attribute index {i} out of range")
        return self.attr_at(i)

    def type(self, r: ByteReader) -> str:
        at = r.pos
        i = r.varint()
        if i >= len(self.type_spans):
            r.pos = at
            raise r.fail(f"type index {i} out of range")
        return self.type_at(i)

    def attr_at(self, i: int) -> str:
        if i not in self.attrs:
            self.attrs[i] = None        # a cycle reads as a failure, not a recursion error
            self.attrs[i] = self._entry(self.attr_spans[i], self._builtin_attr, "attribute")
        elif self.attrs[i] is None:
            raise BytecodeError(f"malformed bytecode at byte {self.attr_spans[i][2]}: attribute {i} "
                                "refers to itself")
        return self.attrs[i]

    def type_at(self, i: int) -> str:
        if i not in self.types:
            self.types[i] = None
            self.types[i] = self._entry(self.type_spans[i], self._builtin_type, "type")
        elif self.types[i] is None:
            raise BytecodeError(f"malformed bytecode at byte {self.type_spans[i][2]}: type {i} "
                                "refers to itself")
        return self.types[i]

    def _entry(self, span, builtin, what: str) -> str:
        dialect, custom, start, end = span
        r = ByteReader(self.data, start, end)
        if not custom:
            return r.cstring()
        if dialect == "builtin":
            text = builtin(r)
        elif dialect == "quant" and what == "type":
            text = quant_type(r, self.type)
        elif dialect == "stablehlo":
            text = (stablehlo_attribute if what == "attribute" else stablehlo_type)(r)
        else:
            raise r.fail(f"the {dialect} dialect's own bytecode encoding of a {what} is not supported")
        if not r.empty():
            raise r.fail(f"trailing bytes after a builtin {what}")
        return text

    def _array(self, r: ByteReader, item) -> list:
        return [item(r) for _ in range(r.varint())]

    def _builtin_attr(self, r: ByteReader) -> str:
        code = r.varint()
        if code == 0:       # ArrayAttr
            return "[" + ", ".join(self._array(r, self.attr)) + "]"
        if code == 1:       # DictionaryAttr
            return "{" + ", ".join(self._named(r) for _ in range(r.varint())) + "}"
        if code == 2:       # StringAttr
            return _quote(self.string(r))
        if code == 3:       # StringAttr with a type
            s = _quote(self.string(r))
            return f"{s} : {self.type(r)}"
        if code == 4:       # FlatSymbolRefAttr
            return _symbol(self._string_attr(r))
        if code == 5:       # SymbolRefAttr
            root = _symbol(self._string_attr(r))
            return root + "".join("::" + self.attr(r) for _ in range(r.varint()))
        if code == 6:       # TypeAttr
            return self.type(r)
        if code == 7:       # UnitAttr
            return "unit"
        if code == 8:       # IntegerAttr
            ty = self.type(r)
            value = self._known_width_int(r, self._int_width(ty, r))
            if ty == "i1":
                return "true" if value & 1 else "false"
            return f"{self._signed_for(ty, value)} : {ty}"
        if code == 9:       # FloatAttr
            ty = self.type(r)
            width = _FLOAT_BITS.get(ty) or self._float_width(ty, r)
            return f"{_float_text(self._known_width_int(r, width), width, ty)} : {ty}"
        if code in (10, 11, 12, 13, 14, 15):      # locations: read, not attached
            return self._location(r, code)
        if code == 16:      # DenseResourceElementsAttr
            ty = self.type(r)
            at = r.pos
            i = r.varint()
            if i >= len(self.resources):
                r.pos = at
                raise r.fail(f"resource index {i} out of range")
            return f"dense_resource<{self.resources[i]}> : {ty}"
        if code == 17:      # DenseArrayAttr
            ty = self.type(r)
            size = r.varint()
            blob = r.bytes(r.varint())
            if not size:
                return f"array<{ty}>"
            return f"array<{ty}: {', '.join(self._array_elements(ty, blob, size, r))}>"
        if code == 18:      # DenseIntOrFPElementsAttr
            ty = self.type(r)
            blob = r.bytes(r.varint())
            if re.fullmatch(r"(?:tensor|vector)<(?:\d+x)*i1>", ty):
                return f"dense<{self._bools(blob, ty, r)}> : {ty}"
            return f"dense<{self._dense_values(blob, ty)}> : {ty}"
        if code == 19:      # DenseStringElementsAttr
            ty = self.type(r)
            splat = r.varint()
            n = 1 if splat else self._num_elements(ty, r)
            values = [_quote(self.string(r)) for _ in range(n)]
            body = values[0] if splat else "[" + ", ".join(values) + "]"
            return f"dense<{body}> : {ty}"
        if code == 23:      # AffineMapAttr
            return self._affine_map(r)
        if code == 25:      # StridedLayoutAttr
            offset = r.signed()
            strides = ", ".join("?" if d == _DYNAMIC else str(d) for d in self._array(r, ByteReader.signed))
            return f"strided<[{strides}]" + (f", offset: {'?' if offset == _DYNAMIC else offset}>" if offset else ">")
        raise r.fail(f"builtin attribute code {code} is not supported")

    def _affine_map(self, r: ByteReader) -> str:
        """MLIR's affine map encoding: (dims << 2) | kind, kind 0 identity, 1 permutation,
        2 a list of dims, 3 any map (symbols, results, expression trees)."""
        head = r.varint()
        n_dims, kind = head >> 2, head & 3
        dims = [f"d{k}" for k in range(n_dims)]
        syms: list = []
        if kind == 0:
            results = dims
        elif kind == 1:
            results = [self._dim(r, dims) for _ in dims]
        elif kind == 2:
            results = [self._dim(r, dims) for _ in range(r.varint())]
        else:
            syms = [f"s{k}" for k in range(r.varint())]
            results = [self._affine_expr(r, dims, syms, False) for _ in range(r.varint())]
        return f"affine_map<({', '.join(dims)})" + (f"[{', '.join(syms)}]" if syms else "") + \
            f" -> ({', '.join(results)})>"

    @staticmethod
    def _dim(r: ByteReader, dims: list) -> str:
        k = r.varint()
        if k >= len(dims):
            raise r.fail(f"affine dimension {k} of {len(dims)}")
        return dims[k]

    def _affine_expr(self, r: ByteReader, dims: list, syms: list, tight: bool) -> str:
        """One expression, tags 0 dim, 1 symbol, 2 constant, then add, mul, mod, floordiv,
        ceildiv; an add inside a multiplicative operand is parenthesized."""
        tag = r.varint()
        if tag == 0:
            return self._dim(r, dims)
        if tag == 1:
            return self._dim(r, syms)
        if tag == 2:
            return str(r.signed())
        if tag > 7:
            raise r.fail(f"affine expression tag {tag}")
        lhs = self._affine_expr(r, dims, syms, tag != 3)
        rhs = self._affine_expr(r, dims, syms, True)
        if tag == 3:
            if rhs.endswith(" * -1"):
                text = f"{lhs} - {rhs[:-5]}"
            elif rhs.startswith("-") and rhs[1:].isdigit():
                text = f"{lhs} - {rhs[1:]}"
            else:
                text = f"{lhs} + {rhs}"
            return f"({text})" if tight else text
        return f"{lhs} {('*', 'mod', 'floordiv', 'ceildiv')[tag - 4]} {rhs}"

    def _named(self, r: ByteReader) -> str:
        name = self._string_attr(r)
        value = self.attr(r)
        key = name if re.fullmatch(r"[A-Za-z_][\w$.]*", name) else _quote(name)
        return key if value == "unit" else f"{key} = {value}"

    def _string_attr(self, r: ByteReader) -> str:
        """The value of a string attribute (a dictionary key, a symbol name), unquoted."""
        text = self.attr(r)
        if len(text) < 2 or text[0] != '"' or text[-1] != '"':
            raise r.fail(f"expected a string attribute, got {text[:40]}")
        return _unquote(text[1:-1])

    def _location(self, r: ByteReader, code: int) -> str:
        if code == 10:
            self.attr(r), self.attr(r)
        elif code == 11:
            self.attr(r), r.varint(), r.varint()
        elif code in (12, 13):
            self._array(r, self.attr)
            if code == 13:
                self.attr(r)
        elif code == 14:
            self.attr(r), self.attr(r)
        return "loc(unknown)"

    def _int_width(self, ty: str, r: ByteReader) -> int:
        if ty == "index":
            return 64
        m = re.fullmatch(r"[su]?i(\d+)", ty)
        if not m:
            raise r.fail(f"integer attribute of type {ty}")
        return int(m.group(1))

    def _float_width(self, ty: str, r: ByteReader) -> int:
        if ty in _SMALL_FLOATS[1:]:
            return int(ty[1])
        if ty == "tf32":
            return 19
        raise r.fail(f"float attribute of type {ty}")

    @staticmethod
    def _signed_for(ty: str, value: int) -> int:
        """The value as MLIR prints it: unsigned for `ui` types, two's complement otherwise."""
        width = 64 if ty == "index" else int(re.sub(r"\D", "", ty))
        value &= (1 << width) - 1
        if ty.startswith("ui"):
            return value
        return value - (1 << width) if value >> (width - 1) else value

    def _known_width_int(self, r: ByteReader, width: int) -> int:
        if width <= 8:
            return r.byte()
        if width <= 64:
            return r.signed() & ((1 << 64) - 1)
        words = [r.signed() & ((1 << 64) - 1) for _ in range(r.varint())]
        return sum(w << (64 * i) for i, w in enumerate(words))

    def _array_elements(self, ty: str, blob: bytes, size: int, r: ByteReader) -> list:
        if ty == "i1":
            return ["true" if b else "false" for b in blob[:size]]
        fmt = {"i8": "b", "i16": "h", "i32": "i", "i64": "q", "f32": "f", "f64": "d"}.get(ty)
        if fmt is None or struct.calcsize(fmt) * size != len(blob):
            raise r.fail(f"dense array of {size} x {ty} in {len(blob)} bytes")
        values = struct.unpack(f"<{size}{fmt}", blob)
        if ty[0] == "f":
            return [_float_text(int.from_bytes(struct.pack("<" + fmt, v), "little"), 8 * struct.calcsize(fmt),
                                ty) for v in values]
        return [str(v) for v in values]

    @staticmethod
    def _dense_values(blob: bytes, ty: str) -> str:
        """Elements as MLIR prints them: a splat (one element's bytes) as its value, up to
        `_HEX_ABOVE` elements as a flat list, more (or an element type without a numpy
        form) as the raw bytes in hex, which MLIR reads the same."""
        m = re.fullmatch(r"(?:tensor|vector)<((?:\d+x)*)([a-z]+\d*)>", ty)
        dtype = _DTYPES.get(m.group(2)) if m else None
        if dtype is not None and len(blob) % np.dtype(dtype).itemsize == 0:
            values = np.frombuffer(blob, dtype)
            shape = [int(d) for d in m.group(1).split("x") if d]
            count = int(np.prod(shape, dtype=np.int64))
            if count == 0:
                return ""
            if len(values) == 1 or len(values) == count <= _HEX_ABOVE:
                kind = m.group(2)
                texts = [_float_text(int(v.view(f"u{v.itemsize}")), 8 * v.itemsize, kind) if kind[0] == "f"
                         else str(int(v)) for v in values]
                return texts[0] if len(values) == 1 and count != 1 or not shape else _nested(texts, shape)
        return f'"0x{blob.hex().upper()}"'

    def _bools(self, blob: bytes, ty: str, r: ByteReader) -> str:
        """i1 elements, packed eight to a byte (one byte 0x00 or 0xFF: a splat), as text."""
        n = self._num_elements(ty, r)
        if len(blob) == 1 and blob[0] in (0, 0xFF):
            return "true" if blob[0] else "false"
        if len(blob) != (n + 7) // 8:
            raise r.fail(f"{len(blob)} bytes of booleans for {ty}")
        return "[" + ", ".join("true" if blob[k // 8] >> (k % 8) & 1 else "false" for k in range(n)) + "]"

    def _num_elements(self, ty: str, r: ByteReader) -> int:
        m = re.match(r"(?:tensor|vector)<((?:\d+x)*)", ty)
        if not m:
            raise r.fail(f"string elements of type {ty}")
        return int(np.prod([int(d) for d in m.group(1).split("x") if d], dtype=np.int64))

    def _shape(self, r: ByteReader) -> str:
        return "".join(("?" if d == _DYNAMIC else str(d)) + "x" for d in self._array(r, ByteReader.signed))

    def _builtin_type(self, r: ByteReader) -> str:
        code = r.varint()
        if code == 0:
            v = r.varint()
            return ("i", "si", "ui")[v & 3] + str(v >> 2) if v & 3 != 3 else r.fail("bad signedness")
        simple = {1: "index", 3: "bf16", 4: "f16", 5: "f32", 6: "f64", 7: "f80", 8: "f128", 12: "none",
                  **{21 + k: name for k, name in enumerate(_SMALL_FLOATS)}}
        if code in simple:
            return simple[code]
        if code == 2:
            ins, outs = self._array(r, self.type), self._array(r, self.type)
            res = outs[0] if len(outs) == 1 and not outs[0].startswith("(") else "(" + ", ".join(outs) + ")"
            return "(" + ", ".join(ins) + ") -> " + res
        if code == 9:
            return f"complex<{self.type(r)}>"
        if code in (10, 11):
            space = self.attr(r) if code == 11 else None
            shape, elt, layout = self._shape(r), self.type(r), self.attr(r)
            extra = "" if _IDENTITY_MAP.fullmatch(layout) else ", " + layout
            return f"memref<{shape}{elt}{extra}" + (f", {space}>" if space else ">")
        if code in (13, 14):
            encoding = self.attr(r) if code == 14 else None
            shape, elt = self._shape(r), self.type(r)
            return f"tensor<{shape}{elt}" + (f", {encoding}>" if encoding else ">")
        if code == 15:
            return "tuple<" + ", ".join(self._array(r, self.type)) + ">"
        if code in (16, 17):
            space = self.attr(r) if code == 17 else None
            return f"memref<*x{self.type(r)}" + (f", {space}>" if space else ">")
        if code == 18:
            return f"tensor<*x{self.type(r)}>"
        if code == 19:
            return f"vector<{self._shape(r)}{self.type(r)}>"
        raise r.fail(f"builtin type code {code} is not supported")

    # -- resources and properties ---------------------------------------------------------
    def _resource_section(self, data: ByteReader, r: ByteReader) -> None:
        for _ in range(r.varint()):     # external resource groups, named by a string
            self._resource_group(r, data, None)
        while not r.empty():
            self._resource_group(r, data, self._dialect(r))

    def _resource_group(self, r: ByteReader, data: ByteReader, dialect: Optional[str]) -> None:
        if dialect is None:
            dialect = self.string(r)
        entries = self.resource_text.setdefault(dialect, [])
        for _ in range(r.varint()):
            key = self.string(r)
            size = r.varint()
            kind = r.byte()
            start = data.pos
            data.bytes(size)
            value = ByteReader(self.data, start, start + size)
            if kind == 0:           # blob
                alignment, length = value.varint(), value.varint()
                value.align(alignment)
                blob = value.bytes(length)
                text = f'"0x{alignment.to_bytes(4, "little").hex().upper()}{blob.hex().upper()}"'
            elif kind == 1:
                text = "true" if value.byte() else "false"
            elif kind == 2:
                text = _quote(self.string(value))
            else:
                raise value.fail(f"unknown resource kind {kind}")
            entries.append((key, text))
            self.resources.append(key)

    def _resource_metadata(self) -> str:
        groups = [f"    {d}: {{\n" + ",\n".join(f"      {k}: {v}" for k, v in entries) + "\n    }"
                  for d, entries in self.resource_text.items() if entries]
        if not groups:
            return ""
        return "\n{-#\n  dialect_resources: {\n" + ",\n".join(groups) + "\n  }\n#-}\n"

    def _properties_section(self, r: ByteReader) -> None:
        count = r.varint()
        while not r.empty():
            size = r.varint()
            self.properties.append((r.pos, r.pos + size))
            r.bytes(size)
        if len(self.properties) != count:
            raise r.fail(f"{len(self.properties)} properties entries, {count} announced")

    def _op_properties(self, r: ByteReader, name: str, registered: bool) -> str:
        at = r.pos
        i = r.varint()
        if i >= len(self.properties):
            r.pos = at
            raise r.fail(f"properties index {i} out of range")
        start, end = self.properties[i]
        p = ByteReader(self.data, start, end)
        if not registered:      # written by a tool that did not know the op: one dictionary
            text = self.attr(p)
            if not p.empty() or not text.startswith("{"):
                raise p.fail(f"the properties of the unregistered op '{name}' are not one dictionary")
            return "<" + text + ">"
        opdef = lookup(name)
        if opdef is None:
            raise p.fail(f"properties of '{name}', an op this reader does not know")
        names = attribute_order(name, opdef.properties)
        segments = [n for n in opdef.properties if n.endswith("SegmentSizes")]
        items = []
        for key in names:
            if is_required(name, key):
                items.append(f"{key} = {self.attr(p)}")
            else:
                index, present = p.flagged()
                if present:
                    if index >= len(self.attr_spans):
                        raise p.fail(f"attribute index {index} out of range in the properties of '{name}'")
                    value = self.attr_at(index)
                    items.append(key if value == "unit" else f"{key} = {value}")
        for _ in range(UNNAMED_TRAILING.get(name, 0)):
            if p.flagged()[1]:
                raise p.fail(f"'{name}' has an inherent attribute this reader cannot name")
        for key, size in zip(sorted(segments), segment_counts(name)):
            items.append(f"{key} = array<i32: {', '.join(map(str, self._sparse_array(p, size, name)))}>")
        if not p.empty():
            raise p.fail(f"the properties of '{name}' hold more than its declared attributes "
                         f"({', '.join(names + segments)})")
        return "<{" + ", ".join(items) + "}>" if items else ""

    @staticmethod
    def _sparse_array(r: ByteReader, size: Optional[int], op: str) -> list:
        """A segment-size array: `(n << 1) | sparse`, then n values, or n (value << bits | index)
        pairs after the index width `bits` (the array's length is the op's segment count)."""
        n, sparse = r.flagged()
        if not sparse:
            return [r.varint() for _ in range(n)]
        if size is None:
            raise r.fail(f"the segment sizes of '{op}' are sparse and its segment count is not known")
        bits = r.varint()
        values = [0] * size
        for _ in range(n):
            pair = r.varint()
            index = pair & ((1 << bits) - 1)
            if index >= size:
                raise r.fail(f"segment {index} of the {size} of '{op}'")
            values[index] = pair >> bits
        return values

    # -- the IR ---------------------------------------------------------------------------
    # Values get names %0, %1, ... and blocks ^bb0, ^bb1, ... in file order, unique in the whole
    # module. An operand's type is written as a marker (`\0name\0`) and filled in at the end,
    # since a use may come before its definition (graph regions, successors' operands).
    def _ir(self, r: ByteReader) -> str:
        out: list[str] = []
        n_ops, has_args = r.flagged()
        if has_args:
            raise r.fail("the top-level block has arguments")
        top = _Scope()      # the top level reserves no values: its ops' results are unnamed
        for _ in range(n_ops):
            self._op(r, out, 0, top, [])
        if not r.empty():
            raise r.fail("trailing bytes after the top-level operations")
        missing = [name for name in top.forward if name not in self.value_types]
        if missing:
            raise BytecodeError(f"malformed bytecode: value {missing[0]} is used but never defined")
        return re.sub("\0(%[0-9]+)\0", lambda m: self.value_types[m.group(1)], "\n".join(out)) + "\n"

    def _op(self, r: ByteReader, out: list, depth: int, scope: "_Scope", blocks: list) -> None:
        at = r.pos
        i = r.varint()
        if i >= len(self.op_names):
            r.pos = at
            raise r.fail(f"operation name index {i} out of range")
        name, registered = self.op_names[i]
        mask = r.byte()
        self.attr(r)    # location
        attrs = self.attr(r) if mask & _HAS_ATTRS else None
        props = self._op_properties(r, name, registered) if mask & _HAS_PROPERTIES else None
        types = self._array(r, self.type) if mask & _HAS_RESULTS else []
        operands = [self._use(r, scope) for _ in range(r.varint())] if mask & _HAS_OPERANDS else []
        succs = []
        if mask & _HAS_SUCCESSORS:
            for _ in range(r.varint()):
                at = r.pos
                b = r.varint()
                if b >= len(blocks):
                    r.pos = at
                    raise r.fail(f"successor block {b} out of range")
                succs.append(blocks[b])
        if mask & _HAS_USE_LIST_ORDERS:
            self._skip_use_lists(r, len(types))
        n_regions, isolated = r.flagged() if mask & _HAS_REGIONS else (0, False)
        results = self._define(r, scope, types)
        pad = "  " * depth
        line = pad + (", ".join(results) + " = " if results else "") + _quote(name) + \
            "(" + ", ".join(operands) + ")"
        if succs:
            line += "[" + ", ".join(succs) + "]"
        if props:
            line += " " + props
        tail = (" " + attrs if attrs and attrs != "{}" else "") + \
            " : (" + ", ".join(f"\0{v}\0" for v in operands) + ") -> " + \
            (types[0] if len(types) == 1 and not types[0].startswith("(") else "(" + ", ".join(types) + ")")
        if not n_regions:
            out.append(line + tail)
            return
        out.append(line + " (")
        body, inner = r, scope
        if isolated:
            sid, body = r.section()
            if sid != _IR:
                raise r.fail("expected an IR section for an isolated region")
            inner = _Scope()
        for k in range(n_regions):
            self._region(body, out, depth + 1, inner)
            if k + 1 < n_regions:
                out[-1] += ","
        if isolated:
            if not body.empty():
                raise body.fail("trailing bytes after an isolated region")
            self._check_defined(body, inner)
        out.append(pad + ")" + tail)

    def _region(self, r: ByteReader, out: list, depth: int, scope: "_Scope") -> None:
        pad = "  " * depth
        n_blocks = r.varint()
        if not n_blocks:
            out.append(pad + "{\n" + pad + "}")
            return
        n_values = r.varint()
        if n_values > r.end - r.pos:    # each value's definition takes at least a byte
            raise r.fail(f"a region of {n_values} values in {r.end - r.pos} bytes")
        first = len(scope.values)
        scope.next.append(first)
        scope.values.extend([None] * n_values)
        block_names = [f"^bb{self.n_blocks + b}" for b in range(n_blocks)]
        self.n_blocks += n_blocks
        out.append(pad + "{")
        for label in block_names:
            n_ops, has_args = r.flagged()
            args = []
            if has_args:
                types = []
                for _ in range(r.varint()):
                    at = r.pos
                    type_index, has_loc = r.flagged()
                    if type_index >= len(self.type_spans):
                        r.pos = at
                        raise r.fail(f"type index {type_index} out of range")
                    types.append(self.type_at(type_index))
                    if has_loc:
                        self.attr(r)
                args = [f"{v}: {t}" for v, t in zip(self._define(r, scope, types), types)]
                if r.byte():
                    self._skip_use_lists(r, len(args))
            out.append(pad + label + ("(" + ", ".join(args) + ")" if args else "") + ":")
            for _ in range(n_ops):
                self._op(r, out, depth + 1, scope, block_names)
        out.append(pad + "}")
        del scope.values[first:]
        scope.next.pop()

    def _define(self, r: ByteReader, scope: "_Scope", types: list) -> list:
        if not scope.next:      # the top level: results exist but no one can use them
            names = [f"%{self.n_values + k}" for k in range(len(types))]
            self.n_values += len(types)
        else:
            start = scope.next[-1]
            if start + len(types) > len(scope.values):
                raise r.fail(f"value {start + len(types) - 1} outside its region's {len(scope.values)} values")
            names = []
            for k in range(start, start + len(types)):
                if scope.values[k] is None:     # else a use came first and named it
                    scope.values[k] = f"%{self.n_values}"
                    self.n_values += 1
                names.append(scope.values[k])
            scope.next[-1] = start + len(types)
        self.value_types.update(zip(names, types))
        return names

    def _use(self, r: ByteReader, scope: "_Scope") -> str:
        at = r.pos
        i = r.varint()
        if i >= len(scope.values):
            r.pos = at
            raise r.fail(f"value index {i} out of range")
        if scope.values[i] is None:     # a forward reference: the definition takes this name
            scope.values[i] = f"%{self.n_values}"
            self.n_values += 1
            scope.forward.append(scope.values[i])
        return scope.values[i]

    def _check_defined(self, r: ByteReader, scope: "_Scope") -> None:
        for name in scope.forward:
            if name not in self.value_types:
                raise r.fail(f"a value used in the region is never defined")

    def _skip_use_lists(self, r: ByteReader, n_values: int) -> None:
        """Use-list orders: read and dropped (the IR keeps no use-list order)."""
        count = r.varint() if n_values > 1 else 1
        for _ in range(count):
            if n_values > 1:
                r.varint()
            n, _pairs = r.flagged()
            for _ in range(n):
                r.varint()


class _Scope:
    """The values of one isolated region: a slot per value of each open region, by index."""

    def __init__(self):
        self.values: list = []
        self.next: list = []        # the next slot to define, per open region
        self.forward: list = []     # names handed out to uses before their definitions


def to_text(data: bytes) -> str:
    """The module in `data` (MLIR bytecode) as generic-form MLIR text."""
    return _Decoder(data).decode()
