"""GPU targets: the dispatch functions of a compiled module as GPU kernels.

    kernels (linalg on tensors)
      -> threads.py   loops, with the outer parallel axis mapped onto threads (shared by all targets),
                      or a tiled kernel: tiling.py (matmul), reductions.py (row reductions),
                      fused_rows.py (softmax, layer norm), epilogue.py (elementwise ops after
                      a matmul or a row reduction)
      -> llvm_gpu.py  cuda (PTX), rocm (HSA code object) and opencl-spirv (SPIR-V, Kernel model):
                      LLVM IR through llvmlite, in a child process (codegen.py; wide_multiply.py:
                      opencl's mul_hi for the i128 multiplies LLVM's optimiser makes)
      -> narrow_types.py  vulkan-spirv and opencl-spirv: i2/i4, bf16, f8/f6/f4 (opencl: f16 too)
                      held in i8/i16/f32 (SPIR-V, or OpenCL 1.2, lacks them)
      -> spirv.py     vulkan-spirv: SPIR-V compute shaders written directly from the loops level
      -> validate.py  ptxas / ld.lld + llvm-readelf / spirv-val (`mlirtext compile --validate`)

`compile_gpu(kernels_mod, kernels, target, options)` is the one entry point (used by
`mlirtext.compiler.driver`); it returns a `GpuExecutable`, which `mlirtext.compiler.module_writer`
packs.
"""
from .executable import GPU_TARGETS, GpuExecutable, GpuCompileError, compile_gpu

__all__ = ["GPU_TARGETS", "GpuExecutable", "GpuCompileError", "compile_gpu"]
