"""The corpus functions that lower to llvm (`lowering_suite`), translated to LLVM IR, compiled for the
host at O3, loaded and called; their outputs compared with the interpreter's on the same llvm-level
module (integers and booleans bit-exact, floats within `FLOAT_ULPS` units in the last place, NaN where
NaN), and the test's own checks run on the native outputs. `FILE@FUNCTION`: pass; mismatch (differs
from the interpreter, or a check fails); fail-run (it could not be compiled or called); skip (it does
not reach llvm). With `approx`, the llvm level is derived again with the native pipeline (polynomial
approximation of math functions before convert-loops-to-llvm) and floats may differ by the
approximation's bound too.
"""
from __future__ import annotations

import numpy as np

from .corpus_files import file_text, needs_split, suite_files, unique_names
from .lowering_suite import LEVELS, lower_file, split_checks
from .results import Result

#: Float tolerance against the interpreter: libm and numpy each round within 1 ulp;
#: transcendentals feeding later arithmetic spread that a little.
FLOAT_ULPS = 4
#: ... plus the polynomial approximations' own bound with approx.
APPROX_ULPS = 16


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between two float arrays of one dtype (NaN vs NaN: 0)."""
    a, b = np.asarray(a), np.asarray(b)
    width = a.dtype.itemsize * 8
    ints = {16: np.int16, 32: np.int32, 64: np.int64}[width]
    ai, bi = a.view(ints).astype(np.int64), b.view(ints).astype(np.int64)
    magnitude = np.int64((1 << (width - 1)) - 1)
    ai = np.where(ai < 0, -(ai & magnitude), ai)   # sign-magnitude to a monotonic line
    bi = np.where(bi < 0, -(bi & magnitude), bi)
    d = np.abs(ai.astype(np.float64) - bi.astype(np.float64))  # float: no overflow for f64 extremes
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    d = np.where(nan_a & nan_b, 0, d)
    return np.where(nan_a != nan_b, np.inf, d)


def compare(native: list, reference: list, ulps: int = FLOAT_ULPS) -> str:
    """'' when the outputs agree, else what differs."""
    if len(native) != len(reference):
        return f"{len(native)} results, the interpreter gave {len(reference)}"
    for i, (n, r) in enumerate(zip(native, reference)):
        n, r = np.asarray(n), np.asarray(r)
        if n.shape != r.shape or n.dtype != r.dtype:
            return f"result {i}: {n.dtype}{list(n.shape)} vs {r.dtype}{list(r.shape)}"
        scale = 1
        if n.dtype.kind in "fV" and n.dtype.itemsize == 1:   # f8, f6, f4 (ml_dtypes): exact, any NaN equal
            if not np.array_equal(n.astype(np.float32), r.astype(np.float32), equal_nan=True):
                return f"result {i}: values differ"
            continue
        if n.dtype.kind == "V" and n.dtype.names is None:  # bf16 (ml_dtypes): compare as f32
            n, r, scale = n.astype(np.float32), r.astype(np.float32), 1 << 16
        if n.dtype.kind == "f" and n.dtype.itemsize in (2, 4, 8):
            d = ulp_distance(n, r) / scale
            if d.size and d.max() > ulps:
                k = int(np.argmax(d))
                return f"result {i}: {int(d.max())} ulp apart at {k} ({n.reshape(-1)[k]!r} vs {r.reshape(-1)[k]!r})"
        elif not np.array_equal(n.view(np.uint8) if n.dtype.kind == "V" else n,
                                r.view(np.uint8) if r.dtype.kind == "V" else r):
            return f"result {i}: values differ"
    return ""


def run_natively(llvm_text: str, name: str, approx_from=None):
    """(native outputs, interpreter outputs, llvm module) of function `name` of an llvm-level module text."""
    from ..api import parse_and_verify
    from ..interpreter import Interpreter
    from ..targets.native import load_module_functions
    result = parse_and_verify(llvm_text, "lowered.mlir")
    if not result.ok:
        raise RuntimeError(f"the lowered text does not parse: {result.diagnostics[0].message}")
    module = result.module
    reference = Interpreter(module).call(name, [])
    native_module = approx_from if approx_from is not None else module
    fns = load_module_functions(native_module)
    return fns[name](), reference, module


def native_outcome(outcome, root: str, approx: bool = False) -> str:
    """'' when the function runs natively, equals the interpreter and passes its checks; else why not.
    `root`: the corpus the outcome's file is in."""
    from ..api import parse_and_verify
    from ..interpreter import Interpreter
    text = outcome.texts.get("llvm")
    if text is None:
        return "does not reach llvm"
    try:
        source = None
        if approx:  # lower again from the source level with the native pipeline
            from ..targets.native import lower_for_native
            src = parse_and_verify(outcome.texts["source"], "source.mlir").module
            steps = [p for _, p in LEVELS[1:]]
            steps[-1] = "math-polynomial-approximation,canonicalize," + steps[-1]
            lower_for_native(src, ",".join(steps))
            source = src
        native, reference, module = run_natively(text, outcome.function, source)
    except Exception as e:  # noqa: BLE001 - every failure is a reason, never a crash of the tool
        return f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
    why = compare(native, reference, APPROX_ULPS if approx else FLOAT_ULPS)
    if why:
        return f"differs from the interpreter: {why}"
    checks = checks_of(outcome, root)   # the test's own checks, on the native outputs
    if checks is None:
        return ""
    interp = Interpreter(module)
    interp.failures = []
    position = 0
    for op in checks:
        args = native[position:position + len(op.operands)]
        position += len(op.operands)
        try:
            interp.semantics.impls[op.name](interp, op, args)
        except Exception as e:  # noqa: BLE001
            return f"check: {type(e).__name__}: {e}"
    return f"check failed: {interp.failures[0]}" if interp.failures else ""


