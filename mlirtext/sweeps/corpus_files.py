"""The runnable test files of the shared corpus (`../shared/corpus/` beside a checkout, or
`--corpus DIR`): the groups the figures are about, and which files a corpus suite takes."""
from __future__ import annotations

import fnmatch
import os
from functools import lru_cache

#: The groups the figures are about: (name, glob relative to the corpus).
GROUPS = (
    ("stablehlo interpret", "stablehlo/stablehlo__tests__interpret__*.mlir"),
    ("stablehlo testdata", "stablehlo/stablehlo__testdata__*.mlir"),
    ("iree e2e", "iree/tests__e2e__*"),
)


def group_of(rel: str) -> str:
    for name, pattern in GROUPS:
        if fnmatch.fnmatch(rel, pattern):
            return name
    return "other"


def corpus_files(root: str, globs=None) -> list[str]:
    """Corpus files (paths relative to `root`) in the groups, or matching any of `globs`."""
    if not os.path.isfile(os.path.join(root, "CASES.tsv")):
        return []
    everything = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, files in os.walk(root)
                        for f in files if f.endswith(".mlir"))
    patterns = list(globs) if globs else [p for _, p in GROUPS]
    return [f for f in everything if any(fnmatch.fnmatch(f, p) for p in patterns)]


def suite_files(options) -> list[str]:
    """A corpus suite's tests: its files (those matching `options.files`, globs relative to the corpus,
    where given), or a one-line error when there is no corpus or no file matches."""
    if not corpus_files(options.path):
        raise ValueError(f"no corpus at '{options.path}' (give --corpus DIR or MLIRTEXT_CORPUS)")
    files = corpus_files(options.path, options.files or None)
    if not files:
        raise ValueError(f"no corpus file matches --files {' '.join(options.files)}")
    return files


@lru_cache(maxsize=8)
def file_text(root: str, rel: str) -> str:
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def needs_split(text: str) -> bool:
    return any(line.strip() == "// -----" for line in text.splitlines())


def unique_names(names: list[str]) -> list[str]:
    """Names made unique: a split file may define one function name in several chunks (`f`, `f#2`)."""
    seen: dict = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out
