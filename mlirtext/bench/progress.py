"""Progress of a bench on stderr: a bar redrawn in place on a terminal, one plain line per step
otherwise (logs and pipes keep every step, with no control characters)."""
from __future__ import annotations

import sys

BAR_WIDTH = 30


class Progress:
    def __init__(self, stream=None, enabled: bool = True):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.terminal = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.done = 0
        self.total = 0
        self._drawn = False

    def add(self, steps: int) -> None:
        """More steps are known to come."""
        self.total += steps

    def step(self, label: str) -> None:
        """Starting one step called `label`."""
        self.done += 1
        self.total = max(self.total, self.done)
        if not self.enabled:
            return
        if self.terminal:
            filled = BAR_WIDTH * (self.done - 1) // self.total
            line = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.done}/{self.total} {label}"
            self.stream.write("\r\x1b[2K" + line[:120])
            self._drawn = True
        else:
            self.stream.write(f"bench [{self.done}/{self.total}] {label}\n")
        self.stream.flush()

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._drawn = False
