"""math-polynomial-approximation{gpu=true}: the math that GPU targets have no library or instruction
for (sin, cos, tan, atan, atan2, pow, cbrt, asin, acos, sinh, cosh, asinh, acosh, atanh, erfc; f64
exp, exp2, expm1, log, log2, log10, log1p, tanh, erf; ctpop, ctlz, isfinite) as plain arithmetic.
Each expansion is compiled natively (the same IEEE arithmetic a GPU runs, fma included) and held
to its ulp bound against numpy in float64 (f64: long double; erf and erfc: glibc's, and mpmath)
over random bit patterns (every exponent, subnormals, inf, NaN), dense sweeps, each op's hardest
range and the edge cases; no float math op without a GPU instruction is left; special values are exact;
the bit operations are exact at every width; the CPU pipeline keeps its libm calls; and kernels
using all of them pass ptxas (sm_80, sm_90), link for gfx942 and match the reference on `vulkan`."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mlirtext import api
from mlirtext.syntax.printer import print_module
from mlirtext.targets.native import load_module_functions
from mlirtext.transforms import erf_approximation, f64_approximation, hyperbolic_approximation, trig_approximation
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

from .gpu_status import need_tools

N = 1 << 18
GPU_PASS = "math-polynomial-approximation{gpu=true}"
DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16}
BOUNDS = {**trig_approximation.ULP_BOUNDS, **f64_approximation.ULP_BOUNDS, **hyperbolic_approximation.ULP_BOUNDS,
          **erf_approximation.ULP_BOUNDS}
UNARY = {"math.sin": np.sin, "math.cos": np.cos, "math.tan": np.tan, "math.atan": np.arctan,
         "math.cbrt": np.cbrt, "math.exp": np.exp, "math.expm1": np.expm1, "math.log": np.log,
         "math.log1p": np.log1p, "math.tanh": np.tanh, "math.exp2": np.exp2, "math.log2": np.log2,
         "math.log10": np.log10, "math.sinh": np.sinh, "math.cosh": np.cosh, "math.asinh": np.arcsinh,
         "math.acosh": np.arccosh, "math.atanh": np.arctanh, "math.asin": np.arcsin, "math.acos": np.arccos,
         "math.erf": np.vectorize(math.erf, otypes=[np.float64]),
         "math.erfc": np.vectorize(math.erfc, otypes=[np.float64])}
#: The reference's own error, in f64 ulp, where numpy has no long double form (glibc's erf and erfc,
#: measured against mpmath: `test_erf_within_ulp_bound_of_mpmath` holds those to the bound itself).
REFERENCE_ERROR = {"math.erf": 1, "math.erfc": 2}
BINARY = {"math.atan2": np.arctan2, "math.powf": np.power}
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-40, 1.1754942e-38, 1e-310, -1e-310, 0.5, -0.5,
         1.0, -1.0, 2.0, 1.5707964, 3.1415927, 4.712389, 6.2831855, 0.7853982, 1e-8, -1e-8, 100.0, 88.7,
         -87.3, 709.7, -745.0, 1e5, 1e10, 1e22, -1e22, 3.4e38, -3.4e38, 1.7e308, 8.98846567431158e307]


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Units in the last place between two arrays of one float dtype, exact for f64 too (NaN vs
    NaN: 0, NaN vs a number: inf)."""
    ints = {2: np.int16, 4: np.int32, 8: np.int64}[got.dtype.itemsize]
    bits = got.dtype.itemsize * 8
    magnitude = (1 << (bits - 1)) - 1
    a, b = got.view(ints).astype(np.int64), want.view(ints).astype(np.int64)
    a = np.where(a < 0, -(a & magnitude), a)
    b = np.where(b < 0, -(b & magnitude), b)
    same_sign = (a >= 0) == (b >= 0)
    d = np.where(same_sign, np.abs(np.where(same_sign, a - b, 0)).astype(np.float64),
                 np.abs(a.astype(np.float64)) + np.abs(b.astype(np.float64)))
    nan_a, nan_b = np.isnan(got), np.isnan(want)
    return np.where(nan_a & nan_b, 0, np.where(nan_a != nan_b, np.inf, d))


