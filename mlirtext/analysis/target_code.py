"""Each target's code for a function's dispatches: the pipeline view's target column and the
dispatch section of an op's hover.

A function (with the chunk's aliases and the functions it calls: `compiled_source`), or a whole
chunk, is compiled as `mlirtext compile` does: dispatch formation (`compiler/driver.py`), then per target
- llvm-cpu: the kernels' optimised LLVM IR and object code (micro-kernel or generated loops);
- cuda, rocm, vulkan-spirv: `targets.gpu.compile_gpu` (PTX, AMDGPU assembly, SPIR-V assembly).
GPU targets share one dispatch formation; llvm-cpu has its own, because it merges a matmul's
elementwise consumer into the matmul's kernel (its micro-kernel epilogue).

Every kernel remembers the source offsets of the ops it was made from (lowering keeps spans),
which is how hover finds the kernels of the op under the cursor. A target that cannot be
generated (an op it has no form for, a missing tool, LLVM aborting its child process) says why;
the others still show. Compiling is slow (LLVM at O3, a child process for the GPU back-ends),
so results are cached per module text and target. Only the pipeline command fills the cache;
hover only reads it. (A compile that a hover started in the background would hold the GIL for
seconds in pure-Python lowering: in benchmarks/lsp_latency.py, a cached lowered-form hover took
57 ms while one ran, 4 ms without.)
"""
from __future__ import annotations

import re
import struct
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Optional, Sequence

from ..ir.core import Operation
from .document import Document

TARGETS = ("llvm-cpu", "cuda", "rocm", "vulkan-spirv", "opencl-spirv")
#: What each target's code is, for a Markdown code fence and the client's label.
LANGUAGES = {"llvm-cpu": "llvm", "cuda": "ptx", "rocm": "asm", "vulkan-spirv": "spirv", "opencl-spirv": "spirv"}
CODE_NAMES = {"llvm-cpu": "LLVM IR", "cuda": "PTX", "rocm": "AMDGPU assembly", "vulkan-spirv": "SPIR-V assembly",
              "opencl-spirv": "SPIR-V assembly"}
#: Lines of a kernel's code shown in a hover before it is cut.
HOVER_CODE_LINES = 30
#: Ops from these dialects get a dispatch section in hover (the tensor levels compile forms dispatches from).
HOVER_DIALECTS = ("stablehlo", "mhlo", "chlo", "tosa", "linalg")

_DISPATCH_NUMBER = re.compile(r"_dispatch_(\d+)$")


def dispatch_number(kernel_name: str) -> Optional[int]:
    """N of a kernel or dispatch named `..._dispatch_N`, else None."""
    m = _DISPATCH_NUMBER.search(kernel_name)
    return int(m.group(1)) if m else None


def _noop(message: str) -> None:
    pass


@lru_cache(maxsize=1)
def available_targets() -> tuple:
    """llvm-cpu, and each GPU target whose code generation can run here: cuda and rocm need
    llvmlite's NVPTX and AMDGPU back-ends, opencl-spirv its SPIR-V back-end, vulkan-spirv needs
    `spirv-as`."""
    out = ["llvm-cpu"]
    try:
        import llvmlite.binding as llvm
        llvm.initialize_all_targets()
        for target, triple in (("cuda", "nvptx64-nvidia-cuda"), ("rocm", "amdgcn-amd-amdhsa"),
                               ("opencl-spirv", "spirv64v1.0-unknown-unknown")):
            try:
                llvm.Target.from_triple(triple)
                out.append(target)
            except RuntimeError:
                pass
    except ImportError:
        pass
    from ..targets.gpu.validate import find_tool
    if find_tool("spirv-as") is not None:
        out.append("vulkan-spirv")
    return tuple(t for t in TARGETS if t in out)


