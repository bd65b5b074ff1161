"""A worker process, the pipe to it and the task it is on: gpu_status hands tasks to a few of these and
replaces one that crashed or ran over its time limit. (The other status runs are `mlirtext sweep`
suites on Ray; the GPU run has not moved yet.)"""
from __future__ import annotations

import os
import signal
import time


class WorkerSlot:
    """`worker(conn, *args)` runs in a child process of `ctx` and answers what the slot sends it.
    `task` is what it is on (None when idle), `started` when it got it, `extra` whatever the runner
    learns about the task from the worker's progress messages (None for a new task)."""

    def __init__(self, ctx, worker, *args):
        self.ctx, self.worker, self.args = ctx, worker, args
        self.start_process()

    def start_process(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.process = self.ctx.Process(target=self.worker, args=(child, *self.args), daemon=True)
        self.process.start()
        child.close()
        self.task, self.started, self.extra = None, 0.0, None

    def give(self, task) -> None:
        self.task, self.started, self.extra = task, time.monotonic(), None
        self.conn.send(task)

    def over(self, limit: float) -> bool:
        return time.monotonic() - self.started > limit

    def kill(self) -> None:
        """The worker and, when it made itself a process group leader (os.setsid), what it started."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):   # (not a group leader: the process alone)
            self.process.kill()
        self.process.join()

    def replace(self) -> None:
        self.kill()
        self.start_process()
