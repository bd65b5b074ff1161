"""`mlirtext reduce`: a generated module that fails because of one op shrinks to a few ops that still
fail the same way: a crash injected into one pass (--debug-crash), a kernel wrong on one device (a
miscompile injected into the native kernels' lowering only), a diagnostic, a user's command."""
from __future__ import annotations

import os
import signal
import tempfile
import time

import numpy as np
import pytest

from mlirtext import api
from mlirtext.cli import main
from mlirtext.debugging.interesting import Interestingness, Mismatch, UserTest, killed_by
from mlirtext.debugging.reducer import Reducer
from mlirtext.debugging.reductions import (DropUnusedArguments, EraseOps, ReplaceWithConstants, RewriteTypes,
                                           count_ops, shrink_shape)
from mlirtext.transforms.semantics_check import Tolerance

CRASH = "--debug-crash=convert-hlo-to-tosa:tosa.mul"
#: Strikes in the lowering of the native kernels only: local-task computes the multiply wrong, the
#: reference device (interpreted kernels) right.
WRONG_KERNEL = "--debug-miscompile=convert-linalg-to-loops:arith.mulf"


def generated_module(ops: int, seed: int = 0, mixed: bool = True) -> str:
    """A module of `ops` ops: a function (and a helper it calls) over tensor<8x4xf32>, each op reading
    the last value and one of the three before it (`mixed`; else an argument: then no op cancels or
    clamps away what the multiply gave); exactly one op is a multiply, in the middle; the others
    add, subtract and (`mixed`) take the max and min."""
    rng = np.random.default_rng(seed)
    t = "tensor<8x4xf32>"
    helper = ["func.func private @helper(%x: tensor<8x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {",
              f"  %0 = stablehlo.add %x, %y : {t}", f"  %1 = stablehlo.maximum %0, %x : {t}",
              f"  return %1 : {t}", "}"]
    body = ["func.func @main(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {"]
    values = ["%a", "%b"]
    kinds = ["stablehlo.add", "stablehlo.subtract"] + (["stablehlo.maximum", "stablehlo.minimum"] if mixed else [])
    body_ops = ops - 6   # (the helper is 4 ops, @main and its return 2 more)
    for i in range(body_ops):
        lhs = values[-1]
        rhs = values[-1 - int(rng.integers(1, min(4, len(values))))] if mixed else values[int(rng.integers(2))]
        if i == body_ops // 3:
            body.append(f"  %c = func.call @helper({lhs}, {rhs}) : ({t}, {t}) -> {t}")
            values.append("%c")
            continue
        kind = "stablehlo.multiply" if i == body_ops // 2 else kinds[int(rng.integers(len(kinds)))]
        body.append(f"  %v{i} = {kind} {lhs}, {rhs} : {t}")
        values.append(f"%v{i}")
    body += [f"  return {values[-1]} : {t}", "}"]
    return "\n".join(helper + body) + "\n"


def ops_in(path) -> int:
    result = api.parse_and_verify(path.read_text())
    assert result.ok, [str(d) for d in result.diagnostics]   # the reduced module verifies
    return count_ops(result.module)


def test_the_generated_module_has_the_size_asked_for():
    assert count_ops(api.parse(generated_module(300)).module) == 300


def test_a_crash_that_one_op_causes_reduces_to_that_op(tmp_path, capsys):
    source = tmp_path / "big.mlir"
    source.write_text(generated_module(300))
    out = tmp_path / "small.mlir"
    start = time.monotonic()
    assert main(["reduce", str(source), "--crash", CRASH, "--budget", "120", "-o", str(out)]) == 0
    assert time.monotonic() - start < 120
    said = capsys.readouterr().out
    assert said.startswith(f"reduce: 300 -> {ops_in(out)} ops in ") and "no reduction is left" in said
    assert ops_in(out) <= 5 and "stablehlo.multiply" in out.read_text()
    assert source.read_text() == generated_module(300)   # the input is left as it was
    # It still crashes, the same way.
    assert main(["opt", str(out), "--lower-to=llvm", "-o", "-", CRASH]) == 1
    assert "internal error in pass 'convert-hlo-to-tosa': RuntimeError: --debug-crash" in capsys.readouterr().err