@dataclass
class Kernel:
    """One kernel of one target."""
    name: str
    entry: str                       # the symbol a launch names
    code: str                        # LLVM IR of the kernel's function, PTX, AMDGPU or SPIR-V assembly
    size: Optional[int]              # bytes of machine code (llvm-cpu: its symbol; GPU: the binary)
    implementation: str              # micro-kernel, generated loops, how threads map onto outputs
    threads: Optional[int] = None    # GPU: threads launched
    workgroups: Optional[int] = None  # GPU: workgroups launched; llvm-cpu: row ranges it can be split into
    workgroup_size: Optional[int] = None
    offsets: frozenset = frozenset()  # source offsets (in the compiled text) of the ops it was made from

    @property
    def dispatch(self) -> Optional[int]:
        return dispatch_number(self.name)


@dataclass
class TargetCode:
    """A target's kernels, or why it has none."""
    target: str
    arch: str = ""
    kernels: list = field(default_factory=list)
    error: Optional[str] = None
    seconds: float = 0.0


@dataclass
class Dispatch:
    name: str
    ops: list                        # the structured ops it runs (names)
    offsets: frozenset

    @property
    def index(self) -> Optional[int]:
        return dispatch_number(self.name)


@dataclass
class FunctionTargets:
    """The dispatches of a module text and each target's code for them."""
    dispatches: list = field(default_factory=list)
    targets: dict = field(default_factory=dict)   # target -> TargetCode, in the order asked
    error: Optional[str] = None                     # set when no dispatches could be formed


# -- computing -------------------------------------------------------------------------------------
def compute(text: str, filename: str, targets: Sequence[str], cancelled: Optional[threading.Event] = None,
            report: Callable = _noop) -> FunctionTargets:
    """Compile `text` (a module on tensors) for each of `targets`; never raises."""
    out = FunctionTargets()
    unknown = [t for t in targets if t not in TARGETS]
    for t in unknown:
        out.targets[t] = TargetCode(t, error=f"unknown target '{t}' (targets: {', '.join(TARGETS)})")
    gpu = [t for t in targets if t in TARGETS and t != "llvm-cpu"]
    if gpu:
        _gpu_targets(text, filename, gpu, out, cancelled, report)
    if "llvm-cpu" in targets and not _stopped(cancelled, out):
        report("llvm-cpu code")
        out.targets["llvm-cpu"] = _llvm_cpu(text, filename, out)
    out.targets = {t: out.targets[t] for t in targets if t in out.targets}
    return out


def _stopped(cancelled: Optional[threading.Event], out: FunctionTargets) -> bool:
    if cancelled is not None and cancelled.is_set():
        out.error = "cancelled"
        return True
    return False


def _parsed(text: str, filename: str):
    """The verified module of `text`, or the first diagnostic's message."""
    from .. import api
    result = api.parse_and_verify(text, filename)
    return result.module if result.ok else result.diagnostics[0].message


def _failure(e: Exception) -> str:
    from ..compiler.driver import CompileFailed
    if isinstance(e, CompileFailed):
        return "; ".join(d.message for d in e.diagnostics)
    return f"internal error: {type(e).__name__}: {e}"


#: Ops a dispatch holds on the side: a constant or an empty init is cloned into every dispatch that
#: reads it (and CSE gives equal ones the span of the first), so they say little of where an op went.
_INCIDENTAL = frozenset({"arith.constant", "tensor.empty", "func.return"})


def _source_offsets(fn: Operation, source) -> frozenset:
    """Where in the compiled text the ops of dispatch function `fn` came from."""
    return frozenset(op.span.start for op in fn.walk() if op is not fn and op.name not in _INCIDENTAL
                     and op.span is not None and op.span.source is source)


def _dispatch_functions(module: Operation) -> list:
    from ..transforms.dispatch import is_dispatch_function
    return [op for op in module.regions[0].blocks[0].ops if is_dispatch_function(op)]


def _dispatches(module: Operation, source) -> list:
    from ..transforms.dispatch import is_structured
    return [Dispatch(fn.sym_name, [op.name for op in fn.walk() if is_structured(op)], _source_offsets(fn, source))
            for fn in _dispatch_functions(module)]


