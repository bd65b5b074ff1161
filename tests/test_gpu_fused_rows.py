"""Fused row kernels (targets/gpu/fused_rows.py): a dispatch whose per-row work is a chain of
row reductions and elementwise maps (softmax, layer norm, RMS norm, logsumexp) runs one
workgroup per row, each reduction shared by the workgroup's threads through workgroup memory.
On the `vulkan` device (lavapipe) and the `opencl` device (pocl) they give the reference
device's outputs for rows of several lengths (not multiples of the workgroup, longer than it,
more rows than one grid launches); short rows and other shapes keep one thread per row; the PTX
passes ptxas (sm_80, sm_90) with shared memory and barriers and the AMDGPU objects link."""
from __future__ import annotations

import re

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.targets.gpu import compile_gpu
from mlirtext.targets.gpu import fused_rows
from mlirtext.targets.gpu.validate import link_hsaco, need_tool, run_tool, validate_executable
from mlirtext.compiler.driver import compile_module
from mlirtext.compiler.module_writer import pack
from mlirtext.vm.vm import LoadedModule

from .gpu_status import need_tools, reference_kernels


def _types(shape, axis):
    kept = [d for d in range(len(shape)) if d != axis]
    return (f"tensor<{'x'.join(map(str, shape))}xf32>", f"tensor<{''.join(f'{shape[d]}x' for d in kept)}f32>",
            ", ".join(map(str, kept)))


def softmax(shape, axis=None) -> str:
    axis = len(shape) - 1 if axis is None else axis
    t, r, kept = _types(shape, axis)
    return f"""func.func @main(%x: {t}) -> {t} {{
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [{axis}] : ({t}, tensor<f32>) -> {r}
  %mb = stablehlo.broadcast_in_dim %m, dims = [{kept}] : ({r}) -> {t}
  %d = stablehlo.subtract %x, %mb : {t}
  %e = stablehlo.exponential %d : {t}
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [{axis}] : ({t}, tensor<f32>) -> {r}
  %sb = stablehlo.broadcast_in_dim %s, dims = [{kept}] : ({r}) -> {t}
  %y = stablehlo.divide %e, %sb : {t}
  return %y : {t}
}}"""


def layer_norm(rows: int, length: int) -> str:
    """(x - mean) * rsqrt(var + eps) * gamma + beta over the last axis."""
    t, r, _ = _types((rows, length), 1)
    v = f"tensor<{length}xf32>"
    return f"""func.func @main(%x: {t}, %g: {v}, %b: {v}) -> {t} {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<{float(length)}> : {r}
  %eps = stablehlo.constant dense<1.0e-5> : {r}
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> {r}
  %mean = stablehlo.divide %s, %n : {r}
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : ({r}) -> {t}
  %xc = stablehlo.subtract %x, %mb : {t}
  %sq = stablehlo.multiply %xc, %xc : {t}
  %v = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> {r}
  %var = stablehlo.divide %v, %n : {r}
  %ve = stablehlo.add %var, %eps : {r}
  %rs = stablehlo.rsqrt %ve : {r}
  %rb = stablehlo.broadcast_in_dim %rs, dims = [0] : ({r}) -> {t}
  %y = stablehlo.multiply %xc, %rb : {t}
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : ({v}) -> {t}
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : ({v}) -> {t}
  %y1 = stablehlo.multiply %y, %gb : {t}
  %y2 = stablehlo.add %y1, %bb : {t}
  return %y2 : {t}
}}"""


def rms_norm(rows: int, length: int) -> str:
    """x * rsqrt(mean(x^2) + eps) * gamma: one reduction whose input is computed in the kernel."""
    t, r, _ = _types((rows, length), 1)
    v = f"tensor<{length}xf32>"
    return f"""func.func @main(%x: {t}, %g: {v}) -> {t} {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<{float(length)}> : {r}
  %eps = stablehlo.constant dense<1.0e-6> : {r}
  %sq = stablehlo.multiply %x, %x : {t}
  %s = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> {r}
  %ms = stablehlo.divide %s, %n : {r}
  %ve = stablehlo.add %ms, %eps : {r}
  %rs = stablehlo.rsqrt %ve : {r}
  %rb = stablehlo.broadcast_in_dim %rs, dims = [0] : ({r}) -> {t}
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : ({v}) -> {t}
  %y = stablehlo.multiply %x, %rb : {t}
  %y1 = stablehlo.multiply %y, %gb : {t}
  return %y1 : {t}
}}"""


