"""HLO verification (the checks in mlirtext/dialects/hlo/, hlo_attrs.py): MLIR's messages on invalid ops,
silence on valid ones. Cases are in generic form so they do not depend on the custom syntax."""
from __future__ import annotations

import dataclasses

import pytest

from mlirtext import api, cli
from mlirtext.api import Registry, parse_and_verify
from mlirtext.dialects import hlo_attrs as A, stablehlo
from mlirtext.dialects.base import Dialect
from mlirtext.dialects.hlo import dot
from mlirtext.dialects.hlo.declare import HloOp, declare_ops, verifier
from mlirtext.ir.attributes import OpaqueAttr


def errors(text: str, registry=None) -> list[str]:
    result = parse_and_verify(text, registry=registry)
    return [d.message for d in result.diagnostics if d.severity == "error"]


def func(body: str, args: str = "") -> str:
    return f"func.func @f({args}) {{\n{body}\n  func.return\n}}\n"


#: A per-axis quantized element type, as written and as printed.
QA = "!quant.uniform<i8:f32:0, {0.1:-30,0.2:-30}>"
QA_PRINTED = "!quant.uniform<i8:f32:0, {1.000000e-01:-30,2.000000e-01:-30}>"

INVALID = [
    # dot_general
    ('%0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], '
     'lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) '
     '-> tensor<2x3x5xf32>', "%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>",
     "'stablehlo.dot_general' op lhs and rhs should have the same number of batching dimensions"),
    ('%0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], '
     'rhs_contracting_dimensions = [0]>} : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>',
     "%a: tensor<3x4xf32>, %b: tensor<5x6xf32>", "contracting dimension sizes must match for lhs/rhs"),
    # gather
    ('%0 = "stablehlo.gather"(%o, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], '
     'collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, slice_sizes = '
     'array<i64: 1, 1, 8>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>) -> tensor<1x5x8xi32>',
     "%o: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>",
     "offset_dims size (2) plus collapse_slice_dims size (2) plus operand_batching_dims size (0) is not equal to "
     "operand rank (3)"),
    ('%0 = "stablehlo.gather"(%o, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2], '
     'collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>, slice_sizes = '
     'array<i64: 1, 1, 8>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>) -> tensor<3xi32>',
     "%o: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>",
     "inferred type(s) 'tensor<1x5x8xi32>' are incompatible with return type(s) of operation 'tensor<3xi32>'"),
    # broadcasts, shapes
    ('%0 = "stablehlo.broadcast_in_dim"(%a) {broadcast_dimensions = array<i64: 1>} : (tensor<3xi32>) -> '
     'tensor<1x2x3xi32>', "%a: tensor<3xi32>",
     "size of operand dimension 0 (3) is not equal to 1 or size of result dimension 1 (2)"),
    ('%0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<1x3xi32>, tensor<2x2xi32>) -> '
     'tensor<3x3xi32>', "%a: tensor<1x3xi32>, %b: tensor<2x2xi32>",
     "shapes of operand (0) and (1) are not compatible at non-concat index 1: (1, 3) != (2, 2)"),
    ('%0 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0, 3, 9>} : (tensor<1x2x3x4xi32>) -> '
     'tensor<2x1x4x3xi32>', "%a: tensor<1x2x3x4xi32>",
     "attribute permutation must be a permutation of [0, 1, 2, 3] but got 1, 0, 3, 9"),
    ('%0 = "stablehlo.slice"(%a) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 2, 5>, '
     'strides = array<i64: 1, 1>} : (tensor<3x4xi32>) -> tensor<1x4xi32>', "%a: tensor<3x4xi32>",
     "limit index 5 is larger than dimension size 4 in dimension 1"),
    ('%0 = "stablehlo.reshape"(%a) : (tensor<2x3xf32>) -> tensor<7xf32>', "%a: tensor<2x3xf32>",
     "number of output elements (7) doesn't match expected number of elements (6)"),
    ('%0 = "stablehlo.add"(%a, %a) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?x?xf32>', "%a: tensor<?xf32>",
     "requires the same shape for all operands and results"),
    ('%0 = "stablehlo.abs"(%a) : (tensor<2xf32>) -> tensor<2xf64>', "%a: tensor<2xf32>",
     "inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<2xf64>'"),
    # collectives
    ('%0 = "stablehlo.all_to_all"(%a) {split_dimension = 2 : i64, concat_dimension = 0 : i64, split_count = 2 : '
     'i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x4xf32>) -> tensor<4x4xf32>',
     "%a: tensor<4x4xf32>", "AllToAll split_dimension 2 is out-of-bounds for input rank 2"),
    ('%0 = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 2], [1, 2]]> : '
     'tensor<2x2xi64>} : (tensor<4x8xf32>) -> tensor<4x16xf32>', "%a: tensor<4x8xf32>",
     "replica id #2 seen more than once"),
    # reductions and regions
    ('%0 = "stablehlo.reduce"(%a, %z) ({\n  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n'
     '    "stablehlo.return"(%x) : (tensor<f32>) -> ()\n  }) {dimensions = array<i64: 2>} : '
     '(tensor<4x4xf32>, tensor<f32>) -> tensor<4xf32>', "%a: tensor<4x4xf32>, %z: tensor<f32>",
     "Out-of-bounds dimension 2, expected to be in range [0, 2)"),
    ('%0 = "stablehlo.if"(%p) ({\n    "stablehlo.return"(%a) : (tensor<f32>) -> ()\n  }, {\n'
     '    "stablehlo.return"(%b) : (tensor<i32>) -> ()\n  }) : (tensor<i1>) -> tensor<f32>',
     "%p: tensor<i1>, %a: tensor<f32>, %b: tensor<i32>",
     "branch 0 and branch 1 have mismatched return types: 'tensor<f32>' vs 'tensor<i32>'"),
    # convolution
    ('%0 = "stablehlo.convolution"(%a, %k) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->'
     '[b, 0, 1, f]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x8x8x207xf32>, '
     'tensor<3x3x20x16xf32>) -> tensor<1x6x6x16xf32>', "%a: tensor<1x8x8x207xf32>, %k: tensor<3x3x20x16xf32>",
     "expects input feature dimension (207) / feature_group_count = kernel input feature dimension (20)"),
    # custom_call, fft
    ('"stablehlo.custom_call"(%a) {call_target_name = "foo", operand_layouts = [dense<[0, 1, 2]> : '
     'tensor<3xindex>], result_layouts = []} : (tensor<2x3xf32>) -> ()', "%a: tensor<2x3xf32>",
     "layout must be a permutation of [0, 2)"),
    ('%0 = "stablehlo.fft"(%a) {fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: 9>} : '
     '(tensor<3x9xf16>) -> tensor<3x5xcomplex<f32>>', "%a: tensor<3x9xf16>",
     "RFFT requires f32 or f64 input type, but is given 'f16'."),
    # quantized
    ('%0 = "stablehlo.add"(%a, %a) : (tensor<1x!quant.uniform<i8:f32, 1.0:17>>, tensor<1x!quant.uniform<i8:f32, '
     '1.0:17>>) -> tensor<1xf32>', "%a: tensor<1x!quant.uniform<i8:f32, 1.0:17>>",
     "all operands and results to be either quantized or non-quantized"),
    # mhlo ops use the same checks under their own name
    ('%0 = "mhlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<1xi32>, tensor<2x2xi32>) -> tensor<3xi32>',
     "%a: tensor<1xi32>, %b: tensor<2x2xi32>", "'mhlo.concatenate' op operands (0) and (1) do not match rank"),
    # operand and result types (hlo_types.py); the messages are iree-opt's, word for word
    (f'%0 = "stablehlo.abs"(%a) : (tensor<2x{QA}>) -> tensor<2x{QA}>', f"%a: tensor<2x{QA}>",
     "'stablehlo.abs' op operand #0 must be ranked tensor of 2/4/8/16/32/64-bit signless integer or "
     "4/6/8/16/32/64-bit float or complex type with 32/64-bit float elements or per-tensor integer quantized "
     f"values, but got 'tensor<2x{QA_PRINTED}>'"),
    (f'%0 = "stablehlo.concatenate"(%a, %a) {{dimension = 0 : i64}} : (tensor<2x{QA}>, tensor<2x{QA}>) -> '
     f'tensor<4x{QA}>', f"%a: tensor<2x{QA}>",
     "'stablehlo.concatenate' op operand #0 must be variadic of ranked tensor of 4/6/8/16/32/64-bit float or bool "
     "or 2/4/8/16/32/64-bit integer or complex type with 32/64-bit float elements or per-tensor integer quantized "
     f"values, but got 'tensor<2x{QA_PRINTED}>'"),
    ('%0 = "stablehlo.floor"(%a) : (tensor<4xi32>) -> tensor<4xi32>', "%a: tensor<4xi32>",
     "'stablehlo.floor' op operand #0 must be ranked tensor of 4/6/8/16/32/64-bit float or per-tensor integer "
     "quantized values, but got 'tensor<4xi32>'"),
    ('%0 = "stablehlo.uniform_dequantize"(%a) : (tensor<4x!quant.uniform<si8:f32, 1.0>>) -> tensor<4xf32>',
     "%a: tensor<4x!quant.uniform<si8:f32, 1.0>>",
     "'stablehlo.uniform_dequantize' op operand #0 must be ranked tensor of per-tensor integer quantized or "
     "per-axis integer quantized values, but got 'tensor<4x!quant.uniform<si8:f32, 1.000000e+00>>'"),
    ('%0 = "stablehlo.uniform_dequantize"(%a) : (tensor<4x!quant.uniform<i8:f32, 1.0:300>>) -> tensor<4xf32>',
     "%a: tensor<4x!quant.uniform<i8:f32, 1.0:300>>",
     "operand #0 must be ranked tensor of per-tensor integer quantized or per-axis integer quantized values, "
     "but got 'tensor<4x!quant.uniform<i8:f32, 1.000000e+00:300>>'"),
    ('%0 = "stablehlo.rng"(%a, %a, %s) {rng_distribution = #stablehlo<rng_distribution UNIFORM>} : '
     '(tensor<1xf32>, tensor<1xf32>, tensor<1xi64>) -> tensor<2xf32>', "%a: tensor<1xf32>, %s: tensor<1xi64>",
     "'stablehlo.rng' op operand #0 must be 0D tensor of bool or 2/4/8/16/32/64-bit integer or "
     "4/6/8/16/32/64-bit float values, but got 'tensor<1xf32>'"),
    (f'%0 = "stablehlo.uniform_quantize"(%a) : (tensor<2xf32>) -> tensor<2x{QA.replace(":0", ":1")}>',
     "%a: tensor<2xf32>",  # a quantized dimension the tensor does not have
     "'stablehlo.uniform_quantize' op result #0 must be ranked tensor of per-tensor integer quantized or per-axis "
     f"integer quantized values, but got 'tensor<2x{QA_PRINTED.replace(':0', ':1')}>'"),
    ('%0 = "stablehlo.select"(%p, %a, %a) : (tensor<2xi32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>',
     "%p: tensor<2xi32>, %a: tensor<2xf32>",
     "'stablehlo.select' op operand #0 must be ranked tensor of bool values, but got 'tensor<2xi32>'"),
    ('%0 = "mhlo.is_finite"(%a) : (tensor<3xi32>) -> tensor<3xi1>', "%a: tensor<3xi32>",
     "'mhlo.is_finite' op operand #0 must be ranked tensor of 4/6/8/16/32/64-bit float values, but got "
     "'tensor<3xi32>'"),
]


