"""The custom syntax of the HLO family (stablehlo, mhlo, chlo).

Each snippet parses and verifies; our print is a fixed point. Against iree-opt
(it knows stablehlo and chlo): the generic form of our print equals the generic
form of the original. mhlo (not in iree-opt) prints as mlir-hlo does (stablehlo's forms).
"""
from __future__ import annotations

import pytest

from mlirtext.api import parse_and_verify, to_text

from .oracle import generic_forms


def _fn(args: str, results: str, body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip("\n").split("\n"))
    return f"func.func @f({args}) -> {results} {{\n{lines}\n}}\n"


T4 = "tensor<4xf32>"
STABLEHLO = {
    "elementwise": _fn(f"%a: {T4}, %b: {T4}", T4, f"""
%0 = stablehlo.add %a, %b : {T4}
%1 = stablehlo.abs %0 : {T4}
%2 = stablehlo.exponential %1 {{result_accuracy = #stablehlo.result_accuracy<ulps = 10, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}} : {T4}
%3 = stablehlo.clamp %a, %2, %b : {T4}
%4 = stablehlo.convert %3 : ({T4}) -> tensor<4xi32>
%5 = stablehlo.convert %4 : (tensor<4xi32>) -> {T4}
return %5 : {T4}"""),
    "constant_compare_select": _fn(f"%a: {T4}", T4, f"""
%c = stablehlo.constant dense<1.000000e+00> : {T4}
%p = stablehlo.compare GT, %a, %c, FLOAT : ({T4}, {T4}) -> tensor<4xi1>
%q = stablehlo.compare EQ, %a, %c : ({T4}, {T4}) -> tensor<4xi1>
%s = stablehlo.select %p, %a, %c : tensor<4xi1>, {T4}
return %s : {T4}"""),
    "shape_ops": _fn("%a: tensor<2x3xf32>", "tensor<3x2xf32>", """
%0 = stablehlo.broadcast_in_dim %a, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
%1 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<3x2xf32>
%2 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
%3 = stablehlo.slice %a [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>
%4 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
%5 = stablehlo.iota dim = 0 : tensor<4xi32>
%6 = stablehlo.reverse %a, dims = [1] : tensor<2x3xf32>
%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
%7 = stablehlo.pad %a, %cst, low = [0, 1], high = [1, 0], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
%8 = stablehlo.reduce_precision %a, format = e5m10 : tensor<2x3xf32>
return %2 : tensor<3x2xf32>"""),
    "dot_conv": _fn("%a: tensor<8x8x16xf32>, %b: tensor<8x16x8xf32>, %x: tensor<1x4x4x2xf32>, %k: tensor<3x2x2x1xf32>",
                    "tensor<8x8x8xf32>", """
%0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<8x8x16xf32>, tensor<8x16x8xf32>) -> tensor<8x8x8xf32>
%1 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x2x2x1xf32>) -> tensor<1x2x3x1xf32>
return %0 : tensor<8x8x8xf32>"""),
    "reduce": _fn("%a: tensor<2x3xf32>, %i: tensor<f32>", "tensor<2xf32>", """
%0 = stablehlo.reduce(%a init: %i) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
%1 = stablehlo.reduce(%a init: %i) across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
 reducer(%x: tensor<f32>, %y: tensor<f32>) {
  %m = stablehlo.divide %x, %y : tensor<f32>
  stablehlo.return %m : tensor<f32>
}
%2 = stablehlo.add %0, %1 : tensor<2xf32>
return %2 : tensor<2xf32>"""),
    "while_tuple_call": _fn("%a: tensor<i32>", "tensor<i32>", """
%0 = stablehlo.while(%it = %a) : tensor<i32>
cond {
  %c = stablehlo.constant dense<10> : tensor<i32>
  %p = stablehlo.compare LT, %it, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.return %p : tensor<i1>
} do {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.add %it, %one : tensor<i32>
  stablehlo.return %n : tensor<i32>
}
%t = stablehlo.tuple %0, %a : tuple<tensor<i32>, tensor<i32>>
%g = stablehlo.get_tuple_element %t[0] : (tuple<tensor<i32>, tensor<i32>>) -> tensor<i32>
%cc = stablehlo.custom_call @foo(%g) {has_side_effect = true} : (tensor<i32>) -> tensor<i32>
%tok = stablehlo.create_token : !stablehlo.token
return %cc : tensor<i32>"""),
}
CHLO = {
    "chlo": _fn("%a: tensor<4xf32>, %b: tensor<3x4xf32>", "tensor<3x4xf32>", """
%0 = chlo.erf %a : tensor<4xf32> -> tensor<4xf32>
%1 = chlo.next_after %0, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
%2 = chlo.broadcast_add %1, %b {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
%v, %i = chlo.top_k(%a, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)
return %2 : tensor<3x4xf32>"""),
}
MHLO = {
    "mhlo": _fn("%a: tensor<2x3xf32>, %i: tensor<f32>", "tensor<2xf32>", """
%0 = mhlo.add %a, %a : tensor<2x3xf32>
%1 = mhlo.compare  GT, %0, %a,  FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
%2 = mhlo.reduce(%0 init: %i) applies mhlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
%3:2 = mhlo.topk(%a, k=2, largest=true) : tensor<2x3xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
return %2 : tensor<2xf32>"""),
}


