"""How problems are shown (`file:line:col: error: msg`, the line, a caret, notes), and the
`mlirtext opt` command: --verify-diagnostics, --split-input-file, -o, stdin, --print-generic."""
from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

from mlirtext import cli
from mlirtext.api import parse_and_verify
from mlirtext.diagnostics import Diagnostic
from mlirtext.ir.source import SourceFile, Span

from .oracle import generic_forms

VALID = "func.func @f(%a: i32) -> i32 {\n  %b = arith.addi %a, %a : i32\n  return %b : i32\n}\n"


def run_cli(argv, capsys, stdin: str | None = None, monkeypatch=None):
    """(exit status, stdout, stderr) of `mlirtext ARGV` run in this process."""
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, text: str, name: str = "in.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---- the format ---------------------------------------------------------------------------
def test_format_header_line_caret():
    source = SourceFile("f.mlir", "module {\n  %x = foo bar\n}\n")
    at = source.text.index("foo")
    text = Diagnostic("error", "something is wrong", Span(source, at, at + 3)).format()
    assert text == "f.mlir:2:8: error: something is wrong\n  %x = foo bar\n       ^"


def test_format_notes_follow_the_error():
    source = SourceFile("f.mlir", "a\nbb\n")
    d = Diagnostic("error", "main", Span(source, 2, 3)).note("see here", Span(source, 0, 1))
    assert d.format().split("\n") == ["f.mlir:2:1: error: main", "bb", "^",
                                      "f.mlir:1:1: note: see here", "a", "^"]


def test_format_without_location():
    assert Diagnostic("error", "no place").format() == "mlirtext: error: no place"


def test_format_caret_keeps_tabs():
    source = SourceFile("t.mlir", "\t\tx y\n")
    at = source.text.index("y")
    lines = Diagnostic("error", "m", Span(source, at, at + 1)).format().split("\n")
    assert lines[0] == "t.mlir:1:5: error: m"
    assert lines[2] == "\t\t  ^"


def test_format_long_line_window():
    source = SourceFile("l.mlir", "x" * 500 + "HERE" + "y" * 500 + "\n")
    at = source.text.index("HERE")
    header, line, caret = Diagnostic("error", "m", Span(source, at, at + 4)).format().split("\n")
    assert header == "l.mlir:1:501: error: m"
    assert len(line) <= 200
    assert line[len(caret) - 1:].startswith("HERE")


def test_parse_error_format():
    result = parse_and_verify("func.func @f() {\n  %a = arith.addi %b, %b : i32\n  return\n}\n", "x.mlir")
    assert [d.format() for d in result.diagnostics] == [
        "x.mlir:2:19: error: use of undeclared SSA value name '%b'\n"
        "  %a = arith.addi %b, %b : i32\n"
        "                  ^"]


def test_verifier_error_with_note_format():
    text = "func.func @f() -> i32 {\n  %a = arith.addi %b, %b : i32\n  %b = arith.constant 1 : i32\n" \
           "  return %a : i32\n}\n"
    (d,) = parse_and_verify(text, "x.mlir").diagnostics
    assert d.format().split("\n") == [
        "x.mlir:2:8: error: 'arith.addi' op operand #0 does not dominate this use",
        "  %a = arith.addi %b, %b : i32",
        "       ^",
        "x.mlir:3:3: note: operand defined here",
        "  %b = arith.constant 1 : i32",
        "  ^"]


def test_cli_prints_diagnostics_on_stderr(tmp_path, capsys):
    path = write(tmp_path, "func.func @f() {\n  return %x : i32\n}\n")
    code, out, err = run_cli(["opt", path], capsys)
    assert code == 1 and out == ""
    assert err == (f"{path}:2:10: error: use of undeclared SSA value name '%x'\n"
                   "  return %x : i32\n"
                   "         ^\n")


# ---- --verify-diagnostics -------------------------------------------------------------------
ANNOTATED = textwrap.dedent("""\
    func.func @f() -> i32 {
      // expected-error@+1 {{does not dominate this use}}
      %a = arith.addi %b, %b : i32
      // expected-note@below {{operand defined here}}
      %b = arith.constant 1 : i32
      return %a : i32
    }

    // -----

    func.func @g() {
      %a = arith.constant 1 : i32  // expected-error {{block with no terminator}}
    }

    // -----

    func.func @h() {
      "func.return"() : () -> ()
      // expected-error@above {{must be the last operation}}
      %x = arith.constant 1 : i32
    }

    // -----
    func.func private @d()
    func.func private @d()
    // expected-error@-1 {{redefinition of symbol named 'd'}}

    // -----
    func.func @fine() {
      return
    }
    """)


def test_verify_diagnostics_all_met(tmp_path, capsys):
    path = write(tmp_path, ANNOTATED)
    code, out, err = run_cli(["opt", "--verify-diagnostics", "--split-input-file", path], capsys)
    assert (code, err) == (0, "")
    assert "@fine" in out  # the chunks without errors are still printed


