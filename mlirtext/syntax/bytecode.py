"""MLIR bytecode (`.mlirbc`, https://mlir.llvm.org/docs/BytecodeFormat/) read into MLIR text.

The reader decodes every section (strings, dialects and op names, attributes and
types with their offsets, properties, resources, the IR) and writes the module in
generic form, which the text parser then turns into IR: one way from input to IR,
so a bytecode file gets the same IR, spans, verifier and editor features as the
text it stands for. Attributes and types are stored as their assembly text, or in a
dialect's own encoding: builtin's is decoded here, stablehlo's and quant's in their
modules; an op's properties by the tables of `bytecode_properties`.

Locations (of ops and block arguments) are written after what they locate, as the text
parser reads them. Not decoded: other dialects' own encodings (the error names the dialect). Bad input raises `BytecodeError`, one line
with the byte offset.
"""
from __future__ import annotations

import re
from typing import Optional

from ..dialects import lookup
from .bytecode_builtin import BuiltinDecoder, quote
from .bytecode_encoding import MAGIC, BytecodeError, ByteReader, is_bytecode  # noqa: F401 (the API)
from .bytecode_properties import ODS_ATTRIBUTES, UNNAMED_SLOTS, attribute_order, is_required, segment_counts
from .bytecode_quant import quant_type
from .bytecode_stablehlo import chlo_attribute, stablehlo_attribute, stablehlo_type
from .context import MAX_REGION_DEPTH

# Section ids (MLIR's bytecode::Section).
_STRING, _DIALECT, _ATTR_TYPE, _ATTR_TYPE_OFFSET, _IR, _RESOURCE, _RESOURCE_OFFSET, _DIALECT_VERSIONS, \
    _PROPERTIES = range(9)
#: The versions this reader knows: 6 is what iree-opt 3.13 (and mlirtext) writes: native
#: properties, ODS segment sizes as sparse arrays; 4 keeps inherent attributes in the
#: attribute dictionary and op names without a "registered" flag.
_MIN_VERSION, _MAX_VERSION = 4, 6
_NATIVE_PROPERTIES = 5

