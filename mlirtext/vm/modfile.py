"""The module file, `.vmpack`: a zip archive, like IREE's `.vmfb` (a FlatBuffer with an archive of
executables).

    manifest.json                     format name + version, target, exports (signatures, reflection),
                                      kernels (their bindings), executables, constants, and the SHA-256
                                      of every other entry
    host/<function>.json              the host program of each export, with its memory plan
    constants/<name>.npy              host constants
    executables/reference/kernels.mlir  the dispatch functions (linalg on tensors): the reference device
    executables/llvm-cpu/kernels.o    native code for the host CPU (ELF object)
    executables/llvm-cpu/kernels.ll   its optimised LLVM IR, for inspection
    executables/<gpu target>/<kernel>.ptx|.o|.spv   one per kernel for cuda (PTX), rocm (AMDGPU ELF
                                      object: `ld.lld -shared` makes the HSA code object), vulkan-spirv
    executables/<gpu target>/<kernel>.s|.spvasm     its assembly, for inspection (rocm, vulkan-spirv)
    executables/<gpu target>/kernels.ll             the LLVM IR given to codegen (cuda, rocm)
    source/dispatched.mlir            the module after dispatch formation, for inspection

A GPU executable's record in the manifest gives each kernel's launch (threads, workgroups, entry
point) and, for a kernel with large temporaries, `scratch`: the bytes of each buffer the device
allocates and binds after the outputs (an optional field: files without it read as none).

`read_module_file` checks everything (zip integrity, manifest, format, version, every hash, the
structure of the host programs, the CPU the code was built for) before the VM loads any native
code; a file that fails is refused with one clear message (`ModuleFileError`).
"""
from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass

import numpy as np

from .program import portable_dtype

FORMAT = "mlirtext-vmpack"
VERSION = 1


class ModuleFileError(Exception):
    """A module file that cannot be loaded, and why."""


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pack(compiled) -> bytes:
    """The module file for a `compiler.Compiled`."""
    from .. import __version__ as version
    entries: dict[str, bytes] = {}
    exports = []
    for prog in compiled.programs:
        path = f"host/{prog.name}.json"
        entries[path] = json.dumps(prog.to_json(), indent=1).encode()
        exports.append({"name": prog.name, "inputs": prog.inputs, "results": prog.results, "program": path,
                        "peak_bytes": prog.plan["peak_bytes"]})
    constants = {}
    for name, array in compiled.constants.items():
        buf = io.BytesIO()
        stored = array.view(portable_dtype(array.dtype))  # the loader views bf16 & co back by dtype_name
        np.save(buf, stored, allow_pickle=False)
        path = f"constants/{name}.npy"
        entries[path] = buf.getvalue()
        constants[name] = {"path": path, "shape": list(array.shape), "dtype": stored.dtype.str,
                           "dtype_name": array.dtype.name}
    executables = {"reference": {"format": "mlir", "kernels": "executables/reference/kernels.mlir"}}
    entries["executables/reference/kernels.mlir"] = compiled.reference_mlir.encode()
    if compiled.object_code:
        from ..targets.llvm_cpu import host_target_machine
        import llvmlite.binding as llvm
        tm = host_target_machine()
        executables["llvm-cpu"] = {"format": "elf-object", "object": "executables/llvm-cpu/kernels.o",
                                   "llvm_ir": "executables/llvm-cpu/kernels.ll", "triple": tm.triple,
                                   "cpu": llvm.get_host_cpu_name(),
                                   "features": _enabled_features()}
        entries["executables/llvm-cpu/kernels.o"] = compiled.object_code
        entries["executables/llvm-cpu/kernels.ll"] = compiled.llvm_ir.encode()
    for target, exe in compiled.gpu.items():
        executables[target] = _gpu_executable(exe, entries)
    entries["source/dispatched.mlir"] = compiled.host_mlir.encode()
    manifest = {"format": FORMAT, "version": VERSION, "producer": f"mlirtext {version}",
                "target": compiled.target, "exports": exports, "kernels": compiled.kernels,
                "executables": executables, "constants": constants,
                "entries": {path: {"sha256": _sha(data), "size": len(data)} for path, data in entries.items()}}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=1))
        for path, data in entries.items():
            # Object code and constants are stored uncompressed: they load without inflating.
            kind = zipfile.ZIP_STORED if path.endswith((".o", ".npy")) else zipfile.ZIP_DEFLATED
            z.writestr(zipfile.ZipInfo(path, (1980, 1, 1, 0, 0, 0)), data, compress_type=kind)
    return out.getvalue()


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
    import llvmlite.binding as llvm
    return sorted(k for k, v in llvm.get_host_cpu_features().items() if v)


@dataclass
class ModuleFile:
    """A checked module file: its manifest and entries (bytes)."""
    manifest: dict
    entries: dict
    size: int

    def entry(self, path: str) -> bytes:
        return self.entries[path]

    def json(self, path: str) -> dict:
        return json.loads(self.entries[path])


