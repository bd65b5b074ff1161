"""MLIR's builtin dialect in bytecode (BuiltinDialectBytecode.td): its attributes and types as text.

Each entry starts with a code; references to other attributes, types and strings go
through the reader of the file (`refs`: its `attr`, `type`, `string` and `resources`).
The text is what MLIR prints, which the text parser reads back to the same attribute.
"""
from __future__ import annotations

import re
import struct

import numpy as np

from .bytecode_encoding import ByteReader, float_literal

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


def quote(s: str) -> str:
    """`s` as an MLIR string literal, non-printable bytes as `\\XX` escapes."""
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
    """The inverse of `quote` (without the quotes)."""
    return re.sub(r'\\([0-9A-F]{2}(?:\\[0-9A-F]{2})*|["\\])',
                  lambda m: m.group(1) if len(m.group(1)) == 1 else
                  bytes.fromhex(m.group(1).replace("\\", "")).decode("utf-8", "replace"), body)


def _symbol(name: str) -> str:
    return "@" + (name if re.fullmatch(r"[A-Za-z_][\w$.-]*", name) else quote(name))


def _float_text(bits: int, width: int, ty: str) -> str:
    """A float attribute's value as text that reads back to the same bits."""
    if ty in ("f32", "f64", "f16"):
        value = np.frombuffer(bits.to_bytes(width // 8, "little"), {"f16": np.float16, "f32": np.float32,
                                                                    "f64": np.float64}[ty])[0]
        if np.isfinite(value):
            return float_literal(float(value)) if ty == "f64" else float_literal(float(str(value)))

    return f"0x{bits:0{width // 4}X}"

