"""Lowering of hlo ops on unsigned integers: the hlo step makes every type signless (the bits
stay), picks the unsigned arith ops where the meaning depends on it, and keeps the source
signature as `mlirtext.abi`, so callers pass and get back unsigned arrays at every level.
Each level keeps the meaning on seeded inputs (--check-semantics) and on edge values (all
ones, the sign bit), and iree-opt accepts it."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter
from mlirtext.ir.arrays import reinterpret_bits
from mlirtext.ir import types as T
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

from .lowering_status import LEVELS as STEPS
from .oracle import generic_forms
from .test_lowering import lower

LEVELS = ("tosa", "linalg", "loops", "llvm")

ARITHMETIC = """
func.func @main(%a: tensor<4xui32>, %b: tensor<4xui32>)
    -> (tensor<4xui32>, tensor<4xui32>, tensor<4xui32>, tensor<4xui32>, tensor<4xi1>, tensor<4xui32>) {
  %big = stablehlo.constant dense<[4294967295, 2147483648, 7, 0]> : tensor<4xui32>
  %s = stablehlo.add %a, %big : tensor<4xui32>
  %d = stablehlo.divide %s, %b : tensor<4xui32>
  %r = stablehlo.remainder %s, %b : tensor<4xui32>
  %m = stablehlo.maximum %s, %a : tensor<4xui32>
  %c = stablehlo.compare LT, %s, %a : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %sh = stablehlo.shift_right_logical %s, %b : tensor<4xui32>
  return %s, %d, %r, %m, %c, %sh : tensor<4xui32>, tensor<4xui32>, tensor<4xui32>, tensor<4xui32>, tensor<4xi1>, tensor<4xui32>
}
"""

CONVERSIONS = """
func.func @main(%a: tensor<4xui8>, %f: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xi32>, tensor<4xui16>, tensor<4xui8>, tensor<4xi1>, tensor<4xui8>) {
  %lo = stablehlo.constant dense<10> : tensor<ui8>
  %hi = stablehlo.constant dense<200> : tensor<ui8>
  %0 = stablehlo.convert %a : (tensor<4xui8>) -> tensor<4xf32>
  %1 = stablehlo.convert %a : (tensor<4xui8>) -> tensor<4xi32>
  %2 = stablehlo.convert %a : (tensor<4xui8>) -> tensor<4xui16>
  %3 = stablehlo.clamp %lo, %a, %hi : (tensor<ui8>, tensor<4xui8>, tensor<ui8>) -> tensor<4xui8>
  %4 = stablehlo.convert %a : (tensor<4xui8>) -> tensor<4xi1>
  %abs = stablehlo.abs %f : tensor<4xf32>
  %5 = stablehlo.convert %abs : (tensor<4xf32>) -> tensor<4xui8>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xi32>, tensor<4xui16>, tensor<4xui8>, tensor<4xi1>, tensor<4xui8>
}
"""

MOVEMENT = """
func.func @main(%a: tensor<2x3xui16>, %p: tensor<3x2xi1>) -> (tensor<3x2xui16>, tensor<6xui16>, tensor<3x2xui16>) {
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xui16>) -> tensor<3x2xui16>
  %r = stablehlo.reshape %a : (tensor<2x3xui16>) -> tensor<6xui16>
  %i = stablehlo.iota dim = 0 : tensor<3x2xui16>
  %s = stablehlo.select %p, %t, %i : tensor<3x2xi1>, tensor<3x2xui16>
  return %t, %r, %s : tensor<3x2xui16>, tensor<6xui16>, tensor<3x2xui16>
}
"""

#: Regions on unsigned 0-d tensors become scalar bodies with the unsigned ops (reduce: maxui, not
#: TOSA's signed reduce_max; sort: cmpi ult); while carries the signless tensors.
REGIONS = """
func.func @main(%a: tensor<2x4xui32>, %k: tensor<5xui8>) -> (tensor<2xui32>, tensor<5xui8>, tensor<2x4xui32>, tensor<ui32>) {
  %init = stablehlo.constant dense<0> : tensor<ui32>
  %m = stablehlo.reduce(%a init: %init) across dimensions = [1] : (tensor<2x4xui32>, tensor<ui32>) -> tensor<2xui32>
   reducer(%x: tensor<ui32>, %y: tensor<ui32>) {
    %mx = stablehlo.maximum %x, %y : tensor<ui32>
    stablehlo.return %mx : tensor<ui32>
  }
  %s = "stablehlo.sort"(%k) ({
    ^bb0(%x: tensor<ui8>, %y: tensor<ui8>):
      %c = stablehlo.compare LT, %x, %y : (tensor<ui8>, tensor<ui8>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<5xui8>) -> tensor<5xui8>
  %z = stablehlo.constant dense<4000000000> : tensor<ui32>
  %p = stablehlo.pad %a, %z, low = [0, 1], high = [0, -1], interior = [0, 0] : (tensor<2x4xui32>, tensor<ui32>) -> tensor<2x4xui32>
  %w:2 = stablehlo.while(%i = %init, %acc = %init) : tensor<ui32>, tensor<ui32>
  cond {
    %lim = stablehlo.constant dense<3> : tensor<ui32>
    %c = stablehlo.compare LT, %i, %lim : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<ui32>
    %n = stablehlo.add %i, %one : tensor<ui32>
    %d = stablehlo.add %acc, %z : tensor<ui32>
    stablehlo.return %n, %d : tensor<ui32>, tensor<ui32>
  }
  return %m, %s, %p, %w#1 : tensor<2xui32>, tensor<5xui8>, tensor<2x4xui32>, tensor<ui32>
}
"""

#: bitcast_convert between widths packs / unpacks the last dimension, little-endian.
BITCASTS = """
func.func @main(%a: tensor<64xi1>, %f: tensor<f64>, %u: tensor<2x3xf32>) -> (tensor<i64>, tensor<64xi1>, tensor<4xui16>, tensor<2x3x4xi8>, tensor<f64>) {
  %0 = stablehlo.bitcast_convert %a : (tensor<64xi1>) -> tensor<i64>
  %1 = stablehlo.bitcast_convert %f : (tensor<f64>) -> tensor<64xi1>
  %2 = stablehlo.bitcast_convert %f : (tensor<f64>) -> tensor<4xui16>
  %3 = stablehlo.bitcast_convert %u : (tensor<2x3xf32>) -> tensor<2x3x4xi8>
  %4 = stablehlo.bitcast_convert %2 : (tensor<4xui16>) -> tensor<f64>
  return %0, %1, %2, %3, %4 : tensor<i64>, tensor<64xi1>, tensor<4xui16>, tensor<2x3x4xi8>, tensor<f64>
}
"""

#: Integer ops with no TOSA form, either signedness: mulhi (64 bits from 32-bit halves), power by
#: squaring (a negative exponent: 0, or +-1 for bases +-1), negate wrapping (-(-128) is -128).
INTEGERS = """
func.func @main(%a: tensor<4xi64>, %b: tensor<4xi64>, %c: tensor<4xui64>, %d: tensor<4xi8>, %e: tensor<4xi32>)
    -> (tensor<4xi64>, tensor<4xui64>, tensor<4xi8>, tensor<4xi8>, tensor<4xi32>, tensor<4xui64>) {
  %0 = chlo.mulhi %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  %1 = chlo.mulhi %c, %c : tensor<4xui64>, tensor<4xui64> -> tensor<4xui64>
  %2 = chlo.mulhi %d, %d : tensor<4xi8>, tensor<4xi8> -> tensor<4xi8>
  %3 = stablehlo.negate %d : tensor<4xi8>
  %4 = stablehlo.power %e, %e : tensor<4xi32>
  %5 = stablehlo.power %c, %c : tensor<4xui64>
  return %0, %1, %2, %3, %4, %5 : tensor<4xi64>, tensor<4xui64>, tensor<4xi8>, tensor<4xi8>, tensor<4xi32>, tensor<4xui64>
}
"""

PROGRAMS = {"arithmetic": ARITHMETIC, "conversions": CONVERSIONS, "movement": MOVEMENT, "regions": REGIONS,
            "bitcasts": BITCASTS, "integers": INTEGERS}

#: Inputs at the edges of the unsigned ranges, where signed and unsigned readings differ.
EDGE_INPUTS = {
    "arithmetic": [np.array([1, 4294967295, 2147483648, 5], np.uint32), np.array([3, 0, 31, 40], np.uint32)],
    "conversions": [np.array([0, 255, 128, 9], np.uint8), np.array([255.9, -0.0, 3.5, 128.0], np.float32)],
    "movement": [np.array([[0, 65535, 32768], [1, 2, 3]], np.uint16), np.array([[1, 0], [0, 1], [1, 1]], bool)],
    "regions": [np.array([[1, 4000000000, 3, 4], [5, 6, 7, 8]], np.uint32), np.array([200, 1, 255, 3, 0], np.uint8)],
    "integers": [np.array([-1, 2**62, -2**63, 123456789012], np.int64), np.array([-1, 5, -2**63, -987654321098], np.int64),
                 np.array([2**64 - 1, 2**63, 3, 2**40 + 7], np.uint64), np.array([-128, 127, -1, 16], np.int8),
                 np.array([-1, 1, 3, -2], np.int32)],
    "bitcasts": [np.arange(64) % 3 == 0, np.array(-1.5e300), np.array([[1.0, -0.0, np.inf], [3.25, -7.0, 1e-40]], np.float32)],
}


def _own_signature(text: str) -> str:
    """The lowered function's own signature line, up to its attributes (the reflection)."""
    line = next(x for x in text.splitlines() if "@main(" in x)
    return line.split("attributes")[0]


def _run(text: str, args):
    result = parse_and_verify(text)
    assert result.ok, [d.message for d in result.diagnostics]
    return Interpreter(result.module).call("main", [a.copy() for a in args])


def _levels(text: str) -> list[str]:
    """The program printed at each level, each lowered from the one above (--check-semantics on
    seeded inputs across the whole pipeline: `lower` to llvm)."""
    lower(text, "llvm")
    texts = []
    for _, pipeline in STEPS[1:]:
        module = parse_and_verify(text).module
        assert not PassManager(parse_pipeline(pipeline)).run(module)
        text = print_module(module)
        texts.append(text)
    return texts


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_unsigned_programs_keep_meaning_at_every_level(name):
    want = _run(PROGRAMS[name], EDGE_INPUTS[name])
    texts = _levels(PROGRAMS[name])
    for level, text in zip(LEVELS, texts):
        assert "ui" not in _own_signature(text), level
        got = _run(text, EDGE_INPUTS[name])
        for w, g in zip(want, got, strict=True):
            assert g.dtype == w.dtype, (level, g.dtype, w.dtype)
            np.testing.assert_array_equal(g, w, err_msg=level)
    assert generic_forms(texts) is not None, "iree-opt rejected a lowered module"


def test_arithmetic_picks_the_unsigned_ops():
    text, _ = lower(ARITHMETIC, "tosa")
    for op in ("arith.divui", "arith.remui", "arith.maxui", "arith.cmpi ult", "arith.shrui"):
        assert op in text, op
    assert "ui32" not in _own_signature(text)                   # the signature is signless ...
    assert "mlirtext.abi = (tensor<4xui32>, tensor<4xui32>)" in text  # ... and the source one is kept
    assert "dense<[-1, -2147483648, 7, 0]> : tensor<4xi32>" in text   # the constant's bits
    assert "unrealized_conversion_cast" not in text


def test_regions_use_unsigned_scalar_ops():
    text, _ = lower(REGIONS, "tosa")
    assert "arith.maxui" in text and "arith.cmpi ult" in text and "tosa.reduce_max" not in text
    assert "scf.while" in text and "unrealized_conversion_cast" not in text


def test_edge_values_against_numpy():
    a, b = EDGE_INPUTS["arithmetic"]
    text, _ = lower(ARITHMETIC, "llvm")
    s, d, r, m, c, sh = _run(text, [a, b])
    expect_s = a + np.array([4294967295, 2147483648, 7, 0], np.uint32)
    np.testing.assert_array_equal(s, expect_s)
    safe = np.where(b == 0, 1, b)
    np.testing.assert_array_equal(d, np.where(b == 0, np.uint32(0xFFFFFFFF), expect_s // safe))
    np.testing.assert_array_equal(r, np.where(b == 0, expect_s, expect_s % safe))
    np.testing.assert_array_equal(m, np.maximum(expect_s, a))
    np.testing.assert_array_equal(c, expect_s < a)
    np.testing.assert_array_equal(sh, np.where(b >= 32, 0, expect_s >> np.minimum(b, 31)).astype(np.uint32))


def test_reinterpret_bits_round_trips_narrow_and_wide_widths():
    u4 = np.array([0, 7, 8, 15], np.uint8)
    s4 = reinterpret_bits(u4, T.IntegerType(4), np.dtype(np.int8))
    np.testing.assert_array_equal(s4, [0, 7, -8, -1])
    np.testing.assert_array_equal(reinterpret_bits(s4, T.IntegerType(4, "u"), np.dtype(np.uint8)), u4)
    u64 = np.array([0, 2**64 - 1, 2**63], np.uint64)
    s64 = reinterpret_bits(u64, T.IntegerType(64), np.dtype(np.int64))
    np.testing.assert_array_equal(s64, [0, -1, -2**63])
    np.testing.assert_array_equal(reinterpret_bits(s64, T.IntegerType(64, "u"), np.dtype(np.uint64)), u64)
