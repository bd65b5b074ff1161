"""The greedy pattern driver: fold, apply patterns and drop dead ops until nothing changes.

Like MLIR's `applyPatternsGreedily`: a worklist seeded with every op under
the root (first op first); each op popped is erased when dead, else folded,
else offered to the patterns that name it. Whatever a change touches (new
ops, users of replaced values, definers of dropped operands) goes back on
the worklist. A bound on rewrites turns a pattern set that never settles
into an error instead of a hang.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Optional

import numpy as np

from ..dialects import lookup
from ..dialects.base import PURE, TERMINATOR
from ..ir import types as T
from ..ir.arrays import array_to_attr, attr_to_array
from ..ir.core import Operation
from .constants import constant_value, is_constant, materialize
from .rewriter import PatternRewriter, RewritePattern

#: Largest result (in elements) that constant folding computes: bigger constants
#: cost more memory and file size than the work they save.
FOLD_ELEMENTS_LIMIT = 1 << 16


class DidNotConverge(Exception):
    """The patterns kept rewriting past the bound."""


def is_pure(op: Operation) -> bool:
    definition = lookup(op.name)
    return definition is not None and definition.has(PURE)


def is_trivially_dead(op: Operation) -> bool:
    if any(r.uses for r in op.results) or not is_pure(op):
        return False
    return not lookup(op.name).has(TERMINATOR)


class GreedyDriver:
    def __init__(self, patterns: Iterable[RewritePattern], fold: bool = True, frozen: frozenset = frozenset()):
        """`frozen`: ids of ops the patterns are not offered (a partial conversion's; see conversion.py)."""
        self.frozen = frozen
        self.by_name: dict[str, list[RewritePattern]] = defaultdict(list)
        self.any_op: list[RewritePattern] = []
        for pattern in patterns:
            if pattern.ops:
                for name in pattern.ops:
                    self.by_name[name].append(pattern)
            else:
                self.any_op.append(pattern)
        self.fold = fold
        self.worklist: list[Operation] = []
        self.queued: set[int] = set()
        self.erased: dict[int, Operation] = {}  # (holding the op keeps its id from being reused)
        self.rewriter = PatternRewriter(self._push, self._erased, self._push)

    def _push(self, op: Operation) -> None:
        if id(op) not in self.queued:
            self.queued.add(id(op))
            self.worklist.append(op)

    def _erased(self, op: Operation) -> None:
        self.erased[id(op)] = op

    def run(self, root: Operation, max_rewrites: Optional[int] = None) -> bool:
        """Rewrite everything nested under `root`; True when anything changed."""
        ops = [op for op in root.walk() if op is not root]
        for op in reversed(ops):  # popping from the end visits ops in program order
            self._push(op)
        budget = max_rewrites if max_rewrites is not None else 10 * len(ops) + 1000
        changed = False
        while self.worklist:
            if budget <= 0:
                if max_rewrites is not None:  # the caller's limit: stop where we are
                    break
                raise DidNotConverge(f"patterns did not converge (still rewriting '{self.worklist[-1].name}')")
            op = self.worklist.pop()
            self.queued.discard(id(op))
            if id(op) in self.erased or op.parent is None:
                continue
            if self._process(op):
                changed = True
                budget -= 1
        return changed

    def _process(self, op: Operation) -> bool:
        if is_trivially_dead(op):
            self.rewriter.erase_op(op)
            return True
        if self.fold and self._fold(op):
            return True
        if id(op) in self.frozen:
            return False
        for pattern in self.by_name.get(op.name, []) + self.any_op:
            if pattern.match_and_rewrite(op, self.rewriter):
                return True
        return False

    # -- folding ----------------------------------------------------------------------------
    def _fold(self, op: Operation) -> bool:
        if is_constant(op) or not op.results:
            return False
        constants = [constant_value(v) for v in op.operands]
        definition = lookup(op.name)
        folded = definition.fold(op, constants) if definition is not None and definition.fold else None
        if folded is None and constants and all(c is not None for c in constants) and is_pure(op) \
                and not op.regions and all(map(_foldable_type, op.result_types)):
            folded = evaluate(op, constants)
        if folded is None:
            return False
        values = []
        for result, item in zip(op.results, folded, strict=True):
            if isinstance(item, Operation):
                raise TypeError("a folder returned an op")
            if hasattr(item, "uses"):  # an existing value
                values.append(item)
            else:
                values.append(materialize(self.rewriter, op, item, result.type, op.dialect).result)
        self.rewriter.replace_op(op, values)
        return True


def _foldable_type(t: T.Type) -> bool:
    """Types whose values a constant op can hold: int/float/index scalars and tensors of them."""
    if isinstance(t, T.RankedTensorType):
        t = t.element
    return isinstance(t, (T.IntegerType, T.FloatType, T.IndexType))


def evaluate(op: Operation, constants: list) -> Optional[list]:
    """Constant-fold a pure op by running its semantics on its constant operands,
    when the result is small enough to be worth keeping as a constant."""
    from ..interpreter import builtin_semantics
    semantics = builtin_semantics().impls.get(op.name)
    if semantics is None:
        return None
    for result in op.results:
        t = result.type
        if isinstance(t, T.ShapedType) and (any(d is None for d in t.shape) or
                                            int(np.prod(t.shape)) > FOLD_ELEMENTS_LIMIT):
            return None
    try:
        args = [attr_to_array(c, v.type) for c, v in zip(constants, op.operands)]
        with np.errstate(all="ignore"):
            out = semantics(None, op, args)
        return [array_to_attr(np.asarray(a), r.type) for a, r in zip(out, op.results, strict=True)]
    except Exception:  # noqa: BLE001 - anything the semantics cannot fold is simply not folded
        return None
