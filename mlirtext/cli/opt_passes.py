"""`mlirtext opt`'s passes: the pass manager its flags ask for, the run of it (and of
--lower-to), --check-semantics' inputs and the instrumentations' reports.

`opt.py` imports this module only when a flag asks for passes: the pass machinery (pass manager,
pipelines, lowering service, semantics check, fault injection, numpy) costs 0.1 s of CPU at
start-up, as much again as a whole plain `mlirtext opt FILE` on a small file.
"""
from __future__ import annotations

import sys

from ..analysis.pass_explorer import explain_table
from ..analysis.pass_steps import StepRecorder
from ..diagnostics import Diagnostic, report
from ..interpreter.abi import signature
from ..debugging.faults import Fault
from ..transforms.conversions.levels import UnregisteredOp
from ..transforms.lowering_service import lower_to as lower
from ..transforms.pass_manager import PassManager, PrintIR, Timing
from ..transforms.passes import builtin_passes
from ..transforms.pipeline import PipelineError, parse_pipeline
from ..transforms.semantics_check import CheckSemantics
from ..transforms.tolerance import Tolerance
from .debug_switches import make_faults, never_struck, pick_function
from .run_values import parse_inputs


def list_passes() -> str:
    lines = ["Passes:"]
    for name, cls in sorted(builtin_passes().all().items()):
        lines.append(f"  --{name:<24} {cls.summary}")
    return "\n".join(lines) + "\n"


def pass_manager(args):
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


def give_inputs(pm, result, args) -> bool:
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


def run_passes(pm, result, lower_to) -> list:
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


def report_instrumentations(pm) -> None:
    """What the instrumentations say after the run: timings, the --explain table, faults that
    never struck."""
    for inst in pm.instrumentations:
        if isinstance(inst, Timing):
            sys.stderr.write(inst.report())
        if isinstance(inst, StepRecorder):
            sys.stderr.write(explain_table(inst.steps))
        if isinstance(inst, Fault) and inst.struck is None:
            report([never_struck(inst)])
