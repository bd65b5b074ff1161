"""The VM's subcommands: `mlirtext compile`, `mlirtext dump`, and `mlirtext run` on a module file
(or on an .mlir compiled in memory when a compiled device is asked for).

`run FILE.mlir` without `--device` (or with `--device=reference`) stays the interpreter, running
the function as written at any level; `run FILE.mlir --device=local-sync|local-task` compiles it
in memory for llvm-cpu first; `run FILE.vmpack` runs the module file (default device local-task;
`--device=reference` interprets its reference kernels).
"""
from __future__ import annotations

import re
import sys
import time

from ..diagnostics import Diagnostic, report

MODULE_FILE_MAGIC = b"PK\x03\x04"


def _read_bytes(path: str):
    try:
        if path == "-":
            return sys.stdin.buffer.read()
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        return Diagnostic("error", f"could not open input file '{path}': {e.strerror}")


def is_module_file(path: str, data: bytes) -> bool:
    return path.endswith(".vmpack") or data.startswith(MODULE_FILE_MAGIC)


def _compile(text: str, name: str, target: str, gpu_arch: dict | None = None, validate: bool = False):
    """(Compiled, seconds) or a list of diagnostics."""
    from ..api import parse_and_verify
    from ..diagnostics import has_errors
    from .compiler import CompileFailed, compile_module
    start = time.perf_counter()
    result = parse_and_verify(text, name)
    if has_errors(result.diagnostics) or result.module is None:
        return result.diagnostics
    try:
        compiled = compile_module(result.module, target, gpu_arch=gpu_arch, validate=validate)
    except CompileFailed as e:
        return e.diagnostics
    return compiled, time.perf_counter() - start


def cmd_compile(args) -> int:
    from ..cli import read_input
    from .modfile import pack
    got = read_input(args.input)
    if got is None:
        return 1
    text, name = got
    done = _compile(text, name, args.target, {"cuda": args.cuda_arch, "rocm": args.rocm_arch}, args.validate)
    if isinstance(done, list):
        report(done)
        return 1
    compiled, seconds = done
    data = pack(compiled)
    problem = _write_bytes(args.output, data)
    if problem is not None:
        report([problem])
        return 1
    if args.print_statistics:
        _compile_statistics(compiled, seconds, len(data))
    return 0


def _write_bytes(path: str, data: bytes):
    import os
    import tempfile
    if path == "-":
        sys.stdout.buffer.write(data)
        return None
    try:
        directory = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".mlirtext-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        return Diagnostic("error", f"could not write output file '{path}': {e.strerror}")
    return None


def _compile_statistics(compiled, seconds: float, size: int) -> None:
    w = sys.stderr.write
    w(f"// compile: {seconds:.3f} s (" + ", ".join(f"{k} {v:.3f} s" for k, v in compiled.timings.items()) + ")\n")
    w(f"// module file: {size} bytes, {len(compiled.kernels)} kernels, {len(compiled.constants)} constants\n")
    for prog in compiled.programs:
        p = prog.plan
        w(f"// @{prog.name}: {sum(1 for i in prog.instructions if i['op'] == 'dispatch')} dispatches; peak memory "
          f"{p['peak_bytes']} bytes (pool {p['pool_bytes']} in {len(p['slots'])} slots + results {p['result_bytes']}; "
          f"without reuse {p['without_reuse_bytes']})\n")


def cmd_dump(args) -> int:
    from .dump import dump
    from .modfile import ModuleFileError, read_module_file
    data = _read_bytes(args.input)
    if isinstance(data, Diagnostic):
        report([data])
        return 1
    try:
        mf = read_module_file(data)
    except ModuleFileError as e:
        report([Diagnostic("error", f"{args.input}: {e}")])
        return 1
    sys.stdout.write(dump(mf, args.ir, args.print_target_code))
    return 0


