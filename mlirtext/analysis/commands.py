"""The server's commands: run a function on a device (`mlirtext.run`), run it on every
device against the reference (`mlirtext.runDevices`) and show the whole lowering
pipeline (`mlirtext.pipeline`). All take a `cancelled` event (checked between
steps) and a `report(message)` callback for progress, and return plain dicts
(JSON for the client)."""
from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Optional, Union

import numpy as np

from . import device_run
from .document import Document


def _noop(message: str) -> None:
    pass


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


def _function_at(doc: Document, function: str):
    """(name, chunk, piece, func op) of the function `function` (with or without '@'), or a
    message saying there is none."""
    name = function.lstrip("@")
    index = _find_function_chunk(doc, name)
    if index is None:
        return f"no function named @{name} in {doc.filename}"
    c = doc.chunks[index]
    piece, fn = c.symbols[name]
    return name, c, piece, fn


def _chunk_at(doc: Document, chunk: Optional[int]):
    """(index, chunk) of chunk number `chunk` (default the first), or a message saying there is none."""
    index = chunk or 0
    if not 0 <= index < len(doc.chunks):
        return f"no chunk #{index}"
    return index, doc.chunks[index]


@dataclass
class _Prepared:
    """A function ready to run: its chunk parsed, its signature, its arguments."""
    name: str
    chunk: int
    module: object
    signature: object
    args: list

    def formatted(self, values: list, types) -> list:
        from ..values import format_value
        return [format_value(v, t) for v, t in zip(values, types)]


def _prepare(doc: Document, function: str, inputs, seed: int) -> Union[_Prepared, str]:
    """The function `function` of `doc` with its inputs (given in iree-run-module syntax,
    else seeded random ones), or a message saying why it cannot run."""
    from ..interpreter import Interpreter, InterpreterError
    from ..interpreter.abi import signature
    from ..values import ValueError_, parse_input
    name = (function or "").lstrip("@")
    index = _find_function_chunk(doc, name)
    if index is None:
        return f"no function named @{name} in {doc.filename}"
    result = _chunk_module(doc, index)
    if not result.ok:
        return result.diagnostics[0].format()
    try:
        ftype = signature(Interpreter(result.module).function(name))
        if inputs:
            if len(inputs) != len(ftype.inputs):
                return f"@{name} takes {len(ftype.inputs)} argument(s); {len(inputs)} input(s) given"
            args = [parse_input(spec, t, i) for i, (spec, t) in enumerate(zip(inputs, ftype.inputs))]
        else:
            rng = np.random.default_rng(seed)
            args = [random_input(t, rng) for t in ftype.inputs]
    except (ValueError_, InterpreterError) as e:
        return str(e)
    return _Prepared(name, index, result.module, ftype, args)


def _compiled_text(doc: Document, prepared: _Prepared) -> str:
    """What a native device compiles: the function alone when it uses no other function of
    its chunk (so the compile cache is keyed by the function's own text), else the chunk."""
    from .actions import function_module_text
    chunk = doc.chunks[prepared.chunk]
    piece, fn = chunk.symbols[prepared.name]
    text, declared = function_module_text(doc, chunk, piece, fn)
    return text if not declared else doc.text[chunk.start:chunk.end]


def _run_one(doc: Document, prepared: _Prepared, device: str) -> Union[device_run.Timed, str]:
    """A timed run on `device`, or the message of what stopped it."""
    from ..interpreter import InterpreterError
    from ..values import ValueError_
    from ..vm.vm import VMError
    try:
        text = "" if device == "reference" else _compiled_text(doc, prepared)
        return device_run.run_on_device(text, prepared.name, prepared.args, device,
                                        module=prepared.module, filename=doc.filename)
    except (device_run.DeviceRunError, InterpreterError, VMError, ValueError_) as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 - reported to the client, never raised
        return f"internal error while running @{prepared.name} on {device}: {type(e).__name__}: {e}"


def _timed_fields(run: device_run.Timed) -> dict:
    return {"device": run.device, "seconds": run.seconds, "calls": run.calls, "timing": run.timing,
            "compile_seconds": run.compile_seconds}


