"""The reference interpreter against the real IREE runtime: the same stablehlo and tosa programs,
compiled with `iree-compile` (llvm-cpu) and run with `iree-run-module`, and run with
`mlirtext run`, on the same seeded random `.npy` inputs; the `.npy` outputs must agree
(bit-exact for integers, rtol 1e-5 for floats).

A program whose ops have no semantics in the interpreter yet is skipped, naming them.
TOSA is written in generic form: iree-compile 3.13's TOSA custom syntax differs from
upstream MLIR's (e.g. `rounding_mode<SINGLE_ROUND>`, keyword order), the generic form is
what both read.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.cli import main as mlirtext_main
from mlirtext.dialects.func import function_type
from mlirtext.interpreter import Interpreter
from mlirtext.ir.arrays import dtype_of, shape_of
from mlirtext.interpreter import builtin_semantics

pytestmark = pytest.mark.oracle

STABLEHLO = """\
func.func @elementwise_f32(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = stablehlo.add %a, %b : tensor<4x8xf32>
  %1 = stablehlo.multiply %0, %a : tensor<4x8xf32>
  %2 = stablehlo.maximum %1, %b : tensor<4x8xf32>
  %3 = stablehlo.abs %2 : tensor<4x8xf32>
  %4 = stablehlo.sqrt %3 : tensor<4x8xf32>
  %5 = stablehlo.subtract %4, %a : tensor<4x8xf32>
  %6 = stablehlo.divide %5, %3 : tensor<4x8xf32>
  %7 = stablehlo.negate %6 : tensor<4x8xf32>
  %8 = stablehlo.tanh %a : tensor<4x8xf32>
  %9 = stablehlo.exponential %b : tensor<4x8xf32>
  %10 = stablehlo.add %8, %9 : tensor<4x8xf32>
  return %7, %10 : tensor<4x8xf32>, tensor<4x8xf32>
}

func.func @elementwise_i32(%a: tensor<16xi32>, %b: tensor<16xi32>) -> (tensor<16xi32>, tensor<16xi32>, tensor<16xi32>) {
  %0 = stablehlo.multiply %a, %b : tensor<16xi32>
  %1 = stablehlo.add %0, %a : tensor<16xi32>
  %2 = stablehlo.xor %1, %b : tensor<16xi32>
  %3 = stablehlo.and %2, %a : tensor<16xi32>
  %c = stablehlo.compare GT, %a, %b, SIGNED : (tensor<16xi32>, tensor<16xi32>) -> tensor<16xi1>
  %4 = stablehlo.select %c, %a, %b : tensor<16xi1>, tensor<16xi32>
  %5 = stablehlo.minimum %3, %4 : tensor<16xi32>
  %6 = stablehlo.shift_right_arithmetic %1, %4 : tensor<16xi32>
  return %3, %5, %6 : tensor<16xi32>, tensor<16xi32>, tensor<16xi32>
}

func.func @dot_general(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

func.func @reduce(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>) -> (tensor<4xf32>, tensor<8xi32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %m = stablehlo.constant dense<-2147483648> : tensor<i32>
  %1 = stablehlo.reduce(%b init: %m) applies stablehlo.maximum across dimensions = [0] : (tensor<4x8xi32>, tensor<i32>) -> tensor<8xi32>
  return %0, %1 : tensor<4xf32>, tensor<8xi32>
}

func.func @convolution(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}

func.func @broadcast_reshape(%a: tensor<3xf32>, %b: tensor<2x3xf32>) -> (tensor<3x2xf32>, tensor<6xf32>) {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = stablehlo.add %0, %b : tensor<2x3xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = stablehlo.reshape %1 : (tensor<2x3xf32>) -> tensor<6xf32>
  return %2, %3 : tensor<3x2xf32>, tensor<6xf32>
}

func.func @softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x16xf32>
  %d = stablehlo.subtract %x, %mb : tensor<4x16xf32>
  %e = stablehlo.exponential %d : tensor<4x16xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<4xf32>) -> tensor<4x16xf32>
  %r = stablehlo.divide %e, %sb : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

func.func @int_div_rem(%a: tensor<32xi32>, %b: tensor<32xi32>) -> (tensor<32xi32>, tensor<32xi32>) {
  %zero = stablehlo.constant dense<0> : tensor<32xi32>
  %one = stablehlo.constant dense<1> : tensor<32xi32>
  %z = stablehlo.compare EQ, %b, %zero, SIGNED : (tensor<32xi32>, tensor<32xi32>) -> tensor<32xi1>
  %d = stablehlo.select %z, %one, %b : tensor<32xi1>, tensor<32xi32>
  %0 = stablehlo.divide %a, %d : tensor<32xi32>
  %1 = stablehlo.remainder %a, %d : tensor<32xi32>
  return %0, %1 : tensor<32xi32>, tensor<32xi32>
}

