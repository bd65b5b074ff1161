"""`mlirtext opt FILE`: parse, verify, run passes, print (like mlir-opt)."""
from __future__ import annotations

import sys

from .. import api
from ..analysis.pass_explorer import explain_table
from ..analysis.pass_steps import StepRecorder
from ..diagnostics import Diagnostic, has_errors, report
from ..irdl_dialects import irdl_files, registry_with
from ..syntax.bytecode_writer import BytecodeWriteError, from_module
from ..transforms.pass_manager import PassManager, PrintIR, Timing
from ..transforms.passes import load_passes
from ..transforms.conversions.levels import UnregisteredOp
from ..transforms.lowering_service import lower_to as lower
from ..transforms.pipeline import PipelineError, parse_pipeline
from ..interpreter.abi import signature
from ..transforms.semantics_check import CheckSemantics, Tolerance
from ..verify_diagnostics import check
from ..debugging.faults import Fault
from .debug_switches import make_faults, never_struck, pick_function
from .io import parse_inputs, read_input, write_output


def main(args) -> int:
    if args.list_passes:
        sys.stdout.write(_list_passes())
        return 0
    pm = _pass_manager(args)
    if isinstance(pm, str):
        if pm:
            print(pm, file=sys.stderr)
        return 1
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    registry = _registry(args)
    if registry is None:
        return 1
    if pm is not None:
        pm.registry = registry
    results = api.parse_chunks(text, name, args.split_input_file, registry,
                               allow_unregistered=args.allow_unregistered_dialect)
    outputs, failed = [], False
    for result in results:
        if args.inputs and not has_errors(result.diagnostics) and not _give_inputs(pm, result, args):
            return 1
        if pm is not None and not has_errors(result.diagnostics):
            result.diagnostics.extend(_run_passes(pm, result, args.lower_to))
        if args.verify_diagnostics:
            problems = check(result.source, result.start, result.end, result.diagnostics)
            report(problems)
            failed |= bool(problems)
            if not has_errors(result.diagnostics):
                outputs.append(api.to_text(result, args.generic, args.locations, registry))
            continue
        report(result.diagnostics)
        if has_errors(result.diagnostics):
            failed = True
            continue
        output = _bytecode(result) if args.emit_bytecode else api.to_text(result, args.generic, args.locations,
                                                                           registry)
        if output is None:
            failed = True
            continue
        outputs.append(output)
    if pm is not None:
        for inst in pm.instrumentations:
            if isinstance(inst, Timing):
                sys.stderr.write(inst.report())
            if isinstance(inst, StepRecorder):
                sys.stderr.write(explain_table(inst.steps))
            if isinstance(inst, Fault) and inst.struck is None:
                report([never_struck(inst)])
    if failed:
        return 1
    joined = (b"// -----\n".join(outputs) if args.emit_bytecode   # as iree-opt joins split chunks
              else "// -----\n".join(outputs))
    problem = write_output(args.output, joined)
    if problem is not None:
        report([problem])
        return 1
    return 0


def _registry(args):
    """The built-in dialects plus those of --irdl-file and --dialect-path; None after reporting
    why an IRDL file does not load."""
    if not args.irdl_files and not args.dialect_paths:
        return api.builtin_registry()
    registry, problems = registry_with(irdl_files(args.irdl_files, args.dialect_paths))
    report(problems)
    return None if has_errors(problems) else registry


def _give_inputs(pm, result, args) -> bool:
    """Hand the --input values to --check-semantics for --function; False after reporting."""
    checks = [i for i in (pm.instrumentations if pm is not None else []) if isinstance(i, CheckSemantics)]
    if not checks:
        report([Diagnostic("error", "--input is for --check-semantics, which is not asked for")])
        return False
    fn = pick_function(result.module, args.function, result.source.name)
    if fn is None:
        return False
    inputs = parse_inputs(args.inputs, fn.sym_name, signature(fn).inputs)
    if inputs is None:
        return False
    checks[0].inputs[fn.sym_name] = inputs
    return True


def _bytecode(result):
    """The module as MLIR bytecode; None after reporting what cannot be written."""
    try:
        return from_module(result.module)
    except BytecodeWriteError as e:
        report([Diagnostic("error", f"cannot write bytecode: {e}")])
        return None


def _list_passes() -> str:
    lines = ["Passes:"]
    for name, cls in sorted(load_passes().items()):
        lines.append(f"  --{name:<24} {cls.summary}")
    return "\n".join(lines) + "\n"


def _pass_manager(args):
    """The pass manager the flags ask for, None when they ask for no pass, or a diagnostic."""
    items = []
    for text in args.pipeline:
        try:
            items.extend(parse_pipeline(text))
        except PipelineError as e:
            return e.format()
    if not items and not args.lower_to:
        if args.diff or args.explain:
            return f"mlirtext: error: --{'diff' if args.diff else 'explain'} shows what passes do: give passes or --lower-to"
        if args.debug_miscompile or args.debug_crash or args.debug_unverifiable:
            return "mlirtext: error: a --debug-* fault strikes in a pass: give passes or --lower-to"
        return None
    # Timing goes last: it starts right before the pass and stops right after it, so the
    # time of the other instrumentations (printing, interpreting) is not counted.
    instruments = []
    if args.check_semantics:
        instruments.append(CheckSemantics(sys.stderr.write, args.seed,
                                          tolerance=Tolerance(args.tolerance_ulp, args.tolerance)))
    if args.diff and not (args.print_ir_after_all or args.print_ir_after_change):
        return "mlirtext: error: --diff shows the dumps after passes: give --print-ir-after-all or --print-ir-after-change"
    if args.print_ir_before_all or args.print_ir_after_all or args.print_ir_after_change:
        instruments.append(PrintIR(sys.stderr.write, args.print_ir_before_all, args.print_ir_after_all,
                                   args.print_ir_after_change, args.diff))
    if args.explain:
        instruments.append(StepRecorder())
    if args.timing:
        instruments.append(Timing())
    faults = make_faults(args)
    if faults is None:
        return ""   # (reported)
    # Faults go last, so that they strike before the others see the pass's result.
    return PassManager(items, instrumentations=instruments + faults)


def _run_passes(pm, result, lower_to) -> list:
    """The pipeline of `pm`, then the steps down to `lower_to` (which depend on the input), run
    with `pm`'s instrumentation."""
    problems = pm.run(result.module)
    if problems or not lower_to:
        return problems
    try:
        return lower(result.module, lower_to, pm.instrumentations)
    except UnregisteredOp as e:
        return [Diagnostic("error", f"--lower-to={lower_to}: {e}", e.op.name_span or e.op.span)]
    except ValueError as e:
        return [Diagnostic("error", f"--lower-to={lower_to}: {e}", result.module.span)]
