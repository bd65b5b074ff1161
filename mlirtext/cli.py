"""The `mlirtext` command: `mlirtext opt FILE` (and, in later issues, more).

Exit status: 0 on success, 1 when anything was diagnosed (bad input, bad
request). Problems are printed MLIR-style on stderr, never as a traceback.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

from .diagnostics import Diagnostic, has_errors


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 1, like every other diagnosed error
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_argparser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mlirtext", description="Read, check, print and lower MLIR text.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    opt = sub.add_parser("opt", help="parse, verify and print MLIR (like mlir-opt)")
    opt.add_argument("input", help="an .mlir file, or - for standard input")
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
    run = sub.add_parser("run", help="run a function on the reference interpreter (like iree-run-module)")
    run.add_argument("input", help="an .mlir file, or - for standard input")
    run.add_argument("--function", help="the function to run (default: the module's only public one)")
    run.add_argument("--input", dest="inputs", action="append", default=[], metavar="VALUE",
                     help="an argument: 2x3xf32=1 2 3 4 5 6, f32=0.5, 7, or @x.npy (repeat per argument)")
    run.add_argument("--output", dest="outputs", action="append", default=[], metavar="DEST",
                     help="where result i goes: - (print), @y.npy (write), +y.npy (append)")
    run.add_argument("--device", default="reference", choices=["reference"],
                     help="where to run (the VM issue adds compiled devices)")
    return parser


def read_input(path: str) -> tuple[str, str] | Diagnostic:
    """(text, display name) of a file or stdin, or a diagnostic saying why not."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
            name = "<stdin>"
        else:
            with open(path, "rb") as f:
                data = f.read()
            name = path
    except OSError as e:
        return Diagnostic("error", f"could not open input file '{path}': {e.strerror}")
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        return Diagnostic("error", f"{name}:{line}: input is not UTF-8 text "
                          f"(byte 0x{data[e.start]:02x} at offset {e.start})")


def write_output(path: str, text: str) -> Diagnostic | None:
    """Write atomically: a failed run never leaves a half-written file behind."""
    if path == "-":
        sys.stdout.write(text)
        return None
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".mlirtext-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        return Diagnostic("error", f"could not write output file '{path}': {e.strerror}")
    return None


def _emit(diagnostics) -> None:
    for d in diagnostics:
        print(d.format(), file=sys.stderr)


def cmd_opt(args) -> int:
    from . import api
    from .verify_diagnostics import check
    got = read_input(args.input)
    if isinstance(got, Diagnostic):
        _emit([got])
        return 1
    text, name = got
    results = api.parse_chunks(text, name, args.split_input_file)
    outputs, failed = [], False
    for result in results:
        if args.verify_diagnostics:
            problems = check(result.source, result.start, result.end, result.diagnostics)
            _emit(problems)
            failed |= bool(problems)
            if not has_errors(result.diagnostics):
                outputs.append(api.to_text(result, args.generic, args.locations))
            continue
        _emit(result.diagnostics)
        if has_errors(result.diagnostics):
            failed = True
            continue
        outputs.append(api.to_text(result, args.generic, args.locations))
    if failed:
        return 1
    problem = write_output(args.output, "// -----\n".join(outputs))
    if problem is not None:
        _emit([problem])
        return 1
    return 0


def _public_functions(module) -> list[str]:
    from .ir.attributes import StringAttr
    names = []
    for op in module.regions[0].blocks[0].ops if module.regions and module.regions[0].blocks else []:
        if op.name == "func.func" and op.regions and op.regions[0].blocks:
            vis = op.attributes.get("sym_visibility")
            if not (isinstance(vis, StringAttr) and vis.value != "public"):
                names.append(op.attributes["sym_name"].value)
    return names


def cmd_run(args) -> int:
    from . import api
    from .dialects.func import function_type
    from .interpreter import Interpreter, InterpreterError
    from .values import ValueError_, format_results, parse_input, write_output
    got = read_input(args.input)
    if isinstance(got, Diagnostic):
        _emit([got])
        return 1
    text, name = got
    result = api.parse_and_verify(text, name)
    if not result.ok:
        _emit(result.diagnostics)
        return 1
    interp = Interpreter(result.module)
    fn_name = args.function
    if fn_name is None:
        public = _public_functions(result.module)
        if len(public) != 1:
            _emit([Diagnostic("error", f"{name}: --function is needed: the module has "
                              f"{len(public)} public functions ({', '.join(public) or 'none'})")])
            return 1
        fn_name = public[0]
    try:
        fn = interp.function(fn_name.lstrip("@"))
        ftype = function_type(fn)
        if len(args.inputs) != len(ftype.inputs):
            raise ValueError_(f"@{fn_name} takes {len(ftype.inputs)} argument(s) "
                              f"({', '.join(map(str, ftype.inputs)) or 'none'}); {len(args.inputs)} --input given")
        inputs = [parse_input(spec, t, i) for i, (spec, t) in enumerate(zip(args.inputs, ftype.inputs))]
        outputs = interp.call(fn_name.lstrip("@"), inputs)
    except ValueError_ as e:
        _emit([Diagnostic("error", str(e))])
        return 1
    except InterpreterError as e:
        _emit([Diagnostic("error", str(e), e.span)])
        return 1
    print(f"EXEC @{fn_name.lstrip('@')}")
    if not args.outputs:
        print(format_results(outputs, ftype.results))
        return 0
    if len(args.outputs) > len(outputs):
        _emit([Diagnostic("error", f"{len(args.outputs)} --output given for {len(outputs)} results")])
        return 1
    try:
        for spec, value, t in zip(args.outputs, outputs, ftype.results):
            shown = write_output(spec, value, t)
            if shown is not None:
                print(shown)
    except ValueError_ as e:
        _emit([Diagnostic("error", str(e))])
        return 1
    return 0


def main(argv=None) -> int:
    args = build_argparser().parse_args(argv)
    try:
        if args.command == "opt":
            return cmd_opt(args)
        if args.command == "run":
            return cmd_run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    return 1
