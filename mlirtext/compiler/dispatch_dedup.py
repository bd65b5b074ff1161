"""Identical dispatches compiled once: a model repeats its layers (resnet's blocks, a transformer's
layers), and dispatch formation outlines each repeat as a dispatch function of its own. Functions
that differ only in their name are merged into the first, which every call then names, so each
distinct kernel is lowered, code-generated and stored once."""
from __future__ import annotations

import hashlib

from ..ir.attributes import SymbolRefAttr
from ..ir.core import Operation, Region
from ..transforms.dispatch import is_dispatch_function


def merge_identical_dispatches(module: Operation) -> int:
    """Merge the dispatch functions of `module` (in place) that have the same body, types and
    attributes; the number of functions removed."""
    first: dict[str, str] = {}
    merged: dict[str, str] = {}
    for op in list(module.regions[0].blocks[0].ops):
        if is_dispatch_function(op):
            keep = first.setdefault(_fingerprint(op), op.sym_name)
            if keep != op.sym_name:
                merged[op.sym_name] = keep
                op.erase()
    if merged:
        for op in module.walk():
            callee = op.attributes.get("callee") if op.name == "func.call" else None
            if isinstance(callee, SymbolRefAttr) and callee.root in merged and not callee.nested:
                op.attributes["callee"] = SymbolRefAttr(merged[callee.root])
    return len(merged)


def _fingerprint(fn: Operation) -> str:
    """A digest of `fn` without its name: every op's name, attributes, result types and regions,
    and its operands and successors numbered in the order they are defined (so the SSA names the
    source gave do not matter)."""
    numbers: dict[int, int] = {}
    digest = hashlib.sha256()

    def region(r: Region) -> None:
        for block in r.blocks:
            numbers[id(block)] = len(numbers)
        for block in r.blocks:
            for arg in block.arguments:
                numbers[id(arg)] = len(numbers)
            digest.update(f"^{numbers[id(block)]}({', '.join(str(a.type) for a in block.arguments)})\n".encode())
            for op in block.ops:
                attrs = sorted((k, str(v)) for k, v in op.attributes.items() if op is not fn or k != "sym_name")
                digest.update(f"{op.name} {[numbers.get(id(v)) for v in op.operands]} {attrs} "
                              f"{[str(v.type) for v in op.results]} {[numbers.get(id(b)) for b in op.successors]} "
                              f"{len(op.regions)}\n".encode())
                for v in op.results:
                    numbers[id(v)] = len(numbers)
                for inner in op.regions:
                    region(inner)
                    digest.update(b"}\n")

    region(fn.regions[0])
    return digest.hexdigest()
