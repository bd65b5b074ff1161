"""The corpus gaps closed last in the dialects issue, one focused test each.

Canonical spellings (`!quant.uniform`, `#stablehlo.bounds`), self-typed dense literals,
`arith.scaling_extf/truncf`, `chlo.scan`, `stablehlo.constant {attrs} dense<...>`,
`%0:1` results used as `%0#0`, the transform ops of the Linalg CPU tests, and the
parse-time / attribute checks MLIR reports (unknown HLO types, quant scales, bounds,
`mhlo.result_alias`, `mhlo.parameter_replication`, compact reduce bodies, conv windows).
"""
from __future__ import annotations

import pytest

from mlirtext.api import parse_and_verify, to_text

from .oracle import generic_forms


def _ok(text: str) -> str:
    result = parse_and_verify(text, "<test>")
    assert result.ok, [d.format() for d in result.diagnostics]
    printed = to_text(result)
    again = parse_and_verify(printed, "<printed>")
    assert again.ok, (printed, [d.format() for d in again.diagnostics])
    assert to_text(again) == printed
    return printed


def _error(text: str) -> tuple[int, str]:
    result = parse_and_verify(text, "<test>")
    errors = [d for d in result.diagnostics if d.severity == "error"]
    assert errors, "expected an error"
    return errors[0].span.line_col[0], errors[0].message


QUANT = """func.func @f(%a: tensor<4x!quant.uniform<i16:f32, 1.0:0>>) -> tensor<4x!quant.uniform<i16:f32, 1.000000e+00>> {
  return %a : tensor<4x!quant.uniform<i16:f32, 1.000000e+00>>
}
func.func private @g(tensor<2x!quant.uniform<i8<-128:127>:f32:1, {0.1:1, 2.5e-3, 3.0:-4}>>, tensor<2x!quant.uniform<ui8:f32, 34.0:16>>, tensor<2x!quant.uniform<i8<-127:127>:f32, 0.333333333333333333>>)
"""
TEXTS = {
    "quant_canonical": QUANT,
    "bounds_canonical": """func.func @f(%a: tensor<?x?xf32, #stablehlo.type_extensions<bounds = [3, ?]>>) -> tensor<?x?xf32, #stablehlo.bounds<3, ?>> {
  return %a : tensor<?x?xf32, #stablehlo.bounds<3, ?>>
}
""",
    "self_typed_dense": """func.func @f() -> tensor<2x!tosa.mxint8> {
  %0 = "tosa.const"() {values = dense<tensor<2x!tosa.mxint8> : [127 : i8, -128 : i8]>} : () -> tensor<2x!tosa.mxint8>
  return %0 : tensor<2x!tosa.mxint8>
}
""",
    "scaling_casts": """func.func @f(%a: f4E2M1FN, %s: f8E8M0FNU, %b: f32, %v: vector<4xf32>, %vs: vector<4xf8E8M0FNU>) {
  %0 = arith.scaling_extf %a, %s fastmath<fast> : f4E2M1FN, f8E8M0FNU to f32
  %1 = arith.scaling_truncf %b, %s downward fastmath<nnan> : f32, f8E8M0FNU to f4E2M1FN
  %2 = arith.scaling_truncf %v, %vs : vector<4xf32>, vector<4xf8E8M0FNU> to vector<4xf4E2M1FN>
  return
}
""",
    "constant_with_attrs": """func.func @f() -> tensor<2xi64> {
  %0 = stablehlo.constant {attr = 1 : i32} dense<[-2, 4]> : tensor<2xi64>
  return %0 : tensor<2xi64>
}
""",
    "result_group_of_one": """func.func @f(%a: i32) -> i32 {
  %0:1 = "test.op"(%a) : (i32) -> (i32)
  return %0#0 : i32
}
""",
    "transform": """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%arg1: !transform.any_op {transform.readonly}) {
    %0 = transform.structured.match ops{["linalg.matmul"]} in %arg1 : (!transform.any_op) -> !transform.any_op
    %1, %loops:3 = transform.structured.tile_using_for %0 tile_sizes [1, 2, 3] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
""",
}


def test_quant_types_print_canonically():
    printed = _ok(QUANT)
    assert "!quant.uniform<i16:f32, 1.000000e+00>" in printed and "1.0:0" not in printed
    assert "!quant.uniform<i8:f32:1, {1.000000e-01:1,2.500000e-03,3.000000e+00:-4}>" in printed
    assert "!quant.uniform<ui8:f32, 3.400000e+01:16>" in printed
    assert "!quant.uniform<i8<-127:127>:f32, 0.33333333333333331>" in printed


def test_bounds_print_canonically():
    assert "#stablehlo.type_extensions" not in _ok(TEXTS["bounds_canonical"])


def test_scaling_casts_print_as_mlir():
    printed = _ok(TEXTS["scaling_casts"])
    assert "arith.scaling_extf %a, %s fastmath<fast> : f4E2M1FN, f8E8M0FNU to f32" in printed
    assert "arith.scaling_truncf %b, %s downward fastmath<nnan> : f32, f8E8M0FNU to f4E2M1FN" in printed


def test_scaling_cast_width_rule():
    line, message = _error("""func.func @f(%a: f32, %s: f8E8M0FNU) {
  %0 = arith.scaling_extf %a, %s : f32, f8E8M0FNU to f16
  return
}
""")
    assert line == 2 and "are cast incompatible" in message


def test_constant_with_discardable_attributes_prints_pretty():
    assert "stablehlo.constant {attr = 1 : i32} dense<[-2, 4]> : tensor<2xi64>" in _ok(TEXTS["constant_with_attrs"])