func.func @convert_round(%x: tensor<32xf32>) -> (tensor<32xi32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf16>) {
  %c = stablehlo.constant dense<7.5> : tensor<32xf32>
  %y = stablehlo.multiply %x, %c : tensor<32xf32>
  %0 = stablehlo.convert %y : (tensor<32xf32>) -> tensor<32xi32>
  %1 = stablehlo.round_nearest_even %y : tensor<32xf32>
  %2 = stablehlo.floor %y : tensor<32xf32>
  %3 = stablehlo.convert %y : (tensor<32xf32>) -> tensor<32xf16>
  return %0, %1, %2, %3 : tensor<32xi32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf16>
}

func.func @max_pool(%x: tensor<1x8x8x3xf32>) -> tensor<1x4x4x3xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %ninf) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1x8x8x3xf32>, tensor<f32>) -> tensor<1x4x4x3xf32>
  return %0 : tensor<1x4x4x3xf32>
}

func.func @data_movement(%a: tensor<4x6xf32>, %b: tensor<4x2xf32>) -> (tensor<4x8xf32>, tensor<2x3xf32>, tensor<6x9xf32>, tensor<4x6xi32>, tensor<4x6xf32>) {
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<4x6xf32>, tensor<4x2xf32>) -> tensor<4x8xf32>
  %1 = stablehlo.slice %a [1:4:2, 0:6:2] : (tensor<4x6xf32>) -> tensor<2x3xf32>
  %z = stablehlo.constant dense<0.5> : tensor<f32>
  %2 = stablehlo.pad %a, %z, low = [1, 2], high = [1, 1], interior = [0, 0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<6x9xf32>
  %3 = stablehlo.iota dim = 1 : tensor<4x6xi32>
  %4 = "stablehlo.sort"(%a) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0, %1, %2, %3, %4 : tensor<4x8xf32>, tensor<2x3xf32>, tensor<6x9xf32>, tensor<4x6xi32>, tensor<4x6xf32>
}

