"""The compiler: a tensor-level module to a module the VM (mlirtext/vm/) runs.

    driver.py         compile_module (and compile_source, from text): dispatch formation, host
                      programs, the kernels per target
    target_names.py   the targets (light: the command line checks --target with it)
    host_program.py   each public function's host program
    planner.py        the memory plan of a host program
    epilogues.py      elementwise epilogues and transposed operands fused into matmul kernels
    vector_body.py    an epilogue's scalar ops (transcendentals expanded) as LLVM vector instructions
    global_pools.py   whole-image window sums (global pooling) as sums with the channels innermost
    ukernels.py       matmul micro-kernels (llvm-cpu)
    reductions.py     sum reductions marked for vectorisation (llvm-cpu)
    work_queue.py     the native work-sharing wrappers of kernels split into workgroups
    module_writer.py  the module file (pack), or the module for this process (in_memory)

The run time never imports this package, as IREE's runtime never links its compiler. (This file
imports nothing: the command line imports target_names.py at start-up, and the compiler itself
takes 0.3 s to import.)
"""
