"""The module file, `.vmpack`: a zip archive, like IREE's `.vmfb` (a FlatBuffer with an archive of
executables). The compiler writes it (compiler/module_writer.py); the VM reads it here.

    manifest.json                     format name + version, target, exports (signatures, reflection),
                                      kernels (their bindings and workgroups), executables, constants,
                                      and the SHA-256 of every other entry
    integrity.json                    the SHA-256 of the manifest, and an optional Ed25519 signature
                                      of it (vm/signing.py): together they cover every byte of the file
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

`read_module_file` checks everything before the VM maps any native code: zip integrity, the
manifest's checksum (and, given trusted keys, its signature), format and version, every field of
the manifest and the host programs (vm/module_checks.py), every entry's checksum, the CPU the code
was built for (at load, vm/devices.py). A file that fails is refused with one clear message
(`ModuleFileError`). Checksums catch damage; only a signature checked against a trusted key shows
who made a file: an unsigned module file is trusted as the native code it is.
"""
from __future__ import annotations

import io
import math
import zipfile
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ..ir.core import Operation
from ..limits import MemoryLimitError, check as check_memory
from .module_checks import Malformed, check_manifest, check_native_abi, check_program, read_json
from .signing import INTEGRITY, SignatureError, check_signature, checksum

FORMAT = "mlirtext-vmpack"
#: 2: the manifest is covered by integrity.json, split kernels record their workgroups' block.
VERSION = 2


class ModuleFileError(Exception):
    """A module file that cannot be loaded, and why."""


@dataclass
class ModuleFile:
    """A checked module file: its manifest, entries (bytes), host programs (path -> JSON, checked)
    and the fingerprint of the key that signed it (checked only when trusted keys were given)."""
    manifest: dict
    entries: dict
    size: int
    programs: dict = field(default_factory=dict)
    signer: Optional[str] = None
    signature_checked: bool = False    # (whether trusted keys were given, and `signer` is one of them)

    def entry(self, path: str) -> bytes:
        return self.entries[path]

    def json(self, path: str) -> dict:
        return self.programs[path]

    def constant(self, name: str) -> np.ndarray:
        """Constant `name`, read from its .npy entry (its shape and dtype those the manifest declares)."""
        info = self.manifest["constants"][name]
        try:
            array = _load_npy(self.entry(info["path"]), name)
        except (ValueError, OSError, KeyError, EOFError, MemoryLimitError) as e:
            raise ModuleFileError(f"module file: constant {name} cannot be read ({e})") from None
        if list(array.shape) != info["shape"] or array.dtype != np.dtype(info["dtype"]):
            raise ModuleFileError(f"module file: constant {name} holds {array.shape} {array.dtype}, the manifest "
                                  f"declares {tuple(info['shape'])} {np.dtype(info['dtype'])}")
        if array.dtype.kind == "V" and info.get("dtype_name"):  # bf16 & co: .npy stores raw bytes
            try:
                import ml_dtypes   # (an optional package: only such constants need it)
                array = array.view(getattr(ml_dtypes, info["dtype_name"]))
            except (ImportError, AttributeError, TypeError, ValueError):
                raise ModuleFileError(f"module file: constant {name} is {info['dtype_name']}, which needs the "
                                      "ml_dtypes package") from None
        return array

    def reference_kernels(self) -> Operation:
        """The reference executable's kernels (linalg on tensors) as IR: its MLIR, parsed and
        verified (the reference device calls this once, when it is made)."""
        # (imported here: the parser is not needed to run native or GPU code, and loads slowly)
        from ..api import parse_and_verify
        try:
            text = self.entry(self.manifest["executables"]["reference"]["kernels"]).decode()
        except UnicodeDecodeError:
            raise ModuleFileError("the module's reference kernels are not UTF-8 text") from None
        result = parse_and_verify(text, "kernels.mlir")
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
        super().__init__(manifest, entries, 0, programs)   # (programs: path -> program, as its JSON reads)
        self.constants = constants        # name -> array
        self.kernels = kernels            # the reference kernels

    def constant(self, name: str) -> np.ndarray:
        return self.constants[name]

    def reference_kernels(self) -> Operation:
        return self.kernels