def run_function(doc: Document, function: str, inputs=None, seed: int = 0, device: str = "reference",
                 cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """{"function", "device", "inputs", "outputs", "text", "seconds" (median), "calls", "timing",
    "compile_seconds"} or {"error": message}."""
    from ..values import format_results
    if device not in device_run.DEVICES:
        return {"error": f"unknown device '{device}' (devices: {', '.join(device_run.DEVICES)})"}
    report("parsing")
    prepared = _prepare(doc, function, inputs, seed)
    if isinstance(prepared, str):
        return {"error": prepared}
    if cancelled is not None and cancelled.is_set():
        return {"error": "cancelled"}
    report(f"running @{prepared.name} on {device}")
    run = _run_one(doc, prepared, device)
    if isinstance(run, str):
        return {"error": run}
    ftype = prepared.signature
    return {"function": prepared.name, **_timed_fields(run),
            "inputs": prepared.formatted(prepared.args, ftype.inputs),
            "outputs": prepared.formatted(run.outputs, ftype.results),
            "text": format_results(run.outputs, ftype.results)}


def run_on_devices(doc: Document, function: str, inputs=None, seed: int = 0, devices=device_run.DEVICES,
                   cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """The function on each device with the same inputs, each compared with the reference:
    {"function", "inputs", "runs": [{"device", "outputs", "seconds", "calls", "timing",
    "compile_seconds", "match", "max_diff", "error"}]} or {"error": message}."""
    unknown = [d for d in devices if d not in device_run.DEVICES]
    if unknown:
        return {"error": f"unknown device '{unknown[0]}' (devices: {', '.join(device_run.DEVICES)})"}
    prepared = _prepare(doc, function, inputs, seed)
    if isinstance(prepared, str):
        return {"error": prepared}
    ftype = prepared.signature
    runs, reference = [], None
    # The reference first: the others are compared with it.
    for device in sorted(devices, key=lambda d: d != "reference"):
        if cancelled is not None and cancelled.is_set():
            return {"error": "cancelled"}
        report(f"running @{prepared.name} on {device}")
        run = _run_one(doc, prepared, device)
        if isinstance(run, str):
            runs.append({"device": device, "error": run})
            continue
        entry = {**_timed_fields(run), "outputs": prepared.formatted(run.outputs, ftype.results),
                 "match": None, "max_diff": None, "error": None}
        if device == "reference":
            reference = run.outputs
        elif reference is not None:
            entry["match"], largest, why = device_run.compare(run.outputs, reference)
            # JSON has no infinity: a NaN or infinity where the reference has a number shows as no match.
            entry["max_diff"] = largest if largest is not None and math.isfinite(largest) else None
            if why is not None:
                entry["error"] = f"outputs differ from the reference: {why}"
        runs.append(entry)
    return {"function": prepared.name, "inputs": prepared.formatted(prepared.args, ftype.inputs), "runs": runs}


def op_counts(module) -> dict:
    """{dialect: {op name: count}} of everything inside `module`."""
    counts: dict = {}
    for op, n in sorted(Counter(op.name for op in module.walk() if op is not module).items()):
        counts.setdefault(op.split(".", 1)[0], {})[op] = n
    return counts


def pipeline(doc: Document, function: Optional[str] = None, chunk: Optional[int] = None, targets=None,
             cache=None, cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """Every level's text, op counts per dialect and pass times, from the input's level
    down to llvm (and the target's LLVM IR when the targets package can make it). Each
    level also has `origins`: per line of its text, the document line (0-based) of the
    source op the op starting on that line came from, or None.

    `targets` (see `target_code_command`; [] for none) adds `dispatches` and `targets`."""
    wanted = _target_list(targets)
    if isinstance(wanted, str):
        return {"error": wanted}
    from .. import api
    from ..transforms.conversions.levels import LEVELS, level_of
    from .actions import function_module_text
    from .lowering import lower_module
    from .origins import print_with_origins, span_origin
    if function:
        found = _function_at(doc, function)
        if isinstance(found, str):
            return {"error": found}
        _, c, piece, fn = found
        text, _ = function_module_text(doc, c, piece, fn)
        result = api.parse_and_verify(text, doc.filename)
        # The function's text comes last in `text` (after aliases and declarations).
        doc_start, doc_end = piece.base + fn.span.start, piece.base + fn.span.end
        at = len(text) - 1 - (doc_end - doc_start)
        to_document = lambda offset: doc_start + offset - at if at <= offset < at + doc_end - doc_start else None  # noqa: E731
    else:
        found = _chunk_at(doc, chunk)
        if isinstance(found, str):
            return {"error": found}
        index, c = found
        result = _chunk_module(doc, index)
        to_document = lambda offset: offset if c.start <= offset < c.end else None  # noqa: E731
    if not result.ok:
        return {"error": result.diagnostics[0].format()}
    module = result.module
    origin = span_origin(module, lambda offset: _document_line(doc, to_document(offset)))

    def level_entry(level: str, passes: list) -> dict:
        text, origins = print_with_origins(module, origin)
        return {"level": level, "text": text, "origins": origins, "op_counts": op_counts(module), "passes": passes}
    start = level_of(module) or "linalg"
    levels = [level_entry(start, [])]
    out = {"function": function, "levels": levels, "error": None, "target": None, "dispatches": [], "targets": []}
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
            break
        levels.append(level_entry(level, [{"pass": n, "seconds": s} for n, s in timing]))
    else:
        out["target"] = _target_output(module)
    if wanted:
        # The targets compile the function as `mlirtext compile` does (its own way down), so
        # they show even where the level-by-level lowering stopped.
        found = target_code_command(doc, function, chunk, wanted, cache, cancelled, report)
        if found.get("error") == "cancelled":
            out["error"] = "cancelled"
            return out
        out["dispatches"], out["targets"] = found.get("dispatches", []), found.get("targets", [])
    return out


def target_code_command(doc: Document, function: Optional[str] = None, chunk: Optional[int] = None,
                        targets=None, cache=None, cancelled: Optional[threading.Event] = None,
                        report: Callable = _noop) -> dict:
    """Each target's code for a function (or chunk), compiled as `mlirtext compile` does:
    {"function", "dispatches", "targets": [per target: its kernels, or the error why it has
    none], "error"}. `targets`: a list, or names separated by commas; default llvm-cpu and the
    GPU targets whose back-end or tool is here. Results go into, and come from, `cache` (a
    TargetCache: hover reads it)."""
    from . import target_code
    wanted = _target_list(targets)
    if isinstance(wanted, str):
        return {"error": wanted}
    cache = cache if cache is not None else target_code.TargetCache()
    if function:
        found = _function_at(doc, function)
        if isinstance(found, str):
            return {"error": found}
        name, c, piece, fn = found
        compiled = target_code.compiled_source(doc, c, piece, fn)
        cache.functions.add((doc.uri, name))   # (hover looks only at the functions computed)
    else:
        found = _chunk_at(doc, chunk)
        if isinstance(found, str):
            return {"error": found}
        _, c = found
        compiled = target_code.CompiledSource(doc.text[c.start:c.end], [(0, c.start, c.end - c.start)])
    found = cache.compute(compiled.text, doc.filename, wanted, cancelled, report)
    if found.error == "cancelled":
        return {"error": "cancelled"}
    return {"function": function, "error": None,
            **target_code.as_json(found, lambda offset: _document_line(doc, compiled.document_offset(offset)))}


def _target_list(targets):
    """The targets asked for: a list (maybe empty), names separated by commas, or None (the
    default); a message when it is none of these."""
    from .target_code import available_targets
    if targets is None:
        return list(available_targets())
    if isinstance(targets, str):
        targets = [t.strip() for t in targets.split(",") if t.strip()]
    if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
        return "targets must be a list of target names, e.g. [\"llvm-cpu\", \"cuda\"]"
    return targets


def _document_line(doc: Document, offset: Optional[int]) -> Optional[int]:
    return None if offset is None else doc.lines.position(offset)[0]


def _target_output(module) -> Optional[str]:
    """LLVM IR text of the llvm-level module, when the targets package is there."""
    try:
        from ..targets import llvm_ir  # noqa: F401 - optional: built by another part of the project
        emit = getattr(llvm_ir, "emit_module", None) or getattr(llvm_ir, "translate_module", None)
        return emit(module) if emit is not None else None
    except Exception:  # noqa: BLE001 - no target output is not an error
        return None
