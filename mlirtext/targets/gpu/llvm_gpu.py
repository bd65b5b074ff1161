"""cuda, rocm and opencl-spirv: the loops-level kernels as LLVM IR for NVPTX, AMDGPU and SPIR-V.

The kernels are lowered and translated exactly as for the CPU (`convert-loops-to-llvm`,
`targets/llvm_ir.py`); each then becomes an internal, always-inlined body called by a GPU entry
point written here, which holds what differs per target:

- the calling convention (`ptx_kernel`, `amdgpu_kernel`, `spir_kernel`) and buffer parameters in
  the global address space (`ptr addrspace(1)`, cast to generic pointers for the body; LLVM's
  address space inference turns the accesses back into global ones once the body is inlined);
- the global thread id (`llvm.nvvm.read.ptx.sreg.ctaid.x/tid.x`, `llvm.amdgcn.workgroup.id.x/
  workitem.id.x` times the fixed workgroup size, OpenCL's `get_global_id(0)`), checked against
  the kernel's thread count; a split kernel gets the row range `[gid, gid + 1)` (see threads.py);
- a tiled kernel (tiling.py) gets its workgroup's x, y, z ids and its thread's x, y ids; its
  `__workgroup_` tiles live in address space 3 and its barrier is the target's.

Temporary buffers (`malloc` on the CPU) become private `alloca`s in the body's entry block (a GPU
thread has no heap; see _hoist_temporaries for why the entry block), except a large one in a
kernel that is not tiled: that is the thread's slice of a scratch buffer the device allocates
(threads x its bytes) and passes after the outputs, as the Vulkan emitter does (see
_scratch_temporaries and the launch record's `scratch` list).

OpenCL (SPIR-V's Kernel execution model, Physical64 addressing) differs from the other two:
address space 0 is private memory there, the generic one (4) needs OpenCL 2.0, and LLVM's SPIR-V
backend infers no address spaces. So the bodies get no generic pointers: each pointer is given
the address space of what it points into (`_opencl_address_spaces`: a buffer parameter global
(1), a temporary private (0), a tile workgroup (3), a constant `__constant` (2)), which the
translated IR makes simple (pointers come only from parameters, allocations, globals and
getelementptr; a memcpy / memset is then named for its pointers' spaces). An i1 in memory is a
byte (OpenCL has no bool in global or constant memory), and llvm.maximum / minimum are written
out (the back-end makes them OpenCL's fmax / fmin, which drop NaNs). Ids and the barrier are OpenCL builtins by their mangled names
(`_Z13get_global_idj`, `_Z7barrierj`), which the backend turns into BuiltIn variables and
OpControlBarrier.
Code generation runs in a child process (codegen.py): LLVM aborts instead of raising on
what it cannot select, and that must not take the compiler down.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

from ...ir.core import Operation
from .executable import GpuCompileError

TRIPLES = {"cuda": "nvptx64-nvidia-cuda", "rocm": "amdgcn-amd-amdhsa", "opencl-spirv": "spirv64v1.0-unknown-unknown"}
#: OpenCL builtins the entry points and the barrier call (the SPIR-V backend knows them by name).
_OPENCL_BUILTINS = ("_Z13get_global_idj", "_Z12get_group_idj", "_Z12get_local_idj", "_Z7barrierj")

_DEFINE = re.compile(r"^define (?:\w+ )*void @([\w.$]+)\((.*)\) \{$", re.M)
_DECLARE = re.compile(r"^declare [^@]*@([\w.$]+)\(", re.M)


def emit_kernels(loops: Operation, launches: dict, target: str, arch: str, workgroup_size: int):
    """(LLVM IR, {kernel: assembly}, {kernel: code bytes}, {kernel: [scratch buffer bytes]}) for
    `target` (cuda, rocm, opencl-spirv)."""
    from ...targets.llvm_ir import TranslateError, translate_module
    from .threads import run_pipeline
    module = loops.clone()
    run_pipeline(module, "convert-loops-to-llvm,canonicalize,cse", GpuCompileError)
    try:
        ir = translate_module(module)
    except TranslateError as e:
        raise GpuCompileError(f"{target}: translation to LLVM IR: {e}") from None
    ir = _workgroup_memory(ir, target)
    _check_calls(ir, target)
    ir, strides = _scratch_temporaries(ir, launches)
    ir = _private_temporaries(ir, target)
    ir = gpu_module(ir, launches, target, workgroup_size, strides)
    if target == "opencl-spirv":
        ir = _ieee_min_max(_bools_as_bytes(_opencl_address_spaces(ir)))
    entries = {entry_symbol(name, target): name for name in launches}
    assembly, code = generate(ir, list(entries), target, arch)
    scratch = {name: [launches[name].threads * stride for stride in s] for name, s in strides.items()}
    return (ir, {entries[e]: a for e, a in assembly.items()}, {entries[e]: c for e, c in code.items()},
            scratch)


def entry_symbol(kernel: str, target: str) -> str:
    """The symbol of a kernel's entry point. PTX identifiers are letters, digits, `_` and `$` (a
    letter or `_` first), where MLIR symbols also have `.` (`@i8i8.i32`) and more: LLVM's NVPTX
    backend renames only internal symbols, so an entry point gets `_$_` for each other character,
    as LLVM spells them."""
    if target != "cuda":
        return kernel
    symbol = re.sub(r"[^A-Za-z0-9_$]", "_$_", kernel)
    return symbol if re.match(r"[A-Za-z_]", symbol) else "_" + symbol


def _check_calls(ir: str, target: str) -> None:
    """A call to a library function (expm1f, atan2f, ...) has nothing to link against on a GPU."""
    libcalls = [n for n in _DECLARE.findall(ir)
                if not n.startswith("llvm.") and n not in ("malloc", "free", *_OPENCL_BUILTINS)]
    if not libcalls:
        return
    for m in re.finditer(r"^define [^@]*@([\w.$]+)\(.*?^}$", ir, re.M | re.S):
        called = [n for n in libcalls if f"@{n}(" in m.group(0)]
        if called:
            raise GpuCompileError(f"kernel @{m.group(1)}: calls {', '.join('@' + c for c in called)}, which has "
                                  f"no {target} implementation (no math library on the GPU)")


#: The workgroup barrier of a tiled kernel (tiling.py) per target: convergent, so that no
#: optimisation moves it under a condition. AMDGPU's s.barrier orders no memory by itself: the
#: workgroup-scope fences around it make the tile stores visible to the other threads.
_BARRIERS = {
    "cuda": "  call void @llvm.nvvm.barrier0()\n",
    "rocm": ('  fence syncscope("workgroup") release\n  call void @llvm.amdgcn.s.barrier()\n'
             '  fence syncscope("workgroup") acquire\n'),
    "opencl-spirv": "  call void @_Z7barrierj(i32 1)\n",   # 1: CLK_LOCAL_MEM_FENCE
}
_BARRIER_DECLS = {"cuda": "declare void @llvm.nvvm.barrier0() convergent\n",
                  "rocm": "declare void @llvm.amdgcn.s.barrier() convergent\n",
                  "opencl-spirv": "declare void @_Z7barrierj(i32) convergent\n"}


def _workgroup_memory(ir: str, target: str) -> str:
    """A tiled kernel's conventions in LLVM IR: its `__workgroup_` globals in address space 3
    (shared / LDS memory, no initialiser), used through generic pointers as everything else is,
    and the barrier function defined as the target's barrier."""
    from .tiling import BARRIER, WORKGROUP_PREFIX
    globals_ = re.compile(rf"^@({WORKGROUP_PREFIX}[\w.$]+) = [^\[]*(\[\d+ x [^\]]+\]).*$", re.M)
    names = []

    def shared(m):
        names.append(m.group(1))
        return f"@{m.group(1)} = internal addrspace(3) global {m.group(2)} undef, align 16"
    ir = globals_.sub(shared, ir)
    if target != "opencl-spirv":   # (OpenCL has no generic pointers here: see _opencl_address_spaces)
        for name in names:
            ir = re.sub(rf"ptr @{re.escape(name)}\b", f"ptr addrspacecast (ptr addrspace(3) @{name} to ptr)", ir)
    declaration = re.compile(rf"^declare void @{BARRIER}\(\)\s*$", re.M)
    if declaration.search(ir):
        ir = declaration.sub(f"define internal void @{BARRIER}() convergent alwaysinline {{\n"
                             f"{_BARRIERS[target]}  ret void\n}}\n{_BARRIER_DECLS[target]}", ir)
    return ir


