"""How a dialect declares itself: grammar callbacks, op definitions and formats.

A dialect module creates one `Dialect` and declares its ops: with an assembly
format (`assembly_format.declare_family`: one format string gives the grammar
rule, the parse callback and the printer of a family of ops, and names their
operands, results and attributes), or with `Dialect.op` plus a hand-written rule
in `grammars/<name>.lark`, its callback (`Dialect.rule`) and a printer for the
irregular ones. `docs/adding-an-op.md` walks through adding one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..ir.core import Operation
from ..ir.signatures import OpSignature

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

    def __init__(self, message: str, span=None, notes=(), also=()):
        super().__init__(message)
        self.span = span
        self.notes = list(notes)
        #: further errors about the same op, reported after this one (MLIR follows an error
        #: of an op's return type inference with "failed to infer returned types")
        self.also = list(also)


@dataclass(frozen=True)
class OpDef:
    name: str
    summary: str = ""
    traits: frozenset = frozenset()
    properties: tuple = ()  # inherent attributes, printed in `<{...}>` in generic form
    verify: Optional[Callable[[Operation], None]] = None
    print: Optional[Callable] = None  # custom form: print(printer, op)
    #: How many operands, results, regions and successors the op has: a number, `(n, None)`
    #: for "n or more", or None when not declared. The verifier checks them before `verify`
    #: (which may then rely on them), the printer before using the custom form.
    counts: tuple = (None, None, None, None)
    #: fold(op, constants) -> None, or one entry per result: an Attribute (the result is
    #: that constant) or an existing Value; `constants[i]` is operand i's constant
    #: attribute or None. Like MLIR's `fold`: no new ops, no IR changes.
    fold: Optional[Callable] = None
    #: The names of its operands, results and attributes (`op.operand("lhs")`), or None.
    names: Optional[OpSignature] = None

    def has(self, trait: str) -> bool:
        return trait in self.traits

    def count_problem(self, op: Operation) -> Optional[str]:
        """What is wrong with the number of operands, results, regions or successors of
        `op` (MLIR's wording), or None."""
        n_operands, n_results, n_regions, n_successors = self.counts
        if n_operands is not None:
            got = len(op.operands)
            if isinstance(n_operands, tuple):
                if got < n_operands[0]:
                    return f"expected {n_operands[0]} or more operands, but found {got}"
            elif got != n_operands:
                return f"expected {n_operands} operands, but found {got}"
        for want, got, noun in ((n_results, len(op.results), "result"),
                                (n_regions, len(op.regions), "region")):
            if want is None or isinstance(want, tuple) and got >= want[0] or want == got:
                continue
            if isinstance(want, tuple):
                return f"expected {want[0]} or more {noun}s, but found {got}"
            return f"requires {_WORDS.get(want, want)} {noun}{'' if want == 1 else 's'}"
        if n_successors is not None and not isinstance(n_successors, tuple) and \
                len(op.successors) != n_successors:
            return f"requires {n_successors} successors but found {len(op.successors)}"
        return None


_WORDS = {0: "zero", 1: "one"}


@dataclass
class Dialect:
    name: str
    grammar: Optional[str] = None  # stem of grammars/<grammar>.lark
    rules: dict = field(default_factory=dict)
    ops: dict = field(default_factory=dict)
    #: declared assembly formats (assembly_format.Format), whose rules join the grammar
    formats: list = field(default_factory=list)
    summary: str = ""
    #: Check of the dialect's attribute text at parse time (`#stablehlo.dot<...>`): fn(text) ->
    #: None, or (message, offset of the problem in the text).
    attr_check: Optional[Callable] = None
    #: The same, for a check that needs the parser: run once the parse is done.
    attr_check_after_parse: Optional[Callable] = None
    #: fn(attribute text) -> the text MLIR prints for it (so that one attribute written two
    #: ways compares equal), or None to keep it.
    attr_canonical: Optional[Callable] = None
    #: Check of the dialect's type text at parse time: fn(text after '!') -> None, or
    #: (message, offset of the problem in the text after '!').
    type_check: Optional[Callable] = None
    #: A check of the dialect's type text that needs the parser (a user dialect's parameter
    #: constraints): fn(text after '!') -> None or (message, offset), run once the parse is done.
    type_check_after_parse: Optional[Callable] = None
    #: The dialect's own type classes: fn(text after '!') -> a Type, or None to keep the text
    #: verbatim (a `DialectType`). The parser asks for it through its registry.
    type_parser: Optional[Callable] = None
    #: Check of a ranked tensor's encoding of this dialect (MLIR's VerifiableTensorEncoding):
    #: fn(shape, encoding attribute) -> None or a message.
    encoding_check: Optional[Callable] = None
    #: Checks of discardable attributes (MLIR's verifyOperationAttribute /
    #: verifyRegionArgAttribute), by attribute name (`mhlo.result_alias`): fn(op, attr,
    #: arg_index) raising VerifyError; arg_index is None for an attribute of the op itself,
    #: else the index of the function argument whose attribute dictionary holds it.
    discardable_attrs: dict = field(default_factory=dict)

    def rule(self, *names: str):
        """Register a grammar callback `fn(ctx, children)` for rule/alias names."""
        def register(fn):
            for name in names:
                self.rules[name] = fn
            return fn
        return register

    def op(self, name: str, summary: str = "", traits=(), properties=(), verify=None, print=None,
           operands=None, results=None, regions=None, successors=None, fold=None,
           names: Optional[OpSignature] = None) -> OpDef:
        """Declare op `name`; `operands` .. `successors` are counts (see OpDef.counts);
        `names` names its operands, results and attributes (`op.operand("lhs")`)."""
        definition = OpDef(name, summary, frozenset(traits), tuple(properties), verify, print,
                           (operands, results, regions, successors), fold, names)
        self.ops[name] = definition
        return definition

    def format_grammar(self) -> tuple:
        """((rule name, Lark text), ...) of the declared formats."""
        return tuple((f.rule, f.grammar()) for f in self.formats)
