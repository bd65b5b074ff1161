"""Native work sharing for split dispatches (local-task).

A kernel split into workgroups runs any range `[lo, hi)` of them (targets/workgroups.py, ukernels.py).
Handing each thread ranges from Python costs a ctypes call and the GIL per range, and a thread
that is descheduled while it holds a large range makes the whole call wait for it. So each split
kernel also gets a small native wrapper, `<kernel>.take`: it takes `grain` workgroups at a time
from a counter shared by the threads (an atomic add), runs them, and counts them done, until none
is left. Every thread of local-task calls the wrapper of the same dispatch once; a thread that
comes late finds nothing left and returns at once, and the caller knows the dispatch is finished
when the done count reaches the workgroup count (it need not wait for a thread that never got
work). A thread holds at most one grain, so a thread preempted by another process on a loaded
machine delays the call by one grain, not by its share.

ABI of the wrapper: the kernel's parameters with the workgroup range replaced by
`ptr next, ptr done, i64 grain` (two i64 counters, zero at the start).
"""
from __future__ import annotations

import re

from ..targets.ir_types import quote_name

SUFFIX = ".take"


def _parameters(ir_text: str, name: str) -> list[str]:
    """The parameter list of `define ... @name(...)` in `ir_text`, one string per parameter."""
    m = re.search(r"^define [^@\n]*" + re.escape("@" + quote_name(name)) + r"\(([^)]*)\)", ir_text, re.M)
    if m is None:
        raise ValueError(f"no definition of @{name} in the kernels' LLVM IR")
    return [p.strip() for p in m.group(1).split(",")] if m.group(1).strip() else []


def take_wrapper_ir(ir_text: str, name: str, num_inputs: int, count: int) -> str:
    """LLVM IR of `@<name>.take` for kernel `name` (defined in `ir_text`), whose workgroup range
    follows its `num_inputs` inputs and which has `count` workgroups."""
    params = _parameters(ir_text, name)
    types = [p.split()[0] for p in params]
    if len(types) < num_inputs + 2 or types[num_inputs:num_inputs + 2] != ["i64", "i64"]:
        raise ValueError(f"@{name} does not take a workgroup range after its {num_inputs} input(s)")
    ins = [f"{t} %a{i}" for i, t in enumerate(types[:num_inputs])]
    outs = [f"{t} %a{i}" for i, t in enumerate(types[num_inputs + 2:], num_inputs + 2)]
    take = f"@{name}{SUFFIX}"
    call = ", ".join(ins + ["i64 %lo", "i64 %hi"] + outs)
    return "\n".join([
        f'define void @{quote_name(take[1:])}({", ".join(ins + ["ptr %next", "ptr %done", "i64 %grain"] + outs)}) {{',
        "entry:", "  br label %take",
        "take:",
        "  %lo = atomicrmw add ptr %next, i64 %grain monotonic, align 8",
        f"  %some = icmp slt i64 %lo, {count}",
        "  br i1 %some, label %run, label %exit",
        "run:",
        "  %end = add i64 %lo, %grain",
        f"  %short = icmp slt i64 %end, {count}",
        f"  %hi = select i1 %short, i64 %end, i64 {count}",
        # (noinline: the kernel is kept for local-sync, and a copy inlined here would double the
        # code LLVM optimises and emits for one call per grain)
        f"  call void @{quote_name(name)}({call}) noinline",
        "  %n = sub i64 %hi, %lo",
        # (release: the workgroups' results are written before the count says so)
        "  %d = atomicrmw add ptr %done, i64 %n release, align 8",
        "  br label %take",
        "exit:", "  ret void", "}", ""])
