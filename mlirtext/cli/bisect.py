"""`mlirtext bisect FILE`: the first pass of the lowering to llvm that changes a function's
results, crashes or leaves IR that does not verify (level first: see debugging/bisect.py); exit
status 1 when one does, 0 when none. With --devices, the first dispatch each device computes
differently from the reference (its dispatches run on a node of the Ray cluster at --cluster that
offers the device, when given)."""
from __future__ import annotations

import os
import shlex
import sys

import numpy as np

from ..diagnostics import Diagnostic, report
from ..compiler.module_writer import in_memory, pack
from ..debugging.bisect import BisectError, bisect_pipeline
from ..debugging.device_bisect import WrongKernel, bisect_devices
from ..debugging.dispatch_trace import kernel_module, kernel_sources
from ..debugging.repro import dispatch_command, replay_command, write_dispatch_repro, write_repro
from ..interpreter.abi import signature
from ..remote import RemoteModule
from ..transforms.semantics_check import Tolerance, random_inputs
from ..vm.devices import GPU_DEVICES
from ..vm.vm import VMError
from .debug_switches import make_faults, never_struck, pick_function
from .compile import compile_text
from .io import read_input, read_verified
from .run_values import parse_inputs


def main(args) -> int:
    faults = make_faults(args)
    if faults is None:
        return 1
    if args.debug_wrong_kernel and not args.devices:
        report([Diagnostic("error", f"{WrongKernel.switch} makes a kernel wrong on a device: give --devices")])
        return 1
    result = read_verified(args.input)
    if result is None:
        return 1
    fn = pick_function(result.module, args.function, args.input)
    if fn is None:
        return 1
    if args.inputs:
        inputs = parse_inputs(args.inputs, fn.sym_name, signature(fn).inputs)
        if inputs is None:
            return 1
    else:
        inputs = random_inputs(fn, np.random.default_rng(args.seed))
    tolerance = Tolerance(args.tolerance_ulp, args.tolerance)
    if args.node and not args.cluster:
        report([Diagnostic("error", "--node picks a node of the Ray cluster: give --cluster ADDRESS too")])
        return 1
    if args.cluster and not args.devices:
        report([Diagnostic("error", "--cluster runs the dispatches of --devices on a cluster node: name the "
                                    "devices (the pass bisect runs here, on the interpreter)")])
        return 1
    if args.devices:
        return across_devices(args, fn.sym_name, inputs, tolerance)
    try:
        found = bisect_pipeline(result.module, fn.sym_name, inputs, tolerance, faults,
                                _show_progress if sys.stderr.isatty() else None)
    except BisectError as e:
        report([Diagnostic("error", f"{args.input}: {e}")])
        return 1
    finally:
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
    report([never_struck(f) for f in faults if f.struck is None])
    source = "the given inputs" if args.inputs else f"random inputs (seed {args.seed})"
    finding = found.finding
    if finding is None:
        print(f"bisect: @{fn.sym_name}: all {len(found.passes)} passes of the lowering to llvm keep its results "
              f"within {tolerance} on {source} ({_runs(found.runs)}, one per level that changed it)")
        return 0
    print(f"bisect: @{fn.sym_name} on {source}: pass {finding.position} of {found.total} of the lowering to llvm "
          f"(step to {finding.level}), '{finding.pass_spelling}', {finding.kind}")
    print(f"  {finding.message}")
    for name, span in finding.ops:
        line, col = span.line_col
        print(f"  {span.source.name}:{line}:{col}: {name}")
    narrowed = "" if finding.rewrote is None else \
        f", then of the pass on copies converting some of the {finding.rewrote} ops it rewrote, down to this one"
    print(f"  {_runs(found.runs)}: one per level, then one per pass of the step to {finding.level} that changed it"
          f"{narrowed}")
    if args.output:
        command = replay_command(finding, tolerance, faults)
        write_repro(args.output, finding, command)
        print(f"  repro in {args.output}; to see it: cd {shlex.quote(args.output)} && {shlex.join(command)}")
    return 1


def _runs(n: int) -> str:
    return f"{n} run{'' if n == 1 else 's'} of the function"


def _show_progress(position: int, total: int, name: str) -> None:
    """One line on the terminal, rewritten as each pass starts (the interpreter runs the function
    after each: on large tensors at the loops and llvm levels a pass can take a while)."""
    sys.stderr.write(f"\r\033[Kbisect: pass {position} of {total}: {name}")
    sys.stderr.flush()


def across_devices(args, function: str, inputs: list, tolerance: Tolerance, kernel_fault=None) -> int:
    """Each device of --devices against the reference, dispatch by dispatch; 1 when one differs.
    `kernel_fault` (device_bisect.KernelFault) makes a kernel wrong on the devices checked, for tests."""
    try:
        wrong = [WrongKernel.parse(text, args.devices) for text in args.debug_wrong_kernel or []]
    except ValueError as e:
        report([Diagnostic("error", f"{WrongKernel.switch}: {e}")])
        return 1
    got = read_input(args.input)
    if got is None:
        return 1
    differs = False
    for device in args.devices:
        done = compile_text(*got, GPU_DEVICES.get(device, "llvm-cpu"))
        if done is None:
            return 1
        compiled = done[0]
        sources = kernel_sources(compiled.reference_kernels)
        report([Diagnostic("warning", f"{w.flag()}: there is no kernel @{w.kernel} (the kernels: "
                                      f"{', '.join(sources)})") for w in wrong if w.device == device and w.kernel not in sources])
        fault = kernel_fault or next((w.on(device) for w in wrong if w.device == device), None)
        try:
            remote = (RemoteModule(pack(compiled), device, args.cluster, node=args.node).entry_function(function)
                      if args.cluster else None)
            dispatches, finding = bisect_devices(in_memory(compiled), function, inputs, device, sources, tolerance,
                                               fault, remote.replay_all if remote else None)
        except VMError as e:
            report([Diagnostic("error", f"{device}: {e}" if not args.cluster else str(e))])
            return 1
        if remote:
            where = remote.module.last_call
            sys.stderr.write(f"// {device}: {dispatches} dispatches ran on {where['hostname']} (node "
                             f"{where['node_id'][:12]}, pid {where['pid']}) in {where['seconds'] * 1e3:.3f} ms\n")
        if finding is None:
            print(f"bisect: @{function} on {device}: all {dispatches} dispatches agree with the reference within "
                  f"{tolerance}, each fed the reference's inputs")
            continue
        differs = True
        d = finding.difference
        print(f"bisect: @{function} on {device}: dispatch {finding.index} of {dispatches}"
              f" (kernel @{finding.kernel}) differs from the reference, fed the reference's inputs: max |diff| "
              f"{d.max_abs:.3g}, max rel {d.max_rel:.3g}, {d.max_ulp} ulp (the tolerance is {tolerance})")
        for source in finding.sources:
            print(f"  {source['at']}: {source['op']}")
        if args.output:
            where = os.path.join(args.output, device)
            command = dispatch_command(finding)
            write_dispatch_repro(where, finding, kernel_module(compiled.reference_kernels, finding.kernel), command)
            print(f"  repro in {where}; to check it again: cd {shlex.quote(where)} && {shlex.join(command)}")
    return 1 if differs else 0
