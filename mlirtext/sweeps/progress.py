"""The progress of a sweep on stderr: tests done of all and the count of each status, redrawn in
place on a terminal; otherwise a plain line at the first result and then every LOG_EVERY seconds
(logs keep no control characters)."""
from __future__ import annotations

import sys
import time
from collections import Counter

from .results import STATUSES

#: Seconds between lines when stderr is not a terminal.
LOG_EVERY = 30.0


class StatusLine:
    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.counts: Counter = Counter()
        self.tests = self.done = 0
        self.started = 0.0
        self.last = -LOG_EVERY

    def start(self, tests: int) -> None:
        self.tests, self.started = tests, time.monotonic()

    def line(self) -> str:
        counts = ", ".join(f"{s} {self.counts[s]}" for s in STATUSES if self.counts[s])
        return (f"sweep: {self.done} of {self.tests} tests ({time.monotonic() - self.started:.0f} s): "
                f"{counts or 'no results yet'}")

    def add(self, results) -> None:
        """One test's results came back."""
        self.done += 1
        for r in results:
            self.counts[r.status] += 1
        now = time.monotonic()
        if self.terminal:
            self.stream.write("\r\x1b[2K" + self.line()[:160])
            self.stream.flush()
        elif now - self.last >= LOG_EVERY:
            self.last = now
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.terminal:
            self.stream.write("\r\x1b[2K")
        self.stream.write(self.line() + "\n")
        self.stream.flush()