# Op encoding mask bits (bytecode::OpEncodingMask).
_HAS_ATTRS, _HAS_RESULTS, _HAS_OPERANDS, _HAS_SUCCESSORS, _HAS_REGIONS, _HAS_USE_LIST_ORDERS, \
    _HAS_PROPERTIES = (1 << i for i in range(7))


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
        self.n_values = 0               # value tokens handed out
        self.names = _Names()           # the values each region defines, to name them at the end
        self.builtin = BuiltinDecoder(self)

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
            self.attrs[i] = self._entry(self.attr_spans[i], self.builtin.attribute, "attribute")
        elif self.attrs[i] is None:
            raise BytecodeError(f"malformed bytecode at byte {self.attr_spans[i][2]}: attribute {i} "
                                "refers to itself")
        return self.attrs[i]

    def type_at(self, i: int) -> str:
        if i not in self.types:
            self.types[i] = None
            self.types[i] = self._entry(self.type_spans[i], self.builtin.type, "type")
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
        elif dialect == "chlo" and what == "attribute":
            text = chlo_attribute(r, self)
        elif dialect == "stablehlo":
            text = (stablehlo_attribute if what == "attribute" else stablehlo_type)(r, self)
        else:
            raise r.fail(f"the {dialect} dialect's own bytecode encoding of a {what} is not supported")
        if not r.empty():
            raise r.fail(f"trailing bytes after a {dialect} {what}")
        return text

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
                text = quote(self.string(value))
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
        declared = opdef.properties if opdef is not None else ()
        if opdef is None and name not in ODS_ATTRIBUTES:
            raise p.fail(f"properties of '{name}', an op this reader does not know")
        names = attribute_order(name, declared)
        counts = dict(zip(("operandSegmentSizes", "resultSegmentSizes"), segment_counts(name)))
        segments = ([n for n, count in counts.items() if count]
                    or sorted(n for n in declared if n.endswith("SegmentSizes")))
        items = []
        before, after = UNNAMED_SLOTS.get(name, (0, 0))
        self._unnamed(p, name, before)
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
        self._unnamed(p, name, after)
        for key in segments:
            values = self._sparse_array(p, counts.get(key), name)
            items.append(f"{key} = array<i32: {', '.join(map(str, values))}>")
        if not p.empty():
            raise p.fail(f"the properties of '{name}' hold more than its declared attributes "
                         f"({', '.join(names + segments)})")
        return "<{" + ", ".join(items) + "}>" if items else ""

    @staticmethod
    def _unnamed(p: ByteReader, name: str, count: int) -> None:
        for _ in range(count):
            if p.flagged()[1]:
                raise p.fail(f"'{name}' has an inherent attribute this reader cannot name")

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
    # Each value is written as a token (`\1N\2`, unique in the module) and named at the end as
    # MLIR's printer names it (`_Names.number`); blocks are ^bb0, ^bb1, ... in each region. An
    # operand's type is written as a marker (`\0token\0`) and filled in at the end too, since a
    # use may come before its definition (graph regions, successors' operands).
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
        if any(token not in self.value_types for token in top.forward):
            raise BytecodeError("malformed bytecode: a value is used but never defined")
        names = self.names.number()
        text = re.sub("\0(\1[0-9]+\2)\0", lambda m: self.value_types[m.group(1)], "\n".join(out))
        return re.sub("\1([0-9]+)\2", lambda m: names[int(m.group(1))], text) + "\n"

    def _op(self, r: ByteReader, out: list, depth: int, scope: "_Scope", blocks: list) -> None:
        at = r.pos
        i = r.varint()
        if i >= len(self.op_names):
            r.pos = at
            raise r.fail(f"operation name index {i} out of range")
        name, registered = self.op_names[i]
        mask = r.byte()
        loc = self._location(r)
        attrs = self.attr(r) if mask & _HAS_ATTRS else None
        props = self._op_properties(r, name, registered) if mask & _HAS_PROPERTIES else None
        types = r.array(self.type) if mask & _HAS_RESULTS else []
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
        if n_regions and depth // 2 >= MAX_REGION_DEPTH:   # the text parser's limit (depth: indentation,
            # two steps per region level)
            raise r.fail(f"regions nested deeper than {MAX_REGION_DEPTH}")
        results = self._define(r, scope, types, "results")
        pad = "  " * depth
        line = pad + (results[0] + " = " if results else "") + quote(name) + \
            "(" + ", ".join(operands) + ")"
        if succs:
            line += "[" + ", ".join(succs) + "]"
        if props:
            line += " " + props
        tail = (" " + attrs if attrs and attrs != "{}" else "") + \
            " : (" + ", ".join(f"\0{v}\0" for v in operands) + ") -> " + \
            (types[0] if len(types) == 1 and not types[0].startswith("(") else "(" + ", ".join(types) + ")")
        tail += loc
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
        block_names = [f"^bb{b}" for b in range(n_blocks)]
        parent, self.names = self.names, self.names.region()
        out.append(pad + "{")
        for label in block_names:
            n_ops, has_args = r.flagged()
            args = []
            if has_args:
                types, locs = [], []
                for _ in range(r.varint()):
                    at = r.pos
                    type_index, has_loc = r.flagged()
                    if type_index >= len(self.type_spans):
                        r.pos = at
                        raise r.fail(f"type index {type_index} out of range")
                    types.append(self.type_at(type_index))
                    locs.append(self._location(r) if has_loc else " loc(unknown)")    # (MLIR leaves it out)
                kind = "arguments" if label == "^bb0" else "values"
                args = [f"{v}: {t}{loc}" for v, t, loc in zip(self._define(r, scope, types, kind), types, locs)]
                if r.byte():
                    self._skip_use_lists(r, len(args))
            out.append(pad + label + ("(" + ", ".join(args) + ")" if args else "") + ":")
            for _ in range(n_ops):
                self._op(r, out, depth + 1, scope, block_names)
        out.append(pad + "}")
        del scope.values[first:]
        scope.next.pop()
        self.names = parent

    def _location(self, r: ByteReader) -> str:
        """An op's or block argument's location, as the text after it (` loc(...)`)."""
        at = r.pos
        text = self.attr(r)
        if not text.startswith("loc("):
            r.pos = at
            raise r.fail(f"expected a location, got {text[:40]}")
        return " " + text

    def _token(self) -> str:
        self.n_values += 1
        return f"\1{self.n_values - 1}\2"

    def _define(self, r: ByteReader, scope: "_Scope", types: list, kind: str) -> list:
        """The tokens of the values a block's arguments or an op's results define; for an op of
        several results, the first item is the group's `token:count` and the results follow."""
        if not scope.next:      # the top level: results exist but no one can use them
            names = [self._token() for _ in types]
        else:
            start = scope.next[-1]
            if start + len(types) > len(scope.values):
                raise r.fail(f"value {start + len(types) - 1} outside its region's {len(scope.values)} values")
            names = []
            for k in range(start, start + len(types)):
                if scope.values[k] is None:     # else a use came first and named it
                    scope.values[k] = self._token()
                names.append(scope.values[k])
            scope.next[-1] = start + len(types)
        self.value_types.update(zip(names, types))
        tokens = [int(t[1:-1]) for t in names]
        if kind != "results":
            for token in tokens:
                self.names.define(kind, [token])
            return names
        if len(names) > 1:
            group = self._token()
            self.names.define(kind, [int(group[1:-1])] + tokens)
            return [f"{group}:{len(names)}"] + names
        if names:
            self.names.define(kind, tokens)
        return names

    def _use(self, r: ByteReader, scope: "_Scope") -> str:
        at = r.pos
        i = r.varint()
        if i >= len(scope.values):
            r.pos = at
            raise r.fail(f"value index {i} out of range")
        if scope.values[i] is None:     # a forward reference: the definition takes this name
            scope.values[i] = self._token()
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


