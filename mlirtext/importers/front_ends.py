"""One import, named by its front end: a JAX function, a PyTorch module (from a factory function) or an
ONNX model as MLIR, with its example inputs given as specs (`4x8xf32`) or an .npz file."""
from __future__ import annotations

from typing import Optional

from .common import ImportFailed, Imported, example_arrays, load_npz, load_object
from .jax import import_function, shape_structs
from .onnx import import_model as import_onnx_model
from .torch import import_module


def import_from(front_end: str, source: str, *, arg_specs: Optional[list] = None, args_npz: Optional[str] = None,
                to: str = "stablehlo", weights: str = "inline") -> Imported:
    """Import `source`: an .onnx path for `onnx`, MODULE:FUNCTION for `jax` (the function) and `torch`
    (a factory returning the torch.nn.Module). Example inputs: `args_npz`, else one per spec in
    `arg_specs` (jax and torch only). ImportFailed says why an import cannot go on."""
    if front_end == "onnx":
        return import_onnx_model(source, to=to)
    target = load_object(source)
    if front_end == "jax":
        inputs = load_npz(args_npz) if args_npz else shape_structs(arg_specs or [])
        return import_function(target, *inputs, name=source)
    if front_end != "torch":
        raise ImportFailed(f"unknown front end '{front_end}' (front ends: jax, torch, onnx)")
    try:
        model = target()
    except Exception as e:  # noqa: BLE001 - the user's factory failed: say why, without a traceback
        raise ImportFailed(f"{source}() failed: {type(e).__name__}: {e}") from None
    inputs = load_npz(args_npz) if args_npz else example_arrays(arg_specs or [])
    return import_module(model, *inputs, to=to, weights=weights, name=source)
