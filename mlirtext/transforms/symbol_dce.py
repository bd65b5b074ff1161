"""symbol-dce: erase private symbols (functions, globals) that nothing refers to."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.attributes import StringAttr
from ..ir.core import Operation
from ..ir.symbols import symbol_refs
from .passes import Pass


@dataclass(frozen=True)
class SymbolDCE(Pass):
    name = "symbol-dce"
    summary = "Erase private symbols that are never referenced"

    def run(self, op: Operation) -> None:
        erase_unused_private_symbols(op)


def is_private(op: Operation) -> bool:
    vis = op.attr("sym_visibility")
    return isinstance(vis, StringAttr) and vis.value == "private"


def erase_unused_private_symbols(table: Operation) -> list[str]:
    """Erase, until none is left, private symbols of `table` with no reference outside themselves."""
    erased = []
    while True:
        children = [op for region in table.regions for block in region.blocks for op in block.ops]
        used = set()
        for child in children:
            for op in child.walk():
                for attr in op.attributes.values():
                    for ref in symbol_refs(attr):
                        if ref.root != child.sym_name:  # recursion does not keep a symbol alive
                            used.add(ref.root)
        dead = [c for c in children if c.sym_name is not None and is_private(c) and c.sym_name not in used]
        if not dead:
            return erased
        for op in dead:
            erased.append(op.sym_name)
            op.detach()
