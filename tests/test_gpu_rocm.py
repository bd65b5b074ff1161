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


@pytest.mark.parametrize("program", ["SOLVE", "ROUNDS"])
def test_temporaries_inside_loops_take_no_dynamic_stack(program):
    """A temporary allocated inside a loop (test_gpu_cuda's triangular solve and while rounds) is
    one buffer in the kernel's entry block: a fixed private segment, where an alloca in the loop
    needed a dynamic stack that grew on every iteration."""
    from . import test_gpu_cuda
    from .gpu_status import reference_kernels
    need_tools("ld.lld", "llvm-readelf")
    compiled, module = reference_kernels(getattr(test_gpu_cuda, program))
    (name,) = compiled.kernels
    exe = compile_gpu(module, [name], "rocm", "gfx942")
    validate_executable(exe)
    assert ".amdhsa_uses_dynamic_stack 0" in exe.assembly[name]


def test_a_selection_failure_names_the_operation_llvm_could_not_select():
    """When LLVM aborts on a node it cannot select, the error gives that node (here `fsin` on
    f64, which AMDGPU has no instruction for), not the tail of the operand tree it prints after
    it (`t5: i64 = AssertZext ... i38` said nothing of the cause)."""
    from mlirtext.targets.gpu import GpuCompileError
    from mlirtext.targets.gpu.llvm_gpu import generate
    ir = """define amdgpu_kernel void @sine(ptr addrspace(1) %p) {
  %id = call i32 @llvm.amdgcn.workitem.id.x()
  %at = getelementptr double, ptr addrspace(1) %p, i32 %id
  %x = load double, ptr addrspace(1) %at
  %y = call double @llvm.sin.f64(double %x)
  store double %y, ptr addrspace(1) %at
  ret void
}
declare double @llvm.sin.f64(double)
declare i32 @llvm.amdgcn.workitem.id.x()
"""
    with pytest.raises(GpuCompileError, match=r"kernel @sine: rocm \(gfx942\): LLVM stopped during code generation: "
                                              r".*LLVM ERROR: Cannot select: t\d+: f64 = fsin .*In function: sine$"):
        generate(ir, ["sine"], "rocm", "gfx942")