def logsumexp(rows: int, length: int) -> str:
    """log(sum(exp(x - max))) + max: two reductions and a result with one element per row."""
    t, r, _ = _types((rows, length), 1)
    return f"""func.func @main(%x: {t}) -> {r} {{
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : ({t}, tensor<f32>) -> {r}
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : ({r}) -> {t}
  %d = stablehlo.subtract %x, %mb : {t}
  %e = stablehlo.exponential %d : {t}
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> {r}
  %l = stablehlo.log %s : {r}
  %y = stablehlo.add %l, %m : {r}
  return %y : {r}
}}"""


def int_centre(rows: int, length: int) -> str:
    """x * sum(x) - max(x) on i32 rows (exact: the sums' order does not matter)."""
    t, r = f"tensor<{rows}x{length}xi32>", f"tensor<{rows}xi32>"
    return f"""func.func @main(%x: {t}) -> {t} {{
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %low = stablehlo.constant dense<-2147483648> : tensor<i32>
  %m = stablehlo.reduce(%x init: %low) applies stablehlo.maximum across dimensions = [1] : ({t}, tensor<i32>) -> {r}
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : ({t}, tensor<i32>) -> {r}
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : ({r}) -> {t}
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : ({r}) -> {t}
  %p = stablehlo.multiply %x, %sb : {t}
  %y = stablehlo.subtract %p, %mb : {t}
  return %y : {t}
}}"""


# name -> (program, rows, row length, reductions in the fused kernel)
PROGRAMS = {"softmax-256x1024": (softmax((256, 1024)), 256, 1024, 2),
            "softmax-33x300": (softmax((33, 300)), 33, 300, 2),        # not a multiple of the 64 threads
            "softmax-9x130": (softmax((9, 130)), 9, 130, 2),           # two of the 32 threads take a fifth element
            "softmax-5x5000": (softmax((5, 5000)), 5, 5000, 2),        # 20 elements per thread
            "softmax-2x3x200": (softmax((2, 3, 200)), 6, 200, 2),      # two row axes
            "softmax-8x128x128": (softmax((8, 128, 128)), 1024, 128, 2),  # attention's
            "layer-norm-64x300": (layer_norm(64, 300), 64, 300, 2),
            "rms-norm-40x1000": (rms_norm(40, 1000), 40, 1000, 1),
            "logsumexp-50x700": (logsumexp(50, 700), 50, 700, 2),
            "i32-centre-10x500": (int_centre(10, 500), 10, 500, 2)}   # (the max and the sum: siblings, one kernel)


def _vulkan_or_skip():
    need_tools("spirv-as", "spirv-val")
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.vulkan_device import context
    try:
        context()
    except DeviceError as e:
        pytest.skip(f"no Vulkan device here: {e}")


def _opencl_or_skip():
    need_tools("spirv-val", "llvm-spirv")
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.opencl_device import context
    try:
        context()
    except DeviceError as e:
        pytest.skip(f"no OpenCL device here: {e}")


def _fused(launches: dict) -> list:
    return [name for name, launch in launches.items() if launch.get("tiling") == "fused rows"]


def _same_as_the_reference_device(compiled, device: str, atol: float = 1e-6) -> None:
    data = pack(compiled)
    gpu, ref = LoadedModule(data, device), LoadedModule(data, "reference")
    rng = np.random.default_rng(0)
    args = [(3 * rng.standard_normal(r["shape"])).astype(r["dtype"]) for r in gpu.function("main").inputs]
    for got, want in zip(gpu.function("main")(*args), ref.function("main")(*args)):
        assert got.shape == want.shape and got.dtype == want.dtype
        if want.dtype.kind == "i":
            assert np.array_equal(got, want)
            continue
        # reductions reassociated, exp and rsqrt as the GPU computes them: float tolerance
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=atol * max(1.0, float(np.abs(want).max())))


