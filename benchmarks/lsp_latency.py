"""Language-server latency through the protocol, on a generated 20,000-line file.

    PYTHONPATH=. python benchmarks/lsp_latency.py [--lines 20000] [--positions 200] [--open-only]
                                                  [--compare-worker ROUNDS]

Starts `python -m mlirtext lsp` as a subprocess and talks LSP to it over stdio
(pygls' client), measuring what an editor sees:

* open: didOpen to the first publishDiagnostics (and the server's CPU time for it);
  with --compare-worker, also opens with and without the worker process that shares
  the work (`mlirtext lsp --no-open-worker`), side by side;
* hover and definition: p50 / p95 over N positions on values, ops and symbols;
* edit: a one-line change (didChange, incremental) to the diagnostics of that version;
* lowered-form hover: the first hover on an op (its lowering started, not waited for), the
  time until a hover shows the next level's ops, and a hover on another op of the same kind.

For contrast it also times, in this process, one full parse + verify of the same
text: what a server that re-parses the whole file on every change pays per edit.
Targets (issue 7): hover/definition p95 < 20 ms, edit -> diagnostics < 200 ms, open < 2 s.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

from lsprotocol import types as T
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
#: What a hover shows once the op's next level is computed (`analysis/lowered_forms.py`).
NEXT_LEVEL = "**Next level**"


def generate(lines: int) -> str:
    """Functions of 10 lines each (elementwise hlo ops and a call to the previous one)."""
    out = ["// generated for benchmarks/lsp_latency.py", "!t = tensor<4x8xf32>", ""]
    i = 0
    while len(out) < lines - 10:
        call = (f"  %5 = call @f{i - 1}(%4, %arg1) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>"
                if i else "  %5 = stablehlo.negate %4 : tensor<4x8xf32>")
        out += [f"func.func @f{i}(%arg0: !t, %arg1: tensor<4x8xf32>) -> tensor<4x8xf32> {{",
                "  %0 = stablehlo.add %arg0, %arg1 : tensor<4x8xf32>",
                "  %1 = stablehlo.multiply %0, %arg1 : tensor<4x8xf32>",
                "  %2 = stablehlo.exponential %1 : tensor<4x8xf32>",
                "  %3 = stablehlo.subtract %2, %0 : tensor<4x8xf32>",
                "  %4 = stablehlo.maximum %3, %arg0 : tensor<4x8xf32>",
                call,
                "  return %5 : tensor<4x8xf32>",
                "}", ""]
        i += 1
    return "\n".join(out) + "\n"


def cpu_seconds(pid: int):
    """CPU time (user + system) a process has used so far, from /proc; None elsewhere.
    On a loaded machine the wall time of the open is mostly waiting for a core: the
    server's own CPU time says how much work the open was."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


class Bench:
    def __init__(self):
        self.client = LanguageClient("lsp-latency", "1")
        self.diagnostics: dict = {}
        self.events: dict = {}

        @self.client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: T.PublishDiagnosticsParams):
            self.diagnostics[params.uri] = (params.version, params.diagnostics, time.perf_counter())
            event = self.events.get(params.uri)
            if event is not None:
                event.set()

    async def wait_version(self, uri: str, version: int, timeout: float = 120):
        deadline = time.perf_counter() + timeout
        while True:
            got = self.diagnostics.get(uri)
            if got is not None and (got[0] is None or got[0] >= version):
                return got
            event = self.events[uri] = asyncio.Event()
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(f"no diagnostics for version {version}")
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except asyncio.TimeoutError:
                pass


async def start_server(*options: str) -> Bench:
    bench = Bench()
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'server'}"}
    await bench.client.start_io(sys.executable, "-m", "mlirtext", "lsp", *options, env=env)
    await bench.client.initialize_async(T.InitializeParams(capabilities=T.ClientCapabilities()))
    bench.client.initialized(T.InitializedParams())
    return bench


async def stop_server(bench: Bench) -> None:
    await bench.client.shutdown_async(None)
    bench.client.exit(None)
    await bench.client.stop()


