"""The corpus functions that lower to llvm (`lowering_suite`), compiled to a module file as `mlirtext
compile` does (without canonicalize, which would fold the constant inputs and leave no kernel), loaded
and run on each device (default local-sync); a function passes when every result equals the
interpreter's for the source function (integers bit-exact, floats within 1e-5 relative or 1e-6
absolute, NaN where NaN). `FILE@FUNCTION [DEVICE]`; functions that do not reach llvm are skips.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .corpus_files import suite_files, unique_names
from .lowering_suite import lower_file
from .results import Result, with_device

DEVICES = ("local-sync",)


@dataclass
class VMOutcome:
    file: str
    function: str
    ok: bool
    why: str = ""
    dispatches: int = 0


def same(got, want) -> str:
    try:
        return _compare(np.asarray(got), np.asarray(want))
    except (TypeError, ValueError) as e:
        return f"cannot compare ({type(e).__name__}: {e})"


def _compare(got, want) -> str:
    if got.dtype != want.dtype:
        return f"element type {got.dtype} != {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if want.dtype.kind == "f" or "float" in want.dtype.name:  # (ml_dtypes' bfloat16 & co have kind 'V')
        g, w = got.astype(np.float64), want.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = ~((np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= 1e-6 + 1e-5 * np.abs(w)))
        return f"{int(bad.sum())} elements differ (max |diff| {np.nanmax(np.abs(g - w)):.3g})" if bad.any() else ""
    if not np.array_equal(got, want):
        return f"{int((got != want).sum())} elements differ"
    return ""


def check_function(rel: str, name: str, source_text: str, device: str) -> VMOutcome:
    from ..api import parse_and_verify
    from ..compiler.driver import CompileFailed, compile_module
    from ..compiler.module_writer import pack
    from ..interpreter import Interpreter
    from ..vm.vm import LoadedModule, VMError
    out = VMOutcome(rel, name, False)
    try:
        want = Interpreter(parse_and_verify(source_text, rel).module).call(name, [])
        result = parse_and_verify(source_text, rel)
        compiled = compile_module(result.module, "llvm-cpu", fold=False)
        out.dispatches = sum(1 for p in compiled.programs for i in p.instructions if i["op"] == "dispatch")
        module = LoadedModule(pack(compiled), device)
        got = module.function(name)()
    except CompileFailed as e:
        out.why = f"compile: {e.diagnostics[0].message}"
        return out
    except VMError as e:
        out.why = f"vm: {e}"
        return out
    except Exception as e:  # noqa: BLE001 - a bug is a reason, never a crash of the tool
        out.why = f"internal error: {type(e).__name__}: {e}"
        return out
    if len(got) != len(want):
        out.why = f"{len(got)} results, expected {len(want)}"
        return out
    for i, (g, w) in enumerate(zip(got, want)):
        why = same(g, w)
        if why:
            out.why = f"result {i}: {why}"
            return out
    out.ok = True
    return out


def devices(options) -> tuple:
    return tuple(options.devices) or DEVICES


def tests(options) -> list[str]:
    return suite_files(options)


def result_names(test: str, options) -> list[str]:
    return [with_device(f"{test}@<file>", d) for d in devices(options)]


def warm(options) -> None:
    from ..compiler import driver  # noqa: F401 - imported once, not in every test's process
    from .lowering_suite import warm as warm_lowering
    warm_lowering(options)


def status_of(out: VMOutcome) -> str:
    if out.ok:
        return "pass"
    if out.why.startswith("compile:"):
        return "fail-compile"
    if out.why.startswith(("vm:", "internal error")):
        return "fail-run"
    return "mismatch"


def run(test: str, options) -> list[Result]:
    return results_of(test, lower_file(options.path, test), options)


def results_of(test: str, outcomes: list, options) -> list[Result]:
    """The results of corpus file `test` from its functions' lowering outcomes (`lower_file`'s)."""
    results = []
    for name, o in zip(unique_names([o.function for o in outcomes]), outcomes):
        for device in devices(options):
            label = with_device(f"{test}@{name}", device)
            if o.reached != "llvm":
                results.append(Result(label, "skip", "does not lower to llvm"))
                continue
            out = check_function(test, o.function, o.texts["source"], device)
            results.append(Result(label, status_of(out), out.why, details={"dispatches": out.dispatches}))
    return results or [Result(f"{test}@<file>", "skip", "no test functions")]
