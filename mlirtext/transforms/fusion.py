"""linalg-fuse-elementwise-ops: fuse producer -> consumer chains of elementwise `linalg.generic`s.

A consumer input that a producer generic computes (all-parallel, one result,
used only here, read with the same identity indexing as it is written) is
replaced by the producer's own inputs, and the producer's body is cloned in
front of the consumer's: one loop nest instead of two, and no intermediate
tensor. Fusing repeats until a whole elementwise chain is one op.

A generic input that is a splat constant (one value broadcast to the whole tensor: the
coefficients of an expanded erf or tanh, a scale) becomes a scalar constant in the body, as
MLIR's fold-scalar-or-splat-constant does: the loop then reads one register instead of a
tensor as big as its output (and the module does not store that tensor). As there, an input is
kept where without it the indexing maps would no longer give every loop its size.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..dialects.affine_maps import parse_map
from ..dialects.linalg import explicit_indexing_maps, loops_invertible, segments
from ..ir import types as T
from ..ir.arrays import array_to_attr, dense_to_array, dtype_of
from ..ir.attributes import ArrayAttr, DenseArrayAttr
from ..ir.dense import DenseElementsAttr
from ..ir.core import Block, Operation, Region
from .driver import GreedyDriver
from .passes import Pass
from .rewriter import RewritePattern


def _maps(op: Operation) -> list:
    return list(op.attr("indexing_maps").items)


def _all_parallel(op: Operation) -> bool:
    return all("parallel" in str(it) for it in op.attr("iterator_types").items)


def _is_identity(map_attr, rank: int) -> bool:
    m = parse_map(str(map_attr))
    return m is not None and m.num_dims == rank and list(m.results) == [("dim", i) for i in range(rank)]


def _fusable_producer(consumer: Operation, index: int):
    """The producer generic of consumer input `index`, when fusing it keeps the meaning: the
    consumer is its only user (at one input or several, as `x * relu6(x + 3)` reads x twice),
    reading it with the identity map wherever it does."""
    value = consumer.operands[index]
    producer = getattr(value, "op", None)
    if producer is None or producer.name != "linalg.generic" or not _all_parallel(producer):
        return None
    p_ins, p_outs = segments(producer)
    if len(p_outs) != 1 or len(producer.results) != 1 or any(u.op is not consumer for u in value.uses):
        return None
    rank = producer.results[0].type.rank
    c_ins, _ = segments(consumer)
    if len(value.uses) != sum(v is value for v in c_ins) or not _is_identity(_maps(producer)[-1], rank) or \
            not all(_is_identity(_maps(consumer)[i], rank) for i, v in enumerate(c_ins) if v is value):
        return None
    body = producer.regions[0].blocks[0]
    if body.arguments[len(p_ins)].uses:  # the producer reads its init: not purely elementwise
        return None
    return producer


class FuseElementwise(RewritePattern):
    ops = ("linalg.generic",)

    def match_and_rewrite(self, consumer: Operation, rw) -> bool:
        if not _all_parallel(consumer) or not consumer.results:
            return False
        ins, outs = segments(consumer)
        for index in range(len(ins)):
            producer = _fusable_producer(consumer, index)
            if producer is not None and producer.results[0].type.rank == consumer.results[0].type.rank:
                fused = fuse(consumer, index, producer)
                rw.insert_before(consumer, fused)
                rw.replace_op(consumer, fused.results)
                rw.erase_op(producer)  # its one use was the fused operand
                return True
        return False


class FoldSplatInputs(RewritePattern):
    """A generic's splat-constant inputs become scalar constants in its body."""
    ops = ("linalg.generic",)

    def match_and_rewrite(self, op: Operation, rw) -> bool:
        ins, outs = segments(op)
        splats = _foldable_splats(op, ins)
        if not splats:
            return False
        body = op.regions[0].blocks[0]
        keep = [i for i in range(len(ins)) if i not in splats]
        maps = _maps(op)
        block = Block([body.arguments[i].type for i in (*keep, *range(len(ins), len(body.arguments)))])
        mapping = {}
        for old, new in zip([body.arguments[i] for i in (*keep, *range(len(ins), len(body.arguments)))],
                            block.arguments):
            new.name = old.name
            mapping[old] = new
        for i, attr in splats.items():   # (the scalars first: every op of the body may read them)
            const = Operation("arith.constant", (), (body.arguments[i].type,), {"value": attr})
            block.append(const)
            mapping[body.arguments[i]] = const.results[0]
        for inner in body.ops:
            block.append(inner.clone(mapping))
        attrs = dict(op.attributes)
        attrs["indexing_maps"] = ArrayAttr(tuple(maps[i] for i in keep) + tuple(maps[len(ins):]))
        attrs["operandSegmentSizes"] = DenseArrayAttr(T.i32, (len(keep), len(outs)))
        folded = Operation("linalg.generic", [*(ins[i] for i in keep), *outs], op.result_types, attrs,
                           [Region([block])], span=op.span, location=op.location)
        folded.name_span = op.name_span
        rw.insert_before(op, folded)
        rw.replace_op(op, folded.results)
        return True


