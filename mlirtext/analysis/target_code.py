"""Each target's code for a function's dispatches: the pipeline view's target column and the
dispatch section of an op's hover.

A function (with the functions it calls: `compiled_source`), or a whole chunk, cloned from the
document's IR, is compiled as `mlirtext compile` does: dispatch formation (`compiler/driver.py`),
then per target
- llvm-cpu: the kernels' optimised LLVM IR and object code (micro-kernel or generated loops);
- cuda, rocm, vulkan-spirv: `targets.gpu.compile_gpu` (PTX, AMDGPU assembly, SPIR-V assembly).
GPU targets share one dispatch formation; llvm-cpu has its own, because it merges a matmul's
elementwise consumer into the matmul's kernel (its micro-kernel epilogue).

Every kernel remembers the places of the ops it was made from (cloning and lowering keep spans;
a place is an op's index in the compiled module, `CompiledSource.place`), which is how hover
finds the kernels of the op under the cursor. A target that cannot be generated (an op it has
no form for, a missing tool, LLVM aborting its child process) says why; the others still show.
Compiling is slow (LLVM at O3, a child process for the GPU back-ends), so results are cached per
printed module and target. Only the pipeline command fills the cache; hover only reads it. (A
compile that a hover started in the background would hold the GIL for seconds in pure-Python
lowering: in benchmarks/lsp_latency.py, a cached lowered-form hover took 57 ms while one ran,
4 ms without.)
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
from typing import Callable, Optional, Sequence, Union

from ..ir.core import Operation
from ..syntax.printer import print_module
from .document import Document
from .extraction import SourceMap, function_module_of, function_or_chunk

TARGETS = ("llvm-cpu", "cuda", "rocm", "vulkan-spirv", "opencl-spirv")
#: What each target's code is, for the client's label and its highlighting.
LANGUAGES = {"llvm-cpu": "llvm", "cuda": "ptx", "rocm": "asm", "vulkan-spirv": "spirv", "opencl-spirv": "spirv"}
CODE_NAMES = {"llvm-cpu": "LLVM IR", "cuda": "PTX", "rocm": "AMDGPU assembly", "vulkan-spirv": "SPIR-V assembly",
              "opencl-spirv": "SPIR-V assembly"}
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
    places: frozenset = frozenset()  # places (`CompiledSource.place`) of the ops it was made from

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
    places: frozenset                # places (`CompiledSource.place`) of the ops it was made from

    @property
    def index(self) -> Optional[int]:
        return dispatch_number(self.name)


@dataclass
class FunctionTargets:
    """The dispatches of a module and each target's code for them."""
    dispatches: list = field(default_factory=list)
    targets: dict = field(default_factory=dict)   # target -> TargetCode, in the order asked
    error: Optional[str] = None                     # set when no dispatches could be formed


# -- computing -------------------------------------------------------------------------------------
def compute(source: "CompiledSource", targets: Sequence[str], cancelled: Optional[threading.Event] = None,
            report: Callable = _noop) -> FunctionTargets:
    """Compile `source`'s module (verified, on tensors; left as it is) for each of `targets`;
    never raises."""
    out = FunctionTargets()
    unknown = [t for t in targets if t not in TARGETS]
    for t in unknown:
        out.targets[t] = TargetCode(t, error=f"unknown target '{t}' (targets: {', '.join(TARGETS)})")
    gpu = [t for t in targets if t in TARGETS and t != "llvm-cpu"]
    if gpu:
        _gpu_targets(source, gpu, out, cancelled, report)
    if "llvm-cpu" in targets and not _stopped(cancelled, out):
        report("llvm-cpu code")
        out.targets["llvm-cpu"] = _llvm_cpu(source, out)
    out.targets = {t: out.targets[t] for t in targets if t in out.targets}
    return out


def failed(targets: Sequence[str], message: str) -> FunctionTargets:
    """Every target of `targets` with the same reason for having no code."""
    return FunctionTargets(targets={t: TargetCode(t, error=message) for t in targets}, error=message)


def _stopped(cancelled: Optional[threading.Event], out: FunctionTargets) -> bool:
    if cancelled is not None and cancelled.is_set():
        out.error = "cancelled"
        return True
    return False


def _failure(e: Exception) -> str:
    from ..compiler.driver import CompileFailed
    if isinstance(e, CompileFailed):
        return "; ".join(d.message for d in e.diagnostics)
    return f"internal error: {type(e).__name__}: {e}"


#: Ops a dispatch holds on the side: a constant or an empty init is cloned into every dispatch that
#: reads it (and CSE gives equal ones the span of the first), so they say little of where an op went.
_INCIDENTAL = frozenset({"arith.constant", "tensor.empty", "func.return"})


def _places(fn: Operation, source: "CompiledSource") -> frozenset:
    """Where in `source` the ops of dispatch function `fn` came from (`CompiledSource.place`)."""
    places = (source.place(op) for op in fn.walk() if op is not fn and op.name not in _INCIDENTAL)
    return frozenset(p for p in places if p is not None)


