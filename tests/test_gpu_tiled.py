"""Tiled matmul kernels (targets/gpu/tiling.py): matmul-class dispatches run as 16x16-thread
workgroups staging K slices of both operands through workgroup memory. On the `vulkan` device
they give the reference device's outputs, also for sizes that are not multiples of the tile, a
batch, transposed operands (a linalg.generic) and integers; their PTX passes ptxas (sm_80, sm_90)
with shared memory and barriers, their AMDGPU objects link (gfx90a, gfx942) with LDS; other
kernels keep the thread-per-element mapping, as do all with MLIRTEXT_GPU_TILING=0."""
from __future__ import annotations

import re

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.targets.gpu import compile_gpu
from mlirtext.targets.gpu.tiling import COLUMNS, ROWS, TILE
from mlirtext.targets.gpu.validate import link_hsaco, need_tool, run_tool, validate_executable
from mlirtext.compiler.driver import compile_module
from mlirtext.compiler.module_writer import pack
from mlirtext.vm.vm import LoadedModule

from .gpu_status import need_tools, reference_kernels


def _dot(m: int, k: int, n: int, element: str = "f32") -> str:
    return f"""func.func @main(%a: tensor<{m}x{k}x{element}>, %b: tensor<{k}x{n}x{element}>) -> tensor<{m}x{n}x{element}> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<{m}x{k}x{element}>, tensor<{k}x{n}x{element}>) -> tensor<{m}x{n}x{element}>
  return %0 : tensor<{m}x{n}x{element}>
}}"""


BATCHED = """func.func @main(%a: tensor<3x33x65xf32>, %b: tensor<3x65x17xf32>) -> tensor<3x33x17xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x33x65xf32>, tensor<3x65x17xf32>) -> tensor<3x33x17xf32>
  return %0 : tensor<3x33x17xf32>
}"""

# C = A * B^T with B stored as [n, k], and a fill that is not zero (linalg level).
TRANSPOSED = """func.func @main(%a: tensor<33x65xf32>, %b: tensor<17x65xf32>) -> tensor<33x17xf32> {
  %one = arith.constant 1.5 : f32
  %e = tensor.empty() : tensor<33x17xf32>
  %c = linalg.fill ins(%one : f32) outs(%e : tensor<33x17xf32>) -> tensor<33x17xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<33x65xf32>, tensor<17x65xf32>) outs(%c : tensor<33x17xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<33x17xf32>
  return %r : tensor<33x17xf32>
}"""

# relu(A @ B + bias) as one kernel (dispatch formation makes two dispatches of it; a kernels
# module written by hand keeps it whole): the epilogue reads the bias through a broadcast map.
BIAS_RELU = """func.func @k(%a: tensor<70x45xf32>, %b: tensor<45x90xf32>, %bias: tensor<90xf32>) -> tensor<70x90xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<70x90xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<70x90xf32>) -> tensor<70x90xf32>
  %m = linalg.matmul ins(%a, %b : tensor<70x45xf32>, tensor<45x90xf32>) outs(%c : tensor<70x90xf32>) -> tensor<70x90xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m, %bias : tensor<70x90xf32>, tensor<90xf32>) outs(%e : tensor<70x90xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<70x90xf32>
  return %r : tensor<70x90xf32>
}"""

PROGRAMS = {"odd-33x65x17": _dot(33, 65, 17), "blocks-130x70x75": _dot(130, 70, 75), "mlp-64x512x512": _dot(64, 512, 512), "one-row-1x16x40": _dot(1, 16, 40),
            "batched-3x33x65x17": BATCHED, "transposed-generic": TRANSPOSED, "i32-20x31x9": _dot(20, 31, 9, "i32")}


def _reduce(shape: tuple, body: str, element: str = "f32", init: str = "0.0") -> str:
    """stablehlo.reduce of `shape` over its last axis with `body` (add, maximum, ...)."""
    dims = "x".join(map(str, shape))
    out = "x".join(map(str, shape[:-1]))
    out_t = f"tensor<{out}x{element}>" if out else f"tensor<{element}>"
    return f"""func.func @main(%x: tensor<{dims}x{element}>) -> {out_t} {{
  %z = stablehlo.constant dense<{init}> : tensor<{element}>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.{body} across dimensions = [{len(shape) - 1}] : (tensor<{dims}x{element}>, tensor<{element}>) -> {out_t}
  return %s : {out_t}
}}"""


REDUCTIONS = {"row-sum-33x1000": _reduce((33, 1000), "add", init="0.5"),
              "row-max-3x5x300": _reduce((3, 5, 300), "maximum", init="0xFF800000"),
              "softmax-max-256x1024": _reduce((256, 1024), "maximum", init="0xFF800000"),
              "total-5000": _reduce((5000,), "add"), "i32-row-min-7x130": _reduce((7, 130), "minimum", "i32", "1000")}


