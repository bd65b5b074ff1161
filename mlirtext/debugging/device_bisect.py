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
from .faults import FLOAT_NUDGE
from ..vm.vm import LoadedModule

#: (kernel name, kernel) -> the kernel to use instead: a fault for tests ("wrong on one device").
KernelFault = Callable[[str, Callable], Callable]
#: Every dispatch's inputs (a list per dispatch, in program order) -> its outputs, each dispatch run alone
#: on the device under test somewhere else (a cluster node: remote.RemoteFunction.replay_all).
ReplayAll = Callable[[list], list]


@dataclass(frozen=True)
class WrongKernel:
    """`--debug-wrong-kernel=DEVICE:KERNEL`: on DEVICE, kernel @KERNEL gets the first element of its
    first output wrong, by 2**-10 plus 2**-10 of its magnitude (1 for an integer): a kernel wrong on one
    device, so that a bisect across devices can be checked end to end."""

    device: str
    kernel: str

    switch = "--debug-wrong-kernel"

    @staticmethod
    def parse(text: str, devices) -> "WrongKernel":
        """From `DEVICE:KERNEL`; ValueError says what is wrong (`devices`: those it may name)."""
        device, colon, kernel = text.partition(":")
        if not colon or not kernel:
            raise ValueError(f"'{text}' is not DEVICE:KERNEL (for example local-task:mlp_dispatch_2)")
        if not devices:
            raise ValueError(f"'{text}': no devices are checked against the reference")
        if device not in devices:
            raise ValueError(f"'{text}': '{device}' is not one of the devices checked ({', '.join(devices)})")
        return WrongKernel(device, kernel.lstrip("@"))

    def on(self, device: str) -> Optional[KernelFault]:
        """The kernel fault for a bisect of `device`, None for another device."""
        return self._wrong if device == self.device else None

    def _wrong(self, name: str, kernel: Callable) -> Callable:
        if name != self.kernel:
            return kernel

        def run(ins, outs):
            kernel(ins, outs)
            flat = outs[0].reshape(-1)
            if np.issubdtype(flat.dtype, np.floating):
                flat[0] += FLOAT_NUDGE * (1 + abs(flat[0]))
            else:
                flat[0] += 1
        return run

    def flag(self) -> str:
        return f"{self.switch}={self.device}:{self.kernel}"


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
                   tolerance: Tolerance = Tolerance(), kernel_fault: Optional[KernelFault] = None,
                   replay_all: Optional[ReplayAll] = None) -> tuple[int, Optional[DispatchFinding]]:
    """(the call's dispatches, the first `device` gets wrong or None) for @`function` of the
    compiled module `source` (a module file's bytes or compiler.in_memory's); `sources`
    {kernel: source ops} (dispatch_trace.kernel_sources). The dispatches run on `device` here, one by
    one until one differs, or all at once through `replay_all` (on the node that has the device).
    VMError when it cannot run."""
    reference = LoadedModule(source, "reference").entry_function(function)
    seen: list = []
    reference.traced(list(inputs), lambda i, kernel, ins, outs, s: seen.append(
        (kernel, ins, [np.array(o, copy=True) for o in outs])))
    if replay_all is None:
        tested = LoadedModule(source, device).entry_function(function)
        if kernel_fault is not None:
            tested.dispatches = [(kernel_fault(name, k), ins, outs, name) for k, ins, outs, name in tested.dispatches]
        replayed = (tested.replay(index, ins) for index, (_, ins, _) in enumerate(seen))   # (lazily)
    else:
        replayed = iter(replay_all([ins for _, ins, _ in seen]))
    for index, ((kernel, ins, want), got) in enumerate(zip(seen, replayed)):
        diff = compare(kernel, function, want, got, tolerance)
        if not diff.ok:
            return len(seen), DispatchFinding(device, index, kernel, sources.get(kernel, []), ins, want, got, diff)
    return len(seen), None