@pytest.mark.parametrize("name", PROGRAMS)
def test_fused_row_kernels_match_the_reference_device_on_vulkan(name):
    _vulkan_or_skip()
    text, rows, length, reductions = PROGRAMS[name]
    compiled = compile_module(parse_and_verify(text, name).module, "vulkan-spirv", validate=True)
    exe = compiled.gpu["vulkan-spirv"]
    (kernel,) = _fused(exe.launches)
    launch = exe.launches[kernel]
    width = fused_rows.row_width(length)
    assert launch["grid"] == [rows, 1, 1] and launch["workgroup"] == [width, 1] and launch["block"] == [1, length]
    shader = exe.assembly[kernel]   # a partials buffer per reduction, and barriers between the phases
    assert len(re.findall(r"= OpVariable \S+ Workgroup\b", shader)) == reductions
    assert shader.count("OpControlBarrier") >= reductions * 2
    assert f"LocalSize {width} 1 1" in shader
    _same_as_the_reference_device(compiled, "vulkan")


def test_the_attention_softmax_is_fused_between_its_tiled_matmuls():
    from pathlib import Path
    _vulkan_or_skip()
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "programs" / "attention.mlir"
    compiled = compile_module(parse_and_verify(path.read_text(), str(path)).module, "vulkan-spirv", validate=True)
    launches = compiled.gpu["vulkan-spirv"].launches
    (kernel,) = _fused(launches)
    assert launches[kernel]["grid"] == [8 * 128, 1, 1] and launches[kernel]["block"] == [1, 128]
    _same_as_the_reference_device(compiled, "vulkan", atol=1e-5)   # (p @ v cancels: as test_gpu_tiled's)


