"""`--check-semantics`: run every function before and after each pass on the same
seeded random inputs and compare the results.

Integers (and booleans) must match bit for bit. Floats must agree within
`ULP_BOUND` units in the last place, or within `RELATIVE_BOUND` of the largest
magnitude in that result (lowerings may reassociate sums, as compilers do). A
pass outside the bound fails, naming itself and the function.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ..ir import types as T
from ..ir.arrays import dtype_of, is_float_dtype
from ..ir.attributes import StringAttr
from ..ir.core import Operation
from ..interpreter.abi import ABI_ATTR
from ..verifier import verify
from .pass_manager import Instrumentation
from .passes import Pass, PassFailure
from .tolerance import Tolerance

#: Extent used for dynamic dimensions of generated inputs.
DYNAMIC_EXTENT = 4


@dataclass
class Difference:
    pass_name: str
    function: str
    max_abs: float
    max_ulp: int
    ok: bool
    #: max |diff| over the largest magnitude of the expected result it is in.
    max_rel: float = 0.0

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "CHANGED"
        return (f"check-semantics: {self.pass_name}: @{self.function}: "
                f"max |diff| {self.max_abs:.3g}, {self.max_ulp} ulp: {verdict}")


class CheckSemantics(Instrumentation):
    def __init__(self, write: Callable[[str], None], seed: int = 0, inputs: Optional[dict] = None,
                 tolerance: Tolerance = Tolerance()):
        """`inputs` {function name: arguments} for the functions not to run on seeded random ones."""
        self.write = write
        self.seed = seed
        self.tolerance = tolerance
        self.inputs: dict[str, list] = dict(inputs or {})
        self.expected: dict[str, list] = {}
        self.differences: list[Difference] = []

    def before(self, p: Pass, op: Operation) -> None:
        self.expected = {name: outs for name, outs in self._run_all(op, p, "before").items()}

    def after(self, p: Pass, op: Operation) -> None:
        try:
            got = self._run_all(op, p, "after")
        except PassFailure:
            if _does_not_verify(op):
                return  # the pass manager's verification says what is wrong, better than a failed run
            raise
        for name, want in self.expected.items():
            if name not in got:
                continue  # the pass removed the function (inline, symbol-dce)
            diff = compare(p.name, name, want, got[name], self.tolerance)
            self.differences.append(diff)
            self.write(f"{diff}\n")
            if not diff.ok:
                raise PassFailure(f"pass '{p.name}' changed the results of @{name}: max |diff| "
                                  f"{diff.max_abs:.3g} ({diff.max_ulp} ulp; the bound is {self.tolerance})")

    def _run_all(self, op: Operation, p: Pass, when: str) -> dict[str, list]:
        from ..interpreter import Interpreter, InterpreterError
        root = op
        while root.parent_op is not None:
            root = root.parent_op
        interp = Interpreter(root)
        outputs = {}
        for fn in _functions(op):
            name = fn.sym_name
            if name not in self.inputs:
                self.inputs[name] = random_inputs(fn, np.random.default_rng(self.seed))
            try:
                outputs[name] = interp.call(name, [a.copy() for a in self.inputs[name]])
            except InterpreterError as e:
                raise PassFailure(f"--check-semantics could not run @{name} {when} pass '{p.name}': {e}",
                                  e.span) from None
        return outputs


def _does_not_verify(op: Operation) -> bool:
    while op.parent_op is not None:
        op = op.parent_op
    return any(d.severity == "error" for d in verify(op))


def _functions(op: Operation) -> list[Operation]:
    """Public functions with a body, at or directly under `op`."""
    candidates = [op] if op.name == "func.func" else [c for r in op.regions for b in r.blocks for c in b.ops]
    out = []
    for fn in candidates:
        vis = fn.attr("sym_visibility")
        runnable = fn.name == "func.func" or fn.name == "llvm.func" and ABI_ATTR in fn.attributes
        if runnable and fn.regions and fn.regions[0].blocks and \
                not (isinstance(vis, StringAttr) and vis.value != "public"):
            out.append(fn)
    return out


def random_inputs(fn: Operation, rng: np.random.Generator) -> list[np.ndarray]:
    """Seeded inputs for `fn`'s arguments: normal floats, small integers, random booleans."""
    from ..interpreter.abi import signature
    inputs = []
    for t in signature(fn).inputs:
        shape = tuple(DYNAMIC_EXTENT if d is None else d for d in t.shape) if isinstance(t, T.ShapedType) else ()
        dtype = dtype_of(t)
        if dtype.kind == "b":
            value = rng.random(shape) < 0.5
        elif dtype.kind in "iu":
            low = 0 if dtype.kind == "u" or T.element_type(t) == T.IndexType() else -8
            value = rng.integers(low, 9, size=shape)
        elif dtype.kind == "c":
            value = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
        else:
            value = rng.standard_normal(shape)
        inputs.append(np.asarray(value).astype(dtype))
    return inputs


def compare(pass_name: str, function: str, want: list, got: list, tolerance: Tolerance = Tolerance()) -> Difference:
    max_abs, max_rel, max_ulp, ok = 0.0, 0.0, 0, len(want) == len(got)
    for a, b in zip(want, got):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return Difference(pass_name, function, float("inf"), 0, False)
        if a.dtype.kind == "c" or is_float_dtype(a.dtype):   # (bf16 and the f8 types included)
            abs_diff, ulp, within = float_difference(a, b, tolerance)
            max_abs, max_ulp, ok = max(max_abs, abs_diff), max(max_ulp, ulp), ok and within
        elif a.size and not np.array_equal(a, b):
            abs_diff, ok = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()), False
            max_abs = max(max_abs, abs_diff)
        else:
            continue
        scale = float(np.max(np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)), initial=0.0))
        max_rel = max(max_rel, abs_diff / scale if scale else (0.0 if abs_diff == 0 else float("inf")))
    return Difference(pass_name, function, max_abs, max_ulp, ok, max_rel)


def float_difference(a: np.ndarray, b: np.ndarray, tolerance: Tolerance = Tolerance()) -> tuple[float, int, bool]:
    """(largest |a-b|, largest ulp distance, within the bound); NaN matches NaN."""
    if a.dtype.kind == "c":
        re = float_difference(a.real.copy(), b.real.copy(), tolerance)
        im = float_difference(a.imag.copy(), b.imag.copy(), tolerance)
        return max(re[0], im[0]), max(re[1], im[1]), re[2] and im[2]
    if a.size == 0:
        return 0.0, 0, True
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return float("nan"), 0, False
    a, b = a[~nan_a], b[~nan_b]
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
    abs_diff = np.where(a == b, 0.0, abs_diff)  # inf == inf
    ulp = _ulp_distance(a, b)
    scale = float(np.max(np.abs(a.astype(np.float64)), initial=0.0))
    within = (ulp <= tolerance.ulp) | (abs_diff <= tolerance.relative * scale)
    finite = abs_diff[np.isfinite(abs_diff)]
    largest = float(finite.max(initial=0.0)) if finite.size == abs_diff.size else float("inf")
    return largest, int(ulp.max(initial=0)), bool(within.all())


def _ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in representable values, via the sign-magnitude to two's complement trick."""
    bits = np.dtype(f"i{a.dtype.itemsize}")
    ia = a.view(bits).astype(np.int64)
    ib = b.view(bits).astype(np.int64)
    top = np.int64(1) << (8 * a.dtype.itemsize - 1)
    ia = np.where(ia < 0, -(ia + top), ia)  # negative floats count down from zero
    ib = np.where(ib < 0, -(ib + top), ib)
    return np.abs(ia - ib)
