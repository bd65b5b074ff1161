"""The benchmark programs and the bundled examples compile for `cuda`; the PTX passes ptxas for
sm_80 and sm_90 (PTX for sm_80 must also build for newer GPUs). The `cuda` device without a
driver says so plainly."""
from __future__ import annotations

import numpy as np
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
    from mlirtext.compiler.module_writer import pack
    from mlirtext.vm.modfile import read_module_file

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


# Temporaries allocated inside a loop: a tensor computed in each iteration of a triangular solve
# (its row loop carries the solution) and of a while loop (threefry-like rounds, as the corpus's
# random_* programs run them). Allocated where they are, in the loop, they became dynamic
# allocas, which NVPTX refused ("Support for stacksave requires PTX ISA version >= 7.3").
SOLVE = """func.func @solve(%a: tensor<4x4xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}"""
ROUNDS = """func.func @rounds(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %five = stablehlo.constant dense<5> : tensor<i64>
  %left = stablehlo.constant dense<13> : tensor<4xi32>
  %right = stablehlo.constant dense<19> : tensor<4xi32>
  %n, %p, %q = stablehlo.while(%i = %zero, %a = %x, %b = %y) : tensor<i64>, tensor<4xi32>, tensor<4xi32>
  cond {
    %more = stablehlo.compare LT, %i, %five : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %more : tensor<i1>
  } do {
    %sum = stablehlo.add %a, %b : tensor<4xi32>
    %hi = stablehlo.shift_left %b, %left : tensor<4xi32>
    %lo = stablehlo.shift_right_logical %b, %right : tensor<4xi32>
    %rotated = stablehlo.or %hi, %lo : tensor<4xi32>
    %mixed = stablehlo.xor %sum, %rotated : tensor<4xi32>
    %next = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %next, %sum, %mixed : tensor<i64>, tensor<4xi32>, tensor<4xi32>
  }
  return %q : tensor<4xi32>
}"""


def _inputs_for(kernel) -> list:
    """Random inputs for the kernel's arguments (in its order): a 4x4 matrix is made lower
    triangular with its diagonal well away from 0, for the solve."""
    rng = np.random.default_rng(3)
    inputs = []
    for t in kernel.regions[0].blocks[0].arguments:
        shape = tuple(t.type.shape)
        if str(t.type.element) == "f32":
            x = rng.uniform(-4, 4, shape).astype(np.float32)
            inputs.append(np.tril(x) + np.diag([4.5, -5.0, 6.0, 4.25]).astype(np.float32) if shape == (4, 4) else x)
        else:
            inputs.append(rng.integers(-2**31, 2**31, shape).astype(np.int32))
    return inputs


def _run_body_on_host(llvm_ir: str, kernel: str, inputs: list, outputs: list) -> None:
    """Run the body of a one-thread cuda kernel, from the module's LLVM IR as the GPU gets it
    (temporaries as allocas), on this CPU: the bodies come before the GPU entry points."""
    import ctypes

    from mlirtext.targets.llvm_cpu import compile_llvm_ir, load_object
    bodies = llvm_ir.split("\ndefine ptx_kernel ", 1)[0]
    bodies = bodies.replace(f"define internal void @{kernel}.body(", f"define void @{kernel}.body(")
    library = load_object(compile_llvm_ir(bodies).object_code)
    arrays = [np.ascontiguousarray(x) for x in inputs] + outputs
    library.function(f"{kernel}.body", None, *[ctypes.c_void_p] * len(arrays))(*[a.ctypes.data for a in arrays])


@pytest.mark.parametrize("text", [SOLVE, ROUNDS], ids=["triangular_solve", "while"])
def test_temporaries_inside_loops_are_allocated_once_in_the_entry_block(text):
    """Every temporary of the kernel body is allocated in its entry block (one buffer for all
    iterations of its loop): NVPTX generates it without stacksave, the PTX passes ptxas (where
    it is installed), and the body, run on this CPU as the GPU gets it, gives the interpreter's
    results."""
    from mlirtext.interpreter import Interpreter
    from mlirtext.targets.gpu.validate import find_tool
    from .gpu_status import reference_kernels
    compiled, module = reference_kernels(text)
    (name,) = compiled.kernels
    exe = compile_gpu(module, [name], "cuda", "sm_80")
    assert not exe.launches[name]["split"] and "stacksave" not in exe.code[name].decode()
    if find_tool("ptxas") is not None:
        validate_executable(exe)
        assert exe.validated == ["ptxas sm_80", "ptxas sm_90"]
    body = exe.llvm_ir.split(f"@{name}.body(", 1)[1].split("\n}\n", 1)[0]
    entry_block, rest = body.split("\nbb1:", 1)
    assert "alloca" in entry_block and "alloca" not in rest
    inputs = _inputs_for(next(op for op in module.walk() if op.sym_name == name))
    want = Interpreter(module).call(name, inputs)
    got = [np.empty_like(np.asarray(w)) for w in want]
    _run_body_on_host(exe.llvm_ir, name, inputs, got)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
