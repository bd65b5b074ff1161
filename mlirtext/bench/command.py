"""`mlirtext bench FILE.mlir`: the deployment report of a module on every target and device."""
from __future__ import annotations

import json
import sys

from ..diagnostics import Diagnostic, report


def _names(text: str) -> list:
    return [n.strip() for n in text.split(",") if n.strip()]


def add_arguments(sub) -> None:
    from ..vm.compiler import TARGETS
    from ..vm.devices import DEVICES
    summary = ("compile a module for each target, run it on each device and report size, compile and load "
               "time, latency, peak memory and speedup")
    bench = sub.add_parser("bench", help=summary, description=summary + ". Every row's outputs are checked "
                           "against the baseline (the reference device). Exit status 1: nothing could be measured "
                           "(bad file, function, input or request), a row's outputs differ from the baseline, a "
                           "call failed, or a target named in --targets did not compile.")
    bench.add_argument("input", help="an .mlir file (hlo, tosa or linalg level)")
    bench.add_argument("--function", help="the function to measure (default: the module's only public one)")
    bench.add_argument("--input", dest="inputs", action="append", default=[], metavar="VALUE",
                       help="an argument, as for `mlirtext run` (2x3xf32=1 2 3 4 5 6, f32=0.5, @x.npy); "
                            "default: seeded random values")
    bench.add_argument("--targets", type=_names, default=None, metavar="T1,T2",
                       help=f"targets to compile for (default: all, {','.join(TARGETS)}; a target that does not "
                            "compile is then reported, not an error)")
    bench.add_argument("--devices", type=_names, default=list(DEVICES), metavar="D1,D2",
                       help=f"devices to run on (default: {','.join(DEVICES)}); the baseline, the reference "
                            "device, always runs")
    bench.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds (default 7)")
    bench.add_argument("--warmup", type=int, default=2, help="untimed calls after the first (default 2)")
    bench.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    bench.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    bench.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML page")
    bench.add_argument("--compare-iree", action="store_true",
                       help="add IREE's figures for the same file, measured in the same run (needs "
                            "iree-base-compiler and iree-base-runtime)")
    bench.add_argument("--no-progress", action="store_true", help="no progress on stderr")


def cmd_bench(args) -> int:
    from ..cli import read_input, write_output
    from ..vm.compiler import TARGETS
    from .measure import BenchError, Settings, run_bench
    from .progress import Progress
    from .rows import FAILED, MISMATCH
    from .table import format_report, report_json
    settings = Settings(targets=args.targets or list(TARGETS), devices=args.devices, function=args.function,
                        inputs=args.inputs, rounds=args.rounds, warmup=args.warmup, seed=args.seed,
                        compare_iree=args.compare_iree)
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
        from .page import render_page
        problem = write_output(args.html, render_page(measured, text))
        if problem is not None:
            report([problem])
            return 1
    # Wrong or broken numbers fail the command; so does a target named in --targets that does not
    # compile (with the default, every target, one that does not compile is only reported).
    bad = [r for r in measured.rows
           if r.status == MISMATCH or r.status == FAILED and (r.device != "-" or args.targets is not None)]
    for r in bad:
        report([Diagnostic("error", f"{r.label}: {r.status}: {r.message}")])
    return 1 if bad else 0
