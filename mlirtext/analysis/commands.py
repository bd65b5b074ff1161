"""The server's commands: run a function on a device (`mlirtext.run`), run it on every
device against the reference (`mlirtext.runDevices`) and show the whole lowering
pipeline (`mlirtext.pipeline`). All take a `cancelled` event (checked between
steps) and a `report(message)` callback for progress, and return plain dicts
(JSON for the client)."""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Optional, Union

import numpy as np

from ..syntax.printer import print_module
from ..targets.llvm_ir import translate_module
from ..transforms.conversions.levels import LEVELS
from ..transforms.lowering_service import Cancelled, LoweringStopped
from . import cluster_run, device_run
from .cluster_driver import ClusterDriver, ClusterRunError
from .document import Document
from .extraction import function_or_chunk
from .pass_explorer import steps_json
from .pass_steps import StepRecorder, explore_levels
from .profiling import profile_function
from ..ir.arrays import dtype_of


def _noop(message: str) -> None:
    pass


def random_input(t, rng: np.random.Generator) -> np.ndarray:
    """A seeded random value of type `t`: floats in [-1, 1), integers in [-8, 8], booleans."""
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
    """A function ready to run: its module, its signature, its arguments."""
    name: str
    module: object                 # the function and what it uses (`extraction.function_or_chunk`)
    signature: object
    args: list
    where: object                  # the map from its spans back to the document

    @cached_property
    def text(self) -> str:
        """The module printed: what a native device compiles (and caches the compile by)."""
        return print_module(self.module)

    def formatted(self, values: list, types) -> list:
        from ..values import format_value
        return [format_value(v, t) for v, t in zip(values, types)]


def _prepare(doc: Document, function: str, inputs, seed: int) -> Union[_Prepared, str]:
    """The function `function` of `doc` with its inputs (given in iree-run-module syntax,
    else seeded random ones), or a message saying why it cannot run. Its module holds it and
    every symbol it uses, functions whole (the ones it calls run too)."""
    from ..interpreter import Interpreter, InterpreterError
    from ..interpreter.abi import signature
    from ..values import ValueError_, parse_input
    found = _function_at(doc, function or "")
    if isinstance(found, str):
        return found
    name, c, piece, fn = found
    extracted = function_or_chunk(doc, c, piece, fn, bodies=True)
    if isinstance(extracted, str):
        return extracted
    module, where = extracted
    try:
        ftype = signature(Interpreter(module).function(name))
        if inputs:
            if len(inputs) != len(ftype.inputs):
                return f"@{name} takes {len(ftype.inputs)} argument(s); {len(inputs)} input(s) given"
            args = [parse_input(spec, t, i) for i, (spec, t) in enumerate(zip(inputs, ftype.inputs))]
        else:
            rng = np.random.default_rng(seed)
            args = [random_input(t, rng) for t in ftype.inputs]
    except (ValueError_, InterpreterError) as e:
        return str(e)
    return _Prepared(name, module, ftype, args, where)


def _run_one(doc: Document, prepared: _Prepared, device: str) -> Union[device_run.Timed, str]:
    """A timed run on `device`, or the message of what stopped it."""
    from ..interpreter import InterpreterError
    from ..values import ValueError_
    from ..vm.vm import VMError
    try:
        text = "" if device == "reference" else prepared.text
        return device_run.run_on_device(text, prepared.name, prepared.args, device,
                                        module=prepared.module, filename=doc.filename)
    except (device_run.DeviceRunError, InterpreterError, VMError, ValueError_) as e:
        return str(e)
    except Exception as e:  # noqa: BLE001 - reported to the client, never raised
        return f"internal error while running @{prepared.name} on {device}: {type(e).__name__}: {e}"


def _timed_fields(run: device_run.Timed) -> dict:
    return {"device": run.device, "seconds": run.seconds, "calls": run.calls, "timing": run.timing,
            "compile_seconds": run.compile_seconds}


def _prepare_unless_cancelled(doc: Document, function: str, inputs, seed: int,
                              cancelled: Optional[threading.Event], report: Callable):
    """`_prepare`'s function to run, or {"error": why not} (cancelled included)."""
    report("parsing")
    prepared = _prepare(doc, function, inputs, seed)
    if isinstance(prepared, str):
        return {"error": prepared}
    if cancelled is not None and cancelled.is_set():
        return {"error": "cancelled"}
    return prepared


