"""GPU kernel generation (mlirtext/targets/gpu/): thread mapping, entry points, and the ways a
kernel can fail (each a GpuCompileError naming the kernel, never a crash)."""
from __future__ import annotations

import pytest

from mlirtext.targets.gpu import GpuCompileError, compile_gpu
from mlirtext.targets.gpu.llvm_gpu import _check_calls
from mlirtext.targets.gpu.validate import find_tool

from .gpu_status import reference_kernels

ELEMENTWISE = """func.func @f(%a: tensor<100x8xf32>, %b: tensor<100x8xf32>) -> tensor<100x8xf32> {
  %0 = stablehlo.add %a, %b : tensor<100x8xf32>
  %1 = stablehlo.tanh %0 : tensor<100x8xf32>
  return %1 : tensor<100x8xf32>
}"""
TOTAL = """func.func @f(%a: tensor<300xf32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<300xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""


def kernels(text: str):
    compiled, module = reference_kernels(text)
    return module, list(compiled.kernels)


def test_output_elements_become_threads_and_a_total_runs_in_one_thread():
    module, names = kernels(ELEMENTWISE)
    exe = compile_gpu(module, names, "cuda")
    (launch,) = exe.launches.values()
    assert launch == {"threads": 800, "workgroup_size": 64, "workgroups": 13, "split": True, "axes": [100, 8],
                      "entry": "f_dispatch_0"}
    module, names = kernels(TOTAL.replace("300", "100"))   # too short to share among a workgroup
    (launch,) = compile_gpu(module, names, "cuda").launches.values()
    assert launch["threads"] == 1 and not launch["split"]


def test_a_long_total_is_a_workgroup_tree_reduction():
    module, names = kernels(TOTAL)
    (launch,) = compile_gpu(module, names, "cuda").launches.values()
    assert launch["tiling"] == "row reduction" and launch["grid"] == [1, 1, 1] and launch["threads"] == 256


def test_cuda_entry_point_reads_the_thread_id_and_checks_bounds():
    module, names = kernels(ELEMENTWISE)
    exe = compile_gpu(module, names, "cuda")
    ptx = exe.code[names[0]].decode()
    assert f".visible .entry {names[0]}(" in ptx and ".target sm_80" in ptx
    assert "%ctaid.x" in ptx and "%tid.x" in ptx and ".global" in ptx
    assert "tanh" not in ptx.lower()   # expanded into a polynomial before codegen: no libcall
    assert "define ptx_kernel void" in exe.llvm_ir and "ptr addrspace(1) noalias" in exe.llvm_ir
    assert "icmp ult i64 %gid, 800" in exe.llvm_ir
    assert "%idx1 = urem i64 %gid, 8" in exe.llvm_ir and "%rest1 = udiv i64 %gid, 8" in exe.llvm_ir


def test_rocm_object_is_a_code_object_v5_kernel_for_the_chosen_processor():
    module, names = kernels(ELEMENTWISE)
    exe = compile_gpu(module, names, "rocm", "gfx90a")
    asm = exe.assembly[names[0]]
    assert '.amdgcn_target "amdgcn-amd-amdhsa--gfx90a' in asm and ".amdhsa_code_object_version 5" in asm
    assert f".amdhsa_kernel {names[0]}" in asm
    assert exe.code[names[0]][:4] == b"\x7fELF" and "amdgpu_kernel" in exe.llvm_ir


def test_spirv_shader_binds_one_buffer_per_argument():
    if find_tool("spirv-as") is None:
        pytest.skip("spirv-as not found (Debian spirv-tools; make gpu-deps)")
    module, names = kernels(ELEMENTWISE)
    exe = compile_gpu(module, names, "vulkan-spirv")
    asm = exe.assembly[names[0]]
    assert f'OpEntryPoint GLCompute %main "{names[0]}"' in asm and "LocalSize 64 1 1" in asm
    assert "BuiltIn GlobalInvocationId" in asm
    assert sorted(line.split()[-1] for line in asm.splitlines() if " Binding " in line) == ["0", "1", "2"]
    assert exe.code[names[0]][:4] == b"\x03\x02\x23\x07"   # the SPIR-V magic number


def test_validation_failure_names_the_kernel():
    if find_tool("ptxas") is None:
        pytest.skip("ptxas not found (CUDA toolkit)")
    from mlirtext.targets.gpu.validate import validate_executable
    module, names = kernels(ELEMENTWISE)
    exe = compile_gpu(module, names, "cuda")
    exe.code[names[0]] = exe.code[names[0]].replace(b"ret;", b"bogus_instruction;")
    with pytest.raises(GpuCompileError, match=f"kernel @{names[0]}: ptxas -arch=sm_80 rejects its PTX"):
        validate_executable(exe)


# NVPTX cannot select llvm.tanh without `afn`: LLVM aborts the process generating @bad.
ABORTING = """define ptx_kernel void @bad(ptr addrspace(1) %p) {
  %x = load float, ptr addrspace(1) %p
  %y = call float @llvm.tanh.f32(float %x)
  store float %y, ptr addrspace(1) %p
  ret void
}
define ptx_kernel void @good(ptr addrspace(1) %p) {
  store float 1.0, ptr addrspace(1) %p
  ret void
}
declare float @llvm.tanh.f32(float)
"""


def test_llvm_aborting_names_the_kernel_and_the_next_compile_still_works():
    from mlirtext.targets.gpu.llvm_gpu import generate
    with pytest.raises(GpuCompileError, match=r"kernel @bad: cuda \(sm_80\): LLVM stopped during code generation"):
        generate(ABORTING, ["bad", "good"], "cuda", "sm_80")
    module, names = kernels(ELEMENTWISE)
    assert compile_gpu(module, names, "cuda").code[names[0]]


def test_a_fresh_kernel_is_generated_in_a_forked_process_whose_abort_the_server_reports_and_survives():
    """A "fresh" request (opencl-spirv's): each kernel in a child forked from the codegen server;
    LLVM aborting one is a "failed" answer with its signal, and the server answers the next request."""
    import json
    import subprocess
    import sys
    from mlirtext.targets.gpu.llvm_gpu import TRIPLES
    server = subprocess.Popen([sys.executable, "-m", "mlirtext.targets.gpu.codegen"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        def ask(only):
            request = {"ir": ABORTING, "kernels": ["bad", "good"], "triple": TRIPLES["cuda"], "cpu": "sm_80",
                       "target": "cuda", "only": only, "fresh": True}
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            answers = []
            while not answers or not answers[-1].get("done"):
                answers.append(json.loads(server.stdout.readline()))
            return answers
        good_then_bad = ask(["good", "bad"])
        assert [a.get("begin") or a.get("kernel") or a.get("failed") for a in good_then_bad[:-1]] == \
            ["good", "good", "bad", "bad"]
        assert "assembly" in good_then_bad[1] and good_then_bad[3]["exit"] < 0   # killed by LLVM's abort
        again = ask(["good"])
        assert again[1]["kernel"] == "good" and ".entry good" in again[1]["assembly"] and server.poll() is None
    finally:
        server.stdin.close()
        server.wait(timeout=60)


#: math.cttz has no SPIR-V form in the Vulkan emitter.
CTTZ = """func.func @f(%a: tensor<8xi32>) -> tensor<8xi32> {
  %e = tensor.empty() : tensor<8xi32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xi32>) outs(%e : tensor<8xi32>) {
  ^bb0(%x: i32, %o: i32):
    %r = math.cttz %x : i32
    linalg.yield %r : i32
  } -> tensor<8xi32>
  return %0 : tensor<8xi32>
}"""


def test_a_libm_call_is_refused_with_the_kernel_named():
    # Every math op is expanded for GPU targets, so only a hand-written call reaches this check.
    ir = ("declare double @erf(double)\n"
          "define void @k(ptr %p) {\n  %x = call double @erf(double 1.0)\n  store double %x, ptr %p\n  ret void\n}\n")
    with pytest.raises(GpuCompileError, match="kernel @k: calls @erf, which has no rocm implementation"):
        _check_calls(ir, "rocm")


def test_an_op_without_a_spirv_form_is_refused_with_the_kernel_named():
    if find_tool("spirv-as") is None:
        pytest.skip("spirv-as not found (Debian spirv-tools; make gpu-deps)")
    module, names = kernels(CTTZ)
    with pytest.raises(GpuCompileError, match=f"kernel @{names[0]}: vulkan-spirv: 'math.cttz' has no SPIR-V form"):
        compile_gpu(module, names, "vulkan-spirv")


def test_unknown_target():
    module, names = kernels(ELEMENTWISE)
    with pytest.raises(GpuCompileError, match="unknown GPU target 'metal'"):
        compile_gpu(module, names, "metal")
