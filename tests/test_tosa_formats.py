"""The declared assembly formats of TOSA's ops (all but those upstream reads with its own parser):
every op prints as written, with its inherent attributes as keyword items (`axis(1)`), reads
back from its generic form and from the attribute-dictionary form, and names its operands as
TOSA's ODS does."""
from __future__ import annotations

import pytest

from mlirtext.api import parse, parse_and_verify, to_text
from mlirtext.dialects import tosa

from .oracle import generic_forms

_T = "tensor<2x3xf32>"
_ARGS = (f"%a: {_T}, %b: {_T}, %i: tensor<2x3xi32>, %p: tensor<2x3xi1>, %s: tensor<1xi8>, %z: tensor<1xf32>, "
         "%t: tensor<513xi16>, %k: tensor<2x3xi16>, %x: tensor<1x4x4x4xf32>, %w: tensor<8x1x1x4xf32>, "
         "%bias: tensor<8xf32>, %dw: tensor<1x1x4x2xf32>, %x5: tensor<1x4x8x21x17xf32>, "
         "%w5: tensor<34x1x1x1x17xf32>, %b34: tensor<34xf32>, %g: tensor<13x21x3xf32>, %gi: tensor<13x26xi32>, "
         "%gv: tensor<13x26x3xf32>, %sv: tensor<13x52x3xf32>, %rc: tensor<1xi32>, %f: tensor<1x4x8xf32>, %m: tensor<1x14x19xf32>, "
         "%mt: tensor<1x28x19xf32>, %mb: tensor<1x19x28xf32>, %c: tensor<10xi32>")
_SHAPE = "%shape = tosa.const_shape values(dense<[3, 2]> : tensor<2xindex>) : () -> !tosa.shape<2>"
_START = "%start = tosa.const_shape values(dense<0> : tensor<2xindex>) : () -> !tosa.shape<2>"
_SIZE = "%size = tosa.const_shape values(dense<[2, 1]> : tensor<2xindex>) : () -> !tosa.shape<2>"
_PADS = "%pads = tosa.const_shape values(dense<0> : tensor<4xindex>) : () -> !tosa.shape<4>"
_KERNEL = "%kernel = tosa.const_shape values(dense<[2, 2]> : tensor<2xindex>) : () -> !tosa.shape<2>"
_STRIDE = "%stride = tosa.const_shape values(dense<1> : tensor<2xindex>) : () -> !tosa.shape<2>"
_ONE = "%one = tosa.const_shape values(dense<1> : tensor<1xindex>) : () -> !tosa.shape<1>"
_CONV = "(tensor<1x4x4x4xf32>, tensor<8x1x1x4xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>)"
_S2 = "!tosa.shape<2>"

