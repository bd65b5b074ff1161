"""The comments of MLIR text (`//` to the end of the line, outside string literals) and its
skeleton: the same text with every comment and every string's contents blanked, so that the
formatter can look for brackets with plain string searches and never find one inside either."""
from __future__ import annotations

import re
from dataclasses import dataclass

#: A string literal (MLIR strings do not continue past a line's end) or a comment.
_STRING_OR_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"?|//[^\n]*')


@dataclass(frozen=True)
class Comment:
    start: int       # offset of its `//` in the whole text
    end: int         # offset just after its last character (the newline not included)
    text: str        # `// ...` with trailing blanks removed
    own_line: bool   # nothing but blanks before it on its line


def scan(text: str) -> tuple[list[Comment], str]:
    """(the comments of `text` in order, its skeleton: as long as `text`, newlines kept)."""
    comments: list[Comment] = []
    pieces: list[str] = []
    pos = 0
    for m in _STRING_OR_COMMENT.finditer(text):
        start, end = m.span()
        pieces.append(text[pos:start])
        if text.startswith("//", start):
            line_start = text.rfind("\n", 0, start) + 1
            comments.append(Comment(start, end, text[start:end].rstrip(),
                                    not text[line_start:start].strip()))
            pieces.append(" " * (end - start))
        else:   # the quotes stay: `"..."` is still a token where it was
            pieces.append('"' + " " * (end - start - 2) + '"' if end - start >= 2 else '"')
        pos = end
    pieces.append(text[pos:])
    return comments, "".join(pieces)