def test_verify_diagnostics_unmet_expectation(tmp_path, capsys):
    text = "func.func @f() {\n  // expected-error@+1 {{this is not said}}\n  %a = arith.constant 1 : i32\n" \
           "  return\n}\n"
    path = write(tmp_path, text)
    code, out, err = run_cli(["opt", "--verify-diagnostics", path], capsys)
    assert code == 1
    assert err.startswith(f'{path}:2:6: error: expected error "this is not said" was not produced\n'
                          "  // expected-error@+1 {{this is not said}}\n"
                          "     ^")


def test_verify_diagnostics_unexpected_error(tmp_path, capsys):
    path = write(tmp_path, "func.func @f() {\n  %a = arith.constant 1 : i32\n}\n")
    code, out, err = run_cli(["opt", "--verify-diagnostics", path], capsys)
    assert code == 1
    assert err.startswith(f"{path}:2:8: error: unexpected error: 'arith.constant' op block with no "
                          "terminator")


def test_verify_diagnostics_wrong_line(tmp_path, capsys):
    text = "func.func @f() {\n  // expected-error@+2 {{block with no terminator}}\n" \
           "  %a = arith.constant 1 : i32\n}\n"
    path = write(tmp_path, text)
    code, out, err = run_cli(["opt", "--verify-diagnostics", path], capsys)
    assert code == 1
    assert "unexpected error" in err and "was not produced" in err


def test_verify_diagnostics_each_expectation_once(tmp_path, capsys):
    """Two expectations on one line need two errors there."""
    text = "func.func @f() {\n  // expected-error@+2 {{no terminator}}\n  // expected-error@+1 {{no terminator}}\n" \
           "  %a = arith.constant 1 : i32\n}\n"
    path = write(tmp_path, text)
    code, out, err = run_cli(["opt", "--verify-diagnostics", path], capsys)
    assert code == 1
    assert err.count("was not produced") == 1


def test_verify_diagnostics_unexpected_note_is_tolerated(tmp_path, capsys):
    """Notes need not be expected (their wording differs from MLIR's), but an expected
    note must be produced."""
    text = "func.func @f() -> i32 {\n  %a = arith.addi %b, %b : i32  // expected-error {{dominate}}\n" \
           "  %b = arith.constant 1 : i32\n  return %a : i32\n}\n"
    code, _, err = run_cli(["opt", "--verify-diagnostics", write(tmp_path, text)], capsys)
    assert (code, err) == (0, "")
    text2 = text.replace("return %a", "// expected-note@-1 {{no such note}}\n  return %a")
    code, _, err = run_cli(["opt", "--verify-diagnostics", write(tmp_path, text2, "b.mlir")], capsys)
    assert code == 1 and 'expected note "no such note" was not produced' in err


def test_verify_diagnostics_expectation_in_other_chunk_does_not_count(tmp_path, capsys):
    text = "func.func @f() {\n  %a = arith.constant 1 : i32\n}\n// -----\n" \
           "// expected-error@-2 {{no terminator}}\n"
    code, _, err = run_cli(["opt", "--verify-diagnostics", "--split-input-file",
                            write(tmp_path, text)], capsys)
    assert code == 1
    assert "unexpected error" in err and "was not produced" in err


def test_verify_diagnostics_parse_errors(tmp_path, capsys):
    text = "func.func @f() {\n  %a = arith.constant 1 : i32\n  %a = arith.constant 2 : i32  " \
           "// expected-error {{redefinition of SSA value '%a'}}\n  return\n}\n"
    code, _, err = run_cli(["opt", "--verify-diagnostics", write(tmp_path, text)], capsys)
    assert (code, err) == (0, "")


def test_verify_diagnostics_regex_annotation(tmp_path, capsys):
    """`expected-error-re`: `{{...}}` parts are regular expressions, the rest literal, and the
    text runs to the line's last `}}`."""
    text = "func.func @f() {\n  // expected-error-re@+1 {{'arith.{{[a-z]+}}' op block with no {{.*}}}}\n" \
           "  %a = arith.constant 1 : i32\n}\n"
    variants = ((text, 0, ""),
                (text.replace("block with no", "block (with no"), 1, "was not produced"),  # `(` literal outside
                (text.replace("[a-z]+", "[a-z"), 1, "invalid regular expression in expected-error-re"))
    for i, (variant, want_code, want_err) in enumerate(variants):
        code, _, err = run_cli(["opt", "--verify-diagnostics", write(tmp_path, variant, f"{i}.mlir")], capsys)
        assert code == want_code and want_err in err and (want_err or err == "")


def test_verify_diagnostics_annotation_spellings(tmp_path, capsys):
    """As MLIR reads them: a space before the `@`, and `// @expected-error`, are annotations too."""
    text = "func.func @f() {\n  // expected-error @+2 {{no terminator}}\n  // @expected-error@+1 {{no terminator}}\n" \
           "  %a = arith.constant 1 : i32\n}\n"
    code, _, err = run_cli(["opt", "--verify-diagnostics", write(tmp_path, text)], capsys)
    assert code == 1 and err.count("was not produced") == 1  # both read: one error for two expectations