#: The ops of other families (given by hand: their operand types differ from the family's first op)
_OTHERS = [
    f"%cast = tosa.cast %a : ({_T}) -> tensor<2x3xi32>",
    f"%mul = tosa.mul %a, %b, %s : ({_T}, {_T}, tensor<1xi8>) -> {_T}",
    f"%select = tosa.select %p, %a, %b : (tensor<2x3xi1>, {_T}, {_T}) -> {_T}",
    f"%negate = tosa.negate %a, %z, %z : ({_T}, tensor<1xf32>, tensor<1xf32>) -> {_T}",
    "%table = tosa.table %k, %t : (tensor<2x3xi16>, tensor<513xi16>) -> tensor<2x3xi32>",
    f"%reshape = tosa.reshape %a, %shape : ({_T}, {_S2}) -> tensor<3x2xf32>",
    f"%tile = tosa.tile %a, %shape : ({_T}, {_S2}) -> tensor<6x6xf32>",
    f"%slice = tosa.slice %a, %start, %size : ({_T}, {_S2}, {_S2}) -> tensor<2x1xf32>",
    f"%pad = tosa.pad %a, %pads, %z : ({_T}, !tosa.shape<4>, tensor<1xf32>) -> {_T}",
    "%arithmetic_right_shift = tosa.arithmetic_right_shift %i, %i round(true) : (tensor<2x3xi32>, "
    "tensor<2x3xi32>) -> tensor<2x3xi32>",
    f"%reduce_sum = tosa.reduce_sum %a axis(1) : ({_T}) -> tensor<2x1xf32>",
    f"%reduce_product = tosa.reduce_product %a axis(0) : ({_T}) -> tensor<1x3xf32>",
    "%reduce_all = tosa.reduce_all %p axis(1) : (tensor<2x3xi1>) -> tensor<2x1xi1>",
    "%reduce_any = tosa.reduce_any %p axis(0) : (tensor<2x3xi1>) -> tensor<1x3xi1>",
    f"%concat = tosa.concat %a, %b axis(0) : ({_T}, {_T}) -> tensor<4x3xf32>",
    f"%transpose = tosa.transpose %a perms([1, 0]) : ({_T}) -> tensor<3x2xf32>",
    f"%reverse = tosa.reverse %a axis(1) : ({_T}) -> {_T}",
    f"%dim = tosa.dim %a axis(1) : ({_T}) -> !tosa.shape<1>",
    "%gather = tosa.gather %g, %gi : (tensor<13x21x3xf32>, tensor<13x26xi32>) -> tensor<13x26x3xf32>",
    "%row_gather = tosa.row_gather %g, %gi, %rc : (tensor<13x21x3xf32>, tensor<13x26xi32>, tensor<1xi32>) -> "
    "tensor<13x26x3xf32>",
    "%scatter = tosa.scatter %sv, %gi, %gv : (tensor<13x52x3xf32>, tensor<13x26xi32>, tensor<13x26x3xf32>) -> "
    "tensor<13x52x3xf32>",
    "%matmul = tosa.matmul %m, %mb, %z, %z : (tensor<1x14x19xf32>, tensor<1x19x28xf32>, tensor<1xf32>, "
    "tensor<1xf32>) -> tensor<1x14x28xf32>",
    "%matmul_t = tosa.matmul_t %m, %mt, %z, %z : (tensor<1x14x19xf32>, tensor<1x28x19xf32>, tensor<1xf32>, "
    "tensor<1xf32>) -> tensor<1x14x28xf32>",
    f"%conv2d = tosa.conv2d %x, %w, %bias, %z, %z pad([0, 0, 0, 0]) stride([1, 1]) dilation([1, 1]) acc_type(f32) "
    f"local_bound(true) : {_CONV} -> tensor<1x4x4x8xf32>",
    "%conv3d = tosa.conv3d %x5, %w5, %b34, %z, %z pad([0, 0, 0, 0, 0, 0]) stride([1, 1, 1]) dilation([1, 1, 1]) "
    "acc_type(f32) : (tensor<1x4x8x21x17xf32>, tensor<34x1x1x1x17xf32>, tensor<34xf32>, tensor<1xf32>, "
    "tensor<1xf32>) -> tensor<1x4x8x21x34xf32>",
    "%depthwise_conv2d = tosa.depthwise_conv2d %x, %dw, %bias, %z, %z pad([0, 0, 0, 0]) stride([1, 1]) "
    "dilation([1, 1]) acc_type(f32) : (tensor<1x4x4x4xf32>, tensor<1x1x4x2xf32>, tensor<8xf32>, tensor<1xf32>, "
    "tensor<1xf32>) -> tensor<1x4x4x8xf32>",
    f"%transpose_conv2d = tosa.transpose_conv2d %x, %w, %bias, %z, %z out_pad([0, 0, 0, 0]) stride([1, 1]) "
    f"acc_type(f32) : {_CONV} -> tensor<1x4x4x8xf32>",
    "%avg_pool2d = tosa.avg_pool2d %x, %z, %z kernel([2, 2]) stride([1, 1]) pad([0, 1, 0, 1]) acc_type(f32) : "
    "(tensor<1x4x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x4xf32>",
    "%avg_pool2d_adaptive = tosa.avg_pool2d_adaptive %x, %z, %z, %kernel, %stride, %pads acc_type(f32) : "
    f"(tensor<1x4x4x4xf32>, tensor<1xf32>, tensor<1xf32>, {_S2}, {_S2}, !tosa.shape<4>) -> tensor<1x3x3x4xf32>",
    "%fft2d:2 = tosa.fft2d %f, %f inverse(false) : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> "
    "(tensor<1x4x8xf32>, tensor<1x4x8xf32>)",
    "%rfft2d:2 = tosa.rfft2d %f local_bound(true) : (tensor<1x4x8xf32>) -> (tensor<1x4x5xf32>, tensor<1x4x5xf32>)",
    f"%identity = tosa.identity %a : ({_T}) -> {_T}",
    f"%concat_shape = tosa.concat_shape %shape, %start : ({_S2}, {_S2}) -> !tosa.shape<4>",
    f"%slice_shape = tosa.slice_shape %pads, %rc, %rc : (!tosa.shape<4>, tensor<1xi32>, tensor<1xi32>) -> "
    "!tosa.shape<1>",
    f"tosa.assert_equal_shape %shape, %start allow_broadcast(true) : ({_S2}, {_S2}) -> ()",
    '%custom = tosa.custom %c operator_name("custom_test") domain_name("tosa.mlir_test") implementation_attrs("") '
    ": (tensor<10xi32>) -> tensor<10xi32>",
    f"%exp2_shape = tosa.exp2_shape %shape : ({_S2}) -> {_S2}",
    f"%log2_ceil_shape = tosa.log2_ceil_shape %shape : ({_S2}) -> {_S2}",
    f"%log2_floor_shape = tosa.log2_floor_shape %shape : ({_S2}) -> {_S2}",
] + [f"%{n} = tosa.{n} %shape, %start : ({_S2}, {_S2}) -> {_S2}"
     for n in ("add_shape", "sub_shape", "mul_shape", "mod_shape", "div_ceil_shape", "div_floor_shape", "max_shape",
               "min_shape")]


