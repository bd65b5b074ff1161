"""`mlirtext reduce FILE (--crash | --diagnostic REGEX | --mismatch A,B | --test 'CMD {}')`: the smallest
module, found by delta debugging, that still fails the same way; written to -o (never the input).
--crash and --diagnostic test the lowering to llvm, or the command --command, --lower-to or
--pass-pipeline names."""
from __future__ import annotations

import os
import re
import shlex
import sys
from typing import Optional

import numpy as np

from ..diagnostics import Diagnostic, report
from ..debugging.interesting import LOWERING, Crash, DiagnosticMatch, Mismatch, UserTest
from ..debugging.reducer import NotInteresting, Progress, Reducer
from ..debugging.faults import FAULTS
from ..interpreter.abi import signature
from ..transforms.semantics_check import Tolerance
from .debug_switches import make_faults, pick_function
from .io import read_input, parse_verified, write_output
from .run_values import parse_inputs
# The commands the tests run: imported here, so that the children the reducer forks start with them
# loaded (importing them costs a child 1-2 s; see debugging/interesting.py).
from . import opt, run  # noqa: F401


def main(args) -> int:
    output = args.output or default_output(args.input)
    if output != "-" and os.path.exists(args.input) and os.path.exists(output) \
            and os.path.samefile(output, args.input):
        report([Diagnostic("error", f"-o {output}: that is the input; reduce never overwrites it")])
        return 1
    if make_faults(args) is None:   # (checked here; the children get the switches as written)
        return 1
    fault_flags = [f"{switch}={text}" for switch in FAULTS
                   for text in getattr(args, switch[2:].replace("-", "_")) or []]
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    result = parse_verified(text, name)
    if result is None:
        return 1
    test, keep = make_test(args, result.module, fault_flags)
    if test is None:
        return 1
    reducer = Reducer(text, test, keep, args.jobs, args.budget, _show_progress if sys.stderr.isatty() else None)
    try:
        reduced = reducer.run()
    except NotInteresting as e:
        report([Diagnostic("error", f"{name}: nothing to reduce: the input itself is not interesting: it is not so that {e}")])
        return 1
    finally:
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")
    problem = write_output(output, reduced.text)
    if problem is not None:
        report([problem])
        return 1
    why = "the time budget was spent" if reduced.budget_spent else "no reduction is left that keeps it failing"
    print(f"reduce: {reduced.ops_before} -> {reduced.ops_after} ops in {reduced.seconds:.0f} s "
          f"({reduced.tests} candidates tested, {reduced.kept} kept; {why}); "
          f"{'written to ' + output if output != '-' else 'printed above'}")
    print(f"  still so: {test.describe()}")
    return 0


def default_output(path: str) -> str:
    """FILE.mlir -> FILE.reduced.mlir, beside it; standard input -> standard output."""
    if path == "-":
        return "-"
    stem, _ = os.path.splitext(path)
    return stem + ".reduced.mlir"


def make_test(args, module, fault_flags: list):
    """(the interestingness test the arguments ask for, the functions to keep), or (None, None) after
    reporting a bad request."""
    words = tested_command(args)
    if words is None:
        return None, None
    if args.crash:
        return Crash(run_cli, fault_flags, words), frozenset()
    if args.diagnostic is not None:
        try:
            pattern = re.compile(args.diagnostic)
        except re.error as e:
            report([Diagnostic("error", f"--diagnostic: '{args.diagnostic}' is not a regular expression: {e}")])
            return None, None
        return DiagnosticMatch(run_cli, pattern, fault_flags, words), frozenset()
    if args.test is not None:
        words = shlex.split(args.test)
        if not any("{}" in w for w in words):
            report([Diagnostic("error", f"--test: '{args.test}' has no {{}} where the candidate's path goes")])
            return None, None
        return UserTest(words), frozenset()
    fn = pick_function(module, args.function, args.input)
    if fn is None:
        return None, None
    given = {}
    if args.inputs:
        values = parse_inputs(args.inputs, fn.sym_name, signature(fn).inputs)
        if values is None:
            return None, None
        given = {a.name: (a.type, np.asarray(v)) for a, v in zip(fn.regions[0].blocks[0].arguments, values)}
    mismatch = Mismatch(run_cli, tuple(args.mismatch), fn.sym_name, given, args.seed,
                        Tolerance(args.tolerance_ulp, args.tolerance), fault_flags)
    return mismatch, frozenset({fn.sym_name})


#: Subcommands that cannot be what a candidate is tested with (they do not end, or reduce again).
_UNTESTABLE = ("reduce", "lsp", "worker")


def tested_command(args) -> Optional[list]:
    """The words of the `mlirtext` command that --crash and --diagnostic test (`{}` the candidate's
    path): --command, --lower-to or --pass-pipeline, else the lowering to llvm; None after reporting
    a bad one."""
    given = [f for f, v in (("--command", args.tested), ("--lower-to", args.lower_to),
                            ("--pass-pipeline", args.pass_pipeline)) if v is not None]
    if given and not (args.crash or args.diagnostic is not None):
        report([Diagnostic("error", f"{given[0]}: only --crash and --diagnostic test a command of mlirtext's")])
        return None
    if args.lower_to is not None:
        return ["opt", "{}", f"--lower-to={args.lower_to}", "-o", "-"]
    if args.pass_pipeline is not None:
        return ["opt", "{}", f"--pass-pipeline={args.pass_pipeline}", "-o", "-"]
    if args.tested is None:
        return list(LOWERING)
    try:
        words = shlex.split(args.tested)
    except ValueError as e:
        report([Diagnostic("error", f"--command: '{args.tested}': {e}")])
        return None
    if words[:1] == ["mlirtext"]:
        words = words[1:]
    if not words or words[0].startswith("-") or words[0] in _UNTESTABLE:
        report([Diagnostic("error", f"--command: '{args.tested}' is not a command to test: give an mlirtext "
                                    "subcommand and its arguments, e.g. 'opt --lower-to=linalg'")])
        return None
    return words if any("{}" in w for w in words) else [words[0], "{}", *words[1:]]


def run_cli(argv: list) -> int:
    """`mlirtext ARGV`, in this process (a forked child of the reducer's: see debugging/interesting.py)."""
    from . import main as cli_main   # (the package imports this module's siblings lazily: no cycle at import)
    return cli_main(argv)


def _show_progress(p: Progress) -> None:
    sys.stderr.write(f"\r\033[Kreduce: {p.ops_before} -> {p.ops_now} ops, {p.tests} tested, {p.kept} kept, "
                     f"{p.seconds:.0f} s ({p.reduction})")
    sys.stderr.flush()