class _Names:
    """The values a region defines, in MLIR's numbering order (each block's arguments, then
    each op's results), and the regions of its ops, so as to name them as MLIR's printer does
    (AsmPrinter's SSANameState): a region's entry-block arguments `%arg0`, `%arg1`, ..., its
    other values `%0`, `%1`, ... (an op of several results one number: `%3:2`, used as
    `%3#0`), the numbers of a nested region going on from where its parent's ended; sibling
    regions start from the same numbers."""

    def __init__(self):
        self.defined: list = []     # (kind, tokens): "arguments", "values" or "results"
        self.regions: list = []

    def region(self) -> "_Names":
        inner = _Names()
        self.regions.append(inner)
        return inner

    def define(self, kind: str, tokens: list) -> None:
        self.defined.append((kind, tokens))

    def number(self) -> dict:
        """token -> its name, for every value defined in this region and the regions in it."""
        names: dict = {}
        pending = [(self, 0, 0)]
        while pending:
            node, value, argument = pending.pop()
            for kind, tokens in node.defined:
                if kind == "arguments":
                    names[tokens[0]] = f"%arg{argument}"
                    argument += 1
                    continue
                names[tokens[0]] = f"%{value}"
                for k, token in enumerate(tokens[1:]):      # an op of several results
                    names[token] = f"%{value}#{k}"
                value += 1
            pending.extend((inner, value, argument) for inner in node.regions)
        return names


class _Scope:
    """The values of one isolated region: a slot per value of each open region, by index."""

    def __init__(self):
        self.values: list = []
        self.next: list = []        # the next slot to define, per open region
        self.forward: list = []     # names handed out to uses before their definitions


def to_text(data: bytes) -> str:
    """The module in `data` (MLIR bytecode) as generic-form MLIR text."""
    try:
        return _Decoder(data).decode()
    except RecursionError:     # attributes nested through thousands of references
        raise BytecodeError("malformed bytecode: attributes nested too deeply to read") from None
