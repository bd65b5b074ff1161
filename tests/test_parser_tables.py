"""The compact LALR tables give exactly Lark's actions, for every state and symbol."""
from __future__ import annotations

import pickle

import pytest
from lark import Tree
from lark.parsers.lalr_analysis import Shift

from mlirtext.dialects import format_grammar, grammar_names
from mlirtext.syntax import callbacks
from mlirtext.syntax.grammar import Tables, load_tables
from mlirtext.syntax.lark_tables import build_lark, extract


@pytest.fixture(scope="module")
def lark():
    return build_lark(grammar_names(), format_grammar())  # all dialects: the grammar the parser uses


@pytest.fixture(scope="module")
def tables(lark) -> Tables:
    return extract(lark)


def _lark_row(lark, actions) -> dict:
    """Lark's row in our encoding: a shift/goto is the next state, a reduction `rule - len(rules)`."""
    rule_index = {rule: i for i, rule in enumerate(lark.rules)}
    row = {}
    for symbol, (action, arg) in actions.items():
        row[str(symbol)] = arg if action is Shift else rule_index[arg] - len(lark.rules)
    return row


def test_every_row_matches_lark(lark, tables):
    table = lark.parser.parser.parser.parse_table
    assert tables.n_states == len(table.states)
    assert (tables.start_state, tables.end_state) == (table.start_states["start"], table.end_states["start"])
    for state, actions in table.states.items():
        assert tables.row(state) == _lark_row(lark, actions), f"state {state}"
        assert tables.states[state] == tables.row(state)


def test_rows_after_pickling_match(lark, tables):
    again = pickle.loads(pickle.dumps(tables, protocol=pickle.HIGHEST_PROTOCOL))
    assert again.rules == tables.rules and again.literals == tables.literals
    for state in range(tables.n_states):
        assert again.states[state] == tables.row(state)


def test_cached_tables_are_the_fresh_ones(tables):
    """The cached tables (built in another process) are the same automaton: Lark numbers
    its states differently from run to run, so compare them by walking both from the start."""
    cached = load_tables(grammar_names(), format_grammar())
    assert [str(r) for r in cached.rules] == [str(r) for r in tables.rules]
    assert cached.literals == tables.literals and cached.n_states == tables.n_states
    same = {cached.start_state: tables.start_state}
    todo = [cached.start_state]
    while todo:
        a = todo.pop()
        row_a, row_b = cached.row(a), tables.row(same[a])
        assert row_a.keys() == row_b.keys()
        for symbol, action in row_a.items():
            if action < 0:  # the same reduction
                assert row_b[symbol] == action
            elif action not in same:
                assert row_b[symbol] >= 0
                same[action] = row_b[symbol]
                todo.append(action)
            else:
                assert same[action] == row_b[symbol]
    assert len(same) == cached.n_states and len(set(same.values())) == cached.n_states
    assert same[cached.end_state] == tables.end_state


def test_compact_form_is_small(tables):
    # Over a million (state, lookahead) actions; the stored form is a few tens of thousands of ints.
    full = sum(len(tables.row(s)) for s in range(tables.n_states))
    stored = sum(map(len, tables.shifts)) + sum(map(len, tables.reduces)) + sum(map(len, tables.lookaheads))
    assert stored * 10 < full


def test_states_with_and_row_keys(tables):
    assert tables.states_with("operation") == {s for s in range(tables.n_states) if "operation" in tables.row(s)}
    assert tables.states_with("no such symbol") == set()
    with pytest.raises(KeyError):
        tables.states[tables.n_states]
    with pytest.raises(KeyError):
        tables.states[-1]


# -- callbacks: the children each callback receives are those Lark's tree builder gives ---------
def _children(rule, spliced: int):
    """Children for a reduction by `rule`: a marker per symbol, a Tree with `spliced`
    markers for each inlined `_rule` (whose children Lark splices in)."""
    out = []
    for i, sym in enumerate(rule.expansion):
        if not sym.is_term and sym.name.startswith("_"):
            out.append(Tree(sym.name, [f"{i}.{k}" for k in range(spliced)]))
        else:
            out.append(f"child {i}")
    return out


def _plain(value):
    if isinstance(value, (Tree, callbacks.Tree)):
        return ("tree", str(value.data), [_plain(c) for c in value.children])
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def test_compiled_callbacks_shape_children_as_lark_does(lark, tables):
    from lark.parse_tree_builder import ParseTreeBuilder

    from mlirtext.syntax.callbacks import compile_callbacks, first_child
    from mlirtext.syntax.parser import callback_lookup

    lookup = callback_lookup()

    class Recorder:  # what Lark calls: records the children each callback gets
        def __getattr__(self, name):
            fn = lookup(name)
            if fn is None:
                raise AttributeError(name)
            if fn is first_child:
                return lambda children: children[0]
            return lambda children: ("call", name, list(children))

    def fake_lookup(name):
        fn = lookup(name)
        if fn is None or fn is first_child:
            return fn
        return lambda ctx, children: ("call", name, list(children))

    rules = lark.rules
    theirs = ParseTreeBuilder(rules, Tree, maybe_placeholders=True).create_callback(Recorder())
    ours = compile_callbacks(tables.rules, fake_lookup)  # from the plain shapes, as the parser does
    kept = 0
    for rule, mine in zip(rules, ours):
        for spliced in (0, 1, 2):
            want = _plain(theirs[rule](_children(rule, spliced)))
            children = _children(rule, spliced)
            if mine is None:  # the driver keeps the only child's value
                assert len(children) == 1, rule
                got = _plain(children[0])
                kept += 1
            else:
                got = _plain(mine(None, children))
            assert got == want, (rule, spliced)
    assert kept  # `?op_body: arith_binary`-like rules cost no call


def test_tables_pickle_without_lark_objects(tables):
    """Loading cached tables must not import lark: every value in them is a builtin one."""
    def plain(value):
        if isinstance(value, (tuple, list)):
            return all(plain(v) for v in value)
        if isinstance(value, dict):
            return all(plain(k) and plain(v) for k, v in value.items())
        return type(value) in (str, int, bool, type(None))
    assert plain(tables.rules) and plain(tables.symbols) and plain(tables.literals)
    assert plain(tables.shifts) and plain(tables.reduces) and plain(tables.lookaheads)


def test_parsing_from_cached_tables_imports_no_lark():
    import subprocess
    import sys
    code = ("import sys; from mlirtext import api; "
            "r = api.parse_and_verify('func.func @f(%a: i32) -> i32 { %b = arith.addi %a, %a : i32\\n"
            " return %b : i32 }'); assert r.ok, r.diagnostics; api.to_text(r); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lark', 'numpy')))")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)  # (builds the cache if needed)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_lexer_punctuation_fast_path_matches_the_token_pattern():
    from mlirtext.syntax.lexer import _TOKEN, Lexer

    literals = {":": "COLON", "::": "DOUBLE_COLON", "-": "MINUS", "->": "ARROW"}
    for text, stop in [(":", None), ("::", None), (":::", None), ("::", 1), ("->", None), ("->", 1),
                       ("-", None), ("-5", None), (": i32", None), ("-> f32", None)]:
        tok = Lexer(text, literals, stop).token(0, {})
        m = _TOKEN.match(text, 0, len(text) if stop is None else stop)
        assert (tok.type, tok.value, tok.end) == (literals.get(m.group(), "UNKNOWN"), m.group(), m.end()), text