def kernel(op: str, ty: str, n: int, arity: int = 1, result: str = "") -> str:
    """A linalg.generic applying `op` to `arity` tensors of n `ty` elements (a `result` type when
    it differs from `ty`)."""
    result = result or ty
    names = ["%a", "%b"][:arity]
    args = ", ".join(f"%x{i}: tensor<{n}x{ty}>" for i in range(arity))
    ins = ", ".join(f"%x{i}" for i in range(arity))
    maps = ", ".join(["affine_map<(d0) -> (d0)>"] * (arity + 1))
    block = ", ".join(f"{v}: {ty}" for v in names)
    body = f"%r = {op} {', '.join(names)} : {ty}"
    return f"""func.func @main({args}) -> tensor<{n}x{result}> {{
  %init = tensor.empty() : tensor<{n}x{result}>
  %0 = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}}
      ins({ins} : {", ".join([f"tensor<{n}x{ty}>"] * arity)}) outs(%init : tensor<{n}x{result}>) {{
  ^bb0({block}, %o: {result}):
    {body}
    linalg.yield %r : {result}
  }} -> tensor<{n}x{result}>
  return %0 : tensor<{n}x{result}>
}}"""


def expanded(text: str):
    result = api.parse_and_verify(text, "kernel.mlir")
    assert result.ok, [d.format() for d in result.diagnostics]
    module = result.module
    assert not PassManager(parse_pipeline(GPU_PASS)).run(module)
    return module


def run_expanded(op: str, ty: str, *inputs, result: str = ""):
    module = expanded(kernel(op, ty, inputs[0].size, len(inputs), result))
    assert f"{op} " not in print_module(module), f"{op} on {ty} was not expanded"
    (got,) = load_module_functions(module)["main"](*inputs)
    return got


