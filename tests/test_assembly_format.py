"""Declared assembly formats: the generated grammar, parser and printer agree, and ops
are read by the names their dialect declares."""
from __future__ import annotations

import pytest

from mlirtext.api import parse, parse_and_verify, to_text
from mlirtext.dialects import arith, cf, math, memref, stablehlo, tensor
from mlirtext.dialects.assembly_format import Custom, FormatError, declare_family, parse_format
from mlirtext.dialects.base import Dialect
from mlirtext.dialects.registry import Registry
from mlirtext.ir import types as T
from mlirtext.ir.attributes import DenseArrayAttr
from mlirtext.ir.core import Operation, Value
from mlirtext.ir.signatures import OpSignature


def _printed(text: str):
    """The parse result of `text` (which must verify) and its custom-form print."""
    result = parse_and_verify(text)
    assert result.ok, [d.format() for d in result.diagnostics]
    return result, to_text(result)


def _roundtrip(body: str, args: str) -> str:
    text = f"func.func @f({args}) {{\n{body}  return\n}}\n"
    result, printed = _printed(text)
    again = parse_and_verify(printed)
    assert again.ok and to_text(again) == printed
    generic = parse_and_verify(to_text(result, generic=True))  # the custom form from the generic one
    assert generic.ok and to_text(generic) == printed
    return printed


def _ops(printed: str) -> list[str]:
    return [line.strip() for line in printed.splitlines()[2:-3]]


_ARGS = ("%a: i32, %b: i32, %x: f32, %y: f32, %c: i1, %t: tensor<4x?xf32>, %i: index, %m: memref<4x?xf32>, "
         "%s: tensor<1xindex>")


def _family_samples():
    """One line per op of every arith and math family, in the custom form MLIR prints."""
    lines = []
    for n in arith.INT_BINARY:
        lines.append(f"%r_{n} = arith.{n} %a, %b : i32")
    for n in arith.FLOAT_BINARY:
        lines.append(f"%r_{n} = arith.{n} %x, %y fastmath<nnan,ninf> : f32")
    lines += ["%neg = arith.negf %x : f32",
              "%lo:2 = arith.mulsi_extended %a, %b : i32", "%ulo:2 = arith.mului_extended %a, %b : i32",
              "%sum:2 = arith.addui_extended %a, %b : i32, i1",
              "%ci = arith.cmpi uge, %a, %b : i32", "%cf = arith.cmpf une, %x, %y fastmath<fast> : f32",
              "%s1 = arith.select %c, %a, %b : i32",
              "%w = arith.extsi %a : i32 to i64", "%w2 = arith.extui %a nneg : i32 to i64",
              "%n = arith.trunci %w overflow<nsw> : i64 to i32", "%h = arith.truncf %x downward : f32 to f16",
              "%e = arith.extf %h : f16 to f32", "%si = arith.sitofp %a : i32 to f32",
              "%ui = arith.uitofp %a : i32 to f32", "%fs = arith.fptosi %x : f32 to i32",
              "%fu = arith.fptoui %x : f32 to i32", "%ix = arith.index_cast %a : i32 to index",
              "%iu = arith.index_castui %a : i32 to index", "%bc = arith.bitcast %x : f32 to i32",
              "%sx = arith.scaling_extf %h, %h : f16, f16 to f32",
              "%st = arith.scaling_truncf %x, %x to_nearest_even : f32, f32 to f16"]
    for n in math.FLOAT_UNARY:
        lines.append(f"%m_{n} = math.{n} %x : f32")
    for n in math.INT_UNARY:
        lines.append(f"%m_{n} = math.{n} %a : i32")
    for n in math.FLOAT_BINARY:
        lines.append(f"%m_{n} = math.{n} %x, %y fastmath<contract> : f32")
    for n in math.CLASSIFY:
        lines.append(f"%m_{n} = math.{n} %x : f32")
    lines += ["%fma = math.fma %x, %y, %x : f32", "%pw = math.fpowi %x, %a : f32, i32",
              "%ip = math.ipowi %a, %b : i32", "%sin, %cos = math.sincos %x : f32"]
    return lines


