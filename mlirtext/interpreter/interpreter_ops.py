"""The StableHLO reference interpreter's own ops: `interpreter.run_parallel` and
`interpreter.print`.

run_parallel runs `programs[r][p]` as process (replica r, partition p) of a process grid
(hlo_collective.ProcessGrid), each in its own thread with its own interpreter sharing the
caller's check failures, and returns their results in order; `infeed` functions fill the
grid's infeed queue first. print writes a tensor the way the reference interpreter does.
"""
from __future__ import annotations

import sys
import threading

import numpy as np

from ..ir.attributes import ArrayAttr, SymbolRefAttr
from .hlo_collective import Process, ProcessGrid
from .machine import InterpreterError
from .registry import impl


# ---- run_parallel ------------------------------------------------------------------------------
def _symbols(attr) -> list:
    if isinstance(attr, SymbolRefAttr):
        return [attr.root]
    if isinstance(attr, ArrayAttr):
        out = []
        for item in attr.items:
            out.extend(_symbols(item))
        return out
    raise InterpreterError(f"expected function symbols, got {attr}")


@impl("interpreter.run_parallel")
def _run_parallel(interp, op, args):
    from .machine import Interpreter
    programs = op.attr("programs")
    if not isinstance(programs, ArrayAttr) or not programs.items:
        raise InterpreterError("interpreter.run_parallel needs a non-empty `programs` attribute")
    grid_names = [_symbols(row) for row in programs.items]
    num_partitions = len(grid_names[0])
    if any(len(row) != num_partitions for row in grid_names):
        raise InterpreterError("every row of `programs` must have the same number of functions")
    infeed_names = _symbols(op.attr("infeed")) if "infeed" in op.attributes else []
    grid = ProcessGrid(len(grid_names), num_partitions)
    for name in infeed_names:
        grid.infeed.append(interp.call(name, [])[0])
    jobs = []
    rest = list(args)
    for r, row in enumerate(grid_names):
        for p, name in enumerate(row):
            fn = interp.function(name)
            n = len(fn.regions[0].blocks[0].arguments)
            jobs.append((r, p, fn, rest[:n]))
            rest = rest[n:]
    if rest:
        raise InterpreterError(f"interpreter.run_parallel got {len(rest)} input(s) more than its programs take")
    results: list = [None] * len(jobs)
    errors: list = [None] * len(jobs)

    def work(i, r, p, fn, fn_args):
        sub = Interpreter(interp.module)
        sub.process = Process(r, p, grid)
        for shared in ("failures", "print_stream"):
            if hasattr(interp, shared):
                setattr(sub, shared, getattr(interp, shared))
        try:
            results[i] = sub.run_region(fn.regions[0], fn_args)
        except Exception as e:  # reported in the caller's thread
            errors[i] = e
            grid.fail(str(e))

    threads = [threading.Thread(target=work, args=(i, *job), daemon=True) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # The first real failure, not the ones it caused in processes waiting for it.
    failures = [e for e in errors if e is not None]
    for e in sorted(failures, key=lambda e: "abandoned" in str(e)):
        raise e
    return [v for res in results for v in res]


# ---- interpreter.print ---------------------------------------------------------------------------
_PRINT_LOCK = threading.Lock()


def _element_text(v, dt) -> str:
    if dt.kind == "b":
        return "true" if v else "false"
    if dt.kind in "iu":
        return str(int(v))
    if dt.kind == "c":
        return f"[{_element_text(v.real, np.dtype(np.float64))}, {_element_text(v.imag, np.dtype(np.float64))}]"
    f = float(v)
    if np.isnan(f):
        return "nan"
    if np.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f"{f:.6e}"


def format_tensor(value: np.ndarray, type_text: str) -> str:
    """A tensor the way StableHLO's reference interpreter prints it."""
    a = np.asarray(value)
    dt = a.dtype if a.dtype.kind in "biufc" else np.dtype(np.float64)
    if a.dtype.kind not in "biufc":
        a = a.astype(np.float64)
    if a.ndim == 0:
        return f"{type_text} {{{_element_text(a[()], dt)}}}"

    def nest(x, depth):
        pad = "  " * depth
        if x.ndim == 1:
            return pad + "[" + ", ".join(_element_text(v, dt) for v in x) + "]"
        inner = ",\n".join(nest(sub, depth + 1) for sub in x)
        return f"{pad}[\n{inner}\n{pad}]" if len(x) else f"{pad}[]"
    return f"{type_text} {{\n{nest(a, 1)}\n}}"


@impl("interpreter.print")
def _print(interp, op, args):
    operand = op.operand("operand")
    prefix = f"%{operand.name} = " if operand.name is not None else ""
    text = prefix + format_tensor(args[0], str(operand.type))
    # `interp.print_stream` (when a driver sets one) receives the text instead of stdout.
    stream = getattr(interp, "print_stream", None) or sys.stdout
    with _PRINT_LOCK:
        print(text, file=stream, flush=True)
    return []
