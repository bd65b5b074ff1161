"""From a module at any level to callable native code: lower (with polynomial approximation of
transcendentals, so loops vectorise), translate to LLVM IR, compile for the host, load.

    lower_for_native(module)          # in place, down to the llvm dialect
    compiled = compile_module(module) # lowers a copy, returns the NativeObject and the llvm module
    fns = load_module_functions(module)  # {name: NativeFunction}
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Operation
from .llvm_cpu import NativeObject, compile_llvm_ir, load_object
from .llvm_ir import translate_module
from .native_call import NativeFunction, native_functions

#: Runs right before the loops -> llvm step.
NATIVE_PRE_LLVM = "math-polynomial-approximation"


class LoweringFailed(Exception):
    """The module does not lower to the llvm level; `diagnostics` say why."""

    def __init__(self, diagnostics):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


def native_pipeline(module: Operation) -> str:
    """The lowering pipeline to llvm for native code: the usual steps, with polynomial
    approximation of math functions inserted before convert-loops-to-llvm."""
    from ..transforms.conversions.levels import level_of, lowering_pipeline
    if level_of(module) == "llvm":
        return ""
    text = lowering_pipeline(module, "llvm")
    return text.replace("convert-loops-to-llvm", f"{NATIVE_PRE_LLVM},canonicalize,convert-loops-to-llvm")


def lower_for_native(module: Operation, pipeline: str | None = None) -> None:
    """Lower `module` in place to the llvm dialect (raises LoweringFailed)."""
    from ..diagnostics import Diagnostic
    from ..transforms.pass_manager import PassManager
    from ..transforms.pipeline import parse_pipeline
    try:
        text = native_pipeline(module) if pipeline is None else pipeline
    except ValueError as e:
        raise LoweringFailed([Diagnostic("error", str(e), module.span)]) from None
    if not text:
        return
    problems = PassManager(parse_pipeline(text)).run(module)
    if problems:
        raise LoweringFailed(problems)


@dataclass
class CompiledModule:
    llvm_module: Operation    # the module at the llvm level (with reflection)
    native: NativeObject


def compile_module(module: Operation, *, opt_level: int = 3) -> CompiledModule:
    """Lower a copy of `module`, translate and compile it for the host."""
    lowered = module.clone()
    lower_for_native(lowered)
    ir = translate_module(lowered, result_wrappers=True)  # C-callable forms of several-result functions
    return CompiledModule(lowered, compile_llvm_ir(ir, opt_level=opt_level))


def load_module_functions(module: Operation, *, opt_level: int = 3) -> dict[str, NativeFunction]:
    """Compile `module` and bind its public functions (called with numpy arrays)."""
    compiled = compile_module(module, opt_level=opt_level)
    return native_functions(load_object(compiled.native.object_code), compiled.llvm_module)
