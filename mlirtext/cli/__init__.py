"""The `mlirtext` command: the argument tree and `main`. Each subcommand's work is in its own module
(`opt.py`, `format.py`, `run.py`, `check.py`, `compile.py`, `dump.py`, `keygen.py`, `translate.py`, `import_.py`,
`bench.py`, `lsp.py`, `bisect.py`, `compare.py`, `reduce.py`, each with `main(args)`); `io.py` reads inputs and writes
outputs for all of them.

Exit status: 0 on success, 1 when anything was diagnosed (bad input, bad request). Problems are printed
MLIR-style on stderr, never as a traceback.
"""
from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import re
import sys

from .. import limits
from ..importers.levels import LEVELS as IMPORT_LEVELS
from ..transforms.conversions.levels import LEVELS
from ..transforms.passes import builtin_passes
from ..transforms.tolerance import RELATIVE_BOUND, ULP_BOUND
from ..compiler.target_names import TARGETS
from ..syntax.wrapping import DEFAULT_WIDTH
from ..vm.device_names import DEVICES

#: subcommand -> the module that runs it. Only the one asked for is imported: importing them all (the
#: VM, llvmlite, the benchmark's tables) costs 0.04 s more CPU at start-up, a fifth of what
#: `mlirtext opt` on a small file costs (measured with /usr/bin/time, 3 runs each).
HANDLERS = {"opt": "opt", "format": "format", "run": "run", "check": "check", "compile": "compile", "dump": "dump",
            "keygen": "keygen", "translate": "translate", "import": "import_", "bench": "bench", "lsp": "lsp",
            "bisect": "bisect", "compare": "compare", "reduce": "reduce", "sweep": "sweep", "worker": "worker"}

#: The forms of GPU processor names. LLVM only warns about a processor it does not know and then
#: generates code for a generic one, so a misspelt name is refused here instead.
CUDA_ARCH = re.compile(r"sm_[1-9][0-9]{1,2}[af]?")
ROCM_ARCH = re.compile(r"gfx[0-9]{2,4}[0-9a-f]?")

RUN_TRUST = """A module file is native code: running one runs whatever its maker put in it (its checksums
only catch damage). Without --trusted-keys an unsigned module file is trusted as such; with them,
a file that none of the keys signed (mlirtext compile --sign KEY) is refused before any of its
code is loaded."""

