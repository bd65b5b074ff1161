"""Lowerings at the tosa -> linalg, linalg -> loops and loops -> llvm steps: TOSA pooling and
convolutions through linalg's named ops, TOSA elementwise ops with rounding, linalg named
conv / pooling / contraction ops as loop nests (their indexing maps from the named-op table),
softmax / pack / unpack and arith on whole tensors decomposed before bufferization, and math
ops that become libm calls. Every level keeps the meaning (--check-semantics on seeded random
inputs) and iree-opt accepts it."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter

from .oracle import generic_forms
from .test_lowering import lower

TOSA_POOL_CONV = """
func.func @main(%x: tensor<1x4x3x2xf32>, %h: tensor<1x3x3x1xf16>, %q: tensor<1x4x4x1xi8>,
                %v: tensor<1x3x4x3x1xf32>, %w: tensor<2x2x2x2x1xf32>, %b: tensor<2xf32>,
                %tx: tensor<1x2x2x1xf32>, %tw: tensor<2x2x2x1xf32>, %tb: tensor<2xf32>)
    -> (tensor<1x2x2x2xf32>, tensor<1x1x1x1xf16>, tensor<1x2x2x1xi8>, tensor<1x2x2x2x2xf32>, tensor<1x5x4x2xf32>) {
  %zf = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %zh = "tosa.const"() {values = dense<0.0> : tensor<1xf16>} : () -> tensor<1xf16>
  %zi = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %zo = "tosa.const"() {values = dense<-2> : tensor<1xi8>} : () -> tensor<1xi8>
  %a = tosa.avg_pool2d %x, %zf, %zf {acc_type = f32, kernel = array<i64: 3, 2>, pad = array<i64: 1, 0, 0, 1>,
       stride = array<i64: 2, 2>} : (tensor<1x4x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x2xf32>
  %p = tosa.avg_pool2d %h, %zh, %zh {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>,
       stride = array<i64: 2, 2>} : (tensor<1x3x3x1xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x1x1x1xf16>
  %i = tosa.avg_pool2d %q, %zi, %zo {acc_type = i32, kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>,
       stride = array<i64: 2, 2>} : (tensor<1x4x4x1xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<1x2x2x1xi8>
  %c = tosa.conv3d %v, %w, %b, %zf, %zf {acc_type = f32, dilation = array<i64: 1, 2, 1>,
       pad = array<i64: 1, 0, 0, 0, 0, 1>, stride = array<i64: 2, 1, 2>}
       : (tensor<1x3x4x3x1xf32>, tensor<2x2x2x2x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>)
       -> tensor<1x2x2x2x2xf32>
  %t = tosa.transpose_conv2d %tx, %tw, %tb, %zf, %zf {acc_type = f32, out_pad = array<i64: 0, 1, -1, 0>,
       stride = array<i64: 2, 3>}
       : (tensor<1x2x2x1xf32>, tensor<2x2x2x1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x4x2xf32>
  return %a, %p, %i, %c, %t
       : tensor<1x2x2x2xf32>, tensor<1x1x1x1xf16>, tensor<1x2x2x1xi8>, tensor<1x2x2x2x2xf32>, tensor<1x5x4x2xf32>
}
"""

TOSA_ROUNDING = """
func.func @main(%i: tensor<4xi32>, %s: tensor<4xi32>, %a: tensor<4xi8>, %bf: tensor<5xbf16>)
    -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<5xbf16>) {
  %sh = "tosa.const"() {values = dense<3> : tensor<1xi8>} : () -> tensor<1xi8>
  %z = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %zb = "tosa.const"() {values = dense<0.0> : tensor<1xbf16>} : () -> tensor<1xbf16>
  %m = tosa.mul %i, %s, %sh : (tensor<4xi32>, tensor<4xi32>, tensor<1xi8>) -> tensor<4xi32>
  %w = tosa.mul %a, %a, %z : (tensor<4xi8>, tensor<4xi8>, tensor<1xi8>) -> tensor<4xi32>
  %r = tosa.arithmetic_right_shift %i, %s {round = 1 : i1} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %c = tosa.clz %i : (tensor<4xi32>) -> tensor<4xi32>
  %n = tosa.negate %bf, %zb, %zb : (tensor<5xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<5xbf16>
  return %m, %w, %r, %c, %n : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<5xbf16>
}
"""

LINALG_NAMED = """
func.func @main(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x3x3xf32>, %p: tensor<1x6x6x2xf32>,
                %m: tensor<3x5xf32>, %v: tensor<5xf32>, %d: tensor<1x6x6x2xf32>, %dw: tensor<3x3x2xf32>)
    -> (tensor<1x4x2x2xf32>, tensor<1x3x3x2xf32>, tensor<3xf32>, tensor<1x2x2x2xf32>) {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x6x6xf32>, tensor<4x2x3x3xf32>) outs(%f : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %e2 = tensor.empty() : tensor<1x3x3x2xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %mp = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%p, %win : tensor<1x6x6x2xf32>, tensor<2x2xf32>) outs(%f2 : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %f3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %mv = linalg.matvec ins(%m, %v : tensor<3x5xf32>, tensor<5xf32>) outs(%f3 : tensor<3xf32>) -> tensor<3xf32>
  %e4 = tensor.empty() : tensor<1x2x2x2xf32>
  %f4 = linalg.fill ins(%z : f32) outs(%e4 : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %dc = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%d, %dw : tensor<1x6x6x2xf32>, tensor<3x3x2xf32>) outs(%f4 : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %c, %mp, %mv, %dc : tensor<1x4x2x2xf32>, tensor<1x3x3x2xf32>, tensor<3xf32>, tensor<1x2x2x2xf32>
}
"""

DECOMPOSED = """
func.func @main(%x: tensor<2x5xf32>, %s: tensor<5x7xi32>, %h: tensor<3x4xf32>)
    -> (tensor<2x5xf32>, tensor<2x3x2x4xi32>, tensor<5x7xi32>, tensor<3x4xf16>, tensor<3x4xf32>) {
  %e = tensor.empty() : tensor<2x5xf32>
  %sm = linalg.softmax dimension(1) ins(%x : tensor<2x5xf32>) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %pad = arith.constant -1 : i32
  %pe = tensor.empty() : tensor<2x3x2x4xi32>
  %pk = linalg.pack %s padding_value(%pad : i32) outer_dims_perm = [1, 0] inner_dims_pos = [0, 1]
        inner_tiles = [2, 4] into %pe : tensor<5x7xi32> -> tensor<2x3x2x4xi32>
  %ue = tensor.empty() : tensor<5x7xi32>
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %dyn = tensor.empty(%c5, %c7) : tensor<?x?xi32>
  %st = tensor.cast %dyn : tensor<?x?xi32> to tensor<5x7xi32>
  %up = linalg.unpack %pk outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] inner_tiles = [2, 4]
        into %st : tensor<2x3x2x4xi32> -> tensor<5x7xi32>
  %t = arith.truncf %h : tensor<3x4xf32> to tensor<3x4xf16>
  %b = util.optimization_barrier %h : tensor<3x4xf32>
  %n = math.absf %b : tensor<3x4xf32>
  return %sm, %pk, %up, %t, %n : tensor<2x5xf32>, tensor<2x3x2x4xi32>, tensor<5x7xi32>, tensor<3x4xf16>, tensor<3x4xf32>
}
"""

LIBM = """
func.func @main(%x: tensor<6xf32>, %y: tensor<6xf64>, %i: tensor<4xi32>)
    -> (tensor<6xf32>, tensor<6xf32>, tensor<6xi1>, tensor<6xf64>, tensor<6xf32>, tensor<4xi32>) {
  %a = stablehlo.exponential_minus_one %x : tensor<6xf32>
  %b = stablehlo.log_plus_one %x : tensor<6xf32>
  %c = stablehlo.is_finite %x : (tensor<6xf32>) -> tensor<6xi1>
  %d = stablehlo.atan2 %y, %y : tensor<6xf64>
  %e = stablehlo.cbrt %x : tensor<6xf32>
  %f = stablehlo.count_leading_zeros %i : tensor<4xi32>
  return %a, %b, %c, %d, %e, %f
       : tensor<6xf32>, tensor<6xf32>, tensor<6xi1>, tensor<6xf64>, tensor<6xf32>, tensor<4xi32>
}
"""

NARROW_FLOATS = """
func.func @main(%a: tensor<6xf8E5M2FNUZ>, %b: tensor<6xf8E4M3FN>, %x: tensor<6xf32>)
    -> (tensor<6xf8E5M2FNUZ>, tensor<6xf8E4M3FN>, tensor<6xf8E5M2>, tensor<6xf32>, tensor<6xi8>, tensor<6xf4E2M1FN>) {
  %e = tensor.empty() : tensor<6xf8E5M2FNUZ>
  %s = linalg.add ins(%a, %a : tensor<6xf8E5M2FNUZ>, tensor<6xf8E5M2FNUZ>) outs(%e : tensor<6xf8E5M2FNUZ>)
       -> tensor<6xf8E5M2FNUZ>
  %e2 = tensor.empty() : tensor<6xf8E4M3FN>
  %n = linalg.negf ins(%b : tensor<6xf8E4M3FN>) outs(%e2 : tensor<6xf8E4M3FN>) -> tensor<6xf8E4M3FN>
  %t = arith.truncf %x : tensor<6xf32> to tensor<6xf8E5M2>
  %w = arith.extf %b : tensor<6xf8E4M3FN> to tensor<6xf32>
  %i = arith.bitcast %n : tensor<6xf8E4M3FN> to tensor<6xi8>
  %f = arith.truncf %x : tensor<6xf32> to tensor<6xf4E2M1FN>
  return %s, %n, %t, %w, %i, %f
       : tensor<6xf8E5M2FNUZ>, tensor<6xf8E4M3FN>, tensor<6xf8E5M2>, tensor<6xf32>, tensor<6xi8>, tensor<6xf4E2M1FN>
}
"""

# Named elementwise ops that current MLIR no longer reads (linalg.elementwise replaced them).
REMOVED_ELEMENTWISE = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %c: tensor<2x3xi1>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %s = linalg.add ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = linalg.negf ins(%s : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = linalg.max ins(%n, %a : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = linalg.select ins(%c, %m, %b : tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>)
       outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
"""

PROGRAMS = {"tosa_pool_conv": TOSA_POOL_CONV, "tosa_rounding": TOSA_ROUNDING, "linalg_named": LINALG_NAMED,
            "decomposed": DECOMPOSED, "libm": LIBM, "narrow_floats": NARROW_FLOATS,
            "removed_elementwise": REMOVED_ELEMENTWISE}
LEVELS = {"tosa_pool_conv": ("linalg", "loops", "llvm"), "tosa_rounding": ("linalg", "loops", "llvm"),
          "linalg_named": ("loops", "llvm"), "decomposed": ("loops", "llvm"),
          "libm": ("tosa", "linalg", "loops", "llvm"), "narrow_floats": ("loops", "llvm"),
          "removed_elementwise": ("loops", "llvm")}
GONE = {"tosa": "stablehlo.", "linalg": "tosa.", "loops": "linalg.", "llvm": "memref."}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_lowering_to_llvm_keeps_meaning_at_every_pass(name):
    text, report = lower(PROGRAMS[name], "llvm")  # every pass checked on the way down
    assert "memref." not in text and "linalg." not in text
    assert any("convert-linalg-to-loops" in line for line in report)


def _lowered(text: str, level: str) -> str:
    """`text` lowered to `level` (no semantics check: the oracle test only reads the text)."""
    from mlirtext.syntax.printer import print_module
    from mlirtext.transforms.conversions.levels import lowering_pipeline
    from mlirtext.transforms.pass_manager import PassManager
    from mlirtext.transforms.pipeline import parse_pipeline
    module = parse_and_verify(text).module
    assert not PassManager(parse_pipeline(lowering_pipeline(module, level))).run(module)
    return print_module(module)


@pytest.mark.oracle
def test_every_level_is_accepted_by_iree_opt():
    texts = [_lowered(PROGRAMS[name], level) for name in sorted(PROGRAMS) for level in LEVELS[name]]
    texts.append(_lowered(MICROSCALING, "llvm"))
    texts.append(_converted_to_linalg(REMOVED_ELEMENTWISE))
    assert generic_forms(texts) is not None, "iree-opt rejected a lowered module"


def _run(text, args):
    return Interpreter(parse_and_verify(text).module).call("main", [np.array(a) for a in args])


def _converted_to_linalg(text: str) -> str:
    """`text` (already at the linalg level) through the conversion into the linalg level."""
    from mlirtext.syntax.printer import print_module
    from mlirtext.transforms.pass_manager import PassManager
    from mlirtext.transforms.pipeline import parse_pipeline
    module = parse_and_verify(text).module
    assert not PassManager(parse_pipeline("convert-tosa-to-linalg")).run(module)
    return print_module(module)


def test_removed_elementwise_named_ops_become_generics_at_the_linalg_level():
    text = _converted_to_linalg(REMOVED_ELEMENTWISE)
    assert text.count("linalg.generic") == 4
    assert not any(f"linalg.{n} " in text for n in ("add", "negf", "max", "select"))
    a, b = np.float32([[1, -2, 3], [0.5, 4, -1]]), np.float32([[2, 2, -5], [1, -8, 0]])
    c = np.array([[True, False, True], [False, True, True]])
    want = np.where(c, np.maximum(-(a + b), a), b)
    np.testing.assert_array_equal(_run(text, [a, b, c])[0], want)


def test_tosa_pools_and_convolutions_become_linalg_named_ops():
    text, _ = lower(TOSA_POOL_CONV, "linalg")
    assert "linalg.pooling_nhwc_sum" in text and "linalg.conv_3d_ndhwc_dhwcf" in text


def test_rounding_integer_ops_give_the_spec_values():
    """MUL with shift 3 rounds half up; the rounding shift adds the last bit shifted out."""
    from mlirtext.ir.arrays import dtype_of
    from mlirtext.ir import types as T
    bf16 = dtype_of(T.RankedTensorType((5,), T.bf16))
    args = [np.array([5, -8, -1, 7], np.int32), np.array([3, 1, 3, 1], np.int32),
            np.array([100, -100, 3, 0], np.int8), np.array([0.0, -0.0, 1.5, np.inf, -2.0]).astype(bf16)]
    text, _ = lower(TOSA_ROUNDING, "llvm")
    got = _run(text, args)
    np.testing.assert_array_equal(got[0], [2, -1, 0, 1])    # (a * b + 4) >> 3
    np.testing.assert_array_equal(got[1], [10000, 10000, 9, 0])
    np.testing.assert_array_equal(got[2], [1, -4, 0, 4])    # -1 >> 3 rounds to 0; 7 >> 1 to 4
    np.testing.assert_array_equal(got[3], [29, 0, 0, 29])
    assert got[4].astype(np.float32).tolist() == [-0.0, 0.0, -1.5, -np.inf, 2.0]


def test_a_rounding_shift_by_zero_is_exact_in_native_code():
    """Shift 0 has no bit shifted out: its carry must not come from a shift by -1, which is poison
    in LLVM (with the amounts known, LLVM folds it to anything)."""
    from mlirtext.targets.native import load_module_functions
    text = """func.func @f() -> tensor<4xi32> {
  %a = "tosa.const"() {values = dense<[5, 8, -1, 7]> : tensor<4xi32>} : () -> tensor<4xi32>
  %s = "tosa.const"() {values = dense<[0, 1, 3, 1]> : tensor<4xi32>} : () -> tensor<4xi32>
  %r = tosa.arithmetic_right_shift %a, %s {round = 1 : i1} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}"""
    lowered, _ = lower(text, "llvm")
    f = load_module_functions(parse_and_verify(lowered, "lowered.mlir").module)["f"]
    np.testing.assert_array_equal(f()[0], [5, 4, 0, 4])


def test_pack_pads_and_unpack_restores_the_source():
    s = np.arange(35, dtype=np.int32).reshape(5, 7)
    args = [np.ones((2, 5), np.float32), s, np.ones((3, 4), np.float32)]
    text, _ = lower(DECOMPOSED, "llvm")
    got = _run(text, args)
    np.testing.assert_allclose(got[0], np.full((2, 5), 0.2), rtol=1e-6)
    packed = got[1]
    assert packed[0, 0].tolist() == [[0, 1, 2, 3], [7, 8, 9, 10]]
    assert packed[1, 2].tolist() == [[32, 33, 34, -1], [-1, -1, -1, -1]]  # padded past the source
    np.testing.assert_array_equal(got[2], s)


def test_named_ops_lower_to_loops_with_their_strides_and_dilations():
    text, _ = lower(LINALG_NAMED, "loops")
    assert "linalg." not in text and text.count("scf.for") >= 20


def test_narrow_floats_round_as_their_formats_do():
    """f8 values live in i8 at the llvm level and compute in f32: ties to even, overflow to inf
    (E5M2) or NaN (E4M3FN), no negative zero in FNUZ, saturation in f4E2M1FN."""
    from mlirtext.ir.arrays import dtype_of
    from mlirtext.ir import types as T
    fnuz, fn = (dtype_of(T.FloatType(n)) for n in ("f8E5M2FNUZ", "f8E4M3FN"))
    args = [np.array([0, 1, 2, 4, -3, 0.5]).astype(fnuz), np.array([0, 1, -2, 448, -0.0, 0.125]).astype(fn),
            np.array([2.25, 3.25, 1e9, -1e-9, np.nan, -7.0], np.float32)]
    text, _ = lower(NARROW_FLOATS, "llvm")
    assert "f8E" not in text.split("mlirtext.abi")[0].split("llvm.func @main")[1].split("\n")[0]
    want = _run(NARROW_FLOATS, args)
    got = _run(text, args)
    for w, g in zip(want, got, strict=True):  # (NaN equals NaN here)
        np.testing.assert_array_equal(np.asarray(g).astype(np.float32), np.asarray(w).astype(np.float32))
    assert np.asarray(got[2]).view(np.uint8).tolist()[:4] == [0x40, 0x42, 0x7C, 0x80]  # 2.0, 3.0, inf, -0.0


MICROSCALING = """
func.func @main(%x: tensor<8xf32>, %s: tensor<8xf8E8M0FNU>, %q: tensor<8xf4E2M1FN>)
    -> (tensor<8xf8E8M0FNU>, tensor<8xf4E2M1FN>, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.copy ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %t = arith.truncf %y : tensor<8xf32> to tensor<8xf8E8M0FNU>
  %st = arith.scaling_truncf %y, %s : tensor<8xf32>, tensor<8xf8E8M0FNU> to tensor<8xf4E2M1FN>
  %se = arith.scaling_extf %q, %s : tensor<8xf4E2M1FN>, tensor<8xf8E8M0FNU> to tensor<8xf32>
  return %t, %st, %se : tensor<8xf8E8M0FNU>, tensor<8xf4E2M1FN>, tensor<8xf32>
}
"""


def test_microscaling_casts_at_the_llvm_level():
    """f8E8M0FNU (powers of two; NaN for zero, negatives and overflow) as the scale of f4 values."""
    from mlirtext.ir.arrays import dtype_of
    from mlirtext.ir import types as T
    e8, f4 = (dtype_of(T.FloatType(n)) for n in ("f8E8M0FNU", "f4E2M1FN"))
    args = [np.array([1.0, 1.5, 3.0, 0.0, -1.0, np.inf, np.nan, 0.75], np.float32),
            np.array([1, 0.5, 2, 4, 8, 1, 1, 0.25], np.float32).astype(e8),
            np.array([1, -2, 3, 0.5, 6, -6, 0, 1.5], np.float32).astype(f4)]
    text = _lowered(MICROSCALING, "llvm")
    for w, g in zip(_run(MICROSCALING, args), _run(text, args), strict=True):
        np.testing.assert_array_equal(np.asarray(g).astype(np.float32), np.asarray(w).astype(np.float32))
