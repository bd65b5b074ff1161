"""`mlirtext compile --validate`: each GPU kernel checked by its vendor's tool.

- cuda: `ptxas` assembles the PTX for the chosen architecture and for sm_90 (PTX for sm_80
  must also build for newer GPUs);
- rocm: `ld.lld -shared` links the object into an HSA code object, and `llvm-readelf` must read
  it as one (OS/ABI 'AMDGPU - HSA', machine EM_AMDGPU, the kernel's descriptor in its notes);
- vulkan-spirv: `spirv-val --target-env vulkan1.3`; opencl-spirv: `spirv-val --target-env opencl1.2`.

A failure is a GpuCompileError naming the kernel and quoting the tool; a missing tool is one too
(`make gpu-deps` installs them).
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile

from .executable import GpuCompileError

TOOLS = {"ptxas": ("ptxas",), "ld.lld": ("ld.lld-22", "ld.lld"), "llvm-readelf": ("llvm-readelf-22", "llvm-readelf"),
         "spirv-val": ("spirv-val",), "spirv-as": ("spirv-as",), "spirv-dis": ("spirv-dis",),
         "llvm-spirv": ("llvm-spirv-15", "llvm-spirv")}   # (the opencl device's SPIR-V reader)
_HINT = {"ptxas": "the CUDA toolkit", "ld.lld": "Debian lld-22", "llvm-readelf": "Debian llvm-22",
         "spirv-val": "Debian spirv-tools", "spirv-as": "Debian spirv-tools", "spirv-dis": "Debian spirv-tools",
         "llvm-spirv": "Debian llvm-spirv-15"}


def find_tool(tool: str) -> str | None:
    for name in TOOLS[tool]:
        path = shutil.which(name)
        if path:
            return path
    if tool == "ptxas":
        found = sorted(glob.glob("/usr/local/cuda*/bin/ptxas"))
        return found[-1] if found else None
    return None


def need_tool(tool: str) -> str:
    path = find_tool(tool)
    if path is None:
        raise GpuCompileError(f"{tool} not found ({_HINT[tool]}; `make gpu-deps` installs it)")
    return path


def run_tool(args: list, what: str) -> str:
    """stdout of `args`; GpuCompileError(what: the tool's message) when it fails."""
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        message = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        raise GpuCompileError(f"{what}: {' | '.join(message[-4:]) or f'exit code {proc.returncode}'}")
    return proc.stdout


def validate_executable(exe) -> None:
    check = {"cuda": _ptx, "rocm": _hsaco, "vulkan-spirv": _spirv, "opencl-spirv": _spirv}[exe.target]
    with tempfile.TemporaryDirectory(prefix="mlirtext-gpu-") as tmp:
        for name, code in exe.code.items():
            check(exe, name, code, tmp)
    exe.validated = {"cuda": [f"ptxas {a}" for a in ptx_archs(exe.arch)], "rocm": ["ld.lld", "llvm-readelf"],
                     "vulkan-spirv": [f"spirv-val {exe.arch}"], "opencl-spirv": [f"spirv-val {exe.arch}"]}[exe.target]


def ptx_archs(arch: str) -> list:
    return [arch] if arch >= "sm_90" else [arch, "sm_90"]


def _ptx(exe, name: str, code: bytes, tmp: str) -> None:
    ptxas = need_tool("ptxas")
    path = os.path.join(tmp, f"{name}.ptx")
    with open(path, "wb") as f:
        f.write(code)
    for arch in ptx_archs(exe.arch):
        run_tool([ptxas, f"-arch={arch}", path, "-o", os.path.join(tmp, f"{name}.{arch}.cubin")],
                 f"kernel @{name}: ptxas -arch={arch} rejects its PTX")


def link_hsaco(name: str, code: bytes, tmp: str) -> str:
    """Link the kernel's relocatable AMDGPU object into an HSA code object; its path."""
    obj, hsaco = os.path.join(tmp, f"{name}.o"), os.path.join(tmp, f"{name}.hsaco")
    with open(obj, "wb") as f:
        f.write(code)
    run_tool([need_tool("ld.lld"), "-shared", obj, "-o", hsaco], f"kernel @{name}: ld.lld cannot link its object")
    return hsaco


def _hsaco(exe, name: str, code: bytes, tmp: str) -> None:
    hsaco = link_hsaco(name, code, tmp)
    text = run_tool([need_tool("llvm-readelf"), "-h", "--notes", hsaco], f"kernel @{name}: llvm-readelf")
    expected = {"OS/ABI": "AMDGPU - HSA", "Machine": "EM_AMDGPU", f".name: {name}": "", exe.arch: ""}
    lines = [" ".join(line.split()) for line in text.splitlines()]
    for key, value in expected.items():
        if not any(key in line and value in line for line in lines):
            shown = f"{key} {value}".strip()
            raise GpuCompileError(f"kernel @{name}: the linked object does not read as an HSA code object for "
                                  f"{exe.arch} (llvm-readelf shows no '{shown}')")


def _spirv(exe, name: str, code: bytes, tmp: str) -> None:
    path = os.path.join(tmp, f"{name}.spv")
    with open(path, "wb") as f:
        f.write(code)
    run_tool([need_tool("spirv-val"), "--target-env", exe.arch, path],   # (vulkan1.3 or opencl1.2)
             f"kernel @{name}: spirv-val rejects its SPIR-V")