@pytest.mark.parametrize("body,args,message", INVALID, ids=[m[:40] for _, _, m in INVALID])
def test_invalid_op_reports_mlir_message(body, args, message):
    got = errors(func("  " + body, args))
    assert any(message in m for m in got), got


VALID = [
    ('%0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], '
     'rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : '
     '(tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>', "%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>"),
    ('%0 = "stablehlo.gather"(%o, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2], '
     'collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2,>, slice_sizes = '
     'array<i64: 1, 1, 8>} : (tensor<2x4x9xi32>, tensor<1x5x2xi32>) -> tensor<1x5x8xi32>',
     "%o: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>"),
    ('%0 = "stablehlo.add"(%a, %a) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<3x4xf32>', "%a: tensor<?x4xf32>"),
    ('%0 = "stablehlo.concatenate"(%a, %b) {dimension = 0 : i64} : (tensor<?x3xi32>, tensor<2x3xi32>) -> '
     'tensor<?x3xi32>', "%a: tensor<?x3xi32>, %b: tensor<2x3xi32>"),
    ('%0 = "stablehlo.convolution"(%a, %k) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->'
     '[b, 0, 1, f]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x8x8x20xf32>, '
     'tensor<3x3x20x16xf32>) -> tensor<1x6x6x16xf32>', "%a: tensor<1x8x8x20xf32>, %k: tensor<3x3x20x16xf32>"),
    # per-axis quantized tensors where StableHLO takes them; tokens in tuples
    (f'%0 = "stablehlo.add"(%a, %a) : (tensor<2x3x{QA}>, tensor<2x3x{QA}>) -> tensor<2x3x{QA}>',
     f"%a: tensor<2x3x{QA}>"),
    ('%0 = "stablehlo.tuple"(%a, %t) : (tensor<2xf32>, !stablehlo.token) -> tuple<tensor<2xf32>, !stablehlo.token>\n'
     '  %1 = "stablehlo.get_tuple_element"(%0) {index = 0 : i32} : (tuple<tensor<2xf32>, !stablehlo.token>) -> '
     'tensor<2xf32>', "%t: !stablehlo.token, %a: tensor<2xf32>"),
    ('%0 = "mhlo.reshape"(%a) : (tensor<*xf32>) -> tensor<4xf32>', "%a: tensor<*xf32>"),
]


