"""`mlirtext translate --mlir-to-llvmir FILE [-o OUT] [--lower] [--optimize]` (like mlir-translate)."""
from __future__ import annotations

from ..diagnostics import Diagnostic, report
from ..targets.llvm_ir import TranslateError
from ..targets.native import LoweringFailed, lower_for_native
from ..targets.translate import llvm_ir_text
from ..transforms.conversions.levels import first_op_at_level, level_of
from .io import read_verified, write_output


def main(args) -> int:
    result = read_verified(args.input)
    if result is None:
        return 1
    module = result.module
    level = level_of(module)
    if level not in (None, "llvm"):
        if not args.lower:
            first = first_op_at_level(module, level)
            report([Diagnostic("error", f"the input is at the {level} level: lower it to llvm first "
                              f"(mlirtext opt {result.source.name} --lower-to=llvm), or pass --lower",
                              first.name_span or first.span if first is not None else module.span)])
            return 1
        try:
            lower_for_native(module)
        except LoweringFailed as e:
            report(e.diagnostics)
            return 1
    try:
        ir = llvm_ir_text(module, args.optimize)
    except TranslateError as e:
        report([Diagnostic("error", e.message, e.span)])
        return 1
    problem = write_output(args.output, ir)
    if problem is not None:
        report([problem])
        return 1
    return 0
