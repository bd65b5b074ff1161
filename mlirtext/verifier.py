"""The verifier: structural rules every module obeys, then each op's own rules.

Structural rules (as MLIR's verifier): operands are defined where they are
used (dominance in SSA-CFG regions, no values crossing into isolated-from-above
ops), terminators end the blocks of ops that need them and nothing follows a
terminator, symbols are unique in their table and calls resolve with matching
types. Each op's declaration may add a `verify` hook (see `mlirtext/dialects`).
"""
from __future__ import annotations

import traceback
from pathlib import Path
from typing import Optional

from .diagnostics import Diagnostic
from .dialects.base import GRAPH_REGION, ISOLATED, NO_TERMINATOR, SYMBOL_TABLE, TERMINATOR, VerifyError
from .dialects.func import function_type
from .dialects.registry import Registry, builtin_registry
from .ir.core import Block, BlockArgument, Operation, OpResult, Region, Value
from .ir.attributes import ArrayAttr, DictionaryAttr, SymbolRefAttr
from .ir.symbols import resolve_symbol, symbol_table_of


def verify(module: Operation, registry: Optional[Registry] = None) -> list[Diagnostic]:
    """All problems found in `module`; empty when it is valid. `registry`: the dialects whose
    ops' rules apply (the built-in ones when None); other ops are checked structurally."""
    return _Verifier(registry or builtin_registry()).run(module)


def _span_of(op: Optional[Operation]):
    while op is not None:
        if op.span is not None:
            return op.name_span or op.span
        op = op.parent_op
    return None


