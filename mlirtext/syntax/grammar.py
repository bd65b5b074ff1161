"""Compose the core grammar with the dialect grammars and build the LALR tables.

Each dialect grammar `grammars/<dialect>.lark` defines a rule `<dialect>_op`
listing its ops' custom forms, and may use any rule or terminal of the core
grammar by name. We import every rule a dialect file defines, plus the core
names it uses, so rule names (and so callback names) are never mangled.
The LALR tables are cached on disk, keyed by the grammar text and Lark's version.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import pickle
import re
import sys
from dataclasses import dataclass
from functools import lru_cache

from .grammar_files import grammar_dir

_RULE_DEF = re.compile(r"^[!?]*([a-z_][a-z0-9_]*)\s*:", re.M)
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_TERMINAL_DEF = re.compile(r"^([A-Z_][A-Z0-9_]*)\s*:", re.M)
_DECLARE = re.compile(r"^%declare\s+(.+)$", re.M)


def _strip_comments(text: str) -> str:
    return re.sub(r'//[^\n]*|"(?:[^"\\]|\\.)*"', lambda m: m.group() if m.group().startswith('"') else "", text)


def _core_names(core: str) -> set[str]:
    names = set(_RULE_DEF.findall(core)) | set(_TERMINAL_DEF.findall(core))
    for decl in _DECLARE.findall(core):
        names.update(decl.split())
    return names


def _entry_alternatives(text: str, entry: str) -> list[str]:
    """The rule names listed by a dialect's entry rule `?<dialect>_op: a | b | ...`."""
    m = re.search(rf"^[!?]*{entry}\s*:(.*?)(?=^\S|\Z)", text, re.M | re.S)
    if m is None:
        raise ValueError(f"grammar must define the rule '{entry}'")
    names = [alt.strip() for alt in m.group(1).split("|")]
    if not all(re.fullmatch(r"[a-z_][a-z0-9_]*", n) for n in names):
        raise ValueError(f"'{entry}' must be a plain list of rule names")
    return names


def compose(dialects: list[str], formats: tuple = ()) -> str:
    """The top-level grammar text: core plus one %import per dialect grammar, plus the
    rules generated from declared assembly formats (`formats`: (rule name, Lark text)
    pairs, see dialects/assembly_format.py), which may use any imported name.

    Each dialect's op rules become alternatives of `op_body` directly (not via
    the entry rule) so an op costs one reduction less: the parse loop is the
    hot path.
    """
    directory = grammar_dir()
    core = (directory / "core.lark").read_text()
    core_names = _core_names(_strip_comments(core))
    lines = ["%import .core (" + ", ".join(sorted(core_names)) + ")"]
    alternatives = []
    for dialect in dialects:
        text = _strip_comments((directory / f"{dialect}.lark").read_text())
        entry = f"{dialect}_op"
        own = set(_RULE_DEF.findall(text))
        ops = _entry_alternatives(text, entry)
        used = set(_NAME.findall(text)) & core_names - own
        lines.append(f"%import .{dialect} (" + ", ".join(sorted((own - {entry}) | used)) + ")")
        alternatives.extend(ops)
    for rule, text in formats:
        lines.append(text.rstrip("\n"))
        alternatives.append(rule)
    lines.append("%extend op_body: " + " | ".join(alternatives))
    return "\n".join(lines) + "\n"


def _cache_path(key: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "mlirtext")
    try:
        os.makedirs(directory, exist_ok=True)
        if os.access(directory, os.W_OK):
            return os.path.join(directory, f"tables-{key}.pickle")
    except OSError:
        pass
    import tempfile  # only where ~/.cache is not writable: importing it costs 5 ms of start-up
    return os.path.join(tempfile.gettempdir(), f"mlirtext-tables-{key}.pickle")


#: Bump when the layout of `Tables` changes: it is part of the cache key.
TABLES_FORMAT = 4


