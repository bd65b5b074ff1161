"""The repro a bisect leaves: the function before the guilty pass as a module of its own
(`before.mlir`), its inputs (`input_N.npy`), its results before and after the pass
(`expected_N.npy`, `actual_N.npy`, the latter when it ran) and `README` with the command that
replays that one pass on it and shows the same failure."""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Sequence

import numpy as np

from ..syntax.printer import print_module
from ..transforms.semantics_check import Tolerance
from .bisect import Finding
from .faults import Fault

MODULE = "before.mlir"


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


def write_repro(directory: str, finding: Finding, command: list[str]) -> list[str]:
    """Write the repro into `directory` (made if missing); the names of the files written."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = [MODULE]
    (out / MODULE).write_text(print_module(finding.before))
    arrays = [("input", finding.inputs), ("expected", finding.expected), ("actual", finding.actual or [])]
    for stem, values in arrays:
        for i, value in enumerate(values):
            name = f"{stem}_{i}.npy"
            np.save(out / name, np.asarray(value))
            written.append(name)
    where = ", ".join(f"{name} {span.source.name}:{span.line_col[0]}:{span.line_col[1]}" for name, span in finding.ops)
    (out / "README").write_text(
        f"Pass {finding.position} of the lowering to llvm, '{finding.pass_spelling}', {finding.kind}: "
        f"{finding.message}\n"
        + (f"Ops it rewrote: {where}\n" if where else "")
        + "The function before that pass is before.mlir; input_N.npy its arguments, expected_N.npy its results "
          "before the pass, actual_N.npy after it. To see the failure, in this directory (after.mlir is the IR after the pass):\n"
        + shlex.join(command) + "\n")
    written.append("README")
    return written
