"""IR to MLIR bytecode (`mlirtext opt --emit-bytecode`), as MLIR's reader (iree-opt's) reads it.

Written as bytecode version 6, what iree-opt 3.13 writes, with every attribute and type
stored as its assembly text (parsed by the dialect's own parser). An op's properties (its
inherent attributes, as the generic form splits them) take MLIR's native encoding where
`bytecode_properties` knows the op's ODS layout (every op MLIR registers must have it, as
its reader decodes them by the op's own interface), else one dictionary attribute, the
encoding for ops MLIR does not know (mhlo's). The IR itself is the binary encoding: op
names, masks, value numbers per isolated region, blocks, successors, regions, isolated
regions in nested sections.

Each op's and block argument's location is written as its text, `#loc` aliases resolved (a
location that names an alias the source does not define is written `loc(unknown)`). Not
written: use-list orders, and
`dense_resource` blobs (the file's `dialect_resources`; such a module is refused).
"""
from __future__ import annotations

import re

from ..dialects import lookup
from ..dialects.base import ISOLATED
from ..ir.core import Block, Operation, Region
from ..ir.dense import DenseResourceAttr
from .bytecode_encoding import MAGIC
from .bytecode_properties import ODS_ATTRIBUTES, REQUIRED, UNNAMED_SLOTS, attribute_order, is_required, \
    segment_counts
from .printer import Printer, generic_properties

VERSION = 6
_STRING, _DIALECT, _ATTR_TYPE, _ATTR_TYPE_OFFSET, _IR, _PROPERTIES = 0, 1, 2, 3, 4, 8
_HAS_ATTRS, _HAS_RESULTS, _HAS_OPERANDS, _HAS_SUCCESSORS, _HAS_REGIONS, _HAS_PROPERTIES = 1, 2, 4, 8, 16, 64
_UNKNOWN_LOC = "loc(unknown)"
#: A string literal (kept as it is) or an alias reference in a location's text.
_ALIAS_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|#[A-Za-z_][\w$.-]*')


class BytecodeWriteError(Exception):
    """The module holds something this writer cannot put in bytecode: one line, naming it."""


def varint(value: int) -> bytes:
    """MLIR's PrefixVarInt: the count of further bytes as trailing zeros of the first byte."""
    for n in range(1, 9):
        if value < 1 << (7 * n):
            return ((value << n) | (1 << (n - 1))).to_bytes(n, "little")
    return b"\0" + value.to_bytes(8, "little")


def _section(sid: int, data: bytes) -> bytes:
    return bytes([sid]) + varint(len(data)) + data


#: Dialects whose ops MLIR 3.13 registers without Python op classes (so not in ODS_ATTRIBUTES).
_HAND_DIALECTS = ("stablehlo", "chlo", "check")


def _native(name: str) -> bool:
    """Does MLIR register the op, so that its properties take the op's own encoding?"""
    return name in ODS_ATTRIBUTES or name in REQUIRED or name.split(".", 1)[0] in _HAND_DIALECTS


def _layout(op: Operation) -> tuple:
    """(attribute names in properties order, segment-size names) of an op MLIR registers."""
    definition = lookup(op.name)
    declared = definition.properties if definition else ()
    counts = dict(zip(("operandSegmentSizes", "resultSegmentSizes"), segment_counts(op.name)))
    segments = [n for n, c in counts.items() if c] or sorted(n for n in declared if n.endswith("SegmentSizes"))
    return attribute_order(op.name, declared), segments


def _dialect_of(text: str) -> str:
    """The dialect an attribute's or type's text belongs to: `#name.` / `!name.` / `#name<`, else builtin."""
    if text[:1] in "#!":
        name = text[1:].split(".", 1)[0].split("<", 1)[0]
        if name.isidentifier():
            return name
    return "builtin"


def _location_text(text: str, aliases: dict, depth: int = 0) -> str:
    """`text` (`loc(...)`) with each alias replaced by what it stands for (a location alias by
    its body); `_UNKNOWN_LOC` when one is not defined (or aliases refer to each other in a cycle)."""
    def expand(m):
        word = m.group(0)
        if word.startswith('"') or (word not in aliases and "." in word):    # a dialect attribute
            return word
        target = aliases.get(word)
        if target is None or depth > 50:
            raise KeyError(word)
        if not target.startswith("loc("):
            return target
        return _location_text(target, aliases, depth + 1)[4:-1]
    try:
        return _ALIAS_OR_STRING.sub(expand, text)
    except KeyError:
        return _UNKNOWN_LOC


