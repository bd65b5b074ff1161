"""`mlirtext opt FILE`: parse, verify, run passes, print (like mlir-opt)."""
from __future__ import annotations

import sys

from .. import api
from ..diagnostics import Diagnostic, has_errors, report
from ..irdl_dialects import irdl_files, registry_with
from ..verify_diagnostics import check
from .io import kept_until_exit, read_input, write_output


def main(args) -> int:
    passes = _passes(args)
    if args.list_passes:
        sys.stdout.write(passes.list_passes())
        return 0
    pm = passes.pass_manager(args) if passes is not None else None
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
    with kept_until_exit():
        results = api.parse_chunks(text, name, args.split_input_file, registry,
                                   allow_unregistered=args.allow_unregistered_dialect)
    outputs, failed = [], False
    for result in results:
        if args.inputs and not has_errors(result.diagnostics) and not passes.give_inputs(pm, result, args):
            return 1
        if pm is not None and not has_errors(result.diagnostics):
            result.diagnostics.extend(passes.run_passes(pm, result, args.lower_to))
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
        passes.report_instrumentations(pm)
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


def _passes(args):
    """The module that runs passes (`opt_passes`) when a flag asks for one, for their list or for
    --check-semantics' inputs, else None: imported only then, as it costs 0.1 s of CPU, as much
    again as a plain `opt FILE` on a small file (the pass manager, pipelines, the lowering service,
    the interpreter, numpy)."""
    if not (args.list_passes or args.inputs or args.pipeline or args.lower_to or args.diff or args.explain
            or args.debug_miscompile or args.debug_crash or args.debug_unverifiable):
        return None
    from . import opt_passes
    return opt_passes


def _bytecode(result):
    """The module as MLIR bytecode; None after reporting what cannot be written."""
    from ..syntax.bytecode_writer import BytecodeWriteError, from_module  # (for --emit-bytecode only)
    try:
        return from_module(result.module, result.aliases)
    except BytecodeWriteError as e:
        report([Diagnostic("error", f"cannot write bytecode: {e}")])
        return None
