"""Robustness: whatever the input, parsing ends in diagnostics, in bounded time, never an exception.

Hypothesis mutates real corpus cases at the token level (delete, swap,
duplicate, insert a random token, truncate, splice in binary bytes). For every
input, `parse_and_verify` and printing must not raise; every diagnostic must
point inside the text and format; no diagnostic may be an "internal error"
(the driver's report of a callback that crashed); each input must finish
within a time bound. An input that is still accepted must print, and its print
must parse and verify again.

Plain tests cover the extremes: a 5 MB line, 2,000 nested regions, deeply
nested attributes and types, unterminated constructs at end of input, empty
input, and files full of broken lines; and check that error recovery reports
independent errors once each, keeps the ops around them, and does not cascade.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlirtext.api import parse_and_verify, parse_chunks, to_text
from mlirtext.syntax.context import MAX_REGION_DEPTH
from mlirtext.syntax.lalr import MAX_NESTING

from . import corpus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Seconds one corpus-sized input may take: parse, verify, print, reparse. The
#: slowest mutated case measured about 0.15 s here; the rest is headroom for a
#: slow or busy CI machine. Only a hang or quadratic behaviour should trip it.
CASE_SECONDS = 3.0
#: Seconds for one multi-megabyte input (about 3 s measured for 5 MB of dense<>).
BIG_SECONDS = 60.0
FIVE_MB = 5 * 1024 * 1024
SEVERITIES = {"error", "warning", "note", "remark"}

#: Deterministic and fast enough for CI; no example database on disk.
FUZZ = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.fixture(scope="module", autouse=True)
def _warm_parser():
    """Load the parser tables once, so no input's time bound pays the start-up."""
    parse_and_verify("", "<warm-up>")


# ---- checking one input ----------------------------------------------------------------
def check_input(text: str, seconds: float = CASE_SECONDS, round_trip: bool = True):
    """Run the whole pipeline on `text`; assert the robustness properties; the result."""
    began = time.perf_counter()
    result = parse_and_verify(text, "fuzz.mlir")
    check_diagnostics(result, text)
    if not result.ok:
        assert any(d.severity == "error" for d in result.diagnostics)
    else:
        printed = to_text(result)
        generic = to_text(result, generic=True)
        if round_trip:
            for label, again in (("custom", printed), ("generic", generic)):
                reparsed = parse_and_verify(again, f"printed-{label}.mlir")
                check_diagnostics(reparsed, again)
                assert reparsed.ok, (f"our {label} print of an accepted input does not parse:\n"
                                     + _describe(reparsed) + f"\n--- input:\n{text}\n--- printed:\n{again}")
    elapsed = time.perf_counter() - began
    assert elapsed < seconds, f"{elapsed:.2f} s (bound {seconds} s) for:\n{text[:2000]}"
    return result


def check_diagnostics(result, text: str) -> None:
    for d in result.diagnostics:
        assert d.severity in SEVERITIES
        assert "internal error" not in d.message, d.format() + f"\n--- input:\n{text}"
        for one in (d, *d.notes):
            if one.span is not None:
                assert 0 <= one.span.start <= one.span.end <= len(one.span.source.text), (
                    f"span {one.span.start}..{one.span.end} outside the text ({len(text)} chars): {one.message}")
        assert d.format()
        assert d.format("renamed.mlir")


def _describe(result) -> str:
    return "\n".join(d.format() for d in result.diagnostics)


def errors(result) -> list[str]:
    return [d.message for d in result.diagnostics if d.severity == "error"]


def op_names(result) -> list[str]:
    return [op.name for op in result.module.walk()]


# ---- token-level mutation ---------------------------------------------------------------
#: MLIR tokens, roughly: enough to mutate at token boundaries, not to parse.
_TOKEN = re.compile(r'''%[\w$.\-]+(?:\#\d+)?|@"(?:[^"\\\n]|\\.)*"|@[\w$.\-]+|"(?:[^"\\\n]|\\.)*"
    |\^[\w$.\-]+|[#!][A-Za-z_][\w$.\-]*|\d[\w.]*|[A-Za-z_][\w$.]*|->|::|\{-\#|\#-\}|\.\.\.|\S''', re.X)

