"""`mlirtext translate --mlir-to-llvmir FILE [-o OUT] [--lower] [--optimize]` (as mlir-translate)."""
from __future__ import annotations

HELP = """Translate a module in the llvm dialect to LLVM IR text (like mlir-translate --mlir-to-llvmir).
The input must already be at the llvm level (mlirtext opt FILE --lower-to=llvm); with --lower, a module
at a higher level is lowered first with the native-code pipeline (the usual steps, plus
math-polynomial-approximation before convert-loops-to-llvm). The IR is verified by LLVM before it is
written."""


def add_arguments(sub) -> None:
    tr = sub.add_parser("translate", help="translate the llvm dialect to LLVM IR (like mlir-translate)",
                        description=HELP)
    tr.add_argument("input", nargs="?", default="-", help="an .mlir file, or - for standard input (default)")
    tr.add_argument("-o", dest="output", default="-", help="output file (default: standard output)")
    tr.add_argument("--mlir-to-llvmir", action="store_true", required=True,
                    help="the translation to perform (the only one: LLVM IR text)")
    tr.add_argument("--lower", action="store_true",
                    help="lower an input above the llvm level first (hlo/tosa/linalg/loops -> llvm)")
    tr.add_argument("--optimize", action="store_true",
                    help="print the IR after LLVM's O3 pipeline for this host CPU (vectorised loops)")


def cmd_translate(args) -> int:
    from .. import api
    from ..cli import read_input, write_output
    from ..diagnostics import Diagnostic, report
    from ..transforms.conversions.levels import level_of
    from .llvm_cpu import CompileError, compile_llvm_ir, parse_ir
    from .llvm_ir import TranslateError, translate_module
    from .native import LoweringFailed, lower_for_native
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    result = api.parse_and_verify(text, name)
    if not result.ok:
        report(result.diagnostics)
        return 1
    module = result.module
    level = level_of(module)
    if level not in (None, "llvm"):
        if not args.lower:
            first = _first_op_of_level(module, level)
            report([Diagnostic("error", f"the input is at the {level} level: lower it to llvm first "
                              f"(mlirtext opt {name} --lower-to=llvm), or pass --lower",
                              first.name_span or first.span if first is not None else module.span)])
            return 1
        try:
            lower_for_native(module)
        except LoweringFailed as e:
            report(e.diagnostics)
            return 1
    try:
        ir = translate_module(module)
        if args.optimize:
            ir = compile_llvm_ir(ir).llvm_ir
        else:
            parse_ir(ir)
    except TranslateError as e:
        report([Diagnostic("error", e.message, e.span)])
        return 1
    except CompileError as e:
        report([Diagnostic("error", f"internal error: the translation is not valid LLVM IR: {e}", module.span)])
        return 1
    problem = write_output(args.output, ir)
    if problem is not None:
        report([problem])
        return 1
    return 0


def _first_op_of_level(module, level: str):
    from ..transforms.conversions.levels import _LEVEL_DIALECTS
    for op in module.walk():
        if op.dialect in _LEVEL_DIALECTS.get(level, ()):
            return op
    return None

