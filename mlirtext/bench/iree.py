"""IREE as a point of comparison: `iree-compile` for llvm-cpu on the host CPU, then the module
run in process by `iree.runtime` (iree-base-compiler / iree-base-runtime, when installed). IREE
reads StableHLO but no longer MHLO: a module with mhlo ops is handed over converted
(`hlo-legalize-to-stablehlo`).

Shared by `mlirtext bench --compare-iree` and benchmarks/runtime_speed.py.
"""
from __future__ import annotations

import importlib
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ..api import parse_and_verify, to_text
from ..transforms.conversions.mhlo_to_stablehlo import mhlo_to_stablehlo

#: The IREE runtime drivers that match mlirtext's compiled devices.
DRIVERS = ("local-sync", "local-task")


class IreeUnavailable(Exception):
    """IREE's compiler or runtime is not installed, or it refused the module (and why)."""


def iree_tool(name: str) -> str:
    """An IREE command next to this Python (a venv's bin/, not necessarily on PATH), else PATH's."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else name


def available() -> str | None:
    """None when both the compiler and the runtime can be used, else what is missing."""
    try:
        importlib.import_module("iree.runtime")   # imported here, not in the first (timed) load
    except ImportError:
        return "the IREE runtime is not installed (pip install iree-base-runtime)"
    try:
        subprocess.run([iree_tool("iree-compile"), "--version"], capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError):
        return "iree-compile is not installed (pip install iree-base-compiler)"
    return None


def stablehlo_text(text: str) -> str:
    """`text` with its mhlo ops in their StableHLO forms (unchanged without mhlo ops, or when it
    does not parse: iree-compile then says why); IreeUnavailable names an op with no such form."""
    if "mhlo." not in text:
        return text
    result = parse_and_verify(text)
    if not result.ok:
        return text
    problems = mhlo_to_stablehlo(result.module)
    if problems:
        raise IreeUnavailable(f"IREE reads no mhlo, and {problems[0].message}")
    return to_text(result)


def iree_compile(text: str) -> tuple[bytes, float]:
    """(.vmfb bytes, seconds) of `text` (mhlo converted to StableHLO first, untimed) compiled for
    the local llvm-cpu device, host CPU."""
    text = stablehlo_text(text)
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "module.mlir"
        src.write_text(text)
        return iree_compile_file(src)


def iree_compile_file(src: Path) -> tuple[bytes, float]:
    """(.vmfb bytes, seconds) of the MLIR file `src` (any input iree-compile detects: StableHLO,
    torch, ...) compiled for the local llvm-cpu device, host CPU."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "module.vmfb"
        start = time.perf_counter()
        _run_tool("iree-compile", ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                                   "--iree-llvmcpu-target-cpu=host", str(src), "-o", str(out)], "the module")
        return out.read_bytes(), time.perf_counter() - start


def iree_compile_onnx(onnx_path: str) -> tuple[bytes, float, str]:
    """(.vmfb bytes, seconds, entry function) of an ONNX model the way IREE's users run one:
    `iree-import-onnx` (IREE's own importer, to the torch dialect) then `iree-compile` as above;
    the seconds are both tools'. The entry function is the imported module's public one
    (`main_graph`, named after the graph), its arguments in the graph's input order."""
    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "model.mlir"
        start = time.perf_counter()
        _run_tool("iree-import-onnx", [str(onnx_path), "-o", str(src)], "the model")
        seconds = time.perf_counter() - start
        entry = _entry_function(src)
        data, compile_seconds = iree_compile_file(src)
        return data, seconds + compile_seconds, entry


def _entry_function(src: Path) -> str:
    """The first public func.func's name in `src` (read line by line: the weights, as
    dense_resource blobs, come after the functions)."""
    with open(src) as f:
        for line in f:
            match = re.match(r"\s*func\.func (?:public )?@([\w$.-]+)", line)
            if match:
                return match.group(1)
    raise IreeUnavailable(f"iree-import-onnx wrote no public function to {src.name}")


def _run_tool(name: str, args: list, what: str) -> None:
    """Runs IREE tool `name`; IreeUnavailable (one line) when it cannot start or refuses `what`."""
    try:
        subprocess.run([iree_tool(name), *args], check=True, capture_output=True, timeout=600)
    except OSError as e:
        raise IreeUnavailable(f"{name} cannot be started: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise IreeUnavailable(f"{name} took over 600 s on {what}") from None
    except subprocess.CalledProcessError as e:
        lines = (e.stderr or b"").decode(errors="replace").strip().split("\n")
        raise IreeUnavailable(f"{name} refused {what}: {lines[0] if lines else ''}") from None


def _host(value, dtype) -> np.ndarray:
    if hasattr(value, "to_host"):
        return np.asarray(value.to_host())
    return np.asarray(value, dtype=dtype)   # a scalar result comes back as a Python number


def _argument(a):
    a = np.asarray(a)
    return a.item() if a.ndim == 0 else a   # IREE takes scalars as Python numbers, not 0-d arrays


def iree_function(vmfb: bytes, driver: str = "local-task", name: str = "main", result_dtypes=None):
    """Function `name` of a compiled module on an IREE driver: numpy in, a list of numpy results out
    (`result_dtypes`: the numpy type of each result, for the scalars IREE returns as Python numbers)."""
    import iree.runtime as ireert
    try:
        fn = ireert.load_vm_flatbuffer(vmfb, driver=driver)[name]
    except (KeyError, RuntimeError, ValueError) as e:
        raise IreeUnavailable(f"IREE cannot load @{name} on {driver}: {e}") from None

    def call(*args) -> list:
        out = fn(*[_argument(a) for a in args])
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        dtypes = result_dtypes or [None] * len(out)
        return [_host(v, t) for v, t in zip(out, dtypes)]
    return call


def set_task_workers(count: int) -> None:
    """IREE's local-task driver with `count` worker threads (`--task_topology_max_group_count`):
    must run before the first local-task device of the process is created."""
    import iree.runtime as ireert
    ireert.flags.parse_flags(f"--task_topology_max_group_count={count}")


def iree_staged_function(vmfb: bytes, driver: str = "local-task", name: str = "main"):
    """(stage, call) for function `name` as iree-benchmark-module runs it: `stage(*arrays)` copies
    the inputs into device buffers once (`iree.runtime.asdevicearray`); `call(*staged)` runs on
    them and leaves the results on the device (no host copies in either direction)."""
    import iree.runtime as ireert
    try:
        config = ireert.Config(driver)
        context = ireert.SystemContext(config=config)
        module = ireert.VmModule.copy_buffer(config.vm_instance, vmfb)
        context.add_vm_module(module)
        fn = context.modules[module.name][name]
    except (KeyError, RuntimeError, ValueError) as e:
        raise IreeUnavailable(f"IREE cannot load @{name} on {driver}: {e}") from None

    def stage(*arrays) -> list:
        return [ireert.asdevicearray(config.device, np.ascontiguousarray(a)) for a in arrays]
    return stage, fn