def _samples() -> list[str]:
    lines = [_SHAPE, _START, _SIZE, _PADS, _KERNEL, _STRIDE, _ONE,
             "%const = tosa.const values(dense<1.0> : tensor<2xf32>) : () -> tensor<2xf32>",
             "%const2 = tosa.const values(dense<1> : tensor<2xi8>) {note = 1 : i32} : () -> tensor<2xi8>"]
    formatted = {n for names in tosa.FAMILIES.values() for n in names}
    ints = {"bitwise_not", "clz", "intdiv", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_left_shift",
            "logical_right_shift"}
    bools = {"logical_not", "logical_and", "logical_or", "logical_xor"}
    for family in ("abs", "add"):  # the elementwise unary and binary ops: samples made alike
        for n in (name[5:] for name in tosa.FAMILIES[family] if not name.endswith("_shape")):
            v, t = ("%i", "tensor<2x3xi32>") if n in ints else ("%p", "tensor<2x3xi1>") if n in bools else ("%a", _T)
            result = "tensor<2x3xi1>" if n in ("equal", "greater", "greater_equal") else t
            operands = [v] if family == "abs" else [v, v]
            lines.append(f"%{n} = tosa.{n} {', '.join(operands)} : ({', '.join([t] * len(operands))}) -> {result}")
            formatted.discard(f"tosa.{n}")
    for n in ("sigmoid", "tanh", "erf"):
        lines.append(f"%{n} = tosa.{n} %a : ({_T}) -> {_T}")
        formatted.discard(f"tosa.{n}")
    lines += _OTHERS
    formatted -= {"tosa." + line.split(" = ")[-1].split()[0][5:] for line in _OTHERS}
    assert not formatted  # every formatted op has a sample
    return lines


def test_every_formatted_op_prints_as_written():
    lines = _samples()
    text = f"func.func @f({_ARGS}) {{\n" + "".join(f"  {line}\n" for line in lines) + "  return\n}\n"
    result = parse_and_verify(text)
    assert result.ok, [d.format() for d in result.diagnostics]
    printed = to_text(result)
    assert [line.strip() for line in printed.splitlines()[2:-3]] == lines
    assert to_text(parse_and_verify(to_text(result, generic=True))) == printed


def test_named_operands():
    text = (f"func.func @f(%a: {_T}, %b: {_T}, %s: tensor<1xi8>) -> {_T} {{\n"
            f"  %0 = tosa.mul %a, %b, %s : ({_T}, {_T}, tensor<1xi8>) -> {_T}\n  return %0 : {_T}\n}}\n")
    op = next(o for o in parse_and_verify(text).module.walk() if o.name == "tosa.mul")
    assert [op.operand(n) for n in ("input1", "input2", "shift")] == list(op.operands)
    assert op.result_named("output") is op.results[0]


def test_constants_read_the_dictionary_form_and_the_old_name():
    """`{values = ...}` (what the corpus writes) and the old `value` (`value(...)`, `{value = ...}`, or a generic
    op's) all print as `values(...)`; both names at once is an error."""
    c = "dense<1.0> : tensor<2xf32>"
    lines = [f"%0 = tosa.const {{values = {c}}} : () -> tensor<2xf32>",
             f"%1 = tosa.const value({c}) : () -> tensor<2xf32>",
             f"%2 = tosa.const {{value = {c}}} : () -> tensor<2xf32>",
             f'%3 = "tosa.const"() {{value = {c}}} : () -> tensor<2xf32>']
    result = parse_and_verify("func.func @f() {\n" + "".join(f"  {line}\n" for line in lines) + "  return\n}\n")
    assert result.ok, [d.format() for d in result.diagnostics]
    printed = [line.strip() for line in to_text(result).splitlines()[2:-3]]
    assert printed == [f"%{i} = tosa.const values({c}) : () -> tensor<2xf32>" for i in range(4)]
    ops = [op for op in result.module.walk() if op.name == "tosa.const"]
    assert [sorted(op.attributes) for op in ops] == [["values"]] * 3 + [["value"]]
    twice = parse_and_verify(f"func.func @f() {{\n  %0 = tosa.const value({c}) {{values = {c}}} : () -> "
                             "tensor<2xf32>\n  return\n}\n")
    assert [d.message for d in twice.diagnostics] == ["attribute 'values' given twice"]


