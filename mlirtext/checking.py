"""`mlirtext check FILE`: run the test functions of a file on the reference interpreter.

A test file holds functions whose `check.*` assertions (StableHLO's or IREE's
spelling, or JAX's `stablehlo.custom_call @check.expect_close(...)`) say what the
results must be. Which functions are tests, per chunk (`// -----` with
`--split-input-file`):

- a public `@main` without arguments when there is one (StableHLO's JAX-generated
  testdata: `@main` calls the private `@inputs` and `@expected`);
- otherwise every public function that takes no arguments (StableHLO's interpret
  tests, IREE's e2e tests); functions with arguments are helpers (or, like
  `interpret/api_input_arguments.mlir`, FileCheck tests fed by `--args`).

Each function passes when it runs to its end and no check failed; it fails at the
first failed check (the run goes on, so every failure is kept), and errors when the
interpreter cannot run it (an op without semantics, a bad value, the time limit),
naming the op and its line.
"""
from __future__ import annotations

import re
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Optional

from .diagnostics import Diagnostic, has_errors

#: Wall-clock limit per function (seconds); None for no limit.
DEFAULT_TIME_LIMIT = 60.0

PASSED, FAILED, ERROR = "passed", "failed", "error"

#: Ops that say nothing about what a test is about (left out of `FunctionResult.ops`).
_PLUMBING = {"func.return", "func.call", "func.func", "stablehlo.constant", "mhlo.constant", "arith.constant",
             "util.unfoldable_constant", "stablehlo.return", "mhlo.return", "builtin.module",
             "stablehlo.custom_call", "mhlo.custom_call", "tensor.empty", "linalg.yield", "linalg.fill",
             "scf.yield", "tosa.yield", "tosa.const", "tosa.const_shape", "util.optimization_barrier"}


@dataclass
class FunctionResult:
    name: str
    line: Optional[int]
    status: str
    reason: str = ""                 # the first failure or the error, one line
    failures: list = field(default_factory=list)   # every CheckFailure
    error_line: Optional[int] = None
    ops: tuple = ()                  # the ops the function (and what it calls) uses, plumbing left out
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == PASSED


@dataclass
class CheckReport:
    filename: str
    diagnostics: list = field(default_factory=list)   # parse and verify errors
    results: list = field(default_factory=list)       # FunctionResult per test function

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics) and all(r.passed for r in self.results)

    def counts(self) -> dict:
        out = {PASSED: 0, FAILED: 0, ERROR: 0}
        for r in self.results:
            out[r.status] += 1
        return out


class _TimeLimit(BaseException):
    """Raised by the alarm inside a running function (BaseException: no impl catches it)."""


