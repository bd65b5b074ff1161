"""Convolutions as tiled implicit GEMMs (targets/gpu/tiling.py): the output's n, oh, ow axes are
the rows, its channels the columns, kh, kw, ic the K slices; A's tile is read through the conv's
input map (oh * stride + kh * dilation), from the input the pad dispatch wrote. On the `vulkan`
device each conv gives the untiled kernel's outputs bit for bit (the same sums in the same order)
and the reference device's up to rounding; the PTX passes ptxas (sm_80, sm_90), the AMDGPU
objects link; a conv whose input map is not linear (grouped, depthwise) stays untiled."""
from __future__ import annotations

import re

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.targets.gpu import compile_gpu
from mlirtext.targets.gpu.tiling import TILE, match_matmul
from mlirtext.targets.gpu.validate import link_hsaco, need_tool, run_tool, validate_executable
from mlirtext.compiler.driver import compile_module
from mlirtext.compiler.module_writer import pack
from mlirtext.vm.vm import LoadedModule

from .gpu_status import need_tools, reference_kernels
from .test_gpu_tiled import _inputs, _vulkan_or_skip


def _hlo(x: tuple, w: tuple, out: tuple, layout: str, window: str, element: str = "f32", groups: int = 1) -> str:
    t = lambda shape: f"tensor<{'x'.join(map(str, shape))}x{element}>"   # noqa: E731
    return f"""func.func @main(%x: {t(x)}, %w: {t(w)}) -> {t(out)} {{
  %0 = stablehlo.convolution(%x, %w) dim_numbers = {layout}, window = {{{window}}} {{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : ({t(x)}, {t(w)}) -> {t(out)}
  return %0 : {t(out)}
}}"""


NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
NCHW = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"


def _named(op: str, x: tuple, w: tuple, out: tuple, strides: int, dilations: int) -> str:
    t = lambda shape: f"tensor<{'x'.join(map(str, shape))}xf32>"   # noqa: E731
    return f"""func.func @main(%x: {t(x)}, %w: {t(w)}) -> {t(out)} {{
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {t(out)}
  %c = linalg.fill ins(%zero : f32) outs(%e : {t(out)}) -> {t(out)}
  %r = linalg.{op} {{dilations = dense<{dilations}> : tensor<2xi64>, strides = dense<{strides}> : tensor<2xi64>}} ins(%x, %w : {t(x)}, {t(w)}) outs(%c : {t(out)}) -> {t(out)}
  return %r : {t(out)}
}}"""


# tosa.conv2d starts its sums from the bias (a broadcast generic, not a fill), stride 2, padding.
TOSA_BIAS = """func.func @main(%x: tensor<2x11x9x3xf32>, %w: tensor<17x3x3x3xf32>, %b: tensor<17xf32>) -> tensor<2x6x5x17xf32> {
  %zp = tosa.const values(dense<0.0> : tensor<1xf32>) : () -> tensor<1xf32>
  %conv = tosa.conv2d %x, %w, %b, %zp, %zp pad([1, 1, 1, 1]) stride([2, 2]) dilation([1, 1]) acc_type(f32) : (tensor<2x11x9x3xf32>, tensor<17x3x3x3xf32>, tensor<17xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x6x5x17xf32>
  return %conv : tensor<2x6x5x17xf32>
}"""

PROGRAMS = {
    "nhwc-pad1-stride1": _hlo((1, 12, 12, 5), (3, 3, 5, 7), (1, 12, 12, 7), NHWC, "stride = [1, 1], pad = [[1, 1], [1, 1]]"),
    "nhwc-stride2-batch2": _hlo((2, 15, 13, 6), (3, 3, 6, 20), (2, 8, 6, 20), NHWC, "stride = [2, 2], pad = [[1, 1], [0, 0]]"),
    "nhwc-dilated-blocks": _hlo((1, 24, 22, 9), (3, 3, 9, 70), (1, 20, 18, 70), NHWC, "stride = [1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [2, 2]"),
    "nchw-stride2-pad": _hlo((2, 6, 15, 13), (20, 6, 3, 3), (2, 20, 8, 7), NCHW, "stride = [2, 2], pad = [[1, 1], [1, 1]]"),
    "i32-nhwc": _hlo((1, 9, 9, 3), (2, 2, 3, 5), (1, 8, 8, 5), NHWC, "stride = [1, 1], pad = [[0, 0], [0, 0]]", "i32"),
    "linalg-nchw-fchw-stride2": _named("conv_2d_nchw_fchw", (2, 5, 13, 11), (7, 5, 3, 3), (2, 7, 6, 5), 2, 1),
    "linalg-nhwc-hwcf-dilation2": _named("conv_2d_nhwc_hwcf", (3, 10, 12, 4), (3, 2, 4, 18), (3, 6, 10, 18), 1, 2),
    "tosa-bias-stride2": TOSA_BIAS,
}


def _module(text: str, tiling: bool, monkeypatch) -> tuple:
    """(module file, vulkan-spirv launches) with tiling on or off."""
    monkeypatch.setenv("MLIRTEXT_GPU_TILING", "1" if tiling else "0")
    compiled = compile_module(parse_and_verify(text).module, "vulkan-spirv", validate=tiling)
    return pack(compiled), compiled.gpu["vulkan-spirv"].launches


