"""LLVM IR to native code for the host CPU through llvmlite, and loading that code.

`compile_llvm_ir` parses and verifies the IR first (LLVM aborts the process on
some invalid input instead of raising, so nothing unverified reaches codegen),
optimises it at O3 with LLVM's new pass manager (loop and SLP vectorisation on,
tuned for the host CPU and its features, e.g. AVX2 gives `<8 x float>` loops),
and emits an ELF object file. `load_object` links such an object into an MCJIT
engine of its own; external symbols (`malloc`, `free`, libm) resolve against
the running process.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import threading
from dataclasses import dataclass, field
from typing import Optional

import llvmlite.binding as llvm

_lock = threading.Lock()
_codegen_lock = threading.Lock()
_state: dict = {}


class CompileError(Exception):
    """The IR did not parse or verify, or code generation failed."""


def _double_to_narrow_ir(name: str, ty: str, exponent_bits: int, mantissa_bits: int) -> str:
    """LLVM IR of `ty @name(double)`: the double rounded to nearest (ties to even) in an IEEE-style
    format of `exponent_bits` and `mantissa_bits`, on the bits. (Through float it would round
    twice: a double just above a tie of the narrow format can become the tie in float and then
    round to even, the wrong way.) Overflow gives inf, NaN stays NaN (quiet, its sign and top
    payload bits kept), values below the least subnormal round to (signed) zero."""
    width = 1 + exponent_bits + mantissa_bits
    bias = (1 << (exponent_bits - 1)) - 1
    inf = ((1 << exponent_bits) - 1) << mantissa_bits
    shift = 52 - mantissa_bits
    return f"""
define {ty} @{name}(double %x) {{
  %b = bitcast double %x to i64
  %abs = and i64 %b, {(1 << 63) - 1}
  %sign.hi = lshr i64 %b, {64 - width}
  %sign = and i64 %sign.hi, {1 << (width - 1)}
  ; a normal result: the exponent rebiased, the fraction rounded (a carry may reach inf; above, clamp to it)
  %rebiased = sub i64 %abs, {(1023 - bias) << 52}
  %normal.r = call i64 @__mlirtext_round_shift(i64 %rebiased, i64 {shift})
  %over = icmp ugt i64 %normal.r, {inf}
  %normal = select i1 %over, i64 {inf}, i64 %normal.r
  ; a subnormal one: the significand (leading 1 made explicit) in units of the least subnormal
  %e = lshr i64 %abs, 52
  %s.wide = sub i64 {1076 - bias - mantissa_bits}, %e
  %s.big = icmp ugt i64 %s.wide, 63
  %s = select i1 %s.big, i64 63, i64 %s.wide
  %frac = and i64 %abs, {(1 << 52) - 1}
  %m = or i64 %frac, {1 << 52}
  %subnormal = call i64 @__mlirtext_round_shift(i64 %m, i64 %s)
  %is.normal = icmp uge i64 %abs, {(1024 - bias) << 52}
  %finite = select i1 %is.normal, i64 %normal, i64 %subnormal
  %payload.hi = lshr i64 %abs, {shift}
  %payload = and i64 %payload.hi, {(1 << mantissa_bits) - 1}
  %nan = or i64 %payload, {inf | 1 << (mantissa_bits - 1)}
  %is.nan = icmp ugt i64 %abs, {0x7FF << 52}
  %mag = select i1 %is.nan, i64 %nan, i64 %finite
  %bits = or i64 %sign, %mag
  %t = trunc i64 %bits to i{width}
  %r = bitcast i{width} %t to {ty}
  ret {ty} %r
}}
"""


#: Helper functions that LLVM's code generator may call and that neither libc nor libm provide
#: (compiler-rt's; libgcc may lack them): conversions to bf16 and from double to f16, round to
#: nearest even, NaN kept quiet.
RUNTIME_SUPPORT_IR = """
define bfloat @__truncsfbf2(float %x) {
  %b = bitcast float %x to i32
  %nan = fcmp uno float %x, %x
  %hi = lshr i32 %b, 16
  %odd = and i32 %hi, 1
  %bias = add i32 %odd, 32767
  %r = add i32 %b, %bias
  %h = lshr i32 %r, 16
  %q = or i32 %hi, 64
  %s = select i1 %nan, i32 %q, i32 %h
  %t = trunc i32 %s to i16
  %f = bitcast i16 %t to bfloat
  ret bfloat %f
}

