"""Parse throughput: mlirtext vs xDSL on one generated 20,000-line arith function.

Both parse the same text in the same process, alternating, best of N rounds;
the report is lines per second of CPU time (process time: the machine is
shared, and waiting for a core is not parsing) and the ratio, which is the
figure that matters. mlirtext's figure is text to verified IR with
spans. xDSL (`pip install xdsl`) is a benchmark-only dependency.

    python benchmarks/parse_speed.py [--lines 20000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import gc
import random
import statistics
import time


def generate(n_lines: int, seed: int = 0) -> str:
    """A function of `n_lines` arith ops over i32/f32 values that all verify."""
    rng = random.Random(seed)
    out = ["func.func @bench(%a: i32, %b: i32, %x: f32, %y: f32) -> (i32, f32) {"]
    ints, floats = ["%a", "%b"], ["%x", "%y"]
    for i in range(n_lines - 3):
        kind = rng.random()
        if kind < 0.1:
            out.append(f"  %c{i} = arith.constant {rng.randint(-100, 100)} : i32")
            ints.append(f"%c{i}")
        elif kind < 0.55:
            op = rng.choice(["addi", "subi", "muli", "andi", "ori", "xori", "maxsi", "minsi"])
            out.append(f"  %v{i} = arith.{op} {rng.choice(ints[-50:])}, {rng.choice(ints[-50:])} : i32")
            ints.append(f"%v{i}")
        else:
            op = rng.choice(["addf", "subf", "mulf", "maximumf", "minimumf"])
            out.append(f"  %v{i} = arith.{op} {rng.choice(floats[-50:])}, {rng.choice(floats[-50:])} : f32")
            floats.append(f"%v{i}")
    out.append(f"  return {ints[-1]}, {floats[-1]} : i32, f32")
    out.append("}")
    return "\n".join(out) + "\n"


def time_mlirtext(text: str) -> float:
    from mlirtext.api import parse_and_verify
    gc.collect()  # neither side pays for the other's garbage
    start = time.process_time()
    result = parse_and_verify(text, "bench.mlir")
    elapsed = time.process_time() - start
    assert result.ok, result.diagnostics[:3]
    return elapsed


def time_xdsl(text: str) -> float:
    from xdsl.context import Context
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin
    from xdsl.dialects.func import Func
    from xdsl.parser import Parser
    ctx = Context()
    for dialect in (Builtin, Func, Arith):
        ctx.load_dialect(dialect)
    gc.collect()
    start = time.process_time()
    module = Parser(ctx, text).parse_module()
    module.verify()
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    text = generate(args.lines)
    time_mlirtext(generate(200))  # build or load the cached parser outside the timing
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(time_mlirtext(text))
        theirs.append(time_xdsl(text))
    n = text.count("\n")
    a, b = n / min(ours), n / min(theirs)
    print(f"lines: {n}")
    print(f"mlirtext: {a:10.0f} lines/s (best of {args.rounds})")
    print(f"xDSL:     {b:10.0f} lines/s (best of {args.rounds})")
    paired = statistics.median(t / o for o, t in zip(ours, theirs))
    print(f"ratio:    {a / b:.2f}x best/best, {paired:.2f}x median of paired rounds (target >= 4x)")


if __name__ == "__main__":
    main()
