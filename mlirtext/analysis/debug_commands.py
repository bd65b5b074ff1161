"""The editor's "find what broke": where a function's numbers diverge in its lowering
(`mlirtext.bisect`, `mlirtext bisect` on the function under the cursor) and the smallest module its
lowering still crashes on (`mlirtext.reduce`, `mlirtext reduce --crash`). Both take a `cancelled`
event and a `report(message)` callback, as the other commands do, and answer plain dicts.

The reducer forks a child per candidate; the server has threads, so the reduction runs as a process
of its own (`python -m mlirtext reduce`), killed when the client cancels. What they leave for the
editor (a repro, a reduced module) lives in the server's `Scratch` (scratch.py), gone with it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from ..debugging.bisect import CRASHED, BisectError, bisect_pipeline
from ..debugging.device_bisect import WrongKernel
from ..debugging.faults import FAULTS, FaultSpec, FaultSpecError
from ..debugging.repro import replay_command, write_repro
from ..interpreter.abi import signature
from ..syntax.printer import print_module
from ..transforms.lowering_service import Cancelled
from ..transforms.passes import builtin_passes
from ..transforms.semantics_check import Tolerance, random_inputs
from ..values import ValueError_, parse_input
from .actions import function_at
from .dispatch_divergence import find_dispatch
from .document import Document
from .extraction import SourceMap, function_or_chunk
from .scratch import Scratch

#: The commands the actions run (the extension's; they call the server's mlirtext.bisect and mlirtext.reduce).
FIND_DIVERGENCE, REDUCE_FAILURE = "mlirtext.findDivergence", "mlirtext.reduceFailure"
#: How long the editor's reduction may take, in seconds.
REDUCE_BUDGET_S = 120.0
#: Where the `mlirtext` package is, for the reduction's process.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def _noop(message: str) -> None:
    pass


def actions_at(doc: Document, offset: int, crashed: set) -> list[tuple[str, str, list]]:
    """(title, command, arguments) of the debugging actions on the function at `offset`; "Reduce this
    failure" only on a function whose last bisect found its lowering crashing (`crashed`: names)."""
    found = function_at(doc, offset)
    if found is None:
        return []
    name = found[1].sym_name
    out = [(f"Find where @{name}'s numbers diverge", FIND_DIVERGENCE, [name])]
    if name in crashed:
        out.append((f"Reduce this failure (@{name}'s lowering crashes)", REDUCE_FAILURE, [name]))
    return out


def parse_faults(flags) -> list:
    """`--debug-miscompile=PASS:OP` and the like (faults.FAULTS) as faults (a
    `--debug-wrong-kernel=DEVICE:KERNEL` is left to `parse_wrong_kernels`); FaultSpecError."""
    faults = []
    for flag in flags or []:
        switch, _, text = flag.partition("=")
        if switch == WrongKernel.switch:
            continue
        if switch not in FAULTS:
            raise FaultSpecError(f"'{flag}' is not one of "
                                 f"{', '.join([s + '=PASS:OP' for s in FAULTS] + [WrongKernel.switch + '=DEVICE:KERNEL'])}")
        faults.append(FAULTS[switch](FaultSpec.parse(text, builtin_passes())))
    return faults


def parse_wrong_kernels(flags, devices) -> list:
    """The `--debug-wrong-kernel=DEVICE:KERNEL` flags as WrongKernel faults on `devices`; FaultSpecError."""
    out = []
    for flag in flags or []:
        switch, _, text = flag.partition("=")
        if switch == WrongKernel.switch:
            try:
                out.append(WrongKernel.parse(text, devices))
            except ValueError as e:
                raise FaultSpecError(f"{switch}: {e}") from None
    return out


def _located(doc: Document, function: str):
    """(name, the function's module, its SourceMap) or a message."""
    name = (function or "").lstrip("@")
    for chunk in doc.chunks:
        if name in chunk.symbols:
            piece, fn = chunk.symbols[name]
            if fn.name != "func.func":
                break
            found = function_or_chunk(doc, chunk, piece, fn, bodies=True)
            return found if isinstance(found, str) else (name, *found)
    return f"no function named @{name} in {doc.filename}"


