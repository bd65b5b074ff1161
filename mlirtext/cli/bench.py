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
from ..remote import call_on_node_with
from ..vm.profile import merged_trace
from ..vm.vm import VMError
from .io import read_input, write_output


def main(args) -> int:
    settings = Settings(targets=args.targets or list(TARGETS), devices=args.devices, function=args.function,
                        inputs=args.inputs, rounds=args.rounds, warmup=args.warmup, seed=args.seed,
                        compare_iree=args.compare_iree, profile=bool(args.profile))
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    if args.node and not args.cluster:
        report([Diagnostic("error", "--node picks a node of the Ray cluster: give --cluster ADDRESS too")])
        return 1
    try:
        if args.cluster:   # the whole measurement on one node that has every device asked for
            got, where = call_on_node_with(sorted(set(settings.devices)), args.cluster, measure, text, name, settings,
                                           bool(args.html), node=args.node)
            sys.stderr.write(f"// measured on {where['hostname']} (node {where['node_id'][:12]}, pid {where['pid']})\n")
        else:
            got = measure(text, name, settings, bool(args.html), Progress(enabled=not args.no_progress))
    except BenchError as e:
        report(e.diagnostics)
        return 1
    except VMError as e:   # (the cluster: unreachable, or no node with the devices)
        report([Diagnostic("error", str(e))])
        return 1
    sys.stdout.write(json.dumps(got["json"], indent=2) + "\n" if args.json else got["table"])
    if args.html:
        problem = write_output(args.html, got["page"])
        if problem is not None:
            report([problem])
            return 1
    if args.profile:
        problem = write_output(args.profile, json.dumps(got["trace"]) + "\n")
        if problem is not None:
            report([problem])
            return 1
        for table in got["profile_tables"]:
            sys.stderr.write(table)
    # Wrong or broken numbers fail the command; so does a target named in --targets that does not
    # compile (with the default, every target, one that does not compile is only reported).
    bad = [(label, status, message) for label, status, message, device in got["failed"]
           if status == MISMATCH or device != "-" or args.targets is not None]
    for label, status, message in bad:
        report([Diagnostic("error", f"{label}: {status}: {message}")])
    return 1 if bad else 0


def measure(text: str, name: str, settings: Settings, page: bool, progress=None) -> dict:
    """The bench's report as the command prints it: the table, the JSON, the HTML page (with `page`), the
    profile (with settings.profile) and the rows that mismatched or failed. Plain data: it comes back
    whole from a cluster node."""
    measured = run_bench(text, name, settings, progress)
    return {"table": format_report(measured), "json": report_json(measured),
            "page": render_page(measured, text) if page else None,
            "trace": merged_trace(measured.profiles) if settings.profile else None,
            "profile_tables": [p.table() for p in measured.profiles] if settings.profile else [],
            "failed": [(r.label, r.status, r.message, r.device) for r in measured.rows if r.status in (MISMATCH, FAILED)]}