class _Verifier:
    def __init__(self, registry: Registry):
        self.registry = registry
        self.lookup = registry.lookup
        self.diagnostics: list[Diagnostic] = []
        self.op_index: dict[int, dict[int, int]] = {}   # id(block) -> {id(op): position}
        self.dominators: dict[int, dict] = {}  # id(region) -> {id(block): its dominator-tree interval}
        self.symbol_tables: dict[int, dict] = {}          # id(table op) -> {name: op}, for calls

    def run(self, module: Operation) -> list[Diagnostic]:
        self._op(module)
        return self.diagnostics

    def error(self, op: Operation, message: str, span=None, notes=(), prefix: bool = True) -> None:
        """An error about `op`: `'name' op message` (MLIR's emitOpError), or just the message."""
        d = Diagnostic("error", f"'{op.name}' op {message}" if prefix else message, span or _span_of(op))
        for note_message, note_span in notes:
            d.note(note_message, note_span)
        self.diagnostics.append(d)

    def internal_error(self, op: Operation, what: str, e: Exception) -> None:
        """A check that raised instead of saying what is wrong: a bug, reported at the op (with
        where it raised, for the report) so that the run goes on and the input never passes."""
        frames = traceback.extract_tb(e.__traceback__)
        where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        self.error(op, f"internal error: {what} failed: {type(e).__name__}: {e}{where}; please report",
                   prefix=False)

    def _has(self, op: Operation, trait: str) -> bool:
        d = self.lookup(op.name)
        return d is not None and d.has(trait)

    def _is_table(self, op: Operation) -> bool:
        return self._has(op, SYMBOL_TABLE)

    def _graph(self, region: Region) -> bool:
        """Regions without SSA dominance: those of graph-region ops, and (as MLIR says) of
        ops mlirtext does not know, whose region kinds it cannot tell."""
        owner = region.parent
        if owner is None:
            return False
        d = self.lookup(owner.name)
        return d is None or d.has(GRAPH_REGION) or d.has(NO_TERMINATOR)

    # -- per op -----------------------------------------------------------------
    def _op(self, op: Operation, reachable: Optional[bool] = None) -> None:
        """Verify `op` and what it holds; `reachable`: whether its block is reachable from
        its region's entry, when the caller knows."""
        definition = self.lookup(op.name)
        block = op.parent
        # As MLIR: operands of ops in blocks unreachable from the entry are not checked.
        if reachable is None:
            reachable = block is None or self._reachable(block)
        operands = op.operands if reachable else ()
        index = None
        for i, value in enumerate(operands):
            # Fast path, the common case: defined above in the same block.
            if block is not None:
                if type(value) is OpResult and value.op.parent is block:
                    if index is None:
                        index = self._index(block)
                    if index[id(value.op)] < index[id(op)]:
                        continue
                elif type(value) is BlockArgument and value.block is block:
                    continue
            problem = self._dominance_problem(value, op)
            if problem is not None:
                notes = [("operand defined here", value.span)] if value.span else []
                if isinstance(problem, tuple):  # crossing into an isolated op (MLIR's wording)
                    problem, isolated = problem
                    self.error(op, f"{problem} (operand #{i})",
                               notes=[("required by region isolation constraints", _span_of(isolated))]
                               + notes)
                else:
                    self.error(op, f"operand #{i} {problem}", notes=notes)
                break
        if definition is not None:
            problem = definition.count_problem(op)
            if problem is not None:  # the op's own rules may rely on the counts: not run
                self.error(op, problem)
            else:
                self._structure(op, definition)
            if problem is None and definition.verify is not None:
                try:
                    definition.verify(op)
                except VerifyError as e:
                    self.error(op, str(e), e.span, e.notes)
                    for message in getattr(e, "also", ()):
                        self.error(op, message)
                except Exception as e:  # noqa: BLE001 - a bug in an op's rules: said, never a silent pass
                    self.internal_error(op, f"verifier of '{op.name}'", e)
            if definition.has(SYMBOL_TABLE):
                self._symbol_table(op)
        if op.attributes:
            self._dialect_attrs(op)
        if op.name == "func.call":
            self._call(op)
        for region in op.regions:
            self._cfg(op, region)
            for block in region.blocks:
                reachable = self._reachable(block)
                for inner in block.ops:
                    self._op(inner, reachable)

    def _dialect_attrs(self, op: Operation) -> None:
        """The checks dialects register for their discardable attributes, on the op and on
        its function arguments (`arg_attrs`)."""
        check_of = self.registry.discardable_check
        found = [(key, attr, None) for key, attr in op.attributes.items() if "." in key]
        arg_attrs = op.attr("arg_attrs")
        if isinstance(arg_attrs, ArrayAttr):
            for i, d in enumerate(arg_attrs.items):
                if isinstance(d, DictionaryAttr):
                    found += [(key, attr, i) for key, attr in d.items if "." in key]
        for key, attr, index in found:
            check = check_of(key)
            if check is None:
                continue
            try:
                check(op, attr, index)
            except VerifyError as e:
                self.error(op, str(e), e.span, e.notes)
            except Exception as e:  # noqa: BLE001 - as for an op's verifier
                self.internal_error(op, f"check of attribute '{key}' on '{op.name}'", e)

    def _cfg(self, op: Operation, region: Region) -> None:
        """Successors (of any op, known or not) only on a block's last op, never to the entry."""
        if not region.blocks:
            return
        entry = region.blocks[0]
        for block in region.blocks:
            ops = block.ops
            for inner in ops:
                if not inner.successors:
                    continue
                if inner is not ops[-1]:
                    self.error(inner, "operation with block successors must terminate its parent block",
                               prefix=False)
                if any(s is entry for s in inner.successors):
                    self.error(op, "entry block of region may not have predecessors", prefix=False,
                               notes=[("branch to the entry block here", _span_of(inner))])
                    return

    def _structure(self, op: Operation, definition) -> None:
        if definition.has(TERMINATOR):
            block = op.parent
            if block is not None and block.ops and block.ops[-1] is not op:
                self.error(op, "must be the last operation in the parent block")
        if definition.has(NO_TERMINATOR) or definition.has(GRAPH_REGION):
            return
        for region in op.regions:
            for block in region.blocks:
                if not block.ops:
                    self.error(op, "empty block: expect at least a terminator",  # at the op, as MLIR
                               notes=[("the empty block", block.span)] if block.span else ())
                    continue
                last = block.ops[-1]
                last_def = self.lookup(last.name)
                if last_def is not None and not last_def.has(TERMINATOR) and not any(
                        self._has(o, TERMINATOR) for o in block.ops):  # else: "must be the last operation"
                    self.error(last, "block with no terminator: this op is the last one in a block "
                               f"of '{op.name}', which needs a terminator")

    # -- dominance ----------------------------------------------------------------
    def _dominance_problem(self, value: Value, user: Operation):
        """None when `value` may be used by `user`; else what is wrong (a message, or a
        message and the isolated-from-above op the use crosses into)."""
        if isinstance(value, OpResult):
            def_block = value.op.parent
            def_op = value.op
        elif isinstance(value, BlockArgument):
            def_block = value.block
            def_op = None
        else:
            return "is not defined by any op or block"
        if def_block is None or def_block.parent is None:
            return "is defined by an op that is not in the IR"
        # Climb from the user to the op that lives in the defining region.
        region = def_block.parent
        current = user
        while current is not None and (current.parent is None or current.parent.parent is not region):
            parent = current.parent_op
            if parent is not None and parent is not value_owner(value) and self._has(parent, ISOLATED) \
                    and current.parent is not None:
                return "using value defined outside the region", parent
            current = parent
        if current is None:
            return "does not dominate this use (defined in a region that does not enclose it)"
        use_block = current.parent
        if use_block is def_block and self._graph(region):
            return None  # no order inside a block of a graph region
        if def_op is not None:
            if use_block is def_block:
                index = self._index(def_block)
                if current is def_op:
                    return "is used by the op that defines it"
                if index[id(def_op)] >= index[id(current)]:
                    return "does not dominate this use"
                return None
            if not self._dominates(region, def_block, use_block):
                return "does not dominate this use"
            return None
        if use_block is def_block:
            return None
        if not self._dominates(region, def_block, use_block):
            return "(a block argument) does not dominate this use"
        return None

    def _index(self, block: Block) -> dict[int, int]:
        index = self.op_index.get(id(block))
        if index is None or len(index) != len(block.ops):
            index = {id(o): i for i, o in enumerate(block.ops)}
            self.op_index[id(block)] = index
        return index

    def _doms(self, region: Region) -> dict[int, tuple[int, int]]:
        doms = self.dominators.get(id(region))
        if doms is None:
            doms = _compute_dominators(region)
            self.dominators[id(region)] = doms
        return doms

    def _dominates(self, region: Region, a: Block, b: Block) -> bool:
        """Block `a` dominates `b` (every block dominates an unreachable one, as in LLVM)."""
        doms = self._doms(region)
        inner = doms.get(id(b))
        if inner is None:
            return True
        outer = doms.get(id(a))
        return outer is not None and outer[0] <= inner[0] and inner[1] <= outer[1]

    def _reachable(self, block: Block) -> bool:
        region = block.parent
        if region is None or not region.blocks or region.blocks[0] is block:
            return True
        return id(block) in self._doms(region)

    # -- symbols -------------------------------------------------------------------
    def _symbol_table(self, table: Operation) -> None:
        seen: dict[str, Operation] = {}
        for region in table.regions:
            for block in region.blocks:
                for op in block.ops:
                    name = op.sym_name
                    if name is None:
                        continue
                    if name in seen:
                        self.error(op, f"redefinition of symbol named '{name}'", prefix=False,
                                   notes=[("see existing symbol definition here", _span_of(seen[name]))])
                    else:
                        seen[name] = op

    def _call(self, op: Operation) -> None:
        callee = op.attr("callee")
        if not isinstance(callee, SymbolRefAttr):
            return  # reported by func.call's own rules
        table = symbol_table_of(op.parent_op, self._is_table) if op.parent_op is not None else None
        target = resolve_symbol(table, callee, self.symbol_tables) if table is not None and callee is not None else None
        if target is None or target.name != "func.func":
            self.error(op, f"'{str(callee)[1:]}' does not reference a valid function")
            return
        try:
            ftype = function_type(target)
        except VerifyError:
            return
        if len(ftype.inputs) != len(op.operands):
            self.error(op, f"incorrect number of operands for callee: expected {len(ftype.inputs)}, "
                       f"but got {len(op.operands)}")
            return
        for i, (want, value) in enumerate(zip(ftype.inputs, op.operands)):
            if value.type != want:
                self.error(op, f"operand type mismatch: expected operand type '{want}', but provided "
                           f"'{value.type}' for operand number {i}")
                return
        if len(ftype.results) != len(op.results):
            self.error(op, f"incorrect number of results for callee: expected {len(ftype.results)}, "
                       f"but got {len(op.results)}")
            return
        for i, (want, result) in enumerate(zip(ftype.results, op.results)):
            if result.type != want:
                self.error(op, f"result type mismatch at index {i}")
                return


