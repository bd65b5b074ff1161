"""math-polynomial-approximation: each expansion, compiled natively, stays within its stated ulp bound
of numpy (float64, rounded to f32) over a million inputs per op (random bit patterns: every exponent,
subnormals, infinities and NaNs; and dense sweeps of the interesting ranges), keeps the special values
right, evaluates identically in the interpreter, vectorises, and passes --check-semantics."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from mlirtext import api
from mlirtext.cli import main
from mlirtext.interpreter import Interpreter
from mlirtext.sweeps.native_suite import ulp_distance
from mlirtext.syntax.printer import print_module
from mlirtext.targets.native import compile_module, load_module_functions
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline
from mlirtext.transforms.polynomial_approximation import ULP_BOUNDS

special = pytest.importorskip("scipy.special")

ROOT = Path(__file__).resolve().parent.parent
N = 1 << 20
REFERENCE = {"math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log, "math.log2": np.log2,
             "math.log10": np.log10, "math.log1p": np.log1p, "math.tanh": np.tanh, "math.erf": special.erf,
             "math.expm1": np.expm1}
EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1e-40, -1e-40, 1.1754942e-38,
                  1.17549435e-38, 88.72, 88.73, 89.0, -87.3, -103.0, -103.9, -104.0, -150.0, 128.0, 1e30, -1e30,
                  3.4e38, -3.4e38, 0.625, -0.625, 0.75, -0.75, 0.5, -0.5, 1.0, -1.0, 3.92, -3.92, 10.0, 0.0004,
                  0.7071067, 0.7071068, 1.4142135, 2.0, 0.1, -0.9999999, 1e-8, -1e-8], np.float32)


def kernel_text(op: str, n: int) -> str:
    return f"""func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %0 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}} ins(%x : tensor<{n}xf32>) outs(%x : tensor<{n}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %r = {op} %a : f32
    linalg.yield %r : f32
  }} -> tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}"""


def sigmoid_text(n: int, exp_used_twice: bool = False) -> str:
    """1/(1 + exp(-x)) as tosa-to-linalg writes a sigmoid; with `exp_used_twice`, exp(-x) is also
    added to the result, so it is not the add's alone (the plain exp expansion must be kept)."""
    tail = "%s = arith.addf %r, %e : f32\n    linalg.yield %s : f32" if exp_used_twice else "linalg.yield %r : f32"
    return f"""func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %0 = linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}} ins(%x : tensor<{n}xf32>) outs(%x : tensor<{n}xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %m = arith.negf %a : f32
    %e = math.exp %m : f32
    %d = arith.addf %one, %e : f32
    %r = arith.divf %one, %d : f32
    {tail}
  }} -> tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}"""


def parse(text: str):
    result = api.parse_and_verify(text, "kernel.mlir")
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.module


