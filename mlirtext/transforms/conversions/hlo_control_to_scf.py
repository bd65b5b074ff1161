"""hlo -> scf for control flow: while / if on the same (tensor) values, their regions copied
as they are (their ops are lowered in turn), the 0-d predicate read as a scalar; case becomes
a chain of `scf.if`. Unsigned values cross them as their signless forms (`hlo_unsigned`): the
scf ops carry signless tensors, cast to the unsigned type inside the copied regions until
their ops convert too.
"""
from __future__ import annotations

from typing import Optional

from ...ir import types as T
from ...ir.attributes import IntegerAttr
from ...ir.core import Block, Operation, Region
from ..rewriter import RewritePattern
from .build import all_static, hlo_names
from .hlo_scalar import is_signless_int
from .hlo_unsigned import CAST, is_unsigned, replace_with_signless, signless, to_signless


def _region_as(block: Block, arg_values, terminator) -> Optional[Block]:
    """A copy of HLO region `block` into a new block whose arguments are `arg_values`' types
    (or, when `arg_values` is None, no arguments and outer values used directly); the HLO
    return becomes `terminator(new_block, returned values)`."""
    new = Block([v.type for v in block.arguments] if arg_values is None else [t for t in arg_values])
    mapping = {}
    for a, b in zip(block.arguments, new.arguments):
        b.name = a.name
        mapping[a] = b if b.type == a.type else _append_cast(new, b, a.type)  # signless -> unsigned
    for op in block.ops:
        if op.name.endswith(".return") and op.dialect in ("stablehlo", "mhlo"):
            values = [mapping.get(v, v) for v in op.operands]
            terminator(new, [_append_cast(new, v, signless(v.type)) if is_unsigned(v.type) else v
                             for v in values])
            return new
        new.append(op.clone(mapping))
    return None


def _append_cast(block: Block, value, to_type):
    cast = Operation(CAST, [value], [to_type])
    block.append(cast)
    return cast.results[0]


def _yield(block: Block, values) -> None:
    block.append(Operation("scf.yield", list(values), []))


def extract_scalar(block_or_rw, value, before=None):
    """The element of 0-d tensor `value`: appended to a block, or created before `before`."""
    if before is None:
        op = Operation("tensor.extract", [value], [value.type.element])
        block_or_rw.append(op)
        return op.results[0]
    return block_or_rw.create(before, "tensor.extract", [value], [value.type.element]).result


class While(RewritePattern):
    """`scf.while` on the same (tensor) values; the condition's 0-d tensor is read as an i1."""
    ops = hlo_names("while")

    def match_and_rewrite(self, op, rw) -> bool:
        if len(op.regions) != 2 or not all(r.blocks and len(r.blocks) == 1 for r in op.regions):
            return False
        if not all_static(*(v.type for v in op.operands)):
            return False
        types = [signless(v.type) for v in op.operands]

        def condition(block, values):
            flag = extract_scalar(block, values[0])
            block.append(Operation("scf.condition", [flag, *block.arguments], []))

        before = _region_as(op.regions[0].blocks[0], types, condition)
        after = _region_as(op.regions[1].blocks[0], types, _yield)
        if before is None or after is None:
            return False
        operands = [to_signless(rw, op, v) for v in op.operands]
        new = rw.create(op, "scf.while", operands, types, regions=[Region([before]), Region([after])])
        replace_with_signless(rw, op, new.results)
        return True


class If(RewritePattern):
    ops = hlo_names("if")

    def match_and_rewrite(self, op, rw) -> bool:
        if len(op.regions) != 2 or not all(r.blocks and len(r.blocks) == 1 for r in op.regions):
            return False
        branches = [_region_as(r.blocks[0], [], _yield) for r in op.regions]
        if any(b is None for b in branches):
            return False
        flag = extract_scalar(rw, op.operand("pred"), op)
        new = rw.create(op, "scf.if", [flag], [signless(r.type) for r in op.results],
                        regions=[Region([branches[0]]), Region([branches[1]])])
        replace_with_signless(rw, op, new.results)
        return True


class Case(RewritePattern):
    """A chain of `scf.if` on `index == i`; an index out of range takes the last branch."""
    ops = hlo_names("case")

    def match_and_rewrite(self, op, rw) -> bool:
        if not op.regions or not all(r.blocks and len(r.blocks) == 1 for r in op.regions):
            return False
        branches = [_region_as(r.blocks[0], [], _yield) for r in op.regions]
        index_tensor = op.operand("index")
        if any(b is None for b in branches) or not is_signless_int(signless(index_tensor.type.element)):
            return False
        types = [signless(r.type) for r in op.results]
        index = extract_scalar(rw, to_signless(rw, op, index_tensor), op)
        chain = branches[-1]
        for i in range(len(branches) - 2, -1, -1):
            block = Block()
            c = Operation("arith.constant", [], [index.type], {"value": IntegerAttr(i, index.type)})
            block.append(c)
            eq = Operation("arith.cmpi", [index, c.results[0]], [T.i1], {"predicate": IntegerAttr(0, T.i64)})
            block.append(eq)
            inner = Operation("scf.if", [eq.results[0]], types, {}, [Region([branches[i]]), Region([chain])])
            block.append(inner)
            _yield(block, inner.results)
            chain = block
        # `chain` is a block computing the result: splice its ops in before `op`
        values = None
        for inner in list(chain.ops):
            inner.detach()
            if inner.name == "scf.yield":
                values = list(inner.operands)
                inner.drop_operand_uses()
                continue
            rw.insert_before(op, inner)
        replace_with_signless(rw, op, values)
        return True


PATTERNS = [While(), If(), Case()]