# ---- --split-input-file ------------------------------------------------------------------
def test_split_input_file_keeps_whole_file_lines(tmp_path, capsys):
    text = VALID + "// -----\n" + VALID + "// -----\n" + "func.func @g() {\n  return %nope : i32\n}\n"
    path = write(tmp_path, text)
    code, out, err = run_cli(["opt", "--split-input-file", path], capsys)
    assert code == 1
    bad_line = text.split("\n").index("  return %nope : i32") + 1
    assert err.startswith(f"{path}:{bad_line}:10: error: use of undeclared SSA value name '%nope'")


def test_split_input_file_chunks_are_independent(tmp_path, capsys):
    """The same names in two chunks are no redefinition; the output keeps the separators."""
    path = write(tmp_path, VALID + "// -----\n" + VALID)
    code, out, err = run_cli(["opt", "--split-input-file", path], capsys)
    assert (code, err) == (0, "")
    assert out.count("// -----\n") == 1 and out.count("func.func @f") == 2


def test_without_split_the_separator_is_a_comment(tmp_path, capsys):
    path = write(tmp_path, VALID + "// -----\n" + VALID)
    code, _, err = run_cli(["opt", path], capsys)
    assert code == 1 and "redefinition of symbol named 'f'" in err


# ---- the command line -------------------------------------------------------------------------
def test_output_file(tmp_path, capsys):
    out_path = tmp_path / "out.mlir"
    code, out, err = run_cli(["opt", write(tmp_path, VALID), "-o", str(out_path)], capsys)
    assert (code, out, err) == (0, "", "")
    assert "%b = arith.addi %a, %a : i32" in out_path.read_text()


def test_output_file_not_written_on_error(tmp_path, capsys):
    out_path = tmp_path / "out.mlir"
    code, _, _ = run_cli(["opt", write(tmp_path, "func.func @f() {\n"), "-o", str(out_path)], capsys)
    assert code == 1 and not out_path.exists()


def test_output_into_missing_directory(tmp_path, capsys):
    code, out, err = run_cli(["opt", write(tmp_path, VALID), "-o", str(tmp_path / "no" / "x.mlir")], capsys)
    assert code == 1
    assert err.startswith("mlirtext: error: could not write output file") and "Traceback" not in err


def test_missing_input_file(tmp_path, capsys):
    missing = str(tmp_path / "missing.mlir")
    code, out, err = run_cli(["opt", missing], capsys)
    assert code == 1 and out == ""
    assert err == f"mlirtext: error: could not open input file '{missing}': No such file or directory\n"


def test_missing_input_file_subprocess(tmp_path):
    """As a real command: one line on stderr, exit 1, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "mlirtext", "opt", str(tmp_path / "missing.mlir")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "could not open input file" in proc.stderr and "Traceback" not in proc.stderr


def test_not_utf8_input(tmp_path, capsys):
    path = tmp_path / "bin.mlir"
    path.write_bytes(b"func.func @f() {\n\xff\n}\n")
    code, _, err = run_cli(["opt", str(path)], capsys)
    assert code == 1 and "input is not UTF-8 text" in err and ":2:" in err


def test_bad_option(capsys):
    with pytest.raises(SystemExit) as exit:  # argparse exits; usage errors exit 1
        cli.main(["opt", "x.mlir", "--no-such-option"])
    assert exit.value.code == 1
    assert "unrecognized arguments: --no-such-option" in capsys.readouterr().err


def test_stdin(capsys, monkeypatch):
    code, out, err = run_cli(["opt", "-"], capsys, stdin=VALID, monkeypatch=monkeypatch)
    assert (code, err) == (0, "")
    assert "%b = arith.addi %a, %a : i32" in out


def test_stdin_errors_are_named_stdin(capsys, monkeypatch):
    code, _, err = run_cli(["opt", "-"], capsys, stdin="func.func @f() {\n  return %x : i32\n}\n",
                           monkeypatch=monkeypatch)
    assert code == 1 and err.startswith("<stdin>:2:10: error:")


def test_print_locations(tmp_path, capsys):
    text = 'func.func @f() {\n  return loc("a.mlir":1:2)\n}\n'
    code, out, _ = run_cli(["opt", "--mlir-print-debuginfo", write(tmp_path, text)], capsys)
    assert code == 0 and 'loc("a.mlir":1:2)' in out


@pytest.mark.oracle
def test_print_generic_accepted_by_iree_opt(tmp_path, capsys):
    text = ("#map = affine_map<(d0) -> (d0)>\n!t = tensor<4xf32>\n" + VALID +
            "func.func private @g(!t) -> !t attributes {m = #map}\n"
            "func.func @h(%x: f32, %c: i1) -> f32 {\n  %y = math.exp %x fastmath<fast> : f32\n"
            "  %z = arith.select %c, %x, %y : f32\n  return %z : f32\n}\n")
    code, generic, err = run_cli(["opt", "--print-generic", write(tmp_path, text)], capsys)
    assert (code, err) == (0, "")
    assert "func.func @" not in generic and '"func.func"()' in generic
    code, custom, err = run_cli(["opt", write(tmp_path, text, "b.mlir")], capsys)
    assert code == 0
    forms = generic_forms([text, generic, custom])
    assert forms is not None, "iree-opt rejects our output"
    assert forms[0] == forms[1] == forms[2]
