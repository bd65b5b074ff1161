"""Parse time per op stays constant as inputs grow: no input shape has a superlinear path.

For each shape of input and each size N (1k, 10k, 100k by default; 1M with --max 1000000) this
parses and verifies N units of text, then prints the module back, and reports microseconds of CPU
time per unit (process time: the machine is shared, and waiting for a core is not parsing). A
linear parser gives the same figure in every column; a quadratic path shows as a figure that grows
tenfold per column. The shapes:

* one-line   N ops of a function, all on one line
* lines      N ops of a function, one per line
* blocks     a function of N blocks, each branching to the next
* names      N regions (scf.if) each defining a value named %x
* attributes one op with an attribute dictionary of N entries
* operands   one op with N operands (and N results)

    python benchmarks/parse_scaling.py [--max 100000] [--shapes one-line,lines]
"""
from __future__ import annotations

import argparse
import gc
import time

from mlirtext import api


def one_line(n: int) -> str:
    return _function(n, " ")


def lines(n: int) -> str:
    return _function(n, "\n  ")


def _function(n: int, sep: str) -> str:
    body = sep.join(f"%v{i} = arith.addi %a, %{'a' if i == 0 else f'v{i - 1}'} : i32" for i in range(n))
    last = f"%v{n - 1}"
    return f"func.func @f(%a: i32) -> i32 {{{sep}{body}{sep}return {last} : i32{sep}}}\n"


def blocks(n: int) -> str:
    chain = "\n".join(f"^bb{i}:\n  %v{i} = arith.addi %a, %a : i32\n  cf.br ^bb{i + 1}" for i in range(1, n))
    return f"func.func @f(%a: i32) -> i32 {{\n  cf.br ^bb1\n{chain}\n^bb{n}:\n  return %a : i32\n}}\n"


def names(n: int) -> str:
    regions = "\n".join("  scf.if %c {\n    %x = arith.constant 1 : i32\n  }" for _ in range(n))
    return f"func.func @f(%c: i1) {{\n{regions}\n  return\n}}\n"


def attributes(n: int) -> str:
    entries = ", ".join(f"a{i} = {i} : i64" for i in range(n))
    return f'"test.op"() {{{entries}}} : () -> ()\n'


def operands(n: int) -> str:
    names = ", ".join(f"%x{i}" for i in range(n))
    types = ", ".join("i32" for _ in range(n))
    return f'{names} = "test.make"() : () -> ({types})\n"test.use"({names}) : ({types}) -> ()\n'


SHAPES = {"one-line": one_line, "lines": lines, "blocks": blocks, "names": names, "attributes": attributes,
          "operands": operands}


def measure(text: str) -> tuple[float, float]:
    """(parse+verify seconds, print seconds) of CPU time."""
    gc.collect()
    start = time.process_time()
    result = api.parse_and_verify(text, "<bench>")
    parsed = time.process_time()
    if not result.ok:
        raise SystemExit(f"the generated input does not verify: {result.diagnostics[0].message}")
    api.to_text(result)
    return parsed - start, time.process_time() - parsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max", type=int, default=100_000, help="the largest N (default 100000)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes (default: all)")
    args = ap.parse_args()
    sizes = [n for n in (1_000, 10_000, 100_000, 1_000_000) if n <= args.max]
    api.parse_and_verify(one_line(100), "<warm-up>")  # tables and callbacks are built on first use
    print(f"{'shape':<12}{'phase':<8}" + "".join(f"{n:>12,}" for n in sizes) + "   (us per unit, CPU time)")
    for name in args.shapes.split(","):
        figures = [measure(SHAPES[name](n)) for n in sizes]
        for phase, k in (("parse", 0), ("print", 1)):
            print(f"{name:<12}{phase:<8}" + "".join(f"{f[k] / n * 1e6:>12.2f}" for f, n in zip(figures, sizes)),
                  flush=True)


if __name__ == "__main__":
    main()
