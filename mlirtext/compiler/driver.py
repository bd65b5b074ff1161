"""`mlirtext compile`: a tensor-level module to the parts of a module file.

    parse + verify -> inline -> lower to linalg (with elementwise fusion)
      -> form-dispatch-regions (+ fusion inside each dispatch)
      -> host programs (one per public function) with their memory plans
      -> kernels: the dispatch functions, as IR (the reference device interprets it) and,
         for llvm-cpu, bufferized in destination-passing style, lowered to llvm, translated to
         LLVM IR and compiled to an object file for the host CPU; for a GPU target, its
         executable (targets/gpu/)
"""
from __future__ import annotations

import copy
import math
import re
import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Sequence

from ..api import parse_and_verify
from ..dialects.func import function_type
from ..diagnostics import Diagnostic
from ..ir import types as T
from ..ir.attributes import StringAttr
from ..ir.core import Operation
from ..ir.dense import DenseResourceAttr
from ..syntax.printer import print_module
from ..targets.gpu import GpuCompileError, compile_gpu
from ..targets.llvm_cpu import CompileError as CodegenError, compile_llvm_ir
from ..targets.llvm_ir import TranslateError, translate_module
from ..targets.loop_hints import add_loop_hints
from ..targets.workgroups import distribute, fuse_inner_rows, plan
from ..transforms.conversions.levels import LEVELS, level_of, lowering_pipeline
from ..transforms.dispatch import is_dispatch_function
from ..transforms.pass_manager import Instrumentation, PassManager
from ..transforms.passes import builtin_passes
from ..transforms.pipeline import PipelineError, parse_pipeline
from ..verifier import verify
from .channel_scales import fuse_channel_scales
from .dispatch_dedup import forwarding_ir, identical_functions
from .epilogues import fuse_epilogues, fuse_transposed_operands
from .global_pools import rewrite_global_pools
from .host_folding import fold_host_dispatches
from .host_program import CompileError, build_host_program, type_record
from .pads import fuse_output_pads, fuse_pads, fuse_transposes_into_pads
from .planner import plan_memory
from .prepack import prepack_constant_weights
from .reduction_tails import fuse_reduction_tails
from .reductions import mark_reassociable_sums
from .target_names import GPU_TARGET_NAMES, TARGETS
from .layout_pads import LayoutPadPlan, layout_pad_ir, plan_layout_pad
from .ukernels import in_place_input, kernel_ir, plan_kernel
from .work_queue import SUFFIX, take_wrapper_ir

#: The kernels' lowering (on a module of dispatch functions at the linalg level). The
#: polynomial approximation of transcendentals is added when it is available.
#: (Workgroup distribution, see targets/workgroups.py, happens between the first two steps.)
KERNEL_PIPELINE = ("linalg-interchange-for-vectors", "convert-linalg-to-loops", "canonicalize", "cse",
                   "results-to-out-params", "@approx", "convert-loops-to-llvm", "canonicalize", "cse")


class CompileFailed(Exception):
    """Diagnostics of a failed compile (each printed MLIR-style)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics


@dataclass
class Compiled:
    """Everything a module file holds, before it is packed (compiler/module_writer.py)."""
    target: str
    programs: list                      # HostProgram
    constants: dict                     # name -> numpy array
    kernels: dict                       # kernel name -> {"inputs": [records], "outputs": [records]}
    dispatched: Operation | None = None          # the module after dispatch formation
    reference_kernels: Operation | None = None   # the dispatch functions (linalg on tensors)
    llvm_ir: str = ""                   # optimised LLVM IR of the kernels (llvm-cpu)
    object_code: bytes = b""            # ELF object of the kernels (llvm-cpu)
    gpu: dict = field(default_factory=dict)  # GPU target -> targets.gpu.GpuExecutable
    timings: dict = field(default_factory=dict)
    constant_ops: dict = field(default_factory=dict)   # host constant op -> its name in `constants`

    # (printed when asked for: a module compiled and run in one process never needs the text)
    @cached_property
    def host_mlir(self) -> str:
        """The module after dispatch formation, as text (for inspection), each host constant
        printed as `dense_resource<NAME>`: its bytes are the module file's weights, stored once."""
        values = {op: op.attr("value") for op in self.constant_ops}
        try:
            for op, name in self.constant_ops.items():
                op.attributes["value"] = DenseResourceAttr(name, op.results[0].type)
            return print_module(self.dispatched)
        finally:
            for op, value in values.items():
                op.attributes["value"] = value

    @cached_property
    def reference_mlir(self) -> str:
        """The reference kernels as text (the reference executable of a module file)."""
        return print_module(self.reference_kernels)


