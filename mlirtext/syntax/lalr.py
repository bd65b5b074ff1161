"""The LALR driver: Lark's tables, mlirtext's loop, lexing and recovery.

Lark builds the LALR(1) tables; `callbacks.py` shapes each rule's children as
Lark's tree builder would; this module runs them. Running the loop
ourselves buys three things Lark's own loop does not give:

* the lexer sees the parser's state, so keywords and shapes are contextual;
* every reduction knows the source range it covers, so every op, value and
  block gets a span without building a parse tree;
* a syntax error does not end the parse: we report it, drop the half-parsed
  op, skip to the next line where an op can start, and go on.
"""
from __future__ import annotations

import re

from ..diagnostics import DiagnosticError
from .callbacks import CallbackCompiler
from .context import Scope
from .gc_pause import gc_paused
from .lexer import BARE, FAST, LONG_WORDS, PAIR, PAIRS, SINGLE, SKIP, SKIP_START, VALUE, VALUE_ID, LexError, Lexer, Tok

#: How named terminals read in "expected ..." messages.
TERMINAL_NAMES = {
    "VALUE_ID": "SSA value", "SYMBOL": "symbol (@name)", "CARET_ID": "block label",
    "HASH_ID": "attribute alias", "BANG_ID": "type alias", "BARE_ID": "identifier",
    "INTEGER": "integer", "FLOAT": "float", "STRING": "string", "DIMS": "shape",
    "DENSE": "dense<...>", "RAW_ATTR": "attribute", "DIALECT_ATTR": "attribute",
    "DIALECT_TYPE": "type", "LOC": "loc(...)", "FILE_METADATA": "{-# ... #-}",
    "$END": "end of input",
}

#: Terminals that are one-token forms of what other terminals spell out (SHAPED_TYPE is
#: `tensor` `<` ... `>`): "expected" lists name the long form only.
_SHORTHANDS = frozenset(("SHAPED_TYPE",))

#: Runs of braces are one match: recovering over a 5 MB line of `}` must not loop per character.
_BRACE_SCAN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|\{+|\}+|\n')

#: Brackets nested deeper than this inside one op (attributes, types) are an error:
#: printing, hashing and comparing nested attributes and types is recursive, and
#: must still fit Python's recursion limit inside `MAX_REGION_DEPTH` regions.
MAX_NESTING = 50
_OPENERS = ("(", "[", "{", "<")