def _roundtrip(text: str) -> str:
    result = parse_and_verify(text, "<test>")
    assert result.ok, [d.format() for d in result.diagnostics]
    printed = to_text(result)
    again = parse_and_verify(printed, "<printed>")
    assert again.ok, (printed, [d.format() for d in again.diagnostics])
    assert to_text(again) == printed
    return printed


@pytest.mark.parametrize("name", sorted({**STABLEHLO, **CHLO, **MHLO}))
def test_round_trip_fixed_point(name):
    _roundtrip({**STABLEHLO, **CHLO, **MHLO}[name])


def test_custom_forms_print_custom():
    printed = _roundtrip(STABLEHLO["dot_conv"]) + _roundtrip(STABLEHLO["reduce"])
    assert "batching_dims = [0] x [0], contracting_dims = [2] x [1]" in printed
    assert "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" in printed
    assert "applies stablehlo.add across dimensions = [1]" in printed
    assert "reducer(%x: tensor<f32>, %y: tensor<f32>)" in printed


def test_attributes_in_generic_form():
    result = parse_and_verify(STABLEHLO["dot_conv"] + STABLEHLO["constant_compare_select"], "<test>")
    generic = to_text(result, generic=True)
    assert "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], " \
           "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>" in generic
    assert "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>" in generic
    assert "comparison_direction = #stablehlo<comparison_direction GT>" in generic
    assert "compare_type = #stablehlo<comparison_type FLOAT>" in generic


def test_mhlo_prints_pretty_as_mlir_hlo():
    printed = _roundtrip(MHLO["mhlo"])
    assert "mhlo.compare GT, %0, %a, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>" in printed
    assert "mhlo.reduce(%0 init: %i) applies mhlo.add across dimensions = [1]" in printed
    assert "mhlo.topk(%a, k = 2, largest = true) : tensor<2x3xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)" in printed


def test_bad_custom_syntax_is_reported():
    bad = _fn("%a: tensor<4xf32>", "tensor<4xf32>", """
%0 = stablehlo.broadcast_in_dim %a, sizes = [0] : (tensor<4xf32>) -> tensor<4xf32>
return %0 : tensor<4xf32>""")
    result = parse_and_verify(bad, "<test>")
    assert not result.ok
    [d] = result.diagnostics  # the declared format's keyword, at the word written instead
    assert d.message == "expected 'dims', found 'sizes'" and d.span.text == "sizes"
    bad = bad.replace("broadcast_in_dim", "dynamic_broadcast_in_dim").replace("%a, sizes", "%a, %a, sizes")
    [d] = parse_and_verify(bad, "<test>").diagnostics
    assert d.message == "expected 'dims', found 'sizes'" and d.span.text == "sizes"


def test_keyword_values_are_not_strings():
    """As MLIR's parseKeyword: `format = "e2m2"` is no keyword (mhlo/invalid.mlir)."""
    bad = _fn("%a: tensor<3x4xf32>", "tensor<3x4xf32>", """
%0 = mhlo.reduce_precision %a, format = "e2m2" : tensor<3x4xf32>
return %0 : tensor<3x4xf32>""")
    result = parse_and_verify(bad, "<test>")
    [d] = result.diagnostics
    assert d.message == "custom op 'mhlo.reduce_precision' expected valid keyword"
    assert d.span.text == '"e2m2"'


@pytest.mark.oracle
def test_against_iree_opt():
    texts = list(STABLEHLO.values()) + list(CHLO.values())
    printed = [_roundtrip(t) for t in texts]
    generic_ours = [to_text(parse_and_verify(t, "<t>"), generic=True) for t in texts]
    want = generic_forms(texts)
    assert want is not None, "iree-opt rejects a snippet"
    got = generic_forms(printed)
    assert got is not None, "iree-opt rejects our custom print"
    assert got == want
    got_generic = generic_forms(generic_ours)
    assert got_generic is not None, "iree-opt rejects our generic print"
    assert got_generic == want