@pytest.mark.parametrize("body,args", VALID, ids=[b.split('"')[1] for b, _ in VALID])
def test_valid_op_passes(body, args):
    assert errors(func("  " + body, args)) == []


def test_attribute_syntax_errors_are_reported_where_they_are():
    text = ("module attributes {\n  stablehlo.dot = #stablehlo.dot<\n      lhs_batching_dimensions = [0],\n"
            "      lhs_batching_dimensions = [1]\n  >} {}\n")
    result = parse_and_verify(text)
    (d,) = [d for d in result.diagnostics if d.severity == "error"]
    assert "duplicated `lhs_batching_dimensions` entry" in d.message
    assert d.span.line_col[0] == 4
    bad_conv = "module attributes {\n  mhlo.conv = #mhlo.conv<[c, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>\n} {}\n"
    assert any("Unexpected dimension c, expecting b, f" in m for m in errors(bad_conv))


def test_attribute_readers():
    assert A.enum_word(OpaqueAttr("#stablehlo<comparison_direction GT>")) == "GT"
    d = A.conv_dims(OpaqueAttr("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>"))
    assert (d.input_batch, d.input_feature, d.input_spatial) == (0, 3, [1, 2])
    assert (d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial) == (2, 3, [0, 1])
    assert A.dot_dims(OpaqueAttr("#mhlo.dot<lhs_contracting_dimensions = [1]>"))["lhs_contracting_dimensions"] == [1]


