"""PyTorch modules to StableHLO, TOSA or Linalg: `torch.export`, then torch-mlir's FX importer and
its lowering pipelines. Weights are either constants (`dense_resource` blobs, read into real
constants by the parser) or arguments after the model's own inputs. When torch-mlir cannot import
a model with its weights inline (some buffers have no state mapping in its FX importer: a
transformers `BertModel`), the weights go in as arguments and are baked back in as constants
(`baked_weights.py`), so the module is the one asked for."""
from __future__ import annotations

import warnings

import numpy as np

from ..api import to_text
from .baked_weights import CannotBake, bake_weights
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
    if weights == "args":
        names, values = _state(model)
        text = _export(torch, fx, _weights_as_arguments(torch, model, names), tensors + values, to, what)
        return Imported(text, parse_imported(text, name or f"<torch {what}>"), names, [w.numpy() for w in values])
    try:
        text = _export(torch, fx, model, tensors, to, what)
    except ImportFailed as inline_failure:
        text = _retry_with_baked_weights(torch, fx, model, tensors, to, what, inline_failure)
    return Imported(text, parse_imported(text, name or f"<torch {what}>"))


def _state(model) -> tuple[list, list]:
    """The names and values of the model's parameters and buffers."""
    state = dict(model.named_parameters())
    state.update(model.named_buffers())
    return list(state), [t.detach() for t in state.values()]


def _export(torch, fx, model, tensors, to: str, what: str) -> str:
    try:
        # torch.export's deprecation chatter says nothing about the user's model.
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return str(fx.export_and_import(model, *tensors, output_type=OUTPUT_TYPES[to]))
    except Exception as e:  # export or lowering failed inside torch / torch-mlir
        raise ImportFailed(f"torch-mlir could not import {what} to {to}: {type(e).__name__}: {_first_lines(e)}") \
            from None


def _retry_with_baked_weights(torch, fx, model, tensors, to: str, what: str, inline_failure: ImportFailed) -> str:
    """The module with its weights inline, imported with the weights as arguments and baked back
    in; the inline import's error (and what else to try) when that fails too."""
    names, values = _state(model)
    try:
        text = _export(torch, fx, _weights_as_arguments(torch, model, names), tensors + values, to, what)
        parsed = parse_imported(text, f"<torch {what}>")
        bake_weights(parsed.module, [v.numpy() for v in values], to)
    except (ImportFailed, CannotBake):
        raise ImportFailed(f"{inline_failure}\n(with the weights as arguments it fails too: try the ONNX path, "
                           "torch.onnx.export and `mlirtext import onnx`)") from None
    return to_text(parsed)


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
