"""The declared assembly formats of the HLO families (stablehlo and mhlo): every op prints
as written, reads back from its generic form, names its operands; bad custom syntax gets
MLIR's words."""
from __future__ import annotations

import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.dialects import chlo, mhlo, stablehlo
from mlirtext.dialects.hlo import broadcasts, elementwise

from .oracle import generic_forms

_Q = "tensor<2x3x!quant.uniform<i8:f32, 1.000000e-01>>"
_ARGS = ("%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<2x3xi32>, %p: tensor<2x3xi1>, "
         "%c: tensor<2x3xcomplex<f32>>, %s: tensor<f32>, %t: tuple<tensor<2x3xf32>, tensor<i32>>, "
         f"%q: {_Q}, %k: tensor<i32>, %sh: tensor<2xi64>, %st: tensor<2xui64>, %m: tensor<3x4xf32>, "
         "%sq: tensor<3x3xf32>, %cx: tensor<4xcomplex<f32>>, %u: tensor<2x3xui32>")


def _samples(prefix: str) -> list[str]:
    """One line per op of the formatted families, in the custom form the printer writes."""
    T = "tensor<2x3xf32>"
    lines = []
    for n in elementwise.UNARY + elementwise.UNARY_ACCURACY:
        operand, result = {"imag": ("%c", T), "real": ("%c", T), "is_finite": ("%a", "tensor<2x3xi1>"),
                           "not": ("%i", None), "popcnt": ("%i", None),
                           "count_leading_zeros": ("%i", None)}.get(n, ("%a", T))
        t = {"%c": "tensor<2x3xcomplex<f32>>", "%i": "tensor<2x3xi32>"}.get(operand, T)
        result = result or t
        sig = t if result == t else f"({t}) -> {result}"
        lines.append(f"%{n} = {prefix}.{n} {operand} : {sig}")
    for n in elementwise.BINARY:
        if n == "complex":
            continue
        operands, t = (("%i", "%i"), "tensor<2x3xi32>") if n in (
            "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical") else (("%a", "%b"), T)
        lines.append(f"%{n} = {prefix}.{n} {operands[0]}, {operands[1]} : {t}")
    lines += [
        f"%complex = {prefix}.complex %a, %b : tensor<2x3xcomplex<f32>>",
        f"%convert = {prefix}.convert %a : ({T}) -> tensor<2x3xi32>",
        f"%quantize = {prefix}.uniform_quantize %a : ({T}) -> {_Q}",
        f"%dequantize = {prefix}.uniform_dequantize %q : ({_Q}) -> {T}",
        f"%clamp = {prefix}.clamp %s, %a, %s : (tensor<f32>, {T}, tensor<f32>) -> {T}",
        f"%clamp2 = {prefix}.clamp %a, %a, %b : {T}",
        f"%select = {prefix}.select %p, %a, %b : tensor<2x3xi1>, {T}",
        f"%cmp = {prefix}.compare GT, %a, %b, FLOAT : ({T}, {T}) -> tensor<2x3xi1>",
        f"%cmp2 = {prefix}.compare EQ, %i, %i {{x}} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>",
        f"%reshape = {prefix}.reshape %a : ({T}) -> tensor<6xf32>",
        f"%bc = {prefix}.bitcast_convert %a : ({T}) -> tensor<2x3xi32>",
        f"%bid = {prefix}.broadcast_in_dim %a, dims = [1, 2] : ({T}) -> tensor<4x2x3xf32>",
        f"%bro = {prefix}.broadcast %a, sizes = [4] : ({T}) -> tensor<4x2x3xf32>",
        f"%tr = {prefix}.transpose %a, dims = [1, 0] : ({T}) -> tensor<3x2xf32>",
        f"%rev = {prefix}.reverse %a, dims = [0] : {T}",
        f"%iota = {prefix}.iota dim = 1 : {T}",
        f"%gte = {prefix}.get_tuple_element %t[1] : (tuple<{T}, tensor<i32>>) -> tensor<i32>",
        f"%sl = {prefix}.slice %a [0:2, 1:3:2] : ({T}) -> tensor<2x1xf32>",
        f"%cat = {prefix}.concatenate %a, %b, dim = 0 : ({T}, {T}) -> tensor<4x3xf32>",
        f"%cat1 = {prefix}.concatenate %a, dim = 1 : ({T}) -> {T}",
        f"%ds = {prefix}.dynamic_slice %a, %k, %k, sizes = [1, 2] : ({T}, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>",
        f"%dus = {prefix}.dynamic_update_slice %a, %ds, %k, %k : ({T}, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> {T}",
        f"%pad = {prefix}.pad %a, %s, low = [0, 1], high = [1, 0], interior = [0, 0] : ({T}, tensor<f32>) -> "
        "tensor<3x4xf32>",
        f"%dot = {prefix}.dot %a, %m : ({T}, tensor<3x4xf32>) -> tensor<2x4xf32>",
        f"%dotp = {prefix}.dot %a, %m, precision = [DEFAULT, HIGHEST] : ({T}, tensor<3x4xf32>) -> tensor<2x4xf32>",
        f"%dg = {prefix}.dot_general %a, %m, contracting_dims = [1] x [0] : ({T}, tensor<3x4xf32>) -> tensor<2x4xf32>",
        f"%dgb = {prefix}.dot_general %a, %a, batching_dims = [0] x [0], contracting_dims = [1] x [1], "
        f"precision = [DEFAULT, DEFAULT] : ({T}, {T}) -> tensor<2xf32>",
        f"%dga = {prefix}.dot_general %a, %m, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, "
        "rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
        f"num_primitive_operations = 1, allow_imprecise_accumulation = false> : ({T}, tensor<3x4xf32>) -> "
        "tensor<2x4xf32>",
        f'%ein = {prefix}.einsum %a, %m, config = "ab,bc->ac" : ({T}, tensor<3x4xf32>) -> tensor<2x4xf32>',
        f'%uein = {prefix}.unary_einsum %a, config = "ab->a" : ({T}) -> tensor<2xf32>',
        f"%fft = {prefix}.fft %cx, type = FFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>",
        f"%rng = {prefix}.rng %s, %s, %sh, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> {T}",
        f"%rbg:2 = {prefix}.rng_bit_generator %st, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, "
        "tensor<2x3xui32>)",
        f"%chol = {prefix}.cholesky %sq, lower = true : tensor<3x3xf32>",
        f"%chol2 = {prefix}.cholesky %sq : tensor<3x3xf32>",
        f"%rp = {prefix}.reduce_precision %a, format = e5m10 : {T}",
        f"%gds = {prefix}.get_dimension_size %a, dim = 1 : ({T}) -> tensor<i32>",
        f"%sds = {prefix}.set_dimension_size %a, %k, dim = 1 : ({T}, tensor<i32>) -> tensor<2x?xf32>",
        f"%diota = {prefix}.dynamic_iota %sh, dim = 0 : (tensor<2xi64>) -> {T}",
        f"%dbid = {prefix}.dynamic_broadcast_in_dim %a, %sh, dims = [0, 1] : ({T}, tensor<2xi64>) -> {T}",
        f"%drs = {prefix}.dynamic_reshape %a, %sh : ({T}, tensor<2xi64>) -> tensor<3x2xf32>",
        f"%dpad = {prefix}.dynamic_pad %a, %s, %sh, %sh, %sh : ({T}, tensor<f32>, tensor<2xi64>, tensor<2xi64>, "
        f"tensor<2xi64>) -> {T}",
        f"%rds = {prefix}.real_dynamic_slice %a, %sh, %sh, %sh : ({T}, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) "
        f"-> {T}",
        f"%tup = {prefix}.tuple %a, %s : tuple<{T}, tensor<f32>>",
        f"%ctok = {prefix}.create_token : !{prefix}.token",
        f"%rid = {prefix}.replica_id : tensor<ui32>",
        f"%pid = {prefix}.partition_id : tensor<ui32>",
        f"%aa = {prefix}.after_all %ctok, %ctok : !{prefix}.token",
        f"%aa0 = {prefix}.after_all : !{prefix}.token",
        f"%ob:2 = {prefix}.optimization_barrier %a, %k : {T}, tensor<i32>",
    ]
    if prefix == "mhlo":
        lines += [f"%copy = mhlo.copy %a : {T}", f"%bitcast = mhlo.bitcast %a : ({T}) -> tensor<2x3xi32>",
                  f"%adep = mhlo.add_dependency %a, %ctok : ({T}, !mhlo.token) -> {T}",
                  f"%sconv = mhlo.stochastic_convert %a, %u : ({T}, tensor<2x3xui32>) -> tensor<2x3xf16>",
                  f"%topk:2 = mhlo.topk(%a, k = 2, largest = true) : {T} -> (tensor<2x2xf32>, tensor<2x2xi32>)",
                  f"%topk2:2 = mhlo.topk(%a, k = 2) : {T} -> (tensor<2x2xf32>, tensor<2x2xi32>)"]
    return lines


