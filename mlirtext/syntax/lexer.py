"""MLIR tokens, lexed in lockstep with the LALR parser.

MLIR's lexer is almost context free; the two places where it is not are
handled here by asking the parser which terminals it can take next:

* a bare word (`ins`, `tensor`, `arith.addi`) becomes the grammar's keyword
  terminal only where the parser accepts that keyword, else `BARE_ID`;
* a shape prefix (`4x?x` in `tensor<4x?xf32>`) is lexed as `DIMS` only where the
  parser accepts a shape, so `0xf32` is a hex integer anywhere else.

One more contextual token is there for speed: where the parser takes a type, a
plain shaped type (`tensor<4x?xf32>`, `memref<8xi32>`, `vector<4xf32>`: dims and
a scalar element, nothing else) is one `SHAPED_TYPE` token instead of five. It
means, and reports errors, exactly as the spelled-out tokens do.

Constructs with free-form bodies (`dense<...>`, `affine_map<...>`,
`#dialect<...>`, `!dialect.type<...>`, `loc(...)`, `{-# ... #-}`) are taken as
one token by bracket matching; their bodies are parsed by the code that gives
them meaning.
"""
from __future__ import annotations

import re

from ..ir.types import scalar_type_from_name

#: Whitespace and comments; always matches (maybe empty) so callers need no None check.
SKIP = re.compile(r"(?:\s+|//[^\n]*)*")
#: The characters SKIP can start with: where the next one is not among them, SKIP would
#: match nothing. (`\s` is `str.isspace()`, whose characters all lie below U+3001.)
SKIP_START = frozenset(c for c in map(chr, range(0x3001)) if c.isspace()) | {"/"}
_TOKEN = re.compile(r"""
    (?P<VALUE_ID>%[A-Za-z0-9_$.\-]+(?:\#[0-9]+)?)
  | (?P<SYMBOL>@(?:[A-Za-z_$.\-][\w$.\-]*|"(?:[^"\\\n]|\\.)*"))
  | (?P<CARET_ID>\^[\w$.\-]+)
  | (?P<HASH_ID>\#[A-Za-z_][\w$.\-]*)
  | (?P<BANG_ID>![A-Za-z_][\w$.\-]*)
  | (?P<FLOAT>[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?)
  | (?P<INTEGER>0x[0-9a-fA-F]+|[0-9]+)
  | (?P<STRING>"[^"\\\n]*(?:\\.[^"\\\n]*)*")
  | (?P<BARE>[A-Za-z_][\w$.]*)
  | (?P<PUNCT>->|::|\{-\#|\.\.\.|[(){}\[\]<>,=:?*+\-|])
""", re.X)
VALUE_ID = _VALUE_ID = re.compile(r"%[A-Za-z0-9_$.\-]+(?:\#[0-9]+)?")
BARE = _BARE = re.compile(r"[A-Za-z_][\w$.]*")
#: Punctuation that is always one character (others may start `->`, `::`, `{-#`).
_SINGLE = frozenset("()}[]<>,=?*+|")
_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
#: Characters that start only a one- or two-character punctuation token (the second form).
PAIRS = _PAIRS = {":": "::", "-": "->"}
#: What a shape prefix (`_DIMS`) can start with.
_DIMS_START = frozenset("0123456789?[*")
_DIMS = re.compile(r"\*x|(?:(?:[0-9]+|\?|\[[0-9]+\])[ \t]*x(?![\w$.])[ \t]*|(?:[0-9]+|\?|\[[0-9]+\])x)+")
#: `tensor<4x?xf32>`, `memref<8xi32>`, `vector<4xf32>`: dims and a scalar element, no
#: spaces, no encoding or layout. Where the parser takes a type this is one SHAPED_TYPE token
#: instead of five: shaped types are near half the tokens of typical MLIR.
_SHAPED_WORDS = frozenset(("tensor", "memref", "vector"))
_SHAPED_TYPE = re.compile(r"(?:tensor|memref|vector)<(?:(?:[0-9]+|\?)x)*([A-Za-z_][\w$.]*)>")
# (strings as "unrolled loops", `"[^"\\]*(?:\\.[^"\\]*)*"`: the alternation `(?:[^"\\]|\\.)*` steps the
# regex engine once per character, 40 times slower on a weight's multi-megabyte hex string)
_BRACKETS = re.compile(r'->|"[^"\\]*(?:\\.[^"\\]*)*"|[<>()\[\]{}]')
_CLOSE = {">": "<", ")": "(", "]": "[", "}": "{"}

#: Words followed by `<` (or `(`) whose whole bracketed body is one token.
RAW_WORDS = {
    "dense": "DENSE", "affine_map": "RAW_ATTR", "affine_set": "RAW_ATTR", "strided": "RAW_ATTR",
    "sparse": "RAW_ATTR", "opaque": "RAW_ATTR", "distinct": "RAW_ATTR", "loc": "LOC",
}