class BuiltinDecoder:
    """Builtin attributes and types of one file, resolving references through `refs`."""

    def __init__(self, refs):
        self.refs = refs

    def attribute(self, r: ByteReader) -> str:
        code = r.varint()
        if code == 0:       # ArrayAttr
            return "[" + ", ".join(r.array(self.refs.attr)) + "]"
        if code == 1:       # DictionaryAttr
            return "{" + ", ".join(self._named(r) for _ in range(r.varint())) + "}"
        if code == 2:       # StringAttr
            return quote(self.refs.string(r))
        if code == 3:       # StringAttr with a type
            s = quote(self.refs.string(r))
            return f"{s} : {self.refs.type(r)}"
        if code == 4:       # FlatSymbolRefAttr
            return _symbol(self._string_attr(r))
        if code == 5:       # SymbolRefAttr
            root = _symbol(self._string_attr(r))
            return root + "".join("::" + self.refs.attr(r) for _ in range(r.varint()))
        if code == 6:       # TypeAttr
            return self.refs.type(r)
        if code == 7:       # UnitAttr
            return "unit"
        if code == 8:       # IntegerAttr
            ty = self.refs.type(r)
            value = self._known_width_int(r, self._int_width(ty, r))
            if ty == "i1":
                return "true" if value & 1 else "false"
            return f"{self._signed_for(ty, value)} : {ty}"
        if code == 9:       # FloatAttr
            ty = self.refs.type(r)
            width = _FLOAT_BITS.get(ty) or self._float_width(ty, r)
            return f"{_float_text(self._known_width_int(r, width), width, ty)} : {ty}"
        if code in (10, 11, 12, 13, 14, 15, 22):      # locations
            return "loc(" + self._location(r, code) + ")"
        if code == 16:      # DenseResourceElementsAttr
            ty = self.refs.type(r)
            at = r.pos
            i = r.varint()
            if i >= len(self.refs.resources):
                r.pos = at
                raise r.fail(f"resource index {i} out of range")
            return f"dense_resource<{self.refs.resources[i]}> : {ty}"
        if code == 17:      # DenseArrayAttr
            ty = self.refs.type(r)
            size = r.varint()
            blob = r.bytes(r.varint())
            if not size:
                return f"array<{ty}>"
            return f"array<{ty}: {', '.join(self._array_elements(ty, blob, size, r))}>"
        if code == 18:      # DenseIntOrFPElementsAttr
            ty = self.refs.type(r)
            blob = r.bytes(r.varint())
            if re.fullmatch(r"(?:tensor|vector)<(?:\d+x)*i1>", ty):
                return f"dense<{self._bools(blob, ty, r)}> : {ty}"
            return f"dense<{self._dense_values(blob, ty)}> : {ty}"
        if code == 19:      # DenseStringElementsAttr
            ty = self.refs.type(r)
            splat = r.varint()
            n = 1 if splat else self._num_elements(ty, r)
            values = [quote(self.refs.string(r)) for _ in range(n)]
            body = values[0] if splat else "[" + ", ".join(values) + "]"
            return f"dense<{body}> : {ty}"
        if code == 23:      # AffineMapAttr
            return self._affine_map(r)
        if code == 25:      # StridedLayoutAttr
            offset = r.signed()
            strides = ", ".join("?" if d == _DYNAMIC else str(d) for d in r.array(ByteReader.signed))
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
        value = self.refs.attr(r)
        key = name if re.fullmatch(r"[A-Za-z_][\w$.]*", name) else quote(name)
        return key if value == "unit" else f"{key} = {value}"

    def _string_attr(self, r: ByteReader) -> str:
        """The value of a string attribute (a dictionary key, a symbol name), unquoted."""
        text = self.refs.attr(r)
        if len(text) < 2 or text[0] != '"' or text[-1] != '"':
            raise r.fail(f"expected a string attribute, got {text[:40]}")
        return _unquote(text[1:-1])

    def _location(self, r: ByteReader, code: int) -> str:
        """A location's body, as MLIR prints it inside `loc(...)`."""
        if code == 10:      # CallSiteLoc: callee, caller
            callee, caller = self._inner_location(r), self._inner_location(r)
            return f"callsite({callee} at {caller})"
        if code == 11:      # FileLineColLoc
            return f"{quote(self._string_attr(r))}:{r.varint()}:{r.varint()}"
        if code == 22:      # FileLineColRange: the file, then line, column, [end line,] end column
            name = quote(self._string_attr(r))
            numbers = r.array(ByteReader.varint)
            if len(numbers) > 4:
                raise r.fail(f"a file range location of {len(numbers)} numbers")
            start = "{}:{}:{}".format(name, *(numbers + [0, 0])[:2])
            if len(numbers) < 3:
                return start
            return start + (f" to :{numbers[2]}" if len(numbers) == 3 else f" to {numbers[2]}:{numbers[3]}")
        if code in (12, 13):    # FusedLoc, FusedLoc with metadata
            locations = ", ".join(self._inner_location(r) for _ in range(r.varint()))
            metadata = f"<{self.refs.attr(r)}>" if code == 13 else ""
            return f"fused{metadata}[{locations}]"
        if code == 14:      # NameLoc: name, child (left out when unknown)
            name, child = quote(self._string_attr(r)), self._inner_location(r)
            return name if child == "unknown" else f"{name}({child})"
        return "unknown"

    def _inner_location(self, r: ByteReader) -> str:
        """A location nested in another: its body, without `loc(...)`."""
        text = self.refs.attr(r)
        if not (text.startswith("loc(") and text.endswith(")")):
            raise r.fail(f"expected a location, got {text[:40]}")
        return text[4:-1]

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
        return "".join(("?" if d == _DYNAMIC else str(d)) + "x" for d in r.array(ByteReader.signed))

    def type(self, r: ByteReader) -> str:
        code = r.varint()
        if code == 0:
            v = r.varint()
            return ("i", "si", "ui")[v & 3] + str(v >> 2) if v & 3 != 3 else r.fail("bad signedness")
        simple = {1: "index", 3: "bf16", 4: "f16", 5: "f32", 6: "f64", 7: "f80", 8: "f128", 12: "none",
                  **{21 + k: name for k, name in enumerate(_SMALL_FLOATS)}}
        if code in simple:
            return simple[code]
        if code == 2:
            ins, outs = r.array(self.refs.type), r.array(self.refs.type)
            res = outs[0] if len(outs) == 1 and not outs[0].startswith("(") else "(" + ", ".join(outs) + ")"
            return "(" + ", ".join(ins) + ") -> " + res
        if code == 9:
            return f"complex<{self.refs.type(r)}>"
        if code in (10, 11):
            space = self.refs.attr(r) if code == 11 else None
            shape, elt, layout = self._shape(r), self.refs.type(r), self.refs.attr(r)
            extra = "" if _IDENTITY_MAP.fullmatch(layout) else ", " + layout
            return f"memref<{shape}{elt}{extra}" + (f", {space}>" if space else ">")
        if code in (13, 14):
            encoding = self.refs.attr(r) if code == 14 else None
            shape, elt = self._shape(r), self.refs.type(r)
            return f"tensor<{shape}{elt}" + (f", {encoding}>" if encoding else ">")
        if code == 15:
            return "tuple<" + ", ".join(r.array(self.refs.type)) + ">"
        if code in (16, 17):
            space = self.refs.attr(r) if code == 17 else None
            return f"memref<*x{self.refs.type(r)}" + (f", {space}>" if space else ">")
        if code == 18:
            return f"tensor<*x{self.refs.type(r)}>"
        if code == 19:
            return f"vector<{self._shape(r)}{self.refs.type(r)}>"
        raise r.fail(f"builtin type code {code} is not supported")

    # -- resources and properties ---------------------------------------------------------
