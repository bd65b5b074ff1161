"""The opencl-spirv target and the `opencl` device (pocl's CPU driver without a GPU): SPIR-V for
OpenCL's Kernel execution model from the LLVM IR path, validated by spirv-val, run by pocl after
`llvm-spirv -r`, giving the reference device's outputs on the bundled examples, the benchmark
programs, the tiled matmuls and the row reductions (tolerances as on `vulkan`)."""
from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.targets.gpu import compile_gpu
from mlirtext.targets.gpu.tiling import TILE
from mlirtext.vm.compiler import compile_module
from mlirtext.vm.modfile import pack
from mlirtext.vm.vm import LoadedModule

from .gpu_status import need_tools, reference_kernels
from .test_gpu_tiled import PROGRAMS as MATMULS, REDUCTIONS, _inputs
from .test_vm_programs import PROGRAMS


@pytest.fixture(autouse=True)
def _pocl_cache_out_of_home(monkeypatch, tmp_path_factory):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))


def _opencl_or_skip():
    need_tools("spirv-val", "llvm-spirv")
    from mlirtext.vm.devices import DeviceError
    from mlirtext.vm.opencl_device import context
    try:
        return context()
    except DeviceError as e:
        pytest.skip(f"no OpenCL device here: {e}")


def _same(got, want, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, what
    if want.dtype.kind in "iub":
        assert np.array_equal(got, want), what
    else:   # GPU kernels round (and sum) differently from the interpreter
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        err = np.abs(got.astype(np.float64) - want)
        assert np.all(err <= 1e-5 * scale + 1e-4 * np.abs(want)), f"{what}: max |diff| {err.max()}"


def _run_both(text: str, name: str, seed: int = 0, tiling: str | None = None):
    compiled = compile_module(parse_and_verify(text, name).module, "opencl-spirv", validate=True)
    assert compiled.gpu["opencl-spirv"].validated == ["spirv-val opencl1.2"]
    if tiling:
        assert any(k.get("tiling") == tiling for k in compiled.gpu["opencl-spirv"].launches.values())
    data = pack(compiled)
    gpu, ref = LoadedModule(data, "opencl"), LoadedModule(data, "reference")
    (fn,) = gpu.functions
    args = _inputs(gpu.function(fn), seed)
    for got, want in zip(gpu.function(fn)(*args), ref.function(fn)(*args)):
        _same(got, want, name)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_opencl_matches_the_reference_device(path):
    _opencl_or_skip()
    _run_both(path.read_text(), str(path))


@pytest.mark.parametrize("name", MATMULS)
def test_tiled_matmul_matches_the_reference_device_on_opencl(name):
    _opencl_or_skip()
    _run_both(MATMULS[name], name, tiling="matmul")


@pytest.mark.parametrize("name", REDUCTIONS)
def test_row_reductions_match_the_reference_device_on_opencl(name):
    _opencl_or_skip()
    _run_both(REDUCTIONS[name], name, seed=1, tiling="row reduction")


def test_the_spirv_is_opencl_flavoured():
    """Kernel execution model, Physical64 addressing, buffers in CrossWorkgroup storage (no generic
    pointers: OpenCL 1.2 has none), ids from OpenCL's builtin variables, and for a tiled kernel
    tiles in Workgroup storage between barriers."""
    compiled, kernels = reference_kernels(MATMULS["odd-33x65x17"])
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv")
    (kernel,) = [k for k, launch in exe.launches.items() if launch.get("workgroup") == [TILE, TILE]]
    spirv = exe.assembly[kernel]
    assert "OpMemoryModel Physical64 OpenCL" in spirv and re.search(rf"OpEntryPoint Kernel %\w+ \"{kernel}\"", spirv)
    assert "OpTypePointer CrossWorkgroup" in spirv and "OpTypePointer Workgroup" in spirv
    assert "GenericPointer" not in spirv and "OpTypePointer Generic" not in spirv
    for builtin in ("WorkgroupId", "LocalInvocationId"):
        assert f"BuiltIn {builtin}" in spirv
    assert spirv.count("OpControlBarrier") >= 2
    assert "define spir_kernel void @" in exe.llvm_ir and "ptr addrspace(1) noalias" in exe.llvm_ir
    assert "@_Z7barrierj(i32 1)" in exe.llvm_ir and "addrspace(3) global" in exe.llvm_ir


def test_spirv_val_and_the_reader_accept_every_kernel(tmp_path):
    """Each kernel passes spirv-val for OpenCL 1.2, and llvm-spirv reads it back (after the
    scalar OpConstantNull rewrite) into bitcode that declares the kernel."""
    need_tools("spirv-val", "llvm-spirv")
    from mlirtext.targets.gpu.validate import need_tool, run_tool
    from mlirtext.vm.opencl_device import _scalar_nulls, spir_bitcode
    compiled, kernels = reference_kernels((PROGRAMS[0]).read_text())
    exe = compile_gpu(kernels, list(compiled.kernels), "opencl-spirv", validate=True)
    for name, code in exe.code.items():
        rewritten = tmp_path / f"{name}.spv"
        rewritten.write_bytes(_scalar_nulls(code))
        run_tool([need_tool("spirv-val"), "--target-env", "opencl1.2", str(rewritten)], name)
        text = run_tool([need_tool("spirv-dis"), str(rewritten)], name)
        assert not re.search(r"= OpConstantNull %(u?(char|short|int|long)|float|double|half|bool)\b", text)
        assert spir_bitcode(code, name)[:4] == b"BC\xc0\xde"


def test_no_platform_is_a_clear_error(monkeypatch):
    pyopencl = pytest.importorskip("pyopencl")
    from mlirtext.vm import opencl_device
    from mlirtext.vm.devices import DeviceError
    monkeypatch.setattr(opencl_device, "_state", {})
    monkeypatch.setattr(pyopencl, "get_platforms", lambda: [])
    with pytest.raises(DeviceError, match="no OpenCL platform"):
        opencl_device.context()


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mlirtext", *args], capture_output=True, text=True, cwd=cwd)


def test_compile_dump_and_run_from_the_command_line(tmp_path):
    _opencl_or_skip()
    src = tmp_path / "relu.mlir"
    src.write_text("""func.func @relu(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<3x4xf32>
  %r = stablehlo.maximum %x, %z : tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}""")
    out = tmp_path / "relu.vmpack"
    done = _cli("compile", str(src), "--target=llvm-cpu,opencl-spirv", "--validate", "-o", str(out))
    assert done.returncode == 0, done.stderr
    listing = _cli("dump", str(out), "--print-target-code")
    assert listing.returncode == 0, listing.stderr
    assert "//----- opencl-spirv kernels (spirv, opencl1.2; validated: spirv-val opencl1.2) -----" in listing.stdout
    assert "OpEntryPoint Kernel" in listing.stdout
    values = " ".join(str(v) for v in np.arange(-6, 6) / 2)
    ran = _cli("run", str(out), "--device=opencl", f"--input=3x4xf32={values}")
    assert ran.returncode == 0, ran.stderr
    assert "EXEC @relu" in ran.stdout and "3x4xf32=[0 0 0 0][0 0 0 0.5][1 1.5 2 2.5]" in ran.stdout


def test_a_module_without_opencl_code_is_refused(tmp_path):
    src = tmp_path / "neg.mlir"
    src.write_text("""func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = stablehlo.negate %x : tensor<4xf32>
  return %r : tensor<4xf32>
}""")
    out = tmp_path / "neg.vmpack"
    assert _cli("compile", str(src), "-o", str(out)).returncode == 0
    ran = _cli("run", str(out), "--device=opencl", "--input=4xf32=1 2 3 4")
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert "no opencl-spirv executable" in ran.stderr and "--target=opencl-spirv" in ran.stderr


def test_a_pointer_of_unknown_address_space_is_a_compile_error():
    """A pointer chosen by a phi is not in the translated IR's forms: refused, never guessed."""
    from mlirtext.targets.gpu.executable import GpuCompileError
    from mlirtext.targets.gpu.llvm_gpu import _opencl_address_spaces
    ir = """define internal void @k.body(ptr %a, ptr %b, i1 %c) alwaysinline {
entry:
  br i1 %c, label %x, label %y
x:
  br label %y
y:
  %p = phi ptr [ %a, %entry ], [ %b, %x ]
  store float 0.0, ptr %p
  ret void
}
"""
    with pytest.raises(GpuCompileError, match=r"@k\.body: cannot tell the address space of %p"):
        _opencl_address_spaces(ir)
    placed = _opencl_address_spaces(ir.replace("%p = phi ptr [ %a, %entry ], [ %b, %x ]",
                                               "%p = getelementptr float, ptr %a, i64 1"))
    assert "store float 0.0, ptr addrspace(1) %p" in placed and "(ptr addrspace(1) %a, ptr addrspace(1) %b" in placed
