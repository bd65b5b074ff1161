"""The `mlirtext` command: `mlirtext opt FILE`, `mlirtext run FILE`, `mlirtext check FILE`, `mlirtext bench FILE` (and, in later issues, more).

Exit status: 0 on success, 1 when anything was diagnosed (bad input, bad
request). Problems are printed MLIR-style on stderr, never as a traceback.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile

from .diagnostics import Diagnostic, has_errors, report


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 1, like every other diagnosed error
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_argparser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mlirtext", description="Read, check, print and lower MLIR text.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    opt = sub.add_parser("opt", help="parse, verify and print MLIR (like mlir-opt)")
    opt.add_argument("input", nargs="?", default="-", help="an .mlir file, or - for standard input (default)")
    opt.add_argument("-o", dest="output", default="-", help="output file (default: standard output)")
    opt.add_argument("--split-input-file", action="store_true",
                     help="treat each '// -----' separated chunk as its own input")
    opt.add_argument("--print-generic", "--mlir-print-op-generic", dest="generic", action="store_true",
                     help="print every op in the generic form")
    opt.add_argument("--mlir-print-debuginfo", dest="locations", action="store_true",
                     help="print op locations")
    opt.add_argument("--verify-diagnostics", action="store_true",
                     help="check '// expected-error {{...}}' annotations instead of failing on errors")
    opt.add_argument("--allow-unregistered-dialect", action="store_true",
                     help="accepted for mlir-opt compatibility (unknown ops are always allowed)")
    _add_pass_arguments(opt)
    run = sub.add_parser("run", help="run a function: an .mlir on the interpreter, or a .vmpack (or an .mlir "
                                     "compiled in memory) on the VM (like iree-run-module)")
    run.add_argument("input", help="an .mlir file, a .vmpack module file, or - for standard input")
    run.add_argument("--function", help="the function to run (default: the module's only public one)")
    run.add_argument("--input", dest="inputs", action="append", default=[], metavar="VALUE",
                     help="an argument: 2x3xf32=1 2 3 4 5 6, f32=0.5, 7, or @x.npy (repeat per argument)")
    run.add_argument("--output", dest="outputs", action="append", default=[], metavar="DEST",
                     help="where result i goes: - (print), @y.npy (write), +y.npy (append)")
    run.add_argument("--device", default=None,
                     choices=["reference", "local-sync", "local-task", "vulkan", "opencl", "cuda"],
                     help="reference: the interpreter (default for .mlir); local-sync / local-task: native "
                          "kernels on the VM, one by one / on a thread pool (default for .vmpack); an .mlir "
                          "is then compiled in memory for llvm-cpu; vulkan / opencl / cuda: the module's "
                          "vulkan-spirv / opencl-spirv / cuda kernels on a GPU (without one, vulkan runs on Mesa "
                          "lavapipe and opencl on pocl's CPU driver)")
    run.add_argument("--print-statistics", action="store_true",
                     help="report dispatches, time and peak memory of the run on stderr (VM devices)")
    from .vm.commands import add_arguments as add_vm_commands
    add_vm_commands(sub)
    chk = sub.add_parser("check", help="run a test file's functions and report their check.* assertions")
    chk.add_argument("input", help="an .mlir file, or - for standard input")
    chk.add_argument("--split-input-file", action="store_true",
                     help="treat each '// -----' separated chunk as its own module")
    chk.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                     help="stop a function that runs longer than this (default 60; 0 = no limit)")
    chk.add_argument("-q", "--quiet", action="store_true", help="print only failing functions and the summary")
    lsp = sub.add_parser("lsp", help="start the language server on standard input/output (for editors)")
    # Clients name their transport (vscode-languageclient appends --stdio); stdio is the only one.
    lsp.add_argument("--stdio", action="store_true", help="talk over standard input/output (the default)")
    lsp.add_argument("--no-open-worker", action="store_true",
                     help="analyse in this process only (no worker process that shares opening large files)")
    from .targets.commands import add_arguments as add_target_commands
    add_target_commands(sub)
    from .bench.command import add_arguments as add_bench_command
    add_bench_command(sub)
    from .importers.command import add_arguments as add_import_command
    add_import_command(sub)
    return parser


def _pass_flags_as_pipelines(argv: list[str]) -> list[str]:
    """`--canonicalize=max-num-rewrites=5` (a short pass flag with options, as mlir-opt
    spells it) as `--pass-pipeline=canonicalize{max-num-rewrites=5}`; a bare `--cse`
    stays a flag (argparse keeps flags and `--pass-pipeline` in command-line order)."""
    from .transforms.passes import load_passes
    passes = load_passes()
    out = []
    for arg in argv:
        name, eq, options = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        out.append(f"--pass-pipeline={name}{{{options}}}" if eq and name in passes else arg)
    return out


def _add_pass_arguments(opt) -> None:
    from .transforms.passes import load_passes
    group = opt.add_argument_group("passes (run in the order given)")
    group.add_argument("--pass-pipeline", dest="pipeline", action="append", default=[], metavar="PIPELINE",
                       help="a pipeline in MLIR's syntax: 'builtin.module(func.func(canonicalize,cse))'")
    for name, cls in sorted(load_passes().items()):
        group.add_argument(f"--{name}", dest="pipeline", action="append_const", const=name,
                           help=f"{cls.summary} (options: --{name}='key=value ...')" if
                           dataclasses.fields(cls) else cls.summary)
    group.add_argument("--lower-to", choices=("tosa", "linalg", "loops", "llvm"), metavar="LEVEL",
                       help="lower from the input's level down to LEVEL: tosa, linalg, loops or llvm "
                            "(after the other passes given)")
    group.add_argument("--list-passes", action="store_true", help="list the passes and exit")
    group.add_argument("--print-ir-before-all", action="store_true", help="print the IR before every pass")
    group.add_argument("--print-ir-after-all", action="store_true", help="print the IR after every pass")
    group.add_argument("--print-ir-after-change", action="store_true",
                       help="print the IR after every pass that changed it")
    group.add_argument("--timing", "--mlir-timing", dest="timing", action="store_true",
                       help="report the time each pass took")
    group.add_argument("--check-semantics", action="store_true",
                       help="run each function before and after every pass on the same seeded random "
                            "inputs; a pass that changes the results is an error")
    group.add_argument("--seed", type=int, default=0, help="seed of --check-semantics' inputs (default 0)")


def read_input(path: str) -> tuple[str, str] | None:
    """(text, display name) of a file or stdin; None after reporting why it cannot be read."""
    problem = None
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
            name = "<stdin>"
        else:
            with open(path, "rb") as f:
                data = f.read()
            name = path
    except OSError as e:
        problem = Diagnostic("error", f"could not open input file '{path}': {e.strerror}")
    else:
        try:
            return data.decode("utf-8"), name
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            problem = Diagnostic("error", f"{name}:{line}: input is not UTF-8 text "
                                 f"(byte 0x{data[e.start]:02x} at offset {e.start})")
    report([problem])
    return None


def write_output(path: str, text: str) -> Diagnostic | None:
    """Write a regular file atomically (a failed run never leaves a half-written file
    behind); anything else (/dev/null, a pipe, a terminal) is written in place."""
    if path == "-":
        sys.stdout.write(text)
        return None
    try:
        if os.path.exists(path) and not os.path.isfile(path):
            with open(path, "w") as f:
                f.write(text)
            return None
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".mlirtext-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        return Diagnostic("error", f"could not write output file '{path}': {e.strerror}")
    return None


def _list_passes() -> str:
    from .transforms.passes import load_passes
    lines = ["Passes:"]
    for name, cls in sorted(load_passes().items()):
        lines.append(f"  --{name:<24} {cls.summary}")
    return "\n".join(lines) + "\n"


def _pass_manager(args):
    """The pass manager the flags ask for, None when they ask for no pass, or a diagnostic."""
    from .transforms.pass_manager import PassManager, PrintIR, Timing
    from .transforms.semantics_check import CheckSemantics
    from .transforms.pipeline import PipelineError, parse_pipeline
    items = []
    for text in args.pipeline:
        try:
            items.extend(parse_pipeline(text))
        except PipelineError as e:
            return e.format()
    if not items and not args.lower_to:
        return None
    # Timing goes last: it starts right before the pass and stops right after it, so the
    # time of the other instrumentations (printing, interpreting) is not counted.
    instruments = []
    if args.check_semantics:
        instruments.append(CheckSemantics(sys.stderr.write, args.seed))
    if args.print_ir_before_all or args.print_ir_after_all or args.print_ir_after_change:
        instruments.append(PrintIR(sys.stderr.write, args.print_ir_before_all, args.print_ir_after_all,
                                   args.print_ir_after_change))
    if args.timing:
        instruments.append(Timing())
    return PassManager(items, instrumentations=instruments)


def _run_passes(pm, result, lower_to) -> list:
    """The pipeline of `pm`, then the steps down to `lower_to` (which depend on the input)."""
    from .transforms.conversions.levels import lowering_pipeline
    from .transforms.pipeline import parse_pipeline
    problems = pm.run(result.module)
    if problems or not lower_to:
        return problems
    try:
        text = lowering_pipeline(result.module, lower_to)
        steps = parse_pipeline(text) if text else []  # already at that level: nothing to do
    except ValueError as e:
        return [Diagnostic("error", f"--lower-to={lower_to}: {e}", result.module.span)]
    saved, pm.items = pm.items, steps
    try:
        return pm.run(result.module)
    finally:
        pm.items = saved


def cmd_opt(args) -> int:
    from . import api
    from .transforms.pass_manager import Timing
    from .verify_diagnostics import check
    if args.list_passes:
        sys.stdout.write(_list_passes())
        return 0
    pm = _pass_manager(args)
    if isinstance(pm, str):
        print(pm, file=sys.stderr)
        return 1
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    results = api.parse_chunks(text, name, args.split_input_file)
    outputs, failed = [], False
    for result in results:
        if pm is not None and not has_errors(result.diagnostics):
            result.diagnostics.extend(_run_passes(pm, result, args.lower_to))
        if args.verify_diagnostics:
            problems = check(result.source, result.start, result.end, result.diagnostics)
            report(problems)
            failed |= bool(problems)
            if not has_errors(result.diagnostics):
                outputs.append(api.to_text(result, args.generic, args.locations))
            continue
        report(result.diagnostics)
        if has_errors(result.diagnostics):
            failed = True
            continue
        outputs.append(api.to_text(result, args.generic, args.locations))
    if pm is not None:
        for inst in pm.instrumentations:
            if isinstance(inst, Timing):
                sys.stderr.write(inst.report())
    if failed:
        return 1
    problem = write_output(args.output, "// -----\n".join(outputs))
    if problem is not None:
        report([problem])
        return 1
    return 0


def _public_functions(module) -> list[str]:
    from .ir.attributes import StringAttr
    names = []
    for op in module.regions[0].blocks[0].ops if module.regions and module.regions[0].blocks else []:
        runnable = op.name == "func.func" or op.name == "llvm.func" and "mlirtext.abi" in op.attributes
        if runnable and op.regions and op.regions[0].blocks:
            vis = op.attributes.get("sym_visibility")
            if not (isinstance(vis, StringAttr) and vis.value != "public"):
                names.append(op.attributes["sym_name"].value)
    return names


def cmd_run(args) -> int:
    from .vm.commands import run_compiled
    if args.device in ("local-sync", "local-task", "vulkan", "opencl", "cuda") or args.input.endswith(".vmpack") or \
            _starts_like_module_file(args.input):
        return run_compiled(args)
    return cmd_interpret(args)


def _starts_like_module_file(path: str) -> bool:
    from .vm.commands import MODULE_FILE_MAGIC
    if path == "-":
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) == MODULE_FILE_MAGIC
    except OSError:
        return False


def cmd_interpret(args) -> int:
    from . import api
    from .interpreter import Interpreter, InterpreterError
    from .interpreter.abi import ABI_ATTR, signature
    from .values import ValueError_
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    result = api.parse_and_verify(text, name)
    if not result.ok:
        report(result.diagnostics)
        return 1
    interp = Interpreter(result.module)
    fn_name = args.function
    if fn_name is None:
        public = _public_functions(result.module)
        if len(public) != 1:
            report([Diagnostic("error", f"{name}: --function is needed: the module has "
                              f"{len(public)} public functions ({', '.join(public) or 'none'})")])
            return 1
        fn_name = public[0]
    try:
        fn = interp.function(fn_name.lstrip("@"))
        if fn.name == "llvm.func" and ABI_ATTR not in fn.attributes:
            from .interpreter.llvm import builtin_signature
            ftype = builtin_signature(fn)
        else:
            ftype = signature(fn)
        inputs = parse_inputs(args, fn_name.lstrip("@"), ftype.inputs)
        print(f"EXEC @{fn_name.lstrip('@')}", flush=True)  # before the run, whose own prints follow
        outputs = interp.call(fn_name.lstrip("@"), inputs)
    except ValueError_ as e:
        report([Diagnostic("error", str(e))])
        return 1
    except InterpreterError as e:
        report([Diagnostic("error", str(e), e.span)])
        return 1
    return print_outputs(args, outputs, ftype.results)


def parse_inputs(args, fn_name: str, types) -> list:
    """The `--input` values for a function taking `types` (ValueError_ on a wrong count or value)."""
    from .values import ValueError_, parse_input
    if len(args.inputs) != len(types):
        raise ValueError_(f"@{fn_name} takes {len(types)} argument(s) "
                          f"({', '.join(map(str, types)) or 'none'}); {len(args.inputs)} --input given")
    return [parse_input(spec, t, i) for i, (spec, t) in enumerate(zip(args.inputs, types))]


def print_outputs(args, outputs, types) -> int:
    """Print the results as iree-run-module does, or write them where `--output` says; the exit code."""
    from .values import ValueError_, format_results, write_output
    if not args.outputs:
        print(format_results(outputs, types))
        return 0
    if len(args.outputs) > len(outputs):
        report([Diagnostic("error", f"{len(args.outputs)} --output given for {len(outputs)} results")])
        return 1
    try:
        for spec, value, t in zip(args.outputs, outputs, types):
            shown = write_output(spec, value, t)
            if shown is not None:
                print(shown)
    except ValueError_ as e:
        report([Diagnostic("error", str(e))])
        return 1
    return 0


def cmd_check(args) -> int:
    from .checking import check_text, format_result, summary
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    checked = check_text(text, name, args.split_input_file, args.time_limit or None)
    report(checked.diagnostics)
    for r in checked.results:
        if not (args.quiet and r.passed):
            print(format_result(r))
    print(summary(checked))
    return 0 if checked.ok else 1


def cmd_lsp(args) -> int:
    try:
        from mlirtext_server.server import main as lsp_main
    except ImportError:  # running from a checkout: the server package sits in server/
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "server"))
        from mlirtext_server.server import main as lsp_main
    return lsp_main(open_worker=not args.no_open_worker)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_argparser().parse_args(_pass_flags_as_pipelines(argv))
    try:
        if args.command == "opt":
            return cmd_opt(args)
        if args.command == "run":
            return cmd_run(args)
        if args.command == "check":
            return cmd_check(args)
        if args.command == "translate":
            from .targets.commands import cmd_translate
            return cmd_translate(args)
        if args.command == "lsp":
            return cmd_lsp(args)
        if args.command == "import":
            from .importers.command import cmd_import
            return cmd_import(args)
        if args.command == "bench":
            from .bench.command import cmd_bench
            return cmd_bench(args)
        if args.command in ("compile", "dump"):
            from .vm import commands
            return commands.cmd_compile(args) if args.command == "compile" else commands.cmd_dump(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 1
