"""The `vulkan` device (Mesa lavapipe without a GPU) runs the vulkan-spirv kernels of the
benchmark programs and the bundled examples, and gives the reference device's outputs within
float tolerance (GPU kernels round differently: 1e-4 relative, 1e-5 of the output's scale)."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.compiler.driver import compile_module
from mlirtext.compiler.module_writer import pack
from mlirtext.vm.vm import LoadedModule

from .gpu_status import need_tools
from .test_vm_programs import PROGRAMS, inputs_for


def _vulkan_or_skip():
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.vulkan_device import context
    try:
        return context()
    except DeviceError as e:
        pytest.skip(f"no Vulkan device here: {e}")


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_vulkan_matches_the_reference_device(path):
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    compiled = compile_module(parse_and_verify(path.read_text(), str(path)).module, "vulkan-spirv", validate=True)
    data = pack(compiled)
    gpu, ref = LoadedModule(data, "vulkan"), LoadedModule(data, "reference")
    (name,) = gpu.functions
    args = inputs_for(gpu.function(name))
    got, want = gpu.function(name)(*args), ref.function(name)(*args)
    for g, w in zip(got, want):
        scale = max(1.0, float(np.max(np.abs(w))))
        assert g.shape == w.shape and g.dtype == w.dtype
        err = np.abs(g.astype(np.float64) - w)
        assert np.all(err <= 1e-5 * scale + 1e-4 * np.abs(w)), f"{path.name}: max |diff| {err.max()}"


def test_scalars_booleans_and_long_serial_loops():
    """A scalar argument (a one-element buffer), an i1 result (bytes in memory) and a reduction
    of 100000 elements in one thread (past lavapipe's 65535 loop iterations per invocation, which
    unrolling keeps it under)."""
    need_tools("spirv-as")
    _vulkan_or_skip()
    text = """func.func @f(%a: tensor<100000xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<100000xi1>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %t = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<100000xf32>, tensor<f32>) -> tensor<f32>
  %sum = stablehlo.add %t, %s : tensor<f32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<100000xf32>
  %c = stablehlo.compare GT, %a, %sb : (tensor<100000xf32>, tensor<100000xf32>) -> tensor<100000xi1>
  return %sum, %c : tensor<f32>, tensor<100000xi1>
}"""
    data = pack(compile_module(parse_and_verify(text).module, "vulkan-spirv"))
    a = np.linspace(-1, 1, 100000, dtype=np.float32)
    s = np.array(0.25, np.float32)
    total, above = LoadedModule(data, "vulkan").function("f")(a, s)
    assert above.dtype == np.bool_ and np.array_equal(above, a > s)
    assert abs(float(total) - (float(a.astype(np.float64).sum()) + 0.25)) < 1e-2
