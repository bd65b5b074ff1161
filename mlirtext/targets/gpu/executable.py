"""A module's kernels compiled for one GPU target: what the module file packs per target."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.core import Operation

#: target -> (code format, default architecture)
GPU_TARGETS = {"cuda": ("ptx", "sm_80"), "rocm": ("amdgpu-object", "gfx942"), "vulkan-spirv": ("spirv", "vulkan1.3"),
               "opencl-spirv": ("spirv", "opencl1.2")}

#: Threads per workgroup for every kernel (a 1-D launch: workgroups = ceil(threads / this)).
WORKGROUP_SIZE = 64


class GpuCompileError(Exception):
    """A kernel that cannot be compiled (or validated) for a GPU target; the message names it."""


@dataclass
class GpuExecutable:
    target: str
    arch: str
    format: str
    launches: dict                               # kernel -> {"threads", "workgroup_size", "workgroups", "split", "axes"
    #     [, "workgroup": [x, y], "grid": [x, y, z], "block": [rows, cols], "tiling": kind] (a tiled kernel)
    #     [, "entry": the entry point's symbol] (cuda, rocm, opencl-spirv)
    #     [, "scratch": [bytes of each scratch buffer, bound after the outputs]]}
    code: dict = field(default_factory=dict)     # kernel -> bytes (PTX text, AMDGPU ELF object, SPIR-V binary)
    assembly: dict = field(default_factory=dict)  # kernel -> str (PTX, AMDGPU assembly, SPIR-V assembly)
    llvm_ir: str = ""                            # the kernels' LLVM IR before codegen (cuda, rocm, opencl-spirv)
    validated: list = field(default_factory=list)  # what --validate ran, e.g. ["ptxas sm_80", "ptxas sm_90"]


def _launch_record(launch) -> dict:
    """A kernel's launch as the module file records it: a 1-D grid of WORKGROUP_SIZE-thread
    workgroups, or a tiled kernel's grid of workgroup[0] x workgroup[1]-thread workgroups."""
    if launch.workgroup:
        size = launch.workgroup[0] * launch.workgroup[1]
        return {"threads": launch.threads, "workgroup_size": size, "workgroups": launch.threads // size,
                "split": False, "axes": [], "workgroup": list(launch.workgroup), "grid": list(launch.grid),
                "block": list(launch.block), "tiling": launch.tiling}
    return {"threads": launch.threads, "workgroup_size": WORKGROUP_SIZE,
            "workgroups": -(-launch.threads // WORKGROUP_SIZE), "split": launch.split, "axes": list(launch.axes)}


def compile_gpu(kernels_mod: Operation, names, target: str, arch: str | None = None,
                validate: bool = False) -> GpuExecutable:
    """Compile the dispatch functions `names` of `kernels_mod` (linalg on tensors; not modified)
    for `target`. Raises GpuCompileError naming the kernel that failed."""
    from .threads import kernels_at_loops_level
    if target not in GPU_TARGETS:
        raise GpuCompileError(f"unknown GPU target '{target}' (targets: {', '.join(GPU_TARGETS)})")
    fmt, default_arch = GPU_TARGETS[target]
    arch = arch or default_arch
    loops, launches = kernels_at_loops_level(kernels_mod, names)
    exe = GpuExecutable(target, arch, fmt, {name: _launch_record(l) for name, l in launches.items()})
    if target in ("vulkan-spirv", "opencl-spirv"):
        # i2/i4, bf16, f8...: SPIR-V has no such types (LLVM's SPIR-V back-end has bf16 only with
        # SPV_KHR_bfloat16), nor OpenCL 1.2 half arithmetic; LLVM legalises them for cuda and rocm.
        from .narrow_types import NarrowTypeError, emulate_narrow_types
        try:
            emulate_narrow_types(loops, target)
        except NarrowTypeError as e:
            raise GpuCompileError(str(e)) from None
    if target == "vulkan-spirv":
        from .spirv import emit_kernels
        exe.assembly, exe.code, scratch = emit_kernels(loops, launches, WORKGROUP_SIZE)
    else:
        from .llvm_gpu import emit_kernels, entry_symbol
        exe.llvm_ir, exe.assembly, exe.code, scratch = emit_kernels(loops, launches, target, arch, WORKGROUP_SIZE)
        for name, launch in exe.launches.items():   # (PTX spells some kernel names differently)
            launch["entry"] = entry_symbol(name, target)
    for name, sizes in scratch.items():   # temporaries in device memory: the device allocates them
        if sizes:
            exe.launches[name]["scratch"] = sizes
    if validate:
        from .validate import validate_executable
        validate_executable(exe)
    return exe
