"""The shared conformance corpus (`../shared/corpus/`): cases, their text and flags."""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = (ROOT.parent / "shared" / "corpus").resolve()

#: Dialects whose custom syntax the core issue covers.
CORE_DIALECTS = {"builtin", "func", "arith", "math", "tensor"}


@dataclass(frozen=True)
class Case:
    case_id: str
    file: str
    index: int
    first_line: int
    n_lines: int
    dialects: frozenset
    valid: bool
    iree_accepts: bool

    @property
    def text(self) -> str:
        lines = file_text(self.file).split("\n")
        return "\n".join(lines[self.first_line - 1:self.first_line - 1 + self.n_lines])


@lru_cache(maxsize=None)
def file_text(name: str) -> str:
    return (CORPUS / name).read_text()


@lru_cache(maxsize=None)
def cases() -> tuple[Case, ...]:
    with open(CORPUS / "CASES.tsv") as f:
        return tuple(
            Case(r["case_id"], r["file"], int(r["case_index"]), int(r["first_line"]), int(r["n_lines"]),
                 frozenset(d for d in r["dialects"].split(",") if d), r["valid_or_invalid"] == "valid",
                 r["iree_opt_accepts"] == "yes")
            for r in csv.DictReader(f, delimiter="\t"))


def only_generic_outside(case: Case, dialects: set) -> bool:
    """True when every op of a dialect outside `dialects` is written in generic form."""
    text = case.text
    for d in case.dialects - dialects:
        if re.search(r'(?<!["\w.#!])' + re.escape(d) + r"\.[a-z_]+", text):
            return False
    return True


def core_cases() -> list[Case]:
    """Valid cases iree-opt accepts that use the core dialects (others only in generic form)."""
    return [c for c in cases() if c.valid and c.iree_accepts and only_generic_outside(c, CORE_DIALECTS)]


def available() -> bool:
    return (CORPUS / "CASES.tsv").is_file()
