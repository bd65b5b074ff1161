"""Large per-thread temporaries on cuda, rocm and opencl-spirv: a slice of a scratch buffer in
global memory, which the device allocates (threads x bytes, as the launch record's `scratch` says)
and passes after the outputs, instead of private memory (AMDGPU refuses a frame over 128 KiB)."""
from __future__ import annotations

import json
import re
import zipfile

import pytest

from mlirtext.targets.gpu import compile_gpu
from mlirtext.targets.gpu.llvm_gpu import SCRATCH_THRESHOLD
from mlirtext.targets.gpu.validate import validate_executable
from mlirtext.vm.signing import INTEGRITY, seal

from .gpu_status import need_tools, reference_kernels
from .test_gpu_opencl import UNPACK_IOTA, _cli, _opencl_or_skip, _run_both

#: One row of 8192 floats per thread (32 KiB): softmax as one dispatch keeps exp(x - max) of its
#: row while it sums it, six threads at once.
SOFTMAX_ROWS = """func.func @softmax_rows(%x: tensor<6x8192xf32>) -> tensor<6x8192xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %max = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1]
      : (tensor<6x8192xf32>, tensor<f32>) -> tensor<6xf32>
  %mb = stablehlo.broadcast_in_dim %max, dims = [0] : (tensor<6xf32>) -> tensor<6x8192xf32>
  %d = stablehlo.subtract %x, %mb : tensor<6x8192xf32>
  %e = stablehlo.exponential %d : tensor<6x8192xf32>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]
      : (tensor<6x8192xf32>, tensor<f32>) -> tensor<6xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<6xf32>) -> tensor<6x8192xf32>
  %r = stablehlo.divide %e, %sb : tensor<6x8192xf32>
  return %r : tensor<6x8192xf32>
}"""


def _compiled(text: str, target: str, arch: str | None = None):
    compiled, kernels = reference_kernels(text)
    (name,) = compiled.kernels
    exe = compile_gpu(kernels, [name], target, arch)
    validate_executable(exe)
    return name, exe


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
def test_a_128_kib_temporary_links_for_rocm_with_no_private_frame(arch):
    """IREE's `unpack *_large` shape: a one-thread kernel with a 128 KiB temporary, which as an
    alloca made a 131088-byte frame that AMDGPU refused."""
    need_tools("ld.lld", "llvm-readelf")
    name, exe = _compiled(UNPACK_IOTA, "rocm", arch)
    assert exe.validated == ["ld.lld", "llvm-readelf"]
    assert exe.launches[name]["scratch"] == [128 << 10]
    assert ".amdhsa_private_segment_fixed_size 0" in exe.assembly[name]
    assert "alloca" not in exe.llvm_ir


def test_a_128_kib_temporary_passes_ptxas_with_no_local_memory():
    need_tools("ptxas")
    name, exe = _compiled(UNPACK_IOTA, "cuda")
    assert exe.validated == ["ptxas sm_80", "ptxas sm_90"]
    assert exe.launches[name]["scratch"] == [128 << 10]
    assert "__local_depot" not in exe.assembly[name]   # (NVPTX's per-thread stack frame)


def test_a_128_kib_temporary_runs_on_opencl_and_matches_the_reference():
    _opencl_or_skip()
    name, exe = _compiled(UNPACK_IOTA, "opencl-spirv")
    assert exe.launches[name]["scratch"] == [128 << 10] and "alloca" not in exe.llvm_ir
    _run_both(UNPACK_IOTA, "unpack_iota")


@pytest.mark.parametrize("target", ["cuda", "rocm", "opencl-spirv"])
def test_each_thread_of_a_split_kernel_gets_its_own_slice(target, monkeypatch):
    """Six threads, a 32 KiB row each: a buffer of 6 x 32 KiB, thread gid's slice at gid x 32 KiB;
    the kernel's small temporaries (a float each) stay private. (Tiling off: a fused row kernel
    would take this softmax and keep no row; the thread-per-row kernel is what f16 or f64 rows get.)"""
    monkeypatch.setenv("MLIRTEXT_GPU_TILING", "0")
    need_tools({"cuda": "ptxas", "rocm": "ld.lld", "opencl-spirv": "spirv-val"}[target])
    name, exe = _compiled(SOFTMAX_ROWS, target)
    launch = exe.launches[name]
    assert launch["split"] and launch["threads"] == 6 and launch["scratch"] == [6 * (32 << 10)]
    assert re.search(rf"%slice\d+\.at = mul i64 %gid, {32 << 10}\n", exe.llvm_ir)
    sizes = [int(n) for n in re.findall(r"alloca (?:i8, i64 |\[)(\d+)", exe.llvm_ir)]
    assert sizes and max(sizes) <= SCRATCH_THRESHOLD


def test_a_split_kernel_with_large_temporaries_matches_the_reference_on_opencl(monkeypatch):
    _opencl_or_skip()
    monkeypatch.setenv("MLIRTEXT_GPU_TILING", "0")   # (the thread-per-row kernel, as above)
    _run_both(SOFTMAX_ROWS, "softmax_rows", seed=3)


def test_dump_shows_each_kernels_scratch_and_a_malformed_scratch_list_is_refused(tmp_path):
    need_tools("ld.lld", "llvm-readelf", "spirv-val")
    src, out = tmp_path / "unpack.mlir", tmp_path / "unpack.vmpack"
    src.write_text(UNPACK_IOTA)
    done = _cli("compile", str(src), "--target=rocm,opencl-spirv,vulkan-spirv", "--validate", "-o", str(out))
    assert done.returncode == 0, done.stderr
    dump = _cli("dump", str(out))
    assert dump.returncode == 0, dump.stderr
    lines = [ln for ln in dump.stdout.splitlines() if ln.startswith("@unpack_iota_dispatch_0:")]
    assert len(lines) == 3 and all(ln.endswith(", scratch 128.0 KiB") for ln in lines), dump.stdout
    bad = tmp_path / "bad.vmpack"
    with zipfile.ZipFile(out) as z, zipfile.ZipFile(bad, "w") as w:
        manifest = json.loads(z.read("manifest.json"))
        manifest["executables"]["rocm"]["kernels"]["unpack_iota_dispatch_0"]["scratch"] = ["128 KiB"]
        edited = {"manifest.json": json.dumps(manifest).encode()}
        edited[INTEGRITY] = seal(edited["manifest.json"])   # (its checksum updated: only the check refuses it)
        for item in z.infolist():
            w.writestr(item, edited.get(item.filename) or z.read(item))
    refused = _cli("dump", str(bad))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "kernel @unpack_iota_dispatch_0 has a malformed scratch list" in refused.stderr