def test_every_arith_and_math_op_prints_as_written():
    lines = _family_samples()
    printed = _roundtrip("".join(f"  {line}\n" for line in lines), _ARGS)
    assert _ops(printed) == lines
    declared = {n for n in (*arith.dialect.ops, *math.dialect.ops) if n != "arith.constant"}
    written = {line.split(" = ")[1].split(" ")[0] for line in lines}
    assert declared == written  # no op of the two dialects left untested


@pytest.mark.parametrize("line", [
    "%0 = tensor.empty(%i) {a} : tensor<4x?xf32>",
    "%0 = tensor.dim {b} %t, %i : tensor<4x?xf32>",
    "%0 = tensor.cast %t : tensor<4x?xf32> to tensor<?x?xf32>",
    "%0 = tensor.bitcast %t : tensor<4x?xf32> to tensor<4x?xi32>",
    "%0 = tensor.rank %t : tensor<4x?xf32>",
    "%0 = tensor.reshape %t(%s) : (tensor<4x?xf32>, tensor<1xindex>) -> tensor<?xf32>",
    "%0 = tensor.extract %t[%i, %i] : tensor<4x?xf32>",
    "%0 = tensor.insert %x into %t[%i, %i] : tensor<4x?xf32>",
    "%0 = tensor.from_elements %x, %y : tensor<2xf32>",
    "%0 = tensor.from_elements : tensor<0xf32>",
    "%0 = tensor.splat %x : tensor<4xf32>",
    "%0 = tensor.splat %x[%i] : tensor<4x?xf32>",
    "%0 = memref.load %m[%i, %i] nontemporal(true) alignment(16) {foo} : memref<4x?xf32>",
    "memref.store %x, %m[%i, %i] : memref<4x?xf32>",
    "%0 = memref.dim %m, %i : memref<4x?xf32>",
    "%0 = memref.cast %m : memref<4x?xf32> to memref<?x?xf32>",
    "memref.copy %m, %m : memref<4x?xf32> to memref<4x?xf32>",
    "%0 = memref.extract_aligned_pointer_as_index %m {x} : memref<4x?xf32> -> index",
    "cf.assert %c, \"a \\\"quoted\\\" message\"",
])
def test_other_formats_print_as_written(line):
    assert _ops(_roundtrip(f"  {line}\n", _ARGS)) == [line]


def test_successor_with_optional_operand_group():
    text = ("func.func @f(%a: i32) -> i32 {\n  cf.br ^bb1(%a, %a : i32, i32)\n"
            "^bb1(%x: i32, %y: i32):\n  cf.br ^bb2 {w}\n^bb2:\n  return %a : i32\n}\n")
    printed = to_text(parse_and_verify(text))
    assert "cf.br ^bb1(%a, %a : i32, i32)\n" in printed and "cf.br ^bb2 {w}\n" in printed
    br = parse_and_verify(text).module.regions[0].blocks[0].ops[0].regions[0].blocks[0].ops[0]
    assert br.operands_named("destOperands") == br.operands and len(br.successors) == 1


@pytest.mark.parametrize("line, message", [
    ("%0 = arith.cmpi less, %a, %b : i32", 'unknown comparison predicate "less"'),
    ("%0 = arith.addf %x, %y overflow<nsw> : f32", "'arith.addf' has no 'overflow' flag"),
    ("%0 = math.absi %a fastmath<fast> : i32", "'math.absi' has no 'fastmath' flag"),
    ("%0 = tensor.extract %x[] : f32", "expected a tensor type, got f32"),
    ("%0 = memref.load %x[] : f32", "expected a memref type, got f32"),
    ("%0 = arith.select %c, %a, %b : i1, i1, i32", "expected one or two types"),
    ("%0 = tensor.reshape %t(%s) : (tensor<4x?xf32>) -> tensor<?xf32>", "2 operands present, but expected 1"),
    ("%0 = tensor.reshape %t(%s) : (tensor<4x?xf32>, tensor<1xindex>) -> (tensor<?xf32>, tensor<?xf32>)",
     "expected 1 result type, got 2"),
    ("%0 = arith.addi %a, %b {overflowFlags = #arith.overflow<nsw>} : i32",
     "inherent attribute 'overflowFlags' cannot be parsed from attr-dict"),
    ("%0 = memref.load %m[%i, %i] alignment(4) {alignment = 8} : memref<4x?xf32>",
     "attribute 'alignment' given twice"),
])
def test_bad_input_gets_a_diagnostic(line, message):
    result = parse_and_verify(f"func.func @f({_ARGS}) {{\n  {line}\n  return\n}}\n")
    assert not result.ok
    assert message in result.diagnostics[0].message