class LalrDriver:
    """Runs Lark's LALR tables over MLIR text with a `ParseContext` as callbacks' state."""

    def __init__(self, tables, lookup, max_errors: int = 100):
        """`lookup(name)` gives the callback `fn(ctx, children)` of the rules named so (None: none)."""
        self.start_state = tables.start_state
        self.end_state = tables.end_state
        self.literals = tables.literals
        self.display = {name: f"'{text}'" for text, name in self.literals.items()}
        # A reduction `act` (negative) finds (size, origin, callback) as reductions[act].
        # The callbacks shape the children as Lark's tree builder would (child filtering,
        # `?` inlining, placeholders); None: the rule's value is its only child's.
        # Each starts as a stub that compiles the rule's callback on its first reduction.
        self._compile = CallbackCompiler(tables.rules, lookup)
        self.reductions = [(size, origin, self._stub(index, size, origin))
                           for index, (size, origin) in enumerate(tables.rule_shapes())]
        # state -> action row (a dict). `tables.states` builds a row the first time it is
        # asked for; the loop reads a plain dict of the rows it has used (a subscript of an
        # exact dict is the fastest lookup Python has).
        self.states = tables.states
        self.rows: dict = {}
        # States from which an op can start: where recovery restarts.
        self.op_states = tables.states_with("operation")
        self.openers = frozenset(self.literals[b] for b in _OPENERS if b in self.literals)
        # Punctuation the driver lexes itself -> its terminal (see `lexer.FAST`).
        self.punct = {text: self.literals.get(text, "UNKNOWN")
                      for c, kind in FAST.items() if kind is SINGLE or kind is PAIR
                      for text in ((c, PAIRS[c]) if kind is PAIR else (c,))}
        self.max_errors = max_errors

    def _row(self, state: int) -> dict:
        row = self.rows.get(state)
        if row is None:
            row = self.rows[state] = self.states[state]
        return row

    def _stub(self, index: int, size: int, origin: str):
        def first_reduction(ctx, children):
            callback = self._compile(index)
            self.reductions[index] = (size, origin, callback)
            return children[0] if callback is None else callback(ctx, children)
        return first_reduction

    # -- the loop -----------------------------------------------------------
    def parse(self, ctx, text: str, begin: int, end: int):
        """Parse text[begin:end]; callbacks build IR in `ctx`; errors go to ctx.diagnostics."""
        with gc_paused():
            return self._parse(ctx, text, begin, end)

    def _parse(self, ctx, text: str, begin: int, end: int):
        states = self.rows
        all_states = self.states
        reductions = self.reductions
        lexer = Lexer(text, self.literals, end)
        sstack = [self.start_state]
        vstack: list = []
        starts: list[int] = []
        ends: list[int] = []
        pos = lexer.skip(begin)
        quiet = False        # after an error, stay quiet until a token is shifted
        at_eof = False       # closing what is still open at end of input
        virtual = None       # a '}' supplied at end of input to close a region
        end_state = self.end_state
        skip = SKIP.match
        skip_start = SKIP_START
        next_token = lexer.token
        # The lexer's commonest cases, taken here without a call (see `lexer.FAST`).
        fast_kind = FAST.get
        punct = self.punct
        pairs = PAIRS
        keywords = self.literals.get
        value_id = VALUE_ID.match
        bare = BARE.match
        long_words = LONG_WORDS
        openers = self.openers
        max_nesting = MAX_NESTING
        actions = self._row(sstack[-1])
        while True:
            message = None   # set when the error is not "unexpected token"
            if virtual is not None:
                tok, virtual = virtual, None
            elif pos >= end:
                tok = Tok("$END", "", end, end)
            else:
                try:
                    first = text[pos]
                    kind = fast_kind(first)
                    if kind is None:
                        tok = next_token(pos, actions)
                    elif kind is SINGLE:
                        tok = Tok(punct[first], first, pos, pos + 1)
                    elif kind is PAIR:  # `:` or `::`, `-` or `->`
                        value = pairs[first]
                        if not text.startswith(value, pos, end):
                            value = first
                        tok = Tok(punct[value], value, pos, pos + len(value))
                    elif kind is VALUE:
                        m = value_id(text, pos, end)
                        tok = Tok("VALUE_ID", m.group(), pos, m.end()) if m is not None else next_token(pos, actions)
                    else:  # a word: a keyword where the parser takes it, else BARE_ID
                        m = bare(text, pos, end)
                        value = m.group()
                        if value in long_words:
                            tok = next_token(pos, actions)
                        else:
                            kw = keywords(value)
                            tok = Tok(kw if kw is not None and kw in actions else "BARE_ID", value, pos, m.end())
                except LexError as e:
                    if not quiet:
                        ctx.report(e.args[0], e.pos, max(e.end, e.pos + 1))
                    if self._too_many(ctx, e.pos):  # lex errors count too: a file of unclosed `loc(`
                        return None
                    quiet = True
                    pos = self._recover(ctx, lexer, sstack, vstack, starts, ends, e.pos, end, True)
                    actions = self._row(sstack[-1])
                    continue
            ttype = tok.type
            while True:
                try:
                    act = actions[ttype]
                except KeyError:
                    act = None
                    break
                if act >= 0:  # shift
                    # Only a stack this deep can hold MAX_NESTING brackets: most tokens pay one set lookup.
                    if ttype in openers and len(sstack) > max_nesting and _nesting(vstack) >= max_nesting:
                        message = f"brackets nested deeper than {MAX_NESTING} levels are not supported"
                        act = None
                        break
                    sstack.append(act)
                    vstack.append(tok)
                    starts.append(tok.start)
                    ends.append(tok.end)
                    quiet = False
                    # Skip what follows: most tokens are followed by one space or by none,
                    # and checking for that is much cheaper than running SKIP.
                    pos = tok.end
                    if pos < end:
                        if text[pos] == " ":
                            pos += 1
                            if pos < end and text[pos] in skip_start:
                                pos = skip(text, pos, end).end()
                        elif text[pos] in skip_start:
                            pos = skip(text, pos, end).end()
                    try:
                        actions = states[act]
                    except KeyError:
                        actions = states[act] = all_states[act]
                    break
                size, origin, callback = reductions[act]
                if callback is None:  # `?a: b`: b's value and span are a's
                    sstack[-1] = goto = states[sstack[-2]][origin]
                else:
                    if size == 1:  # the entry is replaced in place: its span stays
                        children = [vstack[-1]]
                        ctx.start = start = starts[-1]
                        ctx.first_end = ctx.end = stop = ends[-1]
                    elif size:
                        # The rule's entry replaces its children's: it keeps the first
                        # child's start and the last child's end.
                        children = vstack[-size:]
                        del vstack[1 - size:]
                        del sstack[1 - size:]
                        ctx.start = start = starts[-size]
                        ctx.first_end = ends[-size]
                        ctx.end = stop = ends[-1]
                        del starts[1 - size:]
                        del ends[-size:-1]
                    else:
                        children = []
                        ctx.start = ctx.first_end = ctx.end = start = stop = ends[-1] if ends else begin
                    try:
                        value = callback(ctx, children)
                    except DiagnosticError as e:
                        # At end of input we close what is open with virtual '}'s: whatever
                        # the ops closed that way complain about follows from the cut.
                        if not at_eof and not _follows_error(ctx.diagnostics, start, stop):
                            ctx.diagnostics.append(e.diagnostic)
                        quiet = True
                        value = None
                    except Exception as e:  # a bug in a callback: report it, never crash the parse
                        # ...unless a part of this rule already failed: the callback got None for
                        # it and tripped over that; the error that matters is reported.
                        if not at_eof and not _follows_error(ctx.diagnostics, start, stop):
                            ctx.report(f"internal error while building '{origin}': {type(e).__name__}: {e}",
                                       start, max(stop, start + 1))
                        quiet = True
                        value = None
                    if size:
                        vstack[-1] = value
                        sstack[-1] = goto = states[sstack[-2]][origin]
                    else:
                        goto = states[sstack[-1]][origin]
                        sstack.append(goto)
                        vstack.append(value)
                        starts.append(start)
                        ends.append(stop)
                if goto == end_state and ttype == "$END":
                    return vstack[-1]
                try:
                    actions = states[goto]
                except KeyError:
                    actions = states[goto] = all_states[goto]
            if act is not None:
                continue
            # Syntax error at `tok`.
            if tok.type == "$END":
                if not quiet and not at_eof:
                    ctx.report(self._message(actions, tok), tok.start, tok.end)
                at_eof = quiet = True
                virtual = self._close_at_eof(ctx, sstack, vstack, starts, ends, end)
                if virtual is None:
                    return None
                actions = self._row(sstack[-1])
                continue
            if not quiet:
                ctx.report(message or self._message(actions, tok), tok.start, max(tok.end, tok.start + 1))
            if self._too_many(ctx, tok.start):
                return None
            quiet = True
            pos = self._recover(ctx, lexer, sstack, vstack, starts, ends, tok.start, end, False)
            actions = self._row(sstack[-1])

    # -- error recovery ---------------------------------------------------------
    def _too_many(self, ctx, pos: int) -> bool:
        if len(ctx.diagnostics) < self.max_errors:
            return False
        ctx.report("too many errors; giving up", pos, pos + 1)
        return True

    def _truncate(self, ctx, sstack, vstack, starts, ends) -> bool:
        """Drop the half-parsed op on top of the stack; True if anything was dropped."""
        i = len(sstack) - 1
        op_states = self.op_states
        while sstack[i] not in op_states:
            i -= 1
        dropped = vstack[i:]
        del sstack[i + 1:]
        del vstack[i:]
        del starts[i:]
        del ends[i:]
        ctx.discard(dropped)
        return bool(dropped)

    def _recover(self, ctx, lexer, sstack, vstack, starts, ends, error_pos, end, lex_error) -> int:
        """Resume at the next line start (or closing brace) the parser can take."""
        dropped = self._truncate(ctx, sstack, vstack, starts, ends)
        actions = self.states[sstack[-1]]
        text = lexer.text
        line_start = text.rfind("\n", 0, error_pos) + 1
        first_on_line = not text[line_start:error_pos].strip()
        if first_on_line and dropped and not lex_error and self._accepts(lexer, actions, error_pos):
            return error_pos
        depth = 0
        pos = error_pos
        closes = self.literals.get("}") in actions
        while pos < end:
            m = _BRACE_SCAN.search(text, pos, end)
            if m is None:
                return end
            pos = m.end()
            ch = m.group()
            if ch[0] == "{":
                depth += len(ch)
            elif ch[0] == "}":
                if closes and depth < len(ch):  # this run holds the '}' that closes our region
                    return m.start() + depth
                depth = max(depth - len(ch), 0)
            elif ch == "\n" and depth == 0:
                nxt = lexer.skip(pos)
                if nxt < end and self._accepts(lexer, actions, nxt):
                    return nxt
        return end

    @staticmethod
    def _accepts(lexer, actions, pos) -> bool:
        try:
            return lexer.token(pos, actions).type in actions
        except LexError:
            return False

    def _close_at_eof(self, ctx, sstack, vstack, starts, ends, end):
        """At end of input inside a region: drop the partial op; a '}' to close the region."""
        self._truncate(ctx, sstack, vstack, starts, ends)
        rbrace = self.literals.get("}")
        if rbrace in self.states[sstack[-1]]:
            return Tok(rbrace, "}", end, end)
        return None

    def _message(self, actions, tok: Tok) -> str:
        expected = sorted({self._describe(s) for s in actions
                           if (s.isupper() and s not in _SHORTHANDS) or s == "$END"})
        found = "end of input" if tok.type == "$END" else f"'{_clip(tok.value)}'"
        if len(expected) == 1:
            return f"expected {expected[0]}, found {found}"
        if len(expected) <= 6:
            return f"unexpected {found}; expected one of {', '.join(expected)}"
        return f"unexpected {found}"

    def _describe(self, terminal: str) -> str:
        return self.display.get(terminal) or TERMINAL_NAMES.get(terminal, terminal)


def _follows_error(diagnostics, start: int, stop: int) -> bool:
    """True when the last error lies inside [start, stop): a rule whose part already
    failed (a bad `dense<...>` in `arith.constant`) would only report the consequence."""
    # The last error is enough: this rule's parts were the last things parsed. For an
    # op with a region, an error in its body also silences the op's own complaint;
    # that loses little (MLIR itself stops at the first error).
    if not diagnostics:
        return False
    last = diagnostics[-1]
    return last.severity == "error" and last.span is not None and start <= last.span.start < stop


def _nesting(vstack) -> int:
    """Open brackets on the stack above the innermost region: the current op's nesting."""
    count = 0
    for value in reversed(vstack):
        if type(value) is Tok:
            if value.value in _OPENERS:
                count += 1
        elif type(value) is Scope:
            break
    return count


def _clip(text: str, width: int = 24) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[:width] + "..."
