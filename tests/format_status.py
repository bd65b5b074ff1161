"""The formatter over the corpus: every `// -----` chunk of every corpus file that parses is
formatted alone, and must read back to the same IR (the formatter's structural comparison:
ops, operands, attributes, regions, locations), format to itself a second time, and keep every
comment, in order. An op whose formatted form would not read back is kept as written (with a
warning): those are counted, not failures.

    PYTHONPATH=. python -m tests.format_status [--files GLOB] [--every N] [-v]      (make format-status)

tests/test_format.py runs every second file (`--every 2`): the whole corpus takes 1-3.5 min on
the shared 2-core machine, 15-25 s of CPU.
"""
from __future__ import annotations

import argparse
import fnmatch
import time
from collections import Counter
from dataclasses import dataclass, field

from mlirtext.syntax.comments import scan
from mlirtext.syntax.formatter import format_text, same_ir
from mlirtext.syntax.parser import parse, split_input

from . import corpus


@dataclass
class Counts:
    files: int = 0
    chunks: Counter = field(default_factory=Counter)   # "formatted", "unparsed", "kept whole"
    kept_ops: int = 0
    failures: list = field(default_factory=list)       # (file, chunk line, what went wrong)


def corpus_files(pattern: str = "*", every: int = 1) -> list[str]:
    """The corpus's .mlir files matching `pattern`, sorted; every `every`-th of them."""
    return sorted(str(p.relative_to(corpus.CORPUS)) for p in corpus.CORPUS.rglob("*.mlir")
                  if fnmatch.fnmatch(str(p.relative_to(corpus.CORPUS)), pattern))[::every]


def check_file(name: str, counts: Counts) -> None:
    text = corpus.file_text(name)
    counts.files += 1
    for s, e in split_input(text):
        chunk = text[s:e]
        line = text.count("\n", 0, s) + 1
        original = parse(chunk, name)
        if not original.ok:
            counts.chunks["unparsed"] += 1
            continue
        formatted = format_text(chunk, name)
        kept = [d for d in formatted.diagnostics if d.severity == "warning"]
        whole = any(d.message.startswith("this chunk") for d in kept)
        counts.chunks["kept whole" if whole else "formatted"] += 1
        counts.kept_ops += 0 if whole else len(kept)
        problem = _problem(chunk, formatted.text, original, name, bool(kept))
        if problem:
            counts.failures.append((name, line, problem))


def _problem(chunk: str, out: str, original, name: str, kept: bool) -> str:
    again = parse(out, name)
    if not again.ok:
        return "the formatted text does not parse: " + again.diagnostics[0].format().split("\n")[0]
    if not same_ir(original, again):
        return "the formatted text reads back to another IR"
    # (the second time without the formatter's own check, which is the same_ir above, unless it
    # kept ops as written: it must keep them again)
    if format_text(out, name, check=kept).text != out:
        return "formatting it again changes it"
    if [c.text for c in scan(chunk)[0]] != [c.text for c in scan(out)[0]]:
        return "its comments are not all kept, in order"
    return ""


def run(files: list[str]) -> Counts:
    counts = Counts()
    for name in files:
        check_file(name, counts)
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", default="*", help="a glob over the corpus's file names (default: all)")
    ap.add_argument("--every", type=int, default=1, metavar="N", help="only every N-th file (default 1: all)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list each failure")
    args = ap.parse_args()
    started = time.perf_counter()
    counts = run(corpus_files(args.files, args.every))
    chunks = counts.chunks
    parsed = chunks["formatted"] + chunks["kept whole"]
    print(f"{counts.files} files, {parsed + chunks['unparsed']} chunks; {parsed} parse alone and were formatted: "
          f"{parsed - len(counts.failures)} read back to the same IR, format to themselves and keep every "
          f"comment; {chunks['kept whole']} kept whole as written, {counts.kept_ops} ops kept as written "
          f"({time.perf_counter() - started:.0f} s)")
    for name, line, problem in counts.failures if args.verbose else []:
        print(f"  {name}:{line}: {problem}")
    return 1 if counts.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
