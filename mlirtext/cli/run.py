"""`mlirtext run FILE`: run one function, as iree-run-module does.

What runs it is decided once, here: a module file (`.vmpack`, or a file that starts like one) runs
on the VM (default device local-task); an .mlir runs on the interpreter, as written at any level,
unless a compiled device is asked for (local-sync, local-task or a GPU), when it is compiled in
memory for that device's target first.
"""
from __future__ import annotations

import json
import sys
import time

from ..debugging.dispatch_trace import Tracer, kernel_sources
from ..diagnostics import Diagnostic, report
from ..interpreter import Interpreter, InterpreterError
from ..interpreter.abi import signature
from ..compiler.module_writer import in_memory, pack
from ..remote import RemoteModule
from ..values import ValueError_
from ..vm.devices import GPU_DEVICES
from ..vm.profile import Profile
from ..vm.program import record_type
from ..vm.signing import SignatureError, load_public_keys
from ..vm.vm import LoadedModule, VMError
from .compile import compile_text
from .debug_switches import make_faults, never_struck
from .io import decode_text, parse_verified, public_functions, read_bytes, write_output
from .run_values import parse_inputs, print_outputs

#: A module file is a zip archive.
MODULE_FILE_MAGIC = b"PK\x03\x04"


def main(args) -> int:
    got = read_bytes(args.input)
    if got is None:
        return 1
    data, name = got
    if args.node and not args.cluster:
        report([Diagnostic("error", "--node picks a node of the Ray cluster: give --cluster ADDRESS too")])
        return 1
    if args.cluster:
        return _run_remote(args, data, name)
    if args.input.endswith(".vmpack") or data.startswith(MODULE_FILE_MAGIC):
        if args.debug_miscompile or args.debug_crash or args.debug_unverifiable:
            report([Diagnostic("error", f"{name}: a --debug-* fault strikes in the compiler's passes: a module file "
                                        "is already compiled")])
            return 1
        return _run_module(args, data, None)
    text = decode_text(data, name)
    if text is None:
        return 1
    faults = make_faults(args)
    if faults is None:
        return 1
    if args.profile and args.trace_dispatches:
        report([Diagnostic("error", "--profile and --trace-dispatches each run the call their own way: give one")])
        return 1
    if args.device in (None, "reference") and not args.trace_dispatches and not args.profile and not faults:
        return _interpret(args, text, name)
    # (a trace needs dispatches, a fault passes: the reference device runs the VM's dispatches;
    # a profile is of native code unless the reference device is asked for)
    device = args.device or ("local-task" if args.profile else "reference")
    target = GPU_DEVICES.get(device, "reference" if device == "reference" else "llvm-cpu")
    done = compile_text(text, name, target, instrumentations=faults)
    report([never_struck(f) for f in faults if f.struck is None])
    if done is None:
        return 1
    compiled, seconds = done
    return _run_module(args, in_memory(compiled), seconds, device)   # (no module file to write and read back)


def _interpret(args, text: str, name: str) -> int:
    result = parse_verified(text, name)
    if result is None:
        return 1
    interp = Interpreter(result.module)
    fn_name = args.function
    if fn_name is None:
        public = public_functions(result.module)
        if len(public) != 1:
            report([Diagnostic("error", f"{name}: --function is needed: the module has "
                              f"{len(public)} public functions ({', '.join(public) or 'none'})")])
            return 1
        fn_name = public[0]
    fn_name = fn_name.lstrip("@")
    try:
        fn = interp.function(fn_name)
        ftype = signature(fn)
    except InterpreterError as e:
        report([Diagnostic("error", str(e), e.span)])
        return 1
    inputs = parse_inputs(args.inputs, fn_name, ftype.inputs)
    if inputs is None:
        return 1
    print(f"EXEC @{fn_name}", flush=True)  # before the run, whose own prints follow
    try:
        outputs = interp.call(fn_name, inputs)
    except ValueError_ as e:
        report([Diagnostic("error", str(e))])
        return 1
    except InterpreterError as e:
        report([Diagnostic("error", str(e), e.span)])
        return 1
    return print_outputs(args.outputs, outputs, ftype.results, args.output_max_element_count)


def _run_module(args, source, compile_seconds, device=None) -> int:
    """Run a function of a module file (its bytes) or of a module compiled in memory (then
    `compile_seconds` is its compile time) on the VM."""
    device = device or args.device or "local-task"
    ready = _ready_to_call(args, lambda keys: LoadedModule(source, device, keys), compile_seconds)
    if ready is None:
        return 1
    module, fn, inputs = ready
    try:
        start = time.perf_counter()
        if args.profile:
            outputs = _profiled(args, module, fn, device, inputs)
        else:
            outputs = fn(*inputs) if not args.trace_dispatches else _traced(args.trace_dispatches, module, fn, device, inputs)
        seconds = time.perf_counter() - start
    except (VMError, ValueError_) as e:
        report([Diagnostic("error", str(e))])
        return 1
    except OSError as e:
        report([Diagnostic("error", f"--trace-dispatches: cannot write {args.trace_dispatches}: {e.strerror or e}")])
        return 1
    except ProfileNotWritten as e:
        report([e.diagnostic])
        return 1
    if args.print_statistics:
        _print_statistics(module, fn, device, seconds, compile_seconds)
    return print_outputs(args.outputs, outputs, [record_type(r) for r in fn.results],
                         args.output_max_element_count)


