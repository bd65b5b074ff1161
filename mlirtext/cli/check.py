"""`mlirtext check FILE`: run a test file's functions and report their check.* assertions."""
from __future__ import annotations

from ..checking import check_text, format_result, summary
from ..diagnostics import report
from .io import read_input


def main(args) -> int:
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
