"""The parser's fast paths mean exactly what the long way means.

`tensor<4x8xf32>` is lexed as one SHAPED_TYPE token where a type is expected;
whitespace after a token is skipped without running the SKIP regex when it can
be; the verifier skips elementwise checks that cannot fail. Each must give the
IR and the diagnostics the general path gives.
"""
from __future__ import annotations

import gc
import re
import sys

import pytest

from mlirtext import api
from mlirtext.syntax.gc_pause import gc_paused
from mlirtext.syntax.lexer import SKIP_START, Lexer
from mlirtext.syntax.parser import _driver, parse


def _arg_type(type_text: str):
    result = parse(f"func.func private @f(%a: {type_text})\n")
    assert result.ok, [d.format() for d in result.diagnostics]
    return result.module.regions[0].blocks[0].ops[0].attributes["function_type"].type.inputs[0]


@pytest.mark.parametrize("short, long", [
    ("tensor<4x8xf32>", "tensor<4x8xf32 >"),
    ("tensor<f32>", "tensor< f32>"),
    ("tensor<?x3xi8>", "tensor<?x3xi8 >"),
    ("tensor<0x4xindex>", "tensor<0x4xindex >"),
    ("tensor<2xui16>", "tensor<2xui16 >"),
    ("memref<8x?xbf16>", "memref<8x?xbf16 >"),
    ("vector<4xi1>", "vector<4xi1 >"),
    ("tensor<1x2xf8E4M3FN>", "tensor<1x2xf8E4M3FN >"),
])
def test_one_token_type_is_the_spelled_out_type(short, long):
    lexer = Lexer(short, _driver().literals)
    assert lexer.token(0, {"SHAPED_TYPE": 0, "TENSOR": 0, "MEMREF": 0, "VECTOR": 0}).type == "SHAPED_TYPE"
    assert lexer.token(0, {"TENSOR": 0, "MEMREF": 0, "VECTOR": 0}).type != "SHAPED_TYPE"  # only where accepted
    fast, slow = _arg_type(short), _arg_type(long)
    assert fast == slow and str(fast) == short


@pytest.mark.parametrize("text, message, column", [
    ("vector<f32>", "vector types must have at least one dimension", 26),
    ("vector<?x4xf32>", "vector types must have static dimensions", 33),
    ("tensor<4xf3>", "unknown type 'f3'", 35),          # not a scalar: lexed the long way
    ("tensor<4xtensor>", "expected '<', found '>'", 41),  # a keyword where the element goes
])
def test_errors_are_those_of_the_long_form(text, message, column):
    result = parse(f"func.func private @f(%a: {text})\n")
    assert [(d.message, d.span.source.line_col(d.span.start)[1]) for d in result.diagnostics] == \
        [(message, column)]


def test_expected_lists_name_the_long_form_only():
    result = parse("func.func private @f(%a: )\n")
    assert result.diagnostics and all("SHAPED_TYPE" not in d.message for d in result.diagnostics)


def test_skip_start_holds_every_character_skip_can_start_with():
    spaces = {chr(c) for c in range(sys.maxunicode + 1) if re.match(r"\s", chr(c))}
    assert spaces <= SKIP_START and "/" in SKIP_START


def test_unusual_whitespace_between_tokens():
    result = parse("func.func @f(%a:\u3000i32)\u00a0->\x0bi32 {\n  return\t%a : i32 // note\n}\n")
    assert result.ok, [d.format() for d in result.diagnostics]


def test_aliases_defined_elsewhere_are_in_scope():
    defined = parse("!t = tensor<2xf32>\n#m = affine_map<(d0) -> (d0)>\n")
    attrs = {k: v for k, v in defined.aliases if k.startswith("#")}
    types = {k: v for k, v in defined.aliases if k.startswith("!")}
    piece = parse("func.func private @g(%a: !t)\n!u = i32\n", attr_aliases=attrs, type_aliases=types)
    assert piece.ok, [d.format() for d in piece.diagnostics]
    assert [name for name, _ in piece.aliases] == ["!u"]  # only its own
    assert not parse("func.func private @g(%a: !t)\n").ok


def test_gc_paused_restores_the_collector():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.parametrize("types, ok", [
    ("tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>", True),
    ("tensor<4xf32>, tensor<?xf32> -> tensor<4xf32>", True),
    ("tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>", False),
    ("tensor<4xf32>, tensor<4xf32> -> tensor<4xi32>", False),
])
def test_elementwise_verification(types, ok):
    ins, out = types.split(" -> ")
    text = (f"func.func @f(%a: {ins.split(', ')[0]}, %b: {ins.split(', ')[1]}) -> {out} {{\n"
            f"  %0 = stablehlo.add %a, %b : ({ins}) -> {out}\n  return %0 : {out}\n}}\n")
    result = api.parse_and_verify(text)
    assert result.ok == ok, [d.format() for d in result.diagnostics]