def read_module_file(data: bytes, trusted_keys: list | None = None) -> ModuleFile:
    """Open and check a module file; ModuleFileError says what is wrong with it. With
    `trusted_keys` (Ed25519 public keys: signing.load_public_keys), a file that one of them did
    not sign is refused, before its manifest is even parsed."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ModuleFileError(f"expected the bytes of a module file, got {type(data).__name__}")
    data = bytes(data)
    if not data.startswith(b"PK"):
        raise ModuleFileError("not a module file: it is not a .vmpack (zip) archive")
    entries = _entries(data)
    try:
        if INTEGRITY not in entries:
            _check_format(read_json(entries["manifest.json"], "the manifest"))   # (an older version says so)
            raise ModuleFileError(f"the module file has no {INTEGRITY}: its manifest is not covered by a checksum")
        signer = check_seal(entries, trusted_keys)
        manifest = read_json(entries["manifest.json"], "the manifest")
        _check_format(manifest)
        check_manifest(manifest, entries, {"manifest.json", INTEGRITY})
        for path, info in manifest["entries"].items():
            if checksum(entries[path]) != info["sha256"]:
                raise ModuleFileError(f"the module file is corrupted: entry '{path}' does not match its checksum")
        if "llvm-cpu" in manifest["executables"]:
            check_native_abi(entries[manifest["executables"]["llvm-cpu"]["llvm_ir"]], manifest["kernels"])
        programs = {}
        for export in manifest["exports"]:
            prog = read_json(entries[export["program"]], f"the host program of @{export['name']}")
            check_program(prog, export, manifest["kernels"], manifest["constants"])
            programs[export["program"]] = prog
    except Malformed as e:
        raise ModuleFileError(f"the module file is malformed: {e}") from None
    except SignatureError as e:
        raise ModuleFileError(str(e)) from None
    return ModuleFile(manifest, entries, len(data), programs, signer, trusted_keys is not None)


def check_seal(entries: dict, trusted_keys: list | None = None) -> Optional[str]:
    """The fingerprint of the key that signed the file with these entries, None when unsigned:
    its manifest checked against integrity.json and, with `trusted_keys`, its signature against
    them (ModuleFileError, Malformed or SignatureError say why not)."""
    seal = read_json(entries[INTEGRITY], INTEGRITY)
    if not isinstance(seal, dict) or seal.get("manifest_sha256") != checksum(entries["manifest.json"]):
        raise ModuleFileError("the module file is corrupted: the manifest does not match its checksum")
    if trusted_keys is not None:
        return check_signature(entries["manifest.json"], seal, trusted_keys)
    signature = seal.get("signature")
    return signature.get("key") if isinstance(signature, dict) and isinstance(signature.get("key"), str) else None


def verify_signature(module_file: ModuleFile, trusted_keys: list) -> None:
    """Check a module file read without trusted keys against them (ModuleFileError if none signed it)."""
    if INTEGRITY not in module_file.entries:
        raise ModuleFileError("the module has no signature to check (it was not read from a module file)")
    try:
        module_file.signer = check_seal(module_file.entries, trusted_keys)
        module_file.signature_checked = True
    except (Malformed, SignatureError) as e:
        raise ModuleFileError(str(e)) from None


#: What a module file's entries may unpack to, as a multiple of its size (plus a little): text
#: entries deflate 3-10x, code and constants are stored as they are. More is a zip bomb.
UNPACKED_RATIO = 64
UNPACKED_SLACK = 1 << 20


def _entries(data: bytes) -> dict:
    """The archive's entries (path -> bytes), each checked against its CRC-32, after their sizes."""
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        names = set(z.namelist())
        if "manifest.json" not in names:
            raise ModuleFileError("not a module file: it has no manifest.json")
        unpacked = sum(info.file_size for info in z.infolist())
        if unpacked > UNPACKED_RATIO * len(data) + UNPACKED_SLACK:
            raise ModuleFileError(f"the module file is malformed: its entries would unpack to {unpacked} bytes, more "
                                  f"than {UNPACKED_RATIO} times its size")
        return {name: z.read(name) for name in names}
    except ModuleFileError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
        raise ModuleFileError(f"the module file is truncated or corrupted ({e})") from None
    except Exception as e:  # noqa: BLE001 - zlib errors and friends: a damaged archive, never a crash
        raise ModuleFileError(f"the module file is truncated or corrupted ({type(e).__name__}: {e})") from None


def _check_format(manifest) -> None:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise ModuleFileError(f"not an mlirtext module file (format {got!r}, expected '{FORMAT}')")
    if manifest.get("version") != VERSION:
        raise ModuleFileError(f"module file format version {manifest.get('version')!r} is not supported: this "
                              f"mlirtext reads version {VERSION} (recompile it with `mlirtext compile`)")


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