def test_named_access():
    text = (f"func.func @f({_ARGS}) {{\n  %s:2 = arith.addui_extended %a, %b : i32, i1\n"
            "  %v = memref.load %m[%i, %b2] : memref<4x?xf32>\n  %p = arith.cmpi slt, %a, %b : i32\n  return\n}\n")
    text = text.replace("%b2", "%i")
    body = parse_and_verify(text).module.regions[0].blocks[0].ops[0].regions[0].blocks[0]
    add, load, cmp = body.ops[:3]
    a, b = body.arguments[:2]
    assert add.operand("lhs") is a and add.operand("rhs") is b
    assert add.result_named("overflow") is add.results[1] and add.result_named("overflow").type == T.i1
    assert load.operand("memref") is body.arguments[7]
    assert load.operands_named("indices") == [body.arguments[6]] * 2
    assert cmp.attr("predicate").value == arith.CMPI_PREDICATES.index("slt") and cmp.attr("fastmath") is None
    with pytest.raises(KeyError):
        add.operand("memref")
    with pytest.raises(KeyError):
        load.operand("indices")  # a group of two is no single operand


def test_segment_sizes_split_two_variadic_groups():
    sig = OpSignature.of(("cond", "then*", "else*"))
    assert [g.name for g in sig.operands] == ["cond", "then", "else"]
    values = [Value(T.i1)] + [Value(T.i32) for _ in range(5)]
    op = Operation("test.two_groups", values,
                   attributes={"operandSegmentSizes": DenseArrayAttr(T.i32, (1, 2, 3))})
    with pytest.raises(KeyError):  # no registry declares the op yet
        op.operand("cond")
    test = Dialect("test")
    test.op("test.two_groups", names=sig)
    registry = Registry(builtin=(), dialects=[test])  # the op's names are its declaration's
    assert registry.signature("test.two_groups") is sig
    assert op.operand("cond") is values[0]
    assert op.operands_named("then") == values[1:3] and op.operands_named("else") == values[3:]
    del op.attributes["operandSegmentSizes"]
    with pytest.raises(KeyError):
        op.operands_named("then")


def test_a_single_operand_ahead_of_the_variadic_groups_is_found_by_place():
    """`memref.subview`'s source needs no operandSegmentSizes (a pass may build one without);
    its offsets, after it, do."""
    from mlirtext.dialects.registry import builtin_registry
    assert builtin_registry().signature("memref.subview") is builtin_registry().lookup("memref.subview").names
    values = [Value(T.MemRefType((4,), T.f32)), Value(T.index)]
    op = Operation("memref.subview", values)
    assert op.operand("source") is values[0]
    with pytest.raises(KeyError):
        op.operands_named("offsets")
    op.attributes["operandSegmentSizes"] = DenseArrayAttr(T.i32, (1, 1, 0, 0))
    assert op.operands_named("offsets") == values[1:] and op.operands_named("strides") == []


@pytest.mark.parametrize("text, problem", [
    ("$lhs `,` $nope attr-dict", "'$nope' is no operand"),
    ("$lhs^ attr-dict", "outside an optional group"),
    ("($lhs attr-dict", "unclosed optional group"),
    ("($lhs)? attr-dict", "needs an anchor"),
    ("$lhs custom<Missing> attr-dict", "no custom directive 'Missing'"),
    ("$lhs attr-dict `:` type($lhs)", "neither written nor inferred"),
])
def test_malformed_formats_are_refused(text, problem):
    with pytest.raises(FormatError, match=problem.replace("$", r"\$")):
        declare_family(Dialect("test"), "bad", ["test.bad"], text, operands=("lhs",), results=("result",))