def _gpu_targets(text: str, filename: str, targets: list, out: FunctionTargets,
                 cancelled: Optional[threading.Event], report: Callable) -> None:
    from ..targets.gpu import GPU_TARGETS, GpuCompileError, compile_gpu
    from ..compiler.driver import form_dispatches, kernel_module
    report("forming dispatches")
    module = _parsed(text, filename)
    if isinstance(module, str):
        out.error = module
    else:
        source = module.span.source if module.span is not None else None
        try:
            form_dispatches(module)
            out.dispatches = _dispatches(module, source)
            kernels_mod = kernel_module(module)
        except Exception as e:  # noqa: BLE001 - every target says why
            out.error = _failure(e)
    offsets = {d.name: d.offsets for d in out.dispatches}
    for target in targets:
        if out.error is not None:
            out.targets[target] = TargetCode(target, GPU_TARGETS[target][1], error=out.error)
            continue
        if _stopped(cancelled, out):
            return
        report(f"{target} code")
        start = time.perf_counter()
        code = out.targets[target] = TargetCode(target, GPU_TARGETS[target][1])
        if not offsets:
            code.error = "no dispatches: the function does no work a kernel would run"
            continue
        try:
            exe = compile_gpu(kernels_mod, list(offsets), target)
        except GpuCompileError as e:
            code.error = str(e)
            continue
        except Exception as e:  # noqa: BLE001 - shown to the user, never raised
            code.error = _failure(e)
            continue
        code.arch = exe.arch
        code.kernels = [_gpu_kernel(exe, name, offsets[name]) for name in offsets]
        code.seconds = time.perf_counter() - start


def _gpu_kernel(exe, name: str, offsets: frozenset) -> Kernel:
    launch = exe.launches[name]
    if launch.get("tiling"):    # (a tiled kernel: a 2-D or 3-D grid, each workgroup one output block)
        how = (f"tiled ({launch['tiling']}): a {'x'.join(map(str, launch['grid']))} grid of "
               f"{'x'.join(map(str, launch['workgroup']))}-thread workgroups, each computing a "
               f"{'x'.join(map(str, launch['block']))} block of the output")
    elif launch.get("split"):
        how = f"one thread per output element of axes {'x'.join(map(str, launch['axes']))}"
    else:
        how = "serial: one thread runs the whole kernel"
    return Kernel(name, launch.get("entry", name), exe.assembly.get(name, ""), len(exe.code.get(name, b"")), how,
                  launch["threads"], launch["workgroups"], launch["workgroup_size"], offsets)


def _llvm_cpu(text: str, filename: str, out: FunctionTargets) -> TargetCode:
    from ..compiler.driver import compile_module
    code = TargetCode("llvm-cpu", _host_cpu())
    start = time.perf_counter()
    module = _parsed(text, filename)
    if isinstance(module, str):
        code.error = module
        return code
    source = module.span.source if module.span is not None else None
    try:
        compiled = compile_module(module, "llvm-cpu")
    except Exception as e:  # noqa: BLE001 - shown to the user, never raised
        code.error = _failure(e)
        return code
    dispatches = _dispatches(module, source)   # compile_module left the dispatch functions in `module`
    if not out.dispatches:
        out.dispatches = dispatches
    offsets = {d.name: d.offsets for d in dispatches}
    if not compiled.kernels:
        code.error = "no dispatches: the function does no work a kernel would run"
        return code
    sizes = function_sizes(compiled.object_code)
    for name, info in compiled.kernels.items():
        split = info.get("workgroups")
        how = info.get("implementation", "generated loops")
        if split:
            count = split["count"]
            how += f"; split into {count} workgroup{'' if count == 1 else 's'} on output axis {split['axis']}"
        code.kernels.append(Kernel(name, name, llvm_function(compiled.llvm_ir, name), sizes.get(name), how,
                                   workgroups=split["count"] if split else None,
                                   offsets=offsets.get(name, frozenset())))
    code.seconds = time.perf_counter() - start
    return code


