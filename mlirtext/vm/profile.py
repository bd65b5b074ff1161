"""Profiles of calls: a timeline in the Chrome Trace Event Format, and the per-dispatch table.

`Profile` is the recorder of `vm.Function.profiled`: each call, its host-program steps (checking
the inputs and making its buffers; copying out the results), the allocations those make, each
dispatch (on the calling thread) and the workgroup ranges of a dispatch the threads share (on the
thread that ran them). `trace()` is the JSON that chrome://tracing, Perfetto and speedscope read:
one process, one track per thread, complete ("X") events with microsecond `ts`/`dur`, instant
("i") events for allocations and metadata ("M") events naming the process and threads. `table()`
sums the dispatches over the calls: calls, total, median and share of the calls' time.
"""
from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Optional


@dataclass
class DispatchTimes:
    """One dispatch of the program over the profiled calls."""
    index: int
    name: str
    kernel: str
    seconds: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    workgroups: int = 0     # the kernel's workgroups (0: not split into any)
    grain: int = 0          # workgroups per take when the threads share it (0: it runs whole)

    @property
    def split(self) -> str:
        """`count/grain` for a dispatch the threads share, else `whole`."""
        return f"{self.workgroups}/{self.grain}" if self.grain else "whole"

    @property
    def total(self) -> float:
        return sum(self.seconds)


class Profile:
    def __init__(self, function: str, device: str, sources: Optional[dict] = None, pid: int = 1):
        """`sources`: {kernel: [{"op", "at"}]}, the source ops behind each kernel (put in each
        dispatch event's args, for the editor's per-op share). `pid`: the process the trace
        shows it as (several profiles in one trace: one process each)."""
        self.function, self.device, self.pid = function, device, pid
        self.sources = sources or {}
        self.origin = time.perf_counter()
        self.events: list = []
        self.threads: dict = {}        # thread ident -> (tid, name)
        self.calls: list = []          # seconds of each call
        self.dispatches: dict = {}     # index -> DispatchTimes
        self._call_begin = self._mark = 0.0

    # -- recording (vm.Function.profiled) ---------------------------------------------------------
    def _tid(self) -> int:
        ident = threading.get_ident()
        if ident not in self.threads:
            name = threading.current_thread().name
            self.threads[ident] = (len(self.threads), "calling thread" if not self.threads else name)
        return self.threads[ident][0]

    def _us(self, t: float) -> float:
        return round((t - self.origin) * 1e6, 3)

    def _complete(self, name: str, cat: str, begin: float, end: float, args: Optional[dict] = None) -> None:
        event = {"name": name, "cat": cat, "ph": "X", "ts": self._us(begin), "dur": round((end - begin) * 1e6, 3),
                 "pid": self.pid, "tid": self._tid()}
        if args:
            event["args"] = args
        self.events.append(event)

    def begin_call(self) -> None:
        self._call_begin = self._mark = time.perf_counter()

    def buffers_made(self, allocations: list, pool_bytes: int) -> None:
        """The host step from the call's start to now: the inputs checked, the buffers made
        (`allocations`: {"register", "bytes", "pooled"} each), one instant event per buffer."""
        now = time.perf_counter()
        self._complete("inputs and buffers", "host", self._mark, now,
                       {"buffers": len(allocations), "pool_bytes": pool_bytes})
        for a in allocations:
            self.events.append({"name": f"alloc %{a['register']}", "cat": "alloc", "ph": "i", "s": "t",
                                "ts": self._us(now), "pid": self.pid, "tid": self._tid(), "args": a})
        self._mark = now

    def dispatch(self, index: int, kernel: str, begin: float, end: float, workgroups: int,
                 grain: int = 0) -> None:
        """Dispatch `index` ran from `begin` to `end`; `grain`: the workgroups per take when the
        threads shared it (0: one thread ran it whole)."""
        name = f"{self.function}#{index}"
        times = self.dispatches.setdefault(index, DispatchTimes(index, name, kernel,
                                                                sources=self.sources.get(kernel, []),
                                                                workgroups=workgroups, grain=grain))
        times.seconds.append(end - begin)
        self._complete(f"{name} @{kernel}", "dispatch", begin, end,
                       {"index": index, "kernel": kernel, "workgroups": workgroups, "sources": times.sources})
        self._mark = end

    def workgroups(self, index: int, first: int, last: int, begin: float, end: float) -> None:
        """Workgroups [first, last) of dispatch `index`, run by the calling thread."""
        self._complete(f"workgroups {first}-{last}", "workgroups", begin, end,
                       {"dispatch": index, "first": first, "last": last})

    def end_call(self) -> None:
        now = time.perf_counter()
        self._complete("results", "host", self._mark, now)
        self._complete(f"call @{self.function}", "call", self._call_begin, now, {"device": self.device})
        self.calls.append(now - self._call_begin)

    # -- reading --------------------------------------------------------------------------------
    def trace(self) -> dict:
        """The Chrome Trace Event Format (JSON object form)."""
        return merged_trace([self])

    def metadata(self) -> list:
        """The events that name this profile's process and threads."""
        meta = [{"name": "process_name", "ph": "M", "pid": self.pid, "tid": 0,
                 "args": {"name": f"mlirtext @{self.function} on {self.device}"}}]
        return meta + [{"name": "thread_name", "ph": "M", "pid": self.pid, "tid": tid, "args": {"name": name}}
                       for tid, name in self.threads.values()]

    def rows(self) -> list[dict]:
        """Per dispatch: name, kernel, calls, how it was split (`split`), total and median seconds,
        share of the calls' time, the source ops it was made from; largest total first."""
        whole = sum(self.calls) or 1e-12
        rows = [{"name": d.name, "kernel": d.kernel, "calls": len(d.seconds), "split": d.split, "total": d.total,
                 "median": statistics.median(d.seconds), "share": d.total / whole, "sources": d.sources}
                for d in self.dispatches.values()]
        return sorted(rows, key=lambda r: -r["total"])

    def table(self) -> str:
        rows = self.rows()
        whole = sum(self.calls)
        outside = whole - sum(r["total"] for r in rows)
        cells = [("dispatch", "kernel", "calls", "workgroups/take", "total", "median", "share")]
        cells += [(r["name"], r["kernel"], str(r["calls"]), r["split"], _ms(r["total"]), _ms(r["median"]),
                   f"{100 * r['share']:.1f}%") for r in rows]
        cells.append(("host", "(inputs, buffers, results)", str(len(self.calls)), "", _ms(outside), "",
                      f"{100 * outside / (whole or 1e-12):.1f}%"))
        split = sum(1 for r in rows if r["split"] != "whole")
        widths = [max(len(c[i]) for c in cells) for i in range(len(cells[0]))]
        lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
                 for row in cells]
        lines.append(f"{len(self.calls)} call(s) of @{self.function} on {self.device}: {_ms(whole)} in all; "
                     f"{split} of {len(rows)} dispatches shared by the threads")
        return "\n".join(line.rstrip() for line in lines) + "\n"


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def merged_trace(profiles: list) -> dict:
    """One trace of several profiles (give them different pids), each its own process."""
    events = [e for p in profiles for e in p.metadata()]
    events += sorted((e for p in profiles for e in p.events), key=lambda e: (e["pid"], e["ts"], -e.get("dur", 0)))
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"profiles": [{"function": p.function, "device": p.device, "calls": len(p.calls),
                                        "pid": p.pid} for p in profiles]}}
