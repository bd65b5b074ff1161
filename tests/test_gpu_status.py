"""tests/gpu_status.py runs each function in a worker process with a time limit: a function over
it is counted as failed ("time limit") and the run goes on with the next one."""
from __future__ import annotations

import pickle

from .gpu_status import collect
from .lowering_status import Outcome

FOREVER = """
func.func @forever() -> i32 {
  %c0 = arith.constant 0 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %true = arith.constant true
    scf.condition(%true) %i : i32
  } do {
  ^bb0(%i: i32):
    scf.yield %i : i32
  }
  return %r : i32
}
"""

ADD = """
func.func @add() -> tensor<4xf32> {
  %a = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = stablehlo.constant dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_a_function_over_the_time_limit_fails_and_the_run_goes_on(tmp_path):
    cache = tmp_path / "lowered.pkl"
    lowered = [Outcome("a.mlir", "forever", "llvm", texts={"source": FOREVER}),
               Outcome("b.mlir", "add", "llvm", texts={"source": ADD})]
    cache.write_bytes(pickle.dumps(lowered))
    outcomes, lowering_over = collect(targets=("rocm",), cache=str(cache), jobs=2, time_limit=20)
    by_name = {o.function: o for o in outcomes}
    assert set(by_name) == {"forever", "add"} and lowering_over == []
    assert by_name["forever"].why == {"time limit": "over the 20 s time limit"}
    assert by_name["forever"].compiled == set()
    assert by_name["add"].compiled == {"rocm"} and "time limit" not in by_name["add"].why