def test_chlo_scan_round_trip():
    text = """func.func @f(%x: tensor<4xi32>, %i: tensor<i32>) -> tensor<4xi32> {
  %0:2 = chlo.scan(%x) inits(%i) dimension=0 attributes {is_reverse = true} {
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %1, %1 : tensor<i32>, tensor<i32>
  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)
  return %0#0 : tensor<4xi32>
}
"""
    printed = _ok(text)
    assert "chlo.scan(%x) inits(%i) dimension=0 attributes {is_reverse = true} {" in printed
    generic = to_text(parse_and_verify(text), generic=True)
    assert "operandSegmentSizes = array<i32: 1, 1>" in generic


def test_chlo_scan_checks_the_carries():
    _, message = _error("""func.func @f(%x: tensor<4xi32>, %i: tensor<i32>) -> tensor<4xi32> {
  %0:2 = chlo.scan(%x) inits(%i) dimension=0 {
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    stablehlo.return %a, %a : tensor<i32>, tensor<i32>
  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i64>)
  return %0#0 : tensor<4xi32>
}
""")
    assert "carry results must have the types of the inits" in message


@pytest.mark.oracle
def test_against_iree_opt():
    texts = [TEXTS[k] for k in ("quant_canonical", "bounds_canonical", "self_typed_dense", "scaling_casts",
                                "constant_with_attrs", "result_group_of_one", "transform")]
    printed = [_ok(t) for t in texts]
    want = generic_forms(texts)
    assert want is not None, "iree-opt rejects a snippet"
    assert generic_forms(printed) == want


@pytest.mark.parametrize("text,line,message", [
    ("func.func private @f() -> !stablehlo.foobar\n", 1, "unknown stablehlo type: foobar"),
    ("func.func private @f() -> !mhlo.foobar\n", 1, "unknown mhlo type: foobar"),
    ("func.func private @f(tensor<2x!quant.uniform<i4:f16, 10.550400e+04>>)\n", 1,
     "scale 1.055040e+05 out of expressed type range"),
    ("func.func private @f(tensor<2x!quant.uniform<i8:f32:-1, {0.1:-30, 0.1:-30}>>)\n", 1,
     "illegal quantized dimension: -1"),
    ("func.func private @f(tensor<?x?xf32, #mhlo.type_extensions<bounds = [3]>>)\n", 1,
     "Bounds length is 1, expected to be equal to rank(2) of the tensor"),
    ("func.func private @f(tensor<3xf32, #stablehlo.bounds<3>>)\n", 1,
     "Static dimension 0 cannot have a bound"),
    ('module attributes {mhlo.result_alias = #mhlo.result_alias<result_index = [2, 3]>} {}\n', 1,
     'attribute "mhlo.result_alias" can only be used on function-like operations'),
    ("func.func @f(%a: tensor<2xf32> {mhlo.result_alias = #mhlo.result_alias<result_index = [0, 1]>}) -> "
     "(tuple<i32, tensor<2xi32>>) {\n  %0 = \"test.op\"() : () -> (tuple<i32, tensor<2xi32>>)\n"
     "  return %0 : tuple<i32, tensor<2xi32>>\n}\n", 1,
     "aliases do not have compatible types, 'tensor<2xf32>' vs. 'tensor<2xi32>'"),
    ("func.func @f(%a: tensor<f32> {mhlo.parameter_replication = [true, false]}) -> tensor<f32> {\n"
     "  return %a : tensor<f32>\n}\n", 1,
     "parameter_replication: arg 0 has 1 leaf_buffers, but parameter_replication expects 2"),
    ("func.func @f(%a: tensor<?x?xf32>, %i: tensor<f32>) -> tensor<?xf32> {\n"
     "  %0 = mhlo.reduce(%a init: %i) applies mhlo.divide across dimensions = [1] : "
     "(tensor<?x?xf32>, tensor<f32>) -> tensor<?xf32>\n  return %0 : tensor<?xf32>\n}\n", 2,
     "expected the inner-op to be a commutative binary-op from the mhlo dialect"),
    ("func.func @f(%a: tensor<2x2x3x4xf32>, %k: tensor<3x5x5x3xf32>) -> tensor<3x5x5x4xf32> {\n"
     "  %0 = mhlo.convolution(%a, %k)\n     dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],\n"
     "     window = {stride = [2, 1],\n       pad = [[0, 1, 2], [0, 1]]}\n"
     "     {batch_group_count = 1 : i64, feature_group_count = 1 : i64}\n"
     "  : (tensor<2x2x3x4xf32>, tensor<3x5x5x3xf32>) -> tensor<3x5x5x4xf32>\n"
     "  return %0 : tensor<3x5x5x4xf32>\n}\n", 5, "Expected array with 2 elements, got 3 elements instead"),
    ("func.func @f(%a: tensor<2x2x3x4xf32>, %k: tensor<3x5x5x3xf32>) -> tensor<3x5x5x4xf32> {\n"
     "  %0 = mhlo.convolution(%a, %k)\n     dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],\n"
     "     window = {stride = [2, 1]}\n     {\n       batch_group_count = 0 : i64,\n"
     "       feature_group_count = 1 : i64}\n"
     "  : (tensor<2x2x3x4xf32>, tensor<3x5x5x3xf32>) -> tensor<3x5x5x4xf32>\n"
     "  return %0 : tensor<3x5x5x4xf32>\n}\n", 5,
     "attribute 'batch_group_count' failed to satisfy constraint: 64-bit signless integer attribute whose "
     "value is positive"),
])
def test_errors_where_mlir_reports_them(text, line, message):
    got_line, got = _error(text)
    assert message in got
    assert got_line == line, got
