"""MLIR's Linalg CPU integration programs (llvm-project/mlir/test/Integration/Dialect/Linalg/CPU)
run on the interpreter and print what their CHECK lines expect.

Each program's `// RUN:` line names the entry (`-e main`); the runner-utils calls
(printMemrefF32, ...) print in MLIR's format. A tiny FileCheck checks the output:
CHECK, CHECK-NEXT, CHECK-SAME, CHECK-LABEL, CHECK-NOT, `{{regex}}`, whitespace-insensitive.
"""
from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "llvm-project"
PROGRAMS = sorted(CORPUS.glob("mlir__test__Integration__Dialect__Linalg__CPU__*.mlir"))


# ---- a small FileCheck ----------------------------------------------------------------------------
_DIRECTIVE = re.compile(r"//\s*CHECK(-NEXT|-SAME|-LABEL|-NOT|-EMPTY)?:(.*)$")


def _pattern(text: str) -> re.Pattern:
    """A CHECK pattern as a regex: literal text, `{{regex}}` parts, any run of spaces matches any."""
    parts, pos = [], 0
    text = text.strip()
    for m in re.finditer(r"\{\{(.*?)\}\}", text):
        parts.append(_literal(text[pos:m.start()]))
        parts.append(f"(?:{m.group(1)})")
        pos = m.end()
    parts.append(_literal(text[pos:]))
    return re.compile("".join(parts))


def _literal(s: str) -> str:
    return r"[ \t]+".join(re.escape(w) for w in re.split(r"[ \t]+", s)) if s.strip() else \
        (r"[ \t]*" if s else "")


def checks_of(source: str) -> list[tuple[str, str]]:
    out = []
    for line in source.splitlines():
        m = _DIRECTIVE.search(line)
        if m:
            out.append(((m.group(1) or "").lstrip("-") or "CHECK", m.group(2)))
    return out


def filecheck(output: str, checks: list[tuple[str, str]]) -> None:
    """Raise AssertionError naming the first CHECK line that does not match `output`."""
    lines = output.splitlines()
    line, col = 0, 0          # where the next match may start
    last_line = -1            # line of the previous match
    pending_not: list = []
    for kind, text in checks:
        pat = _pattern(text)
        if kind == "NOT":
            pending_not.append((text, pat))
            continue
        if kind == "SAME":
            m = pat.search(lines[last_line], col) if 0 <= last_line < len(lines) else None
            if m is None:
                raise AssertionError(f"CHECK-SAME: {text.strip()!r} not on line {last_line + 1}: "
                                     f"{lines[last_line] if 0 <= last_line < len(lines) else ''!r}")
            col = m.end()
            continue
        if kind == "NEXT":
            target = last_line + 1
            m = pat.search(lines[target]) if target < len(lines) else None
            if m is None:
                raise AssertionError(f"CHECK-NEXT: {text.strip()!r} not on line {target + 1}: "
                                     f"{lines[target] if target < len(lines) else '<end>'!r}")
            found = (target, m)
        elif kind == "EMPTY":
            target = last_line + 1
            if target >= len(lines) or lines[target].strip():
                raise AssertionError(f"CHECK-EMPTY: line {target + 1} is not empty")
            last_line, col = target, 0
            continue
        else:  # CHECK, CHECK-LABEL
            found = None
            for i in range(max(line, 0), len(lines)):
                m = pat.search(lines[i], col if i == last_line else 0)
                if m:
                    found = (i, m)
                    break
            if found is None:
                raise AssertionError(f"CHECK: {text.strip()!r} not found after line {max(last_line, 0) + 1}")
        i, m = found
        for not_text, not_pat in pending_not:
            region = "\n".join(lines[max(last_line, 0):i + 1])
            if not_pat.search(region):
                raise AssertionError(f"CHECK-NOT: {not_text.strip()!r} found")
        pending_not = []
        last_line, line, col = i, i, m.end()
    for not_text, not_pat in pending_not:
        if not_pat.search("\n".join(lines[max(last_line, 0):])):
            raise AssertionError(f"CHECK-NOT: {not_text.strip()!r} found")


# ---- running the programs ------------------------------------------------------------------------
def entry_of(source: str) -> str:
    m = re.search(r"-e\s+(\w+)", source)
    return m.group(1) if m else "main"


def erase_transform_schedule(source: str) -> str:
    """What `-test-transform-dialect-erase-schedule` does: drop the transform-dialect module
    (its ops are a compiler schedule, not part of the program)."""
    out, skip, depth = [], False, 0
    for line in source.splitlines():
        if not skip and re.match(r"\s*module attributes \{transform\.with_named_sequence\}", line):
            skip, depth = True, 0
        if skip:
            depth += line.count("{") - line.count("}")
            if depth <= 0 and "}" in line:
                skip = False
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def run_program(path: Path) -> str:
    source = erase_transform_schedule(path.read_text())
    result = parse_and_verify(source, str(path))
    assert result.ok, [d.format() for d in result.diagnostics]
    interp = Interpreter(result.module)
    interp.stdout = io.StringIO()
    interp.call(entry_of(source), [])
    return interp.stdout.getvalue()


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name.split("CPU__")[-1])
def test_integration_program(path):
    output = run_program(path)
    filecheck(output, checks_of(path.read_text()))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the corpus is not next to the project")
def test_programs_exist():
    assert len(PROGRAMS) >= 4


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the corpus is not next to the project")
def test_mlirtext_run_prints_runtime_output(tmp_path):
    path = next(p for p in PROGRAMS if "matmul-vs-matvec" in p.name)
    proc = subprocess.run([sys.executable, "-m", "mlirtext", "run", str(path), "--function", "main"],
                          capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], timeout=300)
    assert proc.returncode == 0, proc.stderr
    filecheck(proc.stdout, checks_of(path.read_text()))


def test_filecheck_matcher_rejects():
    out = "Unranked Memref base@ = 0x1 rank = 1 offset = 0 sizes = [3] strides = [1] data = \n[11,  22,  33]\n"
    filecheck(out, [("CHECK", "rank = 1 {{.*}} sizes = [3]"), ("NEXT", "[11, 22, 33]")])
    with pytest.raises(AssertionError):
        filecheck(out, [("CHECK", "rank = 1"), ("NEXT", "[11, 22, 34]")])
    with pytest.raises(AssertionError):
        filecheck(out, [("CHECK", "rank = 2")])
    with pytest.raises(AssertionError):
        filecheck(out, [("NOT", "22"), ("CHECK", "33")])
    filecheck(out, [("CHECK", "sizes"), ("SAME", "strides = [1]"), ("NEXT", "{{\\[}}11")])