@pytest.mark.parametrize("name", PROGRAMS)
def test_tiled_conv_matches_untiled_and_reference_on_vulkan(name, monkeypatch):
    need_tools("spirv-as", "spirv-val")
    _vulkan_or_skip()
    tiled, launches = _module(PROGRAMS[name], True, monkeypatch)
    untiled, _ = _module(PROGRAMS[name], False, monkeypatch)
    assert [k["tiling"] for k in launches.values() if k.get("workgroup")] == ["convolution"]
    gpu, plain, ref = LoadedModule(tiled, "vulkan"), LoadedModule(untiled, "vulkan"), LoadedModule(tiled, "reference")
    args = _inputs(gpu.function("main"))
    (got,), (same,), (want,) = gpu.function("main")(*args), plain.function("main")(*args), ref.function("main")(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, same)     # the untiled kernel's sums, in its order
    if want.dtype.kind == "i":
        assert np.array_equal(got, want)
    else:   # numpy adds in another order
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))


def test_conv_is_classified_as_an_implicit_gemm():
    compiled, kernels = reference_kernels(PROGRAMS["nhwc-stride2-batch2"])
    (conv,) = [op for op in kernels.regions[0].blocks[0].ops if op.name == "func.func" and match_matmul(op)]
    mm = match_matmul(conv)
    assert mm.kind == "convolution" and (mm.m, mm.n, mm.k) == (2 * 8 * 6, 20, 3 * 3 * 6)
    assert [mm.extents[d] for d in mm.axes("m")] == [2, 8, 6] and [mm.extents[d] for d in mm.axes("n")] == [20]
    # oh * 2 + kh and ow * 2 + kw: A's second and third axes
    strided = [dict(terms) for terms, _ in mm.a_map if len(terms) == 2]
    assert len(strided) == 2 and all(sorted(t.values()) == [1, 2] for t in strided)
    exe = compile_gpu(kernels, list(compiled.kernels), "vulkan-spirv")
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("workgroup")]
    shader = exe.assembly[kernel]
    assert shader.count("OpControlBarrier") == 2 and len(re.findall(r"= OpVariable \S+ Workgroup\b", shader)) == 2
    assert exe.launches[kernel]["grid"] == [1, -(-96 // (4 * TILE)), 1]


@pytest.mark.parametrize("text", [
    _hlo((1, 10, 10, 8), (3, 3, 1, 8), (1, 8, 8, 8), NHWC, "stride = [1, 1], pad = [[0, 0], [0, 0]]", groups=8),
    _hlo((1, 10, 10, 8), (3, 3, 4, 6), (1, 8, 8, 6), NHWC, "stride = [1, 1], pad = [[0, 0], [0, 0]]", groups=2)],
    ids=["depthwise", "grouped"])
def test_grouped_and_depthwise_convs_stay_untiled(text):
    compiled, kernels = reference_kernels(text)
    exe = compile_gpu(kernels, list(compiled.kernels), "vulkan-spirv")
    assert not any(k.get("workgroup") for k in exe.launches.values())


def test_a_conv_reading_past_its_input_is_not_tiled():
    """An input map that leaves the input (no pad before the kernel) is rejected, not guarded."""
    text = PROGRAMS["linalg-nchw-fchw-stride2"].replace("tensor<2x5x13x11xf32>", "tensor<2x5x12x11xf32>")
    module = parse_and_verify(text).module
    (fn,) = [op for op in module.regions[0].blocks[0].ops if op.name == "func.func"]
    assert match_matmul(fn) is None
    assert match_matmul(parse_and_verify(PROGRAMS["linalg-nchw-fchw-stride2"]).module.regions[0].blocks[0].ops[0])


@pytest.mark.parametrize("name", ["nhwc-stride2-batch2", "nchw-stride2-pad", "tosa-bias-stride2", "i32-nhwc"])
def test_tiled_conv_ptx_uses_shared_memory_and_passes_ptxas(name):
    need_tools("ptxas")
    compiled, kernels = reference_kernels(PROGRAMS[name])
    exe = compile_gpu(kernels, list(compiled.kernels), "cuda", "sm_80")
    validate_executable(exe)
    assert exe.validated == ["ptxas sm_80", "ptxas sm_90"]
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("tiling") == "convolution"]
    ptx = exe.assembly[kernel]
    assert re.search(r"\bbar(rier)?\.sync", ptx) and "ld.shared" in ptx and "st.shared" in ptx


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_tiled_conv_amdgpu_object_links_with_lds(arch, tmp_path):
    need_tools("ld.lld", "llvm-readelf")
    compiled, kernels = reference_kernels(PROGRAMS["tosa-bias-stride2"])
    exe = compile_gpu(kernels, list(compiled.kernels), "rocm", arch)
    validate_executable(exe)
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("tiling") == "convolution"]
    assert "s_barrier" in exe.assembly[kernel] and re.search(r"\bds_(read|load)", exe.assembly[kernel])
    notes = run_tool([need_tool("llvm-readelf"), "--notes", link_hsaco(kernel, exe.code[kernel], str(tmp_path))],
                     "llvm-readelf")
    lds = re.search(r"\.group_segment_fixed_size:\s*(\d+)", notes)
    assert lds and int(lds.group(1)) > 0
