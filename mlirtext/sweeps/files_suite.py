"""A directory of models (`.mlir` at the hlo, tosa or linalg level, or `.onnx`), and the benchmark
workloads (`benchmarks/programs/`): each file compiled for each device's target, every exported
function called with seeded random inputs, and the outputs compared with the reference interpreter's
(floats within rtol 1e-3, atol 1e-4: random inputs sum to values near zero, where native and
interpreted sums differ by more than the ONNX suite's 1e-5; integers exactly). One result per file and device:
`mlp.mlir [local-task]`; its size is the module file's, its seconds the compile and the call.
"""
from __future__ import annotations

import os

from .results import Result, with_device

DEVICES = ("local-task",)
SUFFIXES = (".mlir", ".onnx")
ATOL = 1e-4
WARM_MODULE = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = stablehlo.add %x, %x : tensor<4xf32>
  return %y : tensor<4xf32>
}"""


def devices(options) -> tuple:
    return tuple(options.devices) or DEVICES


def tests(options) -> list[str]:
    try:
        names = os.listdir(options.path)
    except OSError as e:
        raise ValueError(f"cannot list '{options.path}': {e.strerror}") from None
    return sorted(n for n in names if n.endswith(SUFFIXES))


def result_names(test: str, options) -> list[str]:
    return [with_device(test, d) for d in devices(options)]


def warm(options) -> None:
    """Once per worker: a small module compiled and run in the worker itself, so that the tests forked
    from it find the parser's tables, LLVM and the VM set up."""
    import numpy

    from ..runtime import compile_text, load_module
    try:
        load_module(compile_text(WARM_MODULE, "llvm-cpu", "warm.mlir"), "local-sync").vm_module.function("f")(
            *[numpy.ones(4, "float32")])
    except Exception:  # noqa: BLE001 - (each test then says what is wrong)
        pass


def faults(options) -> list:
    """The faults `mlirtext sweep --debug-miscompile PASS:OP` (and the other --debug-* switches) ask the
    compiler to suffer: a sweep with an expected-status file then shows which tests catch them."""
    from ..debugging.faults import FAULTS, FaultSpec
    from ..transforms.passes import builtin_passes
    return [FAULTS[switch](FaultSpec.parse(spec, builtin_passes())) for switch, spec in options.extra.get("faults", ())]


def _source(path: str) -> str:
    if path.endswith(".onnx"):
        from ..importers.onnx import convert
        return convert(path, "stablehlo")
    with open(path, encoding="utf-8") as f:
        return f.read()


def run(test: str, options) -> list[Result]:
    import time

    import numpy as np

    from ..analysis.commands import random_input
    from ..api import parse_and_verify
    from ..bench.measure import device_target
    from ..compiler.driver import CompileFailed, compile_source
    from ..compiler.module_writer import pack
    from ..importers.common import ImportFailed
    from ..interpreter import Interpreter
    from ..runtime import load_module
    from ..vm.program import record_type
    from .onnx_suite import outputs_match
    names = result_names(test, options)
    try:
        text = _source(os.path.join(options.path, test))
    except (ImportFailed, OSError, UnicodeDecodeError) as e:
        return [Result(n, "fail-compile", f"{type(e).__name__}: {str(e).splitlines()[-1][:200]}") for n in names]
    parsed = parse_and_verify(text, test)
    if not parsed.ok:
        return [Result(n, "fail-compile", "parse/verify: " + parsed.diagnostics[0].message[:160]) for n in names]
    results = []
    for name, device in zip(names, devices(options)):
        started = time.monotonic()
        try:
            data = pack(compile_source(text, test, device_target(device), instrumentations=faults(options)))
        except CompileFailed as e:
            results.append(Result(name, "fail-compile", f"compile: {e.diagnostics[0].message[:160]}"))
            continue
        try:
            module = load_module(data, device).vm_module
            worst, why = None, ""
            for fn_name, fn in module.functions.items():
                rng = np.random.default_rng(0)
                inputs = [random_input(record_type(r), rng) for r in fn.inputs]
                got = fn(*inputs)
                want = Interpreter(parse_and_verify(text, test).module).call(fn_name, [np.asarray(a) for a in inputs])
                why, worst = outputs_match(got, want, atol=ATOL)
                if why:
                    why = f"@{fn_name}: {why}"
                    break
        except Exception as e:  # any failure to run is this test's result
            message = str(e).splitlines()[0][:160] if str(e) else ""
            results.append(Result(name, "fail-run", f"{type(e).__name__}: {message}", size=len(data)))
            continue
        results.append(Result(name, "mismatch" if why else "pass", why, max_error=worst, size=len(data),
                              seconds=round(time.monotonic() - started, 3)))
    return results