; %v >> %s (%s < 64) rounded to nearest, ties to even
define private i64 @__mlirtext_round_shift(i64 %v, i64 %s) {
  %q = lshr i64 %v, %s
  %unit = shl i64 1, %s
  %mask = sub i64 %unit, 1
  %rest = and i64 %v, %mask
  %half = lshr i64 %unit, 1
  %above = icmp ugt i64 %rest, %half
  %tie = icmp eq i64 %rest, %half
  %odd = trunc i64 %q to i1
  %tie.odd = and i1 %tie, %odd
  %up = or i1 %above, %tie.odd
  %inc = zext i1 %up to i64
  %r = add i64 %q, %inc
  ret i64 %r
}
""" + _double_to_narrow_ir("__truncdfbf2", "bfloat", 8, 7) + _double_to_narrow_ir("__truncdfhf2", "half", 5, 10)

#: The functions of RUNTIME_SUPPORT_IR that loaded objects may call.
RUNTIME_SUPPORT_FUNCTIONS = ("__truncsfbf2", "__truncdfbf2", "__truncdfhf2")


def _init() -> None:
    with _lock:
        if _state.get("ready"):
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        libm = ctypes.util.find_library("m")
        if libm:  # expf, tanhf, ... for code that still calls libm
            llvm.load_library_permanently(libm)
        _state["ready"] = True
    _install_runtime_support()


def _install_runtime_support() -> None:
    """Compile RUNTIME_SUPPORT_IR once and make its functions resolvable by every loaded object."""
    with _lock:
        if "support" in _state:
            return
        module = llvm.parse_assembly(RUNTIME_SUPPORT_IR)
        module.verify()
        tm = llvm.Target.from_default_triple().create_target_machine(opt=2)
        engine = llvm.create_mcjit_compiler(module, tm)
        engine.finalize_object()
        for fn in RUNTIME_SUPPORT_FUNCTIONS:
            llvm.add_symbol(fn, engine.get_function_address(fn))
        _state["support"] = (engine, tm)  # kept alive for the process's lifetime


def _symbol_available(name: str) -> bool:
    if llvm.address_of_symbol(name):
        return True
    try:
        getattr(_process(), name)
        return True
    except AttributeError:
        return False


def _process():
    handle = _state.get("process")
    if handle is None:
        handle = _state["process"] = ctypes.CDLL(None)
    return handle


def host_target_machine(opt_level: int = 3) -> "llvm.TargetMachine":
    """A target machine for this CPU with all its features. Objects use the large code model with
    absolute 64-bit relocations, so they link at any address: with the small model, MCJIT places
    an object's code and constant sections in separate mappings, which in a long-lived process can
    land over 2 GiB apart, and RuntimeDyld aborts the process on the 32-bit relocation between them."""
    _init()
    target = llvm.Target.from_default_triple()
    features = llvm.get_host_cpu_features().flatten()
    if host_vector_floats() == 16:   # vectorise loops 16 floats wide (LLVM's tuning stops at 8 by default)
        features += ",-prefer-256-bit"
    return target.create_target_machine(cpu=llvm.get_host_cpu_name(), features=features,
                                        opt=opt_level, reloc="static", codemodel="large")


def host_vector_floats() -> int:
    """Floats in the widest vector register of this CPU that hand-shaped kernels use: 16 with
    AVX-512 (32 zmm registers), else 8 (AVX2's 16 ymm registers)."""
    width = _state.get("vector_floats")
    if width is None:
        _init()
        width = _state["vector_floats"] = 16 if llvm.get_host_cpu_features().get("avx512f") else 8
    return width


@dataclass
class NativeObject:
    object_code: bytes            # ELF object for the host
    llvm_ir: str                  # the optimised IR, for inspection
    functions: list[str]          # exported (defined, externally visible) function names
    assembly: Optional[str] = None
    triple: str = ""
    cpu: str = ""


def parse_ir(ir_text: str) -> "llvm.ModuleRef":
    """Parse and verify; CompileError with LLVM's message when the IR is not valid."""
    _init()
    try:
        module = llvm.parse_assembly(ir_text)
    except RuntimeError as e:
        raise CompileError(f"LLVM IR does not parse: {str(e).strip()}") from None
    try:
        module.verify()
    except RuntimeError as e:
        raise CompileError(f"LLVM IR does not verify: {str(e).strip()}") from None
    return module


def optimize(module: "llvm.ModuleRef", tm: "llvm.TargetMachine", opt_level: int = 3) -> None:
    """LLVM's standard O<n> pipeline with loop and SLP vectorisation (in place)."""
    if opt_level <= 0:
        return
    pto = llvm.create_pipeline_tuning_options(speed_level=min(opt_level, 3))
    pto.loop_vectorization = opt_level >= 2
    pto.slp_vectorization = opt_level >= 2
    pto.loop_interleaving = opt_level >= 2
    pto.loop_unrolling = opt_level >= 2
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    pm.run(module, pb)


def compile_llvm_ir(ir_text: str, *, opt_level: int = 3, name: str = "kernels", assembly: bool = False) -> NativeObject:
    """Optimise `ir_text` for the host CPU and emit an object file (one compilation at a time:
    llvmlite's modules share LLVM's global context)."""
    _init()
    with _codegen_lock:
        return _compile(ir_text, opt_level, name, assembly)


def _compile(ir_text: str, opt_level: int, name: str, assembly: bool) -> NativeObject:
    module = parse_ir(ir_text)
    tm = host_target_machine(opt_level)
    module.name = name
    module.triple = tm.triple
    module.data_layout = str(tm.target_data)
    optimize(module, tm, opt_level)
    try:
        module.verify()
    except RuntimeError as e:  # an optimiser bug, but never a crash
        raise CompileError(f"optimised IR does not verify: {e}") from None
    functions = [f.name for f in module.functions
                 if not f.is_declaration and f.linkage in (llvm.Linkage.external,)]
    obj = tm.emit_object(module)
    asm = tm.emit_assembly(module) if assembly else None
    return NativeObject(bytes(obj), str(module), functions, asm, tm.triple, llvm.get_host_cpu_name())


@dataclass
class NativeLibrary:
    """An object file linked into memory: `.address(name)` gives a function's entry point."""
    engine: object
    _keep: list = field(default_factory=list)

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        if not addr:
            raise KeyError(f"no function '{name}' in the loaded object")
        return addr

    def function(self, name: str, restype, *argtypes):
        """`name` as a ctypes function (calls release the GIL)."""
        return ctypes.CFUNCTYPE(restype, *argtypes)(self.address(name))


def jit_ir(ir_text: str, opt_level: int = 0) -> NativeLibrary:
    """`ir_text` compiled straight into an MCJIT engine of its own, for small glue code the
    runtime builds itself (at O0 a few functions take milliseconds; an object through
    `compile_llvm_ir` and `load_object` takes tens)."""
    module = parse_ir(ir_text)
    tm = host_target_machine(opt_level)
    module.triple = tm.triple
    with _lock:
        engine = llvm.create_mcjit_compiler(module, tm)
        engine.finalize_object()
    return NativeLibrary(engine, [tm])


def check_object(object_code: bytes) -> None:
    """Refuse bytes that are not a well-formed relocatable ELF object for this machine: LLVM's
    object loader trusts the file and crashes the process on a malformed one. (Checked: header,
    class, byte order, type, machine, and that every section lies inside the file. The module
    file's checksums are what catch corruption inside a section.)"""
    import struct
    import sys
    data = bytes(object_code)
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise CompileError("not an ELF object file")
    if data[4] != 2 or data[5] != (1 if sys.byteorder == "little" else 2):
        raise CompileError("not a 64-bit ELF object of this machine's byte order")
    e = "<" if data[5] == 1 else ">"
    e_type, e_machine = struct.unpack_from(e + "HH", data, 16)
    if e_type != 1:
        raise CompileError("not a relocatable object (ELF type %d)" % e_type)
    host = _host_elf_machine()
    if host is not None and e_machine != host:
        raise CompileError(f"an object for ELF machine {e_machine}, this machine is {host}")
    e_shoff, = struct.unpack_from(e + "Q", data, 40)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from(e + "HHH", data, 58)
    if e_shentsize != 64 or e_shnum == 0 or e_shstrndx >= e_shnum or e_shoff + e_shnum * 64 > len(data):
        raise CompileError("the object's section table is truncated or malformed")
    for i in range(e_shnum):
        sh_type, = struct.unpack_from(e + "I", data, e_shoff + i * 64 + 4)
        sh_offset, sh_size = struct.unpack_from(e + "QQ", data, e_shoff + i * 64 + 24)
        if sh_type != 8 and sh_offset + sh_size > len(data):  # 8: SHT_NOBITS (.bss) takes no file space
            raise CompileError(f"section {i} of the object lies outside the file (truncated?)")


def undefined_symbols(object_code: bytes) -> list[str]:
    """The global symbols an ELF object uses but does not define (from its .symtab)."""
    import struct
    data = bytes(object_code)
    e = "<" if data[5] == 1 else ">"
    e_shoff, = struct.unpack_from(e + "Q", data, 40)
    _, e_shnum, _ = struct.unpack_from(e + "HHH", data, 58)
    sections = []
    for i in range(e_shnum):
        sh_type, = struct.unpack_from(e + "I", data, e_shoff + i * 64 + 4)
        sh_offset, sh_size, sh_link = struct.unpack_from(e + "QQI", data, e_shoff + i * 64 + 24)
        sections.append((sh_type, sh_offset, sh_size, sh_link))
    names = []
    for sh_type, offset, size, link in sections:
        if sh_type != 2:  # SHT_SYMTAB
            continue
        str_off, str_size = sections[link][1], sections[link][2]
        for k in range(size // 24):
            st_name, st_info, _, st_shndx = struct.unpack_from(e + "IBBH", data, offset + k * 24)
            if st_shndx == 0 and st_info >> 4 in (1, 2) and 0 < st_name < str_size:
                end = data.index(b"\0", str_off + st_name)
                names.append(data[str_off + st_name:end].decode("ascii", "replace"))
    return names


def _host_elf_machine():
    import platform
    return {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183}.get(platform.machine().lower())


def load_object(object_code: bytes) -> NativeLibrary:
    """Link an object file (from `compile_llvm_ir`) into a fresh MCJIT engine (CompileError when the
    bytes are not a well-formed object for this machine)."""
    _init()
    check_object(object_code)
    missing = [n for n in undefined_symbols(object_code) if n != "_GLOBAL_OFFSET_TABLE_" and not _symbol_available(n)]
    if missing:  # MCJIT would resolve them to address 0 and the first call would crash
        raise CompileError(f"the object needs {', '.join(repr(n) for n in missing)}, which this process does not "
                           "provide")
    tm = host_target_machine()
    backing = llvm.parse_assembly("")
    backing.triple = tm.triple
    with _lock:
        engine = llvm.create_mcjit_compiler(backing, tm)
        try:
            engine.add_object_file(llvm.ObjectFileRef.from_data(bytes(object_code)))
        except Exception as e:  # noqa: BLE001 - a corrupt object: refuse it, never abort
            raise CompileError(f"cannot load the object file: {e}") from None
        engine.finalize_object()
    return NativeLibrary(engine, [tm, backing])
