"""Identical dispatches compiled once: a model repeats its layers (resnet's blocks, a transformer's
layers), and dispatch formation outlines each repeat as a dispatch function of its own. Functions
that differ only in their name are lowered and code-generated once, for the first of them; each of
the others keeps its name, its record and its reference kernel (so a dispatch still names the
source ops it came from) and gets a native entry point that calls the first one's code."""
from __future__ import annotations

import hashlib
import re

from ..ir.core import Operation, Region
from ..targets.ir_types import quote_name


def identical_functions(functions: dict[str, Operation]) -> dict[str, str]:
    """{name: the earlier function it is identical to} for each function of `functions` (name ->
    func.func, in order) that has the body, types and attributes of an earlier one."""
    first: dict[str, str] = {}
    same: dict[str, str] = {}
    for name, fn in functions.items():
        keep = first.setdefault(_fingerprint(fn), name)
        if keep != name:
            same[name] = keep
    return same


def forwarding_ir(ir_text: str, name: str, target: str) -> str:
    """LLVM IR of `@name`, which calls `@target` (defined in `ir_text`) with its own arguments."""
    m = re.search(r"^define [^@\n]*" + re.escape("@" + quote_name(target)) + r"\(([^)]*)\)", ir_text, re.M)
    if m is None:
        raise ValueError(f"no definition of @{target} in the kernels' LLVM IR")
    types = [p.split()[0] for p in m.group(1).split(",")] if m.group(1).strip() else []
    params = ", ".join(f"{t} %a{i}" for i, t in enumerate(types))
    # (noinline: one copy of the code, whichever entry point a dispatch calls)
    return (f"define void @{quote_name(name)}({params}) {{\nentry:\n"
            f"  call void @{quote_name(target)}({params}) noinline\n  ret void\n}}\n")


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