#: The kinds of token the LALR driver lexes itself, without calling `Lexer.token`, by first
#: character, which saves a call per token. Each is taken exactly as `token` takes it
#: (the tests check they agree); anything else, and a word in LONG_WORDS, takes the long way.
SINGLE, PAIR, VALUE, WORD = "single", "pair", "value", "word"
FAST = {**{c: SINGLE for c in _SINGLE - _DIMS_START},  # `?`, `[`, `*` may start a shape
        **{c: PAIR for c in _PAIRS}, "%": VALUE, **{c: WORD for c in _WORD_START}}
#: Words whose token is more than the word: `dense<...>`, `loc(...)`, `tensor<4xf32>`.
LONG_WORDS = frozenset(RAW_WORDS) | _SHAPED_WORDS


class Tok:
    """A token: terminal name, text and offsets (lighter than lark.Token)."""

    __slots__ = ("type", "value", "start", "end")

    def __init__(self, type: str, value: str, start: int, end: int):
        self.type = type
        self.value = value
        self.start = start
        self.end = end

    def __repr__(self) -> str:
        return f"Tok({self.type}, {self.value!r})"


class LexError(Exception):
    def __init__(self, message: str, pos: int, end: int | None = None):
        super().__init__(message)
        self.pos = pos
        self.end = end if end is not None else pos + 1


def match_brackets(text: str, pos: int, stop: int | None = None, memo: dict | None = None) -> int:
    """End offset of the balanced bracket group opening at `text[pos]`.

    With `memo`, a failed scan records the outcome for every opener it passed,
    and later calls at those openers answer from it. Without that, each line of
    a file full of unclosed `loc(` rescans to the end of the file after error
    recovery: quadratic time.
    """
    stop = len(text) if stop is None else stop
    if memo is not None:
        known = memo.get(pos)
        if known is not None:
            if isinstance(known, int):
                return known
            raise LexError(*known)
    try:
        return _scan_brackets(text, pos, stop)
    except LexError:
        if memo is not None:
            _record_brackets(text, pos, stop, memo)
        raise


def _scan_brackets(text: str, pos: int, stop: int) -> int:
    stack = []
    for m in _BRACKETS.finditer(text, pos, stop):
        tok = m.group()
        if tok == "->" or tok[0] == '"':
            continue
        if tok in "<([{":
            stack.append(tok)
            continue
        if not stack or stack[-1] != _CLOSE[tok]:
            raise LexError(f"unbalanced '{tok}' in bracketed body", m.start())
        stack.pop()
        if not stack:
            return m.end()
    raise LexError(_UNTERMINATED, pos, stop)


_UNTERMINATED = "unterminated bracketed body (no matching close bracket)"


def _record_brackets(text: str, pos: int, stop: int, memo: dict) -> None:
    """Rescan a failed body, storing each opener's end offset or LexError arguments.

    A scan started at any opener passed here sees the same tokens from there
    on (the opener is a token boundary of this scan), so it closes where this
    scan popped that opener, or fails exactly as this scan did.
    """
    stack = []   # (bracket, offset)
    for m in _BRACKETS.finditer(text, pos, stop):
        tok = m.group()
        if tok == "->" or tok[0] == '"':
            continue
        if tok in "<([{":
            stack.append((tok, m.start()))
            continue
        if not stack or stack[-1][0] != _CLOSE[tok]:
            for _, start in stack:
                memo[start] = (f"unbalanced '{tok}' in bracketed body", m.start())
            return
        memo[stack.pop()[1]] = m.end()
        if not stack:  # cannot happen for a failed scan; be safe
            return
    for _, start in stack:
        memo[start] = (_UNTERMINATED, start, stop)


def _metadata_close(text: str, pos: int, stop: int) -> int:
    """Where the first `#-}` in `text[pos:stop]` starts, or -1: a search for each `#` (memchr), which
    jumps the megabytes of a weight's hex blob at once where a search for the three characters steps
    through them (a tenth of a second on a ViT's 125 MB)."""
    while True:
        pos = text.find("#", pos, stop)
        if pos == -1 or text.startswith("#-}", pos, stop):
            return pos
        pos += 1


def _dense_end(text: str, pos: int, stop: int, memo: dict | None = None) -> int:
    """Fast path for `dense<...>`: bodies hold no angle brackets outside strings. A hex body,
    `dense<"0x...">` (an ONNX model's weights, megabytes each), ends at its closing quote: found by
    a search, not by the bracket scanner's regex stepping through every digit."""
    if text.startswith('"', pos + 1, stop):
        quote = text.find('"', pos + 2, stop)
        if quote != -1 and text.find("\\", pos + 2, quote) == -1:
            close = quote + 1
            while close < stop and text[close] in " \t\r\n":
                close += 1
            if close < stop and text[close] == ">":
                return close + 1
    close = text.find(">", pos, stop)
    limit = close if close != -1 else stop
    if close != -1 and text.find('"', pos, limit) == -1 and text.find("<", pos + 1, limit) == -1:
        return close + 1
    return match_brackets(text, pos, stop, memo)


