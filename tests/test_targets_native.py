"""Native code for the host CPU (`mlirtext.targets`): every example and benchmark program compiled
(native pipeline: polynomial approximation, O3, vectorised) and called with numpy arrays gives what
the interpreter gives (the corpus functions that reach llvm: tests/test_native_vm_figures.py); a few
agree with iree-run-module; bad objects and bad arguments are refused without a crash."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from mlirtext import api
from mlirtext.interpreter import Interpreter
from mlirtext.sweeps.native_suite import compare
from mlirtext.targets.llvm_cpu import CompileError, compile_llvm_ir, load_object
from mlirtext.targets.native import compile_module, load_module_functions
from mlirtext.targets.native_call import NativeCallError

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((ROOT / "examples").glob("*.mlir")) + \
    sorted((ROOT / "benchmarks" / "programs").glob("*.mlir"))
#: Programs without long reductions: each output element is the same scalar arithmetic natively and in
#: the interpreter, so they agree to the polynomial approximation's ulp bound.
ELEMENTWISE = {"elementwise", "softmax_stablehlo"}  # (8-wide rows: the same sums in both)


def parse(path: Path):
    result = api.parse_and_verify(path.read_text(), str(path))
    assert result.ok
    return result.module


def inputs_for(signature, seed=0):
    rng = np.random.default_rng(seed)
    from mlirtext.ir.arrays import dtype_of
    out = []
    for t in signature.inputs:
        dtype = dtype_of(t)
        shape = tuple(getattr(t, "shape", ()))
        if dtype.kind == "f":
            out.append(rng.standard_normal(shape).astype(dtype))
        else:
            out.append(rng.integers(-50, 50, shape).astype(dtype))
    return out


def close(got, want) -> str:
    """'' when `got` equals `want` within float rounding of a different summation order."""
    if got.dtype.kind != "f":
        return "" if np.array_equal(got, want) else "integers differ"
    scale = max(1.0, float(np.max(np.abs(want))))
    err = float(np.max(np.abs(got.astype(np.float64) - want)))
    return "" if err <= 2e-5 * scale else f"max |diff| {err:.3g} (scale {scale:.3g})"


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_native_equals_interpreter(path):
    module = parse(path)
    fns = load_module_functions(module)
    for name, fn in fns.items():
        args = inputs_for(fn.signature, seed=1)
        got = fn(*args)
        want = Interpreter(module).call(name, args)
        if path.stem in ELEMENTWISE:
            assert compare(got, [np.asarray(w) for w in want], ulps=8) == ""
        else:
            for g, w in zip(got, want, strict=True):
                assert close(g, np.asarray(w)) == ""


def test_elementwise_loop_vectorises_without_libm_calls():
    compiled = compile_module(parse(ROOT / "examples" / "softmax_stablehlo.mlir"))
    ir = compiled.native.llvm_ir
    assert "x float>" in ir          # a vector loop (<4 x float>, <8 x float>, ...)
    assert "@expf" not in ir and "@llvm.exp." not in ir
    assert compiled.native.functions == ["softmax"]


def test_wrong_arguments_name_the_argument():
    fns = load_module_functions(parse(ROOT / "examples" / "softmax_stablehlo.mlir"))
    fn = fns["softmax"]
    with pytest.raises(NativeCallError, match="argument 0 of @softmax: expected tensor<2x8xf32>, got shape 3x8"):
        fn(np.zeros((3, 8), np.float32))
    with pytest.raises(NativeCallError, match="takes 1 argument"):
        fn()


def test_malformed_objects_are_refused_not_crashing():
    obj = compile_llvm_ir("define i32 @twice(i32 %x) {\n  %y = shl i32 %x, 1\n  ret i32 %y\n}\n").object_code
    for bad in (b"", b"not an object" * 8, obj[: len(obj) // 2], obj[:70]):
        with pytest.raises(CompileError):
            load_object(bad)
    assert load_object(obj).function("twice", ctypes.c_int32, ctypes.c_int32)(21) == 42
    with pytest.raises(CompileError, match="does not verify"):
        compile_llvm_ir("define i32 @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\na:\n  %x = add i32 1, 2\n"
                        "  br label %b\nb:\n  ret i32 %x\n}\n")
    with pytest.raises(CompileError, match="does not parse"):
        compile_llvm_ir("define i32 @f( {")


@pytest.mark.oracle
@pytest.mark.parametrize("stem", ["mlp_stablehlo", "softmax_stablehlo"])
def test_native_matches_iree_run_module(stem, tmp_path):
    from .oracle import iree_compile, iree_run
    path = ROOT / "examples" / f"{stem}.mlir"
    module = parse(path)
    (name, fn), = load_module_functions(module).items()
    args = inputs_for(fn.signature, seed=3)
    (got,) = fn(*args)
    vmfb = iree_compile(path.read_text(), tmp_path)
    (want,) = iree_run(vmfb, name, args, 1, tmp_path)
    assert close(got, want.astype(np.float64)) == ""


MULTI = """func.func @main(%x: tensor<4xf32>, %n: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>, tensor<i1>) {
  %0 = stablehlo.exponential %x : tensor<4xf32>
  %1 = stablehlo.add %n, %n : tensor<4xi32>
  %c = stablehlo.constant dense<true> : tensor<i1>
  return %0, %1, %c : tensor<4xf32>, tensor<4xi32>, tensor<i1>
}
"""


def test_several_results_come_back_through_the_c_wrapper():
    """A struct of three pointers is returned in registers no C caller reads: the call goes through
    the `_mlirtext_results_` wrapper that stores it."""
    result = api.parse_and_verify(MULTI, "multi.mlir")
    fn = load_module_functions(result.module)["main"]
    x, n = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.int32)
    e, doubled, flag = fn(x, n)
    np.testing.assert_allclose(e, np.exp(x), rtol=3e-7)
    np.testing.assert_array_equal(doubled, 2 * n)
    assert flag.dtype == np.bool_ and flag.shape == () and bool(flag)


SHIFTS = """
func.func @main(%a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) {
  %0 = stablehlo.shift_left %a, %b : tensor<6xi32>
  %1 = stablehlo.shift_right_logical %a, %b : tensor<6xi32>
  %2 = stablehlo.shift_right_arithmetic %a, %b : tensor<6xi32>
  return %0, %1, %2 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>
}
"""


def test_shifts_by_the_width_or_more_are_defined_natively():
    """StableHLO gives 0 (or the sign, shifting right arithmetically) for amounts >= the width or
    negative; arith and LLVM shifts are poison there, so the lowering must guard them."""
    module = api.parse_and_verify(SHIFTS).module
    a = np.array([-8, 5, -8, 7, 1, -3], np.int32)
    b = np.array([1, 31, 32, -1, 40, 2], np.int32)
    got = load_module_functions(module)["main"](a, b)
    want = [[-16, -2147483648, 0, 0, 0, -12], [2147483644, 0, 0, 0, 0, 1073741823], [-4, 0, -1, 0, 0, -1]]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, np.array(w, np.int32))


NARROWING = """
func.func @main(%x: tensor<N_VALUESxf64>) -> (tensor<N_VALUESxf16>, tensor<N_VALUESxbf16>) {
  %0 = stablehlo.convert %x : (tensor<N_VALUESxf64>) -> tensor<N_VALUESxf16>
  %1 = stablehlo.convert %x : (tensor<N_VALUESxf64>) -> tensor<N_VALUESxbf16>
  return %0, %1 : tensor<N_VALUESxf16>, tensor<N_VALUESxbf16>
}
"""


def _doubles_near_ties(narrow) -> np.ndarray:
    """Every finite non-negative value of `narrow` (a 16-bit float type), the midpoints to the next
    one (ties), the doubles just either side of each midpoint (which round the other way through
    f32: they become the tie there), the negatives of all those, and specials."""
    values = np.arange(0, 1 << 15, dtype=np.uint16).view(narrow)
    values = values[np.isfinite(values)].astype(np.float64)
    mids = (values[:-1] + values[1:]) / 2
    top = values[-1] + (values[-1] - values[-2]) / 2  # the overflow threshold: a tie with inf
    x = np.concatenate([values, mids, [top], np.nextafter(mids, 0), np.nextafter(mids, np.inf),
                        np.nextafter([top], 0), np.nextafter([top], np.inf)])
    specials = [np.inf, np.nan, 1e300, 5e-324, 2.0 ** -1074 * 3, 1e-30]
    return np.concatenate([x, -x, specials, np.negative(specials)])


def test_double_to_f16_and_bf16_round_once_natively():
    """f64 -> f16 (and bf16) natively is one correct rounding, as numpy's (ml_dtypes') astype: LLVM
    calls __truncdfhf2/__truncdfbf2 for it, which the runtime support provides, on the bits
    (through f32 it would round twice). Halfway cases, subnormals, overflow, inf and NaN."""
    import ml_dtypes
    x = np.concatenate([_doubles_near_ties(np.float16), _doubles_near_ties(ml_dtypes.bfloat16)])
    module = api.parse_and_verify(NARROWING.replace("N_VALUES", str(len(x)))).module
    got_h, got_b = load_module_functions(module)["main"](x)
    with np.errstate(over="ignore"):
        want_h, want_b = x.astype(np.float16), x.astype(ml_dtypes.bfloat16)
        through_f32 = x.astype(np.float32).astype(np.float16)
    nan = np.isnan(x)
    for got, want in ((got_h, want_h), (got_b, want_b)):
        bits, want_bits = got.view(np.uint16), want.view(np.uint16)
        wrong = (bits != want_bits) & ~nan
        assert not wrong.any(), (got.dtype, x[wrong][:5], bits[wrong][:5], want_bits[wrong][:5])
        assert np.isnan(got[nan].astype(np.float32)).all() and ((bits ^ want_bits)[nan] >> 15 == 0).all()
    # the test can fail: rounding through f32 gets many of these wrong
    assert (through_f32.view(np.uint16) != want_h.view(np.uint16))[~nan].any()