def _host_cpu() -> str:
    try:
        import llvmlite.binding as llvm
        return llvm.get_host_cpu_name()
    except Exception:  # noqa: BLE001 - only a label
        return ""


def llvm_function(ir: str, name: str) -> str:
    """The definition of @name in LLVM IR text ('' when it is not there)."""
    m = re.search(rf"^define [^\n]*@{re.escape(name)}\(.*?^}}$", ir, re.M | re.S)
    return m.group(0) + "\n" if m else ""


def function_sizes(object_code: bytes) -> dict:
    """{function name: bytes of machine code} from an ELF64 object's symbol table ({} if unreadable)."""
    data = bytes(object_code)
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2:
        return {}
    e = "<" if data[5] == 1 else ">"
    try:
        shoff, = struct.unpack_from(e + "Q", data, 40)
        shnum, = struct.unpack_from(e + "H", data, 60)
        sections = [struct.unpack_from(e + "4xI16xQQI", data, shoff + i * 64) for i in range(shnum)]
        sizes = {}
        for kind, offset, size, link in sections:
            if kind != 2:      # SHT_SYMTAB
                continue
            names_at = sections[link][1]
            for k in range(size // 24):
                st_name, st_info, _, _, _, st_size = struct.unpack_from(e + "IBBHQQ", data, offset + k * 24)
                if st_info & 0xF == 2 and st_name:    # STT_FUNC
                    end = data.index(b"\0", names_at + st_name)
                    sizes[data[names_at + st_name:end].decode("ascii", "replace")] = st_size
        return sizes
    except (struct.error, IndexError, ValueError):
        return {}


# -- the cache ---------------------------------------------------------------------------------------
class TargetCache:
    """Target code per (module text, target), the least recently computed dropped first."""

    def __init__(self, size: int = 256):
        self.size = size
        self.entries: OrderedDict = OrderedDict()   # (text, target) -> TargetCode
        self.dispatches: dict = {}                  # text -> [Dispatch]
        self.lock = threading.Lock()
        # For hover: the functions (uri, name) a command computed, and the compiled source of a
        # function of a document version (walking a function's callees costs milliseconds).
        self.functions: set = set()
        self.sources: dict = {}                     # (uri, name) -> (weak ref to the doc, CompiledSource)

    def source_for_hover(self, doc: Document, chunk, piece, fn: Operation) -> Optional[CompiledSource]:
        """The compiled source of `fn` when a command computed targets for it, else None (cheap)."""
        if (doc.uri, fn.sym_name) not in self.functions:
            return None
        key = (doc.uri, fn.sym_name)
        found = self.sources.get(key)
        if found is None or found[0]() is not doc:
            found = self.sources[key] = (weakref.ref(doc), compiled_source(doc, chunk, piece, fn))
        return found[1]

    def get(self, text: str, targets: Sequence[str] = TARGETS) -> Optional[FunctionTargets]:
        """What is cached for `text` (those of `targets` that are), or None."""
        with self.lock:
            found = {t: self.entries[(text, t)] for t in targets if (text, t) in self.entries}
            if not found:
                return None
            return FunctionTargets(list(self.dispatches.get(text, [])), found)

    def compute(self, text: str, filename: str, targets: Sequence[str],
                cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> FunctionTargets:
        """`targets` for `text`: the cached ones, and the others computed now (then cached)."""
        cached = self.get(text, targets)
        missing = [t for t in targets if cached is None or t not in cached.targets]
        if missing:
            fresh = compute(text, filename, missing, cancelled, report)
            if fresh.error == "cancelled":
                return fresh
            self._store(text, fresh)
        return self.get(text, targets) or FunctionTargets(error="nothing computed")

    def _store(self, text: str, result: FunctionTargets) -> None:
        with self.lock:
            if result.dispatches or text not in self.dispatches:
                self.dispatches[text] = result.dispatches
            for target, code in result.targets.items():
                self.entries[(text, target)] = code
                self.entries.move_to_end((text, target))
            while len(self.entries) > self.size:
                (old, _), _ = self.entries.popitem(last=False)
                if not any(key[0] == old for key in self.entries):
                    self.dispatches.pop(old, None)


# -- the pipeline command's answer -----------------------------------------------------------------------
def as_json(result: FunctionTargets, to_line: Callable[[int], Optional[int]]) -> dict:
    """{"dispatches": [...], "targets": [...]} for the client; `to_line` maps an offset of the
    compiled text to a document line (0-based), or None."""
    def lines(offsets) -> list:
        return sorted({line for line in map(to_line, offsets) if line is not None})
    return {
        "dispatches": [{"name": d.name, "index": d.index, "ops": d.ops, "lines": lines(d.offsets)}
                       for d in result.dispatches],
        "targets": [{"target": c.target, "arch": c.arch, "language": LANGUAGES.get(c.target, ""),
                     "code_name": CODE_NAMES.get(c.target, ""), "error": c.error, "seconds": c.seconds,
                     "kernels": [{"name": k.name, "dispatch": k.dispatch, "entry": k.entry, "threads": k.threads,
                                  "workgroups": k.workgroups, "workgroup_size": k.workgroup_size, "size": k.size,
                                  "implementation": k.implementation, "code": k.code, "lines": lines(k.offsets)}
                                 for k in c.kernels]}
                    for c in result.targets.values()],
    }


# -- what is compiled for a function ---------------------------------------------------------------------
@dataclass
class CompiledSource:
    """The text compiled for a function, made of pieces of the document: `segments` are
    (offset in text, document offset, length); what lies between them (aliases) maps nowhere."""
    text: str
    segments: list

    def document_offset(self, offset: int) -> Optional[int]:
        for at, doc_at, length in self.segments:
            if at <= offset < at + length:
                return doc_at + offset - at
        return None

    def text_offset(self, doc_offset: int) -> Optional[int]:
        for at, doc_at, length in self.segments:
            if doc_at <= doc_offset < doc_at + length:
                return at + doc_offset - doc_at
        return None


def compiled_source(doc: Document, chunk, piece, fn: Operation) -> CompiledSource:
    """The chunk's aliases, then the function and every symbol it uses, directly or through
    its callees, in document order: compile inlines a callee (JAX's private helpers), so a
    declaration of it would not do, and the rest of the chunk is not needed."""
    included, todo, seen = [], [(piece, fn)], {fn.sym_name}
    while todo:
        p, op = todo.pop()
        included.append(doc.op_range(p, op) if op.span is None else (p.base + op.span.start, p.base + op.span.end))
        for root in p.parsed.roots:
            entry = chunk.symbols.get(root)
            if entry is not None and root not in seen:
                seen.add(root)
                todo.append(entry)
    parts = [p.parsed.text for p in chunk.pieces if p.parsed.defines_aliases]
    at = sum(len(t) for t in parts)
    segments = []
    for start, end in sorted(included):
        segments.append((at, start, end - start))
        parts.append(doc.text[start:end] + "\n")
        at += end - start + 1
    return CompiledSource("".join(parts), segments)


# -- hover ---------------------------------------------------------------------------------------------
def function_of(op: Operation) -> Optional[Operation]:
    """The top-level func.func around `op`."""
    while op is not None and not (op.name == "func.func" and op.parent_op is not None
                                  and op.parent_op.name == "builtin.module"):
        op = op.parent_op
    return op


def hover_section(doc: Document, offset: int, cache: TargetCache) -> str:
    """The "Dispatch N of @f" section for the op under `offset`: its kernels per target, with
    the first target's code, when the function's targets are cached; otherwise a line saying
    how to compute them. '' when the op is no dispatch's."""
    from .index import OP, target_at
    target = target_at(doc, offset)
    if target is None or target.kind != OP or target.obj.dialect not in HOVER_DIALECTS:
        return ""
    op, piece = target.obj, target.piece
    fn = function_of(op)
    if fn is None or fn.span is None or op.span is None or not fn.sym_name:
        return ""
    entry = doc.chunk_of(piece).symbols.get(fn.sym_name)
    if entry is None or entry[1] is not fn:
        return ""
    source = cache.source_for_hover(doc, doc.chunk_of(piece), piece, fn)
    found = None if source is None else cache.get(source.text)
    name = f"@{fn.sym_name}"
    if found is None:
        return (f"*Target code of {name}: not computed yet. **Show Pipeline** (the `mlirtext.pipeline` "
                f"command) compiles it for each target; then this hover shows its kernel.*")
    return format_hover(found, _kernel_finder(op, fn, lambda local: source.text_offset(piece.base + local)), name)


def _kernel_finder(op: Operation, fn: Operation, to_text: Callable[[int], Optional[int]]
                   ) -> Callable[[list], Optional[Kernel]]:
    """finder(kernels): the kernel made from `op`, or (when `op` was fused into the ops that use
    it, as an elementwise producer is) from the nearest op its results flow into. `to_text` maps
    an offset in `op`'s piece to one in the compiled text. The kernels of `fn`'s own dispatches
    come first: a callee inlined into several functions is in each one's kernels."""
    own = f"{fn.sym_name}_dispatch_"

    def find(kernels: list) -> Optional[Kernel]:
        kernels = sorted(kernels, key=lambda k: not k.name.startswith(own))
        seen, layer = set(), [op]
        for _ in range(8):
            for o in layer:
                offset = None if o.span is None else to_text(o.span.start)
                hit = next((k for k in kernels if offset in k.offsets), None)
                if hit is not None:
                    return hit
            seen.update(id(o) for o in layer)
            layer = [_top(u.op, fn) for o in layer for r in o.results for u in r.uses]
            layer = [o for o in layer if o is not None and id(o) not in seen]
            if not layer:
                return None
        return None
    return find


def _top(op: Operation, fn: Operation) -> Optional[Operation]:
    """The op of `fn`'s body that holds `op`."""
    while op is not None and op.parent_op is not fn:
        op = op.parent_op
    return op


def format_hover(found: FunctionTargets, find: Callable[[list], Optional[Kernel]], name: str) -> str:
    groups: dict = {}      # kernel name -> (kernel, its first target's code, [targets]); the default target's first
    failed = []
    for code in found.targets.values():
        if code.error:
            failed.append(f"{code.target}: {_clip(code.error, 160)}")
            continue
        kernel = find(code.kernels)
        if kernel is not None:
            groups.setdefault(kernel.name, (kernel, code, []))[2].append(code.target)
    if not groups:   # an op of no kernel (a reshape the host does), or a function no target compiles
        return f"*no target code for {name}: " + "; ".join(failed) + "*" if len(failed) == len(found.targets) else ""
    lines = []
    for kernel, code, targets in groups.values():
        number = "" if kernel.dispatch is None else f" {kernel.dispatch}"
        lines.append(f"**Dispatch{number} of {name}**: kernel `{kernel.name}` (targets: {', '.join(targets)})")
    kernel, code, _ = next(iter(groups.values()))
    lines.append(f"{code.target} ({code.arch}): {_describe(kernel)}")
    body = kernel.code.rstrip("\n").split("\n")
    more = len(body) - HOVER_CODE_LINES
    if more > 0:
        body = body[:HOVER_CODE_LINES] + [f"... {more} more lines (Show Pipeline: the target column has them all)"]
    lines.append(f"```{LANGUAGES.get(code.target, '')}\n" + "\n".join(body) + "\n```")
    if failed:
        lines.append("*no code for " + "; ".join(failed) + "*")
    return "\n\n".join(lines)


def _describe(k: Kernel) -> str:
    parts = [f"entry `{k.entry}`", k.implementation]
    if k.threads is not None:
        parts.append(f"{k.threads} threads ({k.workgroups} workgroups of {k.workgroup_size})")
    if k.size is not None:
        parts.append(f"{_size(k.size)} of code")
    return ", ".join(parts)


def _size(n: int) -> str:
    return f"{n} B" if n < 10240 else f"{n / 1024:.1f} KiB"


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"
