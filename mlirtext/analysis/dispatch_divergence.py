"""The editor's bisect across devices: the function compiled once for llvm-cpu and run dispatch by
dispatch on each device against the reference (debugging/device_bisect.py), the first dispatch
that differs named with its kernel and source ops, for the markers and the pipeline view's mark."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Union

from ..debugging.device_bisect import DispatchFinding, bisect_devices
from ..debugging.dispatch_trace import kernel_source_spans, kernel_sources
from ..ir.core import Operation
from ..transforms.semantics_check import Tolerance
from ..vm.vm import VMError


@dataclass
class DispatchDivergence:
    """The first dispatch a device computes differently: `finding` (device_bisect's), `total` the
    dispatches of the call, `ops` [(op name, span)] of its kernel's source ops."""

    finding: DispatchFinding
    total: int
    ops: list
    function: str

    def summary(self) -> str:
        f = self.finding
        return (f"on {f.device}, dispatch {f.index} of {self.total} (kernel @{f.kernel}) differs from the "
                f"reference, fed the reference's inputs")

    def answer(self, markers: Callable[[list, str], list]) -> dict:
        """{"device", "index", "total", "name" (`FUNCTION#INDEX`, as the profile names it), "kernel",
        "summary", "difference", "ops": [{"op", "line"}], "markers"}; `markers(ops, message)` places the
        markers in the document."""
        f, d = self.finding, self.finding.difference
        message = (f"@{self.function} {self.summary()}: max |diff| {d.max_abs:.3g}, max rel {d.max_rel:.3g}, "
                   f"{d.max_ulp} ulp")
        placed = markers(self.ops, message)
        return {"device": f.device, "index": f.index, "total": self.total, "name": f"{self.function}#{f.index}",
                "kernel": f.kernel, "summary": self.summary(),
                "difference": {"max_abs": d.max_abs, "max_rel": d.max_rel, "max_ulp": d.max_ulp},
                "ops": [{"op": m["op"], "line": m["start"][0]} for m in placed], "markers": placed}


def find_dispatch(module: Operation, function: str, inputs: list, devices: list, tolerance: Tolerance,
                  wrong: list) -> Union[DispatchDivergence, None, str]:
    """The first dispatch of @`function` (of `module`) that a device of `devices` computes differently
    from the reference, None when every device agrees, or a message when it cannot be compiled or
    run there. `wrong`: WrongKernel faults to inject."""
    # (the compiler is imported on the first bisect across devices: the language server starts
    # without it, as device_run.py does)
    from ..compiler.driver import CompileFailed, compile_module
    from ..compiler.module_writer import in_memory
    try:
        compiled = compile_module(module, "llvm-cpu")
    except CompileFailed as e:
        first = e.diagnostics[0].message if e.diagnostics else str(e)
        return f"cannot compile @{function} for llvm-cpu: {first}"
    spans = kernel_source_spans(compiled.reference_kernels)
    for device in devices:
        fault = next((w.on(device) for w in wrong if w.device == device), None)
        try:
            total, found = bisect_devices(in_memory(compiled), function, inputs, device,
                                          kernel_sources(compiled.reference_kernels), tolerance, fault)
        except VMError as e:
            return f"{device}: {e}"
        if found is not None:
            return DispatchDivergence(found, total, spans.get(found.kernel, []), function)
    return None
