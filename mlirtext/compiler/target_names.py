"""The compiler's targets, by name: a module of its own, so that the command line can check a
--target without importing the compiler."""

TARGETS = ("llvm-cpu", "reference", "cuda", "rocm", "vulkan-spirv", "opencl-spirv")
#: Targets whose kernels are GPU executables (mlirtext/targets/gpu/).
GPU_TARGET_NAMES = ("cuda", "rocm", "vulkan-spirv", "opencl-spirv")
