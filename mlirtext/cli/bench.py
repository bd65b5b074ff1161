"""`mlirtext bench FILE.mlir`: the deployment report of a module on every target and device."""
from __future__ import annotations

import json
import sys

from ..bench.measure import BenchError, Settings, run_bench
from ..bench.page import render_page
from ..bench.progress import Progress
from ..bench.rows import FAILED, MISMATCH
from ..bench.table import format_report, report_json
from ..diagnostics import Diagnostic, report
from ..compiler.target_names import TARGETS
from ..vm.profile import merged_trace
from .io import read_input, write_output


def main(args) -> int:
    settings = Settings(targets=args.targets or list(TARGETS), devices=args.devices, function=args.function,
                        inputs=args.inputs, rounds=args.rounds, warmup=args.warmup, seed=args.seed,
                        compare_iree=args.compare_iree, profile=bool(args.profile))
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    try:
        measured = run_bench(text, name, settings, Progress(enabled=not args.no_progress))
    except BenchError as e:
        report(e.diagnostics)
        return 1
    if args.json:
        sys.stdout.write(json.dumps(report_json(measured), indent=2) + "\n")
    else:
        sys.stdout.write(format_report(measured))
    if args.html:
        problem = write_output(args.html, render_page(measured, text))
        if problem is not None:
            report([problem])
            return 1
    if args.profile:
        problem = write_output(args.profile, json.dumps(merged_trace(measured.profiles)) + "\n")
        if problem is not None:
            report([problem])
            return 1
        for profile in measured.profiles:
            sys.stderr.write(profile.table())
    # Wrong or broken numbers fail the command; so does a target named in --targets that does not
    # compile (with the default, every target, one that does not compile is only reported).
    bad = [r for r in measured.rows
           if r.status == MISMATCH or r.status == FAILED and (r.device != "-" or args.targets is not None)]
    for r in bad:
        report([Diagnostic("error", f"{r.label}: {r.status}: {r.message}")])
    return 1 if bad else 0