# ---- a verifier that raises is a bug report, never a silent pass --------------------------
def declare_abs_with(monkeypatch, check) -> Registry:
    """A registry (the command line's too) whose stablehlo.abs has `check` as its own rules,
    behind the HLO verifier."""
    definition = stablehlo.dialect.ops["stablehlo.abs"]
    monkeypatch.setitem(stablehlo.dialect.ops, "stablehlo.abs", dataclasses.replace(definition, verify=verifier(check)))
    registry = Registry()  # a new one: the built-in registry keeps the declarations it has looked up
    monkeypatch.setattr(api, "builtin_registry", lambda: registry)
    return registry


def test_an_op_declared_twice_is_refused():
    one = HloOp("abs", "Elementwise abs.")
    with pytest.raises(ValueError, match="'stablehlo.abs' is declared twice"):
        declare_ops(Dialect("stablehlo"), "stablehlo", (one, one))


def test_each_op_is_checked_by_its_own_record():
    """dot_general's check is the one its family module's record names, under both prefixes."""
    [record] = [op for op in dot.OPS if op.name == "dot_general"]
    assert record.verify.__module__ == dot.__name__
    for prefix in ("stablehlo", "mhlo"):
        body = (f'  %0 = "{prefix}.dot_general"(%a, %a) <{{dot_dimension_numbers = #{prefix}.dot<'
                'lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : '
                '(tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>')
        got = errors(func(body, "%a: tensor<2x3xf32>"))
        assert got == [f"'{prefix}.dot_general' op contracting dimension sizes must match for lhs/rhs"], got