def sweep(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    k = N // 8
    parts = [rng.integers(0, 2 ** 32, N // 2, dtype=np.uint64).astype(np.uint32).view(np.float32),
             rng.uniform(-1, 1, k), rng.uniform(-12, 12, k), rng.uniform(-110, 110, k),
             np.resize(EDGES, N - N // 2 - 3 * k)]
    return np.concatenate([p.astype(np.float32) for p in parts])


@pytest.mark.parametrize("op", sorted(REFERENCE))
def test_within_ulp_bound_of_numpy(op):
    fn = load_module_functions(parse(kernel_text(op, N)))["main"]
    x = sweep()
    (got,) = fn(x)
    with np.errstate(all="ignore"):
        want = REFERENCE[op](x.astype(np.float64)).astype(np.float32)
    d = ulp_distance(got, want)
    worst = int(np.argmax(d))
    assert d[worst] <= ULP_BOUNDS[op], f"{op}({x[worst]!r}) = {got[worst]!r}, numpy {want[worst]!r}"


def test_sigmoid_within_ulp_bound_where_normal():
    """The sigmoid's 1 + exp(-x) takes the short form (no subnormal handling: one scaling, no
    shift), and 1/(1 + e^{-x}) stays within its bound of float64 wherever the result is a normal
    float; where it is subnormal or 0 (x < -87.3) it is off by less than the smallest normal."""
    module = parse(sigmoid_text(N))
    assert not PassManager(parse_pipeline("math-polynomial-approximation")).run(module)
    assert "math.exp" not in print_module(module) and "arith.shrsi" not in print_module(module)
    fn = load_module_functions(parse(sigmoid_text(N)))["main"]
    x = sweep()
    (got,) = fn(x)
    with np.errstate(all="ignore"):
        want = (1 / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    normal = ~(np.abs(want) < np.float32(1.17549435e-38))      # NaN included: NaN must stay NaN
    d = ulp_distance(got[normal], want[normal])
    worst = int(np.argmax(d))
    assert d[worst] <= ULP_BOUNDS["sigmoid"], f"sigmoid({x[normal][worst]!r}) = {got[normal][worst]!r}"
    assert np.abs(got[~normal] - want[~normal]).max() < 1.17549435e-38


def test_sigmoid_special_values_and_an_exp_with_another_use():
    x = np.array([0.0, -0.0, np.inf, -np.inf, 20.0, -20.0, -88.8, 100.0, -100.0, np.nan], np.float32)
    expected = np.array([0.5, 0.5, 1, 0, 1, 1 / (1 + np.exp(20.0)), 0, 1, 0, np.nan], np.float32)
    (got,) = load_module_functions(parse(sigmoid_text(x.size)))["main"](x)
    np.testing.assert_array_equal(got, expected)
    # exp(-x) used twice: expanded as exp (subnormal e^{-x} kept), sigmoid + e^{-x} still right
    (got,) = load_module_functions(parse(sigmoid_text(x.size, exp_used_twice=True)))["main"](x)
    with np.errstate(all="ignore"):
        e = np.exp(-x.astype(np.float64))
        want = (1 / (1 + e) + e).astype(np.float32)
    assert (ulp_distance(got, want) <= 2).all(), (got, want)


@pytest.mark.parametrize("op, x, expected", [
    ("math.exp", [0.0, -0.0, np.inf, -np.inf, 1e-45, 89.0, -104.0], [1, 1, np.inf, 0, 1, np.inf, 0]),
    ("math.log", [0.0, -0.0, -1.0, np.inf, -np.inf, 1.0], [-np.inf, -np.inf, np.nan, np.inf, np.nan, 0]),
    ("math.tanh", [0.0, -0.0, np.inf, -np.inf, 20.0], [0.0, -0.0, 1, -1, 1]),
    ("math.erf", [0.0, -0.0, np.inf, -np.inf, 5.0], [0.0, -0.0, 1, -1, 1]),
    ("math.log1p", [-1.0, -2.0, 0.0, -0.0, np.inf], [-np.inf, np.nan, 0.0, -0.0, np.inf]),
    ("math.expm1", [0.0, -0.0, -np.inf, np.inf], [0.0, -0.0, -1, np.inf]),
])
def test_special_values_exactly(op, x, expected):
    x = np.array(x + [np.nan], np.float32)
    fn = load_module_functions(parse(kernel_text(op, x.size)))["main"]
    (got,) = fn(x)
    expected = np.array(expected + [np.nan], np.float32)
    np.testing.assert_array_equal(got, expected)
    assert (np.signbit(got) == np.signbit(expected))[~np.isnan(expected)].all()  # -0 stays -0


@pytest.mark.parametrize("op", ["math.exp", "math.tanh", "math.erf", "math.log", "sigmoid"])
def test_interpreter_and_native_agree_bit_for_bit(op):
    """The expansion is plain IEEE f32 arithmetic: interpreted (numpy) and compiled, the same bits."""
    n = 4096
    x = sweep(seed=5)[::N // n][:n]
    module = parse(sigmoid_text(n) if op == "sigmoid" else kernel_text(op, n))
    assert not PassManager(parse_pipeline("math-polynomial-approximation")).run(module)
    assert f"{'math.exp' if op == 'sigmoid' else op} " not in print_module(module)
    (interpreted,) = Interpreter(module).call("main", [x])
    (native,) = load_module_functions(module)["main"](x)
    assert (ulp_distance(np.asarray(interpreted), native) == 0).all()


def test_expanded_loops_vectorise():
    module = parse(kernel_text("math.tanh", 1024))
    ir = compile_module(module).native.llvm_ir
    assert re.search(r"<(4|8|16) x float>", ir)
    assert not re.search(r"@(tanhf|expf|llvm\.tanh|llvm\.exp)\b", ir)


@pytest.mark.parametrize("example", ["softmax_stablehlo.mlir"])
def test_check_semantics_passes_with_the_pass_in_the_pipeline(example, tmp_path, capsys):
    loops = tmp_path / "loops.mlir"
    assert main(["opt", str(ROOT / "examples" / example), "--lower-to=loops", "-o", str(loops)]) == 0
    capsys.readouterr()
    assert main(["opt", str(loops), "--math-polynomial-approximation", "--check-semantics", "--lower-to=llvm",
                 "-o", str(tmp_path / "llvm.mlir")]) == 0
    err = capsys.readouterr().err
    assert "check-semantics: math-polynomial-approximation: @softmax" in err and ": ok" in err
    assert "math.exp" not in (tmp_path / "llvm.mlir").read_text()