def test_operand_count_is_checked_against_the_function_type():
    text = (f"func.func @f(%a: {_T}) -> {_T} {{\n"
            f"  %0 = tosa.add %a, %a : ({_T}) -> {_T}\n  return %0 : {_T}\n}}\n")
    [d] = parse_and_verify(text).diagnostics
    assert d.message == "2 operands present, but expected 1" and d.line_col[0] == 2


@pytest.mark.oracle
def test_iree_opt_reads_the_print_as_we_do():
    text = f"func.func @f({_ARGS}) {{\n" + "".join(f"  {line}\n" for line in _samples()) + "  return\n}\n"
    result = parse_and_verify(text)
    want = generic_forms([to_text(result, generic=True)])
    assert want is not None, "iree-opt rejects our generic print"
    assert generic_forms([to_text(result)]) == want


def test_inherent_attributes_are_declared_and_named():
    """conv2d's operands and attributes by their ODS names; the keyword items and the dictionary
    form give the same op."""
    conv = (f"tosa.conv2d %x, %w, %bias, %z, %z {{{{attrs}}}} : {_CONV} -> tensor<1x4x4x8xf32>")
    keyword = conv.replace("{{attrs}}", "pad([0, 0, 0, 0]) stride([1, 1]) dilation([1, 1]) acc_type(f32)")
    dictionary = conv.replace("{{attrs}}", "{acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, "
                                           "0>, stride = array<i64: 1, 1>}")
    ops = []
    for form in (keyword, dictionary):
        text = (f"func.func @f(%x: tensor<1x4x4x4xf32>, %w: tensor<8x1x1x4xf32>, %bias: tensor<8xf32>, "
                f"%z: tensor<1xf32>) {{\n  %0 = {form}\n  return\n}}\n")
        result = parse_and_verify(text)
        assert result.ok, [d.format() for d in result.diagnostics]
        assert f"%0 = {keyword}" in to_text(result)
        ops.append(next(o for o in result.module.walk() if o.name == "tosa.conv2d"))
    op = ops[0]
    assert [op.operand(n) for n in ("input", "weight", "bias", "input_zp", "weight_zp")] == list(op.operands)
    assert op.result_named("output") is op.results[0]
    assert {k: str(v) for k, v in ops[0].attributes.items()} == {k: str(v) for k, v in ops[1].attributes.items()}
    assert str(op.attributes["stride"]) == "array<i64: 1, 1>"


@pytest.mark.parametrize("line,message", [
    # a required attribute left out (the format's item is optional: the dictionary form has none)
    (f"%0 = tosa.reduce_sum %a : ({_T}) -> tensor<2x1xf32>", "requires attribute 'axis'"),
    # an attribute of another kind stays in the dictionary, where the verifier finds it
    (f"%0 = tosa.transpose %a {{perms = array<i64: 1, 0>}} : ({_T}) -> tensor<3x2xf32>",
     "attribute 'perms' failed to satisfy constraint: i32 dense array attribute"),
    (f"%0 = tosa.concat %a, %b axis(0) {{axis = 1 : i32}} : ({_T}, {_T}) -> tensor<4x3xf32>",
     "attribute 'axis' given twice"),
])
def test_attribute_errors(line, message):
    result = parse_and_verify(f"func.func @f(%a: {_T}, %b: {_T}) {{\n  {line}\n  return\n}}\n")
    first = result.diagnostics[0].message
    assert first in (message, f"'{line.split()[2]}' op {message}"), first


def test_an_attribute_of_another_kind_prints_in_the_dictionary():
    text = (f'func.func @f(%a: {_T}) {{\n  %0 = "tosa.transpose"(%a) {{perms = array<i64: 1, 0>}} : ({_T}) -> '
            f'tensor<3x2xf32>\n  return\n}}\n')
    printed = to_text(parse(text))
    assert f"tosa.transpose %a {{perms = array<i64: 1, 0>}} : ({_T}) -> tensor<3x2xf32>" in printed
