"""The model zoo, side by side: each real model (benchmarks/models/, random weights) through each of
its import paths, compiled by mlirtext and by iree-compile (on the onnx path, the .onnx file through
IREE's own importer, iree-import-onnx, as IREE's users run ONNX; mlirtext's import, the row marked
"mlirtext's import", only where that fails), checked against the framework, and timed
at each thread count on mlirtext's VM, IREE, torch eager and ONNX Runtime, calls interleaved round
by round on the same staged inputs.

    PYTHONPATH=. python benchmarks/models.py [--models resnet18,bert] [--paths torch,onnx,jax]
                                             [--threads 1,2] [--rounds 5] [--clock cpu] [--list]

Printed per model, path and thread count (one markdown row): the max relative error of mlirtext's
and IREE's outputs against the framework's (max |diff| / max |framework output|), the median
latency of each runtime, mlirtext's speed relative to each (their time / mlirtext's, the median of
the per-round ratios: above 1, mlirtext is faster), compile time, module size and load time
(mlirtext / IREE; each module loaded from its file, mapped: `runtime.load_module(path)`,
`VmModule.mmap`), and the resident memory each load and first call added (mlirtext / IREE).
Threads: 1 is mlirtext and IREE local-sync, torch.set_num_threads(1), ORT intra_op_num_threads=1;
more is local-task (mlirtext: one thread per CPU; IREE: --task_topology_max_group_count) and the
same number for torch and ORT. The first line gives the machine's load, which the ratios survive
better than the latencies. `--clock cpu` times the 1-thread rows by the process's CPU time instead
of the wall clock: on a shared machine whose load is well above its cores, wall times are mostly
time spent waiting for a core, while CPU time is each runtime's own work (rows at more threads keep
the wall clock, since their CPU time adds the threads up), and the compile column by CPU time too
(mlirtext's process; iree-compile's, a child process, summed over its threads).
"""
from __future__ import annotations

import os

# numpy's BLAS must not spin threads of its own beside the runtimes being timed.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from models import paths, runners, zoo  # noqa: E402 - benchmarks/models/, after the path is set

COLUMNS = ["model", "path", "threads", "max rel error (mlirtext / IREE)", "mlirtext ms", "IREE ms", "torch ms",
           "ORT ms", "vs IREE", "vs ORT", "vs torch", "compile s (mlirtext / IREE)", "size MB (mlirtext / IREE)",
           "load s (mlirtext / IREE)", "memory MB (mlirtext / IREE)"]


#: Seconds between one runner's calls and the next runner's: ONNX Runtime's and IREE's worker
#: threads spin for a while after a call (by design: the next call finds them on a core), and the
#: next runner timed in that while shares the second core with them (mlirtext's EfficientNet-B0
#: at 2 threads: 9.5 ms right after ORT, 7.3 ms 50 ms later).
SETTLE = 0.05


#: Every runner alike is called for a while before anything is timed, as iree-benchmark-module
#: and ONNX Runtime's perf test warm up: at least WARM_UP_CALLS calls and WARM_UP_SECONDS, at most
#: WARM_UP_LIMIT seconds. First calls fill caches and build what each runtime makes lazily (ORT's
#: arena, mlirtext's per-call native programs and its measured choice of whether the helper
#: threads join a call, settled in about 25 calls: ResNet-50 at 2 threads timed from its first
#: calls read 37 ms, its calls once that choice is made 32).
WARM_UP_CALLS = 30
WARM_UP_SECONDS = 0.5
WARM_UP_LIMIT = 3.0


def warm_up(call) -> None:
    start, calls = time.perf_counter(), 0
    while True:
        call()
        calls += 1
        spent = time.perf_counter() - start
        if spent >= WARM_UP_LIMIT or (calls >= WARM_UP_CALLS and spent >= WARM_UP_SECONDS):
            return