def run_function(doc: Document, function: str, inputs=None, seed: int = 0, device: str = "reference",
                 cancelled: Optional[threading.Event] = None, report: Callable = _noop,
                 cluster: Optional[ClusterDriver] = None) -> dict:
    """{"function", "device", "inputs", "outputs", "text", "seconds" (median), "calls", "timing",
    "compile_seconds"} or {"error": message}. A `cluster:KIND` device runs on the Ray cluster of
    `cluster` (the editor's `mlirtext.cluster`; then "node" says where)."""
    from ..values import format_results
    remote = cluster_run.is_cluster_device(device)
    if not remote and device not in device_run.DEVICES:
        return {"error": f"unknown device '{device}' (devices: {', '.join(device_run.DEVICES)})"}
    prepared = _prepare_unless_cancelled(doc, function, inputs, seed, cancelled, report)
    if isinstance(prepared, dict):
        return prepared
    report(f"running @{prepared.name} on {device}")
    if remote:
        try:
            outputs, fields = cluster_run.run(prepared.text, prepared.name, prepared.args, device,
                                              cluster or ClusterDriver(), doc.filename, cancelled)
        except ClusterRunError as e:
            return {"error": str(e)}
    else:
        run = _run_one(doc, prepared, device)
        if isinstance(run, str):
            return {"error": run}
        outputs, fields = run.outputs, _timed_fields(run)
    ftype = prepared.signature
    return {"function": prepared.name, **fields,
            "inputs": prepared.formatted(prepared.args, ftype.inputs),
            "outputs": prepared.formatted(outputs, ftype.results),
            "text": format_results(outputs, ftype.results)}


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


def profile_run(doc: Document, function: str, inputs=None, seed: int = 0, device: str = "local-task",
                cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """The function run natively with its calls profiled (`profiling.profile_function`): {"function",
    "device", "calls", "seconds" (per call), "rows" (per dispatch: name, kernel, calls, total,
    median, share, lines, ops), "host_share", "ops" (per source line: its share of the run time
    and the dispatches it went into), "table"} or {"error": message}."""
    from ..interpreter import InterpreterError
    from ..values import ValueError_
    from ..vm.vm import VMError
    prepared = _prepare_unless_cancelled(doc, function, inputs, seed, cancelled, report)
    if isinstance(prepared, dict):
        return prepared
    report(f"profiling @{prepared.name} on {device}")
    try:
        return profile_function(prepared.text, prepared.name, prepared.args, device, prepared.module,
                                doc.filename, lambda span: _document_line(doc, prepared.where.offset(span)))
    except (device_run.DeviceRunError, InterpreterError, VMError, ValueError_) as e:
        return {"error": str(e)}


def pipeline(doc: Document, function: Optional[str] = None, chunk: Optional[int] = None, targets=None,
             cache=None, cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """Every level's text, op counts per dialect and pass times, from the input's level
    down to llvm (and the target's LLVM IR when the targets package can make it). Each
    level also has `origins`: per line of its text, the document line (0-based) of the
    source op the op starting on that line came from, or None. `steps`: every pass as a step
    with its diff against the one before (`pass_explorer.steps_json`), the first the input.

    `targets` (see `target_code_command`; [] for none) adds `dispatches` and `targets`."""
    wanted = _target_list(targets)
    if isinstance(wanted, str):
        return {"error": wanted}
    if function:
        found = _function_at(doc, function)
        if isinstance(found, str):
            return {"error": found}
        _, c, piece, fn = found
        extracted = function_or_chunk(doc, c, piece, fn)
    else:
        found = _chunk_at(doc, chunk)
        if isinstance(found, str):
            return {"error": found}
        extracted = function_or_chunk(doc, found[1])
    if isinstance(extracted, str):
        return {"error": extracted}
    module, where = extracted
    out = {"function": function, "levels": [], "error": None, "target": None, "dispatches": [], "targets": [],
           "steps": []}
    recorder = StepRecorder()
    try:
        for level in explore_levels(module, LEVELS[-1], recorder, start="linalg", cancelled=cancelled):
            out["levels"].append({"level": level.level, "text": level.text, "op_counts": level.op_counts,
                                  "passes": [{"pass": n, "seconds": s} for n, s in level.passes],
                                  "origins": [_document_line(doc, where.offset(s)) for s in level.origins]})
            if level.level != LEVELS[-1]:
                report(f"lowering to {LEVELS[LEVELS.index(level.level) + 1]}")
        out["target"] = _target_output(module)
    except Cancelled:
        return {**out, "error": "cancelled"}
    except LoweringStopped as e:
        out["error"] = str(e)
    out["steps"] = steps_json(recorder.steps, lambda span: _document_line(doc, where.offset(span)))
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
        compiled = target_code.compiled_source(doc, found[1])
    if isinstance(compiled, str):   # every target says why
        return {"function": function, "error": None,
                **target_code.as_json(target_code.failed(wanted, compiled), lambda place: None)}
    source, where = compiled
    found = cache.compute(source, wanted, cancelled, report)
    if found.error == "cancelled":
        return {"error": "cancelled"}
    return {"function": function, "error": None, **target_code.as_json(
        found, lambda place: _document_line(doc, where.offset(source.span(place))))}


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
    """LLVM IR text of the llvm-level module, or None when it cannot be translated."""
    try:
        return translate_module(module)
    except Exception:  # noqa: BLE001 - no target output is not an error: the levels still show
        return None