def _roundtrip(lines: list[str]) -> list[str]:
    body = "".join(f"  {line}\n" for line in lines)
    text = f"func.func @f({_ARGS}) {{\n{body}  return\n}}\n"
    result = parse_and_verify(text)
    assert result.ok, [d.format() for d in result.diagnostics]
    printed = to_text(result)
    again = parse_and_verify(printed)
    assert again.ok and to_text(again) == printed
    generic = parse_and_verify(to_text(result, generic=True))  # the custom form from the generic one
    assert generic.ok and to_text(generic) == printed
    return [line.strip() for line in printed.splitlines()[2:-3]]


@pytest.mark.parametrize("prefix", ["stablehlo", "mhlo"])
def test_every_formatted_op_prints_as_written(prefix):
    lines = _samples(prefix)
    assert _roundtrip(lines) == lines
    dialect = stablehlo.dialect if prefix == "stablehlo" else mhlo.dialect
    formatted = {n for f in dialect.formats for n in f.op_names}
    written = {line.split(" = ")[1].split(" ")[0].split("(")[0] for line in lines}
    assert formatted == written  # no op of the families left untested


def test_named_operands_and_attributes():
    text = (f"func.func @f({_ARGS}) -> tensor<2x3xi1> {{\n"
            "  %0 = stablehlo.compare LT, %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>\n"
            "  %1 = stablehlo.select %0, %a, %b : tensor<2x3xi1>, tensor<2x3xf32>\n"
            "  return %0 : tensor<2x3xi1>\n}\n")
    result = parse_and_verify(text)
    assert result.ok
    cmp, sel = [op for op in result.module.walk() if op.name.startswith("stablehlo.")]
    args = result.module.regions[0].blocks[0].ops[0].regions[0].blocks[0].arguments
    assert cmp.operand("lhs") is args[0] and cmp.operand("rhs") is args[1]
    assert str(cmp.attr("comparison_direction")) == "#stablehlo<comparison_direction LT>"
    assert cmp.attr("compare_type") is None
    assert sel.operand("pred") is cmp.result_named("result") and sel.operand("on_false") is args[1]


