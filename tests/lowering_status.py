"""How far the corpus's runnable test functions lower, and whether they still pass: issue 5's figures.

    PYTHONPATH=. python -m tests.lowering_status [--files GLOB]... [-v] [--iree]

Each test function (those `mlirtext check` runs) is split as IREE splits a test:
the computation becomes a function that returns the values the checks look at
(compiled and lowered), and the checks run on the host against what it returns.
The computation is inlined, then lowered one level at a time (conversion
passes and cse only: canonicalize would fold the constant inputs away and
leave nothing to lower). At every level the function must convert completely,
verify, run on the interpreter and pass its checks; with --iree, iree-opt must
also accept every level's module. Functions that do not pass at the source
level are not counted (that is the interpreter's figure, not lowering's).
"""
from __future__ import annotations

import argparse
import time
from collections import Counter
from dataclasses import dataclass, field

from mlirtext.api import parse_chunks
from mlirtext.checking import test_functions
from mlirtext.diagnostics import has_errors
from mlirtext.ir import types as T
from mlirtext.ir.attributes import TypeAttr
from mlirtext.ir.core import Operation
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

from . import corpus
from .check_status import GROUPS, corpus_files, group_of, needs_split

LEVELS = (("source", "inline,symbol-dce"), ("tosa", "convert-hlo-to-tosa,cse"),
          ("linalg", "convert-tosa-to-linalg,cse"), ("loops", "convert-linalg-to-loops,cse"),
          ("llvm", "convert-loops-to-llvm,cse"))


@dataclass
class Outcome:
    file: str
    function: str
    reached: str = ""                 # the lowest level at which it converted and passed
    stopped_by: str = ""              # why it went no further
    texts: dict = field(default_factory=dict)   # level -> printed module


def is_check(op: Operation) -> bool:
    if op.name.startswith("check."):
        return True
    callee = op.attributes.get("call_target_name")
    return op.name.endswith(".custom_call") and callee is not None and "check." in str(callee)


def split_checks(module: Operation, name: str):
    """A copy of `module` with only test function `name`, which returns what its checks
    look at instead of checking it; and the check ops (of the copy, detached)."""
    copy = module.clone()
    body = copy.regions[0].blocks[0]
    fn = None
    for op in list(body.ops):
        if op.name == "func.func" and op.sym_name == name:
            fn = op
        elif op.name == "func.func" and not _private(op):
            op.detach()
    checks = [op for op in fn.walk() if is_check(op)]
    values = [v for op in checks for v in op.operands]
    ret = fn.regions[0].blocks[-1].terminator
    ret.set_operands(values)
    for op in checks:
        op.detach()
        op.drop_operand_uses()
    fn.attributes["function_type"] = TypeAttr(T.FunctionType((), tuple(v.type for v in values)))
    for key in ("res_attrs",):
        fn.attributes.pop(key, None)
    return copy, checks


def _private(op: Operation) -> bool:
    vis = op.attributes.get("sym_visibility")
    return vis is not None and getattr(vis, "value", None) == "private"


def run_checks(module: Operation, name: str, checks: list[Operation]) -> str:
    """'' when the lowered function's results pass the checks, else why not."""
    from mlirtext.interpreter import Interpreter, InterpreterError
    from mlirtext.interpreter.registry import IMPLS
    try:
        interp = Interpreter(module)
        outputs = interp.call(name, [])
    except InterpreterError as e:
        return f"run: {e}"
    except Exception as e:  # noqa: BLE001 - a bug is a reason, never a crash of the tool
        return f"run: internal error: {type(e).__name__}: {e}"
    interp.failures = []
    position = 0
    for op in checks:
        args = outputs[position:position + len(op.operands)]
        position += len(op.operands)
        try:
            IMPLS[op.name](interp, op, args)
        except Exception as e:  # noqa: BLE001
            return f"check: {type(e).__name__}: {e}"
    return f"wrong result: {interp.failures[0]}" if interp.failures else ""


def lower_function(rel: str, module: Operation, name: str) -> Outcome:
    outcome = Outcome(rel, name)
    try:
        lowered, checks = split_checks(module, name)
    except Exception as e:  # noqa: BLE001
        outcome.stopped_by = f"split: {type(e).__name__}: {e}"
        return outcome
    for level, pipeline in LEVELS:
        problems = PassManager(parse_pipeline(pipeline)).run(lowered)
        if problems:
            outcome.stopped_by = _reason(problems)
            return outcome
        why = run_checks(lowered, name, checks)
        if why:
            outcome.stopped_by = f"{level}: {why}"
            return outcome
        outcome.reached = level
        outcome.texts[level] = print_module(lowered)
    return outcome


def _reason(problems) -> str:
    messages = sorted({p.message for p in problems})
    return messages[0] if len(messages) == 1 else f"{messages[0]} (+{len(messages) - 1} more)"


def collect(globs=None, progress=None) -> list[Outcome]:
    outcomes = []
    for rel in corpus_files(globs):
        if progress:
            progress(rel)
        text = corpus.file_text(rel)
        for chunk in parse_chunks(text, rel, needs_split(text)):
            if has_errors(chunk.diagnostics) or chunk.module is None:
                continue
            for fn in test_functions(chunk.module):
                outcome = lower_function(rel, chunk.module, fn.sym_name)
                if outcome.reached:  # it passed at the source level at least
                    outcomes.append(outcome)
    return outcomes


def iree_rejections(outcomes: list[Outcome]) -> list[tuple[str, Outcome, str]]:
    """(level, outcome, iree-opt's first error) for every lowered module iree-opt rejects
    (one iree-opt run per module, so that one rejection does not hide another)."""
    from .oracle import generic_form
    rejected = []
    for level, _ in LEVELS:
        for o in outcomes:
            if level in o.texts:
                accepted, stderr = generic_form(o.texts[level])
                if accepted is None:
                    first = next((line for line in stderr.splitlines() if "error" in line), stderr[:200])
                    rejected.append((level, o, first.strip()))
    return rejected


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", action="append", metavar="GLOB", help="glob over corpus file paths (repeatable)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list each function that stops, and why")
    ap.add_argument("--iree", action="store_true", help="also check that iree-opt accepts every level")
    ap.add_argument("--top", type=int, default=25, help="reasons to show (0 = all)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    outcomes = collect(args.files)
    names = [level for level, _ in LEVELS]
    print(f"{len(outcomes)} test functions pass at the source level "
          f"({time.perf_counter() - start:.0f} s)")
    for group, _ in GROUPS + (("other", ""),):
        mine = [o for o in outcomes if group_of(o.file) == group]
        if not mine:
            continue
        counts = [sum(names.index(o.reached) >= i for o in mine) for i in range(len(names))]
        print(f"{group}: " + ", ".join(f"{n} {c}" for n, c in zip(names[1:], counts[1:])) + f" (of {len(mine)})")
    if args.iree:
        rejected = iree_rejections(outcomes)
        per_level = Counter(level for level, _, _ in rejected)
        print("iree-opt rejects: " + (", ".join(f"{k} {v}" for k, v in per_level.items()) or "none"))
        for level, o, error in rejected:
            print(f"  {level}: {o.file} @{o.function}: {error}")
    reasons = Counter(o.stopped_by for o in outcomes if o.reached != "llvm")
    print("\nwhat stops the others:")
    for reason, n in reasons.most_common(args.top or None):
        print(f"  {n:5d}  {reason}")
    if args.verbose:
        for o in outcomes:
            if o.reached != "llvm":
                print(f"{o.file} @{o.function}: reached {o.reached}; {o.stopped_by}")


if __name__ == "__main__":
    main()