class Lexer:
    """Produces the token at a position, given the parser's current actions."""

    def __init__(self, text: str, literals: dict[str, str], end: int | None = None):
        self.text = text
        self.end = len(text) if end is None else end
        self.literals = literals   # keyword / punctuation text -> terminal name
        self.brackets: dict = {}   # opener offset -> outcome, from failed bracket scans
        self.no_metadata_close = None  # an offset after which no `#-}` follows

    def skip(self, pos: int) -> int:
        return SKIP.match(self.text, pos, self.end).end()

    def token(self, pos: int, accepts) -> "Tok":
        """The token starting at `pos` (after whitespace was skipped)."""
        text = self.text
        stop = self.end
        first = text[pos]
        if first in _DIMS_START and "DIMS" in accepts:
            m = _DIMS.match(text, pos, stop)
            if m:
                return Tok("DIMS", m.group(), pos, m.end())
        # Fast paths for the most frequent tokens, by first character.
        if first == "%":
            m = _VALUE_ID.match(text, pos, stop)
            if m is not None:
                return Tok("VALUE_ID", m.group(), pos, m.end())
        elif first in _SINGLE:
            return Tok(self.literals.get(first, "UNKNOWN"), first, pos, pos + 1)
        elif first in _WORD_START:
            m = _BARE.match(text, pos, stop)
            value = m.group()
            if value not in RAW_WORDS:
                if value in _SHAPED_WORDS and "SHAPED_TYPE" in accepts:
                    shaped = _SHAPED_TYPE.match(text, pos, stop)
                    # Anything but a scalar element (`tensor<4xf3>`) takes the long way, which
                    # reports it where and when it always has.
                    if shaped is not None and scalar_type_from_name(shaped.group(1)) is not None:
                        return Tok("SHAPED_TYPE", shaped.group(), pos, shaped.end())
                kw = self.literals.get(value)
                return Tok(kw if kw is not None and kw in accepts else "BARE_ID", value, pos, m.end())
        elif first in _PAIRS:  # `:` or `::`, `-` or `->`: nothing else starts with these
            value = _PAIRS[first]
            if not text.startswith(value, pos, stop):
                value = first
            return Tok(self.literals.get(value, "UNKNOWN"), value, pos, pos + len(value))
        m = _TOKEN.match(text, pos, stop)
        if m is None:
            ch = text[pos]
            if ch == '"':
                newline = text.find("\n", pos, stop)
                raise LexError("unterminated string literal", pos, newline if newline != -1 else stop)
            if ch == "\ufffd":   # what an editor shows for a byte that is not UTF-8
                raise LexError("unexpected U+FFFD replacement character (a byte that was not UTF-8 text where the "
                               "file was read, or one pasted in)", pos)
            raise LexError(f"unexpected character {ch!r}", pos)
        kind = m.lastgroup
        value = m.group()
        end = m.end()
        if kind == "BARE":
            raw = RAW_WORDS.get(value)
            if raw is not None and end < stop and text[end] == ("(" if raw == "LOC" else "<"):
                memo = self.brackets
                end = _dense_end(text, end, stop, memo) if raw == "DENSE" else match_brackets(text, end, stop, memo)
                return Tok(raw, text[pos:end], pos, end)
            if raw == "RAW_ATTR" and value == "distinct" and text.startswith("[", end):
                end = match_brackets(text, match_brackets(text, end, stop, self.brackets), stop, self.brackets)
                return Tok(raw, text[pos:end], pos, end)
            kw = self.literals.get(value)
            kind = kw if kw is not None and kw in accepts else "BARE_ID"
        elif kind == "PUNCT":
            if value == "{-#":
                # Remember a failed search: each unclosed `{-#` would search to the end again.
                seen = self.no_metadata_close
                close = -1 if seen is not None and seen <= end else _metadata_close(text, end, stop)
                if close == -1:
                    self.no_metadata_close = end if seen is None else min(seen, end)
                    raise LexError("unterminated '{-#' metadata block", pos, stop)
                end = close + 3
                return Tok("FILE_METADATA", text[pos:end], pos, end)
            kind = self.literals.get(value, "UNKNOWN")
        elif kind in ("HASH_ID", "BANG_ID") and end < stop and text[end] == "<":
            end = match_brackets(text, end, stop, self.brackets)
            kind = "DIALECT_ATTR" if kind == "HASH_ID" else "DIALECT_TYPE"
            value = text[pos:end]
        return Tok(kind, value, pos, end)