def test_mhlo_keeps_its_inherent_attributes_as_properties():
    text = ("func.func @f(%a: tensor<2xf32>) -> tensor<2xi1> {\n"
            "  %0 = mhlo.compare GT, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n"
            "  return %0 : tensor<2xi1>\n}\n")
    op = next(o for o in parse_and_verify(text).module.walk() if o.name == "mhlo.compare")
    assert op.property_names == {"comparison_direction"}
    assert str(op.attr("comparison_direction")) == "#mhlo<comparison_direction GT>"


@pytest.mark.parametrize("line, message", [
    # mlir-hlo's tests/Dialect/mhlo/invalid.mlir
    ("%0 = mhlo.abs %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
     "custom op 'mhlo.abs' 1 operands present, but expected 2"),
    ("%0 = mhlo.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>",
     "custom op 'mhlo.add' 2 operands present, but expected 3"),
    ("%0 = mhlo.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)",
     "custom op 'mhlo.add' expected single output"),
    ("%0 = mhlo.complex %a, %b : tensor<2x3xf32>", "custom op 'mhlo.complex' expected tensor with complex element type"),
    ("%0 = stablehlo.select %p, %a, %b : tensor<2x3xi1>",
     "custom op 'stablehlo.select' expected functional type or list of two types"),
    ("%0 = stablehlo.transpose %a, dims = [1, 0.5] : (tensor<2x3xf32>) -> tensor<3x2xf32>",
     "expected an integer, got '0.5'"),
    ("%0 = stablehlo.iota dim = 0 {iota_dimension = 1 : i64} : tensor<2xf32>", "attribute 'iota_dimension' given twice"),
    # a variadic group in functional-type(operands, results): the operands against the types
    ("%0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>) -> tensor<4x3xf32>",
     "2 operands present, but expected 1"),
    ("%0 = stablehlo.dynamic_slice %a, %k, sizes = [1] : () -> tensor<1xf32>", "2 operands present, but expected 0"),
    ("%0 = stablehlo.concatenate %a, %b dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
     "expected ',', found 'dim'"),
    ("%0 = stablehlo.dot_general %a, %m, contracting_dims = [1] y [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> "
     "tensor<2x4xf32>", "expected 'x', found 'y'"),
    ("%0 = stablehlo.reduce_precision %a, format = e5 : tensor<2x3xf32>",
     "custom op 'stablehlo.reduce_precision' expected exponent mantissa in format e#m#, saw e5"),
    ("%0 = stablehlo.after_all %u : (tensor<2x3xui32>) -> (tensor<2x3xui32>, tensor<2x3xui32>)",
     "custom op 'stablehlo.after_all' expected single output"),
])
def test_bad_custom_syntax(line, message):
    text = f"func.func @f({_ARGS}) {{\n  {line}\n  return\n}}\n"
    result = parse_and_verify(text)
    assert not result.ok
    assert result.diagnostics[0].message == message
    assert result.diagnostics[0].line_col[0] == 2


