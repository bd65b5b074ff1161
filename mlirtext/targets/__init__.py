"""Code generation targets: LLVM IR text from the llvm dialect (`llvm_ir`), and native
CPU code through llvmlite (`llvm_cpu`, `native_call`), the two together for `mlirtext translate`
(`translate`)."""
