"""`mlirtext check` over the corpus's runnable test files (the three groups of `corpus_files.GROUPS`):
one task per file, one result per test function, `FILE@FUNCTION`: pass; mismatch (a check failed);
fail-run (the interpreter could not run it: an op without semantics, the time limit); fail-compile
(the file does not parse or verify)."""
from __future__ import annotations

import contextlib
import importlib
import io

from .corpus_files import file_text, needs_split, suite_files, unique_names
from .results import Result

#: Seconds a single function may run (the task's limit covers the whole file).
FUNCTION_TIME_LIMIT = 20.0
STATUS = {"passed": "pass", "failed": "mismatch", "error": "fail-run"}


def tests(options) -> list[str]:
    return suite_files(options)


def result_names(test: str, options) -> list[str]:
    return [f"{test}@<file>"]


def warm(options) -> None:
    """Once per worker: the parser's tables and the interpreter, and the optional numerics packages
    (bf16 and f8 through ml_dtypes, chlo's special functions through scipy), which a forked test would
    otherwise import inside its own time limit."""
    from ..checking import check_text
    check_text("func.func @main() { return }", "warm.mlir", False, FUNCTION_TIME_LIMIT)
    for package in ("ml_dtypes", "scipy.special"):
        try:
            importlib.import_module(package)
        except ImportError:
            pass


def check_corpus_file(root: str, rel: str, time_limit: float = FUNCTION_TIME_LIMIT) -> list:
    """The FunctionResults of one corpus file; never raises."""
    from ..checking import ERROR, FunctionResult, check_text
    try:
        text = file_text(root, rel)
        with contextlib.redirect_stdout(io.StringIO()):  # what `interpreter.print` prints
            report = check_text(text, rel, needs_split(text), time_limit)
        return report.results
    except BaseException as e:  # noqa: BLE001 - counted, never hidden
        if isinstance(e, KeyboardInterrupt):
            raise
        return [FunctionResult("<file>", None, ERROR, f"internal error: {type(e).__name__}: {e}")]


def run(test: str, options) -> list[Result]:
    results = check_corpus_file(options.path, test)
    if not results:
        return [Result(f"{test}@<file>", "skip", "no test functions")]
    names = unique_names([r.name for r in results])
    return [Result(f"{test}@{name}", _status(r), r.reason, seconds=round(r.seconds, 3))
            for name, r in zip(names, results)]


def _status(r) -> str:
    """A chunk that does not parse or verify, or a module the interpreter cannot load, is fail-compile."""
    if r.status == "error" and r.reason.startswith(("does not parse/verify", "cannot load", "internal error")):
        return "fail-compile" if not r.reason.startswith("internal error") else "crash"
    return STATUS[r.status]