def test_a_mismatch_between_two_devices_reduces_to_the_wrong_kernels_op(tmp_path, capsys):
    source = tmp_path / "mlp.mlir"
    source.write_text(generated_module(60, mixed=False))
    out = tmp_path / "small.mlir"
    start = time.monotonic()
    assert main(["reduce", str(source), "--mismatch", "reference,local-task", WRONG_KERNEL, "--budget", "120",
                 "-o", str(out)]) == 0
    assert time.monotonic() - start < 120
    assert "results on reference and local-task differ" in capsys.readouterr().out
    assert ops_in(out) <= 10 and "stablehlo.multiply" in out.read_text()
    # Still a mismatch, and only with the wrong kernel.
    module = api.parse_and_verify(out.read_text()).module
    for flags, differs in (([WRONG_KERNEL], True), ([], False)):
        test = Mismatch(main, ("reference", "local-task"), "main", {}, 0, Tolerance(), flags)
        assert test.observe(str(out), module) is differs


def test_a_diagnostic_reduces_to_the_ops_it_is_about(tmp_path, capsys):
    source = tmp_path / "big.mlir"
    source.write_text(generated_module(40))
    out = tmp_path / "small.mlir"
    # (the fault moves the multiply above the op whose value it uses: that op must stay too)
    assert main(["reduce", str(source), "--diagnostic", "produced IR that does not verify",
                 "--debug-unverifiable=convert-hlo-to-tosa:tosa.mul", "-o", str(out)]) == 0
    assert ops_in(out) <= 5 and "stablehlo.multiply" in out.read_text()


#: A crash in the step from tosa to linalg: the lowering to linalg is enough to show it.
TOSA_TO_LINALG_CRASH = "--debug-crash=convert-tosa-to-linalg:arith.mulf"


