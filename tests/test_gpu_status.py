"""`mlirtext sweep gpu` (mlirtext/sweeps/gpu_suite.py; `tests/gpu_status.py` sums it up): each function
compiled and validated for each GPU target, and run on a target's device only where the sweep's task
holds that device; where no node offers it the run is a skip that says so, not a run on this machine's
CPU by accident."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlirtext.sweeps.gpu_suite import check_function, labels

from .gpu_status import need_tools, summary

ROOT = Path(__file__).resolve().parent.parent

ADD = """
func.func @add() -> tensor<4xf32> {
  %a = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = stablehlo.constant dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""

BOOLS = """
func.func @bools() -> tensor<4xi1> {
  %a = stablehlo.constant dense<[true, true, false, false]> : tensor<4xi1>
  %b = stablehlo.constant dense<[true, false, true, false]> : tensor<4xi1>
  %0 = stablehlo.compare EQ, %a, %b, UNSIGNED : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
"""


def _statuses(results) -> dict:
    return {r.test.rpartition(" [")[2].rstrip("]"): (r.status, r.error) for r in results}


def test_a_device_no_node_offers_is_a_skip_with_the_reason_and_a_compile_only_target_still_counts():
    need_tools("ld.lld", "llvm-readelf")
    results = check_function("a.mlir@add", "add", ADD, ("rocm", "cuda"), placed=())
    assert labels(("rocm", "cuda")) == ["rocm", "cuda", "cuda on cuda"]
    got = _statuses(results)
    assert got["rocm"] == ("pass", "")
    assert got["cuda"][0] in ("pass", "skip")      # (skip: compiled, but no ptxas here to validate it)
    assert got["cuda on cuda"] == ("skip", "no node of the sweep's Ray offers device 'cuda' (start one with "
                                           "`mlirtext worker --devices cuda`)")
    text = summary(results, ("rocm", "cuda"))
    assert "rocm          compiled 1/1, validated 1" in text
    assert "matched on cuda 0 (1 not run: no such device)" in text


def test_a_function_that_does_not_compile_fails_every_target_and_run():
    results = check_function("a.mlir@add", "add", ADD.replace("stablehlo.add", "stablehlo.frobnicate"),
                             ("vulkan-spirv",), placed=("vulkan",))
    assert [r.status for r in results] == ["fail-compile", "fail-compile"]


def test_opencl_spirv_is_validated_and_matched_on_the_opencl_device_the_task_holds(tmp_path):
    """opencl-spirv on `opencl` (pocl's CPU driver here), as the sweep's task runs it where it holds
    device:opencl. (In a child: pocl opened in this process by another test would not survive a fork.)"""
    need_tools("spirv-val", "llvm-spirv")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}   # (pocl's cache)
    probe = subprocess.run([sys.executable, "-c", "from mlirtext.vm.opencl_device import context; context()"],
                           capture_output=True, text=True, env=env, cwd=ROOT)
    if probe.returncode:
        pytest.skip(f"no OpenCL device here: {(probe.stderr.strip().splitlines() or ['?'])[-1]}")
    code = ("import sys\nfrom mlirtext.sweeps.gpu_suite import check_function\nfrom tests.test_gpu_status import ADD, BOOLS\n"
            "for name, text in (('add', ADD), ('bools', BOOLS)):\n"
            "    for r in check_function(f'x.mlir@{name}', name, text, ('opencl-spirv',), ('opencl',)):\n"
            "        print(r.test, r.status, r.error, sep='|')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["x.mlir@add [opencl-spirv]|pass|", "x.mlir@add [opencl-spirv on opencl]|pass|",
                                        "x.mlir@bools [opencl-spirv]|pass|",
                                        "x.mlir@bools [opencl-spirv on opencl]|pass|"], done.stdout