def _dispatch_functions(module: Operation) -> list:
    from ..transforms.dispatch import is_dispatch_function
    return [op for op in module.regions[0].blocks[0].ops if is_dispatch_function(op)]


def _dispatches(module: Operation, source: "CompiledSource") -> list:
    from ..transforms.dispatch import is_structured
    return [Dispatch(fn.sym_name, [op.name for op in fn.walk() if is_structured(op)], _places(fn, source))
            for fn in _dispatch_functions(module)]


def form_dispatch_list(source: "CompiledSource") -> Union[list, str]:
    """The dispatches `source` forms (as the GPU targets form them, without compiling a kernel),
    or the message of why none could be formed."""
    from ..compiler.driver import form_dispatches
    module = source.module.clone()
    try:
        form_dispatches(module)
    except Exception as e:  # noqa: BLE001 - the caller shows why
        return _failure(e)
    return _dispatches(module, source)


def _gpu_targets(source: "CompiledSource", targets: list, out: FunctionTargets,
                 cancelled: Optional[threading.Event], report: Callable) -> None:
    from ..targets.gpu import GPU_TARGETS, GpuCompileError, compile_gpu
    from ..compiler.driver import form_dispatches, kernel_module
    report("forming dispatches")
    module = source.module.clone()
    try:
        form_dispatches(module)
        out.dispatches = _dispatches(module, source)
        kernels_mod = kernel_module(module)
    except Exception as e:  # noqa: BLE001 - every target says why
        out.error = _failure(e)
    places = {d.name: d.places for d in out.dispatches}
    for target in targets:
        if out.error is not None:
            out.targets[target] = TargetCode(target, GPU_TARGETS[target][1], error=out.error)
            continue
        if _stopped(cancelled, out):
            return
        report(f"{target} code")
        start = time.perf_counter()
        code = out.targets[target] = TargetCode(target, GPU_TARGETS[target][1])
        if not places:
            code.error = "no dispatches: the function does no work a kernel would run"
            continue
        try:
            exe = compile_gpu(kernels_mod, list(places), target)
        except GpuCompileError as e:
            code.error = str(e)
            continue
        except Exception as e:  # noqa: BLE001 - shown to the user, never raised
            code.error = _failure(e)
            continue
        code.arch = exe.arch
        code.kernels = [_gpu_kernel(exe, name, places[name]) for name in places]
        code.seconds = time.perf_counter() - start


def _gpu_kernel(exe, name: str, places: frozenset) -> Kernel:
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
                  launch["threads"], launch["workgroups"], launch["workgroup_size"], places)


def _llvm_cpu(source: "CompiledSource", out: FunctionTargets) -> TargetCode:
    from ..compiler.driver import compile_module
    code = TargetCode("llvm-cpu", _host_cpu())
    start = time.perf_counter()
    module = source.module.clone()
    try:
        compiled = compile_module(module, "llvm-cpu")
    except Exception as e:  # noqa: BLE001 - shown to the user, never raised
        code.error = _failure(e)
        return code
    dispatches = _dispatches(module, source)   # compile_module left the dispatch functions in `module`
    if not out.dispatches:
        out.dispatches = dispatches
    places = {d.name: d.places for d in dispatches}
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
                                   places=places.get(name, frozenset())))
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
        # function of a document version (cloning and printing a function with its callees
        # costs milliseconds).
        self.functions: set = set()
        self.sources: dict = {}                     # (uri, name) -> (weak ref to the doc, CompiledSource)

    def source_for_hover(self, doc: Document, chunk, fn: Operation) -> Optional[CompiledSource]:
        """The compiled source of `fn` when a command computed targets for it, else None (cheap)."""
        if (doc.uri, fn.sym_name) not in self.functions:
            return None
        key = (doc.uri, fn.sym_name)
        found = self.sources.get(key)
        if found is None or found[0]() is not doc:
            found = self.sources[key] = (weakref.ref(doc), CompiledSource.of(function_module_of(chunk, fn, True)[0]))
        return found[1]

    def get(self, text: str, targets: Sequence[str] = TARGETS) -> Optional[FunctionTargets]:
        """What is cached for the module printed as `text` (those of `targets` that are), or None."""
        with self.lock:
            found = {t: self.entries[(text, t)] for t in targets if (text, t) in self.entries}
            if not found:
                return None
            return FunctionTargets(list(self.dispatches.get(text, [])), found)

    def compute(self, source: CompiledSource, targets: Sequence[str],
                cancelled: Optional[threading.Event] = None, report: Callable = _noop) -> FunctionTargets:
        """`targets` for `source`: the cached ones, and the others computed now (then cached)."""
        cached = self.get(source.text, targets)
        missing = [t for t in targets if cached is None or t not in cached.targets]
        if missing:
            fresh = compute(source, missing, cancelled, report)
            if fresh.error == "cancelled":
                return fresh
            self._store(source.text, fresh)
        return self.get(source.text, targets) or FunctionTargets(error="nothing computed")

    def dispatches_of(self, source: CompiledSource) -> Union[list, str]:
        """The dispatches of `source`: those a command computed, else formed now (and kept)."""
        with self.lock:
            found = self.dispatches.get(source.text)
        if found:
            return list(found)
        formed = form_dispatch_list(source)
        if not isinstance(formed, str):
            with self.lock:
                self.dispatches[source.text] = formed
                # (only the oldest, of texts no target code is kept for, make room)
                texts = {key[0] for key in self.entries}
                for old in [t for t in self.dispatches if t not in texts][:-self.size or None]:
                    del self.dispatches[old]
        return formed

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
    """{"dispatches": [...], "targets": [...]} for the client; `to_line` maps a place (an op of
    the compiled source: `CompiledSource.place`) to a document line (0-based), or None."""
    def lines(places) -> list:
        return sorted({line for line in map(to_line, places) if line is not None})
    return {
        "dispatches": [{"name": d.name, "index": d.index, "ops": d.ops, "lines": lines(d.places)}
                       for d in result.dispatches],
        "targets": [{"target": c.target, "arch": c.arch, "language": LANGUAGES.get(c.target, ""),
                     "code_name": CODE_NAMES.get(c.target, ""), "error": c.error, "seconds": c.seconds,
                     "kernels": [{"name": k.name, "dispatch": k.dispatch, "entry": k.entry, "threads": k.threads,
                                  "workgroups": k.workgroups, "workgroup_size": k.workgroup_size, "size": k.size,
                                  "implementation": k.implementation, "code": k.code, "lines": lines(k.places)}
                                 for k in c.kernels]}
                    for c in result.targets.values()],
    }