def value_owner(value: Value) -> Optional[Operation]:
    if isinstance(value, BlockArgument):
        return value.block.parent_op
    return None


def _successors(block: Block) -> list[Block]:
    return list(block.ops[-1].successors) if block.ops else []


def _compute_dominators(region: Region) -> dict[int, tuple[int, int]]:
    """The dominator tree of the region's CFG as id(block) -> (enter, leave), the block's interval
    in a depth-first walk of the tree: `a` dominates `b` when `a`'s interval holds `b`'s. Only the
    blocks reachable from the entry block are in it (the others have no entry).

    Cooper, Harvey and Kennedy's iterative algorithm on immediate dominators: near-linear on real
    CFGs, where dominator sets cost O(blocks^2) (a chain of 10,000 blocks took seconds)."""
    blocks = region.blocks
    if not blocks:
        return {}
    index = {id(b): i for i, b in enumerate(blocks)}
    succs = [[index[id(s)] for s in _successors(b) if id(s) in index] for b in blocks]
    # Postorder of the blocks reachable from the entry (iterative: CFGs can be long chains).
    order, seen, stack = [], {0}, [(0, iter(succs[0]))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            order.append(node)
            stack.pop()
        elif child not in seen:
            seen.add(child)
            stack.append((child, iter(succs[child])))
    post = {node: n for n, node in enumerate(order)}
    preds: dict[int, list[int]] = {node: [] for node in order}
    for node in order:
        for s in succs[node]:
            preds[s].append(node)
    idom = {0: 0}
    changed = True
    while changed:
        changed = False
        for node in reversed(order[:-1]):  # reverse postorder, the entry (last in postorder) left out
            new = None
            for p in preds[node]:
                if p not in idom:
                    continue
                if new is None:
                    new = p
                    continue
                a, b = p, new
                while a != b:
                    while post[a] < post[b]:
                        a = idom[a]
                    while post[b] < post[a]:
                        b = idom[b]
                new = a
            if idom.get(node) != new:
                idom[node] = new
                changed = True
    children: dict[int, list[int]] = {node: [] for node in order}
    for node, parent in idom.items():
        if node != parent:
            children[parent].append(node)
    intervals, clock, stack = {}, 0, [(0, iter(children[0]))]
    enter = {0: 0}
    while stack:
        node, kids = stack[-1]
        kid = next(kids, None)
        clock += 1
        if kid is None:
            intervals[id(blocks[node])] = (enter[node], clock)
            stack.pop()
        else:
            enter[kid] = clock
            stack.append((kid, iter(children[kid])))
    return intervals