func.func @gather_rows(%a: tensor<5x4xf32>, %i: tensor<3xi32>) -> tensor<3x4xf32> {
  %five = stablehlo.constant dense<5> : tensor<3xi32>
  %r = stablehlo.remainder %i, %five : tensor<3xi32>
  %abs = stablehlo.abs %r : tensor<3xi32>
  %idx = stablehlo.reshape %abs : (tensor<3xi32>) -> tensor<3x1xi32>
  %0 = "stablehlo.gather"(%a, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
"""

TOSA = """\
func.func @tosa_matmul(%a: tensor<1x4x8xf32>, %b: tensor<1x8x3xf32>) -> tensor<1x4x3xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = "tosa.matmul"(%a, %b, %zp, %zp) : (tensor<1x4x8xf32>, tensor<1x8x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %0 : tensor<1x4x3xf32>
}

func.func @tosa_conv2d(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>) -> tensor<1x8x8x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = "tosa.conv2d"(%x, %w, %bias, %zp, %zp) <{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}> : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}

func.func @tosa_reduce_clamp(%x: tensor<4x8xf32>, %y: tensor<4x8xi32>) -> (tensor<4x1xf32>, tensor<4x8xf32>, tensor<1x8xi32>) {
  %0 = "tosa.reduce_sum"(%x) <{axis = 1 : i32}> : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %1 = "tosa.clamp"(%x) <{min_val = -0.5 : f32, max_val = 0.75 : f32}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "tosa.reduce_max"(%y) <{axis = 0 : i32}> : (tensor<4x8xi32>) -> tensor<1x8xi32>
  return %0, %1, %2 : tensor<4x1xf32>, tensor<4x8xf32>, tensor<1x8xi32>
}

func.func @tosa_rescale(%x: tensor<16xi32>) -> (tensor<16xi8>, tensor<16xi8>) {
  %mult = "tosa.const"() <{values = dense<1518500250> : tensor<1xi32>}> : () -> tensor<1xi32>
  %shift = "tosa.const"() <{values = dense<38> : tensor<1xi8>}> : () -> tensor<1xi8>
  %izp = "tosa.const"() <{values = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
  %ozp = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.rescale"(%x, %mult, %shift, %izp, %ozp) <{rounding_mode = #tosa.rounding_mode<SINGLE_ROUND>, scale32 = true, per_channel = false, input_unsigned = false, output_unsigned = false}> : (tensor<16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<16xi8>
  %1 = "tosa.rescale"(%x, %mult, %shift, %izp, %ozp) <{rounding_mode = #tosa.rounding_mode<DOUBLE_ROUND>, scale32 = true, per_channel = false, input_unsigned = false, output_unsigned = false}> : (tensor<16xi32>, tensor<1xi32>, tensor<1xi8>, tensor<1xi32>, tensor<1xi8>) -> tensor<16xi8>
  return %0, %1 : tensor<16xi8>, tensor<16xi8>
}

func.func @tosa_conv2d_i8(%x: tensor<1x6x6x4xi8>, %w: tensor<2x3x3x4xi8>, %bias: tensor<2xi32>) -> tensor<1x4x4x2xi32> {
  %izp = "tosa.const"() <{values = dense<7> : tensor<1xi8>}> : () -> tensor<1xi8>
  %wzp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.conv2d"(%x, %w, %bias, %izp, %wzp) <{acc_type = i32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}> : (tensor<1x6x6x4xi8>, tensor<2x3x3x4xi8>, tensor<2xi32>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x4x4x2xi32>
  return %0 : tensor<1x4x4x2xi32>
}

func.func @tosa_elementwise(%a: tensor<4x8xi32>, %b: tensor<4x8xi32>, %x: tensor<4x8xf32>) -> (tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %shift = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = "tosa.mul"(%a, %b, %shift) : (tensor<4x8xi32>, tensor<4x8xi32>, tensor<1xi8>) -> tensor<4x8xi32>
  %1 = "tosa.sub"(%0, %a) : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %2 = "tosa.maximum"(%1, %b) <{nan_mode = #tosa.nan_mode<PROPAGATE>}> : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  %3 = "tosa.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = "tosa.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1, %2, %3, %4 : tensor<4x8xi32>, tensor<4x8xi32>, tensor<4x8xf32>, tensor<4x8xf32>
}
"""

MODULES = {"stablehlo": STABLEHLO, "tosa": TOSA}

#: Integer input ranges per function (default -100..100): rescale wants a wide range.
INT_RANGES = {"tosa_rescale": (-(1 << 20), 1 << 20)}


def _tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


def _functions(text: str):
    module = parse_and_verify(text).module
    assert module is not None, "test program does not parse"
    return module, [op for op in module.regions[0].blocks[0].ops if op.name == "func.func"]


CASES = [(key, fn.attributes["sym_name"].value) for key, text in MODULES.items() for fn in _functions(text)[1]]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    compiler, runner = _tool("iree-compile"), _tool("iree-run-module")
    if compiler is None or runner is None:
        pytest.skip("iree-compile / iree-run-module not installed (the dev extra)")
    out = {}
    base = tmp_path_factory.mktemp("iree")
    for key, text in MODULES.items():
        src, vmfb = base / f"{key}.mlir", base / f"{key}.vmfb"
        src.write_text(text)
        proc = subprocess.run([compiler, "--iree-hal-target-device=local",
                               "--iree-hal-local-target-device-backends=llvm-cpu",
                               "--iree-llvmcpu-target-cpu=generic", str(src), "-o", str(vmfb)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"iree-compile rejected the {key} programs:\n{proc.stderr[-3000:]}"
        out[key] = (src, vmfb)
    return runner, out


def _inputs(fn, name: str, rng) -> list[np.ndarray]:
    values = []
    for t in function_type(fn).inputs:
        dtype, shape = dtype_of(t), shape_of(t)
        if dtype.kind == "f":
            values.append(rng.standard_normal(shape).astype(dtype))
        else:
            lo, hi = INT_RANGES.get(name, (-100, 100))
            values.append(rng.integers(lo, hi, size=shape).astype(dtype))
    return values


def _missing_semantics(module, fn) -> list[str]:
    Interpreter(module)  # imports every semantics module
    return sorted({op.name for op in fn.walk() if op is not fn and op.name not in builtin_semantics().impls})


@pytest.mark.parametrize("key,name", CASES, ids=[n for _, n in CASES])
def test_same_outputs_as_iree(key, name, compiled, tmp_path, capsys):
    runner, programs = compiled
    src, vmfb = programs[key]
    module, fns = _functions(MODULES[key])
    fn = next(f for f in fns if f.attributes["sym_name"].value == name)
    missing = _missing_semantics(module, fn)
    if missing:
        pytest.skip(f"no semantics yet for {', '.join(missing)}")
    rng = np.random.default_rng(sum(map(ord, name)))  # seeded per program, stable across runs
    args = _inputs(fn, name, rng)
    in_flags = []
    for i, a in enumerate(args):
        path = tmp_path / f"in{i}.npy"
        np.save(path, a)
        in_flags.append(f"--input=@{path}")
    n_results = len(function_type(fn).results)
    theirs = [tmp_path / f"iree{i}.npy" for i in range(n_results)]
    ours = [tmp_path / f"ours{i}.npy" for i in range(n_results)]

    proc = subprocess.run([runner, f"--module={vmfb}", f"--function={name}", *in_flags,
                           *[f"--output=@{p}" for p in theirs]], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"iree-run-module failed:\n{proc.stderr[-2000:]}"
    code = mlirtext_main(["run", str(src), f"--function={name}", *in_flags, *[f"--output=@{p}" for p in ours]])
    captured = capsys.readouterr()
    assert code == 0, f"mlirtext run failed:\n{captured.err[-2000:]}"

    for i, (t, o) in enumerate(zip(theirs, ours)):
        want, got = np.load(t), np.load(o)
        assert got.shape == want.shape, f"@{name} result {i}: shape {got.shape} vs IREE {want.shape}"
        assert got.dtype == want.dtype, f"@{name} result {i}: dtype {got.dtype} vs IREE {want.dtype}"
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"@{name} result {i}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"@{name} result {i}")