class _Writer:
    def __init__(self, aliases=()):
        self.aliases = {name: str(value) for name, value in aliases if name.startswith("#")}
        self.printer = Printer(generic=True)
        self.strings: dict[str, int] = {}
        self.op_names: dict[str, int] = {}
        self.attrs: dict[str, int] = {}
        self.types: dict[str, int] = {}
        self.dialects: dict[str, int] = {}
        self.properties: dict[bytes, int] = {}   # properties section entries (deduplicated) -> index

    def string(self, s: str) -> int:
        return self.strings.setdefault(s, len(self.strings))

    # -- what the module uses, numbered in the order the sections list it ------------------
    def collect(self, top: Operation) -> None:
        ops, attrs, types = set(), set(), set()
        for op in _walk(top):
            ops.add(op.name)
            attrs.add(self.location(op))
            for key, value in op.attributes.items():
                if isinstance(value, DenseResourceAttr):
                    raise BytecodeWriteError(f"'{op.name}' holds dense_resource<{value.handle}>: resource "
                                             "blobs are not written as bytecode")
            props, rest = self.split(op)
            if _native(op.name):    # each attribute on its own, referenced from the op's properties
                attrs.update(str(v) for k, v in props.items() if not k.endswith("SegmentSizes"))
            else:                   # one dictionary
                attrs.add(props)
            attrs.add(rest)
            types.update(str(r.type) for r in op.results)
            for region in op.regions:
                for block in region.blocks:
                    types.update(str(a.type) for a in block.arguments)
                    attrs.update(self.location(a) for a in block.arguments)
        dialect_names = {"builtin"} | {n.split(".", 1)[0] for n in ops} | {_dialect_of(t) for t in attrs | types}
        for d in sorted(dialect_names):
            self.dialects[d] = len(self.dialects)
            self.string(d)
        for name in sorted(ops, key=lambda n: (self.dialects[n.split(".", 1)[0]], n)):
            self.op_names[name] = len(self.op_names)
            self.string(name.split(".", 1)[1] if "." in name else name)
        attrs.discard("")
        for table, texts in ((self.attrs, attrs), (self.types, types)):
            for text in sorted(texts, key=lambda t: (self.dialects[_dialect_of(t)], t)):
                table[text] = len(table)

    def location(self, located) -> str:
        """The location of an op or a block argument, as the text written for it."""
        if located.location is None:
            return _UNKNOWN_LOC
        return _location_text(str(located.location), self.aliases)

    def split(self, op: Operation) -> tuple:
        """(properties, other attributes): for an op MLIR registers, the attributes its ODS names
        (wherever the source wrote them) as a dict; else the generic form's `<{...}>` split,
        as text; then the rest as a dictionary text ('' for none)."""
        if _native(op.name):
            names, segments = _layout(op)
            inherent = set(names) | set(segments)
            props = {k: v for k, v in op.attributes.items() if k in inherent}
        else:
            props = generic_properties(op)
        rest = {k: v for k, v in op.attributes.items() if k not in props}
        return (props if _native(op.name) else self.printer.attr_dict(props).strip(),
                self.printer.attr_dict(rest).strip())

    # -- sections -------------------------------------------------------------------------
    def module(self, top: Operation) -> bytes:
        self.collect(top)
        ir = varint(1 << 1) + self.op(top, {})
        return MAGIC + varint(VERSION) + b"mlirtext\0" + b"".join((
            _section(_STRING, self.string_section()), _section(_DIALECT, self.dialect_section()),
            *self.attr_type_sections(), _section(_IR, ir), _section(_PROPERTIES, self.properties_section())))

    def properties_section(self) -> bytes:
        return varint(len(self.properties)) + b"".join(varint(len(e)) + e for e in self.properties)

    def string_section(self) -> bytes:
        data = [s.encode("utf-8") + b"\0" for s in self.strings]
        return varint(len(data)) + b"".join(varint(len(d)) for d in reversed(data)) + b"".join(data)

    def dialect_section(self) -> bytes:
        out = [varint(len(self.dialects))]
        out += [varint(self.strings[d] << 1) for d in self.dialects]
        out.append(varint(len(self.op_names)))
        for dialect, index in self.dialects.items():
            names = [n for n in self.op_names if n.split(".", 1)[0] == dialect]
            if names:
                out += [varint(index), varint(len(names))]
                out += [varint(self.strings[n.split(".", 1)[1] if "." in n else n] << 1 | _native(n))
                        for n in names]
        return b"".join(out)

    def attr_type_sections(self) -> tuple:
        data, offsets = [], [varint(len(self.attrs)), varint(len(self.types))]
        for table in (self.attrs, self.types):
            entries = [t.encode("utf-8") + b"\0" for t in table]
            groups: dict = {}
            for text, entry in zip(table, entries):
                groups.setdefault(_dialect_of(text), []).append(entry)
            for dialect, items in groups.items():   # in table order: the tables are sorted by dialect
                offsets += [varint(self.dialects[dialect]), varint(len(items))]
                offsets += [varint(len(e) << 1) for e in items]
                data += items
        return _section(_ATTR_TYPE, b"".join(data)), _section(_ATTR_TYPE_OFFSET, b"".join(offsets))

    # -- the IR ---------------------------------------------------------------------------
    def op(self, op: Operation, ids: dict) -> bytes:
        mask = 0
        body = [varint(self.attrs[self.location(op)])]
        props, rest = self.split(op)
        if rest:
            mask |= _HAS_ATTRS
            body.append(varint(self.attrs[rest]))
        entry = self.native_properties(op, props) if _native(op.name) else (varint(self.attrs[props]) if props
                                                                             else b"")
        if entry:
            mask |= _HAS_PROPERTIES
            body.append(varint(self.properties.setdefault(entry, len(self.properties))))
        if op.results:
            mask |= _HAS_RESULTS
            body += [varint(len(op.results))] + [varint(self.types[str(r.type)]) for r in op.results]
        if op.operands:
            mask |= _HAS_OPERANDS
            body += [varint(len(op.operands))] + [varint(self.value_id(op, v, ids)) for v in op.operands]
        if op.successors:
            mask |= _HAS_SUCCESSORS
            blocks = op.parent.parent.blocks
            body += [varint(len(op.successors))] + [varint(blocks.index(b)) for b in op.successors]
        regions = b""
        if op.regions:
            mask |= _HAS_REGIONS
            opdef = lookup(op.name)
            isolated = opdef is not None and opdef.has(ISOLATED)
            body.append(varint(len(op.regions) << 1 | isolated))
            inner = {} if isolated else ids
            base = 0 if isolated else self.open_values(ids)
            regions = b"".join(self.region(r, inner, base) for r in op.regions)
            if isolated:
                regions = _section(_IR, regions)
        return varint(self.op_names[op.name]) + bytes([mask]) + b"".join(body) + regions

    def native_properties(self, op: Operation, props: dict) -> bytes:
        """ODS's `writeProperties`: the inherent attributes in name order, a required one as its
        index, an optional one as `(index << 1) | present`, unknown slots empty, then the
        segment sizes (dense); b"" when the op has none of them (MLIR default-initializes them:
        an op MLIR declares without properties must not get any)."""
        names, segments = _layout(op)
        if not props and not segments:     # nothing to say: MLIR default-initializes them
            return b""
        before, after = UNNAMED_SLOTS.get(op.name, (0, 0))
        out = [varint(0)] * before
        for name in names:
            if is_required(op.name, name):
                if name not in props:
                    raise BytecodeWriteError(f"'{op.name}' lacks its required attribute '{name}'")
                out.append(varint(self.attrs[str(props[name])]))
            else:
                out.append(varint(self.attrs[str(props[name])] << 1 | 1) if name in props else varint(0))
        out += [varint(0)] * after
        for key in segments:
            sizes = [int(x) for x in getattr(props.get(key), "values", ())] if key in props else []
            out.append(varint(len(sizes) << 1) + b"".join(varint(x) for x in sizes))
        return b"".join(out)

    @staticmethod
    def open_values(ids: dict) -> int:
        """The next free value number of the scope: past every value of the regions now open."""
        return ids.get(None, 0)

    def value_id(self, op: Operation, value, ids: dict) -> int:
        if value not in ids:
            raise BytecodeWriteError(f"'{op.name}' uses a value defined outside the region it can see")
        return ids[value]

    def region(self, region: Region, ids: dict, base: int) -> bytes:
        if not region.blocks:
            return varint(0)
        values = [v for b in region.blocks for v in (*b.arguments, *(r for op in b.ops for r in op.results))]
        saved = ids.get(None, 0)
        for k, v in enumerate(values):
            ids[v] = base + k
        ids[None] = base + len(values)      # where a nested region's values start
        out = [varint(len(region.blocks)), varint(len(values))]
        out += [self.block(b, ids) for b in region.blocks]
        ids[None] = saved
        return b"".join(out)

    def block(self, block: Block, ids: dict) -> bytes:
        out = [varint(len(block.ops) << 1 | bool(block.arguments))]
        if block.arguments:
            out.append(varint(len(block.arguments)))
            for a in block.arguments:     # (type << 1 | has a location), then the location unless unknown
                loc = self.location(a)
                out.append(varint(self.types[str(a.type)] << 1 | (loc != _UNKNOWN_LOC)))
                if loc != _UNKNOWN_LOC:
                    out.append(varint(self.attrs[loc]))
            out.append(b"\0")   # no use-list orders
        out += [self.op(op, ids) for op in block.ops]
        return b"".join(out)


def _walk(op: Operation):
    yield op
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                yield from _walk(inner)


def from_module(module: Operation, aliases=()) -> bytes:
    """`module` (a builtin.module) as MLIR bytecode; BytecodeWriteError for what cannot be written.
    `aliases`: the source's `[(name, attribute)]` (a parse's `aliases`), by which `#loc`
    references in locations are resolved."""
    return _Writer(aliases).module(module)
