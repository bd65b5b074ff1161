"""The module file, `.vmpack`: a zip archive, like IREE's `.vmfb` (a FlatBuffer with an archive of
executables). The compiler writes it (compiler/module_writer.py); the VM reads it here.

    manifest.json                     format name + version, target, exports (signatures, reflection),
                                      kernels (their bindings and workgroups), executables, constants,
                                      and the SHA-256 of every other entry
    integrity.json                    the SHA-256 of the manifest, and an optional Ed25519 signature
                                      of it (vm/signing.py): together they cover every byte of the file
    host/<function>.json              the host program of each export, with its memory plan
    executables/reference/kernels.mlir  the dispatch functions (linalg on tensors): the reference device
    executables/llvm-cpu/kernels.o    native code for the host CPU (ELF object; deflated, as every
                                      entry but the weights: a load reads it whole for the linker)
    executables/llvm-cpu/kernels.ll   its optimised LLVM IR, for inspection: only when the compile
                                      asked for it (`mlirtext compile --keep-llvm-ir`); the manifest
                                      records each kernel's vector widths either way
    executables/llvm-cpu/kernels.defs  the IR's `define` lines: each kernel's parameters, which a load
                                      checks against the manifest (vm/module_checks.check_native_abi)
    executables/<gpu target>/<kernel>.ptx|.o|.spv   one per kernel for cuda (PTX), rocm (AMDGPU ELF
                                      object: `ld.lld -shared` makes the HSA code object), vulkan-spirv
    executables/<gpu target>/<kernel>.s|.spvasm     its assembly, for inspection (rocm, vulkan-spirv)
    executables/<gpu target>/kernels.ll             the LLVM IR given to codegen (cuda, rocm)
    source/dispatched.mlir            the module after dispatch formation, for inspection (its
                                      constants as `dense_resource<NAME>`: their bytes are the weights')
    weights.bin                       every constant's bytes, once: stored uncompressed, starting on a
                                      64-byte boundary of the file, each constant at a multiple of 64
                                      bytes into it (the manifest gives its offset, shape and dtype; a
                                      splat constant, one value everywhere, is that value alone)

A GPU executable's record in the manifest gives each kernel's launch (threads, workgroups, entry
point) and, for a kernel with large temporaries, `scratch`: the bytes of each buffer the device
allocates and binds after the outputs (an optional field: files without it read as none).

`read_module_file` (bytes) and `open_module_file` (a path, mapped) check everything before the VM
maps any native code: zip integrity, the manifest's checksum (and, given trusted keys, its
signature), format and version, every field of the manifest and the host programs
(vm/module_checks.py), every entry's checksum, the CPU the code was built for (at load,
vm/devices.py). A file that fails is refused with one clear message (`ModuleFileError`). Checksums
catch damage; only a signature checked against a trusted key shows who made a file: an unsigned
module file is trusted as the native code it is.

Loading for the VM (`lazy=True`) reads only what a load needs: the manifest, the host programs and
the code of the device. Every other entry is read, and checked against its checksum, when it is
first asked for; the weights are never read at all. They are mapped: each constant is a read-only
numpy view of the file's pages (`weights()`, `constant()`), so a load costs neither the time to
copy them nor memory of its own. Their checksum is checked on a streaming read of the mapping
(`verify_weights`, no copy), which the VM runs before its first call (vm/vm.py): hashing costs
about 2 ms per MB here (0.2 s for 100 MB), more than the rest of a load, and a call cannot use a
weight before it is checked. (A mapped file is read as it is on disk when a page is first
touched: `mlirtext compile -o` replaces a file rather than writing into it, so a module being run
is never changed under it.)
"""
from __future__ import annotations

import io
import mmap
import os
import struct
import threading
import zipfile
from collections.abc import Mapping
from typing import Optional

import numpy as np

from ..ir.core import Operation
from ..limits import MemoryLimitError, check as check_memory
from .module_checks import (ALIGNMENT, WEIGHTS, Malformed, check_manifest, check_native_abi, check_program, elements,
                            read_json)
from .signing import INTEGRITY, SignatureError, check_signature, checksum

FORMAT = "mlirtext-vmpack"
#: 2: the manifest is covered by integrity.json, split kernels record their workgroups' block.
#: 3: constants are stored once, in the aligned weights entry (no .npy entries).
#: 4: the llvm-cpu LLVM IR is optional (its kernels' vector widths in the manifest), the object deflated.
VERSION = 4


class ModuleFileError(Exception):
    """A module file that cannot be loaded, and why."""


