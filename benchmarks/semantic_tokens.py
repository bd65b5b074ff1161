"""Semantic tokens of a 10 MB document through the real language server, from the request
to the answer as the editor sees it, side by side with another checkout's server.

    PYTHONPATH=.:server python benchmarks/semantic_tokens.py [--old CHECKOUT] [--rounds 1]

The document is `tests/test_lsp_hostile.py`'s (the bundled examples repeated with renamed
symbols to 10 MB). Per server, three ways a request can come:

* `with open`: as VS Code does, `textDocument/semanticTokens/full` right after `didOpen`
  (client capabilities declare semantic tokens); the answer waits on the open's analysis,
  so this is open + tokens;
* `after idle`: the same client, the request sent once the open's diagnostics are out and
  the server has gone idle (what any later look at the file costs);
* `cold`: a client that declares no semantic tokens, the request once the diagnostics are
  out and the server idle: on a server that prepares nothing for it, the whole computation
  on the request; on this one (a document of 1 MB or more has its pieces' tokens made in
  its build, before its diagnostics, for every client), the join of the pieces' JSON;
* `cold, at once`: that client, the request sent as soon as the diagnostics arrive (as
  `tests/test_lsp_hostile.py` sends its requests): whatever the server still does after
  the diagnostics is in this request's time;

and `again` (the same version asked a second time). Wall seconds and the server's CPU
seconds from the request to the answer, and the wall seconds from `didOpen` to the
diagnostics (`open`; not for `with open`, whose request goes before them). `--old` runs another checkout's server (e.g.
`git worktree add /tmp/old main`) in the same run.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tests.lsp_raw import RawServer
from tests.test_lsp_hostile import ten_megabytes

ROOT = Path(__file__).resolve().parent.parent
URI = "file:///ten_megabytes.mlir"
DECLARES_TOKENS = {"textDocument": {"semanticTokens": {
    "requests": {"full": True, "range": True}, "tokenTypes": [], "tokenModifiers": [], "formats": ["relative"]}}}
IDLE_CPU_S = 0.05   # the server is idle when a second passes with less CPU than this


def request(server: RawServer) -> tuple:
    seconds, cpu, answer = server.timed("textDocument/semanticTokens/full", {"textDocument": {"uri": URI}},
                                        timeout=600)
    if "result" not in answer:
        raise SystemExit(f"semantic tokens failed: {answer}")
    return seconds, cpu, len(answer["result"]["data"])


def wait_idle(server: RawServer) -> None:
    before = server.cpu_seconds()
    while True:
        time.sleep(1)
        now = server.cpu_seconds()
        if now is None or before is None or now - before < IDLE_CPU_S:   # None: no /proc to read
            return
        before = now


def measure(root: Path, text: str, way: str) -> dict:
    server = RawServer(root)
    try:
        server.initialize(None if way.startswith("cold") else DECLARES_TOKENS)
        started = time.perf_counter()
        server.open(URI, text)
        opened = None
        if way != "with open":
            server.diagnostics(URI, timeout=600)
            opened = time.perf_counter() - started
            if way != "cold, at once":
                wait_idle(server)
        first = request(server)
        again = request(server)
    finally:
        server.stop()
    return {"first": first, "again": again, "opened": opened}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, help="another checkout whose server to measure alongside")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()
    text = ten_megabytes()
    roots = [("this", ROOT)] + ([("old", args.old.resolve())] if args.old else [])
    print(f"{len(text) / 1e6:.1f} MB, {text.count(chr(10)) + 1} lines; load average {os.getloadavg()[0]:.1f}")
    print(f"{'server':6s} {'request':13s} {'open':>7s} {'first: wall':>12s} {'server CPU':>11s} {'again: wall':>12s} "
          f"{'server CPU':>11s} {'integers':>9s}")
    for _ in range(args.rounds):
        for way in ("with open", "after idle", "cold", "cold, at once"):
            for name, root in roots:
                m = measure(root, text, way)
                (fw, fc, n), (aw, ac, _) = m["first"], m["again"]
                opened = f"{m['opened']:6.2f}s" if m["opened"] is not None else "-"
                print(f"{name:6s} {way:13s} {opened:>7s} {fw:11.2f}s {fc:10.2f}s {aw:11.2f}s {ac:10.2f}s {n:9d}",
                      flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