def _ready_to_call(args, load, compile_seconds):
    """(module, its function to call, the inputs), with EXEC printed, or None once the reason is
    reported. `load(trusted_keys)` loads the module; one compiled here from the .mlir given has no
    signature to check."""
    try:
        keys = load_public_keys(args.trusted_keys) if args.trusted_keys and compile_seconds is None else None
        module = load(keys)
        fn = module.entry_function(args.function)
    except (SignatureError, VMError) as e:
        report([Diagnostic("error", str(e))])
        return None
    inputs = parse_inputs(args.inputs, fn.name, [record_type(r) for r in fn.inputs])
    if inputs is None:
        return None
    print(f"EXEC @{fn.name}", flush=True)
    return module, fn, inputs


def _run_remote(args, data: bytes, name: str) -> int:
    """Run on a node of the Ray cluster at --cluster that offers --device: an .mlir is compiled here for
    the device's target, the module file and the inputs go there, the outputs come back."""
    device = args.device or "local-task"
    if args.trace_dispatches or args.debug_miscompile or args.debug_crash or args.debug_unverifiable:
        report([Diagnostic("error", "--cluster runs a module as it is: no --trace-dispatches or --debug-* faults")])
        return 1
    compile_seconds = None
    if not (args.input.endswith(".vmpack") or data.startswith(MODULE_FILE_MAGIC)):
        text = decode_text(data, name)
        done = None if text is None else compile_text(text, name, GPU_DEVICES.get(
            device, "reference" if device == "reference" else "llvm-cpu"))
        if done is None:
            return 1
        data, compile_seconds = pack(done[0]), done[1]
    ready = _ready_to_call(args, lambda keys: RemoteModule(data, device, args.cluster, keys, args.node), compile_seconds)
    if ready is None:
        return 1
    module, fn, inputs = ready
    try:
        outputs = fn.call(*inputs)
    except (VMError, ValueError_) as e:
        report([Diagnostic("error", str(e))])
        return 1
    where = module.last_call
    sys.stderr.write(f"// ran on {where['hostname']} (node {where['node_id'][:12]}, pid {where['pid']}), device "
                     f"{device}: load {where['load_seconds'] * 1e3:.3f} ms, call {where['seconds'] * 1e3:.3f} ms\n")
    return print_outputs(args.outputs, outputs, [record_type(r) for r in fn.results], args.output_max_element_count)


def _traced(directory: str, module, fn, device: str, inputs) -> list:
    """Call `fn` dispatch by dispatch, writing each one's tensors and the index into `directory`."""
    tracer = Tracer(directory, fn.name, device, kernel_sources(module.file.reference_kernels()))
    outputs = fn.traced(inputs, tracer)
    tracer.finish()
    return outputs


class ProfileNotWritten(Exception):
    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def _profiled(args, module, fn, device: str, inputs) -> list:
    """`--profile-calls` profiled calls of `fn` after an unprofiled one (whose outputs are
    returned: the first call also makes the buffer pool and starts the threads, which would
    stand out in the profile as no later call has them); the trace written to `--profile`,
    the table on stderr."""
    profile = Profile(fn.name, device, kernel_sources(module.file.reference_kernels()))
    outputs = fn(*inputs)
    for _ in range(args.profile_calls):
        fn.profiled(inputs, profile)
    problem = write_output(args.profile, json.dumps(profile.trace()) + "\n")
    if problem is not None:
        raise ProfileNotWritten(problem)
    sys.stderr.write(profile.table())
    return outputs


def _print_statistics(module, fn, device: str, seconds: float, compile_seconds) -> None:
    p = fn.plan
    w = sys.stderr.write
    if compile_seconds is not None:
        w(f"// compiled in memory for {GPU_DEVICES.get(device, 'llvm-cpu')}: {compile_seconds:.3f} s\n")
    w(f"// device {module.device.name}: @{fn.name} ran {len(fn.dispatches)} dispatches in {seconds * 1e3:.3f} ms "
      f"({len(fn.waves)} waves)\n")
    w(f"// memory: peak {p['peak_bytes']} bytes (pool {p['pool_bytes']} in {len(p['slots'])} slots + results "
      f"{p['result_bytes']}; without reuse {p['without_reuse_bytes']})\n")
