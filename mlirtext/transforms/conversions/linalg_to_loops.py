"""linalg -> loops: decompose what has no loop form of its own (softmax, pack/unpack, arith on
whole tensors: `linalg_decompose`), bufferize, then turn each linalg op on memrefs into an
`scf.for` nest.

Every structured op is read as what it is underneath (indexing maps, iterator
types, a scalar body): the loop nest walks its iteration space, loads each
input at its map's indices, runs a copy of the body, and stores the yielded
values at the output map's indices. A reduction dimension needs nothing
special: the output is loaded, combined and stored at every step.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...dialects.affine_maps import AffineMap, evaluate, parse_map
from ...dialects.linalg import indexing_maps, segments
from ...ir import types as T
from ...ir.attributes import IntegerAttr
from ...ir.core import Block, Operation, Region, Value
from ..conversion import ConversionTarget, check_legal
from ..passes import Pass, PassFailure
from .bufferize import bufferize_module, is_structured


@dataclass
class Structured:
    """A linalg op as maps, iterator kinds and a body (the view every loop lowering needs)."""
    maps: list[AffineMap]
    reductions: set[int]
    body: Block
    num_dims: int


def _map(text: str) -> AffineMap:
    m = parse_map(text)
    if m is None:
        raise ValueError(f"cannot read indexing map {text}")
    return m


def _identity(rank: int) -> AffineMap:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return _map(f"affine_map<({dims}) -> ({dims})>")


def _projection(rank: int, keep: list[int]) -> AffineMap:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return _map(f"affine_map<({dims}) -> ({', '.join(f'd{i}' for i in keep)})>")


def structured(op: Operation) -> Structured:
    ins, outs = segments(op)
    out_rank = outs[0].type.rank
    body = op.regions[0].blocks[0] if op.regions and op.regions[0].blocks else None
    if op.name in ("linalg.pack", "linalg.unpack", "linalg.softmax"):
        raise ValueError("only static shapes and tile sizes are decomposed into loops yet")
    if op.name == "linalg.fill":
        maps = [_projection(out_rank, []), _identity(out_rank)]
    elif op.name == "linalg.copy":
        maps = [_identity(out_rank), _identity(out_rank)]
    elif op.name == "linalg.transpose":
        perm = list(op.attr("permutation").values)
        inverse = [perm.index(i) for i in range(len(perm))]
        maps = [_projection(out_rank, inverse), _identity(out_rank)]
    elif op.name == "linalg.broadcast":
        added = set(op.attr("dimensions").values)
        maps = [_projection(out_rank, [d for d in range(out_rank) if d not in added]), _identity(out_rank)]
    elif op.name == "linalg.reduce":
        rank = ins[0].type.rank
        reduced = set(op.attr("dimensions").values)
        kept = [d for d in range(rank) if d not in reduced]
        maps = [_identity(rank)] * len(ins) + [_projection(rank, kept)] * len(outs)
    elif (found := indexing_maps(op)) is not None:
        # indexing_maps the op carries, else the dialect's table of named-op maps
        # (LinalgNamedStructuredOps.yaml: contractions, convolutions and poolings with
        # their strides / dilations applied)
        maps = found
    elif all(getattr(v.type, "shape", None) == outs[0].type.shape for v in (*ins, *outs)):
        maps = [_identity(out_rank)] * (len(ins) + len(outs))  # elementwise named ops, linalg.map
    else:
        raise ValueError(f"'{op.name}' has no indexing maps")
    num_dims = maps[-1].num_dims
    used_by_outputs = {r[1] for m in maps[len(ins):] for r in m.results if r[0] == "dim"}
    reductions = set(range(num_dims)) - used_by_outputs
    if body is None:
        raise ValueError(f"'{op.name}' has no body")
    return Structured(maps, reductions, body, num_dims)


class Emitter:
    """Creates ops before a fixed anchor, or appends them to a block before its terminator."""

    def __init__(self, anchor: Operation):
        self.anchor = anchor
        self.block: Block | None = None  # the innermost loop body, once there is one

    def emit(self, name: str, operands, result_types, attributes=None) -> Operation:
        op = Operation(name, operands, result_types, attributes or {})
        return self.insert(op)

    def insert(self, op: Operation) -> Operation:
        op.span, op.name_span, op.location = self.anchor.span, self.anchor.name_span, self.anchor.location
        if self.block is None:
            self.anchor.parent.insert_before(self.anchor, op)
        else:
            self.block.insert_before(self.block.ops[-1], op)
        return op

    def index(self, value: int) -> Value:
        return self.emit("arith.constant", (), [T.index], {"value": IntegerAttr(int(value), T.index)}).result


class IndexExpr:
    """An index value while an affine expression is evaluated: arithmetic emits arith ops."""

    def __init__(self, em: Emitter, value: Value):
        self.em, self.value = em, value

    def _v(self, other) -> Value:
        return other.value if isinstance(other, IndexExpr) else self.em.index(other)

    def _op(self, name: str, a, b) -> "IndexExpr":
        return IndexExpr(self.em, self.em.emit(name, [self._v(a), self._v(b)], [T.index]).result)

    def __add__(self, other):
        return self if other == 0 and isinstance(other, int) else self._op("arith.addi", self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return self._op("arith.subi", self, other)

    def __rsub__(self, other):
        return self._op("arith.subi", other, self)

    def __mul__(self, other):
        return self if other == 1 and isinstance(other, int) else self._op("arith.muli", self, other)

    __rmul__ = __mul__

    def __neg__(self):
        return self._op("arith.subi", 0, self)

    def __floordiv__(self, other):
        return self._op("arith.floordivsi", self, other)

    def __mod__(self, other):  # affine mod is never negative for a positive divisor
        return self - (self // other) * other


def map_indices(em: Emitter, m: AffineMap, ivs: list[Value]) -> list[Value]:
    out = []
    for kind, value in m.results:
        if kind == "dim":
            out.append(ivs[value])
        elif kind == "const":
            out.append(em.index(value))
        else:
            result = evaluate(m, value, {i: IndexExpr(em, iv) for i, iv in enumerate(ivs)})
            if result is None:
                raise ValueError(f"cannot lower the affine expression '{value}'")
            out.append(result.value if isinstance(result, IndexExpr) else em.index(result))
    return out


def loop_bounds(op: Operation, s: Structured) -> list[int]:
    bounds: list = [None] * s.num_dims
    for operand, m in zip(op.operands, s.maps):
        if not isinstance(operand.type, T.MemRefType):
            continue
        for pos, (kind, value) in enumerate(m.results):
            if kind == "dim" and bounds[value] is None:
                bounds[value] = operand.type.shape[pos]
    if any(b is None for b in bounds):
        raise ValueError("a loop bound is not a static size of an operand")
    return bounds


def lower_to_loops(op: Operation) -> None:
    """Replace linalg op `op` (on memrefs) by its loop nest."""
    s = structured(op)
    ins, outs = segments(op)
    em = Emitter(op)
    zero, one = em.index(0), em.index(1)
    bounds = [em.index(b) for b in loop_bounds(op, s)]  # before the nest: no constants inside loops
    ivs = []
    for bound in bounds:
        block = Block([T.index])
        block.arguments[0].name = "i"
        block.append(Operation("scf.yield", (), ()))
        em.emit("scf.for", [zero, bound, one], (), None).add_region(Region([block]))
        em.block = block
        ivs.append(block.arguments[0])
    mapping: dict = {}
    for arg, operand, m in zip(s.body.arguments, (*ins, *outs), s.maps):
        if isinstance(operand.type, T.MemRefType):
            if arg.uses or operand in ins:
                mapping[arg] = em.emit("memref.load", [operand, *map_indices(em, m, ivs)],
                                       [operand.type.element]).result
        else:
            mapping[arg] = operand
    for body_op in s.body.ops:
        if body_op.name == "linalg.yield":
            for value, out, m in zip(body_op.operands, outs, s.maps[len(ins):]):
                em.emit("memref.store", [mapping.get(value, value), out, *map_indices(em, m, ivs)], ())
        elif body_op.name == "linalg.index":
            mapping[body_op.results[0]] = ivs[body_op.attr("dim").value]
        else:
            em.insert(body_op.clone(mapping))
    op.erase()


TARGET = ConversionTarget("loops", legal_dialects=frozenset({"scf", "memref", "arith", "math", "func",
                                                             "builtin", "cf", "check", "util"}))


@dataclass(frozen=True)
class ConvertLinalgToLoops(Pass):
    name = "convert-linalg-to-loops"
    summary = "Bufferize (tensors to memrefs) and lower linalg ops to scf.for loops over memref loads/stores"
    anchor = "builtin.module"

    def run(self, module: Operation) -> None:
        from .linalg_decompose import decompose
        decompose(module)
        bufferize_module(module)
        for op in [o for o in module.walk() if is_structured(o)]:
            try:
                lower_to_loops(op)
            except ValueError as e:
                raise PassFailure(f"failed to legalize '{op.name}' to loops: {e}", op.name_span or op.span) from None
        check_legal(module, TARGET)
