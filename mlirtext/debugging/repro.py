"""The repro a bisect leaves: along the pipeline, the function before the guilty pass as a module
of its own (`before.mlir`); across devices, the guilty dispatch's kernel as a function of its own
(`dispatch.mlir`). With it its inputs (`input_N.npy`), the expected results (before the pass, or
the reference device's: `expected_N.npy`) and the actual ones (`actual_N.npy`, when it ran), and
`README` whose last line is the command that shows the failure."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Sequence

import numpy as np

from ..syntax.printer import print_module
from ..transforms.semantics_check import Tolerance
from ..ir.core import Operation
from .bisect import Finding
from .device_bisect import DispatchFinding
from .faults import Fault

MODULE = "before.mlir"
DISPATCH_MODULE = "dispatch.mlir"


def replay_command(finding: Finding, tolerance: Tolerance, faults: Sequence[Fault]) -> list[str]:
    """The `mlirtext opt` command line (run in the repro directory) that runs the guilty pass on
    the function as it was before it, checking its results on the saved inputs."""
    words = ["mlirtext", "opt", MODULE, f"--pass-pipeline={finding.pass_spelling}", "--check-semantics",
             f"--function={finding.function}"]
    words += [f"--input=@input_{i}.npy" for i in range(len(finding.inputs))]
    if tolerance != Tolerance():
        words += [f"--tolerance={tolerance.relative!r}", f"--tolerance-ulp={tolerance.ulp}"]
    words += [f.flag() for f in faults if f.spec.pass_name == finding.pass_spelling.split("{")[0]]
    return words + ["-o", "after.mlir"]


def write_repro(directory: str, finding: Finding, command: list[str]) -> None:
    """Write the repro of a pass into `directory` (made if missing)."""
    out = _files(directory, MODULE, finding.before, finding.inputs, finding.expected, finding.actual)
    where = ", ".join(f"{name} {span.source.name}:{span.line_col[0]}:{span.line_col[1]}" for name, span in finding.ops)
    (out / "README").write_text(
        f"Pass {finding.position} of the lowering to llvm, '{finding.pass_spelling}', {finding.kind}: "
        f"{finding.message}\n"
        + (f"Ops it rewrote: {where}\n" if where and finding.rewrote is None else "")
        + (f"Of the {finding.rewrote} ops it rewrote, the one whose rewrite alone changes the results: {where}\n"
           if finding.rewrote is not None else "")
        + "The function before that pass is before.mlir; input_N.npy its arguments, expected_N.npy its results "
          "before the pass, actual_N.npy after it. To see the failure, in this directory (after.mlir is the IR after the pass):\n"
        + shlex.join(command) + "\n")


def dispatch_command(finding: DispatchFinding) -> list[str]:
    """The `mlirtext bisect` command line (run in the repro directory) that compiles the guilty
    kernel alone and checks it on the device against the reference, on the saved inputs."""
    return ["mlirtext", "bisect", DISPATCH_MODULE, f"--function={finding.kernel}", f"--devices={finding.device}",
            *[f"--input=@input_{i}.npy" for i in range(len(finding.inputs))]]


def write_dispatch_repro(directory: str, finding: DispatchFinding, kernel: Operation, command: list[str]) -> None:
    """Write the repro of a dispatch into `directory` (made if missing); `kernel` the module of
    its kernel function alone."""
    out = _files(directory, DISPATCH_MODULE, kernel, finding.inputs, finding.expected, finding.actual)
    where = ", ".join(f"{s['op']} {s['at']}" for s in finding.sources)
    (out / "README").write_text(
        f"Dispatch {finding.index} (kernel @{finding.kernel}) differs on {finding.device} from the reference "
        f"device, fed the reference's inputs.\n" + (f"Its source ops: {where}\n" if where else "")
        + "The kernel alone is dispatch.mlir; input_N.npy its arguments, expected_N.npy the reference's results, "
          "actual_N.npy the device's. To check it on the device again, in this directory:\n"
        + shlex.join(command) + "\n")


def _files(directory: str, name: str, module: Operation, inputs: list, expected: list, actual) -> Path:
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text(print_module(module))
    for stem, values in (("input", inputs), ("expected", expected), ("actual", actual or [])):
        for i, value in enumerate(values):
            np.save(out / f"{stem}_{i}.npy", np.asarray(value))
    return out
