"""Lark builds the LALR tables; this module turns its parser into our plain `Tables`.

Only a cache miss (a changed grammar or dialect module) comes here: `grammar.load_tables`
imports it then, so that parsing from cached tables never imports lark.
"""
from __future__ import annotations

from lark import Lark
from lark.lexer import PatternStr
from lark.parse_tree_builder import (ChildFilterLALR, ChildFilterLALR_NoPlaceholders,
                                     maybe_create_child_filter)
from lark.parsers.lalr_analysis import Shift

from .callbacks import RuleShape
from .grammar import Tables, compose
from .grammar_files import grammar_dir


def build_lark(dialects: tuple[str, ...], formats: tuple = ()) -> Lark:
    """Lark's LALR parser for core + `dialects` + `formats` (slow: seconds; `grammar.load_tables`
    caches what `extract` makes of it)."""
    return Lark(compose(list(dialects), formats), parser="lalr", lexer="basic", start="start",
                import_paths=[str(grammar_dir())], maybe_placeholders=True)


def callback_name(rule) -> str:
    return str(rule.alias or rule.options.template_source or rule.origin.name)


def lark_shaping(rule):
    """(to_include, nones_at_end, expand_single) as Lark's tree builder does it (LALR,
    placeholders on): to_include lists (child index, splice its children?, Nones before
    it); None when the children are passed as they are."""
    expand_single = bool(rule.options.expand1 and not rule.alias)
    made = maybe_create_child_filter(rule.expansion, rule.options.keep_all_tokens, False,
                                     rule.options.empty_indices)
    if made is None:
        return None, 0, expand_single
    cls, *args = made.func, *made.args
    if cls is ChildFilterLALR:
        to_include, nones_at_end = args
        return tuple((int(i), bool(e), int(n)) for i, e, n in to_include), int(nones_at_end), expand_single
    if cls is ChildFilterLALR_NoPlaceholders:
        (pairs,) = args
        return tuple((int(i), bool(expand), 0) for i, expand in pairs), 0, expand_single
    raise NotImplementedError(f"unexpected child filter {cls.__name__}")  # pragma: no cover


def rule_shape(rule) -> RuleShape:
    """A Lark rule as the plain tuple `callbacks.RuleShape` the driver compiles callbacks from."""
    return (callback_name(rule), str(rule.origin.name), len(rule.expansion), *lark_shaping(rule))


def extract(lark: Lark) -> Tables:
    table = lark.parser.parser.parser.parse_table
    rule_index = {rule: i for i, rule in enumerate(lark.rules)}
    symbol_ids: dict = {}
    lookahead_ids: dict = {}

    def sid(name) -> int:
        return symbol_ids.setdefault(str(name), len(symbol_ids))

    n_states = len(table.states)
    if sorted(table.states) != list(range(n_states)):
        raise ValueError("LALR states are not numbered 0..n-1")
    shifts, reduces = [], []
    for state in range(n_states):
        shift: list = []
        by_rule: dict = {}
        for symbol, (action, arg) in table.states[state].items():
            if action is Shift:
                shift += (sid(symbol), arg)
            else:
                by_rule.setdefault(rule_index[arg], []).append(sid(symbol))
        reduce: list = []
        for rule, symbols in by_rule.items():
            reduce += (lookahead_ids.setdefault(tuple(sorted(symbols)), len(lookahead_ids)), rule)
        shifts.append(tuple(shift))
        reduces.append(tuple(reduce))
    literals = {str(t.pattern.value): str(t.name) for t in lark.terminals if isinstance(t.pattern, PatternStr)}
    return Tables(table.start_states["start"], table.end_states["start"], tuple(symbol_ids), tuple(shifts),
                  tuple(reduces), tuple(lookahead_ids), tuple(rule_shape(r) for r in lark.rules), literals)
