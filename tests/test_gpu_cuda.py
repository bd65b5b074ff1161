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
