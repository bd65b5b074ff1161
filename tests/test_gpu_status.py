"""tests/gpu_status.py runs each function in a worker process with a time limit: a function over
it is counted as failed ("time limit") and the run goes on with the next one."""
from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from .gpu_status import collect
from .lowering_status import Outcome

ROOT = Path(__file__).resolve().parent.parent

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


BOOLS = """
func.func @bools() -> tensor<4xi1> {
  %a = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %b = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %0 = stablehlo.compare EQ, %a, %b, UNSIGNED : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
"""


def test_opencl_spirv_is_compiled_validated_and_matched_on_the_opencl_device(tmp_path):
    """opencl-spirv, named with --targets: validated by spirv-val for OpenCL 1.2 and run on the
    `opencl` device against the interpreter; its figures get a line of their own in the report.
    (Run as the command, in a child: pocl opened in this process by another test would not
    survive the fork into collect's workers, which would hang.)"""
    import os
    from .gpu_status import need_tools
    need_tools("spirv-val", "llvm-spirv")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}   # (pocl's cache)
    probe = subprocess.run([sys.executable, "-c", "from mlirtext.vm.opencl_device import context; context()"],
                           capture_output=True, text=True, env=env, cwd=ROOT)
    if probe.returncode:
        pytest.skip(f"no OpenCL device here: {(probe.stderr.strip().splitlines() or ['?'])[-1]}")
    cache = tmp_path / "lowered.pkl"
    cache.write_bytes(pickle.dumps([Outcome("b.mlir", "add", "llvm", texts={"source": ADD}),
                                    Outcome("c.mlir", "bools", "llvm", texts={"source": BOOLS})]))
    done = subprocess.run([sys.executable, "-m", "tests.gpu_status", "-v", "--targets", "opencl-spirv",
                           "--cache", str(cache)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    progress = sorted(line for line in done.stderr.splitlines() if " @" in line)
    assert [line.split(":")[0] for line in progress] == ["b.mlir @add", "c.mlir @bools"], done.stderr
    assert all(line.endswith("validated ['opencl-spirv'] matched False matched on opencl True ")
               for line in progress), progress
    assert "opencl-spirv  compiled 2/2, validated 2/2, matched on opencl 2/2" in done.stdout, done.stdout
    assert "vulkan" not in done.stdout
