"""Memory planning: liveness-based reuse of the buffers a host program allocates.

Every dispatch output is a buffer. Its lifetime runs from the dispatch that
writes it to the last instruction that reads it or a view of it. Buffers are
placed in pool slots, in program order: an output takes the best-fitting slot
whose previous occupant is dead (the smallest free one that is big enough),
else a new slot. Inputs of a dispatch die after it, so an output never shares
a slot with an input of its own dispatch, but where its kernel reads that input
in place (`in_place`: a micro-kernel's residual, ukernels.MatmulPlan.in_place_input)
and it dies there: the output then takes the input's slot. Results (and views
returned) get fresh buffers on every call: the caller owns them.

The plan is static: pool bytes (the sum of slot sizes) is the peak of transient
memory, known at compile time; `without_reuse_bytes` is what one buffer per
value would cost.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

#: Slot sizes are rounded up to this (and slots start at this alignment): vector loads stay aligned.
ALIGN = 64


def _nbytes(ins: dict) -> int:
    count = int(np.prod(ins["shape"], dtype=np.int64)) if ins["shape"] else 1
    return max(ALIGN, -(-count * np.dtype(ins["dtype"]).itemsize // ALIGN) * ALIGN)


def plan_memory(prog, in_place: Optional[dict] = None) -> dict:
    """Assign pool slots to `prog`'s allocs (in place); the plan's figures. `in_place`: kernel name ->
    the input whose buffer its output 0 may be."""
    root: dict = {}           # register -> the alloc register it views
    allocs: dict = {}         # alloc register -> instruction
    last_use: dict = {}
    returned: set = set()
    for i, ins in enumerate(prog.instructions):
        if ins["op"] == "alloc":
            allocs[ins["dst"]] = ins
            root[ins["dst"]] = ins["dst"]
            last_use[ins["dst"]] = i
        elif ins["op"] == "view":
            root[ins["dst"]] = root.get(ins["src"])
        elif ins["op"] == "dispatch":
            for r in (*ins["ins"], *ins["outs"]):
                if root.get(r) is not None:
                    last_use[root[r]] = i
        elif ins["op"] == "return":
            for r in ins["values"]:
                if root.get(r) is not None:
                    returned.add(root[r])
    takes = _in_place_allocs(prog, in_place or {}, root, allocs, last_use, returned)
    slots: list[int] = []                 # slot -> size
    free: list[int] = []
    dying: dict = {}                      # instruction index -> slots freed after it
    result_bytes = 0
    for i, ins in enumerate(prog.instructions):
        if ins["op"] == "alloc":
            size = _nbytes(ins)
            if ins["dst"] in returned:
                ins["slot"] = -1
                result_bytes += size
                continue
            fitting = [s for s in free if slots[s] >= size]
            src = takes.get(ins["dst"])
            if src is not None and allocs[src].get("slot", -1) >= 0:   # (its slot, no longer freed after it)
                slot = allocs[src]["slot"]
                dying[last_use[src]].remove(slot)
            elif fitting:
                slot = min(fitting, key=lambda s: slots[s])
                free.remove(slot)
            else:
                slot = len(slots)
                slots.append(size)
            ins["slot"] = slot
            dying.setdefault(last_use[ins["dst"]], []).append(slot)
        free.extend(dying.pop(i, []))
    without = sum(_nbytes(a) for r, a in allocs.items() if r not in returned)
    offsets, at = [], 0
    for size in slots:
        offsets.append(at)
        at += size
    plan = {"slots": slots, "offsets": offsets, "pool_bytes": at, "result_bytes": result_bytes,
            "peak_bytes": at + result_bytes, "without_reuse_bytes": without + result_bytes,
            "buffers": len(allocs)}
    prog.plan = plan
    return plan


def _in_place_allocs(prog, in_place: dict, root: dict, allocs: dict, last_use: dict, returned: set) -> dict:
    """Output alloc -> the input alloc whose slot it takes: its dispatch's kernel reads that input in
    place, the input's buffer dies there and no other input of the dispatch is (a view of) it."""
    takes = {}
    for i, ins in enumerate(prog.instructions):
        if ins["op"] != "dispatch" or ins["kernel"] not in in_place:
            continue
        k = in_place[ins["kernel"]]
        src, dst = root.get(ins["ins"][k]), root.get(ins["outs"][0])
        if src is None or dst is None or src in returned or dst in returned or last_use[src] != i or \
                any(root.get(r) == src for j, r in enumerate(ins["ins"]) if j != k) or \
                _nbytes(allocs[dst]) > _nbytes(allocs[src]):
            continue
        takes[dst] = src
    return takes
