"""The compiler: a tensor-level module to a module the VM (mlirtext/vm/) runs.

    driver.py         compile_module: dispatch formation, host programs, kernels per target
    host_program.py   each public function's host program
    planner.py        the memory plan of a host program
    epilogues.py      elementwise epilogues and transposed operands fused into matmul kernels
    ukernels.py       matmul micro-kernels (llvm-cpu)
    reductions.py     sum reductions marked for vectorisation (llvm-cpu)
    work_queue.py     the native work-sharing wrappers of kernels split into workgroups
    module_writer.py  the module file (pack), or the module for this process (in_memory)

The run time never imports this package, as IREE's runtime never links its compiler.
"""
from .driver import GPU_TARGET_NAMES, TARGETS, Compiled, CompileFailed, compile_module, compile_source
from .module_writer import in_memory, pack

__all__ = ["GPU_TARGET_NAMES", "TARGETS", "Compiled", "CompileFailed", "compile_module", "compile_source",
           "in_memory", "pack"]
