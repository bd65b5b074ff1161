"""Dispatch traces, like IREE's `--iree-flow-trace-dispatch-tensors`: every dispatch of one call,
its inputs and outputs as .npy and an index, `dispatches.json`; and the first dispatch where two
traces (of two devices, two builds) differ.

`dispatches.json` holds {"function", "device", "dispatches": [...]}, one entry per dispatch in
program order: index, name (`FUNCTION#INDEX`: a kernel may be dispatched more than once), kernel, sources (the source ops of the
kernel's body: op name and file:line:col), inputs and outputs (file, shape, dtype each), seconds.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from ..ir.core import Operation
from ..transforms.extract import function_module
from ..transforms.lowering_service import origin_span, source_op_name
from ..transforms.semantics_check import Difference, Tolerance, compare

INDEX = "dispatches.json"


def kernel_source_spans(kernels: Operation) -> dict:
    """{kernel name: [(op name, span)]}: the distinct source ops behind each kernel's body, in order."""
    out = {}
    for fn in kernels.regions[0].blocks[0].ops:
        if fn.sym_name is None:
            continue
        seen: dict = {}
        for op in fn.walk():
            span = origin_span(op) if op is not fn else None
            if span is not None and op.name not in ("func.return", "func.func"):
                line, col = span.line_col
                seen.setdefault(f"{span.source.name}:{line}:{col}", (source_op_name(span) or op.name, span))
        out[fn.sym_name] = list(seen.values())
    return out


def kernel_sources(kernels: Operation) -> dict:
    """{kernel name: [{"op", "at"}]}: the distinct source ops behind each kernel's body, in order, at
    file:line:col."""
    return {kernel: [{"op": name, "at": f"{span.source.name}:{span.line_col[0]}:{span.line_col[1]}"}
                     for name, span in ops] for kernel, ops in kernel_source_spans(kernels).items()}


def kernel_module(kernels: Operation, name: str) -> Operation:
    """Kernel @`name` of `kernels` (a compiled module's reference kernels) in a module of its own."""
    symbols = {op.sym_name: op for op in kernels.regions[0].blocks[0].ops if op.sym_name is not None}
    return function_module(symbols[name], symbols.get, bodies=True)[0]


class Tracer:
    """The observer of a traced call (`vm.Function.traced`): writes each dispatch's tensors into
    `directory` as it runs, then the index with `finish`."""

    def __init__(self, directory: str, function: str, device: str, sources: dict):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.function, self.device, self.sources = function, device, sources
        self.records: list = []

    def __call__(self, index: int, kernel: str, inputs: list, outputs: list, seconds: float) -> None:
        stem = f"{index:04d}_{kernel}"
        self.records.append({
            "index": index, "name": f"{self.function}#{index}", "kernel": kernel,
            "sources": self.sources.get(kernel, []),
            "inputs": [self._save(f"{stem}_in{j}.npy", a) for j, a in enumerate(inputs)],
            "outputs": [self._save(f"{stem}_out{j}.npy", a) for j, a in enumerate(outputs)],
            "seconds": seconds})

    def _save(self, name: str, array) -> dict:
        array = np.asarray(array)
        np.save(self.directory / name, array)
        return {"file": name, "shape": list(array.shape), "dtype": array.dtype.name}

    def finish(self) -> None:
        index = {"function": self.function, "device": self.device, "dispatches": self.records}
        (self.directory / INDEX).write_text(json.dumps(index, indent=1) + "\n")


class TraceError(ValueError):
    """A directory that is not a trace, or two traces of different programs."""


@dataclass
class DispatchDifference:
    """The first dispatch where two traces differ: its record in the first trace, which tensor
    (`"output 0"`) and by how much."""
    record: dict
    tensor: str
    difference: Difference


def read_trace(directory: str) -> dict:
    try:
        return json.loads((Path(directory) / INDEX).read_text())
    except (OSError, ValueError) as e:
        raise TraceError(f"{directory}: not a dispatch trace (no readable {INDEX}: {e})") from None


def first_difference(dir_a: str, dir_b: str, tolerance: Tolerance = Tolerance()) -> tuple[int, Optional[DispatchDifference]]:
    """(dispatches compared, the first that differs or None). Outputs are compared (inputs too,
    so that a trace fed other values is caught at its first dispatch); TraceError when the two
    traces are not of the same program."""
    a, b = read_trace(dir_a), read_trace(dir_b)
    ra, rb = a["dispatches"], b["dispatches"]
    if [r["kernel"] for r in ra] != [r["kernel"] for r in rb]:
        raise TraceError(f"the traces run different dispatches ({len(ra)} in {dir_a}, {len(rb)} in {dir_b}, "
                         "or other kernels): they are not of the same program")
    for x, y in zip(ra, rb):
        for what in ("inputs", "outputs"):
            for j, (fx, fy) in enumerate(zip(x[what], y[what])):
                want = np.load(Path(dir_a) / fx["file"])
                got = np.load(Path(dir_b) / fy["file"])
                diff = compare(x["kernel"], a["function"], [want], [got], tolerance)
                if not diff.ok:
                    return x["index"] + 1, DispatchDifference(x, f"{what[:-1]} {j}", diff)
    return len(ra), None
