"""The state a parse builds IR in: name scopes, blocks, aliases and spans.

Grammar callbacks (ours in `core_rules.py`, the dialects' in
`mlirtext/dialects/`) receive this context. It resolves SSA names (with forward
references, as MLIR allows in graph regions and across blocks), keeps block
labels, records every definition and use with its span (for the language
server, like MLIR's AsmParserState), and turns semantic problems into
diagnostics at the right place.
"""
from __future__ import annotations

from typing import Optional

from ..diagnostics import Diagnostic, DiagnosticError
from ..ir.attributes import LocationAttr
from ..ir.core import Block, Operation, Region, Value
from ..ir.source import SourceFile, Span

#: Regions nested deeper than this are reported instead of built (printing,
#: verifying and walking are recursive; real MLIR rarely nests past 20). The
#: region of an explicit top-level `module` does not count: we print every
#: input with one, and what we accepted must parse again once printed.
MAX_REGION_DEPTH = 200


class Scope:
    """The names of one region while it is being parsed."""

    __slots__ = ("parent", "defs", "forward", "poisoned", "blocks", "labels", "forward_blocks",
                 "current", "has_entry_args", "depth")

    def __init__(self, parent: Optional["Scope"]):
        self.parent = parent
        self.defs: dict[str, Value] = {}
        self.forward: dict[str, tuple[Value, Span]] = {}   # used before defined
        self.poisoned: set[str] = set()                      # defined by an op that failed to parse
        self.blocks: list[Block] = []
        self.labels: dict[str, Block] = {}                   # the labelled blocks of `blocks`
        self.forward_blocks: dict[str, tuple[Block, Span]] = {}
        self.current: Optional[Block] = None
        self.has_entry_args = False
        self.depth = 0 if parent is None else parent.depth + 1


class ResultNames(list):
    """`%a, %b:2 =`: (VALUE_ID token, count) pairs, the value of `op_results`."""


def _drop_uses(ops) -> None:
    for op in ops:
        op._drop_all_uses()


class AsmState:
    """Where things are in the source: the index editor features query.

    `uses` holds (start, end, value) for every SSA use; definitions carry their
    own span (`Value.span`, `Block.span`, `Operation.span`). Symbol and alias
    references are recorded the same way.
    """

    def __init__(self):
        self.uses: list[list] = []                 # [start, end, Value]
        self.block_uses: list[tuple] = []          # (start, end, Block)
        self.symbol_uses: list[tuple] = []         # (start, end, SymbolRefAttr text)
        self.symbol_defs: list[tuple] = []         # (start, end, op defining the symbol)
        self.alias_defs: dict[str, Span] = {}      # "#map" / "!t" -> span of its name
        self.alias_uses: list[tuple] = []          # (start, end, "#map")