#: Tokens to insert: punctuation, keywords, ids, and the starts of bracketed bodies.
VOCABULARY = (
    "(", ")", "{", "}", "[", "]", "<", ">", ",", ":", "=", "->", "::", "?", "*", "-", "+", "|", "...",
    "%0", "%arg0", "%x:2", "%1#0", "@f", '@"q"', "^bb0", "^bb1:", "#map", "!t", "#d.a<1>", "!d.t<x>",
    "i32", "i1", "f32", "bf16", "index", "none", "tensor", "memref", "vector", "complex", "tuple",
    "tensor<4x?xf32>", "4x?x", "x", "0x", "0x1F", "1.5e3", "-1", "0", "true", "false", "unit",
    "dense", "dense<", "dense<1>", "dense_resource", "array", "array<i32: 1>", "affine_map<",
    "loc", "loc(", 'loc("f":1:2)', "distinct[", "{-#", "#-}", '"', '"s"', '"test.op"', "\\",
    "func.func", "func.return", "return", "arith.constant", "arith.addi", "builtin.module", "module",
    "ins", "outs", "to", "attributes", "private", "//", "\n", "\t", "\x00", "\u00e9", "\u00b9", "\ufffd",
)


def tokens(text: str) -> list[tuple[str, str]]:
    """(whitespace before, token) pairs; the last holds the trailing whitespace."""
    out, pos = [], 0
    for m in _TOKEN.finditer(text):
        out.append((text[pos:m.start()], m.group()))
        pos = m.end()
    out.append((text[pos:], ""))
    return out


def untokens(toks) -> str:
    return "".join(space + tok for space, tok in toks)


def _decode(data: bytes, how: str) -> str:
    if how == "latin-1":
        return data.decode("latin-1")
    return data.decode("utf-8", errors=how)  # "replace": U+FFFD; "surrogateescape": lone surrogates


@st.composite
def mutation(draw, toks: list) -> list:
    """One edit of the token list."""
    n = len(toks)
    i = draw(st.integers(0, n - 1))
    kind = draw(st.sampled_from(("delete", "swap", "duplicate", "insert", "truncate", "bytes")))
    toks = list(toks)
    if kind == "delete" and n > 1:
        del toks[i]
    elif kind == "swap":
        j = draw(st.integers(0, n - 1))
        (si, ti), (sj, tj) = toks[i], toks[j]
        toks[i], toks[j] = (si, tj), (sj, ti)
    elif kind == "duplicate":
        toks.insert(i, toks[i])
    elif kind == "insert":
        toks.insert(i, (draw(st.sampled_from(("", " ", "\n"))), draw(st.sampled_from(VOCABULARY))))
    elif kind == "truncate":
        text = untokens(toks)
        toks = tokens(text[:draw(st.integers(0, len(text)))])
    else:
        text = untokens(toks)
        at = draw(st.integers(0, len(text)))
        junk = _decode(draw(st.binary(min_size=1, max_size=16)),
                       draw(st.sampled_from(("latin-1", "replace", "surrogateescape"))))
        toks = tokens(text[:at] + junk + text[at:])
    return toks


def _seed_cases():
    """Corpus cases small enough to fuzz quickly, valid and invalid alike, in a fixed order."""
    if not corpus.available():
        return []
    return sorted((c for c in corpus.cases() if len(c.text) <= 8000), key=lambda c: c.case_id)


SEEDS = _seed_cases()
needs_corpus = pytest.mark.skipif(not SEEDS, reason="no corpus")


@st.composite
def mutated_case(draw) -> str:
    case = draw(st.sampled_from(SEEDS))
    toks = tokens(case.text)
    for _ in range(draw(st.integers(1, 4))):
        toks = draw(mutation(toks))
    return untokens(toks)


