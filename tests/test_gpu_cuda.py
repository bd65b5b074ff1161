"""The benchmark programs and the bundled examples compile for `cuda`; the PTX passes ptxas for
sm_80 and sm_90 (PTX for sm_80 must also build for newer GPUs). The `cuda` device without a
driver says so plainly."""
from __future__ import annotations

import pytest

from mlirtext.targets.gpu import compile_gpu
from mlirtext.targets.gpu.validate import validate_executable

from .gpu_status import need_tools, program_kernels
from .test_vm_programs import PROGRAMS


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_ptx_passes_ptxas_for_sm80_and_sm90(path):
    need_tools("ptxas")
    module, names = program_kernels(path)
    exe = compile_gpu(module, names, "cuda", "sm_80")
    validate_executable(exe)
    assert exe.validated == ["ptxas sm_80", "ptxas sm_90"] and set(exe.code) == set(names)
    assert all(f".entry {n}(" in exe.code[n].decode() for n in names)


def test_cuda_device_without_a_driver_says_so():
    import ctypes
    try:
        ctypes.CDLL("libcuda.so.1")
        pytest.skip("this machine has a CUDA driver (scripts/gpu_check.py runs the cuda device)")
    except OSError:
        pass
    from mlirtext.vm.cuda_device import driver
    from mlirtext.vm.devices import DeviceError
    with pytest.raises(DeviceError, match="no CUDA driver"):
        driver()


DOTTED = """
func.func @i8i8.i32(%a: tensor<4x3xi8>, %b: tensor<3x5xi8>) -> tensor<4x5xi32> {
  %0 = stablehlo.dot %a, %b : (tensor<4x3xi8>, tensor<3x5xi8>) -> tensor<4x5xi32>
  return %0 : tensor<4x5xi32>
}
"""


def test_kernel_names_with_dots_get_valid_ptx_entry_points():
    """`.` cannot be in a PTX identifier: the entry point is spelt with `_$_` (as LLVM renames
    internal symbols) and the module file records it for the cuda device to look up."""
    from mlirtext.targets.gpu.llvm_gpu import entry_symbol
    from mlirtext.vm.modfile import pack, read_module_file

    from .gpu_status import reference_kernels
    need_tools("ptxas")
    compiled, module = reference_kernels(DOTTED)
    names = list(compiled.kernels)
    assert names == ["i8i8.i32_dispatch_0"]
    exe = compile_gpu(module, names, "cuda", "sm_80")
    validate_executable(exe)   # ptxas rejected `.entry i8i8.i32_dispatch_0(`
    assert ".entry i8i8_$_i32_dispatch_0(" in exe.code[names[0]].decode()
    compiled.gpu["cuda"] = exe
    manifest = read_module_file(pack(compiled)).manifest
    assert manifest["executables"]["cuda"]["kernels"][names[0]]["entry"] == "i8i8_$_i32_dispatch_0"
    assert entry_symbol("9lives.x", "cuda") == "_9lives_$_x" and entry_symbol("a.b", "rocm") == "a.b"
