"""`mlirtext format FILE [-i] [-o OUT] [--width N]`: the file in one layout (see syntax/formatter.py).

A file that does not parse is not formatted: its diagnostics, exit status 1, nothing written (with
`-i` the file stays as it was). Standard output by default; `-i` rewrites the file in place and
`-o` writes another, both through the one writer of output files (atomic, only on success).
"""
from __future__ import annotations

from ..diagnostics import Diagnostic, report
from ..syntax import bytecode
from ..syntax.formatter import format_text
from .io import decode_text, read_bytes, write_output


def main(args) -> int:
    if args.in_place and (args.input == "-" or args.output is not None):
        report([Diagnostic("error", "-i rewrites the input file: give a file, and no -o"
                           if args.input != "-" else "-i rewrites the input file: standard input is not one")])
        return 1
    got = read_bytes(args.input)
    if got is None:
        return 1
    data, name = got
    if bytecode.is_bytecode(data):
        report([Diagnostic("error", f"{name}: is MLIR bytecode; format reads MLIR text "
                                    "(mlirtext opt FILE prints it as text)")])
        return 1
    text = decode_text(data, name)
    if text is None:
        return 1
    formatted = format_text(text, name, args.width)
    report(formatted.diagnostics)
    if not formatted.ok:
        return 1
    if args.in_place and formatted.text == text:
        return 0   # nothing to change: the file is not rewritten
    problem = write_output(args.input if args.in_place else args.output or "-", formatted.text)
    if problem is not None:
        report([problem])
        return 1
    return 0
