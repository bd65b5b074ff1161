"""The reference interpreter on the core dialects, against iree-run-module on the same inputs."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter, InterpreterError

from .oracle import iree_compile, iree_run

PROGRAM = """
func.func @ints(%a: tensor<6xi32>, %b: tensor<6xi32>) -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi1>) {
  %0 = arith.addi %a, %b : tensor<6xi32>
  %1 = arith.muli %a, %b : tensor<6xi32>
  %2 = arith.divsi %a, %b : tensor<6xi32>
  %3 = arith.remsi %a, %b : tensor<6xi32>
  %4 = arith.floordivsi %a, %b : tensor<6xi32>
  %5 = arith.shrsi %a, %b : tensor<6xi32>
  %6 = arith.cmpi ult, %a, %b : tensor<6xi32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi1>
}
func.func @floats(%x: tensor<5xf32>, %y: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xi1>, tensor<5xi32>) {
  %0 = arith.divf %x, %y : tensor<5xf32>
  %1 = math.tanh %x : tensor<5xf32>
  %2 = arith.maximumf %x, %y : tensor<5xf32>
  %3 = arith.cmpf ogt, %x, %y : tensor<5xf32>
  %4 = arith.fptosi %x : tensor<5xf32> to tensor<5xi32>
  return %0, %1, %2, %3, %4 : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xi1>, tensor<5xi32>
}
func.func @scalars(%a: i32, %f: f32) -> (i32, f32) {
  %c = arith.constant 2147483647 : i32
  %0 = arith.addi %a, %c : i32
  %1 = math.sqrt %f : f32
  return %0, %1 : i32, f32
}
"""

INPUTS = {
    "ints": [np.array([7, -7, 7, -7, 100, -1], np.int32), np.array([2, 2, -2, -2, 3, 1], np.int32)],
    "floats": [np.array([0.5, -1.5, 3.0, 0.0, 2.25], np.float32), np.array([2.0, 0.5, -4.0, 1.0, 2.25], np.float32)],
    "scalars": [np.array(5, np.int32), np.array(2.0, np.float32)],
}


def _ours(name):
    module = parse_and_verify(PROGRAM).module
    return Interpreter(module).call(name, INPUTS[name])


def test_integer_semantics_by_hand():
    add, mul, div, rem, floordiv, shr, ult = _ours("ints")
    assert div.tolist() == [3, -3, -3, 3, 33, -1]          # truncates toward zero
    assert rem.tolist() == [1, -1, 1, -1, 1, 0]            # sign of the dividend
    assert floordiv.tolist() == [3, -4, -4, 3, 33, -1]
    assert ult.tolist() == [False, False, True, True, False, False]  # negatives are huge unsigned


def test_integer_overflow_wraps():
    wrapped, root = _ours("scalars")
    assert int(wrapped) == -2147483644 and float(root) == pytest.approx(2 ** 0.5)


def test_argument_errors_name_the_argument():
    module = parse_and_verify(PROGRAM).module
    with pytest.raises(InterpreterError, match="argument 0 of @ints: expected tensor<6xi32>, got shape 3"):
        Interpreter(module).call("ints", [np.zeros(3, np.int32), np.zeros(6, np.int32)])
    with pytest.raises(InterpreterError, match="takes 2 argument"):
        Interpreter(module).call("ints", [])
    with pytest.raises(InterpreterError, match="no function named '@nope'"):
        Interpreter(module).call("nope", [])


@pytest.mark.oracle
def test_matches_iree_run_module(tmp_path):
    vmfb = iree_compile(PROGRAM, tmp_path)
    for name, args in INPUTS.items():
        if name == "scalars":  # iree-run-module takes no .npy for scalars; checked by hand above
            continue
        ours = _ours(name)
        results = iree_run(vmfb, name, args, len(ours), tmp_path)
        for i, (value, theirs) in enumerate(zip(ours, results)):
            if value.dtype.kind == "f":
                np.testing.assert_allclose(value, theirs, rtol=1e-6, err_msg=f"{name} result {i}")
            else:
                np.testing.assert_array_equal(value, theirs.astype(value.dtype), err_msg=f"{name} result {i}")


#: Unsigned arith on every pair of narrow values: a signless i4 is held sign-extended (9 as -7),
#: and these ops must look at its low bits only. (None: poison, any result.)
_UNSIGNED_NARROW = {
    "divui": lambda a, b, w: None if b == 0 else a // b,
    "remui": lambda a, b, w: None if b == 0 else a % b,
    "ceildivui": lambda a, b, w: None if b == 0 else -(-a // b),
    "shrui": lambda a, b, w: None if b >= w else a >> b,
}


@pytest.mark.parametrize("width", [3, 4])
@pytest.mark.parametrize("name", sorted(_UNSIGNED_NARROW))
def test_unsigned_ops_on_narrow_integers_use_the_low_bits(name, width):
    n = 1 << width
    t = f"tensor<{n}x{n}xi{width}>"
    text = f"func.func @f(%a: {t}, %b: {t}) -> {t} {{\n  %r = arith.{name} %a, %b : {t}\n  return %r : {t}\n}}"
    ua, ub = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    held = lambda u: np.where(u >= n // 2, u - n, u).astype(np.int8)   # noqa: E731 - sign-extended
    got = np.asarray(Interpreter(parse_and_verify(text).module).call("f", [held(ua), held(ub)])[0])
    for (i, j), value in np.ndenumerate(got):
        want = _UNSIGNED_NARROW[name](int(i), int(j), width)
        assert want is None or int(value) & (n - 1) == want, (name, i, j, int(value))


def test_an_interpreter_runs_ops_with_the_semantics_it_is_given():
    """Semantics are passed in (the built-in ones by default): extending a copy leaves the
    built-in semantics, and so every other interpreter, as they were."""
    from mlirtext.interpreter import builtin_semantics

    src = ('func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n'
           '  %y = "test.twice"(%x) : (tensor<3xf32>) -> tensor<3xf32>\n'
           '  return %y : tensor<3xf32>\n}\n')
    module = parse_and_verify(src).module
    x = np.array([1, 2, 3], np.float32)
    mine = builtin_semantics().extended({"test.twice": lambda interp, op, args: [args[0] * 2]})
    np.testing.assert_array_equal(Interpreter(module, mine).call("f", [x])[0], x * 2)
    assert "test.twice" not in builtin_semantics().impls and "arith.addf" in mine.impls
    with pytest.raises(InterpreterError, match="'test.twice' has no semantics"):
        Interpreter(module).call("f", [x])