def compile_source(text: str, filename: str, target: str = "llvm-cpu", **options) -> Compiled:
    """Parse, verify and compile MLIR `text` (options: those of `compile_module`); CompileFailed
    holds the parse or verify errors, or the compiler's."""
    result = parse_and_verify(text, filename)
    if not result.ok or result.module is None:
        raise CompileFailed([d for d in result.diagnostics if d.severity == "error"] or result.diagnostics)
    return compile_module(result.module, target, **options)


def _run(module: Operation, pipeline: str, stage: str, instrumentations: Sequence[Instrumentation] = ()) -> None:
    if not pipeline:
        return
    try:
        items = parse_pipeline(pipeline)
    except PipelineError as e:
        raise CompileFailed([Diagnostic("error", f"{stage}: {e.format()}")]) from None
    # The IR is verified once a stage, not after each of its passes (a fifth of a transformer's
    # compile time, the module verified whole 27 times); a debugging run (`instrumentations`: an
    # injected fault, the semantics check) verifies after each pass, which names the pass.
    each = bool(instrumentations)
    problems = PassManager(items, verify_each=each, instrumentations=list(instrumentations)).run(module)
    if not problems and not each:
        problems = [d for d in verify(module) if d.severity == "error"]
        for d in problems[:1]:
            d.message = f"the IR does not verify after '{pipeline}': {d.message}"
        problems = problems[:1]
    if problems:
        for d in problems:
            d.message = f"{stage}: {d.message}"
        raise CompileFailed(problems)


def _kernel_pipeline() -> str:
    approx = "math-polynomial-approximation" in builtin_passes()
    return ",".join(p for p in KERNEL_PIPELINE if p != "@approx" or approx).replace("@approx", 
                                                                                      "math-polynomial-approximation")


def form_dispatches(module: Operation, fold: bool = True, channels_last: bool = False,
                    instrumentations: Sequence[Instrumentation] = ()) -> None:
    """Lower `module` (in place) to linalg and outline its dispatches. `fold=False` leaves out
    canonicalize (which folds computations on constants away: test programs keep their kernels).
    `channels_last` lays 2-D convolutions out as NHWC x HWIO first (the CPU micro-kernel's layout);
    `instrumentations` watch every pass."""
    level = level_of(module)
    if level is None and any(isinstance(t, T.MemRefType) for op in module.walk() if op.name == "func.func"
                             for t in (*function_type(op).inputs, *function_type(op).results)):
        level = "loops"  # a bufferized signature, even without loops in the body
    if level is not None and LEVELS.index(level) > LEVELS.index("linalg"):
        raise CompileFailed([Diagnostic("error", f"compile takes a module on tensors (hlo, tosa or linalg "
                                        f"level); this one is at the {level} level", module.span)])
    _run(module, "inline,symbol-dce", "inline", instrumentations)
    if level == "hlo":   # (a matrix broadcast along a batch, as torch-mlir makes ONNX's MatMul: one GEMM)
        _run(module, "fold-dot-general-broadcasts", "batch broadcasts", instrumentations)
        # (ONNX's Gathers of q, k and v out of a transposed QKV projection: slices of it, no transpose)
        _run(module, "fold-static-gathers", "static gathers", instrumentations)
    if channels_last and level == "hlo":
        _run(module, "convert-conv-to-channels-last", "layout", instrumentations)
    try:
        to_linalg = lowering_pipeline(module, "linalg")
    except ValueError as e:
        raise CompileFailed([Diagnostic("error", str(e), module.span)]) from None
    tidy = "canonicalize,cse" if fold else "cse"
    if not fold:
        to_linalg = ",".join(p for p in to_linalg.split(",") if p != "canonicalize")
    _run(module, to_linalg, "lowering to linalg", instrumentations)
    _run(module, f"refine-static-shapes,linalg-fuse-elementwise-ops,{tidy},form-dispatch-regions,"
         f"linalg-fuse-elementwise-ops,{tidy}",
         "dispatch formation", instrumentations)


def kernel_module(module: Operation) -> Operation:
    """A copy of `module` with only the dispatch functions (public: they are the kernels) and
    what they call."""
    copy = module.clone()
    body = copy.regions[0].blocks[0]
    for op in list(body.ops):
        if op.name == "func.func" and is_dispatch_function(op):
            op.attributes.pop("sym_visibility", None)
        elif op.name == "func.func" and op.attributes.get("sym_visibility") != StringAttr("private"):
            op.erase() if not any(r.uses for r in op.results) else None
    return copy