TRANSLATE_HELP = """Translate a module in the llvm dialect to LLVM IR text (like mlir-translate --mlir-to-llvmir).
The input must already be at the llvm level (mlirtext opt FILE --lower-to=llvm); with --lower, a module
at a higher level is lowered first with the native-code pipeline (the usual steps, plus
math-polynomial-approximation before convert-loops-to-llvm). The IR is verified by LLVM before it is
written."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 1, like every other diagnosed error
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def build_argparser(pass_flags: bool = True) -> argparse.ArgumentParser:
    """The argument tree; `pass_flags`: with a flag per pass in `opt` (its help lists them), which
    imports every pass. Without them, `main` has spelt each pass flag as `--pass-pipeline`."""
    parser = _Parser(prog="mlirtext", description="Read, check, print and lower MLIR text.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_opt(sub, pass_flags)
    _add_format(sub)
    _add_run(sub)
    _add_compile(sub)
    _add_sweep(sub)
    _add_worker(sub)
    _add_dump(sub)
    _add_keygen(sub)
    _add_check(sub)
    _add_lsp(sub)
    _add_translate(sub)
    _add_bench(sub)
    _add_import(sub)
    _add_bisect(sub)
    _add_compare(sub)
    _add_reduce(sub)
    return parser


def _add_opt(sub, pass_flags: bool) -> None:
    opt = sub.add_parser("opt", help="parse, verify and print MLIR (like mlir-opt)")
    opt.add_argument("input", nargs="?", default="-", help="an .mlir file, or - for standard input (default)")
    opt.add_argument("-o", dest="output", default="-", help="output file (default: standard output)")
    opt.add_argument("--split-input-file", action="store_true",
                     help="treat each '// -----' separated chunk as its own input")
    opt.add_argument("--print-generic", "--mlir-print-op-generic", dest="generic", action="store_true",
                     help="print every op in the generic form")
    opt.add_argument("--emit-bytecode", action="store_true",
                     help="write MLIR bytecode (version 6, as iree-opt writes it) instead of text")
    opt.add_argument("--mlir-print-debuginfo", dest="locations", action="store_true",
                     help="print op locations")
    opt.add_argument("--verify-diagnostics", action="store_true",
                     help="check '// expected-error {{...}}' annotations instead of failing on errors")
    opt.add_argument("--irdl-file", dest="irdl_files", action="append", default=[], metavar="FILE",
                     help="register the dialects an IRDL file defines (irdl.dialect ops) before reading the "
                          "input (repeatable)")
    opt.add_argument("--dialect-path", dest="dialect_paths", action="append", default=[], metavar="DIR",
                     help="register the dialects of every *.irdl.mlir file under DIR (repeatable)")
    opt.add_argument("--allow-unregistered-dialect", action="store_true",
                     help="accept ops of dialects mlirtext does not know (in generic form; checked "
                          "structurally); without it they are an error, as in mlir-opt")
    group = opt.add_argument_group("passes (run in the order given)")
    group.add_argument("--pass-pipeline", dest="pipeline", action="append", default=[], metavar="PIPELINE",
                       help="a pipeline in MLIR's syntax: 'builtin.module(func.func(canonicalize,cse))'")
    for name, cls in sorted(builtin_passes().all().items() if pass_flags else ()):
        group.add_argument(f"--{name}", dest="pipeline", action="append_const", const=name,
                           help=f"{cls.summary} (options: --{name}='key=value ...')" if
                           dataclasses.fields(cls) else cls.summary)
    group.add_argument("--lower-to", choices=LEVELS[1:], metavar="LEVEL",
                       help="lower from the input's level down to LEVEL: tosa, linalg, loops or llvm "
                            "(after the other passes given)")
    group.add_argument("--list-passes", action="store_true", help="list the passes and exit")
    group.add_argument("--print-ir-before-all", action="store_true", help="print the IR before every pass")
    group.add_argument("--print-ir-after-all", action="store_true", help="print the IR after every pass")
    group.add_argument("--print-ir-after-change", action="store_true",
                       help="print the IR after every pass that changed it")
    group.add_argument("--diff", action="store_true",
                       help="with --print-ir-after-all or --print-ir-after-change: print each pass's "
                            "change as a unified diff against the IR before it (passes that changed "
                            "nothing are skipped)")
    group.add_argument("--explain", action="store_true",
                       help="after the passes, a table on stderr: each pass, its time, the op count "
                            "before -> after, and what it rewrote (ops matched by their source op)")
    group.add_argument("--timing", "--mlir-timing", dest="timing", action="store_true",
                       help="report the time each pass took")
    group.add_argument("--check-semantics", action="store_true",
                       help="run each function before and after every pass on the same seeded random "
                            "inputs; a pass that changes the results is an error")
    group.add_argument("--seed", type=int, default=0, help="seed of --check-semantics' inputs (default 0)")
    _add_max_memory(opt)
    group.add_argument("--function", help="the function --input is for (default: the module's only public one)")
    group.add_argument("--input", dest="inputs", action="append", default=[], metavar="VALUE",
                       help="an argument of --check-semantics' run of --function, as for `mlirtext run` "
                            "(repeat per argument; default: seeded random values)")
    _add_tolerance(group, "--check-semantics")
    _add_faults(group)


def _add_tolerance(group, what: str) -> None:
    group.add_argument("--tolerance", type=float, default=RELATIVE_BOUND, metavar="RELATIVE",
                       help=f"{what}: a float result may move by this much of its largest magnitude "
                            f"(default {RELATIVE_BOUND:g}) ...")
    group.add_argument("--tolerance-ulp", type=int, default=ULP_BOUND, metavar="N",
                       help=f"... or by N units in the last place (default {ULP_BOUND})")


def _add_faults(group) -> None:
    """The switches that inject a fault into one pass (mlirtext/debugging/faults.py); one is for tests."""
    group.add_argument("--debug-miscompile", action="append", metavar="PASS:OP",
                       help="after the first run of pass PASS that leaves an op named OP, nudge that op's scalar "
                            "result (+1 for an integer or index, +2**-10 for a float) for every use of it (run: in "
                            "the compiler's passes; an .mlir then runs compiled)")
    group.add_argument("--debug-crash", action="append", metavar="PASS:OP",
                       help="after the first run of pass PASS that leaves an op named OP, the pass fails with an "
                            "internal error on that op (a crash to bisect or reduce)")
    group.add_argument("--debug-unverifiable", action="append", metavar="PASS:OP", help=argparse.SUPPRESS)


def _add_bisect(sub) -> None:
    summary = ("find the first pass of the lowering to llvm that changes a function's results, crashes or leaves "
               "IR that does not verify")
    bis = sub.add_parser("bisect", help=summary, description=summary + ". The interpreter runs the function "
                         "on the same inputs after each level of the lowering, then after each pass of the first "
                         "level whose results moved. Exit status 1 when a pass is found, 0 when none.")
    bis.add_argument("input", help="an .mlir file (hlo, tosa, linalg or loops level)")
    bis.add_argument("--function", help="the function to follow (default: the module's only public one)")
    bis.add_argument("--input", dest="inputs", action="append", default=[], metavar="VALUE",
                     help="an argument, as for `mlirtext run` (repeat per argument; default: seeded random values)")
    bis.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    bis.add_argument("--devices", type=_devices, default=None, metavar="D1,D2",
                     help="instead of the pipeline, compile the module and run each dispatch on each of these "
                          f"devices ({', '.join(d for d in DEVICES if d != 'reference')}) fed the reference "
                          "device's inputs: the first dispatch that differs from the reference's, its kernel and "
                          "source ops")
    bis.add_argument("--cluster", metavar="ADDRESS",
                     help="with --devices: run each device's dispatches on a node of this Ray cluster (HOST:PORT) "
                          "that offers the device (`mlirtext worker --devices ...`); the module file and each "
                          "dispatch's inputs go there, the outputs come back and are compared here")
    _add_node(bis)
    bis.add_argument("-o", dest="output", metavar="REPRO_DIR",
                     help="write the repro there: the function before the pass, its inputs and results as .npy, "
                          "and README with the command that shows the failure")
    _add_tolerance(bis, "results")
    _add_faults(bis)
    bis.add_argument("--debug-wrong-kernel", action="append", metavar="DEVICE:KERNEL",
                     help="with --devices: on DEVICE, kernel @KERNEL gets the first element of its first output "
                          "wrong (a kernel wrong on one device, to check the bisect)")


def _add_run(sub) -> None:
    run = sub.add_parser("run", help="run a function: an .mlir on the interpreter, or a .vmpack (or an .mlir "
                                     "compiled in memory) on the VM (like iree-run-module)", description=RUN_TRUST)
    run.add_argument("input", help="an .mlir file, a .vmpack module file, or - for standard input")
    run.add_argument("--function", help="the function to run (default: the module's only public one)")
    run.add_argument("--input", dest="inputs", action="append", default=[], metavar="VALUE",
                     help="an argument: 2x3xf32=1 2 3 4 5 6, f32=0.5, 7, or @x.npy (repeat per argument)")
    run.add_argument("--output", dest="outputs", action="append", default=[], metavar="DEST",
                     help="where result i goes: - (print), @y.npy (write), +y.npy (append)")
    run.add_argument("--device", default=None, choices=DEVICES,
                     help="reference: the interpreter (default for .mlir); local-sync / local-task: native "
                          "kernels on the VM, one by one / on a thread pool (default for .vmpack); an .mlir "
                          "is then compiled in memory for llvm-cpu; vulkan / opencl / cuda: the module's "
                          "vulkan-spirv / opencl-spirv / cuda kernels on a GPU (without one, vulkan runs on Mesa "
                          "lavapipe and opencl on pocl's CPU driver)")
    run.add_argument("--print-statistics", action="store_true",
                     help="report dispatches, time and peak memory of the run on stderr (VM devices)")
    run.add_argument("--cluster", metavar="ADDRESS",
                     help="run on a node of this Ray cluster (HOST:PORT) that offers --device (`mlirtext worker "
                          "--devices ...`); the module file and inputs go there, outputs and timings come back")
    _add_node(run)
    run.add_argument("--trusted-keys", type=_names, default=None, metavar="KEY.pub[,KEY.pub...]",
                     help="Ed25519 public keys (PEM or OpenSSH): run a module file only if one of them signed it "
                          "(a module compiled in memory from an .mlir needs no signature)")
    run.add_argument("--output-max-element-count", "--output_max_element_count", "--print-max-elements",
                     type=_count, default=1024, metavar="N",
                     help="print at most N elements of each result and elide the rest with '...', as "
                          "iree-run-module does (default 1024); --output=@FILE.npy writes a result whole")
    _add_max_memory(run)
    _add_faults(run)
    run.add_argument("--trace-dispatches", metavar="DIR",
                     help="write every dispatch's inputs and outputs as .npy into DIR, with an index "
                          "(dispatches.json: name, kernel, source ops, shapes, dtypes, time); the dispatches run "
                          "one at a time; an .mlir then runs compiled, on the reference device by default")
    run.add_argument("--profile", metavar="FILE.json",
                     help="write a timeline of the call in the Chrome Trace Event Format (chrome://tracing, "
                          "Perfetto: one track per thread, each dispatch and its workgroups, the host steps, "
                          "the allocations) and print the time of each dispatch on stderr; the dispatches run "
                          "one at a time; an .mlir then runs compiled, on local-task by default")
    run.add_argument("--profile-calls", type=_count, default=1, metavar="N",
                     help="with --profile: profile N calls (default 1), after one call that is not profiled "
                          "(it makes the buffer pool and starts the threads) and whose outputs are printed")


SWEEP_HELP = """Run a suite's tests, each one Ray task with a time and memory limit, on a Ray instance started
in this process (one CPU per core) or on the cluster at --cluster / RAY_ADDRESS. SUITE: onnx (the ONNX
node tests), check, lowering, native, vm, gpu (the corpus runs), bench (the benchmark workloads), a directory
of .mlir or .onnx files, or `report` (the latest run against the previous one and the best ever).
Results go to an SQLite database (--db); with --expect, a test worse than expected fails the sweep
(exit status 1) and tests better than expected are listed."""


def _add_sweep(sub) -> None:
    sw = sub.add_parser("sweep", help="run a conformance suite on Ray, checked against expected statuses",
                        description=SWEEP_HELP)
    sw.add_argument("suite", metavar="SUITE", help="onnx, check, lowering, native, vm, gpu, bench, a directory, "
                                                   "or report")
    sw.add_argument("--cluster", metavar="ADDRESS", help="a Ray cluster's HOST:PORT (default: RAY_ADDRESS, "
                                                          "else a local Ray instance)")
    sw.add_argument("--devices", type=_names, metavar="D1,D2",
                    help="devices to run on (onnx: reference,local-task; vm: local-sync; files: local-task; gpu: "
                         "those of --targets); on a cluster, tasks go to nodes that advertise them (`mlirtext "
                         "worker --devices`); a local Ray instance offers the devices named here, and no other "
                         "(the gpu suite's runs on a device no node offers are skips)")
    sw.add_argument("--targets", type=_names, metavar="T1,T2",
                    help="(gpu) GPU targets, each TARGET or TARGET:ARCH (default cuda,rocm,vulkan-spirv; also "
                         "opencl-spirv, rocm:gfx90a, cuda:sm_90); vulkan-spirv runs on vulkan, opencl-spirv on "
                         "opencl, cuda on cuda, where a node offers the device (else those results are skips)")
    sw.add_argument("--expect", metavar="FILE", help="expected status per test (.json, or TSV: test, status, "
                                                     "reason); a test worse than expected fails the sweep")
    sw.add_argument("--write-expected", metavar="FILE", help="write this run's statuses as an expected file")
    sw.add_argument("--db", metavar="FILE", help="the results database (default: ~/.cache/mlirtext/sweeps.sqlite)")
    sw.add_argument("--filter", default="", metavar="SUBSTR", help="only tests whose name contains this")
    sw.add_argument("--limit", type=int, default=0, metavar="N", help="only the first N tests")
    sw.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per test (default 120)")
    sw.add_argument("--memory", type=int, default=4096, metavar="MB",
                    help="memory one test may take, in MiB (default 4096)")
    sw.add_argument("--budget", type=float, default=0.0, metavar="S",
                    help="start no test after this many seconds (0: none); the summary says how many were left")
    sw.add_argument("--num-cpus", type=int, default=0, metavar="N",
                    help="CPUs of the local Ray instance (default: every core)")
    sw.add_argument("--corpus", metavar="DIR", help="the corpus for check/lowering/native/vm/gpu (default: "
                                                    "MLIRTEXT_CORPUS, else ../shared/corpus beside the checkout)")
    sw.add_argument("--files", action="append", default=[], metavar="GLOB",
                    help="(check/lowering/native/vm/gpu) only corpus files matching this glob, relative to the "
                         "corpus (repeatable; default: the three groups of the figures)")
    sw.add_argument("--approx", action="store_true",
                    help="(native) lower to llvm with the native pipeline (polynomial approximation of math functions): "
                         "floats may then differ by the approximation's bound too")
    sw.add_argument("--tsv", metavar="FILE", help="write one line per result: test, status, error, ...")
    sw.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    _add_faults(sw)
    sw.add_argument("--html", metavar="FILE", help="(report) also write the report as an HTML page")
    sw.add_argument("--suite", dest="only_suite", metavar="NAME", help="(report) the suite to report on "
                                                                        "(default: that of the latest run)")


def _add_worker(sub) -> None:
    wk = sub.add_parser("worker", help="join a Ray cluster as a worker node that runs modules on its devices",
                        description="Start a Ray worker node (`ray start`) that advertises one resource per "
                                    "device kind it runs (device:vulkan, ...), so that `run --cluster ADDRESS "
                                    "--device D` and sweeps send work for D to it. Stays in the foreground.")
    wk.add_argument("--address", required=True, metavar="HOST:PORT", help="the cluster's head")
    wk.add_argument("--devices", type=_names, default=["local-sync", "local-task", "reference"], metavar="D1,D2",
                    help=f"device kinds this node runs (default local-sync,local-task,reference; known: "
                         f"{','.join(DEVICES)})")
    wk.add_argument("--num-cpus", type=int, default=0, metavar="N", help="CPUs to offer (default: every core)")


def _add_compile(sub) -> None:
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
    comp.add_argument("--keep-llvm-ir", action="store_true",
                      help="keep the llvm-cpu kernels' optimised LLVM IR in the module file, for `dump --ir` (no "
                           "load or run needs it; it can double a small model's module)")
    comp.add_argument("--sign", metavar="KEY",
                      help="sign the module file with this Ed25519 private key (PEM from `mlirtext keygen` or "
                           "`openssl genpkey -algorithm ed25519`, or OpenSSH); `run --trusted-keys KEY.pub` checks it")
    _add_max_memory(comp)


def _add_dump(sub) -> None:
    dump = sub.add_parser("dump", help="print a module file's sections (like iree-dump-module)")
    dump.add_argument("input", help="a .vmpack file")
    dump.add_argument("--ir", action="store_true", help="also print the kernels (MLIR and LLVM IR)")
    dump.add_argument("--print-target-code", action="store_true",
                      help="also print each GPU kernel's code: PTX, AMDGPU assembly, SPIR-V assembly")
    dump.add_argument("--trusted-keys", type=_names, default=None, metavar="KEY.pub[,KEY.pub...]",
                      help="check the file's signature against these Ed25519 public keys, as run does (dump "
                           "never loads or runs the file's code either way)")


def _add_keygen(sub) -> None:
    keygen = sub.add_parser("keygen", help="make an Ed25519 key pair for signing module files",
                            description="Write a new Ed25519 private key to KEY (PKCS#8 PEM, readable by you only; "
                                        "the same as `openssl genpkey -algorithm ed25519 -out KEY`) and its public "
                                        "key to KEY.pub (PEM). Sign with `mlirtext compile --sign KEY`, check with "
                                        "`mlirtext run --trusted-keys KEY.pub`. Existing files are never overwritten.")
    keygen.add_argument("output", metavar="KEY", help="the private key file to write (KEY.pub gets the public key)")


def _add_format(sub) -> None:
    fmt = sub.add_parser("format", help="print MLIR in one layout, comments kept (or rewrite the file with -i)",
                         description="Print each '// -----' chunk in its custom form: 2-space indentation, long "
                                     "attribute dictionaries and operand lists wrapped, comments, SSA names, block "
                                     "labels, locations and aliases kept. A file that does not parse is not "
                                     "formatted (its diagnostics, exit status 1).")
    fmt.add_argument("input", nargs="?", default="-", help="an .mlir file, or - for standard input (default)")
    where = fmt.add_mutually_exclusive_group()
    where.add_argument("-i", "--in-place", action="store_true", help="rewrite the file (only when it changes)")
    where.add_argument("-o", dest="output", metavar="OUT", help="write here instead of standard output")
    fmt.add_argument("--width", type=_width, default=DEFAULT_WIDTH, metavar="N",
                     help=f"wrap lines longer than this (default {DEFAULT_WIDTH})")


def _width(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 20:
        raise argparse.ArgumentTypeError(f"expected a width of at least 20 columns, got '{text}'")
    return value


def _add_check(sub) -> None:
    chk = sub.add_parser("check", help="run a test file's functions and report their check.* assertions")
    chk.add_argument("input", help="an .mlir file, or - for standard input")
    chk.add_argument("--split-input-file", action="store_true",
                     help="treat each '// -----' separated chunk as its own module")
    chk.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                     help="stop a function that runs longer than this (default 60; 0 = no limit)")
    chk.add_argument("-q", "--quiet", action="store_true", help="print only failing functions and the summary")
    _add_max_memory(chk)


def _add_lsp(sub) -> None:
    lsp = sub.add_parser("lsp", help="start the language server on standard input/output (for editors)")
    # Clients name their transport (vscode-languageclient appends --stdio); stdio is the only one.
    lsp.add_argument("--stdio", action="store_true", help="talk over standard input/output (the default)")
    lsp.add_argument("--no-open-worker", action="store_true",
                     help="analyse in this process only (no worker process that shares opening large files)")


def _add_translate(sub) -> None:
    tr = sub.add_parser("translate", help="translate the llvm dialect to LLVM IR (like mlir-translate)",
                        description=TRANSLATE_HELP)
    tr.add_argument("input", nargs="?", default="-", help="an .mlir file, or - for standard input (default)")
    tr.add_argument("-o", dest="output", default="-", help="output file (default: standard output)")
    tr.add_argument("--mlir-to-llvmir", action="store_true", required=True,
                    help="the translation to perform (the only one: LLVM IR text)")
    tr.add_argument("--lower", action="store_true",
                    help="lower an input above the llvm level first (hlo/tosa/linalg/loops -> llvm)")
    tr.add_argument("--optimize", action="store_true",
                    help="print the IR after LLVM's O3 pipeline for this host CPU (vectorised loops)")


def _add_bench(sub) -> None:
    summary = ("compile a module for each target, run it on each device and report size, compile and load "
               "time, latency, peak memory and speedup")
    bench = sub.add_parser("bench", help=summary, description=summary + ". Every row's outputs are checked "
                           "against the baseline (the reference device). Exit status 1: nothing could be measured "
                           "(bad file, function, input or request), a row's outputs differ from the baseline, a "
                           "call failed, or a target named in --targets did not compile.")
    bench.add_argument("input", help="an .mlir file (hlo, tosa or linalg level)")
    bench.add_argument("--function", help="the function to measure (default: the module's only public one)")
    bench.add_argument("--input", dest="inputs", action="append", default=[], metavar="VALUE",
                       help="an argument, as for `mlirtext run` (2x3xf32=1 2 3 4 5 6, f32=0.5, @x.npy); "
                            "default: seeded random values")
    bench.add_argument("--targets", type=_names, default=None, metavar="T1,T2",
                       help=f"targets to compile for (default: all, {','.join(TARGETS)}; a target that does not "
                            "compile is then reported, not an error)")
    bench.add_argument("--devices", type=_names, default=list(DEVICES), metavar="D1,D2",
                       help=f"devices to run on (default: {','.join(DEVICES)}); the baseline, the reference "
                            "device, always runs")
    bench.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds (default 7)")
    bench.add_argument("--warmup", type=int, default=2, help="untimed calls after the first (default 2)")
    bench.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    bench.add_argument("--json", action="store_true", help="print the report as JSON instead of a table")
    bench.add_argument("--html", metavar="FILE", help="also write the report as one self-contained HTML page")
    bench.add_argument("--profile", metavar="FILE.json",
                       help="after the timed rounds, profile as many calls again on each VM device: a Chrome "
                            "Trace Event Format timeline (one process per device, one track per thread) in "
                            "FILE.json and each device's per-dispatch table on stderr")
    bench.add_argument("--compare-iree", action="store_true",
                       help="add IREE's figures for the same file, measured in the same run (needs "
                            "iree-base-compiler and iree-base-runtime)")
    bench.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    bench.add_argument("--cluster", metavar="ADDRESS",
                       help="measure on a node of this Ray cluster (HOST:PORT) that offers every device of --devices "
                            "(`mlirtext worker --devices ...`); the report comes back")
    _add_node(bench)
    _add_max_memory(bench)


def _add_import(sub) -> None:
    imp = sub.add_parser("import", help="import a JAX function, a PyTorch module or an ONNX model as MLIR",
                         description="Drive the framework's own importer and write MLIR text mlirtext has "
                                     "parsed and verified. Each front end is an optional extra: "
                                     "pip install 'mlirtext[jax]', '[torch]' or '[onnx]'.")
    fronts = imp.add_subparsers(dest="front_end", required=True, parser_class=_Parser)
    jx = fronts.add_parser("jax", help="a jitted Python function to StableHLO, with Python source locations")
    jx.add_argument("target", metavar="MODULE:FUNCTION", help="a module (or a .py file) and a function in it")
    _add_example_inputs(jx)
    th = fronts.add_parser("torch", help="a torch.nn.Module (from a factory function) through torch.export "
                                         "and torch-mlir")
    th.add_argument("target", metavar="MODULE:FACTORY",
                    help="a module (or a .py file) and a function in it returning the torch.nn.Module")
    _add_example_inputs(th)
    th.add_argument("--to", choices=IMPORT_LEVELS, default="stablehlo",
                    help="the level to import to (default stablehlo)")
    th.add_argument("--weights", choices=["inline", "args"], default="inline",
                    help="inline: weights are constants in the module (default); args: @main takes them "
                         "after the model's inputs (written to OUT.weights.npz with -o)")
    ox = fronts.add_parser("onnx", help="an .onnx model through torch-mlir's ONNX importer")
    ox.add_argument("target", metavar="MODEL.onnx")
    ox.add_argument("--to", choices=IMPORT_LEVELS, default="stablehlo",
                    help="the level to import to (default stablehlo)")
    for p in (jx, th, ox):
        p.add_argument("-o", dest="output", default="-", help="output file (default: standard output)")
    # What a front end does not take, so that every import request has every field.
    jx.set_defaults(to="stablehlo", weights="inline")
    ox.set_defaults(args=None, args_npz=None, weights="inline")


def _add_example_inputs(p) -> None:
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--args", nargs="+", metavar="SPEC",
                       help="each argument's shape and element type: 4x8xf32, 16xi32, f32")
    group.add_argument("--args-npz", metavar="FILE.npz", help="example inputs, in the file's order")


def _add_node(p) -> None:
    p.add_argument("--node", metavar="NODE_ID_OR_HOST",
                   help="with --cluster: run on this node (its Ray node id, or the first digits of it as `run "
                        "--cluster` prints them, or its host name) when several nodes offer the device")


def _add_max_memory(p) -> None:
    p.add_argument("--max-memory", type=_size, default=None, metavar="SIZE",
                   help=f"the most one tensor, buffer or constant may take (e.g. 8GiB, 512M); a larger one is "
                        f"an error before it is allocated (default: ${limits.ENV}, else half of this machine's "
                        f"memory, {limits.format_size(limits.max_memory_default())})")


def _size(text: str) -> int:
    try:
        return limits.parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _count(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = -1
    if n < 0:
        raise argparse.ArgumentTypeError(f"'{text}' is not a count (0, 1, 2, ...)")
    return n


def _add_compare(sub) -> None:
    summary = "the first dispatch whose tensors differ between two traces of `mlirtext run --trace-dispatches`"
    cmp = sub.add_parser("compare", help=summary, description=summary + ". Exit status 1 when one differs.")
    cmp.add_argument("trace_a", metavar="DIR_A", help="the expected trace (e.g. of the reference device)")
    cmp.add_argument("trace_b", metavar="DIR_B", help="the trace to check")
    _add_tolerance(cmp, "tensors")


def _add_reduce(sub) -> None:
    summary = "shrink a module that fails (a crash, a diagnostic, a mismatch between devices) to a small one that fails the same way"
    red = sub.add_parser("reduce", help=summary, description=summary + ", by delta debugging over its functions, "
                         "ops, arguments, types and attributes (as mlir-reduce and C-Reduce do). Every candidate "
                         "must verify and is tested in a child process with a time limit.")
    red.add_argument("input", help="an .mlir file")
    what = red.add_mutually_exclusive_group(required=True)
    what.add_argument("--crash", action="store_true",
                      help="the command (by default the lowering to llvm, mlirtext opt FILE --lower-to=llvm) crashes "
                           "with the input's signature")
    what.add_argument("--diagnostic", metavar="REGEX",
                      help="the command (by default the lowering to llvm) reports a diagnostic that matches REGEX")
    command = red.add_mutually_exclusive_group()
    command.add_argument("--command", dest="tested", metavar="'SUBCOMMAND ARGS'",
                         help="--crash, --diagnostic: the mlirtext command to test, the candidate's path after its "
                              "subcommand or where {} is (e.g. 'opt --lower-to=linalg', 'bisect --function=f')")
    command.add_argument("--lower-to", metavar="LEVEL", choices=LEVELS[1:],
                         help="--crash, --diagnostic: the lowering to LEVEL (mlirtext opt FILE --lower-to=LEVEL)")
    command.add_argument("--pass-pipeline", metavar="PIPELINE",
                         help="--crash, --diagnostic: those passes (mlirtext opt FILE --pass-pipeline=PIPELINE)")
    what.add_argument("--mismatch", type=_device_pair, metavar="DEVICE_A,DEVICE_B",
                      help="--function's results on the two devices differ beyond the tolerance")
    what.add_argument("--test", metavar="'CMD {}'",
                      help="a command, {} the candidate's path: interesting when it exits with 0")
    red.add_argument("--function", help="--mismatch: the function to run (default: the module's only public one)")
    red.add_argument("--input", dest="inputs", action="append", default=[], metavar="VALUE",
                     help="--mismatch: an argument, as for `mlirtext run` (default: seeded random values)")
    red.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    red.add_argument("--budget", type=_seconds, default=300.0, metavar="SECONDS",
                     help="stop after this long with the smallest module found so far (default 300)")
    red.add_argument("-j", dest="jobs", type=_count, default=0, metavar="N",
                     help="candidates tested at once (default: the number of cores)")
    red.add_argument("-o", dest="output", metavar="OUT",
                     help="where the reduced module goes (default: FILE.reduced.mlir; - for standard output)")
    _add_tolerance(red, "--mismatch")
    _add_faults(red)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds above 0")
    return value


def _device_pair(text: str) -> list:
    """--mismatch: two different known devices, comma-separated."""
    names = _names(text)
    if len(names) != 2 or names[0] == names[1]:
        raise argparse.ArgumentTypeError(f"'{text}' is not two different devices, DEVICE_A,DEVICE_B")
    for d in names:
        if d not in DEVICES:
            raise argparse.ArgumentTypeError(f"'{d}' is not a device (devices: {', '.join(DEVICES)})")
    return names


def _devices(text: str) -> list:
    """--devices: known devices other than the reference, comma-separated."""
    names = _names(text)
    for d in names:
        if d not in DEVICES or d == "reference":
            raise argparse.ArgumentTypeError(f"'{d}' is not a device to check against the reference "
                                             f"(devices: {', '.join(x for x in DEVICES if x != 'reference')})")
    return names


def _names(text: str) -> list:
    return [n.strip() for n in text.split(",") if n.strip()]


def _arch(example: str, form: re.Pattern):
    """An argparse type: a processor name of `form` (for example sm_80, gfx942)."""
    def check(text: str) -> str:
        if not form.fullmatch(text):
            raise argparse.ArgumentTypeError(f"'{text}' is not a {example}... processor name "
                                             f"(for example {'sm_80, sm_90' if example == 'sm_' else 'gfx90a, gfx942'})")
        return text
    return check


def _targets(text: str) -> str:
    """--target: one or more known targets, comma-separated, each once."""
    names = [t.strip() for t in text.split(",")]
    for t in names:
        if t not in TARGETS:
            raise argparse.ArgumentTypeError(f"unknown target '{t}' (targets: {', '.join(TARGETS)})")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"a target is named twice in '{text}'")
    return ",".join(names)


def _pass_flags_as_pipelines(argv: list[str]) -> list[str]:
    """`--canonicalize=max-num-rewrites=5` (a short pass flag with options, as mlir-opt
    spells it) as `--pass-pipeline=canonicalize{max-num-rewrites=5}`, and for `opt` a bare
    `--cse` as `--pass-pipeline=cse` (in command-line order, as argparse keeps them): the
    passes are then imported only when a pipeline names them."""
    is_opt = next((a for a in argv if not a.startswith("-")), None) == "opt"
    out = []
    for arg in argv:
        name, eq, options = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        if name in builtin_passes() and (eq or is_opt):
            arg = f"--pass-pipeline={name}{{{options}}}" if eq else f"--pass-pipeline={name}"
        out.append(arg)
    return out


def _asks_for_help(argv: list[str]) -> bool:
    return any(a in ("-h", "--help") for a in argv)


def main(argv=None) -> int:
    """Run the command `argv` (None: this process's own command line) and return its exit status."""
    in_process = argv is not None
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_argparser(pass_flags=_asks_for_help(argv)).parse_args(_pass_flags_as_pipelines(argv))
    limits.set_max_memory(getattr(args, "max_memory", None))  # (None: the default, also after an earlier main)
    try:
        limits.max_memory()
    except ValueError as e:  # a malformed MLIRTEXT_MAX_MEMORY
        print(f"mlirtext: error: {e}", file=sys.stderr)
        return 1
    try:
        return importlib.import_module(f".{HANDLERS[args.command]}", __name__).main(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    finally:
        # What the command froze out of the collector's walks (io.kept_until_exit) stays frozen when
        # the process ends after it: the collection at exit then skips it too. A caller in the same
        # process (a test, another tool) gets it back under the collector.
        if in_process:
            gc.unfreeze()
