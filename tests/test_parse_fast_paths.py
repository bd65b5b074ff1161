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


def _parse_summary(text: str):
    """What a parse produces, as comparable data: diagnostics, printed IR, spans and uses."""
    from mlirtext.syntax.parser import parse_file_chunks
    from mlirtext.syntax.printer import print_module
    out = []
    for result in parse_file_chunks(text, "t.mlir", True):
        ops = [] if result.module is None else list(result.module.walk())
        out.append((
            [(d.message, d.span.start, d.span.end) for d in result.diagnostics if d.span is not None],
            None if result.module is None else print_module(result.module),
            [(op.name, op.span and (op.span.start, op.span.end),
              op.name_span and (op.name_span.start, op.name_span.end),
              [r.span and (r.span.start, r.span.end) for r in op.results]) for op in ops],
            [(start, end) for start, end, _ in result.state.uses]))
    return out


def _fast_path_texts():
    from . import corpus
    texts = ["func.func @f(%a: tensor<4xf32>, %b: i32) -> (tensor<4xf32>, i32) {\n"
             "  %0:2 = \"t.op\"(%a, %b) {k = [1, -2], s = \"x\"} : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32)\n"
             "  %c = arith.constant dense<1.0> : tensor<4xf32>  // a comment\n"
             "  return %0#0, %b : tensor<4xf32>, i32\n}\n"]
    if corpus.available():
        names = sorted({case.file for case in corpus.cases()})
        texts += [corpus.file_text(name) for name in names[::12]]
    for text in list(texts):  # and broken: a character cut out, junk put in, the end cut off
        i = len(text) * 2 // 3
        texts += [text[:i] + text[i + 1:], text[:i] + " %% }{ -> :: " + text[i:], text[:i]]
    return texts


def test_tokens_the_driver_lexes_itself_mean_what_the_lexer_gives(monkeypatch):
    """The driver takes the commonest tokens (`lexer.FAST`) without calling `Lexer.token`:
    with that turned off, every parse gives the same IR, spans, uses and diagnostics."""
    from mlirtext.syntax import lalr
    texts = _fast_path_texts()
    fast = [_parse_summary(text) for text in texts]
    monkeypatch.setattr(lalr, "FAST", {})
    slow = [_parse_summary(text) for text in texts]
    assert len(texts) > 20
    for text, a, b in zip(texts, fast, slow):
        assert a == b, text[:200]


def test_a_vector_without_dimensions_is_a_0d_vector():
    """`vector<f32>` is MLIR's 0-D vector (the short form and the long form agree)."""
    for text in ("vector<f32>", "vector<[4]xf32>"):
        result = parse(f"func.func private @f(%a: {text})\n")
        assert result.ok, result.diagnostics
    [fn] = result.module.regions[0].blocks[0].ops
    assert str(fn.attributes["function_type"].type.inputs[0]) == "vector<[4]xf32>"
    result = parse("func.func private @f(%a: vector<f32>)\n")
    assert str(result.module.regions[0].blocks[0].ops[0].attributes["function_type"].type.inputs[0]) == "vector<f32>"