def test_raising_verifier_is_an_internal_error_at_the_op(monkeypatch):
    def broken(op):
        return [][op.operands.__len__()]  # an IndexError, as a check that did not foresee a shape

    registry = declare_abs_with(monkeypatch, broken)
    text = func('  %0 = "stablehlo.abs"(%a) : (tensor<2xf32>) -> tensor<2xf32>', "%a: tensor<2xf32>")
    [d] = parse_and_verify(text, registry=registry).diagnostics
    assert d.severity == "error" and d.line_col[0] == 2
    assert d.message.startswith("internal error: verifier of 'stablehlo.abs' failed: IndexError: list index out "
                                "of range at test_hlo_verify.py:")
    assert d.message.endswith("; please report")


def test_raising_verifier_through_the_command_line(monkeypatch, tmp_path, capsys):
    """`mlirtext opt`: a one-line diagnostic at the op and exit status 1, no traceback."""
    declare_abs_with(monkeypatch, lambda op: {}["missing"])
    path = tmp_path / "in.mlir"
    path.write_text(func('  %0 = "stablehlo.abs"(%a) : (tensor<2xf32>) -> tensor<2xf32>', "%a: tensor<2xf32>"))
    assert cli.main(["opt", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.startswith(f"{path}:2:8: error: internal error: verifier of 'stablehlo.abs' failed: KeyError: "
                          "'missing' at test_hlo_verify.py:")


def test_raising_verifier_does_not_hide_later_errors(monkeypatch):
    registry = declare_abs_with(monkeypatch, lambda op: op.no_such_field)
    body = ('  %0 = "stablehlo.abs"(%a) : (tensor<2xf32>) -> tensor<2xf32>\n'
            '  %1 = "stablehlo.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>')
    got = errors(func(body, "%a: tensor<2xf32>"), registry)
    assert got[0].startswith("internal error: verifier of 'stablehlo.abs' failed: AttributeError:")
    assert len(got) == 2 and "stablehlo.add" in got[1]


def test_sort_results_are_the_inferred_types():
    """Two errors at the op, in MLIR's order (InferTensorType)."""
    body = ('  %0 = "stablehlo.sort"(%a, %a) ({\n'
            '  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>, %w: tensor<f32>):\n'
            '    %c = "stablehlo.compare"(%x, %y) {comparison_direction = #stablehlo<comparison_direction GT>} : '
            '(tensor<f32>, tensor<f32>) -> tensor<i1>\n'
            '    "stablehlo.return"(%c) : (tensor<i1>) -> ()\n'
            '  }) {dimension = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>)')
    assert errors(func(body, "%a: tensor<2xf32>")) == [
        "'stablehlo.sort' op inferred type(s) 'tensor<2xf32>', 'tensor<2xf32>' are incompatible with return type(s) "
        "of operation 'tensor<2xf32>'", "'stablehlo.sort' op failed to infer returned types"]
