"""A function as a data-flow graph: ops as nodes, SSA values as edges, ops with regions as
groups of the ops inside them, the function's arguments and results as the ends.

The graph view of the editor and the bench's HTML report draw it. Built from the IR alone
(any level): the caller says where an op (or a function argument) is in the document (`where`, a
range or None) and
which dispatch it went into (`dispatch_of`, a number or None), so the same builder serves the
source level (an op's own span) and a lowered one (the span of the source op it came from).

The answer is plain JSON:
- nodes: {"id", "kind" ("input", "op", "output"), "op" (name), "dialect", "label", "parent" (the
  id of the op whose region holds it, or None), "children" (how many ops its regions hold),
  "range" ([start line, start char, end line, end char], 0-based, or None), "dispatch"};
- edges: {"id", "source", "target", "value" (its SSA name as written, or `#N` for a result with
  none), "type"}; a value used by an op inside a region comes in to that op (drawn across the
  group's border), and a block argument of a region inside the function is the group's own
  input, not drawn (the region's op takes the values that feed it);
- the function's return is not a node: each of its operands is an "output" node.
"""
from __future__ import annotations

from typing import Callable, Optional

from ..ir.core import Operation, OpResult, Value

#: Ops that end a function: their operands are the function's results.
RETURNS = frozenset({"func.return", "llvm.return", "return"})

Range = Optional[list]


def function_graph(fn: Operation, level: Optional[str], where: Callable[[object], Range],
                   dispatch_of: Callable[[Operation], Optional[int]] = lambda op: None) -> dict:
    """{"function", "level", "nodes", "edges", "ops"} of function op `fn` (func.func or llvm.func)."""
    nodes, edges = [], []
    ids: dict = {}            # id(value) -> node id that defines it
    body = fn.regions[0].blocks[0] if fn.regions and fn.regions[0].blocks else None
    fn_range = where(fn)
    for i, arg in enumerate(body.arguments if body is not None else []):
        node = f"in{i}"
        ids[id(arg)] = node
        nodes.append(_node(node, "input", "", _value_name(arg, f"arg{i}"), None, 0, where(arg) or fn_range, None,
                           str(arg.type)))
    returned = body.terminator if body is not None and body.terminator is not None \
        and body.terminator.name in RETURNS else None
    count = 0
    for op in _ops_inside(fn):
        if op is returned:
            continue
        node = f"n{count}"
        count += 1
        for r in op.results:
            ids[id(r)] = node
        children = sum(1 for region in op.regions for block in region.blocks for _ in block.ops)
        parent = op.parent_op
        nodes.append(_node(node, "op", op.name, _op_label(op), ids.get(id(parent)) if parent is not fn else None,
                           children, where(op), dispatch_of(op), _result_types(op)))
        ids[id(op)] = node
        edges.extend(_edges_into(op, node, ids, len(edges)))
    if returned is not None:
        for i, value in enumerate(returned.operands):
            node = f"out{i}"
            nodes.append(_node(node, "output", "", f"result {i}", None, 0, where(returned), None, str(value.type)))
            source = ids.get(id(value))
            if source is not None:
                edges.append(_edge(len(edges), source, node, value))
    return {"function": fn.sym_name, "level": level, "nodes": nodes, "edges": edges, "ops": count}


def _ops_inside(fn: Operation):
    """The ops of `fn`'s regions, outer before inner, in the order they are written."""
    for region in fn.regions:
        for block in region.blocks:
            for op in block.ops:
                yield op
                yield from _ops_inside(op)


def _edges_into(op: Operation, node: str, ids: dict, first: int) -> list:
    out, seen = [], set()
    for value in op.operands:
        source = ids.get(id(value))
        if source is None:
            continue        # a region's own argument (not drawn), or a value from outside the function
        if (source, id(value)) in seen:
            continue        # one edge per value, however many operands read it
        seen.add((source, id(value)))
        out.append(_edge(first + len(out), source, node, value))
    return out


def _node(node: str, kind: str, op: str, label: str, parent: Optional[str], children: int, rng: Range,
          dispatch: Optional[int], type_: str) -> dict:
    return {"id": node, "kind": kind, "op": op, "dialect": op.split(".", 1)[0] if op else "", "label": label,
            "parent": parent, "children": children, "range": rng, "dispatch": dispatch, "type": type_}


def _edge(index: int, source: str, target: str, value: Value) -> dict:
    return {"id": f"e{index}", "source": source, "target": target, "value": _value_name(value), "type": str(value.type)}


def _value_name(value: Value, default: Optional[str] = None) -> str:
    if value.name:
        return f"%{value.name}"
    if isinstance(value, OpResult):
        return f"#{value.index}"
    return f"%{default}" if default else f"%arg{value.index}"


def _op_label(op: Operation) -> str:
    """The op's name without its dialect, with its callee for a call (`dot_general`, `call @f`)."""
    short = op.name.split(".", 1)[-1]
    callee = op.attr("callee")
    return f"{short} {callee}" if callee is not None else short


def _result_types(op: Operation) -> str:
    return ", ".join(str(r.type) for r in op.results)
