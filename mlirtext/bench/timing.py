"""How the rows are called and timed.

First call, then warm-up calls, both checked against the baseline's outputs (the last warm-up call
runs in the steady state, reusing the memory plan's arena). Then interleaved rounds: in every round
each row makes its calls in turn, so noise from a shared machine lands on all rows alike, and the
row that goes first moves from round to round. A sample is one call on inputs already staged.
"""
from __future__ import annotations

import time
from typing import Optional

from .compare import compare_outputs
from .rows import BASELINE, FAILED, MISMATCH, OK, Row

#: Each row's calls in one round add up to about this many seconds (at least one call, at most
#: MAX_CALLS): fast functions get several samples per round, slow ones one.
ROUND_BUDGET_S = 0.02
MAX_CALLS = 50


def method_text(warmup: int, rounds: int, iree: bool = False) -> str:
    extra = ("; IREE's rows: compile = iree-compile as a process (its start-up included), load = "
             "iree.runtime's load_vm_flatbuffer, calls through iree.runtime with the same inputs; IREE reports no "
             "peak memory" if iree else "")
    return ("each row: compile (text to module file bytes), load, first call (after an untimed compile and "
            f"load that bring the compiler and the VM into the process); then {warmup} warm-up "
            f"call(s) (outputs checked again), then {rounds} rounds, interleaved: in each round every row "
            f"makes its calls in turn (about {ROUND_BUDGET_S * 1e3:g} ms of calls, 1 to {MAX_CALLS}). Each sample "
            "is one call with the inputs already staged as host arrays (the call's input checks, buffers "
            "from the memory plan and result copies included; no staging). Latency: median and p90 of the "
            "samples; speedup: median over rounds of the baseline's median call / the row's. Peak memory: "
            "the VM's static memory plan of the function (transient pool + results), not a measurement; "
            "the reference device's interpreter also makes temporaries of its own" + extra)


def _timed(call, args) -> tuple[list, float]:
    start = time.perf_counter()
    out = call(*args)
    return out, time.perf_counter() - start


def _call(row: Row, args) -> Optional[tuple]:
    """(outputs, seconds) of one call, or None after marking the row failed (a device's error is
    a result of the bench, not a crash)."""
    try:
        out, seconds = _timed(row.call, args)
    except Exception as e:  # noqa: BLE001 - any device's failure is reported in its row
        row.status, row.message = FAILED, f"the call failed: {type(e).__name__}: {e}"
        return None
    return (list(out) if isinstance(out, (list, tuple)) else [out]), seconds


def first_calls(rows: list, args, warmup: int, progress) -> None:
    """First call and warm-up of every row; outputs checked against the baseline's."""
    want = None
    for row in rows:
        if row.call is None:
            continue
        progress.step(f"first call on {row.label}")
        outs, times = [], []
        for _ in range(1 + warmup):
            got = _call(row, args)
            if got is None:
                break
            outs.append(got[0])
            times.append(got[1])
        if row.status == FAILED:
            continue
        row.first_call_s = times[0]
        steady = min(times[1:] or times)
        row.calls_per_round = max(1, min(MAX_CALLS, int(ROUND_BUDGET_S / max(steady, 1e-9))))
        if row.status == BASELINE:
            want = outs[0]
            continue
        if want is None:
            row.status, row.message = FAILED, "the baseline failed: nothing to compare with"
            continue
        for got in (outs[0], outs[-1]):       # the first call, and the last warm-up call
            row.agreement = compare_outputs(got, want)
            if not row.agreement.ok:
                row.status, row.message = MISMATCH, row.agreement.why
                break


def timed_rounds(rows: list, args, rounds: int, progress) -> None:
    """The interleaved rounds of every row still standing (a row whose call fails now is marked
    failed and loses its samples)."""
    live = [r for r in rows if r.status in (BASELINE, OK)]
    if not live or live[0] is not rows[0]:
        return   # the baseline failed: no speed can be compared with it
    for i in range(rounds):
        progress.step(f"round {i + 1} of {rounds}")
        start = i % len(live)
        for row in live[start:] + live[:start]:   # who goes first moves round by round
            if row.status == FAILED:
                continue
            times = []
            for _ in range(row.calls_per_round):
                got = _call(row, args)
                if got is None:
                    row.rounds = []
                    break
                times.append(got[1])
            else:
                row.rounds.append(times)