def children(pid: int) -> list:
    """The child processes of `pid` (the server's worker), from /proc; [] elsewhere."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except (OSError, ValueError):
        return []


async def measure_open(bench: Bench, uri: str, text: str) -> tuple:
    """(didOpen to the first diagnostics in seconds, the server's CPU seconds meanwhile, its
    worker's (0: the worker was not used); None where /proc cannot say)."""
    client = bench.client
    pid = getattr(getattr(client, "_server", None), "pid", None)  # pygls keeps the subprocess there
    pids = [pid, *children(pid)] if pid else []
    before = [cpu_seconds(p) for p in pids]
    started = time.perf_counter()
    client.text_document_did_open(T.DidOpenTextDocumentParams(
        text_document=T.TextDocumentItem(uri=uri, language_id="mlir", version=1, text=text)))
    version, diags, at = await bench.wait_version(uri, 1)
    after = [cpu_seconds(p) for p in pids]
    assert not diags, diags[:3]
    used = [b - a if a is not None and b is not None else None for a, b in zip(before, after)]
    server = used[0] if used else None
    worker = sum(used[1:]) if None not in used[1:] else None
    return at - started, server, worker


async def compare_open(text: str, rounds: int) -> list:
    """Opens with the worker process and without it (`--no-open-worker`), each in a fresh
    server, the one first in a round second in the next: [(with, without, the worker's CPU
    seconds in the first)] (a worker CPU of 0: it was not used, no core was idle)."""
    pairs = []
    for index in range(rounds):
        times = {}
        for options in [(), ("--no-open-worker",)][::1 if index % 2 == 0 else -1]:
            bench = await start_server(*options)
            times[options] = await measure_open(bench, "file:///benchmark/generated.mlir", text)
            await stop_server(bench)
        pairs.append((times[()][0], times[("--no-open-worker",)][0], times[()][2]))
    return pairs


async def run(lines: int, positions: int, seed: int, open_only: bool = False, compare_rounds: int = 0) -> dict:
    text = generate(lines)
    out: dict = {"lines": text.count("\n"), "functions": text.count("func.func")}
    if compare_rounds:
        out["open_pairs"] = await compare_open(text, compare_rounds)
    bench = await start_server()
    client = bench.client
    uri = "file:///benchmark/generated.mlir"
    out["open_to_diagnostics_s"], out["open_server_cpu_s"], out["open_worker_cpu_s"] = \
        await measure_open(bench, uri, text)
    if open_only:
        await stop_server(bench)
        return out

    # Positions on values, op names and symbols, spread over the file.
    rng = random.Random(seed)
    all_lines = text.split("\n")
    candidates = []
    for n, line in enumerate(all_lines):
        # Op names are left out here: their hover includes lowered forms, measured below.
        for needle, delta in (("%0", 1), ("@f", 2), ("%arg1", 2), ("%4", 1), ("tensor<4x8xf32>", 8)):
            col = line.find(needle)
            if col != -1:
                candidates.append(T.Position(line=n, character=col + delta))
    picks = rng.sample(candidates, positions)
    ident = T.TextDocumentIdentifier(uri=uri)

    async def timed(make_request):
        t = time.perf_counter()
        result = await make_request()
        return time.perf_counter() - t, result

    # Warm up once (first-use costs: imports, caches), as an editor's first hover would.
    await client.text_document_hover_async(T.HoverParams(text_document=ident, position=picks[0]))
    hover_times, def_times, empty = [], [], 0
    for pos in picks:
        # Hover on op names would include lowered forms: measure them separately below.
        p = T.Position(line=pos.line, character=pos.character)
        dt, result = await timed(lambda: client.text_document_hover_async(T.HoverParams(text_document=ident,
                                                                                          position=p)))
        hover_times.append(dt)
        empty += result is None
        dt, result = await timed(lambda: client.text_document_definition_async(
            T.DefinitionParams(text_document=ident, position=p)))
        def_times.append(dt)
    out.update(hover_p50_s=percentile(hover_times, 50), hover_p95_s=percentile(hover_times, 95),
               definition_p50_s=percentile(def_times, 50), definition_p95_s=percentile(def_times, 95),
               hover_empty=empty)

    # One-line edits: break an op name in a function in the middle, then repair it.
    edit_times = []
    target_line = next(n for n in range(len(all_lines) // 2, len(all_lines))
                       if "stablehlo.add" in all_lines[n])
    col = all_lines[target_line].index("stablehlo.add") + len("stablehlo.")
    for k in range(10):
        await asyncio.sleep(0.3)  # a pause in typing, as between two real edits
        broken = k % 2 == 0
        change = T.TextDocumentContentChangePartial(
            range=T.Range(start=T.Position(line=target_line, character=col),
                          end=T.Position(line=target_line, character=col + 3)),
            text="axd" if broken else "add")
        started = time.perf_counter()
        client.text_document_did_change(T.DidChangeTextDocumentParams(
            text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=2 + k), content_changes=[change]))
        version, diags, at = await bench.wait_version(uri, 2 + k)
        assert bool(diags) == broken, (k, diags)
        edit_times.append(at - started)
    out.update(edit_to_diagnostics_p50_s=percentile(edit_times, 50),
               edit_to_diagnostics_max_s=max(edit_times))

    # Lowered forms: the first hover on an op starts its lowering; hover again until the next level shows.
    op_line = next(n for n in range(len(all_lines) // 3, len(all_lines)) if "stablehlo.exponential" in all_lines[n])
    pos = T.Position(line=op_line, character=all_lines[op_line].index("stablehlo.") + 3)
    dt, first = await timed(lambda: client.text_document_hover_async(T.HoverParams(text_document=ident,
                                                                                     position=pos)))
    out["lowered_first_hover_s"] = dt
    out["lowered_next_level_in_first_hover"] = NEXT_LEVEL in first.contents.value
    started = time.perf_counter() - dt
    while NEXT_LEVEL not in first.contents.value and time.perf_counter() - started < 60:
        await asyncio.sleep(0.05)
        first = await client.text_document_hover_async(T.HoverParams(text_document=ident, position=pos))
    out["lowered_next_level_s"] = time.perf_counter() - started
    other = next(n for n in range(op_line + 20, len(all_lines)) if "stablehlo.exponential" in all_lines[n])
    pos2 = T.Position(line=other, character=all_lines[other].index("stablehlo.") + 3)
    dt, cached = await timed(lambda: client.text_document_hover_async(T.HoverParams(text_document=ident,
                                                                                      position=pos2)))
    out["lowered_cached_hover_s"] = dt
    out["lowered_next_level_in_cached_hover"] = NEXT_LEVEL in cached.contents.value

    await stop_server(bench)

    # Contrast: one whole-file parse + verify in this process.
    from mlirtext import api
    started = time.perf_counter()
    api.parse_and_verify(text, "generated.mlir")
    out["full_reparse_s"] = time.perf_counter() - started
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=20000)
    parser.add_argument("--positions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--open-only", action="store_true", help="measure the open only, then stop")
    parser.add_argument("--compare-worker", type=int, default=0, metavar="ROUNDS",
                        help="first time ROUNDS opens with the worker process and without it, alternating")
    args = parser.parse_args()
    r = asyncio.run(run(args.lines, args.positions, args.seed, args.open_only, args.compare_worker))
    print(f"file: {r['lines']} lines, {r['functions']} functions")
    if args.compare_worker:
        pairs = r["open_pairs"]
        print("open, with / without the worker: " + ", ".join(
            f"{a:.2f} / {b:.2f} s" + (f" (worker CPU {w:.2f} s)" if w is not None else "") for a, b, w in pairs)
              + f"   (median ratio {sorted(a / b for a, b, _ in pairs)[len(pairs) // 2]:.2f})")
    cpu, worker = r["open_server_cpu_s"], r["open_worker_cpu_s"]
    print(f"open -> first diagnostics:      {r['open_to_diagnostics_s']:.2f} s   (target < 2 s)"
          + (f"   [CPU: server {cpu:.2f} s, its worker {worker:.2f} s]" if cpu is not None and worker is not None
             else ""))
    if args.open_only:
        return 0
    print(f"hover p50 / p95:                {ms(r['hover_p50_s'])} / {ms(r['hover_p95_s'])}   (target p95 < 20 ms)"
          f"   [{args.positions} positions, {r['hover_empty']} without a result]")
    print(f"definition p50 / p95:           {ms(r['definition_p50_s'])} / {ms(r['definition_p95_s'])}"
          "   (target p95 < 20 ms)")
    print(f"one-line edit -> diagnostics:   p50 {ms(r['edit_to_diagnostics_p50_s'])}, "
          f"max {ms(r['edit_to_diagnostics_max_s'])}   (target < 200 ms)")
    print(f"lowered-form hover, first:      {ms(r['lowered_first_hover_s'])} "
          f"(next level {'shown' if r['lowered_next_level_in_first_hover'] else 'not yet'}; shown after "
          f"{ms(r['lowered_next_level_s'])})")
    print(f"lowered-form hover, cached:     {ms(r['lowered_cached_hover_s'])} "
          f"(next level {'shown' if r['lowered_next_level_in_cached_hover'] else 'not shown'})")
    print(f"contrast: whole-file parse + verify (what a full re-parse per edit costs): "
          f"{r['full_reparse_s']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
