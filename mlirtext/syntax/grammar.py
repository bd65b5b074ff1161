"""Compose the core grammar with the dialect grammars and build the LALR tables.

Each dialect grammar `grammars/<dialect>.lark` defines a rule `<dialect>_op`
listing its ops' custom forms, and may use any rule or terminal of the core
grammar by name. We import every rule a dialect file defines, plus the core
names it uses, so rule names (and so callback names) are never mangled.
The LALR tables are cached on disk, keyed by the grammar text and Lark's version.
"""
from __future__ import annotations

import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path

import hashlib
import pickle
import sys
from dataclasses import dataclass

from lark import Lark
from lark import __version__ as lark_version
from lark.lexer import PatternStr
from lark.parsers.lalr_analysis import Shift

_RULE_DEF = re.compile(r"^[!?]*([a-z_][a-z0-9_]*)\s*:", re.M)
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_TERMINAL_DEF = re.compile(r"^([A-Z_][A-Z0-9_]*)\s*:", re.M)
_DECLARE = re.compile(r"^%declare\s+(.+)$", re.M)


def grammar_dir() -> Path:
    """`grammars/` of a source checkout, else the copy installed as package data."""
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / "grammars"
    if (checkout / "core.lark").is_file():
        return checkout
    return package / "grammars"  # installed: shipped as package data mlirtext/grammars


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


def compose(dialects: list[str]) -> str:
    """The top-level grammar text: core plus one %import per dialect grammar.

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
    return os.path.join(tempfile.gettempdir(), f"mlirtext-tables-{key}.pickle")


@dataclass
class Tables:
    """What the parse loop needs, in plain picklable form.

    `states[state][symbol]` is `(SHIFT, next_state)` or `(REDUCE, (size, origin, rule_index))`;
    `rules` are Lark's rules, from which Lark's tree builder makes the callbacks
    (child filtering, `?` inlining, `[x]` placeholders) around our transformer.
    """

    start_state: int
    end_state: int
    states: dict
    rules: list
    literals: dict  # keyword / punctuation text -> terminal name


SHIFT, REDUCE = 0, 1


def _extract(lark: Lark) -> Tables:
    table = lark.parser.parser.parser.parse_table
    rule_index = {rule: i for i, rule in enumerate(lark.rules)}
    states = {}
    shared: dict = {}
    for state, actions in table.states.items():
        row = {}
        for symbol, (action, arg) in actions.items():
            # Plain str keys: Lark's Token names compare through a Python-level __eq__.
            # Keys and actions are shared objects, so the pickle (loaded at every
            # start-up) stores each once.
            if action is Shift:
                entry = (SHIFT, arg)
            else:
                entry = (REDUCE, (len(arg.expansion), sys.intern(str(arg.origin.name)), rule_index[arg]))
            row[sys.intern(str(symbol))] = shared.setdefault(entry, entry)
        states[state] = row
    literals = {t.pattern.value: t.name for t in lark.terminals if isinstance(t.pattern, PatternStr)}
    return Tables(table.start_states["start"], table.end_states["start"], states, list(lark.rules), literals)


@lru_cache(maxsize=None)
def load_tables(dialects: tuple[str, ...]) -> Tables:
    """The LALR tables for core + `dialects`, from the disk cache when the grammars are unchanged."""
    text = compose(list(dialects))
    directory = grammar_dir()
    digest = hashlib.sha256(text.encode() + lark_version.encode())
    for name in ("core", *dialects):
        digest.update((directory / f"{name}.lark").read_bytes())
    path = _cache_path(digest.hexdigest()[:16])
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError):
        pass
    lark = Lark(text, parser="lalr", lexer="basic", start="start", import_paths=[str(directory)],
                maybe_placeholders=True)
    tables = _extract(lark)
    try:  # write then rename: a concurrent reader never sees half a file
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as f:
            pickle.dump(tables, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass
    return tables
