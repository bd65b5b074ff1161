"""How a dialect declares itself: grammar callbacks and op definitions.

A dialect module creates one `Dialect`, registers the callbacks for the rules
of its grammar file (`grammars/<name>.lark`) and declares its ops with
`Dialect.op` (a family of ops with one shape is one loop over names, one
verifier and one printer).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..ir.core import Operation

#: Traits the verifier and printer understand.
TERMINATOR = "terminator"
ISOLATED = "isolated_from_above"       # regions see no values from outside
SYMBOL = "symbol"                      # defines `sym_name`
SYMBOL_TABLE = "symbol_table"          # symbols of nested ops are unique and resolvable
NO_TERMINATOR = "no_terminator"        # single-block regions without a terminator
PURE = "pure"                          # no side effects: CSE and DCE may touch it
RETURN_LIKE = "return_like"            # returns to the parent op (func.return, yields)
GRAPH_REGION = "graph_region"          # regions are graphs: no dominance inside


class VerifyError(Exception):
    """Raised by an op's verifier: what is wrong, and where if not the op itself."""

    def __init__(self, message: str, span=None, notes=()):
        super().__init__(message)
        self.span = span
        self.notes = list(notes)


@dataclass(frozen=True)
class OpDef:
    name: str
    summary: str = ""
    traits: frozenset = frozenset()
    properties: tuple = ()  # inherent attributes, printed in `<{...}>` in generic form
    verify: Optional[Callable[[Operation], None]] = None
    print: Optional[Callable] = None  # custom form: print(printer, op)

    def has(self, trait: str) -> bool:
        return trait in self.traits


@dataclass
class Dialect:
    name: str
    grammar: Optional[str] = None  # stem of grammars/<grammar>.lark
    rules: dict = field(default_factory=dict)
    ops: dict = field(default_factory=dict)

    def rule(self, *names: str):
        """Register a grammar callback `fn(ctx, children)` for rule/alias names."""
        def register(fn):
            for name in names:
                self.rules[name] = fn
            return fn
        return register

    def op(self, name: str, summary: str = "", traits=(), properties=(), verify=None, print=None) -> OpDef:
        definition = OpDef(name, summary, frozenset(traits), tuple(properties), verify, print)
        self.ops[name] = definition
        return definition