def test_a_custom_ref_must_name_an_operand():
    types = Custom("type", lambda ctx, name, t, tokens: ([t] * len(tokens), t), lambda p, op: ("", ()))
    with pytest.raises(FormatError, match=r"ref\(\) names no operand"):
        declare_family(Dialect("test"), "bad", ["test.bad"], "$lhs attr-dict `:` custom<T>(ref($nope), type($lhs), "
                       "type($result))", operands=("lhs*",), results=("result",), custom={"T": types})


def test_a_variadic_operand_before_a_comma_takes_each_comma():
    """`%a, %b, dim = 0`: each value with its comma (MLIR's custom<VariadicOperandWithAttribute>), the
    one grammar an LALR(1) parser can tell from a comma list; no stray comma without values."""
    rules = dict(stablehlo.dialect.format_grammar())
    assert rules["stablehlo_concatenate"].startswith(
        'stablehlo_concatenate: "stablehlo.concatenate" [value_uses_comma] "dim" "=" number')
    text = ("func.func @f(%a: tensor<2xf32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.concatenate %a, %a, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>\n"
            "  %1 = stablehlo.concatenate dim = 0 : () -> tensor<4xf32>\n"
            "  return %0 : tensor<4xf32>\n}\n")
    result = parse_and_verify(text)
    assert [d.message for d in result.diagnostics] == ["'stablehlo.concatenate' op expected 1 or more operands, "
                                                       "but found 0"]
    printed = to_text(result)
    assert "stablehlo.concatenate %a, %a, dim = 0 :" in printed and "stablehlo.concatenate dim = 0 :" in printed


def test_format_elements_and_generated_rule():
    elements = parse_format("$memref `[` $indices `]` (`x` $a^)? attr-dict `:` type($memref)")
    assert [e.kind for e in elements] == ["ref", "literal", "ref", "literal", "optional", "attr-dict", "literal",
                                          "type"]
    assert elements[4].anchor == "a" and [e.kind for e in elements[4].body] == ["literal", "ref"]
    rules = dict(arith.dialect.format_grammar())
    # the rule the hand-written grammar had, generated
    assert rules["arith_binary"].splitlines()[0] == \
        'arith_binary: arith_binary_name VALUE_ID "," VALUE_ID [arith_flags] [attr_dict] ":" type'
    assert dict(memref.dialect.format_grammar())["memref_load"].splitlines()[0] == (
        'memref_load: "memref.load" VALUE_ID "[" [value_uses] "]" [memref_nontemporal] '
        '[memref_access_alignment] [attr_dict] ":" type')
    assert dict(tensor.dialect.format_grammar())["tensor_splat"].splitlines()[0] == \
        'tensor_splat: "tensor.splat" VALUE_ID ["[" [value_uses] "]"] [attr_dict] ":" type'
    assert dict(cf.dialect.format_grammar())["cf_br"].splitlines()[0] == \
        'cf_br: "cf.br" CARET_ID ["(" [value_uses] ":" [types] ")"] [attr_dict]'


def test_scf_terminators_with_optional_operand_groups():
    text = (
        "func.func @w(%n: i32) -> i32 {\n"
        "  %x = scf.while (%v = %n) : (i32) -> i32 {\n"
        "    %c = arith.cmpi slt, %v, %n : i32\n"
        "    scf.condition(%c) {a} %v : i32\n"
        "  } do {\n"
        "  ^bb0(%v: i32):\n"
        "    scf.yield {tag} %v : i32\n"
        "  }\n"
        "  return %x : i32\n}\n")
    result, printed = _printed(text)
    # (the two regions are siblings: each keeps its own %v, as in MLIR)
    assert "scf.condition(%c) {a} %v : i32\n" in printed and "scf.yield {tag} %v : i32\n" in printed
    cond = next(op for op in result.module.walk() if op.name == "scf.condition")
    assert cond.operand("condition").type == T.i1 and len(cond.operands_named("args")) == 1
    assert to_text(parse_and_verify(to_text(result, generic=True))) == printed