#: A temporary of more bytes than this (per thread) is a slice of a scratch buffer in global
#: memory rather than private memory. Private memory is global memory underneath on these GPUs,
#: but the runtime reserves a kernel's whole frame for every thread it may run at once: AMDGPU
#: refuses frames over 128 KiB (IREE's `unpack *_large` tests keep 128 KiB), large frames cut
#: occupancy on every target, and pocl puts each work-item's private memory on a CPU stack.
#: 16 KiB keeps the small per-thread arrays (a row, a tile) private and fast.
SCRATCH_THRESHOLD = 16 << 10
#: Slices start at multiples of this (the alignment the private allocas had).
SCRATCH_ALIGN = 16


def _scratch_temporaries(ir: str, launches: dict) -> tuple[str, dict]:
    """(`ir`, {kernel: [bytes of each thread's slice]}): in each kernel that is not tiled, every
    temporary over SCRATCH_THRESHOLD becomes a trailing `ptr` parameter (after the outputs), the
    entry point passing this thread's slice of a scratch buffer there (see _entry). The threads'
    buffers must fit in SCRATCH_LIMIT, as on Vulkan; else the temporaries stay private."""
    from .spirv import SCRATCH_LIMIT
    strides = {}

    def kernel(m):
        function = _hoist_temporaries(m.group(0))
        name = re.search(r"@([\w.$]+)\(", function).group(1)
        launch = launches.get(name)
        if launch is None or launch.workgroup:   # (a tiled kernel's threads have no one linear id)
            return function
        large = [(t.group(1), int(t.group(2))) for t in _SIZED_TEMPORARY.finditer(function)
                 if int(t.group(2)) > SCRATCH_THRESHOLD]
        sizes = [-(-n // SCRATCH_ALIGN) * SCRATCH_ALIGN for _, n in large]
        if not large or launch.threads * sum(sizes) > SCRATCH_LIMIT:
            return function
        strides[name] = sizes
        header, body = function.split("\n", 1)
        for value, _ in large:   # the parameter takes the temporary's name: its uses stay as they are
            body = re.sub(rf"^[ \t]*{re.escape(value)} = call ptr @malloc\(i64 \d+\)\n", "", body, flags=re.M)
        added = ", ".join(f"ptr {value}" for value, _ in large)
        header = re.sub(r"\((.*)\) \{$", lambda h: f"({h.group(1)}{', ' if h.group(1) else ''}{added}) {{", header)
        return f"{header}\n{body}"
    return _FUNCTION.sub(kernel, ir), strides


def _private_temporaries(ir: str, target: str) -> str:
    ir = _FUNCTION.sub(lambda m: _hoist_temporaries(m.group(0)), ir)
    if target == "rocm":   # AMDGPU's private memory is address space 5
        ir = re.sub(r"^(\s*)(%[\w.$]+) = call ptr @malloc\(i64 (\d+)\)",
                    r"\1\2.private = alloca i8, i64 \3, align 16, addrspace(5)\n"
                    r"\1\2 = addrspacecast ptr addrspace(5) \2.private to ptr", ir, flags=re.M)
    elif target == "opencl-spirv":   # private memory is address space 0; the SPIR-V backend wants a fixed size
        ir = re.sub(r"call ptr @malloc\(i64 (\d+)\)", r"alloca [\1 x i8], align 16", ir)
    ir = re.sub(r"call ptr @malloc\(i64 (\d+)\)", r"alloca i8, i64 \1, align 16", ir)
    ir = re.sub(r"^\s*call void @free\(ptr [^)]*\)\n", "", ir, flags=re.M)
    return re.sub(r"^declare (ptr @malloc|void @free)\(.*\n", "", ir, flags=re.M)


_TEMPORARY = re.compile(r"^[ \t]*%[\w.$]+ = call ptr @malloc\(i64 \d+\)\n", re.M)
_SIZED_TEMPORARY = re.compile(r"^[ \t]*(%[\w.$]+) = call ptr @malloc\(i64 (\d+)\)$", re.M)


def _hoist_temporaries(function: str) -> str:
    """`function` with its temporaries (fixed-size mallocs, made allocas next) allocated in its
    entry block. An alloca anywhere else is a dynamic stack allocation: inlining the body into
    its entry point then brackets it with stacksave/stackrestore, which NVPTX has only from PTX
    ISA 7.3, and inside a loop it would take more stack on every iteration. One buffer for all
    iterations keeps the meaning: the bufferizer gives loop-carried tensors buffers allocated
    before the loop (memrefs never flow through loop-carried values or phis), so a temporary
    allocated inside a loop is dead when its iteration ends."""
    header, body = function.split("\n", 1)
    temporaries = "".join(_TEMPORARY.findall(body))
    if not temporaries:
        return function
    body = _TEMPORARY.sub("", body)
    label = re.match(r"[\w.$-]+:\n", body)   # (the entry block's label, when it has one)
    at = label.end() if label else 0
    return f"{header}\n{body[:at]}{temporaries}{body[at:]}"


_GLOBAL = re.compile(r"^@([\w.$]+) = ([^=]*?)(constant|global) ", re.M)
_FUNCTION = re.compile(r"^define [^\n]*\{$.*?^\}$", re.M | re.S)
_POINTER_USE = re.compile(r"\bptr ([%@][\w.$]+)")


def _opencl_address_spaces(ir: str) -> str:
    """Every plain pointer of the module in the address space of what it points into (OpenCL's
    address spaces are distinct: see the module's docstring). Module constants go to address
    space 2 (`__constant`), other module variables to 1. Raises GpuCompileError for a pointer
    whose address space cannot be told (one from a phi, a select, a load...)."""
    spaces = {}

    def place(m):
        given = re.search(r"addrspace\((\d+)\)", m.group(2))
        spaces["@" + m.group(1)] = int(given.group(1)) if given else 2 if m.group(3) == "constant" else 1
        prefix = m.group(2) if given else f"{m.group(2)}addrspace({spaces['@' + m.group(1)]}) "
        return f"@{m.group(1)} = {prefix}{m.group(3)} "
    ir = _GLOBAL.sub(place, ir)
    return _memory_intrinsics(_FUNCTION.sub(lambda m: _place_pointers(m.group(0), spaces), ir))


_MEMORY_CALL = re.compile(r"\bcall void @llvm\.(memcpy|memmove|memset)\.[\w.]+\((.*)\)$", re.M)
_ARGUMENT_TYPE = re.compile(r"(ptr(?: addrspace\(\d+\))?|i\d+) [^,]+")


def _memory_intrinsics(ir: str) -> str:
    """`ir` with each memcpy / memmove / memset named for the address spaces its pointers now have
    (`llvm.memcpy.p1.p2.i64`): the intrinsic's name spells its pointer types, and a call through
    the translated `p0` name with placed pointers is rejected by LLVM's verifier ("Intrinsic
    called with incompatible signature"). Each new name gets its declaration."""
    declared = set(_DECLARE.findall(ir))
    declarations = {}

    def renamed(m):
        kind, types = m.group(1), _ARGUMENT_TYPE.findall(m.group(2))
        pointers = [t for t in types if t.startswith("ptr")]
        name = "llvm.{}.{}.{}".format(kind, ".".join(f"p{re.sub(r'[^0-9]', '', t) or 0}" for t in pointers),
                                      types[2])   # (the length's type)
        if name not in declared:
            declarations[name] = f"declare void @{name}({', '.join(types)})"
        return f"call void @{name}({m.group(2)})"
    ir = _MEMORY_CALL.sub(renamed, ir)
    return ir + "".join(f"\n{d}\n" for d in declarations.values())


def _place_pointers(function: str, global_spaces: dict) -> str:
    header, body = function.split("\n", 1)
    spaces = dict(global_spaces)
    spaces.update({name: 1 for name in re.findall(r"\bptr (?:noalias )?(%[\w.$]+)", header)})   # buffers
    spaces.update({name: 0 for name in re.findall(r"^\s*(%[\w.$]+) = alloca ", body, re.M)})
    geps = re.findall(r"^\s*(%[\w.$]+) = getelementptr (?:inbounds )?[^,]+, ptr ([%@][\w.$]+)", body, re.M)
    changed = True
    while changed:   # (a base may be defined further down the text than its use)
        changed = False
        for result, base in geps:
            if result not in spaces and base in spaces:
                spaces[result] = spaces[base]
                changed = True
    unknown = sorted({name for name in _POINTER_USE.findall(function) if name not in spaces})
    if unknown:
        name = re.search(r"@([\w.$]+)\(", header).group(1)
        raise GpuCompileError(f"opencl-spirv: @{name}: cannot tell the address space of {', '.join(unknown[:4])}")

    def typed(m):
        space = spaces[m.group(1)]
        return m.group(0) if space == 0 else f"ptr addrspace({space}) {m.group(1)}"
    return _POINTER_USE.sub(typed, function)


_BOOL_GLOBAL = re.compile(r"^@[\w.$]+ = .*\bi1\b.*$", re.M)
_BOOL_LOAD = re.compile(r"^(\s*)(%[\w.$]+) = load i1, (.*)$", re.M)
_BOOL_STORE = re.compile(r"^(\s*)store i1 ([^,]+), (.*)$", re.M)


def _bools_as_bytes(ir: str) -> str:
    """`ir` with every i1 in memory held in a byte (0 or 1, the VM's form of a bool element):
    OpenCL allows no OpTypeBool in externally visible memory (spirv-val: "If OpTypeBool is
    stored in conjunction with OpVariable, it can only be used with non-externally visible
    shader Storage Classes"). A load reads the byte and compares it with 0; a store writes the
    bool zero-extended; i1 constants and element types of memory become i8 (same size in
    memory, so address arithmetic is unchanged)."""
    def global_bytes(m):
        line = re.sub(r"\bi1 true\b", "i8 1", re.sub(r"\bi1 false\b", "i8 0", m.group(0)))
        return re.sub(r"\bi1\b", "i8", line)
    ir = _BOOL_GLOBAL.sub(global_bytes, ir)
    ir = re.sub(r"(getelementptr (?:inbounds )?)i1,", r"\1i8,", ir)
    ir = re.sub(r"x i1\]", "x i8]", ir)
    ir = _BOOL_LOAD.sub(lambda m: f"{m.group(1)}{m.group(2)}.byte = load i8, {m.group(3)}\n"
                                  f"{m.group(1)}{m.group(2)} = icmp ne i8 {m.group(2)}.byte, 0", ir)
    count = itertools.count()

    def store(m):
        byte = f"%bool.byte.{next(count)}"
        return f"{m.group(1)}{byte} = zext i1 {m.group(2)} to i8\n{m.group(1)}store i8 {byte}, {m.group(3)}"
    return _BOOL_STORE.sub(store, ir)


_MIN_MAX = re.compile(r"^(\s*)(%[\w.$]+) = call (?:\w+ )*(float|double) @llvm\.(maximum|minimum)\.f(?:32|64)"
                      r"\((?:float|double) ([^,]+), (?:float|double) ([^)]+)\)$", re.M)


def _ieee_min_max(ir: str) -> str:
    """`ir` with llvm.maximum / llvm.minimum on float and double written out: the SPIR-V back-end
    makes them OpenCL's fmax / fmin, which return the other operand for a NaN (and either zero
    for -0 and +0), where these return NaN (and +0 for the maximum, -0 for the minimum). Written
    out: the greater (lesser) by an ordered compare; for equal operands their bits ANDed (ORed),
    which keeps a value and orders the zeros; for unordered ones a + b, a NaN."""
    def expand(m):
        pad, r, t, kind, a, b = m.groups()
        i = "i32" if t == "float" else "i64"
        pick, bits = ("ogt", "and") if kind == "maximum" else ("olt", "or")
        return "\n".join(pad + line for line in (
            f"{r}.pick = fcmp {pick} {t} {a}, {b}", f"{r}.by.order = select i1 {r}.pick, {t} {a}, {t} {b}",
            f"{r}.a.bits = bitcast {t} {a} to {i}", f"{r}.b.bits = bitcast {t} {b} to {i}",
            f"{r}.both = {bits} {i} {r}.a.bits, {r}.b.bits", f"{r}.equal.value = bitcast {i} {r}.both to {t}",
            f"{r}.equal = fcmp oeq {t} {a}, {b}",
            f"{r}.ordered = select i1 {r}.equal, {t} {r}.equal.value, {t} {r}.by.order",
            f"{r}.nan = fcmp uno {t} {a}, {b}", f"{r}.nan.value = fadd {t} {a}, {b}",
            f"{r} = select i1 {r}.nan, {t} {r}.nan.value, {t} {r}.ordered"))
    return _MIN_MAX.sub(expand, ir)


def gpu_module(ir: str, launches: dict, target: str, workgroup_size: int, strides: dict) -> str:
    """`ir` with every kernel turned into an internal body and given a GPU entry point; `strides`:
    {kernel: bytes of each thread's slice of its scratch buffers} (_scratch_temporaries)."""
    params = {}
    for m in _DEFINE.finditer(ir):
        if m.group(1) in launches:
            params[m.group(1)] = [p.rsplit(" ", 1)[0].replace(" noalias", "") for p in m.group(2).split(", ") if p]
    missing = [k for k in launches if k not in params]
    if missing:
        raise GpuCompileError(f"{target}: kernels missing from the LLVM IR: {missing}")

    def body(m):
        name = m.group(1)
        if name not in launches:
            return m.group(0)
        return f"define internal void @{name}.body({m.group(2)}) alwaysinline {{"
    ir = _DEFINE.sub(body, ir)
    entries = [_entry(name, params[name], launches[name], target, workgroup_size, strides.get(name, []))
               for name in launches]
    return ir + "\n" + "\n".join(entries) + _DECLS[target]


def _convention(target: str, workgroup_size: int) -> tuple:
    """(calling convention, function attributes) of a kernel entry point."""
    if target == "rocm":
        return "amdgpu_kernel", f' "amdgpu-flat-work-group-size"="1,{workgroup_size}"'
    return {"cuda": "ptx_kernel", "opencl-spirv": "spir_kernel"}[target], ""


def _entry(name: str, types: list, launch, target: str, workgroup_size: int, strides: list) -> str:
    if launch.workgroup:
        return _tiled_entry(name, types, launch, target)
    cc, attrs = _convention(target, workgroup_size)
    params, args, casts = [], [], []
    pairs = len(launch.axes) if launch.split else 0
    range_at = _range_position(types, pairs)
    scratch_at = len(types) - len(strides)   # (the scratch parameters come last)
    for i, t in enumerate(types):
        if range_at <= i < range_at + 2 * pairs:
            continue
        if i >= scratch_at:
            param, cast, arg = _scratch_slice(i, strides[i - scratch_at], target)
            params.append(param)
            casts += cast
            args.append(arg)
        elif t == "ptr":
            param, cast, arg = _buffer(i, target)
            params.append(param)
            casts += cast
            args.append(arg)
        else:
            params.append(f"{t} %a{i}")
            args.append(f"{t} %a{i}")
    indices = []   # the thread's index on each mapped axis, innermost varying fastest
    rest = "%gid"
    for k in reversed(range(pairs)):
        extent = launch.axes[k]
        if k:
            casts += [f"  %idx{k} = urem i64 {rest}, {extent}", f"  %rest{k} = udiv i64 {rest}, {extent}"]
            indices.insert(0, f"%idx{k}")
            rest = f"%rest{k}"
        else:
            indices.insert(0, rest)
    for k, index in enumerate(indices):
        casts.append(f"  %end{k} = add i64 {index}, 1")
    args[range_at:range_at] = [a for k, index in enumerate(indices) for a in (f"i64 {index}", f"i64 %end{k}")]
    return (f"define {cc} void @{entry_symbol(name, target)}({', '.join(params)}){attrs} {{\n"
            f"entry:\n{_global_id(target, workgroup_size)}"
            f"  %inside = icmp ult i64 %gid, {launch.threads}\n"
            f"  br i1 %inside, label %run, label %done\n"
            f"run:\n" + "".join(c + "\n" for c in casts) +
            f"  call void @{name}.body({', '.join(args)})\n  br label %done\n"
            f"done:\n  ret void\n}}\n")


def _buffer(i: int, target: str) -> tuple:
    """(parameter, lines, argument) of the entry point's buffer parameter i: global memory, given
    to the body as a generic pointer (OpenCL: as it is, the body's pointers being placed)."""
    param = f"ptr addrspace(1) noalias %a{i}"
    if target == "opencl-spirv":
        return param, [], f"ptr addrspace(1) %a{i}"
    return param, [f"  %p{i} = addrspacecast ptr addrspace(1) %a{i} to ptr"], f"ptr %p{i}"


def _scratch_slice(i: int, stride: int, target: str) -> tuple:
    """(parameter, lines, argument) of scratch buffer parameter i: the body gets this thread's
    `stride` bytes of it, at gid * stride."""
    param, _, arg = _buffer(i, target)
    lines = [f"  %slice{i}.at = mul i64 %gid, {stride}",
             f"  %slice{i} = getelementptr inbounds i8, ptr addrspace(1) %a{i}, i64 %slice{i}.at"]
    if target == "opencl-spirv":
        return param, lines, f"ptr addrspace(1) %slice{i}"
    return param, lines + [f"  %p{i} = addrspacecast ptr addrspace(1) %slice{i} to ptr"], arg


def _global_id(target: str, workgroup_size: int) -> str:
    """Lines that set %gid (i64), the thread's index in a 1-D launch of `workgroup_size` workgroups."""
    if target == "opencl-spirv":
        return "  %gid = call i64 @_Z13get_global_idj(i32 0)\n"
    group, local = _IDS[target][0], _IDS[target][3]
    return (f"  %group = call i32 @{group}()\n  %local = call i32 @{local}()\n"
            f"  %group64 = zext i32 %group to i64\n  %local64 = zext i32 %local to i64\n"
            f"  %base = mul i64 %group64, {workgroup_size}\n  %gid = add i64 %base, %local64\n")


#: Per target: the workgroup's x, y, z ids and the thread's x, y ids in its workgroup (NVPTX and
#: AMDGPU intrinsics returning i32; OpenCL builtins returning size_t, i64 here, of a dimension).
_IDS = {
    "cuda": [f"llvm.nvvm.read.ptx.sreg.{r}" for r in ("ctaid.x", "ctaid.y", "ctaid.z", "tid.x", "tid.y")],
    "rocm": [f"llvm.amdgcn.{r}" for r in ("workgroup.id.x", "workgroup.id.y", "workgroup.id.z",
                                          "workitem.id.x", "workitem.id.y")],
    "opencl-spirv": [("_Z12get_group_idj", 0), ("_Z12get_group_idj", 1), ("_Z12get_group_idj", 2),
                     ("_Z12get_local_idj", 0), ("_Z12get_local_idj", 1)],
}


def _tiled_entry(name: str, types: list, launch, target: str) -> str:
    """The entry point of a tiled kernel (tiling.py): its i64 parameters are the workgroup's
    x, y, z ids and the thread's x, y ids, read here from the target's registers; every thread
    calls the body (it checks its own bounds: the barriers need all threads)."""
    cc, attrs = _convention(target, launch.workgroup[0] * launch.workgroup[1])
    params, args, lines = [], [], []
    ids = iter(_IDS[target])
    for i, t in enumerate(types):
        if t == "ptr":
            param, cast, arg = _buffer(i, target)
            params.append(param)
            lines += cast
            args.append(arg)
        elif t == "i64":   # (a tiled kernel's only integer parameters are its ids)
            register = next(ids)
            if isinstance(register, tuple):   # an OpenCL builtin and its dimension
                lines.append(f"  %id{i} = call i64 @{register[0]}(i32 {register[1]})")
            else:
                lines += [f"  %r{i} = call i32 @{register}()", f"  %id{i} = zext i32 %r{i} to i64"]
            args.append(f"i64 %id{i}")
        else:
            params.append(f"{t} %a{i}")
            args.append(f"{t} %a{i}")
    return (f"define {cc} void @{entry_symbol(name, target)}({', '.join(params)}){attrs} {{\nentry:\n" + "".join(x + "\n" for x in lines) +
            f"  call void @{name}.body({', '.join(args)})\n  ret void\n}}\n")


def _range_position(types: list, pairs: int) -> int:
    """Where a split kernel's [begin, end) pairs start among its parameters: `distribute` (and
    threads.py) append them to the inputs, results-to-out-params appends the outputs (all
    pointers) after them, so they are the i64s right before the trailing run of pointers."""
    outputs = 0
    for t in reversed(types):
        if t != "ptr":
            break
        outputs += 1
    return len(types) - 2 * pairs - outputs


_NVPTX_DECLS = """
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
"""
_AMDGPU_DECLS = """
declare i32 @llvm.amdgcn.workgroup.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare i32 @llvm.amdgcn.workgroup.id.z()
declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workitem.id.y()
"""
_AMDGPU_FLAGS = """
!llvm.module.flags = !{!0}
!0 = !{i32 1, !"amdhsa_code_object_version", i32 500}
"""
_OPENCL_DECLS = """
declare i64 @_Z13get_global_idj(i32)
declare i64 @_Z12get_group_idj(i32)
declare i64 @_Z12get_local_idj(i32)
"""
_DECLS = {"cuda": _NVPTX_DECLS, "rocm": _AMDGPU_DECLS + _AMDGPU_FLAGS, "opencl-spirv": _OPENCL_DECLS}


def generate(ir: str, names: list, target: str, arch: str) -> tuple[dict, dict]:
    """Code generation in the child process (codegen.py): ({kernel: assembly}, {kernel: code})."""
    import base64
    cpu = "" if target == "opencl-spirv" else arch   # (the SPIR-V backend has one generic processor)
    request = {"ir": ir, "kernels": names, "triple": TRIPLES[target], "cpu": cpu, "target": target}
    # LLVM's SPIR-V backend keeps state from one code generation to the next that can give a later
    # kernel duplicate ids (spirv-val: "Id 2 is defined more than once"): each kernel in a process
    # that has generated nothing before (forked by the worker before its first code generation).
    if target == "opencl-spirv":
        request["fresh"] = True
    with _worker_lock:
        results, failed = _worker().ask(request)
    if failed is not None:
        kernel, why = failed
        where = f"kernel @{kernel}: " if kernel else ""
        raise GpuCompileError(f"{where}{target} ({arch}): LLVM stopped during code generation: {why}")
    for kernel, msg in results.items():
        if "error" in msg:
            raise GpuCompileError(f"kernel @{kernel}: {target} ({arch}) code generation: {msg['error']}")
    return ({k: results[k]["assembly"] for k in names},
            {k: base64.b64decode(results[k]["code"]) for k in names})


_worker_lock = threading.Lock()
_workers: list = []


def _worker() -> "_CodegenWorker":
    if not _workers or not _workers[0].alive():
        _workers[:] = [_CodegenWorker()]
    return _workers[0]


class _CodegenWorker:
    """The codegen child, kept for the next request; started again after LLVM aborts it."""
    TIMEOUT = 600

    def __init__(self):
        env = dict(os.environ)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.errors = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([sys.executable, "-m", "mlirtext.targets.gpu.codegen"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.errors, text=True, env=env)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, request: dict):
        """({kernel: answer}, None), or (partial answers, (kernel or None, why)) when the child died."""
        results, current, failed = {}, None, None
        errors_from = os.fstat(self.errors.fileno()).st_size   # what LLVM says from here is about this request
        watchdog = threading.Timer(self.TIMEOUT, self.proc.kill)   # a stuck codegen ends as a failure
        watchdog.start()
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            for line in iter(self.proc.stdout.readline, ""):
                msg = json.loads(line)
                if msg.get("done"):
                    return results, failed and (failed[0], self._reason(failed[1], errors_from))
                if "failed" in msg:   # a fresh kernel's process died; the server lives on
                    failed = (msg["failed"], msg["exit"])
                elif "begin" in msg:
                    current = msg["begin"]
                else:
                    results[msg["kernel"]] = msg
                    current = None
        except (BrokenPipeError, OSError):
            pass
        finally:
            watchdog.cancel()
        self.proc.wait()
        return results, (current, self._reason(self.proc.returncode, errors_from))

    def _reason(self, exit_code: int, errors_from: int) -> str:
        self.errors.seek(errors_from)
        return f"exit code {exit_code}: {_llvm_reason(self.errors.read())}"


def _llvm_reason(stderr: str) -> str:
    """What LLVM said when it stopped the codegen child: its last `LLVM ERROR:` line with the
    function it was in (for a selection failure, the node it could not select: `Cannot select:
    t29: f32 = fpow t15, t28`; the operand tree LLVM prints after it says nothing of the cause),
    else the last lines it wrote."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [i for i, ln in enumerate(lines) if ln.startswith("LLVM ERROR:")]
    if not errors:
        return " | ".join(lines[-3:]) or "no message"
    where = [ln for ln in lines[errors[-1]:] if ln.startswith("In function:")]
    return " | ".join([lines[errors[-1]]] + where[:1])
