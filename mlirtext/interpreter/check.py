"""check: the test assertions of StableHLO's and IREE's check dialects, and the JAX testdata
form `stablehlo.custom_call @check.expect_close(...)`.

A failed check does not stop the function: it is recorded as a `CheckFailure` in
`interp.failures` (which check, where, the first mismatching element, got vs expected)
and the run goes on, as both upstream runners report and continue.

Each check compares the way its own runner does:

- StableHLO's interpreter (`stablehlo-translate --interpret`, `stablehlo/tests/CheckOps.cpp`):
  `expect_eq[_const]` is element equality (IEEE for floats: NaN never equals);
  `expect_almost_eq[_const]` is `areApproximatelyEqual` with `tolerance` (default 1e-4):
  equal, or both NaN, or both finite with the same sign and |a - b| <= tolerance
  (complex: real and imaginary parts each); `expect_close` counts ULPs between the two
  (identical bits or two NaNs = 0, finite values by their sign-magnitude bit patterns,
  anything else against a non-finite value = the maximum) and passes when
  min_ulp_difference <= ulps <= max_ulp_difference.
- Its driver's custom calls (`StablehloTranslateMain.cpp`): `@check.expect_close` is
  expect_close with min 0, max 3 ULPs; `@check.expect_almost_eq` uses tolerance 1e-3;
  `@check.expect_eq` is expect_eq; `@check.eq` is expect_eq for integers and
  almost_eq (1e-4) otherwise, and returns a `tensor<i1>` saying whether it held.
- IREE's check module (`iree/modules/check/module.cc`): `expect_eq[_const]` compares the
  bytes (so NaN == NaN when the bits agree, and -0.0 != 0.0); `expect_almost_eq[_const]` is
  NumPy's isclose in the element's arithmetic type (f32 for f32 and narrower floats):
  lhs == rhs, or rhs finite and |lhs - rhs| <= atol + rtol * |rhs|, or both NaN
  (atol defaults to 1e-4, rtol to 0); `expect_true`/`expect_false` test an integer against
  zero; `expect_all_true` wants every element non-zero.
- `expect_serialized_eq` compares against the tensor `interpreter.probe` serialized under
  the same `probe_id` (StableHLO's runner writes it to `--probe-output-dir` and reads it
  back); here the probe keeps it in `interp.probes` for the run, and the comparison is the
  reference's: same type, then expect_eq. A probe that never ran is a failed check.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..ir import types as T
from ..ir.arrays import attr_to_array, dtype_of, shape_of
from ..ir.attributes import FloatAttr, IntegerAttr, StringAttr
from ..ir.source import Span
from .machine import InterpreterError
from .registry import custom_call, impl, semantics_of

#: StableHLO's default `tolerance` (CheckOps.td / Element.h: 0.0001).
HLO_TOLERANCE = 1e-4
#: `stablehlo.custom_call @check.expect_almost_eq` in stablehlo-translate uses 0.001.
CUSTOM_CALL_ALMOST_EQ_TOLERANCE = 1e-3
#: `stablehlo.custom_call @check.expect_close` in stablehlo-translate: min 0, max 3 ULPs.
CUSTOM_CALL_MAX_ULP = 3
#: IREE's defaults (the parser fills them in when the source leaves them out).
IREE_ATOL, IREE_RTOL = 1e-4, 0.0


@dataclass
class CheckFailure:
    """One failed assertion."""
    check: str                      # e.g. "check.expect_eq_const", "stablehlo.custom_call @check.expect_close"
    span: Optional[Span]
    message: str                    # what did not hold (first mismatch, got vs expected)
    index: Optional[tuple] = None   # first mismatching element
    got: object = None
    expected: object = None
    #: the two sides as the message writes them (an element's values, two shapes); empty when the
    #: message names no two sides (a truth check, a missing probe)
    got_text: str = ""
    expected_text: str = ""

    @property
    def line(self) -> Optional[int]:
        return self.span.line_col[0] if self.span is not None else None

    def __str__(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.check}{where}: {self.message}"


# ---- element formatting ------------------------------------------------------------------
def _fmt(x) -> str:
    x = np.asarray(x)
    if x.dtype.kind == "b":
        return "true" if bool(x) else "false"
    if x.dtype.kind in "iu":
        return str(int(x))
    if x.dtype.kind == "c":
        return f"({_fmt(x.real)}, {_fmt(x.imag)})"
    v = float(x)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v) if x.dtype.itemsize >= 8 else str(x[()])


def _index_text(index: tuple) -> str:
    return "[" + ", ".join(map(str, index)) + "]"


def _fail(interp, op, check: str, message: str, index=None, got=None, expected=None, texts=("", "")) -> None:
    """`texts`: (got, expected) as the message writes them."""
    interp.failures.append(CheckFailure(check, op.name_span or op.span, message, index, got, expected, *texts))


def _compare(interp, op, check: str, got: np.ndarray, expected: np.ndarray, ok: np.ndarray,
             extra: str = "") -> bool:
    """Record a failure at the first element where `ok` is false; True when all held."""
    ok = np.asarray(ok)
    if ok.all():
        return True
    first = tuple(int(i) for i in np.argwhere(~ok)[0]) if ok.ndim else ()
    g, e = np.asarray(got)[first], np.asarray(expected)[first]
    bad = int(ok.size - np.count_nonzero(ok))
    where = f"element {_index_text(first)}" if first else "value"
    count = f" ({bad} of {ok.size} elements differ)" if ok.size > 1 else ""
    _fail(interp, op, check, f"{where}: got {_fmt(g)}, expected {_fmt(e)}{extra}{count}",
          first, g.item() if hasattr(g, "item") else g, e.item() if hasattr(e, "item") else e,
          (f"{where}: {_fmt(g)}", f"{where}: {_fmt(e)}"))
    return False


def _same_shape(interp, op, check: str, got: np.ndarray, expected: np.ndarray) -> bool:
    if got.shape != expected.shape:
        shapes = ["x".join(map(str, a.shape)) or "scalar" for a in (got, expected)]
        _fail(interp, op, check, f"shapes differ: got {shapes[0]}, expected {shapes[1]}",
              texts=(f"shape {shapes[0]}", f"shape {shapes[1]}"))
        return False
    return True


# ---- the comparisons, whole-array -----------------------------------------------------------
def _as_float64(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(np.float64)


def hlo_equal(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """StableHLO `Element ==`: value equality (IEEE for floats, both parts for complex)."""
    if got.dtype.kind in "biuc":
        return got == expected
    return _as_float64(got) == _as_float64(expected)


def bytes_equal(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """IREE's memcmp, per element: every byte of the element's storage agrees."""
    shape = np.shape(got)
    g = np.ascontiguousarray(got).reshape(-1)
    e = np.ascontiguousarray(expected).astype(g.dtype, copy=False).reshape(-1)
    n = g.dtype.itemsize
    gb = g.view(np.uint8).reshape(g.shape + (n,))
    eb = e.view(np.uint8).reshape(e.shape + (n,))
    return (gb == eb).all(axis=-1).reshape(shape)


def _hlo_close_real(f: np.ndarray, g: np.ndarray, tol: float) -> np.ndarray:
    """`areApproximatelyEqual(APFloat, APFloat, tolerance)`, element-wise on float64 arrays."""
    with np.errstate(invalid="ignore", over="ignore"):
        equal = f == g
        f_nan, g_nan = np.isnan(f), np.isnan(g)
        unordered = f_nan | g_nan
        finite = np.isfinite(f) & np.isfinite(g)
        same_sign = np.signbit(f) == np.signbit(g)
        near = np.abs(f - g) <= tol
    return equal | (unordered & f_nan & g_nan) | (~unordered & finite & same_sign & near)


def hlo_almost_equal(got: np.ndarray, expected: np.ndarray, tol: float) -> np.ndarray:
    if got.dtype.kind == "c":
        return _hlo_close_real(got.real.astype(np.float64), expected.real.astype(np.float64), tol) & \
            _hlo_close_real(got.imag.astype(np.float64), expected.imag.astype(np.float64), tol)
    return _hlo_close_real(_as_float64(got), _as_float64(expected), tol)


def iree_almost_equal(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> np.ndarray:
    """IREE's NumpyFuzzyCompare in the element's arithmetic type (f32, or f64 for f64)."""
    work = np.float64 if got.dtype == np.float64 else np.float32
    lhs, rhs = np.asarray(got).astype(work), np.asarray(expected).astype(work)
    with np.errstate(invalid="ignore", over="ignore"):
        bound = work(atol) + work(rtol) * np.abs(rhs)
        return (lhs == rhs) | (np.isfinite(rhs) & (np.abs(lhs - rhs) <= bound)) | (np.isnan(lhs) & np.isnan(rhs))


def _float_bits(a: np.ndarray):
    """(sign-magnitude integer of |a| as uint64, sign bit) for a float array of any width."""
    a = np.ascontiguousarray(a)
    n = a.dtype.itemsize
    bits = a.reshape(-1).view(np.dtype(f"u{n}")).astype(np.uint64).reshape(a.shape)
    sign_bit = np.uint64(1) << np.uint64(8 * n - 1)
    if a.dtype.itemsize == 1 or getattr(a.dtype, "name", "").startswith(("float8", "float6", "float4")):
        # narrow ml_dtypes: the sign is the top bit of the storage only for 8-bit kinds;
        # float6/float4 are stored in a byte with the sign at their own top bit
        width = {"float6_e2m3fn": 6, "float6_e3m2fn": 6, "float4_e2m1fn": 4}.get(a.dtype.name, 8)
        sign_bit = np.uint64(1) << np.uint64(width - 1)
    return bits & ~sign_bit, (bits & sign_bit) != 0


def _ulp_real(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """StableHLO's ULPDifference, element-wise; uint64."""
    fb, fs = _float_bits(f)
    gb, gs = _float_bits(g)
    identical = (fb == gb) & (fs == gs)
    ff, gf = _as_float64(f), _as_float64(g)
    finite = np.isfinite(ff) & np.isfinite(gf)
    both_nan = np.isnan(ff) & np.isnan(gf)
    diff = np.where(fs != gs, fb + gb, np.where(fb > gb, fb - gb, gb - fb))
    top = np.uint64(np.iinfo(np.uint64).max)
    out = np.where(finite, diff, top)
    out = np.where(both_nan | identical, np.uint64(0), out)
    return out.astype(np.uint64)


