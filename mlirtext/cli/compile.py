"""`mlirtext compile FILE -o OUT.vmpack`: compile a module into a module file for the VM."""
from __future__ import annotations

import sys
import time
from typing import Optional

from ..diagnostics import Diagnostic, report
from ..compiler.driver import CompileFailed, compile_module
from ..compiler.module_writer import pack
from ..vm.signing import SignatureError, load_private_key
from .io import parse_verified, read_input, write_output


def main(args) -> int:
    key = None
    if args.sign:   # (read first: a key that cannot be used stops the command before it compiles)
        try:
            key = load_private_key(args.sign)
        except SignatureError as e:
            report([Diagnostic("error", str(e))])
            return 1
    got = read_input(args.input)
    if got is None:
        return 1
    done = compile_text(*got, args.target, {"cuda": args.cuda_arch, "rocm": args.rocm_arch}, args.validate)
    if done is None:
        return 1
    compiled, seconds = done
    data = pack(compiled, key, keep_llvm_ir=args.keep_llvm_ir)
    problem = write_output(args.output, data)
    if problem is not None:
        report([problem])
        return 1
    if args.print_statistics:
        _print_statistics(compiled, seconds, len(data))
    return 0


def compile_text(text: str, name: str, target: str, gpu_arch: Optional[dict] = None, validate: bool = False,
                 instrumentations=()):
    """(compiled module, seconds, parsing included) of `text`; None after reporting why it does not compile.
    `instrumentations` watch the compiler's passes."""
    start = time.perf_counter()
    result = parse_verified(text, name)
    if result is None:
        return None
    try:
        compiled = compile_module(result.module, target, gpu_arch=gpu_arch, validate=validate,
                                  instrumentations=instrumentations)
    except CompileFailed as e:
        report(e.diagnostics)
        return None
    return compiled, time.perf_counter() - start


def _print_statistics(compiled, seconds: float, size: int) -> None:
    w = sys.stderr.write
    w(f"// compile: {seconds:.3f} s (" + ", ".join(f"{k} {v:.3f} s" for k, v in compiled.timings.items()) + ")\n")
    w(f"// module file: {size} bytes, {len(compiled.kernels)} kernels, {len(compiled.constants)} constants\n")
    for prog in compiled.programs:
        p = prog.plan
        w(f"// @{prog.name}: {sum(1 for i in prog.instructions if i['op'] == 'dispatch')} dispatches; peak memory "
          f"{p['peak_bytes']} bytes (pool {p['pool_bytes']} in {len(p['slots'])} slots + results {p['result_bytes']}; "
          f"without reuse {p['without_reuse_bytes']})\n")
