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


def iree_tool(name: str) -> str:
    """An IREE command next to this Python (a venv's bin/), else the one on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else name


def iree_compile(text: str, workdir: Path) -> Path:
    """`text` compiled by iree-compile for the local llvm-cpu device: the .vmfb path."""
    src, vmfb = workdir / "prog.mlir", workdir / "prog.vmfb"
    src.write_text(text)
    subprocess.run([iree_tool("iree-compile"), "--iree-hal-target-device=local",
                    "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=generic",
                    str(src), "-o", str(vmfb)], check=True, capture_output=True, timeout=300)
    return vmfb


def iree_run(vmfb: Path, function: str, inputs, n_outputs: int, workdir: Path) -> list:
    """Run `function` of a compiled module with iree-run-module on `inputs` (arrays go in as
    .npy files; a string is passed as written, e.g. "i32=5" for a scalar): its `n_outputs`
    results as numpy arrays."""
    import numpy as np
    cmd = [iree_tool("iree-run-module"), f"--module={vmfb}", f"--function={function}"]
    for i, a in enumerate(inputs):
        if isinstance(a, str):
            cmd.append(f"--input={a}")
            continue
        path = workdir / f"{function}_in{i}.npy"
        np.save(path, a)
        cmd.append(f"--input=@{path}")
    outs = [workdir / f"{function}_out{i}.npy" for i in range(n_outputs)]
    cmd += [f"--output=@{p}" for p in outs]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return [np.load(p) for p in outs]
