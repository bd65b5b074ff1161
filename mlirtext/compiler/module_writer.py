"""Module writing: a `Compiled` as a module file (`pack`: the `.vmpack` bytes, whose layout
vm/modfile.py describes and checks) or as a module for the VM of this process (`in_memory`:
the same manifest and executables, with no archive, checksums, JSON, weights or MLIR text to
write and read back).
"""
from __future__ import annotations

import io
import json
import struct
import zipfile

import llvmlite.binding as llvm
import numpy as np

from .. import __version__
from ..targets.llvm_cpu import host_target_machine
from ..vm.dump import kernel_kinds
from ..vm.modfile import ALIGNMENT, FORMAT, VERSION, WEIGHTS, InMemoryModule
from ..vm.module_checks import definition_lines
from ..vm.program import portable_dtype
from ..vm.signing import INTEGRITY, checksum, seal
from .driver import Compiled

REFERENCE_KERNELS = "executables/reference/kernels.mlir"
DISPATCHED = "source/dispatched.mlir"


def pack(compiled: Compiled, signing_key=None, keep_llvm_ir: bool = False) -> bytes:
    """The module file of `compiled`, signed with `signing_key` (an Ed25519 private key:
    vm/signing.load_private_key) when one is given. `keep_llvm_ir`: the llvm-cpu kernels' optimised
    LLVM IR goes in too, for inspection (`dump --ir`); no load or run reads it, and it is the size of
    the object code again or more (a small model's module, 0.37 MB with it, 0.26 without)."""
    entries, manifest = _contents(compiled, keep_llvm_ir)
    for prog in compiled.programs:
        entries[_program_path(prog)] = json.dumps(prog.to_json(), indent=1).encode()
    weights, manifest["constants"] = _weights(compiled.constants)
    entries[REFERENCE_KERNELS] = compiled.reference_mlir.encode()
    entries[DISPATCHED] = (_DISPATCHED_HEADER + compiled.host_mlir).encode()
    entries[WEIGHTS] = weights   # (last: the small entries a load reads come first in the file)
    manifest["entries"] = {path: {"sha256": checksum(data), "size": len(data)} for path, data in entries.items()}
    manifest_bytes = json.dumps(manifest, indent=1).encode()
    entries = {"manifest.json": manifest_bytes, INTEGRITY: seal(manifest_bytes, signing_key), **entries}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in entries.items():   # (fixed dates: the same module gives the same bytes)
            info = zipfile.ZipInfo(path, (1980, 1, 1, 0, 0, 0))
            # The weights are stored uncompressed, their bytes starting on a cache line of the file,
            # so the VM maps them in place. Everything else is deflated, the object code too: a load
            # reads it into memory for the linker anyway, and inflating it costs about 1 ms a MB,
            # where it shrinks to a quarter to a third (flax_cnn: 68 KB to 17 KB).
            info.compress_type = zipfile.ZIP_STORED if path == WEIGHTS else zipfile.ZIP_DEFLATED
            if path == WEIGHTS:
                info.extra = _padding(out.tell(), info, len(data))
            z.writestr(info, data, compresslevel=_compress_level(len(data)))
    return out.getvalue()


_DISPATCHED_HEADER = (f"// The module after dispatch formation. Each `dense_resource<NAME>` is constant NAME: its bytes "
                      f"are in {WEIGHTS},\n// at the offset manifest.json's constants give.\n")

def _compress_level(size: int) -> int:
    """zlib's level for a text entry: the smallest (9) for the manifest, host programs and MLIR;
    7 for megabytes of LLVM IR, where 8 and 9 take three times as long for 0.3% of a module."""
    return 9 if size < 1 << 20 else 7


#: The extra field that pads a zip entry's local header so that its data starts aligned (the ID
#: Android's zipalign uses; readers skip extra fields they do not know).
_PADDING_ID = 0xD935
_LOCAL_HEADER = 30
_ZIP64_EXTRA = 20


