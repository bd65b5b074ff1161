"""How many corpus test functions that lower to llvm also run natively and equal the interpreter.

    PYTHONPATH=. python -m tests.native_status [--files GLOB]... [-v] [--approx]

The functions are those of `tests.lowering_status` (split from their checks,
lowered level by level, passing at every level). Each llvm-level module is
translated to LLVM IR, compiled for the host at O3, loaded and called; its
outputs are compared with the interpreter's on the same llvm-level module
(integers and booleans bit-exact, floats within `FLOAT_ULPS` units in the last
place, NaN where NaN), and the test's own checks are run on the native outputs.
With --approx the llvm level is re-derived with the native pipeline (polynomial
approximation of math functions before convert-loops-to-llvm) and the floats may
differ by the approximation's bound too.
"""
from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np

from mlirtext.api import parse_and_verify

from .lowering_status import LEVELS, collect, split_checks

#: Float tolerance against the interpreter: libm and numpy each round within 1 ulp;
#: transcendentals feeding later arithmetic spread that a little.
FLOAT_ULPS = 4
#: ... plus the polynomial approximations' own bound with --approx.
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
    from mlirtext.interpreter import Interpreter
    from mlirtext.targets.native import load_module_functions
    result = parse_and_verify(llvm_text, "lowered.mlir")
    if not result.ok:
        raise RuntimeError(f"the lowered text does not parse: {result.diagnostics[0].message}")
    module = result.module
    reference = Interpreter(module).call(name, [])
    native_module = approx_from if approx_from is not None else module
    fns = load_module_functions(native_module)
    return fns[name](), reference, module


def native_outcome(outcome, approx: bool = False) -> str:
    """'' when the function runs natively, equals the interpreter and passes its checks; else why not."""
    from mlirtext.interpreter.registry import IMPLS
    from mlirtext.interpreter import Interpreter
    text = outcome.texts.get("llvm")
    if text is None:
        return "does not reach llvm"
    try:
        source = None
        if approx:  # lower again from the source level with the native pipeline
            from mlirtext.targets.native import lower_for_native
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
    # the test's own checks, on the native outputs
    checks = _checks_of(outcome)
    if checks is None:
        return ""
    interp = Interpreter(module)
    interp.failures = []
    position = 0
    for op in checks:
        args = native[position:position + len(op.operands)]
        position += len(op.operands)
        try:
            IMPLS[op.name](interp, op, args)
        except Exception as e:  # noqa: BLE001
            return f"check: {type(e).__name__}: {e}"
    return f"check failed: {interp.failures[0]}" if interp.failures else ""


def _checks_of(outcome):
    """The check ops of the outcome's test function. A split file may define one function name in
    several chunks: the chunk is the one whose split, inlined module prints as the outcome's
    source-level text."""
    from mlirtext.api import parse_chunks
    from mlirtext.syntax.printer import print_module
    from mlirtext.transforms.pass_manager import PassManager
    from mlirtext.transforms.pipeline import parse_pipeline
    from . import corpus
    from .check_status import needs_split
    text = corpus.file_text(outcome.file)
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


def _collect(globs, cache):
    import os
    import pickle
    if cache and os.path.exists(cache):
        with open(cache, "rb") as f:
            return pickle.load(f)
    outcomes = [o for o in collect(globs) if o.reached == "llvm"]
    if cache:
        with open(cache, "wb") as f:
            pickle.dump(outcomes, f)
    return outcomes


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="append", metavar="GLOB", help="glob over corpus file paths (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list each function that fails, and why")
    ap.add_argument("--approx", action="store_true",
                    help="compile with polynomial approximation of math functions (the native pipeline)")
    ap.add_argument("--top", type=int, default=25, help="reasons to show (0 = all)")
    ap.add_argument("--cache", metavar="FILE",
                    help="keep the lowered functions in FILE (a pickle): later runs skip lowering")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    outcomes = _collect(args.files, args.cache)
    lowered_s = time.perf_counter() - start
    reasons = Counter()
    failing = []
    for o in outcomes:
        why = native_outcome(o, args.approx)
        if why:
            reasons[why if len(why) < 100 else why[:100]] += 1
            failing.append((o, why))
    passed = len(outcomes) - len(failing)
    pct = 100.0 * passed / len(outcomes) if outcomes else 0.0
    print(f"{passed}/{len(outcomes)} run natively and equal the interpreter ({pct:.1f}%)"
          f"{' [with polynomial approximation]' if args.approx else ''} "
          f"(lowering {lowered_s:.0f} s, native {time.perf_counter() - start - lowered_s:.0f} s)")
    from .check_status import GROUPS, group_of
    bad = {id(o) for o, _ in failing}
    for group, _ in GROUPS + (("other", ""),):
        mine = [o for o in outcomes if group_of(o.file) == group]
        if mine:
            print(f"  {group}: {sum(id(o) not in bad for o in mine)}/{len(mine)}")
    if reasons:
        print("\nwhy the others do not:")
        for reason, n in reasons.most_common(args.top or None):
            print(f"  {n:5d}  {reason}")
    if args.verbose:
        for o, why in failing:
            print(f"{o.file} @{o.function}: {why}")


if __name__ == "__main__":
    main()
