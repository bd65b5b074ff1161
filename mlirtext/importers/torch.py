"""PyTorch modules to StableHLO, TOSA or Linalg: `torch.export`, then torch-mlir's FX importer and
its lowering pipelines. Weights are either constants (`dense_resource` blobs, read into real
constants by the parser) or arguments after the model's own inputs."""
from __future__ import annotations

import warnings

import numpy as np

from .common import ImportFailed, Imported, parse_imported, require

#: `--to` names and torch-mlir's output types.
OUTPUT_TYPES = {"stablehlo": "stablehlo", "tosa": "tosa", "linalg": "linalg-on-tensors"}


def import_module(model, *args, to: str = "stablehlo", weights: str = "inline", name: str = "") -> Imported:
    """`model` (a `torch.nn.Module`) exported on example `args` (tensors or numpy arrays) as a parsed
    module at level `to`. With `weights="args"` its parameters and buffers become arguments of
    `@main` after `args`; their names and values are in the result."""
    torch = require("torch", "torch", "PyTorch")
    fx = require("torch_mlir.fx", "torch", "PyTorch")
    if to not in OUTPUT_TYPES:
        raise ImportFailed(f"unknown target level '{to}': one of {', '.join(OUTPUT_TYPES)}")
    if weights not in ("inline", "args"):
        raise ImportFailed(f"unknown weights mode '{weights}': inline or args")
    if not isinstance(model, torch.nn.Module):
        raise ImportFailed(f"expected a torch.nn.Module, got {type(model).__name__}")
    tensors = [torch.from_numpy(np.asarray(a)) if not isinstance(a, torch.Tensor) else a for a in args]
    model = model.eval()
    what = type(model).__name__
    weight_names, weight_values = [], []
    if weights == "args":
        state = dict(model.named_parameters())
        state.update(model.named_buffers())
        weight_names = list(state)
        weight_values = [t.detach() for t in state.values()]
        model = _weights_as_arguments(torch, model, weight_names)
        tensors = tensors + weight_values
    try:
        # torch.export's deprecation chatter says nothing about the user's model.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mlir = fx.export_and_import(model, *tensors, output_type=OUTPUT_TYPES[to])
    except Exception as e:  # export or lowering failed inside torch / torch-mlir
        raise ImportFailed(f"torch-mlir could not import {what} to {to}: {type(e).__name__}: {_first_lines(e)}") \
            from None
    text = str(mlir)
    return Imported(text, parse_imported(text, name or f"<torch {what}>"), weight_names,
                    [w.numpy() for w in weight_values])


def _weights_as_arguments(torch, model, names):
    """A module whose forward takes (inputs..., weights...) and runs `model` with those weights."""

    class WeightsAsArguments(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # Not a submodule: its own parameters must not be exported as constants too.
            object.__setattr__(self, "inner", model)

        def forward(self, *args):
            inputs, values = args[:len(args) - len(names)], args[len(args) - len(names):]
            return torch.func.functional_call(self.inner, dict(zip(names, values)), inputs)

    return WeightsAsArguments()


def _first_lines(e: Exception, count: int = 6) -> str:
    lines = str(e).strip().splitlines()
    return "\n".join(lines[:count]) + ("\n..." if len(lines) > count else "")