@contextmanager
def _time_limit(seconds: Optional[float]):
    usable = (seconds is not None and seconds > 0 and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def on_alarm(signum, frame):
        raise _TimeLimit()

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---- which functions are tests --------------------------------------------------------------
def _top_functions(module) -> list:
    if not module.regions or not module.regions[0].blocks:
        return []
    return [op for op in module.regions[0].blocks[0].ops if op.name == "func.func"]


def _is_public(fn) -> bool:
    from .ir.attributes import StringAttr
    vis = fn.attr("sym_visibility")
    return not (isinstance(vis, StringAttr) and vis.value != "public")


def _name(fn) -> str:
    return fn.attr("sym_name").value


def test_functions(module) -> list:
    """The functions of one module (chunk) that are tests, in source order."""
    return pick_tests(_top_functions(module))


def pick_tests(functions) -> list:
    """Which of a chunk's top-level `func.func` ops are tests, in source order."""
    from .dialects.func import function_type
    out = []
    for f in functions:
        if not (f.regions and f.regions[0].blocks and _is_public(f)):
            continue
        try:
            if not function_type(f).inputs:
                out.append(f)
        except Exception:  # a malformed signature: the verifier has said so
            continue
    mains = [f for f in out if _name(f) == "main"]
    return mains or out


def uses_checks(fn, functions: dict, seen=None) -> bool:
    """Whether `fn` or a function it calls (`functions`: name -> func op) asserts with a `check.*`
    op or JAX's `custom_call @check.expect_*`: what makes a function a test and not a program."""
    from .interpreter.check import call_target
    from .ir.attributes import SymbolRefAttr
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    for op in fn.walk():
        if op.name.startswith("check.") or (op.name.endswith(".custom_call")
                                            and call_target(op).startswith("check.")):
            return True
        if op.name == "func.call":
            callee = op.attr("callee")
            target = functions.get(callee.root) if isinstance(callee, SymbolRefAttr) else None
            if target is not None and target is not fn and uses_checks(target, functions, seen):
                return True
    return False


def _ops_used(interp, fn, seen=None) -> list:
    """Op names in `fn` and the functions it calls (plumbing left out), first use first."""
    from .ir.attributes import SymbolRefAttr
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return []
    seen.add(id(fn))
    names = []
    for op in fn.walk():
        if op is fn:
            continue
        if op.name == "func.call":
            callee = op.attr("callee")
            target = interp.functions.get(getattr(callee, "root", None)) if isinstance(callee, SymbolRefAttr) \
                else None
            if target is not None:
                names.extend(_ops_used(interp, target, seen))
            continue
        if op.name.startswith("check.") or op.name in _PLUMBING:
            continue
        names.append(op.name)
    return list(dict.fromkeys(names))


def _line(span) -> Optional[int]:
    return span.line_col[0] if span is not None else None


# ---- running -------------------------------------------------------------------------------
def run_function(interp, fn, time_limit: Optional[float] = DEFAULT_TIME_LIMIT) -> FunctionResult:
    from .interpreter import InterpreterError
    name = _name(fn)
    result = FunctionResult(name, _line(fn.span), PASSED)
    try:
        result.ops = tuple(_ops_used(interp, fn))
    except Exception:
        result.ops = ()
    interp.failures = []
    interp.probes = {}
    interp.steps = 0
    start = time.perf_counter()
    try:
        with _time_limit(time_limit):
            interp.call(name, [])
    except _TimeLimit:
        result.status = ERROR
        result.reason = f"time limit: still running after {time_limit:g} s"
    except InterpreterError as e:
        result.status = ERROR
        result.error_line = _line(e.span)
        result.reason = str(e)
    except RecursionError:
        result.status = ERROR
        result.reason = "internal error: recursion too deep"
    except MemoryError:
        result.status = ERROR
        result.reason = "internal error: out of memory"
    except Exception as e:  # a bug in some op's semantics: reported, never a traceback
        result.status = ERROR
        result.reason = f"internal error: {type(e).__name__}: {e}"
    result.seconds = time.perf_counter() - start
    result.failures = list(getattr(interp, "failures", []))
    if result.status == PASSED and result.failures:
        result.status = FAILED
        result.reason = str(result.failures[0])
    return result


def check_text(text: str, filename: str, split: bool,
               time_limit: Optional[float] = DEFAULT_TIME_LIMIT) -> CheckReport:
    from . import api
    report = CheckReport(filename)
    for chunk in api.parse_chunks(text, filename, split):
        diagnostics, results = check_chunk(chunk, text, time_limit)
        report.diagnostics.extend(diagnostics)
        report.results.extend(results)
    return report


def check_chunk(chunk, text: str, time_limit: Optional[float] = DEFAULT_TIME_LIMIT,
                names: Optional[set] = None) -> tuple[list, list]:
    """(diagnostics, FunctionResult per test function) of one parsed and verified chunk of `text`;
    with `names`, only the test functions of those names run."""
    from .interpreter import Interpreter, InterpreterError
    if has_errors(chunk.diagnostics) or chunk.module is None:
        first = next((d for d in chunk.diagnostics if d.severity == "error"), None)
        line = text.count("\n", 0, chunk.start) + 1 if getattr(chunk, "start", None) is not None else None
        # the tests it would have had (public functions without arguments), each an error
        body = text[chunk.start:chunk.end] if chunk.end > chunk.start else text
        found = re.findall(r"func\.func\s+(?:public\s+)?@([\w$.-]+)\s*\(\s*\)", body)
        if "main" in found:
            found = ["main"]
        if names is not None:
            found = [n for n in found if n in names]
        results = [FunctionResult(
            label, line, ERROR, f"does not parse/verify: {first.message if first else 'no module'}",
            error_line=_line(first.span) if first else None)
            for label in (found or ([f"<chunk at line {line}>"] if names is None else sorted(names)))]
        return list(chunk.diagnostics), results
    try:
        interp = Interpreter(chunk.module)
    except (InterpreterError, Exception) as e:
        return list(chunk.diagnostics), [FunctionResult("<module>", None, ERROR, f"cannot load: {e}")]
    return list(chunk.diagnostics), [run_function(interp, fn, time_limit) for fn in test_functions(chunk.module)
                                     if names is None or _name(fn) in names]


def check_file(path: str, split: bool, time_limit: Optional[float] = DEFAULT_TIME_LIMIT) -> CheckReport:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return check_text(text, path, split, time_limit)


# ---- reporting -------------------------------------------------------------------------------
def reason_key(result: FunctionResult) -> str:
    """A short, countable form of why a function did not pass (for histograms)."""
    reason = result.reason
    m = re.match(r"'([\w.]+)'(?: with call target '(@[\w.$-]+)')? has no semantics", reason)
    if m:
        return f"no semantics for '{m.group(1)}'" + (f" {m.group(2)}" if m.group(2) else "")
    if result.status == FAILED:
        ops = ", ".join(result.ops[:3]) or "no ops"
        return f"wrong result ({ops})"
    if reason.startswith("does not parse/verify"):
        return "does not parse/verify"
    if reason.startswith("time limit"):
        return "time limit"
    # an op's error: keep the op and the first words, drop numbers and quoted specifics
    text = re.sub(r"\d+", "N", reason)
    text = re.sub(r"\"[^\"]*\"", "\"...\"", text)
    return text[:100]


def format_result(r: FunctionResult) -> str:
    where = f" (line {r.line})" if r.line is not None else ""
    head = {PASSED: "PASS", FAILED: "FAIL", ERROR: "ERROR"}[r.status]
    text = f"{head} @{r.name}{where}"
    if r.status == FAILED:
        text += f": {r.reason}"
        if len(r.failures) > 1:
            text += f" (+{len(r.failures) - 1} more failed check{'s' if len(r.failures) > 2 else ''})"
    elif r.status == ERROR:
        at = f" (line {r.error_line})" if r.error_line is not None and r.error_line != r.line else ""
        text += f": {r.reason}{at}"
    return text


def summary(report: CheckReport) -> str:
    c = report.counts()
    n = len(report.results)
    if n == 0:
        return f"{report.filename}: no test functions (public functions without arguments)"
    parts = [f"{c[PASSED]} passed", f"{c[FAILED]} failed"]
    if c[ERROR]:
        parts.append(f"{c[ERROR]} errored")
    return f"{report.filename}: {n} function{'s' if n != 1 else ''}: " + ", ".join(parts)


__all__ = ["CheckReport", "FunctionResult", "check_chunk", "check_file", "check_text", "format_result",
           "reason_key", "run_function", "summary", "test_functions", "pick_tests", "uses_checks", "Diagnostic"]