def sweep(dtype, seed: int = 0, n: int = N) -> np.ndarray:
    rng = np.random.default_rng(seed)
    k = n // 8
    if dtype == np.float64:
        random_bits = rng.integers(0, 2 ** 63, n // 2, dtype=np.uint64) * np.uint64(2) + \
            rng.integers(0, 2, n // 2, dtype=np.uint64)
        raw = random_bits.view(np.float64)
    else:
        raw = rng.integers(0, 2 ** 32, n // 2, dtype=np.uint64).astype(np.uint32).view(np.float32)
    parts = [raw, rng.uniform(-1, 1, k), rng.uniform(-12, 12, k), rng.uniform(-800, 800, k),
             rng.uniform(-1e6, 1e6, k // 2), np.resize(np.array(EDGES), n - n // 2 - 3 * k - k // 2)]
    with np.errstate(over="ignore"):
        return np.concatenate([np.asarray(p).astype(dtype) for p in parts])


def reference(fn, dtype, *inputs):
    """fn in float64, or for f64 in long double where that is wider (x86's 64-bit mantissa: glibc's
    f64 cbrt, for one, is up to 3 ulp off)."""
    wide = np.longdouble if dtype == np.float64 and np.finfo(np.longdouble).nmant > 52 else np.float64
    with np.errstate(all="ignore"):
        return np.asarray(fn(*(x.astype(wide) for x in inputs))).astype(dtype)


CASES = [(op, ty) for op in UNARY for ty in ("f32", "f64")
         if (op, 64 if ty == "f64" else 32) in BOUNDS]


def near_edges(op: str, n: int) -> np.ndarray:
    """Inputs where `op` is hardest (a domain's end, the range where a result leaves the normal
    floats, exact cases), which random bits and the sweeps rarely hit."""
    rng = np.random.default_rng(6)
    sign = rng.choice([-1.0, 1.0], n)
    below_one = 1 - 2.0 ** -rng.uniform(1, 54, n)                     # 1 - 2^-u: up to 1 - 2^-53
    return {"math.asin": sign * below_one, "math.acos": sign * below_one, "math.atanh": sign * below_one,
            "math.acosh": 1 + 2.0 ** -rng.uniform(0, 53, n),
            "math.sinh": sign * rng.uniform(700, 711, n), "math.cosh": sign * rng.uniform(700, 711, n),
            "math.exp2": np.concatenate([rng.uniform(-1080, 1030, n // 2), np.arange(-1080, 1030)[:n - n // 2]]),
            "math.log2": np.ldexp(rng.uniform(0.5, 2, n), rng.integers(-1074, 1024, n)),
            "math.log10": 10.0 ** rng.integers(-300, 300, n).astype(np.float64),
            "math.erf": rng.uniform(-7, 7, n), "math.erfc": rng.uniform(-6, 30, n)}.get(op, np.zeros(0))


@pytest.mark.parametrize("op, ty", CASES, ids=lambda v: v)
def test_unary_within_ulp_bound_of_numpy(op, ty):
    dtype = DTYPES[ty]
    with np.errstate(over="ignore"):
        x = np.concatenate([sweep(dtype, n=N - N // 8), near_edges(op, N // 8).astype(dtype)])
    got = run_expanded(op, ty, x)
    d = ulps(got, reference(UNARY[op], dtype, x))
    worst = int(np.argmax(d))
    bound = BOUNDS[(op, 64 if ty == "f64" else 32)] + (REFERENCE_ERROR.get(op, 0) if ty == "f64" else 0)
    assert d[worst] <= bound, f"{op}({x[worst]!r}) = {got[worst]!r}: {d[worst]} ulp > {bound}"


@pytest.mark.parametrize("op", ["math.erf", "math.erfc"])
def test_erf_within_ulp_bound_of_mpmath(op):
    """f64 erf and erfc against mpmath (glibc's, the reference above, is up to 2 ulp off itself)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 80
    fn = getattr(mpmath, op[5:])
    x = np.concatenate([sweep(np.float64, seed=8, n=1 << 11), near_edges(op, 1 << 12)])
    x = x[np.abs(x) < 40]                                     # (beyond: 0, +-1 or 2, in the test above)
    got = run_expanded(op, "f64", x)
    d = ulps(got, np.array([float(fn(mpmath.mpf(float(v)))) for v in x]))
    worst = int(np.argmax(d))
    assert d[worst] <= BOUNDS[(op, 64)], f"{op}({x[worst]!r}) = {got[worst]!r}: {d[worst]} ulp"


@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_atan2_within_ulp_bound_of_numpy(ty):
    dtype = DTYPES[ty]
    y, x = sweep(dtype, seed=1), sweep(dtype, seed=2)
    y[:64], x[:64] = np.repeat([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, np.nan, 2.0], 8), \
        np.tile([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, np.nan, 2.0], 8)   # every pair of edges
    got = run_expanded("math.atan2", ty, y, x)
    d = ulps(got, reference(np.arctan2, dtype, y, x))
    worst = int(np.argmax(d))
    bound = BOUNDS[("math.atan2", 64 if ty == "f64" else 32)]
    assert d[worst] <= bound, f"atan2({y[worst]!r}, {x[worst]!r}) = {got[worst]!r}: {d[worst]} ulp"


@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_pow_within_ulp_bound_of_numpy(ty):
    """Also where |y ln x| is large (up to 745), where a plain exp(y log x) loses |y ln x| ulp:
    log|x| is carried in two parts."""
    dtype = DTYPES[ty]
    rng = np.random.default_rng(3)
    x = sweep(dtype, seed=4)
    y = np.concatenate([rng.uniform(-30, 30, N // 4), np.round(rng.uniform(-40, 40, N // 4)),
                        rng.uniform(-2, 2, N // 2)]).astype(dtype)
    got = run_expanded("math.powf", ty, x, y)
    d = ulps(got, reference(np.power, dtype, x, y))
    worst = int(np.argmax(d))
    bound = BOUNDS[("math.powf", 64 if ty == "f64" else 32)]
    assert d[worst] <= bound, f"pow({x[worst]!r}, {y[worst]!r}) = {got[worst]!r}: {d[worst]} ulp"


@pytest.mark.parametrize("op", ["math.sin", "math.cos", "math.atan", "math.cbrt", "math.exp", "math.tanh",
                                "math.asin", "math.acosh", "math.atanh", "math.sinh", "math.erfc"])
def test_f16_is_computed_in_f32_and_rounded_once(op):
    x = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)   # every f16
    got = run_expanded(op, "f16", x)
    assert (ulps(got, reference(UNARY[op], np.float16, x)) <= 1).all()


@pytest.mark.parametrize("op, x, expected", [
    ("math.sin", [0.0, -0.0, np.inf, -np.inf], [0.0, -0.0, np.nan, np.nan]),
    ("math.cos", [0.0, -0.0, np.inf], [1.0, 1.0, np.nan]),
    ("math.tan", [0.0, -0.0, -np.inf], [0.0, -0.0, np.nan]),
    ("math.atan", [0.0, -0.0, np.inf, -np.inf], [0.0, -0.0, np.pi / 2, -np.pi / 2]),
    ("math.cbrt", [0.0, -0.0, np.inf, -np.inf, -8.0, 27.0], [0.0, -0.0, np.inf, -np.inf, -2.0, 3.0]),
    ("math.exp", [0.0, np.inf, -np.inf, 710.0, -746.0], [1.0, np.inf, 0.0, np.inf, 0.0]),
    ("math.expm1", [0.0, -0.0, np.inf, -np.inf, 710.0], [0.0, -0.0, np.inf, -1.0, np.inf]),
    ("math.log", [0.0, -0.0, -1.0, np.inf, 1.0], [-np.inf, -np.inf, np.nan, np.inf, 0.0]),
    ("math.log1p", [-1.0, -2.0, 0.0, -0.0, np.inf], [-np.inf, np.nan, 0.0, -0.0, np.inf]),
    ("math.tanh", [0.0, -0.0, np.inf, -np.inf, 30.0], [0.0, -0.0, 1.0, -1.0, 1.0]),
    ("math.exp2", [0.0, -0.0, np.inf, -np.inf, 10.0, -1074.0, 1024.0, -1076.0],
     [1.0, 1.0, np.inf, 0.0, 1024.0, 5e-324, np.inf, 0.0]),
    ("math.log2", [0.0, -0.0, -1.0, np.inf, 1.0, 8.0, 0.5, 5e-324], [-np.inf, -np.inf, np.nan, np.inf, 0.0, 3.0, -1.0,
                                                                      -1074.0]),
    ("math.log10", [0.0, -1.0, np.inf, 1.0, 1000.0, 1e22], [-np.inf, np.nan, np.inf, 0.0, 3.0, 22.0]),
    ("math.sinh", [0.0, -0.0, np.inf, -np.inf], [0.0, -0.0, np.inf, -np.inf]),
    ("math.cosh", [0.0, -0.0, np.inf, -np.inf], [1.0, 1.0, np.inf, np.inf]),
    ("math.asinh", [0.0, -0.0, np.inf, -np.inf], [0.0, -0.0, np.inf, -np.inf]),
    ("math.acosh", [1.0, np.inf, 0.5, -1.0, -np.inf], [0.0, np.inf, np.nan, np.nan, np.nan]),
    ("math.atanh", [0.0, -0.0, 1.0, -1.0, 2.0, -np.inf], [0.0, -0.0, np.inf, -np.inf, np.nan, np.nan]),
    ("math.asin", [0.0, -0.0, 1.0, -1.0, 2.0, np.inf], [0.0, -0.0, np.pi / 2, -np.pi / 2, np.nan, np.nan]),
    ("math.acos", [1.0, -1.0, 0.0, -2.0, -np.inf], [0.0, np.pi, np.pi / 2, np.nan, np.nan]),
    ("math.erf", [0.0, -0.0, np.inf, -np.inf, 6.0], [0.0, -0.0, 1.0, -1.0, 1.0]),
    ("math.erfc", [0.0, -0.0, np.inf, -np.inf, 30.0, -7.0], [1.0, 1.0, 0.0, 2.0, 0.0, 2.0]),
])
@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_special_values_exactly(op, x, expected, ty):
    if (op, 64 if ty == "f64" else 32) not in BOUNDS:
        pytest.skip(f"{op} on f32 is the CPU's expansion (test_targets_polynomial.py)")
    dtype = DTYPES[ty]
    got = run_expanded(op, ty, np.array(x + [np.nan], dtype))
    want = np.array(expected + [np.nan], dtype)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_pow_special_cases_are_c99s(ty):
    pairs = [(2.0, 0.0, 1.0), (np.nan, 0.0, 1.0), (1.0, np.nan, 1.0), (-1.0, np.inf, 1.0), (-2.0, 3.0, -8.0),
             (-2.0, 0.5, np.nan), (-0.0, 3.0, -0.0), (-0.0, -3.0, -np.inf), (0.0, -2.0, np.inf),
             (-np.inf, 3.0, -np.inf), (-np.inf, 0.5, np.inf), (-np.inf, -3.0, -0.0), (0.5, np.inf, 0.0),
             (2.0, -np.inf, 0.0), (np.inf, -1.0, 0.0), (2.0, np.nan, np.nan)]
    dtype = DTYPES[ty]
    x, y, want = (np.array(v, dtype) for v in zip(*pairs))
    got = run_expanded("math.powf", ty, x, y)
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


def test_two_over_pi_table_matches_mpmath():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 1300
    scaled = int(mpmath.floor(2 / mpmath.pi * mpmath.mpf(2) ** (32 * 36)))
    words = [(scaled >> (32 * (35 - j))) & 0xFFFFFFFF for j in range(36)]
    assert trig_approximation._TABLE == [0, 0] + words


def test_erfcx_taylor_coefficients_match_mpmath():
    """The exact-arithmetic Taylor coefficients of erfcx (erf_approximation.py) are mpmath's, rounded."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    for _, centre in erf_approximation._INTERVALS:
        ours = erf_approximation._erfcx_taylor(centre)[::-1]
        theirs = mpmath.taylor(lambda x: mpmath.exp(x * x) * mpmath.erfc(x), mpmath.mpf(centre), len(ours) - 1)
        assert list(ours) == [float(v) for v in theirs], centre


@pytest.mark.parametrize("width", [8, 16, 32, 64])
def test_ctpop_and_ctlz_are_exact_at_every_width(width):
    rng = np.random.default_rng(width)
    dtype = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[width]
    if width <= 16:
        x = np.arange(0, 1 << width, dtype=np.int64).astype(dtype)
    else:
        x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, 1 << 16, dtype=dtype, endpoint=True)
        shifts = rng.integers(0, width, x.size).astype(dtype)
        x = np.concatenate([x, np.right_shift(x, shifts), np.array([0, -1, 1, np.iinfo(dtype).min], dtype)])
    unsigned = [int(v) & ((1 << width) - 1) for v in x]
    ty = f"i{width}"
    popcount = run_expanded("math.ctpop", ty, x)
    leading = run_expanded("math.ctlz", ty, x)
    np.testing.assert_array_equal(popcount, np.array([bin(u).count("1") for u in unsigned], dtype))
    np.testing.assert_array_equal(leading, np.array([width - u.bit_length() for u in unsigned], dtype))


@pytest.mark.parametrize("ty", ["f16", "f32", "f64"])
def test_isfinite(ty):
    x = np.array(EDGES, DTYPES[ty])
    (got,) = load_module_functions(expanded(kernel("math.isfinite", ty, x.size, result="i1")))["main"](x)
    np.testing.assert_array_equal(got, np.isfinite(x))


def test_the_cpu_pipeline_keeps_its_library_calls():
    """Without gpu=true, sin and f64 exp stay (the CPU has libm); f32 exp is expanded as before."""
    for op, ty, kept in [("math.sin", "f32", True), ("math.exp", "f64", True), ("math.exp", "f32", False),
                         ("math.ctpop", "i32", True), ("math.erf", "f64", True), ("math.asin", "f32", True),
                         ("math.erfc", "f32", True)]:
        module = api.parse_and_verify(kernel(op, ty, 8)).module
        assert not PassManager(parse_pipeline("math-polynomial-approximation")).run(module)
        assert (f"{op} " in print_module(module)) == kept, (op, ty)


#: math ops every GPU target has an instruction for (at every float width): left as they are.
NATIVE = {"math.absf", "math.copysign", "math.fma", "math.sqrt", "math.rsqrt", "math.floor", "math.ceil",
          "math.round", "math.roundeven", "math.trunc"}


@pytest.mark.parametrize("ty", ["f16", "bf16", "f32", "f64"])
def test_every_float_math_op_is_expanded_for_gpus(ty):
    """No math op a GPU has no instruction for is left for a target to refuse (a libcall on cuda and
    rocm, a 16/32-bit-only GLSL.std.450 instruction or none on vulkan-spirv)."""
    import re

    from mlirtext.dialects.math import FLOAT_BINARY, FLOAT_UNARY
    left = []
    for name in FLOAT_UNARY + FLOAT_BINARY:
        op = "math." + name
        text = print_module(expanded(kernel(op, ty, 8, 2 if name in FLOAT_BINARY else 1)))
        left += sorted(set(re.findall(r"math\.\w+", text)) - NATIVE)
    assert not left, f"not expanded on {ty}: {left}"


# ---- on the GPU targets -------------------------------------------------------------------------
PROGRAM = """func.func @main(%x: tensor<64xf32>, %y: tensor<64xf32>, %d: tensor<64xf64>, %e: tensor<64xf64>,
                 %h: tensor<64xf16>, %i: tensor<64xi32>, %j: tensor<64xi64>)
    -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf16>, tensor<64xi32>, tensor<64xi32>, tensor<64xi64>, tensor<64xi64>, tensor<64xi1>) {
  %f0 = stablehlo.sine %x : tensor<64xf32>
  %f1 = stablehlo.cosine %y : tensor<64xf32>
  %f2 = stablehlo.tan %x : tensor<64xf32>
  %f3 = stablehlo.atan2 %x, %y : tensor<64xf32>
  %f4 = stablehlo.power %y, %x : tensor<64xf32>
  %f5 = stablehlo.cbrt %x : tensor<64xf32>
  %g0 = stablehlo.sine %d : tensor<64xf64>
  %g1 = stablehlo.cosine %e : tensor<64xf64>
  %g2 = stablehlo.exponential %d : tensor<64xf64>
  %g3 = stablehlo.log %e : tensor<64xf64>
  %g4 = stablehlo.tanh %d : tensor<64xf64>
  %g5 = stablehlo.exponential_minus_one %d : tensor<64xf64>
  %g6 = stablehlo.log_plus_one %e : tensor<64xf64>
  %g7 = stablehlo.atan2 %d, %e : tensor<64xf64>
  %g8 = stablehlo.power %e, %d : tensor<64xf64>
  %g9 = stablehlo.cbrt %d : tensor<64xf64>
  %g10 = stablehlo.tan %d : tensor<64xf64>
  %hs = stablehlo.sine %h : tensor<64xf16>
  %ip = stablehlo.popcnt %i : tensor<64xi32>
  %il = stablehlo.count_leading_zeros %i : tensor<64xi32>
  %jp = stablehlo.popcnt %j : tensor<64xi64>
  %jl = stablehlo.count_leading_zeros %j : tensor<64xi64>
  %fin = stablehlo.is_finite %d : (tensor<64xf64>) -> tensor<64xi1>
  return %f0, %f1, %f2, %f3, %f4, %f5, %g0, %g1, %g2, %g3, %g4, %g5, %g6, %g7, %g8, %g9, %g10, %hs, %ip, %il, %jp, %jl, %fin : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf64>, tensor<64xf16>, tensor<64xi32>, tensor<64xi32>, tensor<64xi64>, tensor<64xi64>, tensor<64xi1>
}"""
#: what each result of PROGRAM is (for the messages)
RESULTS = ['sine f32', 'cosine f32', 'tan f32', 'atan2 f32', 'power f32', 'cbrt f32', 'sine f64', 'cosine f64', 'exponential f64', 'log f64', 'tanh f64', 'exponential_minus_one f64', 'log_plus_one f64', 'atan2 f64', 'power f64', 'cbrt f64', 'tan f64', 'sine f16', 'popcnt i32', 'count_leading_zeros i32', 'popcnt i64', 'count_leading_zeros i64', 'is_finite f64']


def _program_inputs():
    rng = np.random.default_rng(7)
    x = rng.uniform(0.1, 30, 64).astype(np.float32)
    x[:4] = [1e6, 3.0e4, 0.5, 2.0]
    y = rng.uniform(0.1, 5, 64).astype(np.float32)
    d = rng.uniform(-3, 5, 64)
    d[:3] = [1e9, -0.0, 1e-300]
    e = rng.uniform(0.1, 40, 64)
    h = rng.uniform(-20, 20, 64).astype(np.float16)
    i = rng.integers(-2 ** 31, 2 ** 31, 64).astype(np.int32)
    j = rng.integers(-2 ** 62, 2 ** 62, 64).astype(np.int64) >> rng.integers(0, 62, 64)
    d[-1], j[-1], i[-1] = np.inf, 0, 0
    return [x, y, d, e, h, i, j]


#: The ops of the second program (the last to get GPU expansions), each in a kernel of its own.
SPECIAL = [(op, "f64") for op in ("math.erf", "math.erfc", "math.asin", "math.acos", "math.sinh", "math.cosh",
                                  "math.asinh", "math.acosh", "math.atanh", "math.exp2", "math.log2", "math.log10")] + \
    [("math.asin", "f32"), ("math.sinh", "f32"), ("math.erfc", "f32"), ("math.atanh", "f16"), ("math.acosh", "f16")]


def special_program(n: int = 64) -> str:
    """A function applying each of SPECIAL to an argument of its own, as linalg.generic ops."""
    args = ", ".join(f"%x{k}: tensor<{n}x{ty}>" for k, (_, ty) in enumerate(SPECIAL))
    results = ", ".join(f"tensor<{n}x{ty}>" for _, ty in SPECIAL)
    body = []
    for k, (op, ty) in enumerate(SPECIAL):
        body.append(f"""  %i{k} = tensor.empty() : tensor<{n}x{ty}>
  %r{k} = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}} ins(%x{k} : tensor<{n}x{ty}>) outs(%i{k} : tensor<{n}x{ty}>) {{
  ^bb0(%a: {ty}, %o: {ty}):
    %v = {op} %a : {ty}
    linalg.yield %v : {ty}
  }} -> tensor<{n}x{ty}>""")
    names = ", ".join(f"%r{k}" for k in range(len(SPECIAL)))
    return f"func.func @main({args}) -> ({results}) {{\n" + "\n".join(body) + f"\n  return {names} : {results}\n}}"


def _special_inputs(n: int = 64):
    """Each op's domain, its edges and special values."""
    rng = np.random.default_rng(9)
    domain = {"math.asin": (-1, 1), "math.acos": (-1, 1), "math.atanh": (-1, 1), "math.acosh": (1, 40),
              "math.erfc": (-3, 28), "math.exp2": (-1080, 1030), "math.log2": (0, 1e6), "math.log10": (0, 1e6),
              "math.sinh": (-720, 720), "math.cosh": (-720, 720)}
    inputs = []
    for op, ty in SPECIAL:
        x = rng.uniform(*domain.get(op, (-6, 6)), n)
        x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]
        inputs.append(x.astype(DTYPES[ty]))
    return inputs


@pytest.fixture(scope="module", params=["math", "special"])
def kernels(tmp_path_factory, request):
    from .gpu_status import program_kernels
    path = tmp_path_factory.mktemp("gpu_math") / f"{request.param}.mlir"
    path.write_text(PROGRAM if request.param == "math" else special_program())
    return program_kernels(path)


@pytest.mark.parametrize("target, arch, tools, validated", [
    ("cuda", "sm_80", ("ptxas",), ["ptxas sm_80", "ptxas sm_90"]),
    ("rocm", "gfx942", ("ld.lld", "llvm-readelf"), ["ld.lld", "llvm-readelf"]),
    ("rocm", "gfx90a", ("ld.lld", "llvm-readelf"), ["ld.lld", "llvm-readelf"])])
def test_kernels_validate(kernels, target, arch, tools, validated):
    """No libcall and nothing LLVM cannot select is left: ptxas takes the PTX, the AMDGPU objects link."""
    from mlirtext.targets.gpu import compile_gpu
    from mlirtext.targets.gpu.validate import validate_executable
    need_tools(*tools)
    module, names = kernels
    exe = compile_gpu(module, names, target, arch)
    validate_executable(exe)
    assert exe.validated == validated and set(exe.code) == set(names)


def test_vulkan_matches_the_reference_device():
    need_tools("spirv-as", "spirv-val")
    from mlirtext.compiler.module_writer import pack
    from mlirtext.vm.vm import LoadedModule

    from .gpu_status import compare
    from .test_gpu_vulkan import _vulkan_or_skip
    _vulkan_or_skip()
    from mlirtext.compiler.driver import compile_module
    data = pack(compile_module(api.parse_and_verify(PROGRAM).module, "vulkan-spirv", validate=True))
    gpu, ref = LoadedModule(data, "vulkan"), LoadedModule(data, "reference")
    args = _program_inputs()
    got, want = gpu.function("main")(*args), ref.function("main")(*args)
    for k, (g, w) in enumerate(zip(got, want)):
        tolerance = {"rtol": 1e-3, "atol": 1e-3} if w.dtype == np.float16 else {"rtol": 1e-5, "atol": 1e-6}
        assert not compare(g, w, **tolerance), f"{RESULTS[k]}: {compare(g, w, **tolerance)}"


@pytest.mark.parametrize("op, ty", [("math.sin", "f32"), ("math.cos", "f64"), ("math.atan2", "f32"),
                                    ("math.powf", "f64"), ("math.cbrt", "f64"), ("math.ctlz", "i64"),
                                    ("math.ctpop", "i16"), ("math.erfc", "f64"), ("math.asinh", "f64"),
                                    ("math.acos", "f32")])
def test_interpreter_and_native_agree_bit_for_bit(op, ty):
    """The expansions are plain IEEE and integer arithmetic (i64 wrapping included): interpreted
    (numpy) and compiled, the same bits; so the interpreter checks lowered programs that use them."""
    from mlirtext.interpreter import Interpreter
    n = 512
    arity = 2 if op in BINARY else 1
    if ty.startswith("i"):
        dtype = {"i16": np.int16, "i64": np.int64}[ty]
        inputs = [np.random.default_rng(0).integers(np.iinfo(dtype).min, np.iinfo(dtype).max, n, dtype=dtype)]
    else:
        inputs = [sweep(DTYPES[ty], seed=s, n=n) for s in range(arity)]
    module = expanded(kernel(op, ty, n, arity))
    (interpreted,) = Interpreter(module).call("main", inputs)
    (native,) = load_module_functions(module)["main"](*inputs)
    interpreted = np.asarray(interpreted)
    if ty.startswith("i"):
        np.testing.assert_array_equal(interpreted, native)
    else:
        assert (ulps(interpreted, native) == 0).all()


def test_vulkan_matches_the_reference_device_for_the_last_expansions():
    """SPECIAL on lavapipe (whose Fma rounds twice) against the reference device (numpy and glibc
    in f64): f64 within the bound, plus the reference's own error and one ulp for Fma; narrower
    types within one ulp."""
    need_tools("spirv-as", "spirv-val")
    from mlirtext.compiler.driver import compile_module
    from mlirtext.compiler.module_writer import pack
    from mlirtext.vm.vm import LoadedModule

    from .test_gpu_vulkan import _vulkan_or_skip
    _vulkan_or_skip()
    data = pack(compile_module(api.parse_and_verify(special_program()).module, "vulkan-spirv", validate=True))
    gpu, ref = LoadedModule(data, "vulkan"), LoadedModule(data, "reference")
    args = _special_inputs()
    got, want = gpu.function("main")(*args), ref.function("main")(*args)
    for (op, ty), x, g, w in zip(SPECIAL, args, got, want):
        if ty == "f64":
            bound = BOUNDS[(op, 64)] + REFERENCE_ERROR.get(op, 0) + 1
        else:   # one ulp plus the reference's own error there: numpy's f32 kernels vary by CPU
            with np.errstate(all="ignore"):  # (its AVX-512 asin is 2 ulp off at -0.60515594)
                rounded = UNARY[op](x.astype(np.float64)).astype(w.dtype)
            bound = 1 + ulps(w, rounded)
        d = ulps(g, w)
        worst = int(np.argmax(d - bound))
        assert (d <= bound).all(), f"{op} on {ty}: ({x[worst]!r}) = {g[worst]!r}, reference {w[worst]!r}"
