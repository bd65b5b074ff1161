"""`mlirtext run`: iree-run-module's input and output conventions, and clear errors."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.cli import main

PROGRAM = """
func.func @main(%a: tensor<2x3xf32>, %b: i32) -> (tensor<2x3xf32>, i32, tensor<3xi8>) {
  %c = arith.addf %a, %a : tensor<2x3xf32>
  %d = arith.constant dense<[1, -2, 3]> : tensor<3xi8>
  return %c, %b, %d : tensor<2x3xf32>, i32, tensor<3xi8>
}
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "p.mlir"
    path.write_text(PROGRAM)
    return str(path)


def test_prints_results_like_iree_run_module(program, capsys):
    assert main(["run", program, "--input=2x3xf32=[1 2 3][4 5 6.5]", "--input=7"]) == 0
    assert capsys.readouterr().out == (
        "EXEC @main\nresult[0]: hal.buffer_view\n2x3xf32=[2 4 6][8 10 13]\n"
        "result[1]: i32=7\nresult[2]: hal.buffer_view\n3xi8=1 -2 3\n")


def test_single_value_fills_and_npy_round_trip(program, tmp_path, capsys):
    out = tmp_path / "y.npy"
    assert main(["run", program, "--input=2x3xf32=0.25", "--input=i32=-1",
                 f"--output=@{out}", "--output=-", f"--output=+{out}"]) == 0
    with open(out, "rb") as f:
        np.testing.assert_array_equal(np.load(f), np.full((2, 3), 0.5, np.float32))
        np.testing.assert_array_equal(np.load(f), np.array([1, -2, 3], np.int8))
    assert "i32=-1" in capsys.readouterr().out


def test_npy_input(program, tmp_path, capsys):
    x = tmp_path / "x.npy"
    np.save(x, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert main(["run", program, f"--input=@{x}", "--input=3"]) == 0
    assert "2x3xf32=[0 2 4][6 8 10]" in capsys.readouterr().out


@pytest.mark.parametrize("inputs,message", [
    (["--input=2x3xf32=1 2 3", "--input=7"], "3 values for 6 elements"),
    (["--input=3xf32=1", "--input=7"], "expected tensor<2x3xf32>, got shape 3"),
    (["--input=2x3xf32=1"], "takes 2 argument(s)"),
    (["--input=@missing.npy", "--input=7"], "cannot load 'missing.npy'"),
    (["--input=2x3xq9=1", "--input=7"], "unknown element type 'q9'"),
])
def test_bad_inputs_are_clear(program, inputs, message, capsys):
    assert main(["run", program, *inputs]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("content,message", [
    (None, "cannot load"),                     # an empty file
    ("npz", "is an .npz archive"),
])
def test_unreadable_npy_inputs_are_clear(program, tmp_path, content, message, capsys):
    path = tmp_path / "x.npz"
    if content == "npz":
        np.savez(path, a=np.zeros(3, np.float32))
    else:
        path.write_bytes(b"")
    assert main(["run", program, f"--input=@{path}", "--input=7"]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_function_is_needed_when_ambiguous(tmp_path, capsys):
    path = tmp_path / "two.mlir"
    path.write_text("func.func @a() { return }\nfunc.func @b() { return }\n")
    assert main(["run", str(path)]) == 1
    assert "--function is needed" in capsys.readouterr().err
    assert main(["run", str(path), "--function", "b"]) == 0


def test_a_quoted_function_name_compiles_and_runs_split_across_threads(tmp_path, capsys):
    """`@"my fn-1"`: its dispatches' LLVM names need quotes in the micro-kernel, its work-sharing
    wrapper and the load-time ABI check (each wrote or read them bare)."""
    src = tmp_path / "q.mlir"
    src.write_text('''func.func @"my fn-1"(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %1 = stablehlo.exponential %0 : tensor<256x256xf32>
  return %1 : tensor<256x256xf32>
}
''')
    module, out = tmp_path / "q.vmpack", tmp_path / "out.npy"
    assert main(["compile", str(src), "-o", str(module)]) == 0
    assert main(["run", str(module), "--device=local-task", "--input=256x256xf32=0.01",
                 "--input=256x256xf32=0.02", f"--output=@{out}"]) == 0
    np.testing.assert_allclose(np.load(out), np.exp(256 * 0.01 * 0.02), rtol=1e-5)