def host_functions(module: Operation) -> list[Operation]:
    return [op for op in module.regions[0].blocks[0].ops if op.name == "func.func" and op.regions
            and op.regions[0].blocks and not is_dispatch_function(op)
            and op.attributes.get("sym_visibility") != StringAttr("private")]


def compile_module(module: Operation, target: str = "llvm-cpu", opt_level: int = 3, fold: bool = True,
                   gpu_arch: dict | None = None, validate: bool = False,
                   instrumentations: Sequence[Instrumentation] = ()) -> Compiled:
    """Compile a parsed, verified module (consumed: lowered in place, it becomes `dispatched`).
    `target` is one target or several separated by commas (one executable each in the module
    file); `gpu_arch` maps a GPU target to its architecture (cuda: sm_80, rocm: gfx942 by
    default); `validate` checks GPU code with its vendor's tool (targets/gpu/validate.py);
    `instrumentations` watch every pass of dispatch formation and of the native kernels' lowering
    (an injected fault: mlirtext/debugging/faults.py)."""
    targets = target.split(",")
    for t in targets:
        if t not in TARGETS:
            raise CompileFailed([Diagnostic("error", f"unknown target '{t}' (targets: {', '.join(TARGETS)})")])
    timings = {}
    start = time.perf_counter()
    sources = {op.sym_name: function_type(op) for op in host_functions(module)}  # before lowering
    cpu_only = not any(t in GPU_TARGET_NAMES for t in targets)   # (the GPU kernels tile any layout)
    form_dispatches(module, fold, channels_last=cpu_only, instrumentations=instrumentations)
    # (fold=False: test programs keep their kernels; GPU kernels are tested on input-less programs)
    fold_host_dispatches(module, evaluate=fold and cpu_only)
    if cpu_only:   # (the merged kernels are for the CPU micro-kernel)
        fuse_transposed_operands(module)
        fuse_pads(module)
        fuse_epilogues(module)
        fuse_output_pads(module)
        fuse_transposes_into_pads(module)
        fuse_reduction_tails(module)
        fuse_channel_scales(module)
        rewrite_global_pools(module)
        prepack_constant_weights(module)
    timings["dispatch formation"] = time.perf_counter() - start
    constants: dict = {}
    constant_ops: dict = {}
    programs = []
    # (a residual read in place by its micro-kernel: the CPU's; a GPU kernel gets buffers apart)
    in_place = {op.sym_name: k for op in module.regions[0].blocks[0].ops if op.name == "func.func" and
                is_dispatch_function(op) and (k := in_place_input(op)) is not None} if cpu_only else {}
    try:
        for fn in host_functions(module):
            prog = build_host_program(fn, constants, sources.get(fn.sym_name), constant_ops)
            plan_memory(prog, in_place)
            programs.append(prog)
        kernels = {}
        for op in module.regions[0].blocks[0].ops:
            if op.name == "func.func" and is_dispatch_function(op):
                ftype = function_type(op)
                kernels[op.sym_name] = {"inputs": [type_record(t) for t in ftype.inputs],
                                        "outputs": [type_record(t) for t in ftype.results]}
    except CompileError as e:
        raise CompileFailed([Diagnostic("error", str(e), e.span)]) from None
    if not programs:
        raise CompileFailed([Diagnostic("error", "the module has no public function to export", module.span)])
    kernels_mod = kernel_module(module)
    out = Compiled(target, programs, constants, kernels, dispatched=module, reference_kernels=kernels_mod,
                   timings=timings, constant_ops=constant_ops)
    for t in targets:   # (GPU code generation works on a copy)
        if t in GPU_TARGET_NAMES and kernels:
            _gpu(kernels_mod, out, t, (gpu_arch or {}).get(t), validate)
    if "llvm-cpu" in targets and kernels:
        _native(kernels_mod.clone(), out, opt_level, instrumentations)   # (in place: the reference kernels stay)
    return out


def _gpu(kernels_mod: Operation, out: Compiled, target: str, arch: str | None, validate: bool) -> None:
    start = time.perf_counter()
    try:
        out.gpu[target] = compile_gpu(kernels_mod, list(out.kernels), target, arch, validate)
    except GpuCompileError as e:
        raise CompileFailed([Diagnostic("error", f"{target}: {e}")]) from None
    out.timings[f"{target} codegen"] = time.perf_counter() - start