def read_module_file(data: bytes) -> ModuleFile:
    """Open and check a module file; ModuleFileError says what is wrong with it."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ModuleFileError(f"expected the bytes of a module file, got {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(b"PK"):
        raise ModuleFileError("not a module file: it is not a .vmpack (zip) archive")
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        names = set(z.namelist())
        if "manifest.json" not in names:
            raise ModuleFileError("not a module file: it has no manifest.json")
        entries = {name: z.read(name) for name in names}  # checks each entry's CRC-32
    except ModuleFileError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
        raise ModuleFileError(f"the module file is truncated or corrupted ({e})") from None
    except Exception as e:  # noqa: BLE001 - zlib errors and friends: a damaged archive, never a crash
        raise ModuleFileError(f"the module file is truncated or corrupted ({type(e).__name__}: {e})") from None
    try:
        manifest = json.loads(entries["manifest.json"])
    except (ValueError, UnicodeDecodeError) as e:
        raise ModuleFileError(f"the module file's manifest is not valid JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise ModuleFileError(f"not an mlirtext module file (format '{got}', expected '{FORMAT}')")
    if manifest.get("version") != VERSION:
        raise ModuleFileError(f"module file format version {manifest.get('version')!r} is not supported: this "
                              f"mlirtext reads version {VERSION} (recompile it with `mlirtext compile`)")
    _check_structure(manifest, entries)
    return ModuleFile(manifest, entries, len(data))


def _check_structure(manifest: dict, entries: dict) -> None:
    def need(cond: bool, what: str) -> None:
        if not cond:
            raise ModuleFileError(f"the module file is malformed: {what}")

    for key in ("exports", "kernels", "executables", "constants", "entries"):
        need(key in manifest, f"the manifest has no '{key}'")
    for path, info in manifest["entries"].items():
        need(path in entries, f"entry '{path}' is missing")
        if _sha(entries[path]) != info.get("sha256"):
            raise ModuleFileError(f"the module file is corrupted: entry '{path}' does not match its checksum")
    listed = set(manifest["entries"]) | {"manifest.json"}
    need(set(entries) <= listed, f"entries not in the manifest: {sorted(set(entries) - listed)}")
    kernels = manifest["kernels"]
    for target, exe in manifest["executables"].items():
        if isinstance(exe, dict) and "arch" in exe:   # a GPU executable: code per kernel
            need(isinstance(exe.get("kernels"), dict), f"the {target} executable lists no kernels")
            for name, info in exe["kernels"].items():
                need(name in kernels and isinstance(info, dict) and info.get("code") in entries,
                     f"the {target} executable's kernel @{name} has no code")
                scratch = info.get("scratch", [])   # (absent before scratch buffers: none)
                need(isinstance(scratch, list) and all(isinstance(n, int) and n > 0 for n in scratch),
                     f"the {target} executable's kernel @{name} has a malformed scratch list")
    for export in manifest["exports"]:
        need(isinstance(export, dict) and export.get("program") in entries,
             f"export {export.get('name') if isinstance(export, dict) else export!r} has no host program")
        try:
            prog = json.loads(entries[export["program"]])
        except ValueError:
            raise ModuleFileError(f"the module file is malformed: the host program of "
                                  f"@{export['name']} is not JSON") from None
        _check_program(prog, kernels, manifest["constants"], need)


def _check_program(prog: dict, kernels: dict, constants: dict, need) -> None:
    """Every register defined before use, every kernel and constant known, slots within the plan:
    a damaged host program is refused here rather than misbehaving in native code."""
    try:
        defined = set(range(len(prog["inputs"])))
        slots = prog["plan"]["slots"]
        for ins in prog["instructions"]:
            op = ins["op"]
            reads = ins.get("ins", []) + ins.get("values", []) + ([ins["src"]] if "src" in ins else [])
            need(all(r in defined for r in reads), f"@{prog['name']}: a register is read before it is defined")
            if op == "dispatch":
                k = kernels.get(ins["kernel"])
                need(k is not None, f"@{prog['name']}: unknown kernel @{ins['kernel']}")
                need(len(ins["ins"]) == len(k["inputs"]) and len(ins["outs"]) == len(k["outputs"]),
                     f"@{prog['name']}: @{ins['kernel']} is dispatched with the wrong number of buffers")
                need(all(r in defined for r in ins["outs"]), f"@{prog['name']}: a dispatch writes an unknown buffer")
            elif op == "alloc":
                need(-1 <= ins["slot"] < len(slots), f"@{prog['name']}: alloc into slot {ins['slot']}")
                nbytes = int(np.prod(ins["shape"], dtype=np.int64)) * np.dtype(ins["dtype"]).itemsize
                need(ins["slot"] < 0 or nbytes <= slots[ins["slot"]], f"@{prog['name']}: a buffer exceeds its slot")
                defined.add(ins["dst"])
            elif op == "constant":
                need(ins["name"] in constants, f"@{prog['name']}: unknown constant {ins['name']}")
                defined.add(ins["dst"])
            elif op == "view":
                defined.add(ins["dst"])
            else:
                need(op == "return", f"@{prog['name']}: unknown instruction '{op}'")
    except (KeyError, TypeError, ValueError) as e:
        raise ModuleFileError(f"the module file is malformed: host program @{prog.get('name', '?')} "
                              f"({type(e).__name__}: {e})") from None