def timed_rounds(runs: list, rounds: int, clock=time.perf_counter) -> dict:
    """Seconds per call of each runner by `clock`, per round: every round times each runner in turn
    (about 0.2 s of calls each, SETTLE apart), the first runner rotating; each is warmed up first."""
    for r in runs:
        time.sleep(SETTLE)
        warm_up(r.call)
    once = max(min(_seconds(r.call, 1, clock) for r in runs), 1e-6)
    repeat = max(1, min(50, int(0.2 / once)))
    times = {id(r): [] for r in runs}
    for i in range(rounds):
        for r in runs[i % len(runs):] + runs[:i % len(runs)]:
            time.sleep(SETTLE)
            times[id(r)].append(_seconds(r.call, repeat, clock))
    return times


def _seconds(call, repeat: int, clock=time.perf_counter) -> float:
    start = clock()
    for _ in range(repeat):
        call()
    return (clock() - start) / repeat


def _compile_seconds(ours, theirs, cpu_clock: bool) -> tuple:
    """(mlirtext's, iree-compile's) compile time: CPU time with `--clock cpu` (iree-compile's summed
    over its threads), else the wall clock."""
    key = "compile_cpu_seconds" if cpu_clock else "compile_seconds"
    return getattr(ours, key), getattr(theirs, key) if theirs else None


def run_case(model, inputs, path: str, threads: list, rounds: int, workdir: str, say, cpu_clock: bool = False) -> list[dict]:
    """The rows of one model through one import path; a failing step gives one row saying which."""
    from mlirtext.compiler.driver import CompileFailed
    from mlirtext.importers.common import ImportFailed
    try:
        imported = paths.import_model(model, inputs, path, workdir)
    except ImportFailed as e:
        return [{"failed": f"import: {e}"}]
    say(f"  imported in {imported.import_seconds:.1f} s ({len(imported.text) / 1e6:.1f} MB of MLIR)")
    try:
        # (a new file per case: a module still loaded is never written over)
        stem = os.path.join(workdir, f"{path}-{time.monotonic_ns()}")
        ours = runners.mlirtext_artifact(imported.text, stem + ".vmpack")
    except CompileFailed as e:
        first, more = e.diagnostics[0].message, len(e.diagnostics) - 1
        return [{"failed": f"mlirtext compile: {first}" + (f" (and {more} more)" if more else "")}]
    say(f"  mlirtext compiled in {ours.compile_seconds:.1f} s ({ours.compile_cpu_seconds:.1f} s of CPU)")
    theirs, iree_input = iree_module(imported, stem + ".vmfb", say)
    rows, function = [], paths.entry_function(imported.text)
    for t in threads:
        runs = [runners.mlirtext_runner(ours, function, imported.inputs, t)]
        if theirs is not None:
            runs.append(runners.iree_runner(theirs, theirs.function or function, imported.inputs, t))
        if imported.torch_model is not None:
            runs.append(runners.torch_runner(imported.torch_model, imported.inputs, t))
        if imported.onnx_path is not None:
            runs.append(runners.ort_runner(imported.onnx_path, imported.inputs, t))
        errors = {r.runtime: runners.max_relative_error(r.outputs(), imported.want) for r in runs[:2]}
        times = timed_rounds(runs, rounds, time.process_time if cpu_clock and t == 1 else time.perf_counter)
        by = {r.runtime: r for r in runs}
        ms = {r.runtime: statistics.median(times[id(r)]) * 1e3 for r in runs}
        ratio = {r.runtime: statistics.median(a / b for a, b in zip(times[id(r)], times[id(runs[0])]))
                 for r in runs[1:]}
        rows.append({"threads": t, "errors": errors, "ms": ms, "ratio": ratio,
                     "compile": _compile_seconds(ours, theirs, cpu_clock),
                     "size": (len(ours.data), len(theirs.data) if theirs else None),
                     "load": (by["mlirtext"].load_seconds, by["iree"].load_seconds if "iree" in by else None),
                     "memory": (by["mlirtext"].peak_bytes, by["iree"].peak_bytes if "iree" in by else None),
                     "iree_input": iree_input})
    return rows


