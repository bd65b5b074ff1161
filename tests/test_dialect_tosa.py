"""tosa: custom syntax (newer keyword form and older attribute dictionaries), printing, verification."""
from __future__ import annotations

import pytest

from mlirtext.api import parse_and_verify, to_text

from .oracle import generic_forms


def _ok(text: str) -> str:
    result = parse_and_verify(text, "t.mlir")
    assert result.ok, [d.format() for d in result.diagnostics]
    return to_text(result)


def _error(text: str) -> str:
    result = parse_and_verify(text, "t.mlir")
    assert not result.ok, "expected an error"
    return result.diagnostics[0].message


def _func(args: str, body: str, results: str = "") -> str:
    ret = f" -> {results}" if results else ""
    return f"func.func @f({args}){ret} {{\n{body}\n}}\n"


# Representative ops of each family, in the form iree-opt 3.13 prints.
NEW_FORM = [
    # elementwise unary / binary / comparison / ternary
    _func("%a: tensor<13x21x3xf32>", "  %0 = tosa.abs %a : (tensor<13x21x3xf32>) -> tensor<13x21x3xf32>\n"
          "  return", ""),
    _func("%a: tensor<13x21x1xf32>, %b: tensor<13x21x3xf32>",
          "  %0 = tosa.add %a, %b : (tensor<13x21x1xf32>, tensor<13x21x3xf32>) -> tensor<13x21x3xf32>\n"
          "  %1 = tosa.maximum %a, %b nan_mode<IGNORE> : (tensor<13x21x1xf32>, tensor<13x21x3xf32>) -> "
          "tensor<13x21x3xf32>\n"
          "  %2 = tosa.greater_equal %a, %b : (tensor<13x21x1xf32>, tensor<13x21x3xf32>) -> tensor<13x21x3xi1>\n"
          "  %3 = tosa.select %2, %0, %1 : (tensor<13x21x3xi1>, tensor<13x21x3xf32>, tensor<13x21x3xf32>) -> "
          "tensor<13x21x3xf32>\n  return"),
    _func("%a: tensor<13x21x3xi32>, %b: tensor<13x21x1xi32>",
          "  %0 = tosa.arithmetic_right_shift %a, %b round(false) : (tensor<13x21x3xi32>, tensor<13x21x1xi32>)"
          " -> tensor<13x21x3xi32>\n  return"),
    _func("%a: tensor<13x21x3xf32>",
          "  %0 = tosa.clamp %a min_val(0.000000e+00 : f32) max_val(1.000000e+00 : f32) nan_mode<IGNORE> : "
          "(tensor<13x21x3xf32>) -> tensor<13x21x3xf32>\n"
          "  %1 = tosa.cast %a : (tensor<13x21x3xf32>) -> tensor<13x21x3xi32>\n  return"),
    # reductions, data layout
    _func("%a: tensor<13x21x3xf32>",
          "  %0 = tosa.reduce_max %a axis(0) : (tensor<13x21x3xf32>) -> tensor<1x21x3xf32>\n"
          "  %1 = tosa.argmax %a axis(1) : (tensor<13x21x3xf32>) -> tensor<13x3xi32>\n"
          "  %2 = tosa.transpose %a perms([2, 0, 1]) : (tensor<13x21x3xf32>) -> tensor<3x13x21xf32>\n"
          "  %3 = tosa.concat %a, %a axis(0) : (tensor<13x21x3xf32>, tensor<13x21x3xf32>) -> tensor<26x21x3xf32>\n"
          "  %4 = tosa.const_shape values(dense<[21, 39]> : tensor<2xindex>) : () -> !tosa.shape<2>\n"
          "  %5 = tosa.reshape %a, %4 : (tensor<13x21x3xf32>, !tosa.shape<2>) -> tensor<21x39xf32>\n"
          "  return"),
    # tensor ops with zero points
    _func("%a: tensor<1x4x4x4xf32>, %w: tensor<8x1x1x4xf32>, %b: tensor<8xf32>",
          "  %zp = tosa.const values(dense<0.000000e+00> : tensor<1xf32>) : () -> tensor<1xf32>\n"
          "  %0 = tosa.conv2d %a, %w, %b, %zp, %zp pad([0, 0, 0, 0]) stride([1, 1]) dilation([1, 1]) "
          "acc_type(f32) local_bound(true) : (tensor<1x4x4x4xf32>, tensor<8x1x1x4xf32>, tensor<8xf32>, "
          "tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x8xf32>\n"
          "  %1 = tosa.max_pool2d %a kernel([2, 2]) stride([2, 2]) pad([0, 0, 0, 0]) : (tensor<1x4x4x4xf32>) "
          "-> tensor<1x2x2x4xf32>\n  return"),
    # control flow
    _func("%c: tensor<i1>, %a: tensor<f32>, %b: tensor<f32>",
          "  %0 = tosa.cond_if %c : tensor<i1> -> tensor<f32> {\n    tosa.yield %a : tensor<f32>\n"
          "  } else {\n    tosa.yield %b : tensor<f32>\n  }\n"
          "  %1 = tosa.while_loop (%x = %a) : (tensor<f32>) -> tensor<f32> {\n"
          "    %2 = tosa.greater %x, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
          "    tosa.yield %2 : tensor<i1>\n  } do {\n  ^bb0(%x: tensor<f32>):\n"
          "    tosa.yield %x : tensor<f32>\n  }\n  return"),
]


