"""Module writing: a `Compiled` as a module file (`pack`: the `.vmpack` bytes, whose layout
vm/modfile.py describes and checks) or as a module for the VM of this process (`in_memory`:
the same manifest and executables, with no archive, checksums, JSON, .npy or MLIR text to
write and read back).
"""
from __future__ import annotations

import io
import json
import zipfile

import llvmlite.binding as llvm
import numpy as np

from .. import __version__
from ..targets.llvm_cpu import host_target_machine
from ..vm.modfile import FORMAT, VERSION, InMemoryModule
from ..vm.program import portable_dtype
from ..vm.signing import INTEGRITY, checksum, seal
from .driver import Compiled

REFERENCE_KERNELS = "executables/reference/kernels.mlir"
DISPATCHED = "source/dispatched.mlir"


def pack(compiled: Compiled, signing_key=None) -> bytes:
    """The module file of `compiled`, signed with `signing_key` (an Ed25519 private key:
    vm/signing.load_private_key) when one is given."""
    entries, manifest = _contents(compiled)
    for prog in compiled.programs:
        entries[_program_path(prog)] = json.dumps(prog.to_json(), indent=1).encode()
    for name, array in compiled.constants.items():
        buf = io.BytesIO()
        # (bf16 & co are stored as raw bytes: the loader views them back by their dtype_name)
        np.save(buf, array.view(portable_dtype(array.dtype)), allow_pickle=False)
        entries[manifest["constants"][name]["path"]] = buf.getvalue()
    entries[REFERENCE_KERNELS] = compiled.reference_mlir.encode()
    entries[DISPATCHED] = compiled.host_mlir.encode()
    manifest["entries"] = {path: {"sha256": checksum(data), "size": len(data)} for path, data in entries.items()}
    manifest_bytes = json.dumps(manifest, indent=1).encode()
    entries = {"manifest.json": manifest_bytes, INTEGRITY: seal(manifest_bytes, signing_key), **entries}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in entries.items():   # (fixed dates: the same module gives the same bytes)
            # Object code and constants are stored uncompressed: they load without inflating.
            kind = zipfile.ZIP_STORED if path.endswith((".o", ".npy")) else zipfile.ZIP_DEFLATED
            z.writestr(zipfile.ZipInfo(path, (1980, 1, 1, 0, 0, 0)), data, compress_type=kind)
    return out.getvalue()


def in_memory(compiled: Compiled) -> InMemoryModule:
    """`compiled` as a module the VM loads directly (`LoadedModule(in_memory(compiled), device)`)."""
    entries, manifest = _contents(compiled)
    programs = {_program_path(prog): prog.to_json() for prog in compiled.programs}
    return InMemoryModule(manifest, entries, programs, compiled.constants, compiled.reference_kernels)


def _program_path(prog) -> str:
    return f"host/{prog.name}.json"


def _contents(compiled: Compiled) -> tuple[dict, dict]:
    """(entries, manifest) that both forms hold: the executables' code and the manifest, less
    the entries' checksums."""
    entries: dict[str, bytes] = {}
    exports = [{"name": prog.name, "inputs": prog.inputs, "results": prog.results, "program": _program_path(prog),
                "peak_bytes": prog.plan["peak_bytes"]} for prog in compiled.programs]
    constants = {name: {"path": f"constants/{name}.npy", "shape": list(array.shape),
                        "dtype": portable_dtype(array.dtype).str, "dtype_name": array.dtype.name}
                 for name, array in compiled.constants.items()}
    executables = {"reference": {"format": "mlir", "kernels": REFERENCE_KERNELS}}
    if compiled.object_code:
        executables["llvm-cpu"] = {"format": "elf-object", "object": "executables/llvm-cpu/kernels.o",
                                   "llvm_ir": "executables/llvm-cpu/kernels.ll", "triple": host_target_machine().triple,
                                   "cpu": llvm.get_host_cpu_name(), "features": _enabled_features()}
        entries["executables/llvm-cpu/kernels.o"] = compiled.object_code
        entries["executables/llvm-cpu/kernels.ll"] = compiled.llvm_ir.encode()
    for target, exe in compiled.gpu.items():
        executables[target] = _gpu_executable(exe, entries)
    manifest = {"format": FORMAT, "version": VERSION, "producer": f"mlirtext {__version__}",
                "target": compiled.target, "exports": exports, "kernels": compiled.kernels,
                "executables": executables, "constants": constants}
    return entries, manifest


_GPU_SUFFIX = {"ptx": ".ptx", "amdgpu-object": ".o", "spirv": ".spv"}
_ASM_SUFFIX = {"amdgpu-object": ".s", "spirv": ".spvasm"}   # (PTX is its own assembly)


def _gpu_executable(exe, entries: dict) -> dict:
    """The manifest record of a GPU executable, its files added to `entries`."""
    base = f"executables/{exe.target}"
    kernels = {}
    for name, launch in exe.launches.items():
        code = f"{base}/{name}{_GPU_SUFFIX[exe.format]}"
        entries[code] = exe.code[name]
        info = {**launch, "entry": launch.get("entry", name), "code": code}
        if exe.format in _ASM_SUFFIX:
            info["assembly"] = f"{base}/{name}{_ASM_SUFFIX[exe.format]}"
            entries[info["assembly"]] = exe.assembly[name].encode()
        kernels[name] = info
    record = {"format": exe.format, "arch": exe.arch, "kernels": kernels, "validated": list(exe.validated)}
    if exe.llvm_ir:
        record["llvm_ir"] = f"{base}/kernels.ll"
        entries[record["llvm_ir"]] = exe.llvm_ir.encode()
    return record


def _enabled_features() -> list[str]:
    return sorted(k for k, v in llvm.get_host_cpu_features().items() if v)