def test_wrong_operand_count_in_generic_form_is_an_error():
    """The counts come from the declared names (the custom form could not show a third operand)."""
    text = ("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
            '  %0 = "stablehlo.add"(%a, %a, %a) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n'
            "  return %0 : tensor<2xf32>\n}\n")
    result = parse_and_verify(text)
    assert [d.message for d in result.diagnostics] == ["'stablehlo.add' op expected 2 operands, but found 3"]
    assert '"stablehlo.add"(%a, %a, %a)' in to_text(result)  # printed generic, every operand kept


def test_unprintable_attribute_falls_back_to_generic():
    """mhlo's dense-element dimension lists have no custom spelling (as mlir-hlo prints them)."""
    text = ("func.func @f(%a: tensor<2xf32>) -> tensor<3x2xf32> {\n"
            '  %0 = "mhlo.broadcast_in_dim"(%a) {broadcast_dimensions = dense<1> : tensor<1xi64>} : '
            "(tensor<2xf32>) -> tensor<3x2xf32>\n  return %0 : tensor<3x2xf32>\n}\n")
    printed = to_text(parse_and_verify(text))
    assert '"mhlo.broadcast_in_dim"(%a) {broadcast_dimensions = dense<1> : tensor<1xi64>} :' in printed


@pytest.mark.oracle
def test_iree_opt_reads_the_stablehlo_print_as_we_do():
    """iree-opt (3.13, no mhlo) reads our print of every stablehlo sample to the same generic form
    as our own generic print."""
    body = "".join(f"  {line}\n" for line in _samples("stablehlo"))
    result = parse_and_verify(f"func.func @f({_ARGS}) {{\n{body}  return\n}}\n")
    want = generic_forms([to_text(result, generic=True)])
    assert want is not None, "iree-opt rejects our generic print"
    assert generic_forms([to_text(result)]) == want


def test_every_chlo_formatted_op_prints_as_written():
    T = "tensor<2x3xf32>"
    lines = [f"%{n} = chlo.{n} %a : {T} -> {T}" for n in elementwise.CHLO_UNARY]
    lines += [f"%{n} = chlo.{n} %a, %b : {T}, {T} -> {T}" for n in elementwise.CHLO_BINARY]
    lines += [f"%b_{n} = chlo.broadcast_{n} %s, %a {{broadcast_dimensions = array<i64>}} : (tensor<f32>, {T}) -> {T}"
              for n in broadcasts.CHLO_BROADCAST_BINARY]
    lines += [f"%bc = chlo.broadcast_compare %a, %b {{comparison_direction = #chlo<comparison_direction GT>}} : "
              f"({T}, {T}) -> tensor<2x3xi1>",
              f"%bs = chlo.broadcast_select %p, %a, %b : (tensor<2x3xi1>, {T}, {T}) -> {T}",
              f"%tk:2 = chlo.top_k(%a, k = 2) : {T} -> (tensor<2x2xf32>, tensor<2x2xi32>)"]
    assert _roundtrip(lines) == lines
    formatted = {n for f in chlo.dialect.formats for n in f.op_names}
    assert formatted == {line.split(" = ")[1].split(" ")[0].split("(")[0] for line in lines}