def test_call_in_both_spellings_prints_with_the_prefix():
    text = ('func.func private @ext(i32, f32) -> (i32, f32)\n'
            'func.func private @"quoted name"()\n'
            'func.func @g(%a: i32, %x: f32) -> i32 {\n'
            '  %r:2 = func.call @ext(%a, %x) {tag} : (i32, f32) -> (i32, f32)\n'
            '  %s:2 = call @ext(%a, %x) : (i32, f32) -> (i32, f32)\n'
            '  call @"quoted name"() : () -> ()\n'
            '  return %r#0 : i32\n}\n')
    result, printed = _printed(text)
    assert "%r:2 = func.call @ext(%a, %x) {tag} : (i32, f32) -> (i32, f32)\n" in printed
    assert "%s:2 = func.call @ext(%a, %x) : (i32, f32) -> (i32, f32)\n" in printed
    assert 'func.call @"quoted name"() : () -> ()\n' in printed
    call = next(op for op in result.module.walk() if op.name == "func.call")
    assert call.attr("callee").root == "ext" and len(call.operands_named("operands")) == 2
    assert [s[2] for s in result.state.symbol_uses if s[2] == ["ext"]] == [["ext"], ["ext"]]
    bad = parse_and_verify(text.replace("call @ext(%a, %x) :", "call @ext(%a) :"))
    assert "1 operands present, but expected 2" in bad.diagnostics[0].message


def test_every_declared_format_compiles():
    """Callbacks and printers are compiled on first use: compile all of them here, so a
    format no other test parses still cannot hide a bad generated line."""
    from mlirtext.dialects import DIALECTS
    formats = [f for d in DIALECTS for f in d.formats]
    assert len(formats) >= 30
    for f in formats:
        assert callable(f.callback) and callable(f._printer), f.rule
        assert all(f.rule in dict(d.format_grammar()) for d in DIALECTS if f in d.formats)


def test_region_terminators_of_tensor_pad_and_scf_reduce():
    text = ("func.func @pr(%t: tensor<4xf32>, %n: index, %x: f32) -> f32 {\n"
            "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
            "  %p = tensor.pad %t low[1] high[2] {\n  ^bb0(%i: index):\n    tensor.yield %x : f32\n"
            "  } : tensor<4xf32> to tensor<7xf32>\n"
            "  %r = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%x) -> f32 {\n"
            "    %e = tensor.extract %t[%i] : tensor<4xf32>\n    scf.reduce(%e : f32) {\n"
            "    ^bb0(%a: f32, %b: f32):\n      %s = arith.addf %a, %b : f32\n"
            "      scf.reduce.return %s : f32\n    }\n  }\n  return %r : f32\n}\n")
    result, printed = _printed(text)
    assert "    tensor.yield %x : f32\n" in printed and "scf.reduce.return %s : f32\n" in printed
    two = parse_and_verify(text.replace("scf.reduce.return %s : f32",
                                        '"scf.reduce.return"(%s, %s) : (f32, f32) -> ()'))
    assert "expected 1 operands, but found 2" in two.diagnostics[0].message


def test_a_kind_that_checks_its_attribute_leaves_another_to_the_dictionary():
    """An optional group anchored on an attribute whose kind says which attributes it writes
    (`accepts`: tosa's keyword items) is printed only for those; another stays in `attr-dict`."""
    from mlirtext.dialects import tosa
    assert dict(tosa.dialect.format_grammar())["tosa_transpose"].splitlines()[0] == \
        'tosa_transpose: "tosa.transpose" VALUE_ID ["perms" "(" attribute ")"] [attr_dict] ":" function_type'
    line = "%0 = tosa.transpose %a perms([1, 0]) {note} : (tensor<2x3xf32>) -> tensor<3x2xf32>"
    assert _roundtrip(f"  {line}\n", "%a: tensor<2x3xf32>").splitlines()[2].strip() == line
    generic = ('func.func @f(%a: tensor<2x3xf32>) {\n  %0 = "tosa.transpose"(%a) {perms = array<i64: 1, 0>} : '
               '(tensor<2x3xf32>) -> tensor<3x2xf32>\n  return\n}\n')
    assert "tosa.transpose %a {perms = array<i64: 1, 0>} :" in to_text(parse(generic))
