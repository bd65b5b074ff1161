"""How far the corpus's runnable test functions lower, and whether they still pass (issue 5's figures).

Each test function (those `mlirtext check` runs) is split as IREE splits a test: the computation
becomes a function that returns the values the checks look at (compiled and lowered), and the checks
run on the host against what it returns. The computation is inlined, then lowered one level at a time
(conversion passes and cse only: canonicalize would fold the constant inputs away and leave nothing
to lower). At every level the function must convert completely, verify, run on the interpreter and
pass its checks. One task per file, one result per function and level below the source,
`FILE@FUNCTION [LEVEL]` (so that an expected-status file says how far each function gets, and one that
stops a level earlier is worse than expected there): pass (it converted, verified and passed its checks
at that level); fail-compile (a conversion stopped it at or before that level), fail-run or mismatch (it
ran wrong at or before that level); skip (it does not pass at the source level: the interpreter's
figure, not lowering's).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .corpus_files import file_text, needs_split, suite_files, unique_names
from .results import Result

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


def is_check(op) -> bool:
    if op.name.startswith("check."):
        return True
    callee = op.attr("call_target_name")
    return op.name.endswith(".custom_call") and callee is not None and "check." in str(callee)


def split_checks(module, name: str):
    """A copy of `module` with only test function `name`, which returns what its checks
    look at instead of checking it; and the check ops (of the copy, detached)."""
    from ..ir import types as T
    from ..ir.attributes import TypeAttr
    copy = module.clone()
    body = copy.regions[0].blocks[0]
    fn = None
    for op in list(body.ops):
        if op.name == "func.func" and op.sym_name == name:
            fn = op
        elif op.name == "func.func" and not private(op):
            op.detach()
    checks = [op for op in fn.walk() if is_check(op)]
    values = [v for op in checks for v in op.operands]
    ret = fn.regions[0].blocks[-1].terminator
    ret.set_operands(values)
    for op in checks:
        op.detach()
        op.drop_operand_uses()
    fn.attributes["function_type"] = TypeAttr(T.FunctionType((), tuple(v.type for v in values)))
    fn.attributes.pop("res_attrs", None)
    return copy, checks


def private(op) -> bool:
    vis = op.attr("sym_visibility")
    return vis is not None and getattr(vis, "value", None) == "private"


def run_checks(module, name: str, checks: list) -> str:
    """'' when the lowered function's results pass the checks, else why not."""
    from ..interpreter import Interpreter, InterpreterError
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
            interp.semantics.impls[op.name](interp, op, args)
        except Exception as e:  # noqa: BLE001
            return f"check: {type(e).__name__}: {e}"
    return f"wrong result: {interp.failures[0]}" if interp.failures else ""


def lower_function(rel: str, module, name: str) -> Outcome:
    from ..syntax.printer import print_module
    from ..transforms.pass_manager import PassManager
    from ..transforms.pipeline import parse_pipeline
    outcome = Outcome(rel, name)
    try:
        lowered, checks = split_checks(module, name)
    except Exception as e:  # noqa: BLE001
        outcome.stopped_by = f"split: {type(e).__name__}: {e}"
        return outcome
    for level, pipeline in LEVELS:
        problems = PassManager(parse_pipeline(pipeline)).run(lowered)
        if problems:
            outcome.stopped_by = reason(problems)
            return outcome
        why = run_checks(lowered, name, checks)
        if why:
            outcome.stopped_by = f"{level}: {why}"
            return outcome
        outcome.reached = level
        outcome.texts[level] = print_module(lowered)
    return outcome


def reason(problems) -> str:
    messages = sorted({p.message for p in problems})
    return messages[0] if len(messages) == 1 else f"{messages[0]} (+{len(messages) - 1} more)"


def lower_file(root: str, rel: str) -> list[Outcome]:
    """The lowering outcome of every test function of a corpus file (those that do not even pass at
    the source level included, with `reached` empty)."""
    from ..api import parse_chunks
    from ..checking import test_functions
    from ..diagnostics import has_errors
    text = file_text(root, rel)
    outcomes = []
    for chunk in parse_chunks(text, rel, needs_split(text)):
        if has_errors(chunk.diagnostics) or chunk.module is None:
            continue
        for fn in test_functions(chunk.module):
            outcomes.append(lower_function(rel, chunk.module, fn.sym_name))
    return outcomes


def tests(options) -> list[str]:
    return suite_files(options)


def result_names(test: str, options) -> list[str]:
    return [f"{test}@<file>"]


#: A test function that every level lowers and runs: warming with it imports the dialects, passes
#: and semantics the corpus's tests need.
WARM_TEST = """func.func @warm() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  check.expect_almost_eq_const %1, dense<[2.0, 4.0]> : tensor<2xf32>
  return
}
"""


def warm(options) -> None:
    """What every test of the corpus suites needs, imported once per worker (a test is a child forked
    from it: what the child imports it imports again for every test)."""
    from ..api import parse_and_verify
    from ..interpreter import builtin_semantics
    from ..transforms.passes import builtin_passes
    builtin_passes().all()
    builtin_semantics()
    lower_function("warm.mlir", parse_and_verify(WARM_TEST, "warm.mlir").module, "warm")


def level_statuses(outcome: Outcome) -> list[tuple[str, str, str]]:
    """(level, status, reason) for each level below the source: pass down to the level the function
    reached, then how it stopped, for the level that stopped it and every level after."""
    levels = [level for level, _ in LEVELS[1:]]
    if not outcome.reached:
        why = f"does not pass at the source level: {outcome.stopped_by}"
        return [(level, "skip", why) for level in levels]
    why = outcome.stopped_by
    if ": wrong result" in why or ": check:" in why:
        failed = ("mismatch", why)
    elif ": run:" in why:
        failed = ("fail-run", why)
    else:
        failed = ("fail-compile", f"stops after {outcome.reached}: {why}")
    reached = [level for level, _ in LEVELS].index(outcome.reached)
    return [(level, "pass", "") if i < reached else (level, *failed) for i, level in enumerate(levels)]


def run(test: str, options) -> list[Result]:
    outcomes = lower_file(options.path, test)
    names = unique_names([o.function for o in outcomes])
    return [Result(f"{test}@{name} [{level}]", status, why, details={"reached": o.reached})
            for name, o in zip(names, outcomes) for level, status, why in level_statuses(o)
            ] or [Result(f"{test}@<file>", "skip", "no test functions")]
