"""The server's commands: run a function (`mlirtext.run`) and show the whole lowering
pipeline (`mlirtext.pipeline`). Both take a `cancelled` event (checked between
steps) and a `report(message)` callback for progress, and return plain dicts
(JSON for the client)."""
from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Callable, Optional

import numpy as np

from .document import Document


def _noop(message: str) -> None:
    pass


def execute(module, name: str, args: list) -> list:
    """Run function `name` of `module` on numpy `args`: the one place that picks the
    engine (the reference interpreter today; the VM can take over here)."""
    from ..interpreter import Interpreter
    return Interpreter(module).call(name, args)


def random_input(t, rng: np.random.Generator) -> np.ndarray:
    """A seeded random value of type `t`: floats in [-1, 1), integers in [-8, 8], booleans."""
    from ..interpreter.dtypes import dtype_of
    from ..ir.types import ShapedType
    dtype = dtype_of(t)
    shape = tuple(t.shape) if isinstance(t, ShapedType) else ()
    if np.issubdtype(dtype, np.bool_):
        return rng.integers(0, 2, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -8), min(info.max, 8) + 1, size=shape).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)).astype(dtype)
    return rng.uniform(-1, 1, size=shape).astype(dtype)


def _chunk_module(doc: Document, chunk_index: int):
    from ..api import _verified
    from ..syntax.parser import parse
    chunk = doc.chunks[chunk_index]
    return _verified(parse(doc.text, doc.filename, chunk.start, chunk.end))


def _find_function_chunk(doc: Document, name: str) -> Optional[int]:
    for i, chunk in enumerate(doc.chunks):
        if name in chunk.symbols:
            return i
    return None


def run_function(doc: Document, function: str, inputs=None, seed: int = 0,
                 cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """{"function", "inputs", "outputs", "text", "seconds"} or {"error": message}."""
    from ..interpreter import InterpreterError
    from ..interpreter.abi import signature
    from ..values import ValueError_, format_results, format_value, parse_input
    name = (function or "").lstrip("@")
    index = _find_function_chunk(doc, name)
    if index is None:
        return {"error": f"no function named @{name} in {doc.filename}"}
    report("parsing")
    result = _chunk_module(doc, index)
    if not result.ok:
        return {"error": result.diagnostics[0].format()}
    try:
        from ..interpreter import Interpreter
        fn = Interpreter(result.module).function(name)
        ftype = signature(fn)
        if inputs:
            if len(inputs) != len(ftype.inputs):
                return {"error": f"@{name} takes {len(ftype.inputs)} argument(s); {len(inputs)} input(s) given"}
            args = [parse_input(spec, t, i) for i, (spec, t) in enumerate(zip(inputs, ftype.inputs))]
        else:
            rng = np.random.default_rng(seed)
            args = [random_input(t, rng) for t in ftype.inputs]
        if cancelled is not None and cancelled.is_set():
            return {"error": "cancelled"}
        report(f"running @{name}")
        started = time.perf_counter()
        outputs = execute(result.module, name, args)
        seconds = time.perf_counter() - started
    except ValueError_ as e:
        return {"error": str(e)}
    except InterpreterError as e:
        return {"error": str(e)}
    except Exception as e:  # noqa: BLE001 - reported to the client, never raised
        return {"error": f"internal error while running @{name}: {type(e).__name__}: {e}"}
    return {"function": name,
            "inputs": [format_value(a, t) for a, t in zip(args, ftype.inputs)],
            "outputs": [format_value(o, t) for o, t in zip(outputs, ftype.results)],
            "text": format_results(outputs, ftype.results),
            "seconds": seconds}


def op_counts(module) -> dict:
    """{dialect: {op name: count}} of everything inside `module`."""
    counts: dict = {}
    for op, n in sorted(Counter(op.name for op in module.walk() if op is not module).items()):
        counts.setdefault(op.split(".", 1)[0], {})[op] = n
    return counts


def pipeline(doc: Document, function: Optional[str] = None, chunk: Optional[int] = None,
             cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """Every level's text, op counts per dialect and pass times, from the input's level
    down to llvm (and the target's LLVM IR when the targets package can make it)."""
    from .. import api
    from ..transforms.conversions.levels import LEVELS, level_of
    from .actions import function_module_text
    from .lowering import lower_module, strip_module
    if function:
        name = function.lstrip("@")
        index = _find_function_chunk(doc, name)
        if index is None:
            return {"error": f"no function named @{name} in {doc.filename}"}
        c = doc.chunks[index]
        piece, fn = c.symbols[name]
        text, _ = function_module_text(doc, c, piece, fn)
        result = api.parse_and_verify(text, doc.filename)
    else:
        index = chunk or 0
        if not 0 <= index < len(doc.chunks):
            return {"error": f"no chunk #{index}"}
        result = _chunk_module(doc, index)
    if not result.ok:
        return {"error": result.diagnostics[0].format()}
    module = result.module
    start = level_of(module) or "linalg"
    levels = [{"level": start, "text": strip_module(module), "op_counts": op_counts(module), "passes": []}]
    out = {"function": function, "levels": levels, "error": None, "target": None}
    for level in LEVELS[LEVELS.index(start) + 1:]:
        if cancelled is not None and cancelled.is_set():
            out["error"] = "cancelled"
            return out
        report(f"lowering to {level}")
        timing: list = []
        problem = lower_module(module, level, cancelled, timing)
        if cancelled is not None and cancelled.is_set():
            out["error"] = "cancelled"
            return out
        if problem is not None:
            out["error"] = f"lowering to {level} stops: {problem}"
            return out
        levels.append({"level": level, "text": strip_module(module), "op_counts": op_counts(module),
                       "passes": [{"pass": n, "seconds": s} for n, s in timing]})
    out["target"] = _target_output(module)
    return out


def _target_output(module) -> Optional[str]:
    """LLVM IR text of the llvm-level module, when the targets package is there."""
    try:
        from ..targets import llvm_ir  # noqa: F401 - optional: built by another part of the project
        emit = getattr(llvm_ir, "emit_module", None) or getattr(llvm_ir, "translate_module", None)
        return emit(module) if emit is not None else None
    except Exception:  # noqa: BLE001 - no target output is not an error
        return None