class ModuleFile:
    """A checked module file: its manifest, entries (path -> bytes, each checked against its
    checksum when it is read), host programs (path -> JSON, checked), its weights (mapped) and the
    fingerprint of the key that signed it (checked only when trusted keys were given)."""

    def __init__(self, manifest: dict, entries: Mapping, size: int, programs: dict | None = None,
                 signer: Optional[str] = None, signature_checked: bool = False, weights=None):
        self.manifest = manifest
        self.entries = entries
        self.size = size
        self.programs = programs or {}
        self.signer = signer
        self.signature_checked = signature_checked   # (trusted keys were given, and `signer` is one)
        self._weights = weights                      # the weights entry's bytes: a read-only buffer
        self._weights_checked = weights is None
        self._lock = threading.Lock()

    def entry(self, path: str) -> bytes:
        return self.entries[path]

    def json(self, path: str) -> dict:
        return self.programs[path]

    def weights(self) -> memoryview:
        """The weights entry, as the file holds it (mapped: nothing is copied)."""
        return self._weights

    @property
    def weights_checked(self) -> bool:
        return self._weights_checked

    def verify_weights(self) -> None:
        """Check the weights against their checksum, once (a streaming read of the mapping)."""
        if self._weights_checked:
            return
        with self._lock:
            if not self._weights_checked:
                if checksum(self._weights) != self.manifest["entries"][WEIGHTS]["sha256"]:
                    raise ModuleFileError(f"the module file is corrupted: entry '{WEIGHTS}' does not match its "
                                          "checksum")
                self._weights_checked = True

    def constant(self, name: str) -> np.ndarray:
        """Constant `name`: a read-only view of its bytes in the weights (a splat constant, made
        whole), its shape and dtype those the manifest declares."""
        info = self.manifest["constants"][name]
        dtype, shape = np.dtype(info["dtype"]), tuple(info["shape"])
        try:
            if info.get("splat"):
                check_memory(elements(shape) * dtype.itemsize, f"constant {name}")
                array = _splat(np.frombuffer(self._weights, np.uint8, dtype.itemsize, info["offset"]),
                               elements(shape)).view(dtype).reshape(shape)
            else:
                array = np.frombuffer(self._weights, dtype, elements(shape), info["offset"]).reshape(shape)
        except MemoryLimitError as e:
            raise ModuleFileError(f"module file: constant {name} cannot be made ({e})") from None
        if dtype.kind == "V" and info.get("dtype_name"):  # bf16 & co: stored as raw bytes
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


def _splat(value: np.ndarray, count: int) -> np.ndarray:
    """`count` copies of the bytes `value`, as bytes (zeros, the usual splat, from pages the
    system hands out zeroed; a value of 1, 2, 4 or 8 bytes filled as an integer)."""
    if not value.any():
        return np.zeros(count * value.size, np.uint8)
    if value.size in (1, 2, 4, 8):
        word = np.dtype(f"<u{value.size}")
        return np.full(count, value.view(word)[0], word).view(np.uint8)
    return np.tile(value, count)


def open_module_file(path, trusted_keys: list | None = None, lazy: bool = False) -> ModuleFile:
    """`read_module_file` of the file at `path`, mapped rather than read (ModuleFileError when it
    cannot be opened): its weights stay in the file's pages."""
    try:
        with open(path, "rb") as f:
            try:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except (ValueError, OSError):   # (empty, or a file that cannot be mapped: a pipe, /proc)
                data = f.read()
    except OSError as e:
        raise ModuleFileError(f"cannot open module file '{os.fsdecode(path)}': {e.strerror}") from None
    return read_module_file(data, trusted_keys, lazy)


def read_module_file(data, trusted_keys: list | None = None, lazy: bool = False) -> ModuleFile:
    """Open and check a module file (its bytes, or a mapping of it); ModuleFileError says what is
    wrong with it. With `trusted_keys` (Ed25519 public keys: signing.load_public_keys), a file that
    one of them did not sign is refused, before its manifest is even parsed. `lazy`: only what a
    load needs is read and checked now (see above), the rest when it is first used; else every
    entry, the weights included, is checked here."""
    if not isinstance(data, (bytes, bytearray, memoryview, mmap.mmap)):
        raise ModuleFileError(f"expected the bytes of a module file, got {type(data).__name__}")
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not data[:2] == b"PK":
        raise ModuleFileError("not a module file: it is not a .vmpack (zip) archive")
    entries = _Entries(data)
    try:
        if INTEGRITY not in entries:
            _check_format(read_json(entries["manifest.json"], "the manifest"))   # (an older version says so)
            raise ModuleFileError(f"the module file has no {INTEGRITY}: its manifest is not covered by a checksum")
        signer = check_seal(entries, trusted_keys)
        manifest = read_json(entries["manifest.json"], "the manifest")
        _check_format(manifest)
        check_manifest(manifest, entries, {"manifest.json", INTEGRITY}, entries.size(WEIGHTS))
        entries.expect({path: info["sha256"] for path, info in manifest["entries"].items()})
        weights = entries.stored(WEIGHTS)
        if not lazy:
            for path in manifest["entries"]:
                if path != WEIGHTS:
                    entries[path]   # (read and checked)
        if "llvm-cpu" in manifest["executables"]:
            check_native_abi(entries[manifest["executables"]["llvm-cpu"]["definitions"]], manifest["kernels"])
        programs = {}
        for export in manifest["exports"]:
            prog = read_json(entries[export["program"]], f"the host program of @{export['name']}")
            check_program(prog, export, manifest["kernels"], manifest["constants"])
            programs[export["program"]] = prog
    except Malformed as e:
        raise ModuleFileError(f"the module file is malformed: {e}") from None
    except (SignatureError, MemoryLimitError) as e:
        raise ModuleFileError(str(e)) from None
    module_file = ModuleFile(manifest, entries, len(data), programs, signer, trusted_keys is not None, weights)
    if not lazy:
        module_file.verify_weights()
    return module_file