def iree_module(imported, path: str, say) -> tuple:
    """(IREE's module or None, what IREE compiled when it is not its own flow's input). An ONNX
    model goes the way IREE's users run one, IREE's own importer (iree-import-onnx) then
    iree-compile; only where either fails does IREE get the module mlirtext imported, and the row says so."""
    from mlirtext.bench.iree import IreeUnavailable
    note = None
    if imported.onnx_path is not None:
        try:
            theirs = runners.iree_onnx_artifact(imported.onnx_path, path)
            say(f"  iree-import-onnx + iree-compile in {theirs.compile_seconds:.1f} s "
                f"({theirs.compile_cpu_seconds:.1f} s of CPU)")
            return theirs, None
        except IreeUnavailable as e:
            say(f"  IREE's ONNX flow: {e}; IREE gets mlirtext's import instead")
            note = "mlirtext's import"
    try:
        theirs = runners.iree_artifact(imported.text, path)
        say(f"  iree-compile in {theirs.compile_seconds:.1f} s ({theirs.compile_cpu_seconds:.1f} s of CPU)")
        return theirs, note
    except IreeUnavailable as e:
        say(f"  IREE: {e}")
        return None, None


def markdown_row(name: str, path: str, row: dict) -> str:
    if "failed" in row:
        return f"| {name} | {path} | - | {row['failed']} |" + " - |" * (len(COLUMNS) - 4)
    pair = lambda a, b, f: f"{f(a)} / {f(b) if b is not None else '-'}"  # noqa: E731
    get = lambda d, k, f: f(d[k]) if k in d else "-"  # noqa: E731
    err, ms, ratio = row["errors"], row["ms"], row["ratio"]
    iree_ms = get(ms, "iree", lambda v: f"{v:.2f}") + (f" ({row['iree_input']})" if row.get("iree_input") else "")
    cells = [name, path, str(row["threads"]),
             pair(err["mlirtext"], err.get("iree"), lambda v: f"{v:.1e}"),
             get(ms, "mlirtext", lambda v: f"{v:.2f}"), iree_ms,
             *(get(ms, k, lambda v: f"{v:.2f}") for k in ("torch", "onnxruntime")),
             *(get(ratio, k, lambda v: f"{v:.2f}") for k in ("iree", "onnxruntime", "torch")),
             pair(*row["compile"], lambda v: f"{v:.1f}"), pair(*row["size"], lambda v: f"{v / 1e6:.1f}"),
             pair(*row["load"], lambda v: f"{v:.3f}"), pair(*row["memory"], lambda v: f"{v / 1e6:.0f}")]
    return "| " + " | ".join(cells) + " |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help="comma-separated zoo names (default: all; --list shows them)")
    ap.add_argument("--paths", help="comma-separated import paths: torch, onnx, jax (default: each model's)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="cpu: time 1-thread rows and compiles by CPU time (a machine loaded beyond its cores)")
    ap.add_argument("--list", action="store_true", help="list the zoo and exit")
    args = ap.parse_args(argv)
    models = zoo()
    if args.list:
        for m in models.values():
            print(f"{m.name:20} {m.family:13} {', '.join(m.paths)}")
        return 0
    chosen = args.models.split(",") if args.models else list(models)
    unknown = [n for n in chosen if n not in models]
    if unknown:
        print(f"error: unknown model {', '.join(unknown)} (--list shows the zoo)", file=sys.stderr)
        return 1
    wanted_paths = set(args.paths.split(",")) if args.paths else None
    threads = [int(t) for t in args.threads.split(",")]
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the start; {args.rounds} rounds; "
          f"1-thread rows and compiles timed by {'CPU time' if args.clock == 'cpu' else 'the wall clock'}")
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS), flush=True)
    workdir = paths.new_workdir()
    for name in chosen:
        entry = models[name]
        try:
            model, inputs = entry.build()
        except Exception as e:  # noqa: BLE001 - a family whose framework is missing or broken is a row
            print(markdown_row(name, "-", {"failed": f"build: {type(e).__name__}: {str(e).strip()[:200]}"}))
            continue
        for path in entry.paths:
            if wanted_paths and path not in wanted_paths:
                continue
            say(f"{name} via {path}")
            try:
                rows = run_case(model, inputs, path, threads, args.rounds, workdir, say, args.clock == "cpu")
            except Exception as e:  # noqa: BLE001 - one failing runtime is a row, the zoo goes on
                rows = [{"failed": f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"}]
            for row in rows:
                print(markdown_row(name, path, row), flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
