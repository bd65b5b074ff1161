"""MLIR text to IR: the entry point that ties grammar, driver and context together."""
from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

from ..diagnostics import Diagnostic, has_errors
from ..dialects import format_grammar, grammar_names
from ..dialects.assembly_format import Format
from ..dialects.registry import Registry, builtin_registry
from ..ir.core import Block, Operation, Region
from ..ir.resources import inline_dense_resources
from ..ir.source import SourceFile, Span
from .callbacks import first_child
from .context import AsmState, ParseContext
from .core_rules import core
from .grammar import Tables, disk_cached, load_tables
from .grammar_files import grammar_dir
from .lalr import LalrDriver

#: MLIR's parse error for an op of an unregistered dialect (mlir-opt without --allow-unregistered-dialect).
UNREGISTERED_DIALECT = ("operation being parsed with an unregistered dialect. If this is intended, please use "
                        "-allow-unregistered-dialect with the MLIR tool used")

#: `// -----` on a line of its own separates independent inputs (mlir-opt's --split-input-file).
_SPLIT = re.compile(r"^[ \t]*// -----[^\n]*\n?", re.M)


@dataclass
class ParseResult:
    """One parsed input: the module (None if nothing could be built) and what went wrong."""

    module: Optional[Operation]
    source: SourceFile
    diagnostics: list[Diagnostic]
    state: AsmState
    aliases: list = field(default_factory=list)  # [(name, value)] in source order
    file_metadata: Optional[str] = None          # a `{-# ... #-}` block, printed back verbatim
    start: int = 0
    end: int = 0
    #: namespace -> span of the first op of each dialect the registry did not know (in generic form)
    unregistered: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not has_errors(self.diagnostics)


@dataclass
class BuiltinGrammar:
    """The LALR tables of every built-in dialect's syntax, and which dialect owns each
    rule's callback: the parser imports a dialect's module when it first reduces by one of
    its rules (or meets its namespace), not at start-up."""

    tables: Tables
    owners: dict  # rule name -> dialect namespace