def check_seal(entries: Mapping, trusted_keys: list | None = None) -> Optional[str]:
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
#: entries deflate 3-10x, code and weights are stored as they are. More is a zip bomb.
UNPACKED_RATIO = 64
UNPACKED_SLACK = 1 << 20


class _MappedFile:
    """A mapping as the file object zipfile reads (mmap has read, seek and tell, not seekable)."""

    def __init__(self, mapping: mmap.mmap):
        self.read, self.seek, self.tell = mapping.read, mapping.seek, mapping.tell

    def seekable(self) -> bool:
        return True


class _Entries(Mapping):
    """The archive's entries, path -> bytes, each read when it is first asked for (and checked
    against its CRC-32 and, once `expect` has given them, its SHA-256); sizes are checked first."""

    def __init__(self, data):
        self.data = data
        self._read: dict = {}
        self._sha256: dict = {}
        self._lock = threading.Lock()   # (entries are read from VM threads too: a GPU device, dump)
        try:
            self.zip = zipfile.ZipFile(_MappedFile(data) if isinstance(data, mmap.mmap) else io.BytesIO(data))
            self.infos = {info.filename: info for info in self.zip.infolist()}
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
            raise ModuleFileError(f"the module file is truncated or corrupted ({e})") from None
        except Exception as e:  # noqa: BLE001 - a damaged directory (struct errors and friends), never a crash
            raise ModuleFileError(f"the module file is truncated or corrupted ({type(e).__name__}: {e})") from None
        if "manifest.json" not in self.infos:
            raise ModuleFileError("not a module file: it has no manifest.json")
        unpacked = sum(info.file_size for info in self.infos.values())
        if unpacked > UNPACKED_RATIO * len(data) + UNPACKED_SLACK:
            raise ModuleFileError(f"the module file is malformed: its entries would unpack to {unpacked} bytes, more "
                                  f"than {UNPACKED_RATIO} times its size")

    def __iter__(self):
        return iter(self.infos)

    def __len__(self) -> int:
        return len(self.infos)

    def __contains__(self, path) -> bool:
        return path in self.infos

    def size(self, path: str) -> Optional[int]:
        info = self.infos.get(path)
        return info.file_size if info is not None else None

    def expect(self, sha256: dict) -> None:
        """The checksums the entries (other than the manifest and its seal) must match."""
        self._sha256 = sha256
        for path in [p for p in self._read if p in sha256]:
            self._check(path, self._read[path])

    def __getitem__(self, path: str) -> bytes:
        if path not in self.infos:
            raise KeyError(path)
        with self._lock:
            data = self._read.get(path)
            if data is None:
                data = self._unpack(path)
                if path in self._sha256:
                    self._check(path, data)
                self._read[path] = data
        return data

    def _check(self, path: str, data) -> None:
        if checksum(data) != self._sha256[path]:
            raise ModuleFileError(f"the module file is corrupted: entry '{path}' does not match its checksum")

    def _unpack(self, path: str) -> bytes:
        try:
            return self.zip.read(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError) as e:
            raise ModuleFileError(f"the module file is truncated or corrupted ({e})") from None
        except Exception as e:  # noqa: BLE001 - zlib errors and friends: a damaged archive, never a crash
            raise ModuleFileError(f"the module file is truncated or corrupted ({type(e).__name__}: {e})") from None

    def stored(self, path: str) -> memoryview:
        """Entry `path` as a read-only view of the file itself when it is stored uncompressed and
        starts on an ALIGNMENT boundary (as mlirtext writes the weights), else a copy that does
        (a file some other zip tool rewrote). Its checksum is the caller's to check."""
        info = self.infos[path]
        view = memoryview(self.data).toreadonly()
        header = bytes(view[info.header_offset:info.header_offset + 30])
        if len(header) == 30 and header[:4] == b"PK\x03\x04" and info.compress_type == zipfile.ZIP_STORED:
            name_length, extra_length = struct.unpack("<HH", header[26:30])
            start = info.header_offset + 30 + name_length + extra_length
            if start % ALIGNMENT == 0 and start + info.file_size <= len(view) and info.compress_size == info.file_size:
                return view[start:start + info.file_size]
        check_memory(info.file_size, f"the module's {path}")
        raw = np.empty(info.file_size + ALIGNMENT, np.uint8)
        skip = -raw.ctypes.data % ALIGNMENT
        copy = raw[skip:skip + info.file_size]
        copy[:] = np.frombuffer(self._unpack(path), np.uint8)
        copy.flags.writeable = False
        return memoryview(copy)


def _check_format(manifest) -> None:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise ModuleFileError(f"not an mlirtext module file (format {got!r}, expected '{FORMAT}')")
    if manifest.get("version") != VERSION:
        raise ModuleFileError(f"module file format version {manifest.get('version')!r} is not supported: this "
                              f"mlirtext reads version {VERSION} (recompile it with `mlirtext compile`)")
