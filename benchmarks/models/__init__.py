"""The model zoo of benchmarks/models.py: real model families built with random weights (nothing is
downloaded), one small module per family. Each entry says how to build the model and which import
paths take it to MLIR (`paths.py`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class ZooModel:
    name: str
    family: str
    #: () -> the framework model and its example inputs (numpy): a `torch.nn.Module`, or for JAX a
    #: function of the inputs alone (its parameters closed over, so they import as constants).
    build: Callable
    #: The import paths it goes through: "torch" (torch.export + torch-mlir), "onnx" (torch.onnx.export
    #: + mlirtext's ONNX importer), "jax" (jax.jit(...).lower).
    paths: tuple


def zoo() -> dict[str, ZooModel]:
    """Every zoo model by name, in the order the benchmark runs them (framework modules are imported
    by the families' build functions, not here: listing the zoo needs none of them)."""
    from . import flax_models, text, vision
    models = [*vision.MODELS, *text.MODELS, *flax_models.MODELS]
    return {m.name: m for m in models}