@pytest.mark.parametrize("text", NEW_FORM)
def test_new_form_round_trip(text):
    printed = _ok(text)
    assert _ok(printed) == printed


def test_prints_exactly_the_keyword_form():
    text = _func("%a: tensor<13x21x3xf32>",
                 "  %0 = tosa.reduce_max %a {axis = 0 : i32, nan_mode = IGNORE} : (tensor<13x21x3xf32>) "
                 "-> tensor<1x21x3xf32>\n  return")
    printed = _ok(text)
    assert "tosa.reduce_max %a axis(0) nan_mode<IGNORE> : (tensor<13x21x3xf32>) -> tensor<1x21x3xf32>" in printed


@pytest.mark.parametrize("old, new", [
    ("%0 = tosa.argmax %a {axis = 1 : i32} : (tensor<13x21x3xf32>) -> tensor<13x3xi32>",
     "tosa.argmax %a axis(1) : "),
    ('%0 = "tosa.const"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>',
     "tosa.const values(dense<1.0> : tensor<2xf32>) : () -> tensor<2xf32>"),
    ("%0 = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>",
     "tosa.const_shape values(dense<[1, 2]> : tensor<2xindex>) : () -> !tosa.shape<2>"),
    ("%0 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 1.0: f32, nan_mode = PROPAGATE} : "
     "(tensor<13x21x3xf32>) -> tensor<13x21x3xf32>",
     "tosa.clamp %a min_val(0.0 : f32) max_val(1.0 : f32) : "),
    ("%0 = tosa.transpose %a {perms = array<i32: 1, 0, 2>, foo = 1} : (tensor<13x21x3xf32>) -> tensor<21x13x3xf32>",
     "tosa.transpose %a perms([1, 0, 2]) {foo = 1} : "),
])
def test_old_attribute_dictionary_form(old, new):
    printed = _ok(_func("%a: tensor<13x21x3xf32>", f"  {old}\n  return"))
    assert new in printed


def test_enum_spellings():
    body = ("  %s = tosa.const_shape {values = dense<[2, 2, 1, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>\n"
            "  %o = tosa.const_shape {values = dense<0> : tensor<2xindex>} : () -> !tosa.shape<2>\n"
            "  %0 = tosa.resize %a, %s, %o, %o { mode = BILINEAR } : (tensor<1x32x32x8xf32>, !tosa.shape<4>, "
            "!tosa.shape<2>, !tosa.shape<2>) -> tensor<1x64x64x8xf32>\n"
            "  %1 = tosa.resize %a, %s, %o, %o {mode = #tosa.resize_mode<BILINEAR>} : (tensor<1x32x32x8xf32>, "
            "!tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x64x64x8xf32>\n  return")
    printed = _ok(_func("%a: tensor<1x32x32x8xf32>", body))
    assert printed.count("mode<BILINEAR> : ") == 2


