"""Narrowing a conversion's blame to one source op.

A conversion pass (convert-hlo-to-tosa, convert-tosa-to-linalg) rewrites every op of a function,
so the pass bisect finds names all of them. To name the one whose rewrite moved the numbers, the
pass runs again on copies of the function as it was before it, converting only some of those
source ops (a `partial_conversion` leaves the others as they were: the interpreter runs a function
with ops of two levels), with the same faults injected: halves first, delta style, the half whose
conversion alone leaves the tolerance kept, down to one op. When neither half does alone (their
errors only add up together) the narrowing stops and the pass keeps all the ops it rewrote.
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

from ..interpreter import Interpreter, InterpreterError
from ..ir.core import Operation
from ..transforms.conversion import partial_conversion
from ..transforms.lowering_service import origin_span
from ..transforms.pass_manager import Instrumentation, PassManager
from ..transforms.pipeline import parse_pipeline
from ..transforms.semantics_check import Tolerance, compare


#: Ops never left unconverted: the function (and module) the ops are in.
_FUNCTIONS = ("func.func", "builtin.module")


def _key(span) -> tuple:
    return (span.source.name, span.start, span.end)


class ConversionNarrower:
    """Runs pass `spelling` on copies of `before` (a module holding @`function` and what it calls)
    with only some of the source ops `ops` [(op name, span)] converted, and the function on `inputs`
    after it; `expected` its results before the pass. `fresh_faults()` the faults to inject, new
    ones each time (a fault strikes once). `runs` counts the function's runs."""

    def __init__(self, before: Operation, spelling: str, function: str, inputs: list, expected: list,
                 tolerance: Tolerance, fresh_faults: Callable[[], Sequence[Instrumentation]],
                 copies: Callable[[list], list]):
        self.before, self.spelling, self.function = before, spelling, function
        self.inputs, self.expected, self.tolerance = inputs, expected, tolerance
        self.fresh_faults, self.copies = fresh_faults, copies
        self.runs = 0

    def narrow(self, ops: list) -> Optional[list]:
        """The one op of `ops` whose conversion alone leaves the tolerance ([(op name, span)]), or
        None: the pass is no conversion, or no single op is to blame."""
        if len(ops) < 2:
            return None
        left = list(ops)
        while len(left) > 1:
            half = len(left) // 2
            for part in (left[:half], left[half:]):
                verdict = self._diverges(part)
                if verdict is None:
                    return None   # not a conversion: converting "some" ops converts them all
                if verdict:
                    left = part
                    break
            else:
                return None
        return left

    def _diverges(self, ops: list) -> Optional[bool]:
        """Whether converting only `ops` leaves the tolerance (or the function then fails to run); None
        when the pass never consulted the partial conversion or failed."""
        keep = {_key(span) for _, span in ops}
        module = self.before.clone()
        others = [op for op in module.walk() if op.name not in _FUNCTIONS and origin_span(op) is not None
                  and _key(origin_span(op)) not in keep]
        with partial_conversion(others) as partial:
            diagnostics = PassManager(parse_pipeline(self.spelling), instrumentations=list(self.fresh_faults())
                                      ).run(module)
        if not partial.used or diagnostics:
            return None   # (a partial conversion that fails says nothing of the op)
        self.runs += 1
        try:
            got = Interpreter(module).call(self.function, self.copies(self.inputs))
        except InterpreterError:
            return True
        return not compare("", self.function, self.expected, got, self.tolerance).ok
