"""The declared assembly formats of TOSA's ops without inherent attributes: every op prints as
written, reads back from its generic form and names its operands as TOSA's ODS does."""
from __future__ import annotations

import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.dialects import tosa

from .oracle import generic_forms

_T = "tensor<2x3xf32>"
_ARGS = (f"%a: {_T}, %b: {_T}, %i: tensor<2x3xi32>, %p: tensor<2x3xi1>, %s: tensor<1xi8>, %z: tensor<1xf32>, "
         "%t: tensor<513xi16>, %k: tensor<2x3xi16>")
_SHAPE = "%shape = tosa.const_shape values(dense<[3, 2]> : tensor<2xindex>) : () -> !tosa.shape<2>"
_START = "%start = tosa.const_shape values(dense<0> : tensor<2xindex>) : () -> !tosa.shape<2>"
_SIZE = "%size = tosa.const_shape values(dense<[2, 1]> : tensor<2xindex>) : () -> !tosa.shape<2>"
_PADS = "%pads = tosa.const_shape values(dense<0> : tensor<4xindex>) : () -> !tosa.shape<4>"


def _samples() -> list[str]:
    lines = [_SHAPE, _START, _SIZE, _PADS, "%const = tosa.const values(dense<1.0> : tensor<2xf32>) : () -> "
             "tensor<2xf32>", "%const2 = tosa.const values(dense<1> : tensor<2xi8>) {note = 1 : i32} : () -> "
             "tensor<2xi8>"]
    shorts = {n for shorts, _ in tosa.FORMATS.values() for n in shorts}
    ints = {"bitwise_not", "clz", "intdiv", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_left_shift",
            "logical_right_shift"}
    bools = {"logical_not", "logical_and", "logical_or", "logical_xor"}
    for family in ("unary", "binary"):
        for n in tosa.FORMATS[family][0]:
            v, t = ("%i", "tensor<2x3xi32>") if n in ints else ("%p", "tensor<2x3xi1>") if n in bools else ("%a", _T)
            result = "tensor<2x3xi1>" if n in ("equal", "greater", "greater_equal") else t
            operands = [v] if family == "unary" else [v, v]
            lines.append(f"%{n} = tosa.{n} {', '.join(operands)} : ({', '.join([t] * len(operands))}) -> {result}")
            shorts.discard(n)
    lines += [
        f"%cast = tosa.cast %a : ({_T}) -> tensor<2x3xi32>",
        f"%mul = tosa.mul %a, %b, %s : ({_T}, {_T}, tensor<1xi8>) -> {_T}",
        f"%select = tosa.select %p, %a, %b : (tensor<2x3xi1>, {_T}, {_T}) -> {_T}",
        f"%negate = tosa.negate %a, %z, %z : ({_T}, tensor<1xf32>, tensor<1xf32>) -> {_T}",
        "%table = tosa.table %k, %t : (tensor<2x3xi16>, tensor<513xi16>) -> tensor<2x3xi32>",
        f"%reshape = tosa.reshape %a, %shape : ({_T}, !tosa.shape<2>) -> tensor<3x2xf32>",
        f"%tile = tosa.tile %a, %shape : ({_T}, !tosa.shape<2>) -> tensor<6x6xf32>",
        f"%slice = tosa.slice %a, %start, %size : ({_T}, !tosa.shape<2>, !tosa.shape<2>) -> tensor<2x1xf32>",
        f"%pad = tosa.pad %a, %pads, %z : ({_T}, !tosa.shape<4>, tensor<1xf32>) -> {_T}",
    ]
    shorts -= {"cast", "mul", "select", "negate", "table", "reshape", "tile", "slice", "pad"}
    assert not shorts  # every formatted op has a sample
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