def _padding(header_offset: int, info: zipfile.ZipInfo, size: int) -> bytes:
    """The extra field that makes the data of entry `info` (written at `header_offset`) start at
    a multiple of ALIGNMENT in the file."""
    zip64 = _ZIP64_EXTRA if size * 1.05 > zipfile.ZIP64_LIMIT else 0   # (as ZipFile decides it)
    start = header_offset + _LOCAL_HEADER + len(info.filename.encode()) + zip64 + 4
    pad = -start % ALIGNMENT
    return struct.pack("<HH", _PADDING_ID, pad) + bytes(pad)


def _weights(constants: dict) -> tuple[bytes, dict]:
    """The weights entry, every constant's bytes once, each at a multiple of ALIGNMENT (a splat
    constant, one value everywhere, as that value alone), and the manifest's constant records."""
    parts, records, size = [], {}, 0
    for name, array in constants.items():
        raw = np.ascontiguousarray(array).view(portable_dtype(array.dtype))
        flat = raw.reshape(-1).view(np.uint8).reshape(raw.size, raw.dtype.itemsize)
        # (the first two elements first: a weight differs there, and is not compared whole)
        splat = raw.size > 1 and bool((flat[1] == flat[0]).all()) and bool((flat == flat[0]).all())
        data = flat[:1].reshape(-1) if splat else flat.reshape(-1)   # (bytes joined once, not copied first)
        pad = -size % ALIGNMENT
        parts += [bytes(pad), data]
        size += pad
        records[name] = {"offset": size, "shape": list(array.shape), "dtype": raw.dtype.str,
                         "dtype_name": array.dtype.name, **({"splat": True} if splat else {})}
        size += data.nbytes
    return b"".join(parts), records


def in_memory(compiled: Compiled) -> InMemoryModule:
    """`compiled` as a module the VM loads directly (`LoadedModule(in_memory(compiled), device)`)."""
    entries, manifest = _contents(compiled, keep_llvm_ir=True)   # (in memory: kept at no cost)
    programs = {_program_path(prog): prog.to_json() for prog in compiled.programs}
    return InMemoryModule(manifest, entries, programs, compiled.constants, compiled.reference_kernels)


def _program_path(prog) -> str:
    return f"host/{prog.name}.json"


def _contents(compiled: Compiled, keep_llvm_ir: bool) -> tuple[dict, dict]:
    """(entries, manifest) that both forms hold: the executables' code and the manifest, less
    the entries' checksums. The llvm-cpu executable records each kernel's vector widths (read from
    the LLVM IR, which is kept only when asked for)."""
    entries: dict[str, bytes] = {}
    exports = [{"name": prog.name, "inputs": prog.inputs, "results": prog.results, "program": _program_path(prog),
                "peak_bytes": prog.plan["peak_bytes"]} for prog in compiled.programs]
    constants = {name: {"shape": list(array.shape), "dtype": portable_dtype(array.dtype).str,
                        "dtype_name": array.dtype.name} for name, array in compiled.constants.items()}
    executables = {"reference": {"format": "mlir", "kernels": REFERENCE_KERNELS}}
    if compiled.object_code:
        kinds = kernel_kinds(compiled.llvm_ir)
        exe = executables["llvm-cpu"] = {
            "format": "elf-object", "object": "executables/llvm-cpu/kernels.o",
            "definitions": "executables/llvm-cpu/kernels.defs", "triple": host_target_machine().triple,
            "cpu": llvm.get_host_cpu_name(), "features": _enabled_features(),
            "vectors": {name: kinds[name] for name in compiled.kernels if name in kinds}}
        entries["executables/llvm-cpu/kernels.o"] = compiled.object_code
        entries["executables/llvm-cpu/kernels.defs"] = definition_lines(compiled.llvm_ir).encode()
        if keep_llvm_ir:
            exe["llvm_ir"] = "executables/llvm-cpu/kernels.ll"
            entries[exe["llvm_ir"]] = compiled.llvm_ir.encode()
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