@pytest.mark.oracle
def test_same_generic_form_as_iree_opt():
    texts = NEW_FORM + [_func("%a: tensor<13x21x3xf32>",
                              "  %0 = \"tosa.argmax\"(%a) {axis = 1 : i32} : (tensor<13x21x3xf32>) -> "
                              "tensor<13x3xi32>\n  return")]
    want = generic_forms(texts)
    got = generic_forms([_ok(t) for t in texts])
    assert want is not None and got is not None
    assert want == got


@pytest.mark.parametrize("body, message", [
    ("%0 = tosa.add %a, %a : (tensor<13x21x3xf32>, tensor<13x21x3xf32>) -> tensor<13x21x4xf32>",
     "broadcast"),
    ("%0 = tosa.reduce_sum %a {axis = 3 : i32} : (tensor<13x21x3xf32>) -> tensor<13x21x1xf32>",
     "expect input tensor rank (3) to be larger than reduce axis (3)"),
    ("%0 = tosa.reduce_sum %a axis(1) : (tensor<13x21x3xf32>) -> tensor<13x2x3xf32>",
     "expect reduced dimension size to be 1, got 2"),
    ("%0 = tosa.transpose %a perms([0, 0, 1]) : (tensor<13x21x3xf32>) -> tensor<13x13x21xf32>",
     "expected valid permutation indices"),
    ("%0 = tosa.equal %a, %a : (tensor<13x21x3xf32>, tensor<13x21x3xf32>) -> tensor<13x21x3xf32>",
     "1-bit signless integer"),
    ("%0 = tosa.max_pool2d %b {kernel = array<i64: 2, 2>, stride = array<i64: 1, 1>, pad = array<i64: 0, 0, 0>}"
     " : (tensor<1x4x4x4xf32>) -> tensor<1x3x3x4xf32>", "exactly 4 elements"),
    ("%0 = tosa.max_pool2d %b kernel([2, 2]) stride([1, 1]) pad([0, 0, 0, 0]) : (tensor<1x4x4x4xf32>) -> "
     "tensor<1x4x4x4xf32>", "calculated output height did not match expected"),
    ("%0 = tosa.concat %a, %a axis(0) : (tensor<13x21x3xf32>, tensor<13x21x3xf32>) -> tensor<27x21x3xf32>",
     "sum of axis dimensions"),
    ("%0 = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<3>",
     "expect number of elements in attribute values (2) to be equal to the rank (3)"),
    ('%0 = "tosa.abs"(%a, %a) : (tensor<13x21x3xf32>, tensor<13x21x3xf32>) -> tensor<13x21x3xf32>',
     "expected 1 operands, but found 2"),
    # the declared format `$input1 attr-dict : ...` takes one operand
    ("%0 = tosa.abs %a, %a : (tensor<13x21x3xf32>, tensor<13x21x3xf32>) -> tensor<13x21x3xf32>",
     "unexpected ','; expected one of ':', '{'"),
    ("%0 = tosa.argmax %a kernel([1]) : (tensor<13x21x3xf32>) -> tensor<13x3xi32>",
     "has no attribute named 'kernel'"),
])
def test_verification_errors(body, message):
    text = _func("%a: tensor<13x21x3xf32>, %b: tensor<1x4x4x4xf32>", f"  {body}\n  return")
    assert message in _error(text)


def test_unranked_and_dynamic_shapes_are_accepted():
    _ok(_func("%a: tensor<*xf32>, %b: tensor<?x21x3xf32>",
              "  %0 = tosa.add %a, %b : (tensor<*xf32>, tensor<?x21x3xf32>) -> tensor<*xf32>\n"
              "  %1 = tosa.reduce_sum %b axis(0) : (tensor<?x21x3xf32>) -> tensor<1x21x3xf32>\n"
              "  %2 = tosa.matmul %a, %a, %a, %a : (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) "
              "-> tensor<*xf32>\n  return"))