def test_a_crash_in_the_step_to_linalg_reduces_with_the_lowering_to_linalg_and_leaves_no_files(
        tmp_path, capsys, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))   # (the forked children inherit it)
    source = tmp_path / "big.mlir"
    source.write_text(generated_module(40))
    out = tmp_path / "small.mlir"
    assert main(["reduce", str(source), "--crash", "--lower-to=linalg", TOSA_TO_LINALG_CRASH, "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"still so: mlirtext opt FILE --lower-to=linalg {TOSA_TO_LINALG_CRASH} crashes: internal error in pass " \
           "'convert-tosa-to-linalg'" in said
    assert ops_in(out) <= 5 and "stablehlo.multiply" in out.read_text()
    assert main(["opt", str(out), "--lower-to=linalg", "-o", "-", TOSA_TO_LINALG_CRASH]) == 1
    assert "internal error in pass 'convert-tosa-to-linalg'" in capsys.readouterr().err
    assert list(scratch.iterdir()) == []   # the candidates' directory is gone
    # The command is the one tested: the lowering to tosa never reaches the pass, so nothing crashes.
    assert main(["reduce", str(source), "--crash", "--command", "opt --lower-to=tosa", TOSA_TO_LINALG_CRASH]) == 1
    assert "it is not so that mlirtext opt FILE --lower-to=tosa" in capsys.readouterr().err
    assert list(scratch.iterdir()) == []


def test_the_command_to_test_may_be_any_mlirtext_command(tmp_path, capsys):
    source = tmp_path / "big.mlir"
    source.write_text(generated_module(20))
    out = tmp_path / "small.mlir"
    # (a pass pipeline, and a run: an .mlir runs compiled, through the passes the fault strikes in)
    assert main(["reduce", str(source), "--crash", "--pass-pipeline=convert-hlo-to-tosa", CRASH, "-o", str(out)]) == 0
    assert "mlirtext opt FILE --pass-pipeline=convert-hlo-to-tosa" in capsys.readouterr().out
    assert ops_in(out) <= 5
    assert main(["reduce", str(source), "--crash", "--command", "mlirtext run {} --function=main", CRASH,
                 "-o", str(out)]) == 0
    assert "mlirtext run FILE --function=main" in capsys.readouterr().out
    assert ops_in(out) <= 5 and "stablehlo.multiply" in out.read_text()


def test_a_users_command_decides_and_candidates_run_in_parallel(tmp_path, capsys):
    source = tmp_path / "big.mlir"
    source.write_text(generated_module(80))
    out = tmp_path / "small.mlir"
    assert main(["reduce", str(source), "--test", "grep -q stablehlo.multiply {}", "-j", "3", "-o", str(out)]) == 0
    assert ops_in(out) <= 4 and "stablehlo.multiply" in out.read_text()


def test_erasing_an_op_forwards_its_operand_or_makes_an_argument():
    text = ("func.func @f(%a: tensor<4xf32>, %i: tensor<4xi32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
            "  %1 = stablehlo.convert %i : (tensor<4xi32>) -> tensor<4xf32>\n"
            "  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>\n"
            "  return %2 : tensor<4xf32>\n}\n")
    result = api.parse(text)
    EraseOps().apply(result.module, [0, 1])
    printed = api.to_text(result)
    assert "stablehlo.multiply %a, %arg0" in printed and "%arg0: tensor<4xf32>" in printed
    assert api.parse_and_verify(printed).ok
    DropUnusedArguments().apply(result.module, [0])   # %i is unused now
    assert "%i" not in api.to_text(result) and api.parse_and_verify(api.to_text(result)).ok


def test_types_shrink_and_values_become_constants():
    text = ("func.func @f(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {\n"
            "  %0 = stablehlo.exponential %a : tensor<8x4xf32>\n"
            "  %1 = stablehlo.add %0, %a : tensor<8x4xf32>\n"
            "  return %1 : tensor<8x4xf32>\n}\n")
    result = api.parse(text)
    RewriteTypes("shrink shapes", shrink_shape).apply(result.module, [0])
    printed = api.to_text(result)
    assert printed.count("tensor<4x2xf32>") == 5 and "8x4" not in printed and api.parse_and_verify(printed).ok
    ReplaceWithConstants().apply(result.module, [0])
    printed = api.to_text(result)
    assert "= arith.constant dense<0.0> : tensor<4x2xf32>" in printed and "exponential" not in printed
    assert api.parse_and_verify(printed).ok


@pytest.mark.parametrize("argv, message", [
    (["--mismatch", "reference,reference"], "is not two different devices"),
    (["--mismatch", "reference,tpu"], "'tpu' is not a device"),
    (["--crash", "--budget", "0"], "is not a number of seconds above 0"),
    (["--diagnostic", "("], "--diagnostic: '(' is not a regular expression"),
    (["--test", "true"], "--test: 'true' has no {} where the candidate's path goes"),
    (["--crash", "--debug-crash=nosuchpass:arith.addf"], "there is no pass 'nosuchpass'"),
    (["--crash"], "nothing to reduce: the input itself is not interesting: it is not so that"),
    (["--crash", "-o", "SELF"], "that is the input; reduce never overwrites it"),
    (["--test", "true {}", "--lower-to=linalg"], "--lower-to: only --crash and --diagnostic test a command"),
    (["--crash", "--command=--x"], "'--x' is not a command to test"),
    (["--crash", "--command", "reduce --crash"], "'reduce --crash' is not a command to test"),
    (["--crash", "--lower-to=linalg", "--pass-pipeline=cse"], "not allowed with argument"),
    (["--crash", "--lower-to=hlo"], "invalid choice: 'hlo'"),
])
def test_bad_requests_get_one_line_and_exit_1(tmp_path, capsys, argv, message):
    source = tmp_path / "p.mlir"
    source.write_text(generated_module(10))
    argv = [str(source) if a == "SELF" else a for a in argv]
    try:
        status = main(["reduce", str(source), *argv])
    except SystemExit as e:   # (argparse's usage errors)
        status = e.code
    err = capsys.readouterr().err
    assert status == 1 and message in err
    assert not err.startswith("Traceback") and [line for line in err.splitlines() if message in line]
    assert source.read_text() == generated_module(10)


def test_a_missing_file_gets_one_line(tmp_path, capsys):
    assert main(["reduce", str(tmp_path / "nope.mlir"), "--crash"]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


class _Stub(Interestingness):
    """Observes by hanging, or by dying of a signal."""

    def __init__(self, how: str):
        self.how = how

    def observe(self, path, module):
        if self.how == "hang":
            time.sleep(30)
        os.kill(os.getpid(), signal.SIGKILL)   # (as the kernel ends a process out of memory)

    def describe(self):
        return self.how


def test_a_hung_candidate_is_ended_and_one_killed_by_a_signal_is_observed_so(tmp_path):
    text = generated_module(10)
    module = api.parse(text).module
    for test, seen in ((_Stub("hang"), None), (UserTest(["sleep", "30"]), False)):
        reducer = Reducer(text, test, jobs=1)
        reducer.work = tmp_path
        start = time.monotonic()
        assert reducer.observe([(text, module)], 1.0) == [seen] and not test.judge(seen)   # (not interesting)
        assert time.monotonic() - start < 5
    dies = Reducer(text, _Stub("die"), jobs=1)
    dies.work = tmp_path
    assert dies.observe([(text, module), (text, module)], 30.0) == [killed_by(signal.SIGKILL)] * 2
