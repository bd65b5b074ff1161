"""The benchmark programs and the bundled examples compile for `rocm`; each kernel's object links
(ld.lld -shared) into an HSA code object that llvm-readelf reads as one (OS/ABI AMDGPU - HSA,
EM_AMDGPU, the processor, the kernel's descriptor), for gfx90a and gfx942."""
from __future__ import annotations

import pytest

from mlirtext.targets.gpu import compile_gpu
from mlirtext.targets.gpu.validate import validate_executable

from .gpu_status import need_tools, program_kernels
from .test_vm_programs import PROGRAMS


@pytest.mark.parametrize("arch", ["gfx90a", "gfx942"])
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_objects_link_into_hsa_code_objects(path, arch):
    need_tools("ld.lld", "llvm-readelf")
    module, names = program_kernels(path)
    exe = compile_gpu(module, names, "rocm", arch)
    validate_executable(exe)
    assert exe.validated == ["ld.lld", "llvm-readelf"] and set(exe.code) == set(names)
