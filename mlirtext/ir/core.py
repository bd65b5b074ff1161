"""The object model: operations, blocks, regions and SSA values with use lists.

Every object keeps the span it was parsed from (None when a pass created it),
so diagnostics, hover and go-to-definition can point back at the text.
"""
from __future__ import annotations

from typing import Iterator, Optional

from .attributes import Attribute, StringAttr
from .signatures import signature
from .source import Span
from .types import Type


class Use:
    """One operand slot of `op` (index into `op.operands`) that reads a value."""

    __slots__ = ("op", "index")

    def __init__(self, op: "Operation", index: int):
        self.op = op
        self.index = index

    def __repr__(self) -> str:
        return f"Use({self.op.name}#{self.index})"


class Value:
    __slots__ = ("type", "uses", "name", "span")

    def __init__(self, type: Type, name: Optional[str] = None, span: Optional[Span] = None):
        self.type = type
        self.uses: list[Use] = []
        self.name = name      # the SSA name the source used, without '%' (a hint for printing)
        self.span = span      # where the name is defined

    @property
    def has_uses(self) -> bool:
        return bool(self.uses)

    def users(self) -> Iterator["Operation"]:
        for use in self.uses:
            yield use.op

    def replace_all_uses_with(self, other: "Value") -> None:
        if other is self:
            return
        for use in list(self.uses):
            use.op.operands[use.index] = other
            other.uses.append(use)
        self.uses.clear()


class OpResult(Value):
    __slots__ = ("op", "index")

    def __init__(self, type: Type, op: "Operation", index: int):
        super().__init__(type)
        self.op = op
        self.index = index

    @property
    def owner(self) -> "Operation":
        return self.op

    def __repr__(self) -> str:
        return f"<result {self.index} of {self.op.name}: {self.type}>"


class BlockArgument(Value):
    __slots__ = ("block", "index", "location")

    def __init__(self, type: Type, block: "Block", index: int, name=None, span=None):
        super().__init__(type, name, span)
        self.block = block
        self.index = index
        self.location = None    # its `loc(...)` (a LocationAttr) when the source gave one

    @property
    def owner(self) -> "Block":
        return self.block

    def __repr__(self) -> str:
        return f"<block arg {self.index}: {self.type}>"


