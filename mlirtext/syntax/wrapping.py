"""Long printed lines wrapped at a width: an attribute dictionary, an operand list or another
bracketed list that opens and closes on the line is broken one entry a line.

    %0 = "foo.op"(%a, %b) {
        first = 1 : i32,
        second = "x"
      } : (i32, i32) -> i32

MLIR reads a newline as a blank, so a wrapped line means what the long one did. Nothing inside
`<...>` (types, `dense<...>`, `array<...>`) or a string is broken: a long literal stays whole. The
result depends on the line alone, so wrapping the print of a wrapped op gives the same lines.
"""
from __future__ import annotations

import re

#: What the wrapper looks at in a line: string literals (skipped whole), `->` (not a bracket),
#: ` : ` (operands from their types), brackets and commas.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|->| : |[()\[\]{}<>,]')
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_CLOSER = {")": "(", "]": "[", "}": "{", ">": "<"}
#: The width `mlirtext format` and the editor wrap at, unless told another.
DEFAULT_WIDTH = 100
#: Entries go this much deeper than the line, the closing bracket half as much.
CONTINUATION = 4


def wrap_text(text: str, width: int) -> str:
    """Every line of `text` longer than `width` wrapped (comment lines are left as they are)."""
    lines = text.split("\n")
    if all(len(line) <= width for line in lines):
        return text
    out: list[str] = []
    for line in lines:
        if len(line) <= width or line.lstrip().startswith("//"):
            out.append(line)
        else:
            out.extend(wrap_line(line, width))
    return "\n".join(out)


def wrap_line(line: str, width: int) -> list[str]:
    """`line` as lines no longer than `width` where its brackets allow (a trailing `// ...`
    comment stays at the end of the last one)."""
    code, comment = _split_comment(line)
    lines = _wrap_code(code.rstrip(), width)
    if comment:
        lines[-1] += "  " + comment
    return lines


def _split_comment(line: str) -> tuple[str, str]:
    pos = 0
    while True:
        slash = line.find("//", pos)
        if slash < 0:
            return line, ""
        quote = line.find('"', pos, slash)
        if quote < 0:
            return line[:slash].rstrip(), line[slash:]
        m = _STRING.match(line, quote)
        if m is None:   # an unterminated string runs to the end
            return line, ""
        pos = m.end()


def _wrap_code(code: str, width: int) -> list[str]:
    if len(code) <= width:
        return [code]
    indent = code[:len(code) - len(code.lstrip())]
    inner = indent + " " * CONTINUATION
    group = _group_to_break(code, width - len(inner))
    if group is None:
        return [code]
    open_at, close_at, commas = group
    entries, start = [], open_at + 1
    for comma in commas + [close_at]:
        entries.append(code[start:comma].strip())
        start = comma + 1
    lines = _wrap_code(code[:open_at + 1].rstrip(), width)
    for i, entry in enumerate(entries):
        lines.extend(_wrap_code(inner + entry + ("," if i < len(entries) - 1 else ""), width))
    lines.extend(_wrap_code(indent + " " * (CONTINUATION // 2) + code[close_at:], width))
    return lines


def _group_to_break(code: str, room: int):
    """(open, close, the offsets of its own commas) of the longest `(...)`, `[...]` or `{...}`
    of the line with at least two entries, none longer than `room` (a group around one long
    literal is left alone), inside no other such group nor in `<...>`, and no `(%a, %b : t1, t2)`
    (its commas separate operands and then types: one a line would mix them); None when there is none,
    or when breaking it would leave the line too long and it is under a third of the line."""
    stack: list[list] = []    # [bracket, offset, commas, whether a ` : ` is directly inside]
    best = None
    for m in _TOKEN.finditer(code):
        tok = m.group()
        if tok[0] == '"' or tok == "->":
            continue
        if tok == " : ":
            if stack:
                stack[-1][3] = True
            continue
        if tok in "([{<":
            stack.append([tok, m.start(), [], False])
        elif tok == ",":
            if stack:
                stack[-1][2].append(m.start())
        elif stack and stack[-1][0] == _CLOSER[tok]:
            bracket, start, commas, typed = stack.pop()
            if bracket == "<" or not commas or (bracket == "(" and typed) or any(b[0] in "([{<" for b in stack) \
                    or (best is not None and m.start() - start <= best[1] - best[0]):
                continue
            bounds = [start, *commas, m.start()]
            if all(len(code[a + 1:b].strip()) + 1 <= room for a, b in zip(bounds, bounds[1:])):   # (its comma)
                best = (start, m.start(), commas)
        # a closer without its opener on this line (a region's `}`) is not a group
    if best is None:
        return None
    length = best[1] - best[0]
    return best if len(code) - length <= room + CONTINUATION or 3 * length >= len(code) else None
