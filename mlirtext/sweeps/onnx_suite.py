"""The ONNX node tests (`onnx/backend/test/data/node` in the onnx wheel) through torch-mlir to
StableHLO, run by mlirtext on each device and compared with the tests' expected outputs.

A test converts when torch-mlir turns it into StableHLO; when it does not, and the test has scalar or
integer-vector inputs, it is tried once more with those bound to the test's values as constants
(StableHLO needs static shapes, and such inputs often decide one: a reduction's axes, Reshape's shape,
TopK's k). It passes on a device when the outputs equal the expected ones (integers and booleans
exactly; floats within rtol 1e-3, atol 1e-5, NaN where NaN is expected). One result per device:
`test_abs [local-task]`. Statuses: fail-compile (not converted, not parsed, not compiled), fail-run,
mismatch (with the largest difference), pass.
"""
from __future__ import annotations

import os

from .results import Result, with_device

DEVICES = ("reference", "local-task")
RTOL, ATOL = 1e-3, 1e-5
WARM_TEST = "test_abs"


def node_tests_dir() -> str:
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")


def devices(options) -> tuple:
    return tuple(options.devices) or DEVICES


def tests(options) -> list[str]:
    try:
        root = node_tests_dir()
    except ImportError:
        raise ValueError("the onnx package is not installed: pip install 'mlirtext[onnx]'") from None
    return sorted(os.listdir(root))


def result_names(test: str, options) -> list[str]:
    return [with_device(test, d) for d in devices(options)]


def warm(options) -> None:
    """Once per worker, before tests are forked from it: one small test run in the worker itself.
    A first conversion, compile and run in a process sets up torch-mlir's context, LLVM and the VM
    (3-4 s); forked after that, a test takes what it needs and no more (0.4-0.7 s for test_abs)."""
    try:
        run(WARM_TEST, options)
    except Exception:  # noqa: BLE001 - (each test then says what is missing)
        pass


def read_case(directory: str):
    """(inputs, expected outputs) of a test's first data set, as numpy arrays."""
    import onnx
    from onnx import numpy_helper
    data = os.path.join(directory, "test_data_set_0")

    def tensors(prefix):
        out = []
        for i in range(len([f for f in os.listdir(data) if f.startswith(prefix)])):
            proto = onnx.TensorProto()
            with open(os.path.join(data, f"{prefix}{i}.pb"), "rb") as f:
                proto.ParseFromString(f.read())
            out.append(numpy_helper.to_array(proto))
        return out
    return tensors("input_"), tensors("output_")


def input_names(directory: str) -> list[str]:
    """The names of the model's inputs, in the order of the test's input_N.pb files."""
    import onnx
    graph = onnx.load(os.path.join(directory, "model.onnx"), load_external_data=False).graph
    initialized = {t.name for t in graph.initializer}
    return [i.name for i in graph.input if i.name not in initialized]


def shape_inputs(directory: str) -> dict:
    """The test's scalar and integer-vector inputs, by name: the values that may decide a shape
    (axes, pads, repeats, k, a target shape, a window size). Sequence and optional inputs: none."""
    try:
        inputs, _ = read_case(directory)
    except Exception:  # inputs that are no tensors (sequences, optionals) bind nothing
        return {}
    return {name: a for name, a in zip(input_names(directory), inputs)
            if a.ndim == 0 or (a.ndim == 1 and a.dtype.kind in "iu")}


def _is_float(dtype) -> bool:
    """numpy's floats and complexes, and ml_dtypes' bf16 and f8 kinds (which numpy calls void, 'V')."""
    return dtype.kind in "fc" or dtype.name.startswith(("float", "bfloat"))


def outputs_match(got, want, rtol: float = RTOL, atol: float = ATOL) -> tuple[str, float | None]:
    """('', None) when `got` equals `want`, else (what differs, the largest absolute difference)."""
    import numpy as np
    if len(got) != len(want):
        return f"{len(got)} results, expected {len(want)}", None
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return f"result {i}: shape {g.shape}, expected {w.shape}", None
        if _is_float(w.dtype):
            # Rounded to the expected type, then compared as complex128 (bf16 and f8 arrays have no
            # arithmetic of their own in numpy).
            g, w = g.astype(w.dtype).astype(np.complex128), w.astype(np.complex128)
            close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
            if not close.all():
                worst = float(np.abs(g - w)[~close].max())  # nan where one side is NaN and the other is not
                return f"result {i}: {int((~close).sum())} elements differ, max abs error {worst:.3g}", worst
        elif not np.array_equal(g.astype(w.dtype), w):
            diff = g.astype(np.float64) - w.astype(np.float64) if w.dtype.kind in "iub" else None
            return (f"result {i}: {int((g.astype(w.dtype) != w).sum())} elements differ",
                    float(np.abs(diff).max()) if diff is not None and diff.size else None)
    return "", None


def run(test: str, options) -> list[Result]:
    """Convert, run on each device and compare one test."""
    import numpy as np

    from ..api import parse_and_verify
    from ..compiler.driver import CompileFailed
    from ..importers.common import ImportFailed
    from ..importers.onnx import convert
    from ..interpreter import Interpreter
    from ..runtime import compile_text, load_module
    names = result_names(test, options)
    directory = os.path.join(node_tests_dir(), test)
    model = os.path.join(directory, "model.onnx")
    bound = {}
    try:
        text = convert(model, "stablehlo")
    except ImportFailed as e:
        why = "torch-mlir: " + str(e).splitlines()[-1].strip()[:200]
        bound = shape_inputs(directory)
        try:
            if not bound:
                raise ImportFailed(why)
            text = convert(model, "stablehlo", constants=bound)
        except ImportFailed:
            return [Result(n, "fail-compile", why, details={"converted": False}) for n in names]
    details = {"converted": True, "bound": ",".join(bound)}
    size = len(text.encode())
    inputs, expected = read_case(directory)
    inputs = [a for name, a in zip(input_names(directory), inputs) if name not in bound]
    result = parse_and_verify(text, test)
    if not result.ok:
        why = "parse/verify: " + result.diagnostics[0].message[:160]
        return [Result(n, "fail-compile", why, size=size, details=details) for n in names]
    fn = next(op.attr("sym_name").value for op in result.module.regions[0].blocks[0].ops
              if op.name == "func.func")
    results = []
    for name, device in zip(names, devices(options)):
        try:
            if device == "reference":
                got = Interpreter(result.module).call(fn, [np.asarray(a) for a in inputs])
            else:
                got = load_module(compile_text(text, filename=test), device).vm_module.function(fn)(*inputs)
        except CompileFailed as e:
            results.append(Result(name, "fail-compile", f"compile: {e.diagnostics[0].message[:160]}",
                                  size=size, details=details))
            continue
        except Exception as e:  # any failure to run is a result of this test, reported as such
            message = str(e).splitlines()[0][:160] if str(e) else ""
            results.append(Result(name, "fail-run", f"{type(e).__name__}: {message}", size=size, details=details))
            continue
        why, worst = outputs_match(got, expected)
        results.append(Result(name, "mismatch" if why else "pass", why, max_error=worst, size=size,
                              details=details))
    return results
