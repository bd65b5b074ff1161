"""The real MLIR (`iree-opt` from iree-base-compiler) as an oracle for tests."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def iree_opt_path() -> str:
    """iree-opt next to this Python (a venv's bin/, not necessarily on PATH), else on PATH."""
    beside = Path(sys.executable).parent / "iree-opt"
    path = str(beside) if beside.is_file() else shutil.which("iree-opt")
    if path is None:
        pytest.fail("iree-opt not found: install the dev extra (pip install -e .[dev])")
    return path


def generic_forms(texts: list[str]) -> list[str] | None:
    """iree-opt's generic print of each text (one run for all), or None where it rejects one."""
    return _forms(texts, ["--mlir-print-op-generic"])


def custom_forms(texts: list[str]) -> list[str] | None:
    """iree-opt's own (custom, pretty) print of each text, or None where it rejects one."""
    return _forms(texts, [])


def _forms(texts: list[str], flags: list[str]) -> list[str] | None:
    joined = "\n// -----\n".join(texts)
    proc = subprocess.run(
        [iree_opt_path(), "--allow-unregistered-dialect", "--split-input-file", *flags, "-"],
        input=joined, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return None
    parts = proc.stdout.split("// -----\n")
    return parts if len(parts) == len(texts) else None


def generic_form(text: str) -> tuple[str | None, str]:
    proc = subprocess.run(
        [iree_opt_path(), "--allow-unregistered-dialect", "--mlir-print-op-generic", "-"],
        input=text, capture_output=True, text=True, timeout=120)
    return (proc.stdout if proc.returncode == 0 else None), proc.stderr