class Operation:
    """A generic MLIR operation; its dialect declaration (`op.definition`) gives it meaning."""

    __slots__ = ("name", "operands", "operand_uses", "results", "attributes", "property_names", "regions",
                 "successors", "parent", "span", "name_span", "location", "form")

    def __init__(self, name: str, operands=(), result_types=(), attributes=None,
                 regions=(), successors=(), span: Optional[Span] = None,
                 property_names: frozenset = frozenset(), location=None):
        self.name = name
        self.operands: list[Value] = list(operands)
        # The Use of each operand (None once dropped): dropping one removes that very object
        # from its value's use list, a scan in C, not a filter in Python (a value such as a
        # shared tensor.empty has thousands of uses).
        self.operand_uses: list[Optional[Use]] = [Use(self, i) for i in range(len(self.operands))]
        for v, use in zip(self.operands, self.operand_uses):
            v.uses.append(use)
        self.results: list[OpResult] = [OpResult(t, self, i) for i, t in enumerate(result_types)]
        self.attributes: dict[str, Attribute] = attributes if attributes is not None else {}
        self.property_names = property_names  # attributes the source wrote in `<{...}>`
        self.regions: list[Region] = []
        for r in regions:
            self.add_region(r)
        self.successors: list[Block] = list(successors)
        self.parent: Optional[Block] = None
        self.span = span
        self.name_span: Optional[Span] = None
        self.location = location
        # Which custom syntax the source used, for ops spelled two ways by two
        # dialects sharing a prefix (e.g. "stablehlo" for stablehlo's `check.*`); None: the default.
        self.form: Optional[str] = None

    # -- structure --------------------------------------------------------
    @property
    def dialect(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def result(self) -> OpResult:
        assert len(self.results) == 1, f"{self.name} has {len(self.results)} results"
        return self.results[0]

    @property
    def parent_op(self) -> Optional["Operation"]:
        block = self.parent
        if block is None or block.parent is None:
            return None
        return block.parent.parent

    def ancestors(self) -> Iterator["Operation"]:
        op = self.parent_op
        while op is not None:
            yield op
            op = op.parent_op

    def add_region(self, region: "Region") -> "Region":
        region.parent = self
        self.regions.append(region)
        return region

    def walk(self) -> Iterator["Operation"]:
        """This op and every op nested in it, in pre-order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    yield from op.walk()

    # -- access by the names the op's dialect declares (see ir/signatures.py) ----
    def operand(self, name: str) -> "Value":
        """The operand named `name` (`op.operand("lhs")`); KeyError if the op has no such one."""
        sig = signature(self.name)
        where = sig.bounds("operands", name) if sig is not None else None   # (the common case, inline)
        group = self.operands[where] if where is not None else \
            self._named(self.operands, "operands", "operandSegmentSizes", name)
        if len(group) != 1:
            raise KeyError(f"{self.name}: operand group '{name}' holds {len(group)} values")
        return group[0]

    def operands_named(self, name: str) -> list["Value"]:
        """The operands of the variadic or optional group `name` (`op.operands_named("indices")`)."""
        return self._named(self.operands, "operands", "operandSegmentSizes", name)

    def result_named(self, name: str) -> "OpResult":
        """The result named `name` (`op.result_named("overflow")`)."""
        group = self._named(self.results, "results", "resultSegmentSizes", name)
        if len(group) != 1:
            raise KeyError(f"{self.name}: result group '{name}' holds {len(group)} values")
        return group[0]

    def attr(self, name: str) -> Optional[Attribute]:
        """The attribute `name`, or None when the op does not carry it."""
        return self.attributes.get(name)

    def _named(self, values: list, kind: str, sizes_key: str, name: str) -> list:
        sig = signature(self.name)
        if sig is None:
            raise KeyError(f"{self.name} declares no names for its {kind}")
        where = sig.bounds(kind, name)
        if where is not None:
            return values[where]
        sizes = self.attributes.get(sizes_key)
        where = sig.slice_of(getattr(sig, kind), name, getattr(sizes, "values", None) if sizes is not None else None)
        return values[where]

    @property
    def operand_types(self) -> list[Type]:
        return [v.type for v in self.operands]

    @property
    def result_types(self) -> list[Type]:
        return [r.type for r in self.results]

    @property
    def sym_name(self) -> Optional[str]:
        attr = self.attributes.get("sym_name")
        return attr.value if isinstance(attr, StringAttr) else None

    # -- mutation that keeps use lists right -------------------------------
    def set_operand(self, index: int, value: Value) -> None:
        old = self.operand_uses[index]
        if old is not None:
            self.operands[index].uses.remove(old)
        self.operands[index] = value
        self.operand_uses[index] = use = Use(self, index)
        value.uses.append(use)

    def set_operands(self, values) -> None:
        self.drop_operand_uses()
        self.operands = list(values)
        self.operand_uses = [Use(self, i) for i in range(len(self.operands))]
        for v, use in zip(self.operands, self.operand_uses):
            v.uses.append(use)

    def drop_operand_uses(self) -> None:
        for v, use in zip(self.operands, self.operand_uses):
            if use is not None:
                v.uses.remove(use)
        self.operand_uses = [None] * len(self.operands)

    def detach(self) -> "Operation":
        """Remove from the parent block, keeping the op (and its uses) intact."""
        if self.parent is not None:
            self.parent.remove(self)
            self.parent = None
        return self

    def erase(self) -> None:
        """Remove and drop all operand uses, recursively; results must be unused."""
        for r in self.results:
            if r.uses:
                raise ValueError(f"cannot erase {self.name}: result {r.index} still has uses")
        self.detach()
        self._drop_all_uses()

    def _drop_all_uses(self) -> None:
        for op in self.walk():
            op.drop_operand_uses()

    def move_before(self, other: "Operation") -> None:
        self.detach()
        other.parent.insert_before(other, self)

    def move_after(self, other: "Operation") -> None:
        self.detach()
        other.parent.insert_after(other, self)

    def replace_with(self, values) -> None:
        """Replace every result's uses with `values`, then erase this op."""
        for r, v in zip(self.results, values, strict=True):
            r.replace_all_uses_with(v)
        self.erase()

    def clone(self, mapping: Optional[dict] = None) -> "Operation":
        """A deep copy (regions included, detached). `mapping` maps old values and blocks to
        new ones: operands found there are replaced, and the copy's results, block
        arguments and blocks are added to it, so later clones refer to them."""
        mapping = {} if mapping is None else mapping
        new = Operation(self.name, [mapping.get(v, v) for v in self.operands], self.result_types,
                        dict(self.attributes), (), [mapping.get(b, b) for b in self.successors],
                        self.span, self.property_names, self.location)
        new.name_span, new.form = self.name_span, self.form
        for old, r in zip(self.results, new.results):
            r.name, r.span = old.name, old.span
            mapping[old] = r
        for region in self.regions:
            new.add_region(region.clone(mapping))
        return new

    def __repr__(self) -> str:
        return f"<op {self.name}>"


class Block:
    __slots__ = ("arguments", "ops", "parent", "label", "span", "hint")

    def __init__(self, arg_types=(), label: Optional[str] = None, span: Optional[Span] = None):
        self.arguments: list[BlockArgument] = [BlockArgument(t, self, i) for i, t in enumerate(arg_types)]
        self.ops: list[Operation] = []
        self.parent: Optional[Region] = None
        self.label = label  # without '^'
        self.span = span    # the label's span
        self.hint = 0       # where the last op looked for was (see `position`)

    def add_argument(self, type: Type, name=None, span=None) -> BlockArgument:
        arg = BlockArgument(type, self, len(self.arguments), name, span)
        self.arguments.append(arg)
        return arg

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    def position(self, op: Operation) -> int:
        """The index of `op` in `ops`. A rewrite inserts before one op again and again and then
        erases it, and the next op it works on is beside it: the place of the last op looked for
        (and its neighbours) is tried before a scan of the block, which is what kept rewriting a
        function of thousands of ops quadratic."""
        ops, at = self.ops, self.hint
        for i in (at, at - 1, at + 1, at - 2, at + 2):
            if 0 <= i < len(ops) and ops[i] is op:
                self.hint = i
                return i
        self.hint = i = ops.index(op)
        return i

    def insert_before(self, anchor: Operation, op: Operation) -> Operation:
        op.parent = self
        at = self.position(anchor)
        self.ops.insert(at, op)
        self.hint = at + 1     # the anchor's place now
        return op

    def insert_after(self, anchor: Operation, op: Operation) -> Operation:
        op.parent = self
        self.ops.insert(self.position(anchor) + 1, op)
        return op

    def remove(self, op: Operation) -> None:
        """Take `op` out of `ops` (its `parent` is the caller's to clear)."""
        at = self.position(op)
        del self.ops[at]
        self.hint = at         # the op that followed it

    @property
    def terminator(self) -> Optional[Operation]:
        return self.ops[-1] if self.ops else None

    @property
    def parent_op(self) -> Optional[Operation]:
        return self.parent.parent if self.parent is not None else None

    def __repr__(self) -> str:
        return f"<block ^{self.label or '?'} ({len(self.ops)} ops)>"


class Region:
    __slots__ = ("blocks", "parent")

    def __init__(self, blocks=()):
        self.blocks: list[Block] = []
        self.parent: Optional[Operation] = None
        for b in blocks:
            self.add_block(b)

    def add_block(self, block: Block) -> Block:
        block.parent = self
        self.blocks.append(block)
        return block

    @property
    def entry(self) -> Optional[Block]:
        return self.blocks[0] if self.blocks else None

    def ops(self) -> Iterator[Operation]:
        for b in self.blocks:
            yield from b.ops

    def clone(self, mapping: dict) -> "Region":
        """A deep copy; all blocks are made first, so branches to later blocks resolve."""
        new = Region()
        for block in self.blocks:
            copy = new.add_block(Block((), block.label, block.span))
            mapping[block] = copy
            for arg in block.arguments:
                mapping[arg] = copy.add_argument(arg.type, arg.name, arg.span)
        for block in self.blocks:
            for op in block.ops:
                mapping[block].append(op.clone(mapping))
        return new


def single_block_region(ops=(), arg_types=()) -> Region:
    block = Block(arg_types)
    for op in ops:
        block.append(op)
    return Region([block])
