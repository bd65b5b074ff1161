"""Whether two functions compute the same thing because they differ only in where their constants
are: bisect need not run a function after a pass that merely merged or moved constants.

Every conversion to loops or llvm materialises its own index constants, and `cse` after it merges
them, so without this the step's end and the conversion each cost a run at that (slow) level when
the conversion is to blame. The check is structural and exact: each op but the constants, in order,
with its name, attributes, result types and regions, its operands numbered in order of definition,
a constant operand standing for its value and type. Two functions alike so compute the same
results: a constant op is pure and gives its value wherever it is. Anything else a pass did (an op
merged, moved, rewritten, a nudged result) makes them differ, and the function runs.
"""
from __future__ import annotations

from ..ir.core import Operation
from ..transforms.constants import CONSTANT_OPS, constant_value


def same_but_constants(a: Operation, b: Operation) -> bool:
    """Whether `a` and `b` (modules, or functions) are alike but for where their constant ops are."""
    return _Form().of(a) == _Form().of(b)


class _Form:
    """An op tree as a list: values and blocks by number, constants by value."""

    def __init__(self):
        self.values: dict = {}
        self.blocks: dict = {}
        self.out: list = []

    def of(self, root: Operation) -> list:
        self._op(root)
        return self.out

    def _operand(self, value):
        attr = constant_value(value)
        if attr is not None:
            return ("constant", str(attr), str(value.type))
        return self.values.get(value, ("outside", str(value.type)))

    def _op(self, op: Operation) -> None:
        if op.name in CONSTANT_OPS and constant_value(op.results[0]) is not None:
            return   # (its uses stand for it)
        self.out.append((op.name, tuple(self._operand(v) for v in op.operands),
                         tuple(str(t) for t in op.result_types),
                         tuple(sorted((k, str(v)) for k, v in op.attributes.items())),
                         tuple(self.blocks.get(s) for s in op.successors), len(op.regions)))
        for r in op.results:
            self.values[r] = len(self.values)
        for region in op.regions:
            for block in region.blocks:   # (numbered first: a branch may name a later block)
                self.blocks[block] = len(self.blocks)
            for block in region.blocks:
                self.out.append(("block", tuple(str(arg.type) for arg in block.arguments)))
                for arg in block.arguments:
                    self.values[arg] = len(self.values)
                for nested in block.ops:
                    self._op(nested)
            self.out.append(("end",))
