"""What the front ends share: example arguments from specs or an .npz, loading a Python
object named `module:name`, the framework check, and the parsed result."""
from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from ..diagnostics import has_errors
from ..syntax.parser import ParseResult
from ..ir.arrays import UnsupportedType, dtype_of



class ImportFailed(Exception):
    """An import that cannot go on, with a message for the user (the command exits 1)."""


def require(module: str, extra: str, front_end: str):
    """`module`, imported; ImportFailed naming the extra to install when it is missing."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportFailed(f"the {front_end} importer needs the '{module.split('.')[0]}' package ({e}); "
                           f"install it with: pip install 'mlirtext[{extra}]'") from None


_SPEC = re.compile(r"^((?:\d+x)*)([a-z][a-z0-9]*)$")


def spec_shape_dtype(spec: str) -> tuple[tuple, np.dtype]:
    """(shape, dtype) of an argument spec such as `4x8xf32`, `16xi32` or `f32` (a scalar)."""
    from ..ir.types import scalar_type_from_name
    m = _SPEC.match(spec.strip())
    elt = scalar_type_from_name(m.group(2)) if m else None
    if elt is None:
        raise ImportFailed(f"argument spec '{spec}': expected dimensions and an element type, "
                           f"like 4x8xf32, 16xi32 or f32")
    try:
        dtype = dtype_of(elt)
    except UnsupportedType as e:
        raise ImportFailed(f"argument spec '{spec}': {e}") from None
    return tuple(int(d) for d in m.group(1).split("x")[:-1]), dtype


def example_arrays(specs: list[str], seed: int = 0) -> list[np.ndarray]:
    """Seeded example values for each spec (a tracer only needs shapes, torch.export wants tensors)."""
    rng = np.random.default_rng(seed)
    out = []
    for spec in specs:
        shape, dtype = spec_shape_dtype(spec)
        if dtype.kind == "f":
            out.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.kind == "b":
            out.append(rng.integers(0, 2, shape).astype(dtype))
        else:
            out.append(rng.integers(0, 8, shape).astype(dtype))
    return out


def load_npz(path: str) -> list[np.ndarray]:
    """The arrays of an .npz in file order (np.savez names them arr_0, arr_1, ...)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return [data[name] for name in data.files]
    except (OSError, ValueError) as e:
        raise ImportFailed(f"cannot read example inputs '{path}': {e}") from None


def load_object(ref: str):
    """The object `ref` names: `package.module:name` or `path/to/file.py:name` (the current
    directory is importable, as with `python -m`)."""
    module_name, sep, attr = ref.rpartition(":")
    if not sep or not module_name or not attr:
        raise ImportFailed(f"'{ref}': expected MODULE:NAME (a module or a .py file, then a function in it)")
    try:
        if module_name.endswith(".py"):
            if not os.path.isfile(module_name):
                raise ImportFailed(f"'{module_name}': no such file")
            spec = importlib.util.spec_from_file_location(os.path.basename(module_name)[:-3], module_name)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            if "" not in sys.path and os.getcwd() not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_name)
    except ImportFailed:
        raise
    except Exception as e:  # the user's module failed to import: say why, without a traceback
        raise ImportFailed(f"cannot import '{module_name}': {type(e).__name__}: {e}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ImportFailed(f"module '{module_name}' has no '{attr}'") from None


@dataclass
class Imported:
    """A model as MLIR: the importer's text and mlirtext's parsed, verified module."""

    text: str
    parsed: ParseResult
    #: With weights as arguments: their names and values, passed after the model's own inputs.
    weight_names: list = field(default_factory=list)
    weights: list = field(default_factory=list)

    @property
    def module(self):
        return self.parsed.module


def parse_imported(text: str, name: str) -> ParseResult:
    """The importer's text parsed and verified; ImportFailed with mlirtext's diagnostics if it is not."""
    from ..api import parse_and_verify
    result = parse_and_verify(text, name)
    if has_errors(result.diagnostics):
        shown = "\n".join(d.format() for d in result.diagnostics[:5])
        raise ImportFailed(f"mlirtext cannot read what the importer wrote:\n{shown}")
    return result
