"""Running a function on a device, timed (mlirtext.analysis.device_run), without the server."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.analysis import device_run
from mlirtext.analysis.device_run import DeviceRunError, compare, run_on_device

SCALE = """\
func.func @scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<2.0> : tensor<4xf32>
  %0 = stablehlo.multiply %x, %c : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_each_device_gives_the_numbers_and_a_median_time():
    x = np.array([1, 2, 3, 4], np.float32)
    text = SCALE + "// test_each_device\n"   # its own cache entry
    runs = {d: run_on_device(text, "scale", [x], d) for d in device_run.DEVICES}
    for device, run in runs.items():
        assert run.device == device
        np.testing.assert_array_equal(run.outputs[0], x * 2)
        assert run.seconds > 0 and 1 <= run.calls <= device_run.MAX_CALLS
        assert run.timing.startswith("median of") and run.warmed_up
    # One compile for both native devices; the interpreter compiles nothing.
    assert runs["local-sync"].compile_seconds > 0
    assert runs["local-task"].compile_seconds is None and runs["reference"].compile_seconds is None
    assert run_on_device(text, "scale", [x], "local-sync").compile_seconds is None


def test_unknown_device_and_uncompilable_function_are_messages():
    with pytest.raises(DeviceRunError, match=r"unknown device 'gpu' \(devices: reference, local-sync, local-task\)"):
        run_on_device(SCALE, "scale", [], "gpu")
    dynamic = SCALE.replace("tensor<4xf32>", "tensor<?xf32>").replace("dense<2.0> : tensor<?xf32>",
                                                                      "dense<2.0> : tensor<4xf32>")
    with pytest.raises(DeviceRunError, match="cannot compile|error"):
        run_on_device(dynamic, "scale", [np.ones(4, np.float32)], "local-task")


def test_compare_reports_the_largest_difference_and_whether_it_is_within_the_bound():
    ref = [np.array([1.0, 2.0, np.nan, np.inf], np.float32)]
    assert compare([ref[0].copy()], ref) == (True, 0.0, None)
    close = [ref[0] + np.array([1e-6, 0, 0, 0], np.float32)]
    match, diff, _ = compare(close, ref)
    assert match and 0 < diff < 1e-5
    far = [np.array([1.1, 2.0, np.nan, np.inf], np.float32)]
    match, diff, _ = compare(far, ref)
    assert not match and abs(diff - 0.1) < 1e-6
    nan_where_number = [np.array([np.nan, 2.0, np.nan, np.inf], np.float32)]
    assert compare(nan_where_number, ref)[:2] == (False, float("inf"))
    assert compare([np.array([3, 4], np.int32)], [np.array([3, 5], np.int32)]) == (False, 1.0, None)
    assert compare([np.array([True])], [np.array([True])]) == (True, 0.0, None)
    assert compare([np.zeros(2)], [np.zeros(3)])[2] == "result[0] has shape (2,), the reference (3,)"
    assert compare([], [np.zeros(1)])[2] == "0 outputs, the reference has 1"