def run_compiled(args) -> int:
    """`mlirtext run` on a module file, or on an .mlir compiled in memory for a compiled device."""
    from ..cli import parse_inputs, print_outputs
    from ..values import ValueError_
    from .modfile import pack
    from .program import record_type
    from .devices import GPU_DEVICES
    from .vm import LoadedModule, VMError
    data = _read_bytes(args.input)
    if isinstance(data, Diagnostic):
        report([data])
        return 1
    compile_seconds = None
    device = args.device or "local-task"
    if not is_module_file(args.input, data):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            report([Diagnostic("error", f"{args.input}: neither MLIR text nor a module file")])
            return 1
        target = GPU_DEVICES.get(device, "llvm-cpu")
        done = _compile(text, "<stdin>" if args.input == "-" else args.input, target)
        if isinstance(done, list):
            report(done)
            return 1
        compiled, compile_seconds = done
        data = pack(compiled)
    try:
        module = LoadedModule(data, device)
        if args.function is None:
            if len(module.functions) != 1:
                raise VMError(f"--function is needed: the module exports {len(module.functions)} functions "
                              f"({', '.join('@' + n for n in module.functions) or 'none'})")
            fn = next(iter(module.functions.values()))
        else:
            fn = module.function(args.function)
        types_in = [record_type(r) for r in fn.inputs]
        types_out = [record_type(r) for r in fn.results]
        inputs = parse_inputs(args, fn.name, types_in)
        print(f"EXEC @{fn.name}", flush=True)
        start = time.perf_counter()
        outputs = fn(*inputs)
        seconds = time.perf_counter() - start
    except (VMError, ValueError_) as e:
        report([Diagnostic("error", str(e))])
        return 1
    if args.print_statistics:
        p = fn.plan
        w = sys.stderr.write
        if compile_seconds is not None:
            w(f"// compiled in memory for {GPU_DEVICES.get(device, 'llvm-cpu')}: {compile_seconds:.3f} s\n")
        w(f"// device {module.device.name}: @{fn.name} ran {len(fn.dispatches)} dispatches in {seconds * 1e3:.3f} ms "
          f"({len(fn.waves)} waves)\n")
        w(f"// memory: peak {p['peak_bytes']} bytes (pool {p['pool_bytes']} in {len(p['slots'])} slots + results "
          f"{p['result_bytes']}; without reuse {p['without_reuse_bytes']})\n")
    return print_outputs(args, outputs, types_out)


def add_arguments(sub) -> None:
    """The compile and dump subcommands (run's extra flags are added where run is declared)."""
    comp = sub.add_parser("compile", help="compile an .mlir module into a module file (.vmpack) for the VM")
    comp.add_argument("input", help="an .mlir file (hlo, tosa or linalg level), or - for standard input")
    comp.add_argument("-o", dest="output", required=True, help="the module file to write (e.g. out.vmpack)")
    comp.add_argument("--target", default="llvm-cpu", type=_targets, metavar="TARGET[,TARGET...]",
                      help="llvm-cpu: native kernels for this CPU (default); reference: interpreted kernels only; "
                           "cuda (PTX), rocm (AMDGPU object), vulkan-spirv, opencl-spirv (SPIR-V): GPU kernels; several "
                           "targets, comma-separated, give one executable each in the module file")
    comp.add_argument("--cuda-arch", default="sm_80", type=_arch("sm_", CUDA_ARCH),
                      help="the PTX architecture for --target=cuda (default sm_80)")
    comp.add_argument("--rocm-arch", default="gfx942", type=_arch("gfx", ROCM_ARCH),
                      help="the AMDGPU processor for --target=rocm (default gfx942)")
    comp.add_argument("--validate", action="store_true",
                      help="check GPU code with ptxas (sm_80 and sm_90), ld.lld + llvm-readelf (HSA code object), "
                           "spirv-val (vulkan1.3, opencl1.2); a kernel that fails is a compile error")
    comp.add_argument("--print-statistics", action="store_true",
                      help="report compile time, module size and each function's peak memory on stderr")
    dump = sub.add_parser("dump", help="print a module file's sections (like iree-dump-module)")
    dump.add_argument("input", help="a .vmpack file")
    dump.add_argument("--ir", action="store_true", help="also print the kernels (MLIR and LLVM IR)")
    dump.add_argument("--print-target-code", action="store_true",
                      help="also print each GPU kernel's code: PTX, AMDGPU assembly, SPIR-V assembly")


#: The forms of GPU processor names. LLVM only warns about a processor it does not know and then
#: generates code for a generic one, so a misspelt name is refused here instead.
CUDA_ARCH = re.compile(r"sm_[1-9][0-9]{1,2}[af]?")
ROCM_ARCH = re.compile(r"gfx[0-9]{2,4}[0-9a-f]?")


def _arch(example: str, form: "re.Pattern"):
    """An argparse type: a processor name of `form` (for example sm_80, gfx942)."""
    def check(text: str) -> str:
        import argparse
        if not form.fullmatch(text):
            raise argparse.ArgumentTypeError(f"'{text}' is not a {example}... processor name "
                                             f"(for example {'sm_80, sm_90' if example == 'sm_' else 'gfx90a, gfx942'})")
        return text
    return check


def _targets(text: str) -> str:
    """--target: one or more known targets, comma-separated, each once."""
    import argparse
    from .compiler import TARGETS
    names = [t.strip() for t in text.split(",")]
    for t in names:
        if t not in TARGETS:
            raise argparse.ArgumentTypeError(f"unknown target '{t}' (targets: {', '.join(TARGETS)})")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a target is named twice in '{text}'")
    return ",".join(names)