def find_divergence(doc: Document, function: str, inputs, seed: int, faults, scratch: Scratch, devices=(),
                    cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> dict:
    """Bisect @function's lowering to llvm on `inputs` (iree-run-module strings, e.g. its last run's;
    else seeded random ones, as `mlirtext bisect` takes): {"function", "total", "kind" (None when
    no pass is to blame), "pass", "position", "level", "message", "summary", "difference"
    ({"max_abs", "max_rel", "max_ulp"} when its numbers diverged), "markers": [{"start": [line,
    character], "end": [...], "op", "message"}] on the source ops to blame, "repro" (a directory in
    `scratch`, which replaces the function's last one) and "command" (what replays the pass
    there)}, or {"error": message}. With `devices`, the function compiled runs on each of them
    dispatch by dispatch against the reference too (`mlirtext bisect --devices`): "dispatch" the
    first that differs (dispatch_divergence.py; None when all agree), its source ops marked too."""
    devices = list(devices or [])
    try:
        fault_list = parse_faults(faults)
        wrong = parse_wrong_kernels(faults, devices)
    except FaultSpecError as e:
        return {"error": str(e)}
    found = _located(doc, function)
    if isinstance(found, str):
        return {"error": found}
    name, module, where = found
    fn = next(op for op in module.regions[0].blocks[0].ops if op.sym_name == name)
    types = signature(fn).inputs
    try:
        if inputs:
            if len(inputs) != len(types):
                return {"error": f"@{name} takes {len(types)} argument(s); {len(inputs)} input(s) given"}
            values = [parse_input(spec, t, i) for i, (spec, t) in enumerate(zip(inputs, types))]
        else:
            values = random_inputs(fn, np.random.default_rng(seed))
    except ValueError_ as e:
        return {"error": str(e)}
    tolerance = Tolerance()
    try:
        result = bisect_pipeline(module, name, values, tolerance, fault_list,
                                 lambda position, total, p: report(f"pass {position} of {total}: {p}"), cancelled)
    except BisectError as e:
        return {"error": str(e)}
    except Cancelled:
        return {"error": "cancelled"}
    dispatch = None
    if devices:
        report(f"@{name} on {', '.join(devices)}, dispatch by dispatch")
        found = find_dispatch(module, name, values, devices, tolerance, wrong)
        if isinstance(found, str):
            return {"error": found}
        dispatch = found
    answer = _pass_answer(doc, where, name, result, tolerance, fault_list, scratch)
    if dispatch is not None:
        answer["dispatch"] = dispatch.answer(lambda ops, message: _markers(doc, where, ops, message))
        answer["markers"] += answer["dispatch"]["markers"]
        answer["summary"] += f"; {dispatch.summary()}"
    elif devices:
        answer["summary"] += f"; every dispatch on {', '.join(devices)} agrees with the reference"
    return answer


def _pass_answer(doc: Document, where: SourceMap, name: str, result, tolerance: Tolerance, fault_list: list,
                 scratch: Scratch) -> dict:
    """find_divergence's answer for the pipeline's bisect `result`."""
    finding = result.finding
    key = ("bisect", doc.uri, name)
    if finding is None:
        scratch.remove(key)   # (its last repro: no marker links to it any more)
        return {"function": name, "total": len(result.passes), "kind": None, "markers": [],
                "summary": f"all {len(result.passes)} passes of the lowering to llvm keep @{name}'s results "
                           f"within {tolerance}"}
    summary = (f"pass {finding.position} of {result.total} of the lowering to llvm (step to {finding.level}), "
               f"'{finding.pass_spelling}', {finding.kind}")
    repro = str(scratch.fresh(key, f"bisect-{name}"))
    command = replay_command(finding, tolerance, fault_list)
    write_repro(repro, finding, command)
    d = finding.difference
    return {"function": name, "total": result.total, "kind": finding.kind, "pass": finding.pass_spelling,
            "position": finding.position, "level": finding.level, "message": finding.message,
            "difference": None if d is None else {"max_abs": d.max_abs, "max_rel": d.max_rel, "max_ulp": d.max_ulp},
            "summary": summary, "crashed": finding.kind == CRASHED, "repro": repro, "rewrote": finding.rewrote,
            "command": " ".join(command),
            "markers": _markers(doc, where, finding.ops, f"{summary}: {finding.message}")}


def _markers(doc: Document, where: SourceMap, ops: list, message: str) -> list:
    out = []
    for op_name, span in ops:
        start = where.offset(span)
        if start is None:   # (an op the lowering made from nothing of this document)
            continue
        end = start + (span.end - span.start)
        out.append({"start": list(doc.lines.position(start)), "end": list(doc.lines.position(end)),
                    "op": op_name, "message": message})
    return out


def reduce_crash(doc: Document, function: str, faults, scratch: Scratch, level: Optional[str] = None,
                 budget: float = REDUCE_BUDGET_S, cancelled: Optional[threading.Event] = None,
                 report: Callable = _noop) -> dict:
    """`mlirtext reduce --crash` on @function alone (with what it calls), testing the lowering down to
    `level` (the level of the step the bisect found crashing; default llvm): {"function", "text" (the
    reduced module), "path" (in `scratch`, which replaces the function's last one), "summary", "still"
    (what it still does)} or {"error": message}. The reduction's own files (its input, its candidates) are gone when it ends,
    even when cancelled (its process killed)."""
    try:
        parse_faults(faults)
    except FaultSpecError as e:
        return {"error": str(e)}
    faults = [f for f in faults or [] if not f.startswith(WrongKernel.switch)]   # (the pipeline's faults only)
    found = _located(doc, function)
    if isinstance(found, str):
        return {"error": found}
    name, module, _ = found
    key = ("reduce", doc.uri, name)
    work = scratch.fresh(key, f"reduce-{name}")
    own = work / "work"   # the reduction's TMPDIR: its candidates go there, and all of it goes after
    own.mkdir()
    source, out = own / f"{name}.mlir", work / f"{name}.reduced.mlir"
    source.write_text(print_module(module))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
    env["TMPDIR"] = str(own)
    lowering = [f"--lower-to={level}"] if level else []
    child = subprocess.Popen([sys.executable, "-m", "mlirtext", "reduce", str(source), "--crash", *lowering, *faults,
                              "--budget", str(budget), "-o", str(out)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env)
    try:
        start = time.monotonic()
        while child.poll() is None:
            if cancelled is not None and cancelled.is_set():
                child.kill()
                child.communicate()
                scratch.remove(key)
                return {"error": "cancelled"}
            report(f"reducing @{name}: {time.monotonic() - start:.0f} s")
            time.sleep(0.2)
        said, problems = child.communicate()
    finally:
        shutil.rmtree(own, ignore_errors=True)
    if child.returncode != 0:
        scratch.remove(key)
        lines = [line for line in problems.splitlines() if line.strip()]
        return {"error": lines[-1] if lines else f"mlirtext reduce stopped with status {child.returncode}"}
    lines = said.splitlines()
    return {"function": name, "text": out.read_text(), "path": str(out), "summary": lines[0] if lines else "",
            "still": lines[1].strip() if len(lines) > 1 else ""}