def ulp_difference(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    if got.dtype.kind == "c":
        return np.maximum(_ulp_real(np.ascontiguousarray(got.real), np.ascontiguousarray(expected.real)),
                          _ulp_real(np.ascontiguousarray(got.imag), np.ascontiguousarray(expected.imag)))
    return _ulp_real(got, np.asarray(expected).astype(got.dtype, copy=False))


# ---- shared bodies -----------------------------------------------------------------------
def _float_attr(op, key: str, default: float) -> float:
    a = op.attributes.get(key)
    return float(a.value) if isinstance(a, FloatAttr) else default


def _int_attr(op, key: str, default: int) -> int:
    a = op.attributes.get(key)
    return int(a.value) if isinstance(a, IntegerAttr) else default


def _is_hlo_form(op) -> bool:
    from ..dialects.check import is_stablehlo_form
    return is_stablehlo_form(op)


def _data(op, args):
    """Operands without IREE's optional `hal.device` operand."""
    from ..dialects.check import has_device_operand
    return list(args[1:]) if has_device_operand(op) else list(args)


def runtime_form_problem(value, t) -> Optional[str]:
    """Why `value` is not the runtime form of type `t` (wrong dtype or shape), or None.
    A check must not pass on a value some op produced in the wrong form (e.g. float64 for
    an f32 tensor): the comparison itself would hide it."""
    try:
        dtype = dtype_of(t)
    except Exception:  # types without a runtime form here (buffer views, quantized): not judged
        return None
    arr = np.asarray(value)
    want = shape_of(t) if isinstance(t, T.ShapedType) else ()
    if arr.ndim != len(want) or any(w is not None and w != d for w, d in zip(want, arr.shape)):
        return f"the checked value has shape {'x'.join(map(str, arr.shape)) or 'scalar'}, its type is {t}"
    if arr.dtype != dtype:
        return f"the checked value is a {arr.dtype} array, but its type {t} means {dtype}"
    return None


def _forms_ok(interp, op, name: str, values, operands) -> bool:
    for value, operand in zip(values, operands):
        problem = runtime_form_problem(value, operand.type)
        if problem is not None:
            _fail(interp, op, name, problem + " (an op before it produced the wrong runtime form)")
            return False
    return True


def _const_value(op) -> np.ndarray:
    value = op.attr("value")
    if value is None or getattr(value, "type", None) is None:
        raise InterpreterError(f"'{op.name}' needs an elements attribute 'value'")
    return attr_to_array(value, value.type)


def _check_eq(interp, op, name: str, got, expected, bytewise: bool) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    if not _same_shape(interp, op, name, got, expected):
        return False
    ok = bytes_equal(got, expected) if bytewise else hlo_equal(got, expected)
    return _compare(interp, op, name, got, expected, ok)


def _check_almost_hlo(interp, op, name: str, got, expected, tol: float) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    if not _same_shape(interp, op, name, got, expected):
        return False
    if got.dtype.kind in "biu":
        return _compare(interp, op, name, got, expected, got == expected)
    return _compare(interp, op, name, got, expected, hlo_almost_equal(got, expected, tol),
                    f", tolerance {tol:g}")


def _check_almost_iree(interp, op, name: str, got, expected, atol: float, rtol: float) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    if not _same_shape(interp, op, name, got, expected):
        return False
    tol = f", atol {atol:g}" + (f", rtol {rtol:g}" if rtol else "")
    if got.dtype.kind == "c":
        ok = iree_almost_equal(got.real, expected.real, atol, rtol) & \
            iree_almost_equal(got.imag, expected.imag, atol, rtol)
    elif got.dtype.kind in "biu":
        ok = got == expected
    else:
        ok = iree_almost_equal(got, expected, atol, rtol)
    return _compare(interp, op, name, got, expected, ok, tol)


def _check_close(interp, op, name: str, got, expected, min_ulp: int, max_ulp: int) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    if not _same_shape(interp, op, name, got, expected):
        return False
    if got.dtype.kind in "biu":
        # not a float: StableHLO's runner refuses; exact equality is the only sensible reading
        return _compare(interp, op, name, got, expected, got == expected)
    ulps = ulp_difference(got, expected)
    ok = (ulps <= np.uint64(max_ulp)) & (ulps >= np.uint64(min_ulp))
    if ok.all():
        return True
    first = tuple(int(i) for i in np.argwhere(~ok)[0]) if ok.ndim else ()
    u = int(ulps[first])
    shown = "max" if u == np.iinfo(np.uint64).max else str(u)
    limits = f"max {max_ulp}" + (f", min {min_ulp}" if min_ulp else "")
    return _compare(interp, op, name, got, expected, ok, f", {shown} ULP apart ({limits})")


# ---- the check ops ------------------------------------------------------------------------
def _checked_forms(fn):
    """Run `fn` only when every data operand has its type's runtime form (else record why)."""
    def run(interp, op, args):
        from ..dialects.check import has_device_operand
        operands = list(op.operands[1:]) if has_device_operand(op) else list(op.operands)
        values = list(args[1:]) if has_device_operand(op) else list(args)
        if not _forms_ok(interp, op, _cc_name(op) if op.name.endswith("custom_call") else op.name,
                         values, operands):
            return [np.array(False) for _ in op.results]
        return fn(interp, op, args)
    run.__name__ = getattr(fn, "__name__", "run")
    run.__doc__ = fn.__doc__
    return run


@impl("check.expect_eq")
@_checked_forms
def _expect_eq(interp, op, args):
    got, expected = _data(op, args)
    _check_eq(interp, op, op.name, got, expected, bytewise=not _is_hlo_form(op))
    return []


@impl("check.expect_eq_const")
@_checked_forms
def _expect_eq_const(interp, op, args):
    (got,) = _data(op, args)
    _check_eq(interp, op, op.name, got, _const_value(op), bytewise=not _is_hlo_form(op))
    return []


def _almost(interp, op, got, expected):
    if _is_hlo_form(op):
        _check_almost_hlo(interp, op, op.name, got, expected, _float_attr(op, "tolerance", HLO_TOLERANCE))
    else:
        _check_almost_iree(interp, op, op.name, got, expected,
                           _float_attr(op, "atol", IREE_ATOL), _float_attr(op, "rtol", IREE_RTOL))


@impl("check.expect_almost_eq")
@_checked_forms
def _expect_almost_eq(interp, op, args):
    got, expected = _data(op, args)
    _almost(interp, op, got, expected)
    return []


@impl("check.expect_almost_eq_const")
@_checked_forms
def _expect_almost_eq_const(interp, op, args):
    (got,) = _data(op, args)
    _almost(interp, op, got, _const_value(op))
    return []


@impl("check.expect_close")
@_checked_forms
def _expect_close(interp, op, args):
    got, expected = args
    _check_close(interp, op, op.name, got, expected, _int_attr(op, "min_ulp_difference", 0),
                 _int_attr(op, "max_ulp_difference", CUSTOM_CALL_MAX_ULP))
    return []


def _truth(interp, op, value, want: bool) -> None:
    v = np.asarray(value)
    if bool(v.astype(bool)) != want:
        _fail(interp, op, op.name, f"got {_fmt(v)}, expected {'non-zero' if want else 'zero'}",
              (), v.item(), None)


@impl("check.expect_true")
@_checked_forms
def _expect_true(interp, op, args):
    _truth(interp, op, args[0], True)
    return []


@impl("check.expect_false")
@_checked_forms
def _expect_false(interp, op, args):
    _truth(interp, op, args[0], False)
    return []


@impl("check.expect_all_true")
@_checked_forms
def _expect_all_true(interp, op, args):
    (value,) = _data(op, args)
    value = np.asarray(value)
    _compare(interp, op, op.name, value, np.ones_like(value), value.astype(bool))
    return []


def _probes(interp) -> dict:
    probes = getattr(interp, "probes", None)
    if probes is None:
        probes = interp.probes = {}
    return probes


@impl("interpreter.probe")
def _probe(interp, op, args):
    """Returns its operand; records (type, value) under `probe_id`, one entry per execution:
    what `stablehlo-translate --interpret --probe-output-dir` serializes for later comparison."""
    probe = op.attr("probe_id")
    name = probe.value if isinstance(probe, StringAttr) else ""
    _probes(interp).setdefault(name, []).append((op.operand("operand").type, np.array(args[0], copy=True)))
    return [args[0]]


@impl("check.expect_serialized_eq")
@_checked_forms
def _expect_serialized_eq(interp, op, args):
    """Compares with the value `interpreter.probe` recorded under `probe_id` (its `iter`-th
    execution) in this run: the reference reads it back from the probe directory; here the
    recording never left memory. Types must match, then elements exactly (expect_eq)."""
    probe = op.attr("probe_id")
    name = probe.value if isinstance(probe, StringAttr) else "?"
    iteration = _int_attr(op, "iteration", 0)
    recorded = _probes(interp).get(name, [])
    if iteration >= len(recorded):
        _fail(interp, op, op.name, f"no value was recorded by probe '{name}'"
              + (f" at iteration {iteration}" if iteration else "") + " (no interpreter.probe ran with that id)")
        return []
    rtype, value = recorded[iteration]
    t = op.operand("expected").type  # StableHLO's name for the operand; its message calls it "actual"
    if rtype != t:
        _fail(interp, op, op.name, f"serialized types don't match: {t} (actual) vs {rtype} "
              f"(expected) for probe '{name}'")
        return []
    _check_eq(interp, op, op.name, args[0], value, bytewise=False)
    return []


# ---- stablehlo.custom_call ------------------------------------------------------------------
def call_target(op) -> str:
    t = op.attr("call_target_name")
    if isinstance(t, StringAttr):
        return t.value
    return str(getattr(t, "value", t)) if t is not None else ""


@impl("stablehlo.custom_call", "mhlo.custom_call")
def _custom_call(interp, op, args):
    target = call_target(op)
    semantics = semantics_of(interp).custom_calls.get(target)
    if semantics is None:
        raise InterpreterError(f"'{op.name}' with call target '@{target}' has no semantics in the interpreter")
    return semantics(interp, op, args)


def _cc_name(op) -> str:
    return f"{op.name} @{call_target(op)}"


def _two(op, args):
    if len(args) != 2:
        raise InterpreterError(f"'{_cc_name(op)}' takes 2 operands (actual, expected), got {len(args)}")
    return args


def _no_results(op) -> list:
    # JAX writes `-> ()`; older testdata returned a value nobody reads: give a true i1.
    return [np.array(True) for _ in op.results]


@custom_call("check.expect_close")
@_checked_forms
def _cc_expect_close(interp, op, args):
    got, expected = _two(op, args)
    _check_close(interp, op, _cc_name(op), got, expected, 0, CUSTOM_CALL_MAX_ULP)
    return _no_results(op)


@custom_call("check.expect_almost_eq")
@_checked_forms
def _cc_expect_almost_eq(interp, op, args):
    got, expected = _two(op, args)
    _check_almost_hlo(interp, op, _cc_name(op), got, expected, CUSTOM_CALL_ALMOST_EQ_TOLERANCE)
    return _no_results(op)


@custom_call("check.expect_eq")
@_checked_forms
def _cc_expect_eq(interp, op, args):
    got, expected = _two(op, args)
    _check_eq(interp, op, _cc_name(op), got, expected, bytewise=False)
    return _no_results(op)


@custom_call("check.eq")
@_checked_forms
def _cc_eq(interp, op, args):
    got, expected = _two(op, args)
    got, expected = np.asarray(got), np.asarray(expected)
    if expected.dtype.kind in "biu":
        held = _check_eq(interp, op, _cc_name(op), got, expected, bytewise=False)
    else:
        held = _check_almost_hlo(interp, op, _cc_name(op), got, expected, HLO_TOLERANCE)
    return [np.array(held) for _ in op.results]