@dataclass
class Tables:
    """The LALR tables in a compact, quickly loaded form; `states` gives the rows.

    Lark's table has one entry per (state, lookahead), over a million here:
    every op keyword is a lookahead of every state that ends an op. But a state
    reduces by few rules (mostly one), and the states share about a hundred
    distinct lookahead sets. So we store, per state, its shifts and gotos as
    `(symbol, next_state)` pairs and its reductions as `(lookahead set, rule)`
    pairs, with each lookahead set stored once. A state's full row is built the
    first time the parser enters that state (see `Rows`), so the driver and the
    lexer see exactly Lark's row, as a dict from symbol name to action: an int
    `>= 0` is a shift (or goto) to that state, a negative int `r - len(rules)`
    reduces by rule `r` (so `per_rule[action]` indexes a per-rule list). The
    row's keys are what the state accepts (the lexer's contextual keywords).

    `rules` say, per rule, how `callbacks.py` makes the reductions' callbacks (child
    filtering, `?` inlining, `[x]` placeholders, as Lark's tree builder does).
    """

    start_state: int
    end_state: int
    symbols: tuple       # symbol id -> name (terminals and rules)
    shifts: tuple        # per state: flat (symbol id, next state, ...) for shifts and gotos
    reduces: tuple       # per state: flat (lookahead set id, rule index, ...)
    lookaheads: tuple    # lookahead set id -> tuple of symbol ids
    rules: tuple         # per rule: a `callbacks.RuleShape` (plain values: no lark to load them)
    literals: dict       # keyword / punctuation text -> terminal name

    def __post_init__(self):
        self._prepare()

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_") and k != "states"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._prepare()

    def _prepare(self) -> None:
        # Interned names: the lexer's token types and the rows' keys are then the same objects.
        self._names = tuple(sys.intern(s) for s in self.symbols)
        self.literals = {text: sys.intern(name) for text, name in self.literals.items()}
        self._lookahead_names: dict = {}
        self.states = Rows(self)

    @property
    def n_states(self) -> int:
        return len(self.shifts)

    def rule_shapes(self) -> list[tuple[int, str]]:
        """(size, origin name) of each rule, the origin interned like the rows' keys."""
        return [(size, sys.intern(origin)) for _, origin, size, *_ in self.rules]

    def row(self, state: int) -> dict:
        """The full action row of `state`, as Lark's table has it."""
        names = self._names
        n_rules = len(self.rules)
        row: dict = {}
        pairs = self.reduces[state]
        for i in range(0, len(pairs), 2):
            la = pairs[i]
            keys = self._lookahead_names.get(la)
            if keys is None:
                keys = self._lookahead_names[la] = tuple(names[s] for s in self.lookaheads[la])
            row.update(dict.fromkeys(keys, pairs[i + 1] - n_rules))
        pairs = self.shifts[state]
        for i in range(0, len(pairs), 2):
            row[names[pairs[i]]] = pairs[i + 1]
        return row

    def states_with(self, symbol: str) -> set[int]:
        """States with a shift or goto on `symbol` (no row is built)."""
        try:
            sid = self._names.index(symbol)
        except ValueError:
            return set()
        found = set()
        for state, pairs in enumerate(self.shifts):
            for i in range(0, len(pairs), 2):
                if pairs[i] == sid:
                    found.add(state)
                    break
        return found


class Rows(dict):
    """state -> full action row, each built on first use (a parse visits few states)."""

    def __init__(self, tables: Tables):
        super().__init__()
        self._tables = tables

    def __missing__(self, state: int) -> dict:
        if not 0 <= state < self._tables.n_states:
            raise KeyError(state)
        row = self[state] = self._tables.row(state)
        return row


@lru_cache(maxsize=None)
def load_tables(dialects: tuple[str, ...], formats: tuple = ()) -> Tables:
    """The LALR tables for core + `dialects` + the rules of declared `formats`, from the disk
    cache when the grammars (and so the composed text, which holds the formats' rules) are unchanged."""
    text = compose(list(dialects), formats)
    directory = grammar_dir()
    digest = hashlib.sha256(text.encode())
    for name in ("core", *dialects):
        digest.update((directory / f"{name}.lark").read_bytes())
    return disk_cached(digest, lambda: _build_tables(dialects, formats))


def _build_tables(dialects: tuple[str, ...], formats: tuple) -> Tables:
    from . import lark_tables  # lark, only when the tables are not cached: importing it costs 0.05 s
    return lark_tables.extract(lark_tables.build_lark(dialects, formats))


def _lark_stamp() -> bytes:
    """What says which Lark builds the tables: its package's `__init__.py`, which holds its
    version (read, not imported: parsing from cached tables never imports lark)."""
    spec = importlib.util.find_spec("lark")
    try:
        with open(spec.origin, "rb") as f:
            return f.read()
    except (AttributeError, TypeError, OSError):  # no lark: the tables can only come from the cache
        return b""


def disk_cached(digest, build):
    """What `build()` returns, pickled on disk under `digest` (a hashlib object, to which
    Lark's version and the tables' format are added): loaded from there when present."""
    digest = digest.copy()
    digest.update(_lark_stamp() + f"format {TABLES_FORMAT}".encode())
    path = _cache_path(digest.hexdigest()[:16])
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        pass
    built = build()
    import tempfile  # (after a build, which took seconds)
    try:  # write then rename: a concurrent reader never sees half a file
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            pickle.dump(built, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass
    return built
