"""Memory for the llvm dialect: byte-addressed numpy buffers, typed loads and stores.

A pointer is a `Pointer(alloc, offset)`: an allocation id and a byte offset
(`NULL` is allocation 0). Every allocation also has a numeric base address
(64-byte aligned, never reused, with a gap after each allocation) so
`ptrtoint`/`inttoptr` round-trip and a freed or out-of-bounds access is
caught: the allocation an address falls in is found again and checked.

Types are laid out as LLVM's default data layout does on a 64-bit target:
integers and floats take their power-of-two store size and natural alignment,
pointers 8 bytes, vectors their size rounded up to a power of two, structs
pad fields to their alignment (packed structs do not), arrays repeat the
element's allocation size.

Values in memory and out: integers, floats and vectors are numpy arrays (0-d
for scalars), pointers `Pointer`s, structs tuples and arrays lists.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

import numpy as np

from ..dialects import llvm_types as LT
from ..ir import types as T
from ..ir.arrays import dtype_of, wrap_to_width
from ..limits import check as check_memory
from .machine import InterpreterError


class MemoryAccessError(InterpreterError):
    """A bad access: out of bounds, after free, through null, to a constant."""


# ---- pointers ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Pointer:
    alloc: int
    offset: int = 0

    def __add__(self, delta: int) -> "Pointer":
        return Pointer(self.alloc, self.offset + int(delta))

    @property
    def is_null(self) -> bool:
        return self.alloc == 0 and self.offset == 0

    def __repr__(self) -> str:
        return "ptr(null)" if self.is_null else f"ptr({self.alloc}+{self.offset})"


NULL = Pointer(0, 0)


# ---- layout -----------------------------------------------------------------------------
def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


@lru_cache(maxsize=4096)
def layout(t) -> tuple:
    """(allocation size, alignment) of a type in bytes."""
    if isinstance(t, T.IntegerType):
        if t.width == 1:
            return 1, 1
        size = _pow2((t.width + 7) // 8)
        return size, min(size, 16)
    if isinstance(t, T.IndexType):
        return 8, 8
    if isinstance(t, T.FloatType):
        if t.name in ("f80", "f128"):
            return 16, 16
        size = _pow2((t.width + 7) // 8)
        return size, size
    if LT.is_pointer(t):
        return 8, 8
    if isinstance(t, T.VectorType):
        if t.scalable:
            raise ValueError(f"scalable vectors ({t}) have no fixed size")
        n = int(np.prod(t.shape, dtype=np.int64))
        if isinstance(t.element, T.IntegerType) and t.element.width == 1:
            size = (n + 7) // 8
        else:
            size = n * layout(t.element)[0]
        size = _pow2(max(size, 1))
        return size, size
    if isinstance(t, LT.LLVMArrayType):
        size, align = layout(t.element)
        return size * t.size, align
    if isinstance(t, LT.LLVMStructType):
        offsets, size, align = _struct_layout(t)
        return size, align
    raise ValueError(f"type {t} has no size in memory")


@lru_cache(maxsize=4096)
def _struct_layout(t: LT.LLVMStructType) -> tuple:
    if t.body is None:
        raise ValueError(f"opaque struct {t} has no size in memory")
    offsets, offset, align = [], 0, 1
    for field in t.body:
        fsize, falign = layout(field)
        if not t.packed:
            offset = (offset + falign - 1) // falign * falign
            align = max(align, falign)
        offsets.append(offset)
        offset += fsize
    size = (offset + align - 1) // align * align
    return tuple(offsets), size, align


def size_of(t) -> int:
    return layout(t)[0]


def field_offset(t: LT.LLVMStructType, index: int) -> int:
    return _struct_layout(t)[0][index]


def _is_i1(t) -> bool:
    return isinstance(t, T.IntegerType) and t.width == 1


# ---- values <-> bytes -----------------------------------------------------------------------
def encode(value, t, memory: "Memory") -> bytes:
    """The bytes of `value` (runtime form of `t`), `size_of(t)` long."""
    out = bytearray(size_of(t))
    _encode_into(out, 0, value, t, memory)
    return bytes(out)


def _encode_into(out: bytearray, off: int, value, t, memory) -> None:
    if LT.is_pointer(t):
        out[off:off + 8] = int(memory.address_of(value)).to_bytes(8, "little", signed=False)
        return
    if isinstance(t, LT.LLVMStructType):
        for i, ft in enumerate(t.body):
            _encode_into(out, off + field_offset(t, i), value[i], ft, memory)
        return
    if isinstance(t, LT.LLVMArrayType):
        step = size_of(t.element)
        if not isinstance(value, (list, tuple)):
            value = list(np.asarray(value).reshape((t.size,) + np.asarray(value).shape[1:]))
        for i in range(t.size):
            _encode_into(out, off + i * step, value[i], t.element, memory)
        return
    if isinstance(t, T.VectorType) and _is_i1(t.element):
        bits = np.packbits(np.asarray(value, dtype=bool).reshape(-1), bitorder="little").tobytes()
        out[off:off + len(bits)] = bits
        return
    if isinstance(t, T.VectorType) and LT.is_pointer(t.element):
        for i, p in enumerate(np.asarray(value, dtype=object).reshape(-1)):
            out[off + 8 * i:off + 8 * i + 8] = int(memory.address_of(p)).to_bytes(8, "little")
        return
    raw = np.ascontiguousarray(np.asarray(value).astype(dtype_of(t), copy=False)).tobytes()
    n = min(len(raw), size_of(t))
    out[off:off + n] = raw[:n]


def decode(data, off: int, t, memory: "Memory"):
    """The value of type `t` stored at byte `off` of `data` (a uint8 array); a copy."""
    if LT.is_pointer(t):
        return memory.pointer_at(int(np.frombuffer(data, np.uint64, 1, off)[0]))
    if isinstance(t, LT.LLVMStructType):
        return tuple(decode(data, off + field_offset(t, i), ft, memory) for i, ft in enumerate(t.body))
    if isinstance(t, LT.LLVMArrayType):
        step = size_of(t.element)
        return [decode(data, off + i * step, t.element, memory) for i in range(t.size)]
    if _is_i1(t):
        return np.array((data[off] & 1) != 0)
    if isinstance(t, T.VectorType):
        n = int(np.prod(t.shape, dtype=np.int64))
        if _is_i1(t.element):
            raw = np.frombuffer(data, np.uint8, (n + 7) // 8, off)
            return np.unpackbits(raw, bitorder="little")[:n].astype(bool).reshape(t.shape)
        if LT.is_pointer(t.element):
            addrs = np.frombuffer(data, np.uint64, n, off)
            out = np.empty(n, dtype=object)
            out[:] = [memory.pointer_at(int(a)) for a in addrs]
            return out.reshape(t.shape)
        dtype = dtype_of(t.element)
        arr = np.frombuffer(data, dtype, n, off).reshape(t.shape).copy()
        return wrap_to_width(arr, t.element)
    dtype = dtype_of(t)
    return wrap_to_width(np.frombuffer(data, dtype, 1, off).reshape(()).copy(), t)


def zero_value(t):
    """The all-zero value of a type (also what undef and poison are, for determinism)."""
    if LT.is_pointer(t):
        return NULL
    if isinstance(t, LT.LLVMStructType):
        return tuple(zero_value(f) for f in (t.body or ()))
    if isinstance(t, LT.LLVMArrayType):
        return [zero_value(t.element) for _ in range(t.size)]
    if isinstance(t, T.VectorType) and LT.is_pointer(t.element):
        out = np.empty(t.shape, dtype=object)
        out[...] = NULL
        return out
    if isinstance(t, T.VectorType):
        return np.zeros(t.shape, dtype_of(t.element))
    return np.zeros((), dtype_of(t))


# ---- allocations -------------------------------------------------------------------------
@dataclass
class Allocation:
    id: int
    base: int            # numeric address of byte 0
    data: np.ndarray     # uint8, the bytes
    kind: str            # "stack", "heap", "global", "function", or a caller's word ("argument")
    name: str = ""       # global or function symbol
    freed: bool = False
    readonly: bool = False

    @property
    def size(self) -> int:
        return len(self.data)

    def describe(self) -> str:
        what = {"stack": "stack allocation (llvm.alloca)", "heap": "heap allocation",
                "global": f"global @{self.name}", "function": f"function @{self.name}"}.get(
            self.kind, f"{self.kind} allocation{' ' + self.name if self.name else ''}")
        if self.kind == "function":
            return what
        returned = " (its function has returned)" if self.kind == "stack" and self.freed else ""
        return f"{what} of {self.size} byte(s){returned}"


class Memory:
    """All allocations of one interpreter run."""

    BASE = 0x10000
    GAP = 64

    def __init__(self):
        self.allocs: dict[int, Allocation] = {}
        self._bases: list[int] = []   # sorted base addresses (allocations are never moved)
        self._ids: list[int] = []
        self._next = self.BASE
        self.globals: dict[str, Pointer] = {}
        self.stack: list[int] = []    # ids of live llvm.alloca allocations, innermost call last

    # -- allocate and free ---------------------------------------------------------------
    def allocate(self, size: int, kind: str, align: int = 16, name: str = "") -> Pointer:
        if size < 0:
            raise MemoryAccessError(f"negative allocation size {size}")
        check_memory(size, f"a {kind} allocation ({size} bytes)")
        align = max(int(align or 1), 64)
        base = (self._next + align - 1) // align * align
        ident = len(self.allocs) + 1
        self.allocs[ident] = Allocation(ident, base, np.zeros(int(size), np.uint8), kind, name)
        self._bases.append(base)
        self._ids.append(ident)
        self._next = base + int(size) + self.GAP
        return Pointer(ident, 0)

    def free(self, ptr: Pointer, what: str = "free") -> None:
        if ptr.is_null:
            return  # free(NULL) does nothing
        a = self.allocs.get(ptr.alloc)
        if a is None or ptr.offset != 0 or a.kind != "heap":
            raise MemoryAccessError(f"{what}: {ptr} is not the start of a heap allocation")
        if a.freed:
            raise MemoryAccessError(f"{what}: double free of {a.describe()}")
        a.freed = True

    # -- pointers and addresses --------------------------------------------------------------
    def address_of(self, ptr) -> int:
        if not isinstance(ptr, Pointer):
            raise MemoryAccessError(f"expected a pointer, got {ptr!r}")
        if ptr.alloc == 0:
            return ptr.offset
        return self.allocs[ptr.alloc].base + ptr.offset

    def pointer_at(self, address: int) -> Pointer:
        """The pointer an integer address denotes (inttoptr, a pointer loaded from memory)."""
        address = int(address) & ((1 << 64) - 1)
        i = bisect.bisect_right(self._bases, address) - 1
        if i >= 0:
            a = self.allocs[self._ids[i]]
            if address <= a.base + a.size:  # one past the end still belongs to it
                return Pointer(a.id, address - a.base)
        return Pointer(0, address)

    def function_pointer(self, name: str) -> Pointer:
        key = "fn:" + name
        if key not in self.globals:
            self.globals[key] = self.allocate(0, "function", 64, name)
        return self.globals[key]

    def function_at(self, ptr) -> Optional[str]:
        if not isinstance(ptr, Pointer) or ptr.offset != 0:
            return None
        a = self.allocs.get(ptr.alloc)
        return a.name if a is not None and a.kind == "function" else None

    # -- access ---------------------------------------------------------------------------
    def checked(self, ptr, size: int, what: str, write: bool = False) -> Allocation:
        """The allocation `size` bytes at `ptr` lie in, or a MemoryAccessError."""
        if not isinstance(ptr, Pointer):
            raise MemoryAccessError(f"{what}: expected a pointer, got {ptr!r}")
        if ptr.alloc == 0:
            if ptr.offset == 0:
                raise MemoryAccessError(f"{what}: null pointer dereference")
            raise MemoryAccessError(f"{what}: address {ptr.offset:#x} is not in any allocation")
        a = self.allocs[ptr.alloc]
        if a.freed:
            raise MemoryAccessError(f"{what}: use after free of {a.describe()}")
        if a.kind == "function":
            raise MemoryAccessError(f"{what}: {a.describe()} is not data")
        if ptr.offset < 0 or ptr.offset + size > a.size:
            raise MemoryAccessError(f"{what}: out of bounds: {size} byte(s) at offset {ptr.offset} of "
                               f"{a.describe()}")
        if write and a.readonly:
            raise MemoryAccessError(f"{what}: write to constant {a.describe()}")
        return a

    def load(self, ptr, t, what: str = "load"):
        a = self.checked(ptr, size_of(t), what)
        return decode(a.data, ptr.offset, t, self)

    def store(self, ptr, value, t, what: str = "store", force: bool = False) -> None:
        raw = encode(value, t, self)
        a = self.checked(ptr, len(raw), what, write=not force)
        a.data[ptr.offset:ptr.offset + len(raw)] = np.frombuffer(raw, np.uint8)

    def bytes_at(self, ptr, n: int, what: str, write: bool = False) -> np.ndarray:
        """A view of `n` bytes at `ptr` (checked)."""
        a = self.checked(ptr, n, what, write)
        return a.data[ptr.offset:ptr.offset + n]

    def copy(self, dst, src, n: int, what: str) -> None:
        if n == 0:
            return
        s = self.bytes_at(src, n, what).copy()  # a copy: memmove semantics for overlaps
        self.bytes_at(dst, n, what, write=True)[:] = s

    def fill(self, dst, byte: int, n: int, what: str) -> None:
        if n == 0:
            return
        self.bytes_at(dst, n, what, write=True)[:] = np.uint8(int(byte) & 0xFF)

    def c_string(self, ptr, what: str = "string") -> str:
        a = self.checked(ptr, 1, what)
        rest = a.data[ptr.offset:]
        end = np.flatnonzero(rest == 0)
        if not len(end):
            raise MemoryAccessError(f"{what}: string at {ptr} has no terminating NUL")
        return rest[:end[0]].tobytes().decode("latin-1")


# ---- memref descriptors -------------------------------------------------------------------
def memref_to_descriptor(memory: Memory, array: np.ndarray) -> list:
    """Copy `array` into a fresh heap allocation of `memory`; the pieces of its
    expanded memref descriptor as a lowered function takes them: allocated
    pointer, aligned pointer, offset, sizes..., strides... (int64 0-d arrays)."""
    array = np.asarray(array)
    if array.dtype == np.bool_:
        raise ValueError("memrefs of i1 are stored one byte per element: pass uint8")
    contiguous = np.ascontiguousarray(array)
    ptr = memory.allocate(contiguous.nbytes, "heap", 64)
    memory.allocs[ptr.alloc].data[:] = contiguous.reshape(-1).view(np.uint8)
    item = array.dtype.itemsize
    strides = [s // item for s in contiguous.strides] if contiguous.size else [1] * array.ndim
    pieces = [ptr, ptr, np.array(0, np.int64)]
    pieces += [np.array(d, np.int64) for d in array.shape]
    pieces += [np.array(s, np.int64) for s in strides]
    return pieces


def descriptor_struct(pieces: list) -> tuple:
    """The pieces as the `!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>` value."""
    rank = (len(pieces) - 3) // 2
    return (pieces[0], pieces[1], pieces[2], list(pieces[3:3 + rank]), list(pieces[3 + rank:]))


def descriptor_type(rank: int) -> LT.LLVMStructType:
    """`!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>` (rank 0: no arrays)."""
    body = (LT.PTR, LT.PTR, T.i64)
    if rank:
        body += (LT.LLVMArrayType(rank, T.i64), LT.LLVMArrayType(rank, T.i64))
    return LT.LLVMStructType(body)


def store_descriptor(memory: Memory, pieces: list) -> Pointer:
    """The descriptor stored in a fresh allocation, as the C interface (`_mlir_ciface_*`) passes
    memrefs: a pointer to the descriptor struct."""
    rank = (len(pieces) - 3) // 2
    t = descriptor_type(rank)
    value = descriptor_struct(pieces) if rank else (pieces[0], pieces[1], pieces[2])
    ptr = memory.allocate(size_of(t), "heap", 8)
    memory.store(ptr, value, t, "descriptor")
    return ptr


def descriptor_to_array(memory: Memory, descriptor, dtype, copy: bool = True) -> np.ndarray:
    """The array a memref descriptor denotes: the expanded pieces (as from
    `memref_to_descriptor`) or the struct value. `copy=False` gives a view of
    the memory, so writes go through."""
    if isinstance(descriptor, tuple) and len(descriptor) in (3, 5) and \
            (len(descriptor) == 3 or isinstance(descriptor[3], list)):
        parts = list(descriptor)
        sizes, strides = (parts[3], parts[4]) if len(parts) == 5 else ([], [])
        aligned, offset = parts[1], parts[2]
    else:
        parts = list(descriptor)
        rank = (len(parts) - 3) // 2
        aligned, offset = parts[1], parts[2]
        sizes, strides = parts[3:3 + rank], parts[3 + rank:]
    dtype = np.dtype(dtype)
    sizes = [int(s) for s in sizes]
    strides = [int(s) for s in strides]
    item = dtype.itemsize
    start = aligned + int(offset) * item
    if any(s == 0 for s in sizes):
        return np.zeros(sizes, dtype)
    lo = sum((n - 1) * s for n, s in zip(sizes, strides) if s < 0)
    hi = sum((n - 1) * s for n, s in zip(sizes, strides) if s > 0)
    span = (hi - lo + 1) * item
    raw = memory.bytes_at(start + lo * item, span, "memref descriptor")
    base = raw.view(dtype) if span % item == 0 and raw.ctypes.data % dtype.alignment == 0 else None
    if base is None:
        base = np.frombuffer(raw, dtype)
    view = np.lib.stride_tricks.as_strided(base[-lo:] if lo else base, shape=sizes,
                                           strides=[s * item for s in strides])
    return view.copy() if copy else view
