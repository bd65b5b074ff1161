"""A module in the llvm dialect as LLVM IR text, checked by LLVM (`mlirtext translate --mlir-to-llvmir`)."""
from __future__ import annotations

from ..ir.core import Operation
from .llvm_cpu import CompileError, compile_llvm_ir, parse_ir
from .llvm_ir import TranslateError, translate_module


def llvm_ir_text(module: Operation, optimize: bool = False) -> str:
    """The LLVM IR of `module` (at the llvm level), verified by LLVM; with `optimize`, as LLVM's O3
    pipeline leaves it for this host CPU. TranslateError for an op with no translation, and for IR
    that LLVM rejects (an internal error: a translation must always be valid)."""
    ir = translate_module(module)
    try:
        if optimize:
            return compile_llvm_ir(ir).llvm_ir
        parse_ir(ir)
    except CompileError as e:
        raise TranslateError(f"internal error: the translation is not valid LLVM IR: {e}", module.span) from None
    return ir