@needs_corpus
@FUZZ
@given(mutated_case())
def test_mutated_corpus_cases(text):
    check_input(text)


@needs_corpus
@settings(FUZZ, max_examples=60)
@given(st.sampled_from(SEEDS) if SEEDS else st.nothing(), st.data())
def test_truncated_corpus_cases(case, data):
    """Cut anywhere: unterminated strings, brackets and regions at end of input."""
    text = case.text
    check_input(text[:data.draw(st.integers(0, len(text)), label="cut")])


@needs_corpus
@settings(FUZZ, max_examples=40)
@given(mutated_case(), st.data())
def test_split_input_chunks(text, data):
    """`--split-input-file`: chunks parse with offsets into the whole file."""
    lines = text.split("\n")
    for _ in range(data.draw(st.integers(1, 3), label="markers")):
        lines.insert(data.draw(st.integers(0, len(lines)), label="at"), "// -----")
    text = "\n".join(lines)
    began = time.perf_counter()
    for result in parse_chunks(text, "fuzz.mlir", True):
        check_diagnostics(result, text)
        if result.ok:
            to_text(result)
    assert time.perf_counter() - began < CASE_SECONDS


@settings(FUZZ, max_examples=100)
@given(st.lists(st.tuples(st.sampled_from(("", " ", "\n")), st.sampled_from(VOCABULARY)), max_size=60))
def test_token_soup(toks):
    check_input(untokens(toks))


@settings(FUZZ, max_examples=60)
@given(st.binary(max_size=400), st.sampled_from(("latin-1", "replace", "surrogateescape")))
def test_binary_input(data, how):
    check_input(_decode(data, how))


def test_cli_rejects_invalid_utf8(tmp_path):
    """Raw bytes reach only the command line (the API takes str): exit 1, a clear message."""
    path = tmp_path / "bad.mlir"
    path.write_bytes(b'func.func @f() {\n  "test.op"() {a = "\xff\xfe\xc3("} : () -> ()\n  return\n}\n')
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "mlirtext", "opt", str(path)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "not UTF-8" in proc.stderr and ":2:" in proc.stderr, proc.stderr
    assert proc.stdout == ""


# ---- extremes ---------------------------------------------------------------------
def _nested_regions(depth: int, sep: str = "\n") -> str:
    """`depth` generic ops, each holding the next in its region, each defining %v."""
    return (f'"test.op"() ({{{sep}%v = "test.def"() : () -> i32{sep}' * depth + '"test.end"() : () -> ()' + sep
            + f"}}) : () -> (){sep}" * depth)