@pytest.mark.parametrize("shape", [(fused_rows.MAX_GRID + 465, 128), (8, 8192, 128)])
@pytest.mark.parametrize("device", ["vulkan", "opencl"])
def test_more_rows_than_a_grid_axis_launches_take_a_2d_grid(shape, device, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _vulkan_or_skip() if device == "vulkan" else _opencl_or_skip()
    target = {"vulkan": "vulkan-spirv", "opencl": "opencl-spirv"}[device]
    compiled = compile_module(parse_and_verify(softmax(shape)).module, target, validate=True)
    (kernel,) = _fused(compiled.gpu[target].launches)
    assert compiled.gpu[target].launches[kernel]["grid"] == [fused_rows.MAX_GRID, 2, 1]
    _same_as_the_reference_device(compiled, device)


@pytest.mark.parametrize("text", [softmax((50, 40)), softmax((300, 20), axis=0), layer_norm(16, 100)],
                         ids=["short-rows", "first-axis", "short-layer-norm"])
def test_other_kernels_keep_one_thread_per_row_and_match(text):
    """Rows below MIN_LENGTH, and a softmax over the first axis (its reductions are not over the
    innermost axis), are not fused: the thread-per-row kernel, still right."""
    _vulkan_or_skip()
    compiled = compile_module(parse_and_verify(text).module, "vulkan-spirv", validate=True)
    assert not _fused(compiled.gpu["vulkan-spirv"].launches)
    _same_as_the_reference_device(compiled, "vulkan")


def test_the_switch_turns_fusion_off(monkeypatch):
    monkeypatch.setenv("MLIRTEXT_GPU_TILING", "0")
    compiled, kernels = reference_kernels(PROGRAMS["softmax-33x300"][0])
    exe = compile_gpu(kernels, list(compiled.kernels), "vulkan-spirv")
    assert not _fused(exe.launches)


@pytest.mark.parametrize("name", ["softmax-33x300", "softmax-8x128x128", "layer-norm-64x300", "logsumexp-50x700"])
def test_fused_row_kernels_match_the_reference_device_on_opencl(name, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    _opencl_or_skip()
    compiled = compile_module(parse_and_verify(PROGRAMS[name][0], name).module, "opencl-spirv", validate=True)
    assert _fused(compiled.gpu["opencl-spirv"].launches)
    _same_as_the_reference_device(compiled, "opencl")


@pytest.mark.parametrize("name", ["softmax-33x300", "layer-norm-64x300", "logsumexp-50x700"])
def test_fused_ptx_uses_shared_memory_and_passes_ptxas(name):
    need_tools("ptxas")
    text, _, length, reductions = PROGRAMS[name]
    compiled, kernels = reference_kernels(text)
    exe = compile_gpu(kernels, list(compiled.kernels), "cuda", "sm_80")
    validate_executable(exe)
    assert exe.validated == ["ptxas sm_80", "ptxas sm_90"]
    (kernel,) = _fused(exe.launches)
    ptx = exe.assembly[kernel]
    width = fused_rows.row_width(length)
    partials = [int(n) for n in re.findall(r"\.shared \.align \d+ \.b8 \w+\[(\d+)\]", ptx)]
    assert partials == [width * 4] * reductions
    assert re.search(r"\bbar(rier)?\.sync", ptx) and "ld.shared" in ptx and "st.shared" in ptx and "%ctaid.x" in ptx


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("name", ["softmax-256x1024", "rms-norm-40x1000"])
def test_fused_amdgpu_objects_link_with_lds(name, arch, tmp_path):
    """(Workgroups of more than one 64-lane wavefront: LLVM drops the barriers of one wave.)"""
    need_tools("ld.lld", "llvm-readelf")
    text, _, length, reductions = PROGRAMS[name]
    compiled, kernels = reference_kernels(text)
    exe = compile_gpu(kernels, list(compiled.kernels), "rocm", arch)
    validate_executable(exe)
    (kernel,) = _fused(exe.launches)
    assert "s_barrier" in exe.assembly[kernel]
    notes = run_tool([need_tool("llvm-readelf"), "--notes", link_hsaco(kernel, exe.code[kernel], str(tmp_path))],
                     "llvm-readelf")
    lds = re.search(r"\.group_segment_fixed_size:\s*(\d+)", notes)
    assert lds and int(lds.group(1)) == reductions * fused_rows.row_width(length) * 4


def test_dump_describes_the_fused_kernel():
    from mlirtext.vm.dump import dump
    from mlirtext.vm.modfile import read_module_file
    data = pack(compile_module(parse_and_verify(PROGRAMS["softmax-33x300"][0]).module, "vulkan-spirv"))
    assert "33 workgroups of 64; fused row kernel: a workgroup per row of 300" in dump(read_module_file(data))


# Written at the linalg level: the variance's square fused into its reduction (a generic reading
# the mean through a projection), a row value scaling the row, and an argument read through a
# map with a constant (g[j, 0]).
CENTRED = """func.func @k(%x: tensor<20x300xf32>, %g: tensor<300x1xf32>) -> tensor<20x300xf32> {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.0033333334 : f32
  %er = tensor.empty() : tensor<20xf32>
  %ef = tensor.empty() : tensor<20x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<20xf32>) -> tensor<20xf32>
  %s = linalg.reduce ins(%x : tensor<20x300xf32>) outs(%f : tensor<20xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %mean = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : tensor<20xf32>) outs(%er : tensor<20xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %inv : f32
    linalg.yield %m : f32
  } -> tensor<20xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : tensor<20x300xf32>, tensor<20xf32>) outs(%f : tensor<20xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %q = arith.mulf %d, %d : f32
    %r = arith.addf %acc, %q : f32
    linalg.yield %r : f32
  } -> tensor<20xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %v, %g : tensor<20x300xf32>, tensor<20xf32>, tensor<20xf32>, tensor<300x1xf32>) outs(%ef : tensor<20x300xf32>) {
  ^bb0(%a: f32, %m: f32, %vv: f32, %gg: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %p = arith.mulf %d, %vv : f32
    %q = arith.mulf %p, %gg : f32
    linalg.yield %q : f32
  } -> tensor<20x300xf32>
  return %y : tensor<20x300xf32>
}"""


def _centred(x, g):
    x = x.astype(np.float64)
    mean = x.sum(1, keepdims=True) * np.float32(0.0033333334)
    return (x - mean) * ((x - mean) ** 2).sum(1, keepdims=True) * g[:, 0]


# A whole vector as one row (the rows' shape is ()): x / sum(x).
VECTOR = """func.func @k(%x: tensor<1000xf32>) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<f32>
  %ef = tensor.empty() : tensor<1000xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%x : tensor<1000xf32>) outs(%f : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x, %s : tensor<1000xf32>, tensor<f32>) outs(%ef : tensor<1000xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %b = arith.divf %a, %t : f32
    linalg.yield %b : f32
  } -> tensor<1000xf32>
  return %y : tensor<1000xf32>
}"""


def _run_kernel_on_vulkan(text: str, args: list, out_shape: tuple) -> np.ndarray:
    from mlirtext.vm.vulkan_device import VulkanDevice
    exe = compile_gpu(parse_and_verify(text).module, ["k"], "vulkan-spirv", validate=True)
    assert exe.launches["k"]["tiling"] == "fused rows"
    out = np.empty(out_shape, np.float32)
    device = VulkanDevice({"kernels": exe.launches}, exe.code, {"k": {"inputs": [0] * len(args), "outputs": [0]}})
    device.kernel("k")(args, [out])
    device.close()
    return out


@pytest.mark.parametrize("text", ["centred", "vector"])
def test_kernels_written_at_the_linalg_level_run_fused_on_vulkan(text):
    _vulkan_or_skip()
    rng = np.random.default_rng(5)
    if text == "centred":
        x, g = rng.standard_normal((20, 300)).astype(np.float32), rng.standard_normal((300, 1)).astype(np.float32)
        got, want = _run_kernel_on_vulkan(CENTRED, [x, g], (20, 300)), _centred(x, g)
    else:
        x = rng.uniform(0.5, 1.5, 1000).astype(np.float32)
        got, want = _run_kernel_on_vulkan(VECTOR, [x], (1000,)), x / x.astype(np.float64).sum()
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-5 * float(np.abs(want).max()))


def _kernel(text: str):
    (fn,) = [op for op in parse_and_verify(text).module.regions[0].blocks[0].ops if op.name == "func.func"]
    return fn


def test_what_does_not_fit_is_not_fused():
    """A combiner that is not associative, a row value read at another row's index, and a
    computed element of the row read at another element's index keep the thread-per-row kernel."""
    assert fused_rows.match_fused_rows(_kernel(CENTRED)) is not None
    subtract = CENTRED.replace("%r = arith.addf %acc, %q : f32", "%r = arith.subf %acc, %q : f32")
    assert fused_rows.match_fused_rows(_kernel(subtract)) is None
    other_row = CENTRED.replace("affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d1, 0)>",
                                "affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (0)>, affine_map<(d0, d1) -> (d1, 0)>")
    assert other_row != CENTRED and fused_rows.match_fused_rows(_kernel(other_row)) is None
    first = """func.func @k(%x: tensor<4x200xf32>) -> tensor<4x200xf32> {
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4xf32>
  %ef = tensor.empty() : tensor<4x200xf32>
  %f = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%x : tensor<4x200xf32>) outs(%f : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %e = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x200xf32>) outs(%ef : tensor<4x200xf32>) {
  ^bb0(%a: f32, %o: f32):
    %b = math.exp %a : f32
    linalg.yield %b : f32
  } -> tensor<4x200xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, READ)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%e, %s : tensor<4x200xf32>, tensor<4xf32>) outs(%ef : tensor<4x200xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %b = arith.divf %a, %t : f32
    linalg.yield %b : f32
  } -> tensor<4x200xf32>
  return %y : tensor<4x200xf32>
}"""
    assert fused_rows.match_fused_rows(_kernel(first.replace("READ", "d1"))) is not None
    assert fused_rows.match_fused_rows(_kernel(first.replace("READ", "0"))) is None   # e[i, 0]: another thread's
