"""Reference interpreter speed: each program of `benchmarks/programs/` run by the
interpreter vs the plain numpy code for the same computation, side by side.

Both run in the same process on the same inputs, interleaved round by round (the
machine is shared and noisy, so each round's ratio compares like with like); the
report is the median time of each, the median of the per-round ratios
interpreter/numpy (the figure judged against the target) and, for reference, the
ratio of the best rounds. Parsing is left out: it happens once, before the rounds (what is
timed is `Interpreter.call`, the run). The target is a ratio <= 3 for each program.
The interpreter's results are checked against numpy's before timing.

    PYTHONPATH=. python benchmarks/interpreter_speed.py [--rounds 7] [--only NAME]... [--profile NAME] [--threads 1]

--profile NAME runs that program under cProfile and prints where the interpreter's
time goes (the top functions by cumulative and own time).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path


def _threads_from_argv(default: str = "1") -> str:
    for i, a in enumerate(sys.argv):
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
        if a == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
    return default


# BLAS threads, set before numpy loads: one by default, so that a shared, busy machine
# gives both sides the same single core and the ratio stays meaningful.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = _threads_from_argv()

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

PROGRAMS = HERE / "programs"


# ---- the numpy equivalents ----------------------------------------------------------------------
def np_mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, np.float32(0))
    return np.maximum(h @ w2 + b2, np.float32(0))


def np_elementwise(x):
    return np.sqrt(np.maximum(x * np.float32(2) + np.float32(1), np.float32(0)) ** 2 + np.float32(1)) - x


def np_conv(x, w):
    # same padding, then the 3x3 windows of every position contracted with the HWIO weights
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(1, 2))  # 1x56x56x64x3x3
    return np.tensordot(windows, w, axes=([4, 5, 3], [0, 1, 2]))


def np_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def np_attention(q, k, v):
    s = (q @ k.transpose(0, 2, 1)) * np.float32(0.125)
    e = np.exp(s - s.max(axis=2, keepdims=True))
    return (e / e.sum(axis=2, keepdims=True)) @ v


def _inputs(name: str, rng) -> list[np.ndarray]:
    f = lambda *shape: rng.standard_normal(shape, dtype=np.float32)  # noqa: E731
    return {
        "mlp": lambda: [f(64, 512), f(512, 512) * np.float32(0.05), f(512), f(512, 512) * np.float32(0.05), f(512)],
        "elementwise": lambda: [f(1 << 20)],
        "conv": lambda: [f(1, 56, 56, 64), f(3, 3, 64, 64) * np.float32(0.05)],
        "softmax": lambda: [f(256, 1024)],
        "attention": lambda: [f(8, 128, 64), f(8, 128, 64), f(8, 128, 64)],
    }[name]()


BENCHMARKS = {
    "mlp": ("MLP 64x512 @ 512x512 x2, bias, relu", np_mlp),
    "elementwise": ("elementwise chain, 1M f32", np_elementwise),
    "conv": ("3x3 conv 1x56x56x64 -> 64", np_conv),
    "softmax": ("softmax 256x1024", np_softmax),
    "attention": ("batched attention 8x128x64", np_attention),
}


def load(name: str):
    from mlirtext.api import parse_and_verify
    from mlirtext.interpreter import Interpreter
    path = PROGRAMS / f"{name}.mlir"
    result = parse_and_verify(path.read_text(), str(path))
    if not result.ok:
        raise SystemExit("\n".join(d.format() for d in result.diagnostics))
    return Interpreter(result.module)


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run(name: str, rounds: int) -> dict:
    from mlirtext.interpreter import InterpreterError
    interp = load(name)
    _, reference = BENCHMARKS[name]
    args = _inputs(name, np.random.default_rng(0))
    try:
        (ours,) = interp.call("main", args)
    except InterpreterError as e:
        return {"name": name, "error": str(e)}
    theirs = reference(*args)
    close = np.allclose(ours, theirs, rtol=1e-4, atol=1e-4)
    t_interp, t_numpy, ratios = [], [], []
    for _ in range(rounds):
        a = _time(lambda: interp.call("main", args))
        b = _time(lambda: reference(*args))
        t_interp.append(a)
        t_numpy.append(b)
        ratios.append(a / b)
    return {"name": name, "interp": statistics.median(t_interp), "numpy": statistics.median(t_numpy),
            "ratio": statistics.median(ratios), "best": min(t_interp) / min(t_numpy), "close": close}


def profile(name: str, rounds: int = 3) -> None:
    import cProfile
    import pstats
    interp = load(name)
    args = _inputs(name, np.random.default_rng(0))
    interp.call("main", args)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(rounds):
        interp.call("main", args)
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("cumulative").print_stats(25)
    stats.sort_stats("tottime").print_stats(15)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", default="1", help="BLAS threads for both sides (default 1)")
    ap.add_argument("--only", action="append", choices=sorted(BENCHMARKS), help="run only these (repeatable)")
    ap.add_argument("--profile", choices=sorted(BENCHMARKS), help="cProfile one program instead")
    args = ap.parse_args(argv)
    if args.profile:
        profile(args.profile)
        return 0
    print(f"{'program':<40} {'interpreter':>12} {'numpy':>10} {'ratio':>7} {'best':>6}  target <= 3x")
    worst = 0.0
    for name in args.only or list(BENCHMARKS):
        r = run(name, args.rounds)
        title = BENCHMARKS[name][0]
        if "error" in r:
            print(f"{title:<40} {'error':>12}  {r['error']}")
            worst = float("inf")
            continue
        flag = "ok" if r["ratio"] <= 3 else "SLOW"
        if not r["close"]:
            flag += ", RESULTS DIFFER"
        print(f"{title:<40} {r['interp'] * 1e3:10.2f}ms {r['numpy'] * 1e3:8.2f}ms {r['ratio']:6.2f}x "
              f"{r['best']:5.2f}x  {flag}")
        worst = max(worst, r["ratio"])
    return 0 if worst <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