def _native(kernels_mod: Operation, out: Compiled, opt_level: int, instrumentations: Sequence[Instrumentation]) -> None:
    start = time.perf_counter()
    steps = _kernel_pipeline().split(",")
    functions = {op.sym_name: op for op in kernels_mod.regions[0].blocks[0].ops if op.name == "func.func"
                 and op.sym_name in out.kernels}
    same = identical_functions(functions)   # (each compiled once: dispatch_dedup.py)
    for name in same:
        functions.pop(name).erase()
    micro, intrinsics = {}, set()
    for name, fn in list(functions.items()):   # a micro-kernel takes the place of the generated loops
        chosen = plan_kernel(fn) or plan_layout_pad(fn)
        if chosen is not None:
            micro[name] = layout_pad_ir(name, chosen) if isinstance(chosen, LayoutPadPlan) else kernel_ir(name, chosen)
            rank = len(out.kernels[name]["outputs"][0]["shape"])
            count, block = chosen.workgroups   # (block: the output elements one workgroup writes)
            out.kernels[name]["workgroups"] = {"axis": chosen.workgroup_axis % rank, "count": count, "block": block}
            out.kernels[name]["implementation"] = chosen.description
            intrinsics |= chosen.intrinsics
            del functions[name]
            fn.erase()
    _run(kernels_mod, steps[0], "kernel lowering", instrumentations)
    splits = {name: plan(fn) for name, fn in functions.items()}
    _run(kernels_mod, steps[1], "kernel lowering", instrumentations)
    for name, split in splits.items():
        if split is not None and distribute(functions[name], *split):
            fuse_inner_rows(functions[name], split[0])
            # (block: the elements at one index of the split axis; the output may be a view of the op's)
            elements = math.prod(out.kernels[name]["outputs"][0]["shape"])
            out.kernels[name]["workgroups"] = {"axis": split[0], "count": split[1], "block": elements // split[1]}
    for name, first in same.items():   # (the records a kernel lowering gave, each its own copy)
        for key in ("workgroups", "implementation"):
            if key in out.kernels[first]:
                out.kernels[name][key] = copy.deepcopy(out.kernels[first][key])
    for fn in functions.values():
        mark_reassociable_sums(fn)
    _run(kernels_mod, ",".join(steps[2:]), "kernel lowering", instrumentations)
    out.timings["kernel lowering"] = time.perf_counter() - start
    start = time.perf_counter()
    try:
        ir_text = translate_module(kernels_mod)
    except TranslateError as e:
        raise CompileFailed([Diagnostic("error", f"translation to LLVM IR: {e}", getattr(e, "span", None))]) \
            from None
    ir_text = add_loop_hints(_no_alias(ir_text, out.kernels)) + "".join(micro.values()) + \
        "".join(d + "\n" for d in sorted(intrinsics) if d.split("(")[0].split("@")[1] + "(" not in ir_text)
    ir_text += "".join(forwarding_ir(ir_text, name, first) for name, first in same.items())
    ir_text += _take_wrappers(ir_text, out.kernels, same)
    out.timings["translation"] = time.perf_counter() - start
    start = time.perf_counter()
    try:
        native = compile_llvm_ir(ir_text, opt_level=opt_level, name="kernels")
    except CodegenError as e:
        raise CompileFailed([Diagnostic("error", f"llvm-cpu code generation: {e}")]) from None
    out.timings["llvm codegen"] = time.perf_counter() - start
    missing = [k for k in out.kernels if k not in native.functions]
    if missing:
        raise CompileFailed([Diagnostic("error", f"llvm-cpu: kernels missing from the object: {missing}")])
    out.llvm_ir = native.llvm_ir
    out.object_code = native.object_code


def _take_wrappers(ir_text: str, kernels: dict, same: dict) -> str:
    """The work-sharing wrapper of every kernel split into workgroups (work_queue.py); a kernel
    identical to an earlier one (`same`) shares that one's."""
    wrappers = []
    for name, spec in kernels.items():
        groups = spec.get("workgroups")
        if groups:
            if name not in same:
                wrappers.append(take_wrapper_ir(ir_text, name, len(spec["inputs"]), groups["count"]))
            groups["take"] = same.get(name, name) + SUFFIX
    return "".join(wrappers)


def _no_alias(ir_text: str, kernels) -> str:
    """Mark the kernels' buffer parameters `noalias`: the VM never passes one buffer twice or an
    output that overlaps an input (but to a micro-kernel that reads its residual in place, whose
    own IR says so), and knowing it lets LLVM keep output values in registers across reduction
    loops and vectorise without runtime overlap checks."""
    lines = ir_text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"define [^@]*@([\w.$]+)\(", line)
        if m and m.group(1) in kernels:
            lines[i] = re.sub(r"\bptr (?!noalias)", "ptr noalias ", line)
    return "\n".join(lines)
