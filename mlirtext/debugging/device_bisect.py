"""Bisect across devices: the first dispatch a device computes differently from the reference.

The reference device runs the call dispatch by dispatch (a traced call), keeping every
dispatch's inputs and outputs; then each dispatch runs alone on the device under test, fed the
reference's inputs, so a wrong kernel is caught where it is wrong, not where its error shows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..transforms.semantics_check import Difference, Tolerance, compare
from ..vm.vm import LoadedModule

#: (kernel name, kernel) -> the kernel to use instead: a fault for tests ("wrong on one device").
KernelFault = Callable[[str, Callable], Callable]


@dataclass
class DispatchFinding:
    """The first dispatch `device` gets wrong: `index`, `kernel`, its source ops
    [{"op", "at"}], its inputs (the reference's), the reference's outputs and the device's."""
    device: str
    index: int
    kernel: str
    sources: list
    inputs: list
    expected: list
    actual: list
    difference: Difference


def bisect_devices(source, function: str, inputs: list, device: str, sources: dict,
                   tolerance: Tolerance = Tolerance(), kernel_fault: Optional[KernelFault] = None
                   ) -> tuple[int, Optional[DispatchFinding]]:
    """(the call's dispatches, the first `device` gets wrong or None) for @`function` of the
    compiled module `source` (a module file's bytes or compiler.in_memory's); `sources`
    {kernel: source ops} (dispatch_trace.kernel_sources). VMError when it cannot run."""
    reference = LoadedModule(source, "reference").entry_function(function)
    seen: list = []
    reference.traced(list(inputs), lambda i, kernel, ins, outs, s: seen.append(
        (kernel, ins, [np.array(o, copy=True) for o in outs])))
    tested = LoadedModule(source, device).entry_function(function)
    if kernel_fault is not None:
        tested.dispatches = [(kernel_fault(name, k), ins, outs, name) for k, ins, outs, name in tested.dispatches]
    for index, (kernel, ins, want) in enumerate(seen):
        got = tested.replay(index, ins)
        diff = compare(kernel, function, want, got, tolerance)
        if not diff.ok:
            return len(seen), DispatchFinding(device, index, kernel, sources.get(kernel, []), ins, want, got, diff)
    return len(seen), None
