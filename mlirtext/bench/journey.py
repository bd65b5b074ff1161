"""The journey of a module for the report page: its text at every level (from the lowering
service, which also times the passes), and the dispatches of the compiled module with what each
kernel became."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .. import api
from ..targets.llvm_ir import translate_module
from ..transforms.lowering_service import LoweringStopped, lower_by_level


@dataclass
class Dispatch:
    index: int
    kernel: str
    signature: str            # (inputs) -> (outputs)
    became: str               # micro-kernel, generated loops (+ workgroups, vector widths), interpreted
    mlir: str = ""            # the kernel at the linalg level (the reference executable)
    code: str = ""            # the target's code for it: LLVM IR (llvm-cpu), PTX, SPIR-V assembly, ...
    code_kind: str = ""       # what `code` is


@dataclass
class HostFunction:
    name: str
    listing: str              # the host program, as `mlirtext dump` prints it
    dispatches: list = field(default_factory=list)


@dataclass
class Journey:
    levels: list              # the lowering service's levels (`Level`: level, text, op_counts, passes)
    target_ir: Optional[str]  # LLVM IR of the llvm level (the whole module, before dispatch formation)
    error: Optional[str]      # where the level-by-level lowering stopped, if it did
    dispatches: dict          # target -> [HostFunction]: each compiled module's dispatches
    dumps: dict               # target -> the module file's sections (`mlirtext dump`)


def module_journey(text: str, filename: str, modules: dict) -> Journey:
    """The journey of `text`; `modules` maps target -> module file bytes (the bench's artifacts)."""
    levels, target_ir, error = _levels(text, filename)
    dispatches, dumps = {}, {}
    for target, data in modules.items():
        dispatches[target], dumps[target] = _dispatches(data, target)
    return Journey(levels, target_ir, error, dispatches, dumps)


def _levels(text: str, filename: str) -> tuple[list, Optional[str], Optional[str]]:
    """The levels of `text` lowered as far as they go, the LLVM IR of the llvm level when it
    got there, and why it stopped (or could not start)."""
    result = api.parse_and_verify(text, filename)
    if not result.ok:
        return [], None, result.diagnostics[0].format()
    levels = []
    try:
        for level in lower_by_level(result.module, start="linalg"):
            levels.append(level)
    except LoweringStopped as e:
        return levels, None, str(e)
    try:
        return levels, translate_module(result.module), None
    except Exception:  # noqa: BLE001 - no target output is not an error: the levels still show
        return levels, None, None


def _dispatches(data: bytes, target: str) -> tuple[list, str]:
    """The host functions of a module file with their dispatches, and the file's dump."""
    from ..vm.dump import dump
    from ..vm.modfile import read_module_file
    from ..vm.program import HostProgram, describe, listing
    mf = read_module_file(data)
    m = mf.manifest
    kernels_mlir = mf.entry(m["executables"]["reference"]["kernels"]).decode()
    became = _became(mf, target)
    functions = []
    for export in m["exports"]:
        prog = HostProgram.from_json(mf.json(export["program"]))
        fn = HostFunction(export["name"], listing(prog))
        for ins in prog.instructions:
            if ins["op"] != "dispatch":
                continue
            k = m["kernels"][ins["kernel"]]
            signature = f"({', '.join(describe(r) for r in k['inputs'])}) -> " \
                        f"({', '.join(describe(r) for r in k['outputs'])})"
            what, code, kind = became(ins["kernel"], k)
            fn.dispatches.append(Dispatch(len(fn.dispatches), ins["kernel"], signature, what,
                                          _mlir_function(kernels_mlir, ins["kernel"]), code, kind))
        functions.append(fn)
    return functions, dump(mf)


def _became(mf, target: str):
    """`(kernel name, kernel record) -> (what it became, its code, what the code is)` for `target`."""
    from ..vm.dump import native_ir, native_vectors
    exe = mf.manifest["executables"].get(target)
    if target == "reference" or exe is None:
        return lambda name, k: ("interpreted by the reference device (linalg on tensors)", "", "")
    if target == "llvm-cpu":   # one object for all kernels, its LLVM IR beside it where kept
        ir, vectors = native_ir(mf) or "", native_vectors(mf)

        def native(name, k):
            what = k.get("implementation", "generated loops")
            if k.get("workgroups"):
                what += f"; {k['workgroups']['count']} workgroups on output axis {k['workgroups']['axis']}"
            if name in vectors:
                what += f"; vectors: {vectors[name]}"
            return what, _llvm_function(ir, name), "LLVM IR" if ir else ""
        return native

    def gpu(name, k):   # a GPU executable: one code file per kernel
        g = exe.get("kernels", {}).get(name, {})
        what = f"{exe.get('format', target)} for {exe.get('arch', '?')}"
        if g.get("threads") is not None:
            what += (f": {g['threads']} threads ({g.get('workgroups')} workgroups of {g.get('workgroup_size')}; "
                     f"{'one thread per output row' if g.get('split') else 'serial: one thread'})")
        path = g.get("assembly") or g.get("code")
        text = mf.entry(path).decode(errors="replace") if path in mf.entries else ""
        return what, text, exe.get("format", target)
    return gpu


def _mlir_function(module_text: str, name: str) -> str:
    """The text of `func.func @name` in a printed module (it ends at the `}` at its own indent)."""
    lines = module_text.split("\n")
    for i, line in enumerate(lines):
        if re.search(rf"func\.func (?:\w+ )?@{re.escape(name)}\(", line):
            indent = line[:len(line) - len(line.lstrip())]
            for j in range(i + 1, len(lines)):
                if lines[j] == indent + "}":
                    return "\n".join(lines[i:j + 1]) + "\n"
    return ""


def _llvm_function(ir: str, name: str) -> str:
    m = re.search(rf"^define [^@\n]*@{re.escape(name)}\(.*?^}}$", ir, re.S | re.M)
    return m.group(0) + "\n" if m else ""
