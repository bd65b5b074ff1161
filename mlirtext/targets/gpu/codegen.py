"""Child process of llvm_gpu.generate: LLVM IR to PTX, an AMDGPU object or a SPIR-V module (OpenCL),
one kernel at a time.

Serves requests until its stdin closes: each is one JSON line {"ir", "kernels", "triple", "cpu",
"target"[, "only": the kernels to generate, when not all][, "fresh": true]}; it answers per kernel
{"begin": name} before its code generation (so that, when LLVM aborts the process, the parent knows
which kernel it was), then {"kernel", "assembly", "code" (base64)} or {"kernel", "error"} for an
error LLVM reports without aborting, and {"done": true} after the last kernel. (One process serves
many compiles: starting Python and LLVM costs more than generating a small kernel.) With "fresh",
each kernel is generated in a child forked before any code generation (LLVM's SPIR-V back-end keeps
state from one generation to the next); when LLVM aborts that child, {"failed": kernel, "exit": code}
and {"done": true} follow, and the server lives on.

Each kernel is generated from its own copy of the module in which the other entry points are
internal, so the optimiser drops what that kernel does not use; assembly and object are
emitted from separate clones (AMDGPU codegen mutates the module), the object by a new target
machine; for SPIR-V the object comes first (see _spirv_assembly).
"""
from __future__ import annotations

import base64
import json
import os
import sys

from .wide_multiply import WideIntegerError, mul_hi_for_i128


def _machine(llvm, triple: str, cpu: str):
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, opt=3, reloc="pic", codemodel="default")


def generate_one(llvm, ir: str, kernel: str, others: list, triple: str, cpu: str, target: str) -> dict:
    module = llvm.parse_assembly(ir)
    module.verify()
    for name in others:
        module.get_function(name).linkage = llvm.Linkage.internal
    tm = _machine(llvm, triple, cpu)
    module.triple = triple
    module.data_layout = str(tm.target_data)
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)
    module.verify()
    if target == "opencl-spirv":   # (after the optimiser, which is what makes the i128s)
        module = _without_i128(llvm, module)
        code = bytes(tm.emit_object(module.clone()))
        assembly = _spirv_assembly(llvm, code, module, triple, cpu)
    else:
        assembly = tm.emit_assembly(module.clone())
        code = assembly.encode() if target == "cuda" else bytes(_machine(llvm, triple, cpu).emit_object(module.clone()))
    return {"kernel": kernel, "assembly": assembly, "code": base64.b64encode(code).decode()}


def _without_i128(llvm, module):
    """`module` with the i128 multiplies the optimiser made written as OpenCL's mul_hi
    (wide_multiply.py); a WideIntegerError for any other i128 (SPIR-V for OpenCL has none)."""
    text = str(module)
    rewritten = mul_hi_for_i128(text)
    if rewritten == text:
        return module
    module = llvm.parse_assembly(rewritten)
    module.verify()
    return module


def _spirv_assembly(llvm, code: bytes, module, triple: str, cpu: str) -> str:
    """The SPIR-V's assembly. LLVM's SPIR-V back-end can number a second emission in one process
    wrongly (block labels given the ids of types: spirv-val's "Id 2 is defined more than once"),
    so the code is emitted first and the assembly shown is its disassembly; without spirv-dis,
    a second emission (from a fresh target machine: reusing one crashes LLVM) stands in."""
    import subprocess
    from .validate import find_tool
    spirv_dis = find_tool("spirv-dis")
    if spirv_dis:
        proc = subprocess.run([spirv_dis, "-"], input=code, capture_output=True, timeout=300)
        if proc.returncode == 0:
            return proc.stdout.decode()
    return _machine(llvm, triple, cpu).emit_assembly(module.clone())


def serve(llvm, request: dict) -> None:
    for kernel in request.get("only", request["kernels"]):
        if not request.get("fresh"):
            serve_kernel(llvm, request, kernel)
            continue
        code = in_fresh_process(llvm, request, kernel)
        if code:   # LLVM aborted the kernel's process: what the parent would see of a dying server
            print(json.dumps({"failed": kernel, "exit": code}), flush=True)
            break
    print(json.dumps({"done": True}), flush=True)


def serve_kernel(llvm, request: dict, kernel: str) -> None:
    names = request["kernels"]
    print(json.dumps({"begin": kernel}), flush=True)
    try:
        msg = generate_one(llvm, request["ir"], kernel, [n for n in names if n != kernel],
                           request["triple"], request["cpu"], request["target"])
    except (RuntimeError, WideIntegerError) as e:
        msg = {"kernel": kernel, "error": str(e).strip()}
    print(json.dumps(msg), flush=True)


def in_fresh_process(llvm, request: dict, kernel: str) -> int:
    """Serve one kernel in a child forked from this process (LLVM initialised, nothing generated
    yet: a back-end's state from earlier code generation never reaches it, and no Python or LLVM
    start-up is paid for it); its exit code (negative: the signal that ended it)."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            serve_kernel(llvm, request, kernel)
        except BaseException:  # noqa: BLE001 - the parent reports a failed child
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def main() -> int:
    import llvmlite.binding as llvm
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    for line in sys.stdin:
        if line.strip():
            serve(llvm, json.loads(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