def _sources_digest():
    """A digest of everything the composed grammar is made from: the grammar files and the
    dialect modules (whose declared formats generate rules). Reading them costs ~2 ms; importing
    the dialects to compose the grammar would cost ~0.3 s."""
    digest = hashlib.sha256()
    dialect_dir = Path(__file__).resolve().parent.parent / "dialects"
    for path in sorted(grammar_dir().glob("*.lark")) + sorted(dialect_dir.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest


def _build_grammar() -> BuiltinGrammar:
    owners: dict = {}
    for dialect in builtin_registry().dialects():
        for name in [*dialect.rules, *(f.rule for f in dialect.formats)]:
            if name in core.rules or owners.get(name, dialect.name) != dialect.name:
                raise ValueError(f"grammar rule '{name}' has two callbacks")
            owners[name] = dialect.name
    return BuiltinGrammar(load_tables(grammar_names(), format_grammar()), owners)


@lru_cache(maxsize=None)
def builtin_grammar() -> BuiltinGrammar:
    return disk_cached(_sources_digest(), _build_grammar)


def _dialect_callback(namespace: str, name: str):
    dialect = builtin_registry().dialect(namespace)
    fn = dialect.rules.get(name)
    return fn if fn is not None else next(f.callback for f in dialect.formats if f.rule == name)


_LOCK = threading.Lock()


@lru_cache(maxsize=None)
def callback_lookup():
    """lookup(rule name) -> fn(ctx, children), for the driver's `compile_callbacks`."""
    rules = core.rules
    owners = builtin_grammar().owners

    def lookup(name: str):
        """Ours by rule name (without the prefix Lark gives aliases of imported rules);
        keyword-only `!` rules (`*_name`, `*_keyword`, `*_kind`, `visibility`) yield
        their token; None: no callback (a Tree is built, as Lark does)."""
        if "__" in name.strip("_"):  # Lark prefixes aliases of imported rules: `func__named_param`
            name = name.split("__", 1)[1]
        fn = rules.get(name)
        if fn is None and name in owners:
            fn = _dialect_callback(owners[name], name)
        if isinstance(fn, Format):
            return fn.callback
        if fn is not None:
            return fn
        if name.endswith(("_name", "_keyword", "_kind")) or name == "visibility":
            return first_child
        return None
    return lookup


@lru_cache(maxsize=None)
def _driver() -> LalrDriver:
    return LalrDriver(builtin_grammar().tables, callback_lookup())


def split_input(text: str) -> list[tuple[int, int]]:
    """(start, end) of each `// -----`-separated chunk."""
    bounds, pos = [], 0
    for m in _SPLIT.finditer(text):
        bounds.append((pos, m.start()))
        pos = m.end()
    bounds.append((pos, len(text)))
    return bounds


def parse(text: str, filename: str = "<stdin>", start: int = 0, end: Optional[int] = None,
          source: Optional[SourceFile] = None, attr_aliases: Optional[dict] = None,
          type_aliases: Optional[dict] = None, registry: Optional[Registry] = None,
          allow_unregistered: bool = True) -> ParseResult:
    """Parse text[start:end] into a `builtin.module` (wrapping top-level ops if needed).

    `attr_aliases` / `type_aliases` (`{"#map": attribute}`, `{"!t": type}`) are aliases
    defined before the text (by other pieces of one file): the text may use them, and
    the result's `aliases` lists only those it defines itself. `registry`: the dialects known
    (the built-in ones when None). Ops of other dialects, in generic form, are kept (the verifier
    checks them structurally) and listed in the result's `unregistered`; unless
    `allow_unregistered`, the first is an error, as in mlir-opt."""
    source = source or SourceFile(filename, text)
    end = len(text) if end is None else end
    driver = _driver()
    ctx = ParseContext(source, registry or builtin_registry())
    if attr_aliases:
        ctx.attr_aliases.update(attr_aliases)
    if type_aliases:
        ctx.type_aliases.update(type_aliases)
    with _LOCK:
        driver.parse(ctx, text, start, end)
    ctx.finish()
    for check, checked, at in ctx.checks_after_parse.values():  # (they may parse: the lock is free)
        problem = check(checked)
        if problem is not None:
            where = at + max(0, min(problem[1], len(checked) - 1))
            ctx.diagnostics.append(Diagnostic("error", problem[0], Span(source, where, where + 1)))
    module = _top_module(ctx, source, start, end)
    # Weights an importer left in the `{-# dialect_resources #-}` block become real constants.
    ctx.file_metadata, problems = inline_dense_resources(module, ctx.file_metadata)
    ctx.diagnostics.extend(problems)
    if ctx.unregistered and not allow_unregistered:
        first = min(ctx.unregistered.values(), key=lambda span: span.start)
        # where mlir-opt reports it: just after the op's quoted name
        ctx.diagnostics.append(Diagnostic("error", UNREGISTERED_DIALECT, Span(source, first.end, first.end + 1)))
    ctx.diagnostics.sort(key=lambda d: d.span.start if d.span is not None else -1)
    unregistered = dict(sorted(ctx.unregistered.items(), key=lambda item: item[1].start))
    return ParseResult(module, source, ctx.diagnostics, ctx.state, ctx.alias_order, ctx.file_metadata,
                       start, end, unregistered)


def _top_module(ctx: ParseContext, source: SourceFile, start: int, end: int) -> Operation:
    blocks = ctx.top.blocks
    ops = [op for b in blocks for op in b.ops]
    if len(ops) == 1 and ops[0].name == "builtin.module":
        ops[0].detach()
        return ops[0]
    block = Block()
    for b in blocks:  # each block's ops taken whole: detaching them one by one (list.remove from the
        moved, b.ops = b.ops, []  # front) was quadratic in the number of top-level ops
        for op in moved:
            block.append(op)
    module = Operation("builtin.module", regions=[Region([block])], span=Span(source, start, end))
    return module


def parse_file_chunks(text: str, filename: str, split: bool, registry: Optional[Registry] = None,
                      allow_unregistered: bool = True) -> list[ParseResult]:
    """Each chunk of a file (one unless `split`), parsed with offsets into the whole file."""
    source = SourceFile(filename, text)
    ranges = split_input(text) if split else [(0, len(text))]
    return [parse(text, filename, s, e, source, registry=registry, allow_unregistered=allow_unregistered)
            for s, e in ranges]