def _vulkan_or_skip():
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.vulkan_device import context
    try:
        return context()
    except DeviceError as e:
        pytest.skip(f"no Vulkan device here: {e}")


def _inputs(function, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for r in function.inputs:
        if np.dtype(r["dtype"]).kind == "i":
            out.append(rng.integers(-50, 50, r["shape"]).astype(r["dtype"]))
        else:
            out.append(rng.standard_normal(r["shape"]).astype(r["dtype"]))
    return out


@pytest.mark.parametrize("name", PROGRAMS)
def test_tiled_matmul_matches_the_reference_device_on_vulkan(name):
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    compiled = compile_module(parse_and_verify(PROGRAMS[name]).module, "vulkan-spirv", validate=True)
    launches = compiled.gpu["vulkan-spirv"].launches
    tiled = [k for k, launch in launches.items() if launch.get("workgroup") == [TILE, TILE]]
    assert tiled, f"no tiled kernel among {launches}"
    data = pack(compiled)
    gpu, ref = LoadedModule(data, "vulkan"), LoadedModule(data, "reference")
    args = _inputs(gpu.function("main"))
    (got,), (want,) = gpu.function("main")(*args), ref.function("main")(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind == "i":
        assert np.array_equal(got, want)
    else:   # the same sums in the same order: equal up to the driver's rounding of products
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_the_grid_covers_the_output_in_tiles():
    compiled, kernels = reference_kernels(BATCHED)
    exe = compile_gpu(kernels, list(compiled.kernels), "vulkan-spirv")
    (launch,) = [k for k in exe.launches.values() if k.get("workgroup")]
    assert launch["block"] == [TILE * ROWS, TILE * COLUMNS]
    assert launch["grid"] == [-(-17 // (TILE * COLUMNS)), -(-33 // (TILE * ROWS)), 3]    # columns, rows, batch
    assert launch["workgroup_size"] == TILE * TILE and launch["workgroups"] == launch["grid"][0] * launch["grid"][1] * 3
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("workgroup")]
    shader = exe.assembly[kernel]
    assert shader.count("OpControlBarrier") == 2 and len(re.findall(r"= OpVariable \S+ Workgroup\b", shader)) == 2
    assert f"LocalSize {TILE} {TILE} 1" in shader


def test_other_kernels_and_the_switch_keep_one_thread_per_element(monkeypatch):
    elementwise = """func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.exponential %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}"""
    compiled, kernels = reference_kernels(elementwise)
    exe = compile_gpu(kernels, list(compiled.kernels), "vulkan-spirv")
    assert not any(k.get("workgroup") for k in exe.launches.values())
    monkeypatch.setenv("MLIRTEXT_GPU_TILING", "0")
    compiled, kernels = reference_kernels(_dot(33, 65, 17))
    exe = compile_gpu(kernels, list(compiled.kernels), "vulkan-spirv")
    assert not any(k.get("workgroup") for k in exe.launches.values())


@pytest.mark.parametrize("name", ["odd-33x65x17", "batched-3x33x65x17", "transposed-generic", "i32-20x31x9"])
def test_tiled_ptx_uses_shared_memory_and_passes_ptxas(name):
    need_tools("ptxas")
    compiled, kernels = reference_kernels(PROGRAMS[name])
    exe = compile_gpu(kernels, list(compiled.kernels), "cuda", "sm_80")
    validate_executable(exe)
    assert exe.validated == ["ptxas sm_80", "ptxas sm_90"]
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("workgroup")]
    ptx = exe.assembly[kernel]
    tiles = sorted(int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \w+\[(\d+)\]", ptx))   # A's and B's
    element = 4
    assert tiles == sorted([ROWS * TILE * TILE * element, COLUMNS * TILE * TILE * element])
    assert re.search(r"\bbar(rier)?\.sync", ptx) and "ld.shared" in ptx and "st.shared" in ptx
    assert "%ctaid.y" in ptx and "%tid.y" in ptx


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_tiled_amdgpu_object_links_with_lds(arch, tmp_path):
    need_tools("ld.lld", "llvm-readelf")
    compiled, kernels = reference_kernels(PROGRAMS["odd-33x65x17"])
    exe = compile_gpu(kernels, list(compiled.kernels), "rocm", arch)
    validate_executable(exe)
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("workgroup")]
    assert "s_barrier" in exe.assembly[kernel] and re.search(r"\bds_(read|load)", exe.assembly[kernel])
    hsaco = link_hsaco(kernel, exe.code[kernel], str(tmp_path))
    notes = run_tool([need_tool("llvm-readelf"), "--notes", hsaco], "llvm-readelf")
    lds = re.search(r"\.group_segment_fixed_size:\s*(\d+)", notes)
    assert lds and int(lds.group(1)) == (ROWS + COLUMNS) * TILE * TILE * 4   # the A and B slices (f32) in LDS
    assert re.search(r"\.max_flat_workgroup_size:\s*256", notes)


def test_dump_shows_the_tiled_kernels(tmp_path):
    from mlirtext.vm.dump import dump
    from mlirtext.vm.modfile import read_module_file
    data = pack(compile_module(parse_and_verify(_dot(130, 70, 75)).module, "vulkan-spirv"))
    text = dump(read_module_file(data))
    rows, cols = TILE * ROWS, TILE * COLUMNS
    grid = f"{-(-75 // cols)}x{-(-130 // rows)}x1"
    assert f"{grid} workgroups of {TILE}x{TILE}; tiled: each workgroup computes a {rows}x{cols} output block, " \
        f"{ROWS}x{COLUMNS} per thread" in text


@pytest.mark.parametrize("name", REDUCTIONS)
def test_row_reductions_run_a_workgroup_per_row_on_vulkan(name):
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    compiled = compile_module(parse_and_verify(REDUCTIONS[name]).module, "vulkan-spirv", validate=True)
    (launch,) = [k for k in compiled.gpu["vulkan-spirv"].launches.values() if k.get("tiling") == "row reduction"]
    shape = tuple(int(d) for d in re.search(r"tensor<([\dx]+)x(?:f32|i32)>", REDUCTIONS[name]).group(1).split("x"))
    assert launch["grid"] == [int(np.prod(shape[:-1])), 1, 1] and launch["block"] == [1, shape[-1]]
    data = pack(compiled)
    gpu, ref = LoadedModule(data, "vulkan"), LoadedModule(data, "reference")
    args = _inputs(gpu.function("main"), seed=1)
    (got,), (want,) = gpu.function("main")(*args), ref.function("main")(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind == "i":
        assert np.array_equal(got, want)
    else:   # a tree adds in another order than the serial loop
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_short_rows_keep_a_thread_per_row():
    compiled, kernels = reference_kernels(_reduce((50, 40), "add"))
    exe = compile_gpu(kernels, list(compiled.kernels), "vulkan-spirv")
    assert not any(k.get("workgroup") for k in exe.launches.values())


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("rocm", "gfx90a"), ("rocm", "gfx942")])
def test_row_reduction_validates_for_cuda_and_rocm(target, arch):
    need_tools(*(("ptxas",) if target == "cuda" else ("ld.lld", "llvm-readelf")))
    compiled, kernels = reference_kernels(REDUCTIONS["row-sum-33x1000"])
    exe = compile_gpu(kernels, list(compiled.kernels), target, arch)
    validate_executable(exe)
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("tiling") == "row reduction"]
    barrier = r"\bbar(rier)?\.sync" if target == "cuda" else r"\bs_barrier\b"
    assert len(re.findall(barrier, exe.assembly[kernel])) >= 2    # after the partials, and per tree level


