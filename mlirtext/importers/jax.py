"""JAX functions to StableHLO: `jax.jit(f).lower(*args)`, printed with debug locations so each op
points back at the Python line it came from (`loc("model.py":12:8 ...)`, kept by the parser and
shown by the editor's hover)."""
from __future__ import annotations

import os

from .common import ImportFailed, Imported, parse_imported, require, spec_shape_dtype


def import_function(f, *args, name: str = "") -> Imported:
    """`f` traced on `args` (arrays, or `jax.ShapeDtypeStruct`s when only shapes matter) as a
    parsed StableHLO module whose `@main` takes `args` in order."""
    jax = require("jax", "jax", "JAX")
    _hide_own_frames()
    what = getattr(f, "__name__", repr(f))
    try:
        text = jax.jit(f).lower(*args).as_text(debug_info=True)
    except Exception as e:  # a tracing error in the user's function: report it, no traceback
        raise ImportFailed(f"jax could not lower '{what}': {type(e).__name__}: {e}") from None
    return Imported(text, parse_imported(text, name or f"<jax {what}>"))


def _hide_own_frames() -> None:
    """Keep mlirtext's own frames (this importer, the command line) out of the locations, as JAX
    keeps its own out: a location's call chain then ends in the user's code. Private JAX API:
    without it the chains are only longer."""
    try:
        from jax._src import source_info_util
        source_info_util.register_exclusion(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        source_info_util.register_exclusion("<frozen runpy>")
    except (ImportError, AttributeError):
        pass


def shape_structs(specs: list[str]) -> list:
    """`jax.ShapeDtypeStruct`s for argument specs like `4x8xf32` (tracing needs no values)."""
    jax = require("jax", "jax", "JAX")
    return [jax.ShapeDtypeStruct(*spec_shape_dtype(s)) for s in specs]
