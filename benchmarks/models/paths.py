"""Import paths: a zoo model taken to StableHLO text the way a user would (`mlirtext import torch`,
`torch.onnx.export` + `mlirtext import onnx`, `mlirtext import jax`), with the framework's own outputs
on the same inputs, for the correctness column."""
from __future__ import annotations

import os
import re
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Optional

import numpy as np


@dataclass
class Imported:
    text: str                       # StableHLO, its entry function taking `inputs`
    inputs: list                    # numpy arrays
    want: list                      # the framework's outputs (numpy)
    import_seconds: float = 0.0
    torch_model: object = None      # for torch eager timings (torch and onnx paths)
    onnx_path: Optional[str] = None  # for ONNX Runtime timings (onnx path)
    notes: list = field(default_factory=list)


def torch_outputs(model, inputs: list) -> list:
    import torch
    with torch.no_grad():
        out = model(*[torch.from_numpy(a) for a in inputs])
    return [o.numpy() for o in (out if isinstance(out, (tuple, list)) else [out])]


def import_model(model, inputs: list, path: str, workdir: str) -> Imported:
    """`model` (what a zoo entry built) through import `path`; ImportFailed (one line) when it fails."""
    import time
    start = time.perf_counter()
    if path == "jax":
        from mlirtext.importers.jax import import_function
        text = import_function(model, *inputs).text
        want = [np.asarray(o) for o in _as_list(model(*inputs))]
        return Imported(text, inputs, want, time.perf_counter() - start)
    want = torch_outputs(model, inputs)
    if path == "torch":
        from mlirtext.importers.torch import import_module
        text = import_module(model, *inputs).text
        return Imported(text, inputs, want, time.perf_counter() - start, torch_model=model)
    if path == "onnx":
        from mlirtext.importers.onnx import import_model as import_onnx
        onnx_path = export_onnx(model, inputs, workdir)
        text = import_onnx(onnx_path).text
        return Imported(text, inputs, want, time.perf_counter() - start, torch_model=model, onnx_path=onnx_path)
    raise ValueError(f"unknown import path '{path}'")


def export_onnx(model, inputs: list, workdir: str) -> str:
    """`torch.onnx.export` with the TorchScript exporter (the dynamo one needs onnxscript, which the
    `onnx` extra does not install), opset 17, weights inside the file."""
    import torch
    out = os.path.join(workdir, f"{type(model).__name__}.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(torch.from_numpy(a) for a in inputs), out, dynamo=False, opset_version=17,
                          input_names=[f"input{i}" for i in range(len(inputs))])
    return out


def entry_function(text: str) -> str:
    """The public function an importer made (`main`; ONNX's is named after the graph: `main_graph`)."""
    for match in re.finditer(r"func\.func (public )?@([\w$.-]+)", text):
        if not text[match.start():match.end() + 200].split("\n")[0].startswith("func.func private"):
            return match.group(2)
    return "main"


def _as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def new_workdir() -> str:
    return tempfile.mkdtemp(prefix="mlirtext-zoo-")
