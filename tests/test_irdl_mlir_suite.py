"""MLIR's own IRDL tests (llvm-project `mlir/test/Dialect/IRDL/`), run by `iree-opt` (the
reference) and by mlirtext with the same flags, chunk by chunk (issue 25).

- Definition files (`*.irdl.mlir` read by `--irdl-file`): each loads in both or is refused in
  both at the same line, column and message. Three load in iree-opt 3.13; three use the unnamed
  `irdl.parameters(%0)` of a later MLIR, which 3.13 refuses ("expected valid keyword").
- Files that use them (`--irdl-file=X --split-input-file`): each chunk passes in both, or fails
  in both with its first error on the same line with the same message (ours has the `'op' op`
  prefix that MLIR's IRDL messages lack); and `--verify-diagnostics` passes in both.
- Files that test the IRDL dialect's own verifier: `iree-opt` does not parse irdl ops outside
  `--irdl-file`, so each chunk is loaded as an IRDL file by both and the first error compared.
  `attributes-op.irdl.mlir` and `variadics-error.irdl.mlir` are left out: they write
  `#irdl<variadicity_array[...]>` in a later MLIR's syntax, which iree-opt 3.13 refuses
  ("expected '<'"), as it refuses every one of their chunks.

The upstream files are read from the shared corpus (`../shared/corpus/llvm-project/`, named
`mlir__test__Dialect__IRDL__<file>` as its other upstream files are) or from the folder that
`MLIRTEXT_IRDL_SUITE` names; `tests/irdl/MLIR_SUITE.md` lists them with their commits.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mlirtext.irdl_dialects import load
from mlirtext.syntax.parser import split_input

from .corpus import CORPUS
from .oracle import iree_opt_path

ROOT = Path(__file__).resolve().parent.parent
SUITE = Path(os.environ.get("MLIRTEXT_IRDL_SUITE", CORPUS / "llvm-project"))
PREFIX = "mlir__test__Dialect__IRDL__"

#: definition file -> whether iree-opt 3.13 loads it
DEFINITIONS = {"cmath": True, "test-type": True, "variadics": True,
               "testd": False, "cyclic-types": False, "cpred": False}
#: (definition, file of uses) -> (valid chunks, invalid chunks)
USES = {("cmath", "test-cmath"): (1, 0), ("test-type", "test-type"): (1, 3), ("variadics", "variadics"): (8, 28)}
#: file testing the irdl dialect's verifier -> (chunks, chunks whose annotation iree-opt reproduces)
VERIFIER_FILES = {"invalid": (18, 18), "regions-ops": (5, 4)}
#: where the suite's annotation is a later MLIR's message, not iree-opt 3.13's (ours agrees with iree-opt)
LATER_MESSAGES = {("regions-ops", 2): "name of region #0 should not contain uppercase letters"}

pytestmark = pytest.mark.skipif(not (SUITE / f"{PREFIX}testd.irdl.mlir").is_file(),
                                reason=f"MLIR's IRDL tests are not in {SUITE} (see tests/irdl/MLIR_SUITE.md)")


def _path(name: str, irdl: bool = True) -> Path:
    return SUITE / f"{PREFIX}{name}{'.irdl' if irdl else ''}.mlir"


def _iree_opt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([iree_opt_path(), *args], capture_output=True, text=True, timeout=120)


def _mlirtext_opt(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mlirtext", "opt", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def _errors(stderr: str, path: Path) -> list[tuple[int, int, str]]:
    """(line, column, message) of each error reported in `path`, in order."""
    return [(int(m.group(1)), int(m.group(2)), m.group(3))
            for m in re.finditer(rf"^{re.escape(str(path))}:(\d+):(\d+): error: (.*)$", stderr, re.M)]


def _first(run: subprocess.CompletedProcess, path: Path):
    return (_errors(run.stderr, path) or [None])[0]


def _same(ours, theirs) -> bool:
    """The same outcome: both none, or one place and one message (MLIR's IRDL messages lack the
    `'op' op` prefix that ours, as MLIR's other verifiers do, carry)."""
    if ours is None or theirs is None:
        return ours is theirs
    return ours[:2] == theirs[:2] and (theirs[2] in ours[2] or ours[2] in theirs[2])


@pytest.fixture(scope="module")
def trivial(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("irdl-suite") / "trivial.mlir"
    path.write_text("func.func @f() {\n  return\n}\n")
    return path


def test_definition_files_load_or_are_refused_as_in_iree_opt(trivial):
    loaded = refused = 0
    for name, loads in DEFINITIONS.items():
        path = _path(name)
        flags = [f"--irdl-file={path}", str(trivial)]
        theirs, ours = _iree_opt(*flags), _mlirtext_opt(*flags)
        assert (theirs.returncode == 0) == loads, (name, theirs.stderr)
        assert ours.returncode == theirs.returncode and "Traceback" not in ours.stderr, (name, ours.stderr)
        assert _same(_first(ours, path), _first(theirs, path)), (name, _first(ours, path), _first(theirs, path))
        loaded, refused = loaded + loads, refused + (not loads)
    assert (loaded, refused) == (3, 3)


def _chunk_lines(text: str) -> list[tuple[int, int]]:
    """The first and last line of each `// -----` chunk, in the whole file's numbering."""
    return [(text[:s].count("\n") + 1, text[:e].count("\n") + 1) for s, e in split_input(text)]


def _first_error_per_chunk(errors, chunks) -> list:
    return [next((e for e in errors if first <= e[0] <= last), None) for first, last in chunks]


@pytest.mark.parametrize("definition, uses", list(USES), ids=[u for _, u in USES])
def test_each_chunk_of_the_uses_verifies_as_in_iree_opt(definition, uses):
    irdl, path = _path(definition), _path(uses, irdl=False)
    text = path.read_text()
    chunks = _chunk_lines(text)
    flags = [f"--irdl-file={irdl}", "--split-input-file"]
    theirs, ours = _iree_opt(*flags, str(path)), _mlirtext_opt(*flags, str(path))
    assert "Traceback" not in ours.stderr, ours.stderr
    their_first = _first_error_per_chunk(_errors(theirs.stderr, path), chunks)
    our_first = _first_error_per_chunk(_errors(ours.stderr, path), chunks)
    differ = [(i, o, t) for i, (o, t) in enumerate(zip(our_first, their_first)) if not _same(o, t)]
    assert differ == [], differ
    lines = text.split("\n")
    annotated = ["expected-error" in "\n".join(lines[first - 1:last]) for first, last in chunks]
    # every annotated chunk fails (in both), every other one passes
    assert [t is not None for t in their_first] == annotated
    assert (annotated.count(False), annotated.count(True)) == USES[(definition, uses)]
    for run in (_iree_opt(*flags, "--verify-diagnostics", str(path)),
                _mlirtext_opt(*flags, "--verify-diagnostics", str(path))):
        assert run.returncode == 0, run.stderr


def _annotation(chunk: str):
    """(line, message) of the chunk's expected-error (`@+1` or `@below`: the line after it)."""
    for i, line in enumerate(chunk.split("\n")):
        found = re.search(r"expected-error\s*(?:@\+1|@below)\s*\{\{(.*)\}\}", line)
        if found:
            return i + 2, found.group(1)
    return None


@pytest.mark.parametrize("name", list(VERIFIER_FILES))
def test_the_irdl_verifier_tests_fail_where_iree_opt_says(name, trivial, tmp_path):
    text = _path(name).read_text()
    reproduced, chunks = 0, split_input(text)
    for i, (s, e) in enumerate(chunks):
        chunk = "\n" * text[:s].count("\n") + text[s:e]  # the whole file's line numbers
        path = tmp_path / f"{name}-{i}.irdl.mlir"
        path.write_text(chunk)
        theirs = _first(_iree_opt(f"--irdl-file={path}", str(trivial)), path)
        _, problems = load(chunk, str(path))  # what `opt --irdl-file` runs
        errors = [d for d in problems if d.severity == "error"]
        ours = (*errors[0].span.line_col, errors[0].message) if errors else None
        assert _same(ours, theirs), (i, ours, theirs)
        line, message = _annotation(chunk)
        if theirs[0] == line and message in theirs[2]:
            reproduced += 1
        else:
            assert LATER_MESSAGES[(name, i)] in theirs[2], (i, theirs, message)
    assert (len(chunks), reproduced) == VERIFIER_FILES[name]
