"""`mlirtext bisect` on the MLP of `benchmarks/programs/mlp.mlir`, shrunk to BATCHxINxHIDDEN
(default 8x64x64: at 64x512x512 the loops and llvm levels take minutes a run), clean and with a
miscompile injected into the last pass (`cse` at the llvm level, on the relu's
`llvm.intr.maximum`): the wall time and the CPU time of the process (on the shared machine the
wall time moves with the load, the CPU time much less), what it found and how many times the function
ran (every `Interpreter.call` of the bisect module counted, the run before any pass left out).

    PYTHONPATH=. python benchmarks/bisect_speed.py [--size 8x64x64] [--rounds 1] [--only clean|fault]
        [--fault PASS:OP] [--softmax ROWS]

`--fault` injects another miscompile instead: `canonicalize:arith.maximumf` (the README's example,
the relu nudged in the step to linalg) stops the bisect before the loops level, so it takes seconds
at 64x512x512, where the interpreter runs the loops and llvm levels element by element.
`--softmax ROWS` bisects the softmax of `benchmarks/programs/softmax.mlir` (ROWS rows of 1024; 256
there) instead, where the default tolerance finds convert-linalg-to-loops changing the numbers (its
loops sum each row in another order): the `clean` case is that one.

To compare with another version of mlirtext (before a change), run the same script with that
version first on PYTHONPATH: it uses only `bisect_pipeline` and the fault classes. For figures to
compare, run each case in a process of its own (`--only clean`, `--only fault`), interleaved with
the other version's: on the shared machine one bisect's time moved up to 3x with the load.
"""
from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

import numpy as np

import mlirtext.debugging.bisect as bisect_module
from mlirtext import api
from mlirtext.debugging.faults import FaultSpec, Miscompile
from mlirtext.transforms.passes import PASS_MODULES  # (the pass names, in the code before and after PassRegistry)
from mlirtext.transforms.semantics_check import random_inputs

MLP = Path(__file__).resolve().parent / "programs" / "mlp.mlir"
SOFTMAX = Path(__file__).resolve().parent / "programs" / "softmax.mlir"
FAULT = "cse:llvm.intr.maximum"


def shrunk_mlp(batch: int, inputs: int, hidden: int) -> str:
    """mlp.mlir (x: 64x512, w: 512x512) with its shapes made BATCHxINPUTS and INPUTSxHIDDEN (the
    second layer HIDDENxHIDDEN)."""
    text = MLP.read_text()
    if inputs != hidden:
        raise SystemExit("--size: the program's layers are square: INPUTS must equal HIDDEN")
    text = re.sub(r"64x512", f"{batch}x{hidden}", text)
    text = re.sub(r"512x512", f"{hidden}x{hidden}", text)
    return re.sub(r"tensor<512x", f"tensor<{hidden}x", re.sub(r"tensor<512xf32>", f"tensor<{hidden}xf32>", text))


def shrunk_softmax(rows: int) -> str:
    """softmax.mlir (256 rows of 1024) with ROWS rows."""
    return SOFTMAX.read_text().replace("256x1024", f"{rows}x1024").replace("tensor<256xf32>", f"tensor<{rows}xf32>")


class _Counted(bisect_module.Interpreter):
    """Counts the runs of the function: calls from outside the interpreter (a call inside the
    program goes through `call` too, one level deeper)."""

    calls = 0
    depth = 0

    def call(self, *args, **kwargs):
        _Counted.calls += _Counted.depth == 0
        _Counted.depth += 1
        try:
            return super().call(*args, **kwargs)
        finally:
            _Counted.depth -= 1


def bisect_once(text: str, fault: str):
    module = api.parse_and_verify(text, "program.mlir").module
    fn = next(op for op in module.regions[0].blocks[0].ops if op.sym_name == "main")
    inputs = random_inputs(fn, np.random.default_rng(0))
    faults = [Miscompile(FaultSpec.parse(fault, PASS_MODULES))] if fault else []
    _Counted.calls = 0
    start, cpu = time.perf_counter(), time.process_time()
    result = bisect_module.bisect_pipeline(module, "main", inputs, faults=faults)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    found = result.finding
    said = "no pass to blame" if found is None else f"pass {found.position} of {result.total} " \
        f"'{found.pass_spelling}' ({found.level}) {found.kind}"
    return seconds, cpu, _Counted.calls - 1, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", default="8x64x64")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", choices=("clean", "fault"), action="append")
    parser.add_argument("--fault", default=FAULT, metavar="PASS:OP", help=f"the miscompile injected (default {FAULT})")
    parser.add_argument("--softmax", type=int, metavar="ROWS", help="bisect softmax.mlir with ROWS rows instead")
    args = parser.parse_args()
    if args.softmax:
        text, name = shrunk_softmax(args.softmax), f"softmax {args.softmax}x1024"
    else:
        batch, inputs, hidden = (int(n) for n in args.size.split("x"))
        text, name = shrunk_mlp(batch, inputs, hidden), f"MLP {args.size}"
    bisect_module.Interpreter = _Counted   # (the module's own name for it: every run counted)
    for case in args.only or ("clean", "fault"):
        times, cpus = [], []
        for _ in range(args.rounds):
            seconds, cpu, runs, said = bisect_once(text, args.fault if case == "fault" else "")
            times.append(seconds)
            cpus.append(cpu)
        print(f"bisect {name} {case:5s}: {statistics.median(times):7.1f} s, CPU {statistics.median(cpus):7.1f} s "
              f"(median of {args.rounds}), {runs} runs after passes; {said}", flush=True)


if __name__ == "__main__":
    main()