class ParseContext:
    """Builds one module's IR while the LALR driver runs the grammar callbacks."""

    def __init__(self, source: SourceFile, registry):
        self.source = source
        self.registry = registry  # dialects.registry.Registry: the dialects this parse knows
        #: namespace -> span of the name of the first op of a dialect the registry does not know
        self.unregistered: dict[str, Span] = {}
        #: dialect type or attribute text -> (check, offset of its first use): checks that run once
        #: the parse is done (they parse the parameters)
        self.checks_after_parse: dict[str, tuple] = {}
        self.diagnostics: list[Diagnostic] = []
        self.state = AsmState()
        self.attr_aliases: dict[str, object] = {}
        self.type_aliases: dict[str, object] = {}
        self.alias_order: list[tuple[str, object]] = []
        self.pending_args: Optional[list] = None  # entry-block arguments for the next region
        self.scope = Scope(None)
        self.top = self.scope
        self.replaced: dict[int, Value] = {}      # forward-reference placeholder -> real value
        self.poisoned_names: set[str] = set()
        self.too_deep: Optional[tuple] = None    # region-opening tokens at depths MAX + 1, MAX + 2
        self.file_metadata: Optional[str] = None
        # Set by the driver before each callback: the source range of the rule.
        self.start = self.end = self.first_end = 0

    # -- spans and diagnostics ------------------------------------------------------
    def span(self, start: Optional[int] = None, end: Optional[int] = None) -> Span:
        return Span(self.source, self.start if start is None else start,
                    self.end if end is None else end)

    def token_span(self, tok) -> Span:
        return Span(self.source, tok.start, tok.end)

    def report(self, message: str, start: int, end: int, notes=()) -> Diagnostic:
        d = Diagnostic("error", message, Span(self.source, start, end))
        for note_message, note_span in notes:
            d.note(note_message, note_span)
        self.diagnostics.append(d)
        return d

    def fail(self, message: str, where=None) -> DiagnosticError:
        """A DiagnosticError to raise from a callback; `where` is a token or span."""
        if where is None:
            span = self.span()
        elif isinstance(where, Span):
            span = where
        else:
            span = self.token_span(where)
        return DiagnosticError(Diagnostic("error", message, span))

    # -- SSA values -----------------------------------------------------------------------
    def resolve(self, tok, type) -> Value:
        """The value a `%name` use (a VALUE_ID token) refers to, checked against `type`."""
        name = tok.value[1:]
        scope = self.scope
        while scope is not None:
            value = scope.defs.get(name)
            if value is not None:
                break
            if scope.poisoned and (name in scope.poisoned or name.split("#", 1)[0] in scope.poisoned):
                return Value(type, name)
            scope = scope.parent
        else:
            fwd = self.scope.forward.get(name)
            if fwd is None:
                value = Value(type, name, self.token_span(tok))
                self.scope.forward[name] = (value, self.token_span(tok))
            else:
                value = fwd[0]
        if value.type is not type and value.type != type:  # types are shared: mostly the same object
            raise DiagnosticError(Diagnostic(
                "error", f"use of value '%{name}' expects different type than prior uses: "
                f"'{type}' vs '{value.type}'", self.token_span(tok)).note(
                    "prior use here", value.span))
        self.state.uses.append([tok.start, tok.end, value])
        return value

    def resolve_all(self, toks, types, what: str = "operand") -> list[Value]:
        toks = toks or []
        if len(toks) != len(types):
            raise self.fail(f"{len(toks)} {what}s present, but expected {len(types)}")
        return [self.resolve(t, ty) for t, ty in zip(toks, types)]

    def define(self, name: str, value: Value, span: Span) -> None:
        scope = self.scope
        value.name = name.partition("#")[0]
        value.span = span
        prior = scope.defs.get(name)
        if prior is not None:
            raise DiagnosticError(Diagnostic(
                "error", f"redefinition of SSA value '%{name}'", span).note(
                    "previously defined here", prior.span))
        fwd = scope.forward.pop(name, None) if scope.forward else None
        if fwd is not None:
            placeholder, use_span = fwd
            if placeholder.type != value.type:
                self.diagnostics.append(Diagnostic(
                    "error", f"definition of SSA value '%{name}#0' has type {value.type}",
                    span).note(f"previously used here with type {placeholder.type}", use_span))
            placeholder.replace_all_uses_with(value)
            self.replaced[id(placeholder)] = value
        scope.defs[name] = value

    def poison(self, names) -> None:
        """Names of an op that failed to parse: later uses are not reported again."""
        names = set(names)
        self.scope.poisoned.update(names)
        self.poisoned_names.update(names)

    # -- blocks and regions -------------------------------------------------------------------
    def current_block(self) -> Block:
        scope = self.scope
        if scope.current is None:
            block = Block()
            scope.blocks.append(block)
            scope.current = block
        return scope.current

    def append_op(self, op: Operation) -> None:
        block = self.scope.current
        (self.current_block() if block is None else block).append(op)

    def set_entry_args(self, args: list) -> None:
        """Arguments (name token, type, loc) for the entry block of the next region."""
        self.pending_args = args

    def push_region(self, open_tok) -> Scope:
        """Open a region's scope. Never raises: the driver keeps the returned scope on
        its stack, and `pop_region` (or `discard`) must find it there to close it."""
        depth = self.scope.depth + 1
        if depth > MAX_REGION_DEPTH and (self.too_deep is None or self.too_deep[1] is None):
            # Depth MAX + 1 is fine inside an explicit module: `finish` decides. Past
            # that, scopes are still made (names resolve as written, nothing
            # cascades) but `pop_region` drops their contents.
            where = self.token_span(open_tok) if open_tok is not None else self.span()
            self.too_deep = (where, None) if self.too_deep is None else (self.too_deep[0], where)
        scope = Scope(self.scope)
        self.scope = scope
        args, self.pending_args = self.pending_args, None
        if args is not None:
            block = Block()
            scope.blocks.append(block)
            scope.current = block
            scope.has_entry_args = True
            for tok, type, loc in args:
                arg = block.add_argument(type)
                arg.location = LocationAttr(loc) if loc is not None else None
                try:
                    self.define(tok.value[1:], arg, self.token_span(tok))
                except DiagnosticError as e:  # `(%a: i32, %a: i32)`: report, keep the scope
                    self.diagnostics.append(e.diagnostic)
        return scope

    def pop_region(self, scope: Scope) -> Region:
        """Close the region of `scope`: check its labels, hand open forward refs outward."""
        assert scope is self.scope
        self.scope = scope.parent
        for name, (block, span) in scope.forward_blocks.items():
            self.diagnostics.append(Diagnostic("error", f"reference to an undefined block '^{name}'", span))
            scope.blocks.append(block)
        parent_forward = self.scope.forward
        for name, entry in scope.forward.items():
            parent_forward.setdefault(name, entry)
        if scope.depth > MAX_REGION_DEPTH + 1:  # too deep (reported): printing would recurse too far
            for block in scope.blocks:
                _drop_uses(block.ops)
            return Region()
        return Region(scope.blocks)

    def start_block(self, tok, args) -> Block:
        """A `^label(args):` line: begins a new block in the current region."""
        scope = self.scope
        name = tok.value[1:]
        if scope.has_entry_args and len(scope.blocks) == 1 and not scope.blocks[0].ops:
            raise self.fail("invalid block name in region with named arguments", tok)
        fwd = scope.forward_blocks.pop(name, None)
        if fwd is not None:
            block = fwd[0]
        else:
            b = scope.labels.get(name)
            if b is not None:
                raise DiagnosticError(Diagnostic(
                    "error", f"redefinition of block '^{name}'", self.token_span(tok)).note(
                        "previously defined here", b.span))
            block = Block()
        block.label = name
        block.span = self.token_span(tok)
        scope.blocks.append(block)
        scope.labels[name] = block
        scope.current = block
        for arg_tok, type, loc in args:
            arg = block.add_argument(type)
            arg.location = LocationAttr(loc) if loc is not None else None
            self.define(arg_tok.value[1:], arg, self.token_span(arg_tok))
        return block

    def block_ref(self, tok) -> Block:
        """A `^label` successor reference, possibly before the block is defined."""
        name = tok.value[1:]
        scope = self.scope
        b = scope.labels.get(name)
        if b is None:
            fwd = scope.forward_blocks.get(name)
            if fwd is None:
                b = Block(label=name)
                scope.forward_blocks[name] = (b, self.token_span(tok))
            else:
                b = fwd[0]
        self.state.block_uses.append((tok.start, tok.end, b))
        return b

    # -- error recovery -----------------------------------------------------------------------
    def discard(self, values) -> None:
        """Forget the half-parsed op whose stack values the driver dropped."""
        self.pending_args = None
        for value in reversed(values):
            if isinstance(value, Scope):
                while self.scope is not value.parent and self.scope.parent is not None:
                    self.scope = self.scope.parent
                for block in value.blocks:
                    _drop_uses(block.ops)
            elif isinstance(value, Region):
                for block in value.blocks:
                    _drop_uses(block.ops)
            elif isinstance(value, Operation):
                _drop_uses([value])
            elif isinstance(value, ResultNames):
                self.poison(tok.value[1:] for tok, _ in value)

    # -- finishing ----------------------------------------------------------------------
    def _report_depth(self) -> None:
        """One error at the first region nested past the limit, counted inside the module."""
        if self.too_deep is None:
            return
        at_limit, past_limit = self.too_deep
        top_ops = [op for b in self.top.blocks for op in b.ops]
        explicit = len(top_ops) == 1 and top_ops[0].name == "builtin.module"
        where = past_limit if explicit else at_limit
        if where is not None:
            self.diagnostics.append(Diagnostic(
                "error", f"regions nested deeper than {MAX_REGION_DEPTH} levels are not supported", where))

    def finish(self) -> None:
        """Report what stayed undefined or nested too deep; point recorded uses at real values."""
        self._report_depth()
        for name, (value, span) in self.top.forward.items():
            if name.split("#", 1)[0] not in self.poisoned_names:
                self.diagnostics.append(Diagnostic("error", f"use of undeclared SSA value name '%{name}'", span))
        if self.replaced:
            for use in self.state.uses:
                value = use[2]
                while id(value) in self.replaced:
                    value = self.replaced[id(value)]
                use[2] = value
