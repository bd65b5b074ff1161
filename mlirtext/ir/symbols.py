"""Symbol tables: ops with `sym_name` inside a symbol-table op (a module)."""
from __future__ import annotations

from typing import Optional

from .attributes import ArrayAttr, DictionaryAttr, SymbolRefAttr
from .core import Operation


def symbol_table_of(op: Operation, is_table) -> Optional[Operation]:
    """The nearest ancestor (or `op` itself) that is a symbol table."""
    current: Optional[Operation] = op
    while current is not None:
        if is_table(current):
            return current
        current = current.parent_op
    return None


def symbols_in(table: Operation) -> dict[str, Operation]:
    """Symbols defined directly in `table`'s region (first definition wins)."""
    out: dict[str, Operation] = {}
    for region in table.regions:
        for block in region.blocks:
            for op in block.ops:
                name = op.sym_name
                if name is not None and name not in out:
                    out[name] = op
    return out


def resolve_symbol(table: Operation, ref: SymbolRefAttr, cache: Optional[dict] = None) -> Optional[Operation]:
    """The op `@a::@b` names, starting from symbol table `table`.

    `cache` (id(table) -> its symbols), kept by a caller that resolves many
    references in IR it does not change, makes each lookup O(1) instead of a
    scan of the table: verifying a module of n functions that call each other
    is then linear, not quadratic."""
    def symbols(t: Operation) -> dict[str, Operation]:
        if cache is None:
            return symbols_in(t)
        found = cache.get(id(t))
        if found is None:
            found = cache[id(t)] = symbols_in(t)
        return found

    target = symbols(table).get(ref.root)
    for name in ref.nested:
        if target is None:
            return None
        target = symbols(target).get(name)
    return target


def symbol_refs(attr) -> list[SymbolRefAttr]:
    """Every symbol reference inside an attribute (arrays and dictionaries included)."""
    if isinstance(attr, SymbolRefAttr):
        return [attr]
    if isinstance(attr, ArrayAttr):
        return [r for item in attr.items for r in symbol_refs(item)]
    if isinstance(attr, DictionaryAttr):
        return [r for _, item in attr.items for r in symbol_refs(item)]
    return []