def test_five_megabyte_garbage_line():
    text = ("%0 = ) foo ( }} {{ ] [ , : -> @x ^bb \"s\" #a !b <> " * (FIVE_MB // 48))[:FIVE_MB]
    result = check_input(text, BIG_SECONDS)
    assert not result.ok


def test_five_megabyte_closing_braces():
    result = check_input("}" * FIVE_MB, BIG_SECONDS)
    assert errors(result) == ["unexpected '}'"]


def test_five_megabyte_dense_constant_line():
    n = FIVE_MB // 2
    text = (f"func.func @f() -> tensor<{n}xi8> {{\n  %c = arith.constant dense<["
            + ",".join("1" for _ in range(n)) + f"]> : tensor<{n}xi8>\n  return %c : tensor<{n}xi8>\n}}\n")
    result = check_input(text, BIG_SECONDS, round_trip=False)
    assert result.ok, _describe(result)
    assert len(to_text(result)) > n


@pytest.mark.parametrize("sep", ["\n", " "], ids=["lines", "one-line"])
def test_two_thousand_nested_regions(sep):
    """One clear error at the 201st level; no RecursionError, no cascade of redefinitions."""
    result = check_input(_nested_regions(2000, sep), BIG_SECONDS)
    assert errors(result) == [f"regions nested deeper than {MAX_REGION_DEPTH} levels are not supported"]


@pytest.mark.parametrize("module", [False, True], ids=["implicit module", "explicit module"])
def test_nesting_at_the_limits_round_trips(module):
    """The deepest regions and brackets we accept still print and parse back (the
    print adds `module {`, which must not push it over the limit)."""
    inner = "[" * (MAX_NESTING - 2) + "]" * (MAX_NESTING - 2)
    text = _nested_regions(MAX_REGION_DEPTH).replace('"test.end"() :', f'"test.end"() {{a = {inner}}} :')
    result = check_input(f"module {{\n{text}}}\n" if module else text, BIG_SECONDS)
    assert result.ok, _describe(result)
    deeper = check_input(f"module {{\n{_nested_regions(MAX_REGION_DEPTH + 1)}}}\n" if module
                         else _nested_regions(MAX_REGION_DEPTH + 1))
    assert len(errors(deeper)) == 1 and "nested deeper" in errors(deeper)[0]


DEEP = 5000
DEEP_BRACKETS = {
    "array": '"test.op"() {a = ' + "[" * DEEP + "]" * DEEP + "} : () -> ()\n",
    "dictionary": '"test.op"() {a = ' + "{b = " * DEEP + "1" + "}" * DEEP + "} : () -> ()\n",
    "tuple": '"test.op"() : () -> ' + "tuple<" * DEEP + "i32" + ">" * DEEP + "\n",
    "function type": '"test.op"() : () -> ' + "(() -> " * DEEP + "i32" + ")" * DEEP + "\n",
    "tensor": '"test.op"() : () -> ' + "tensor<" * DEEP + "i32" + ">" * DEEP + "\n",
}


@pytest.mark.parametrize("text", DEEP_BRACKETS.values(), ids=DEEP_BRACKETS.keys())
def test_deeply_nested_attributes_and_types(text):
    result = check_input(text + '"test.after"() : () -> ()\n', BIG_SECONDS)
    assert errors(result) == [f"brackets nested deeper than {MAX_NESTING} levels are not supported"]
    assert "test.after" in op_names(result)


def test_deeply_nested_dense_literal():
    text = ("%c = arith.constant dense<" + "[" * 3000 + "1" + "]" * 3000 + "> : tensor<"
            + "1x" * 3000 + "i32>\n")
    result = check_input(text, BIG_SECONDS)
    assert errors(result) == ["elements literal nested too deeply"]


UNTERMINATED = {
    "string": '"test.op"() {a = "abc',
    "string in symbol": 'func.func @"f',
    "attribute array": '"test.op"() {a = [1, 2',
    "shape": '%x = "test.op"() : () -> tensor<4x',
    "dense": '%c = arith.constant dense<[1, 2',
    "location": '"test.op"() : () -> () loc("f":1',
    "dialect attribute": '"test.op"() {a = #d.a<[1, {',
    "metadata": "{-#\n  dialect_resources: {",
    "region": "func.func @f() {\n  return",
    "generic region": '"test.op"() ({\n  "test.inner"() : () -> ()\n',
    "block label": 'func.func @f() {\n^bb0(%a: i32',
    "alias": "#map = affine_map<(d0) -> (d0",
}


@pytest.mark.parametrize("text", UNTERMINATED.values(), ids=UNTERMINATED.keys())
def test_unterminated_at_end_of_input(text):
    result = check_input(text)
    assert len(errors(result)) == 1, _describe(result)


@pytest.mark.parametrize("text", ["", "\n\n", "// only a comment\n  // and another", "// -----\n"],
                         ids=["empty", "blank lines", "comments", "split marker"])
def test_nothing_to_parse(text):
    result = check_input(text)
    assert result.ok and op_names(result) == ["builtin.module"]


def test_file_of_closing_braces():
    result = check_input("}\n" * 2000)
    assert errors(result) == ["unexpected '}'"]


REPEATED_BROKEN_LINES = {
    "unclosed loc": '"test.op"() : () -> () loc(\n',
    "unclosed dialect attribute": '%0 = "test.op"() {v = #d.a<\n',
    "unclosed affine map": '"test.op"() {v = affine_map<(d0) -> (d0\n',
    "unclosed dense": "x = dense<\n",
    "unclosed metadata": "{-#\n",
    "unclosed string": '"\n',
    "unbalanced bracket": '"test.op"() : () -> () loc(]\n',
}


@pytest.mark.parametrize("line", REPEATED_BROKEN_LINES.values(), ids=REPEATED_BROKEN_LINES.keys())
def test_many_broken_lines_stay_linear(line):
    """Recovery restarts on every line; an unclosed body must not be rescanned to the end each time."""
    result = check_input(line * 20000, BIG_SECONDS)
    assert 1 <= len(result.diagnostics) <= 101  # the driver gives up after 100 errors


# ---- error recovery ---------------------------------------------------------------
def test_two_broken_lines_give_two_errors():
    result = check_input("""func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.muli %0, : i32
  %2 = arith.addi %1, %0 : i32
  %3 = arith.subi %2 %a : i32
  %4 = arith.addi %3, %a : i32
  return %4 : i32
}
""")
    assert len(errors(result)) == 2, _describe(result)
    assert [d.line_col[0] for d in result.diagnostics] == [3, 5]
    # The ops around the broken lines are built; uses of %1 and %3 are not reported again.
    assert op_names(result) == ["builtin.module", "func.func", "arith.addi", "arith.addi", "arith.addi",
                                "func.return"]


@pytest.mark.parametrize("header", [
    "func.func @f(%a: i32, %b: ) -> i32 {",
    "func.func @f(%a: i33 -> i32 {",
    "func.func @f(%a: i32) -> i32 attributes {x = [1, } {",
    "func.func @f(%a: i32) -> tensor<4x {",
])
def test_broken_function_header_does_not_cascade(header):
    result = check_input(header + """
  %0 = arith.addi %a, %a : i32
  %1 = arith.muli %0, %0 : i32
  return %1 : i32
}
func.func @g() {
  return
}
""")
    assert len(errors(result)) == 1, _describe(result)
    assert result.diagnostics[0].line_col[0] == 1
    funcs = [op.sym_name for op in result.module.walk() if op.name == "func.func"]
    assert funcs == ["g"]


def test_duplicate_argument_keeps_the_following_functions():
    result = check_input("""func.func @f(%a: i32, %a: i32) {
  return
}
func.func @g(%b: i32) -> i32 {
  %c = arith.addi %b, %b : i32
  return %c : i32
}
""")
    assert errors(result) == ["redefinition of SSA value '%a'"]
    funcs = [op.sym_name for op in result.module.walk() if op.name == "func.func"]
    assert funcs == ["f", "g"]


def test_error_in_nested_region_keeps_the_enclosing_ops():
    result = check_input("""func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = "test.op"() ({
    %5 = arith.addi %0, : i32
  }) : () -> i32
  return %1 : i32
}
""")
    assert len(errors(result)) == 1, _describe(result)
    assert op_names(result) == ["builtin.module", "func.func", "arith.addi", "test.op", "func.return"]


def test_bad_attribute_is_reported_once():
    """The op whose attribute failed does not add its own complaint about the missing value."""
    result = check_input("%c = arith.constant dense<[1, 2]> : tensor<3xi32>\n%d = arith.constant 1 : i32\n")
    assert len(errors(result)) == 1, _describe(result)
    assert "does not match type" in errors(result)[0]


def test_non_ascii_digits_in_a_type():
    """`str.isdigit` accepts '¹'; the type lexer must not pass it to int()."""
    result = check_input('"test.op"() : () -> i6\u00b94\n')
    assert not result.ok