# -- what is compiled for a function ---------------------------------------------------------------------
@dataclass
class CompiledSource:
    """What is compiled for a function or a chunk: a module cloned from the document's IR
    (`compute` compiles clones of it), its printed text (the cache key), and its ops in walk
    order. An op's index there is its place: the same in every parse of the same text, so an
    edit to a comment, or to another function, leaves cached kernels pointing at the right ops."""
    module: Operation
    text: str
    ops: list
    index: dict                      # (SourceFile, offset) of an op's span -> its index in `ops`

    @classmethod
    def of(cls, module: Operation) -> "CompiledSource":
        ops = list(module.walk())
        index: dict = {}
        for i, op in enumerate(ops):
            if op.span is not None:
                index.setdefault((op.span.source, op.span.start), i)
        return cls(module, print_module(module), ops, index)

    def place(self, op: Operation) -> Optional[int]:
        """The place of an op with the span of one of `ops` (a clone, or what lowering made of it)."""
        return None if op.span is None else self.index.get((op.span.source, op.span.start))

    def span(self, place: int):
        """The span of the op at `place` (a Span, or None)."""
        return self.ops[place].span


def compiled_source(doc: Document, chunk, piece=None, fn: Optional[Operation] = None
                    ) -> Union[tuple[CompiledSource, SourceMap], str]:
    """(the compiled source, the map back to the document) of function `fn` of `piece` with
    every symbol it uses, directly or through its callees (compile inlines a callee, JAX's private
    helpers: a declaration of it would not do), or of the whole chunk when `fn` is None; else
    the first error."""
    found = function_or_chunk(doc, chunk, piece, fn, bodies=True)
    if isinstance(found, str):
        return found
    module, where = found
    return CompiledSource.of(module), where


# -- hover ---------------------------------------------------------------------------------------------
def function_of(op: Operation) -> Optional[Operation]:
    """The top-level func.func around `op`."""
    while op is not None and not (op.name == "func.func" and op.parent_op is not None
                                  and op.parent_op.name == "builtin.module"):
        op = op.parent_op
    return op


def hover_section(doc: Document, offset: int, cache: TargetCache) -> str:
    """The "Dispatch N of @f" section for the op under `offset`: its kernels per target and how
    the first target's is made, when the function's targets are cached (their code is in the
    pipeline view, which hover links to). '' when they are not, or the op is no dispatch's:
    hover computes nothing."""
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
    source = cache.source_for_hover(doc, doc.chunk_of(piece), fn)
    found = None if source is None else cache.get(source.text)
    if found is None:
        return ""
    return format_hover(found, _kernel_finder(op, fn, source), f"@{fn.sym_name}")


def _kernel_finder(op: Operation, fn: Operation, source: CompiledSource) -> Callable[[list], Optional[Kernel]]:
    """finder(kernels): the kernel made from `op`, or (when `op` was fused into the ops that use
    it, as an elementwise producer is) from the nearest op its results flow into; `source` is
    what was compiled for `fn`. The kernels of `fn`'s own dispatches come first: a callee
    inlined into several functions is in each one's kernels."""
    own = f"{fn.sym_name}_dispatch_"

    def find(kernels: list) -> Optional[Kernel]:
        kernels = sorted(kernels, key=lambda k: not k.name.startswith(own))
        seen, layer = set(), [op]
        for _ in range(8):
            for o in layer:
                place = source.place(o)
                hit = next((k for k in kernels if place in k.places), None)
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