def test_matmul_with_an_epilogue_is_one_tiled_kernel():
    """The bias and relu are applied to each accumulated element before its store."""
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    from mlirtext.vm.vulkan_device import VulkanDevice
    exe = compile_gpu(parse_and_verify(BIAS_RELU).module, ["k"], "vulkan-spirv", validate=True)
    assert exe.launches["k"]["tiling"] == "matmul"
    rng = np.random.default_rng(3)
    a, b, bias = (rng.standard_normal(s).astype(np.float32) for s in ((70, 45), (45, 90), (90,)))
    out = np.empty((70, 90), np.float32)
    device = VulkanDevice({"kernels": exe.launches}, exe.code, {"k": {"inputs": [0, 0, 0], "outputs": [0]}})
    device.kernel("k")([a, b, bias], [out])
    device.close()
    want = np.maximum(a.astype(np.float64) @ b + bias, 0)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5 * float(np.abs(want).max()))
    assert (out == 0).any() and (out > 0).any()


@pytest.mark.parametrize("target,arch", [("cuda", "sm_80"), ("rocm", "gfx942")])
def test_matmul_with_an_epilogue_validates_for_cuda_and_rocm(target, arch):
    need_tools(*(("ptxas",) if target == "cuda" else ("ld.lld", "llvm-readelf")))
    exe = compile_gpu(parse_and_verify(BIAS_RELU).module, ["k"], target, arch, validate=True)
    assert exe.launches["k"]["tiling"] == "matmul" and exe.validated