def _foldable_splats(op: Operation, ins) -> dict:
    """The scalar of each splat input of `op` that can be folded, by input index: in order, as long
    as the maps left still give every loop its size (MLIR's fold-scalar-or-splat-constant checks
    that the concatenated maps stay invertible; `linalg.generic ins(%splat) outs(%acc)` of a
    reduction into a 0-d accumulator keeps its input, or no operand would say how long its loop is)."""
    scalars = {i: _splat_scalar(v) for i, v in enumerate(ins)}
    scalars = {i: c for i, c in scalars.items() if c is not None}
    maps = explicit_indexing_maps(op) if scalars else None  # (parsed only for a generic with splats)
    if maps is None:
        return {}
    num_loops = len(op.attr("iterator_types").items)
    folded = {}
    for i, scalar in scalars.items():
        if loops_invertible([m for j, m in enumerate(maps) if j != i and j not in folded], num_loops):
            folded[i] = scalar
    return folded


def _splat_scalar(value):
    """The scalar attribute of `value` when an `arith.constant` defines it as a splat of an int or
    float element type; else None."""
    const = getattr(value, "op", None)
    if const is None or const.name != "arith.constant" or not isinstance(value.type, T.RankedTensorType):
        return None
    attr = const.attr("value")
    elt = T.element_type(value.type)
    if not isinstance(attr, DenseElementsAttr) or attr.is_raw or \
            not isinstance(elt, (T.FloatType, T.IntegerType)) or \
            not (attr.splat or len(attr.values) == 1 or value.type.num_elements == 1):
        return None
    try:
        return array_to_attr(dense_to_array(attr, dtype_of(elt), ()), elt)
    except (ValueError, TypeError, KeyError):
        return None


def fuse(consumer: Operation, index: int, producer: Operation) -> Operation:
    """The consumer with the producer's body in place of its input `index` (and of every other
    input that is the same value)."""
    c_ins, c_outs = segments(consumer)
    p_ins, _ = segments(producer)
    c_maps, p_maps = _maps(consumer), _maps(producer)
    same = {i for i, v in enumerate(c_ins) if v is c_ins[index]}
    before = [i for i in range(index) if i not in same]
    after = [i for i in range(index + 1, len(c_ins)) if i not in same]
    inputs = [c_ins[i] for i in before] + p_ins + [c_ins[i] for i in after]
    maps = [c_maps[i] for i in before] + p_maps[:len(p_ins)] + [c_maps[i] for i in after] + c_maps[len(c_ins):]
    c_body, p_body = consumer.regions[0].blocks[0], producer.regions[0].blocks[0]
    c_args, p_args = c_body.arguments, p_body.arguments
    new_args = [c_args[i] for i in before] + p_args[:len(p_ins)] + [c_args[i] for i in after] + \
        list(c_args[len(c_ins):])
    block = Block([a.type for a in new_args])
    mapping = {}
    for old, new in zip(new_args, block.arguments):
        new.name = old.name
        mapping[old] = new
    for op in p_body.ops[:-1]:
        block.append(op.clone(mapping))
    produced = p_body.ops[-1].operands[0]
    for i in same:
        mapping[c_args[i]] = mapping.get(produced, produced)
    for op in c_body.ops:
        block.append(op.clone(mapping))
    attrs = dict(consumer.attributes)
    attrs["indexing_maps"] = ArrayAttr(tuple(maps))
    attrs["operandSegmentSizes"] = DenseArrayAttr(T.i32, (len(inputs), len(c_outs)))
    fused = Operation("linalg.generic", [*inputs, *c_outs], consumer.result_types, attrs, [Region([block])],
                      span=consumer.span, location=consumer.location)
    fused.name_span = consumer.name_span
    return fused


@dataclass(frozen=True)
class LinalgElementwiseFusion(Pass):
    name = "linalg-fuse-elementwise-ops"
    summary = "Fuse producer-consumer chains of elementwise linalg.generic ops into one"

    def run(self, op: Operation) -> None:
        GreedyDriver([FuseElementwise(), FoldSplatInputs()], fold=False).run(op)
