"""Taking a piece of IR out into a module of its own, by cloning: the clones keep their spans,
so what a lowering makes of them still points at the source the user sees.

- `function_module`: a function and the symbols it needs (for the editor's lower action and
  its pipeline, target-code and run commands, which work on one function of a document);
- `op_module`: one op alone in a function (for hover's lowered forms).
"""
from __future__ import annotations

from typing import Callable, Optional

from ..ir.attributes import StringAttr, TypeAttr
from ..ir.core import Block, Operation, Region
from ..ir.symbols import symbol_refs
from ..ir.types import FunctionType

#: name -> the op that defines that symbol, or None.
Lookup = Callable[[str], Optional[Operation]]


def referenced_symbols(op: Operation) -> list[str]:
    """Root names of the symbols `op` and the ops inside it refer to, in order of first use."""
    found: dict = {}
    for inner in op.walk():
        for value in inner.attributes.values():
            for ref in symbol_refs(value):
                found.setdefault(ref.root, None)
    return list(found)


def function_module(fn: Operation, lookup: Lookup, bodies: bool = False) -> tuple[Operation, set]:
    """A new module holding a clone of `fn` and of the symbols it refers to, and the names of
    those it declares only. Functions it calls are body-less private declarations unless
    `bodies` (then they come whole, with what they need in turn: a compile inlines them);
    other symbols (globals) are cloned whole. Symbols `lookup` does not know are left out:
    verifying the module says what is missing."""
    declared: set = set()
    included, todo, ops = {fn.sym_name}, [fn], []
    while todo:
        for name in referenced_symbols(todo.pop(0)):
            other = lookup(name)
            if other is None or name in included:
                continue
            included.add(name)
            if other.name == "func.func" and not bodies:
                declared.add(name)
                ops.append(declaration(other))
            else:
                ops.append(other.clone())
                todo.append(other)
    # What it needs first, the function last, as in a file.
    module = _module()
    for op in [*ops, fn.clone()]:
        module.regions[0].blocks[0].append(op)
    return module, declared


def declaration(fn: Operation) -> Operation:
    """A body-less private copy of function `fn`, so that calls to it verify."""
    attributes = {k: v for k, v in fn.attributes.items() if k in ("sym_name", "function_type")}
    attributes["sym_visibility"] = StringAttr("private")
    return Operation("func.func", attributes=attributes, regions=[Region()])


def op_module(op: Operation) -> Operation:
    """A new module with one function that runs a clone of `op`: the values it uses from
    outside (operands, and values its regions capture) become the function's arguments, its
    results are returned."""
    block = Block()
    mapping: dict = {}
    for v in outside_values(op):
        mapping[v] = block.add_argument(v.type, v.name)
    copy = op.clone(mapping)
    block.append(copy)
    block.append(Operation("func.return", list(copy.results)))
    signature = FunctionType(tuple(a.type for a in block.arguments), tuple(r.type for r in copy.results))
    func = Operation("func.func", attributes={"sym_name": StringAttr(op.name.replace(".", "_")),
                                              "function_type": TypeAttr(signature)},
                     regions=[Region([block])])
    module = _module()
    module.regions[0].blocks[0].append(func)
    return module


def outside_values(op: Operation) -> list:
    """The values `op` and the ops inside it use that are defined outside `op`, in order of use."""
    inside = {id(r) for inner in op.walk() if inner is not op for r in inner.results}
    inside.update(id(a) for inner in op.walk() for region in inner.regions for b in region.blocks
                  for a in b.arguments)
    found: dict = {}
    for inner in op.walk():
        for v in inner.operands:
            if id(v) not in inside:
                found.setdefault(id(v), v)
    return list(found.values())


def _module() -> Operation:
    return Operation("builtin.module", regions=[Region([Block()])])
