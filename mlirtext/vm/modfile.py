"""The module file, `.vmpack`: a zip archive, like IREE's `.vmfb` (a FlatBuffer with an archive of
executables). The compiler writes it (compiler/module_writer.py); the VM reads it here.

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
import math
import zipfile
from dataclasses import dataclass

import numpy as np

from ..ir.core import Operation
from ..limits import MemoryLimitError, check as check_memory

FORMAT = "mlirtext-vmpack"
VERSION = 1


class ModuleFileError(Exception):
    """A module file that cannot be loaded, and why."""


def checksum(data: bytes) -> str:
    """The SHA-256 the manifest records for an entry."""
    return hashlib.sha256(data).hexdigest()


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

    def constant(self, name: str) -> np.ndarray:
        """Constant `name`, read from its .npy entry."""
        info = self.manifest["constants"][name]
        try:
            array = _load_npy(self.entry(info["path"]), name)
        except (ValueError, OSError, KeyError, MemoryLimitError) as e:
            raise ModuleFileError(f"module file: constant {name} cannot be read ({e})") from None
        if array.dtype.kind == "V" and info.get("dtype_name"):  # bf16 & co: .npy stores raw bytes
            try:
                import ml_dtypes   # (an optional package: only such constants need it)
                array = array.view(getattr(ml_dtypes, info["dtype_name"]))
            except (ImportError, AttributeError):
                raise ModuleFileError(f"module file: constant {name} is {info['dtype_name']}, which needs the "
                                      "ml_dtypes package") from None
        return array

    def reference_kernels(self) -> Operation:
        """The reference executable's kernels (linalg on tensors) as IR: its MLIR, parsed and
        verified (the reference device calls this once, when it is made)."""
        # (imported here: the parser is not needed to run native or GPU code, and loads slowly)
        from ..api import parse_and_verify
        result = parse_and_verify(self.entry(self.manifest["executables"]["reference"]["kernels"]).decode(),
                                  "kernels.mlir")
        if not result.ok:
            raise ModuleFileError("the module's reference kernels do not parse: " +
                                  "; ".join(d.message for d in result.diagnostics[:3]))
        return result.module


class InMemoryModule(ModuleFile):
    """A module compiled in this process (compiler/module_writer.py `in_memory`), loaded without
    a file: the manifest and the executables' code as a file holds them, but the host programs,
    constants and reference kernels as the compiler made them, so nothing is zipped, hashed,
    serialised or parsed again. It was never stored, so it has no size and no checksums."""

    def __init__(self, manifest: dict, entries: dict, programs: dict, constants: dict, kernels: Operation):
        super().__init__(manifest, entries, 0)
        self.programs = programs          # host program path -> program (as its JSON would read)
        self.constants = constants        # name -> array
        self.kernels = kernels            # the reference kernels

    def json(self, path: str) -> dict:
        return self.programs[path]

    def constant(self, name: str) -> np.ndarray:
        return self.constants[name]

    def reference_kernels(self) -> Operation:
        return self.kernels


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
        if checksum(entries[path]) != info.get("sha256"):
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


def _load_npy(data: bytes, name: str) -> np.ndarray:
    """A constant's .npy entry as an array; its header's shape is checked against the entry's size
    and the memory limit first (numpy allocates what the header declares before reading)."""
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read_header(stream)
    nbytes = math.prod(shape) * dtype.itemsize
    check_memory(nbytes, f"constant {name}")
    if nbytes > len(data) - stream.tell():
        raise ValueError(f"its header declares {nbytes} bytes of data, the entry has {len(data) - stream.tell()}")
    stream.seek(0)
    return np.load(stream, allow_pickle=False)