def checks_of(outcome, root: str):
    """The check ops of the outcome's test function. A split file may define one function name in
    several chunks: the chunk is the one whose split, inlined module prints as the outcome's
    source-level text."""
    from ..api import parse_chunks
    from ..syntax.printer import print_module
    from ..transforms.pass_manager import PassManager
    from ..transforms.pipeline import parse_pipeline
    text = file_text(root, outcome.file)
    for chunk in parse_chunks(text, outcome.file, needs_split(text)):
        if chunk.module is None or not any(op.name == "func.func" and op.sym_name == outcome.function
                                           for op in chunk.module.regions[0].blocks[0].ops):
            continue
        try:
            copy, checks = split_checks(chunk.module, outcome.function)
            PassManager(parse_pipeline(LEVELS[0][1])).run(copy)
        except Exception:  # noqa: BLE001
            continue
        if print_module(copy) == outcome.texts.get("source"):
            return checks
    return None


def tests(options) -> list[str]:
    return suite_files(options)


def result_names(test: str, options) -> list[str]:
    return [f"{test}@<file>"]


def warm(options) -> None:
    from ..targets import native  # noqa: F401 - llvmlite, imported once, not in every test's process
    from .lowering_suite import warm as warm_lowering
    warm_lowering(options)


def run(test: str, options) -> list[Result]:
    return results_of(test, lower_file(options.path, test), options)


def results_of(test: str, outcomes: list, options) -> list[Result]:
    """The results of corpus file `test` from its functions' lowering outcomes (`lower_file`'s)."""
    results = []
    for name, o in zip(unique_names([o.function for o in outcomes]), outcomes):
        if o.reached != "llvm":
            results.append(Result(f"{test}@{name}", "skip", "does not reach llvm"))
            continue
        why = native_outcome(o, options.path, bool(options.extra.get("approx")))
        status = "pass" if not why else "mismatch" if why.startswith(("differs", "check")) else "fail-run"
        results.append(Result(f"{test}@{name}", status, why))
    return results or [Result(f"{test}@<file>", "skip", "no test functions")]
