"""linalg-fuse-elementwise-ops: fuse producer -> consumer chains of elementwise `linalg.generic`s.

A consumer input that a producer generic computes (all-parallel, one result,
used only here, read with the same identity indexing as it is written) is
replaced by the producer's own inputs, and the producer's body is cloned in
front of the consumer's: one loop nest instead of two, and no intermediate
tensor. Fusing repeats until a whole elementwise chain is one op.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..dialects.affine_maps import parse_map
from ..dialects.linalg import segments
from ..ir import types as T
from ..ir.attributes import ArrayAttr, DenseArrayAttr
from ..ir.core import Block, Operation, Region
from .driver import GreedyDriver
from .passes import Pass, register
from .rewriter import RewritePattern


def _maps(op: Operation) -> list:
    return list(op.attributes["indexing_maps"].items)


def _all_parallel(op: Operation) -> bool:
    return all("parallel" in str(it) for it in op.attributes["iterator_types"].items)


def _is_identity(map_attr, rank: int) -> bool:
    m = parse_map(str(map_attr))
    return m is not None and m.num_dims == rank and list(m.results) == [("dim", i) for i in range(rank)]


def _fusable_producer(consumer: Operation, index: int):
    """The producer generic of consumer input `index`, when fusing it keeps the meaning."""
    value = consumer.operands[index]
    producer = getattr(value, "op", None)
    if producer is None or producer.name != "linalg.generic" or not _all_parallel(producer):
        return None
    p_ins, p_outs = segments(producer)
    if len(p_outs) != 1 or len(producer.results) != 1 or len(value.uses) != 1:
        return None
    rank = producer.results[0].type.rank
    if not _is_identity(_maps(producer)[-1], rank) or not _is_identity(_maps(consumer)[index], rank):
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


def fuse(consumer: Operation, index: int, producer: Operation) -> Operation:
    c_ins, c_outs = segments(consumer)
    p_ins, _ = segments(producer)
    c_maps, p_maps = _maps(consumer), _maps(producer)
    inputs = c_ins[:index] + p_ins + c_ins[index + 1:]
    maps = c_maps[:index] + p_maps[:len(p_ins)] + c_maps[index + 1:len(c_ins)] + c_maps[len(c_ins):]
    c_body, p_body = consumer.regions[0].blocks[0], producer.regions[0].blocks[0]
    c_args, p_args = c_body.arguments, p_body.arguments
    new_args = c_args[:index] + p_args[:len(p_ins)] + c_args[index + 1:]
    block = Block([a.type for a in new_args])
    mapping = {}
    for old, new in zip(new_args, block.arguments):
        new.name = old.name
        mapping[old] = new
    for op in p_body.ops[:-1]:
        block.append(op.clone(mapping))
    produced = p_body.ops[-1].operands[0]
    mapping[c_args[index]] = mapping.get(produced, produced)
    for op in c_body.ops:
        block.append(op.clone(mapping))
    attrs = dict(consumer.attributes)
    attrs["indexing_maps"] = ArrayAttr(tuple(maps))
    attrs["operandSegmentSizes"] = DenseArrayAttr(T.i32, (len(inputs), len(c_outs)))
    fused = Operation("linalg.generic", [*inputs, *c_outs], consumer.result_types, attrs, [Region([block])],
                      span=consumer.span, location=consumer.location)
    fused.name_span = consumer.name_span
    return fused


@register
@dataclass(frozen=True)
class LinalgElementwiseFusion(Pass):
    name = "linalg-fuse-elementwise-ops"
    summary = "Fuse producer-consumer chains of elementwise linalg.generic ops into one"

    def run(self, op: Operation) -> None:
        GreedyDriver([FuseElementwise()], fold=False).run(op)
