"""One test body in a child process of the Ray worker, held to a time and a memory limit.

Ray schedules, retries and ships; what it cannot do is stop a test that hangs in native code or
crashes its process without losing the worker (and with it the suite's imports, warmed once per
worker). So each test is forked from the warm worker: the child runs the body and writes its
pickled answer to a pipe; the parent waits up to the time limit, kills the child over it, and reads
a signal or a silent exit as a crash. The memory limit is the child's address space (RLIMIT_AS):
what the worker already maps plus the test's allowance, and mlirtext's own allocation check
(`MLIRTEXT_MAX_MEMORY`) at the allowance, so most tests that ask too much get a one-line error
rather than a kill.
"""
from __future__ import annotations

import faulthandler
import os
import pickle
import resource
import select
import signal
import time


class Isolated(Exception):
    """The child did not answer: `status` is "timeout" or "crash", `why` says how."""

    def __init__(self, status: str, why: str):
        super().__init__(why)
        self.status, self.why = status, why


def _address_space() -> int:
    """Bytes this process maps now (its VmSize)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * resource.getpagesize()


def run_isolated(body, args: tuple, time_limit: float, memory_mb: int):
    """body(*args) in a forked child; its return value (picklable), or Isolated."""
    read_end, write_end = os.pipe()
    allowance = memory_mb << 20
    ceiling = _address_space() + allowance
    pid = os.fork()
    if pid == 0:   # the child: never returns into the worker's code
        os.close(read_end)
        faulthandler.disable()   # a crash is the parent's to report, as a status, not a C traceback
        code = 0
        try:
            os.environ["MLIRTEXT_MAX_MEMORY"] = str(allowance)
            resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
            payload = pickle.dumps(("ok", body(*args)))
        except BaseException as e:  # noqa: BLE001 - any failure of the body is its answer
            payload = pickle.dumps(("raised", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
        try:
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        except BaseException:  # noqa: BLE001
            code = 3
        os._exit(code)
    os.close(write_end)
    try:
        return _wait_for(pid, read_end, time_limit)
    finally:
        os.close(read_end)


def _wait_for(pid: int, fd: int, time_limit: float):
    deadline = time.monotonic() + time_limit
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise Isolated("timeout", f"over the {time_limit:g} s time limit")
        ready, _, _ = select.select([fd], [], [], min(left, 1.0))
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        raise Isolated("crash", f"killed by signal {signal.Signals(os.WTERMSIG(status)).name}")
    try:
        kind, value = pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - nothing (or half an answer) came back
        raise Isolated("crash", f"the test process exited with status {os.WEXITSTATUS(status)} "
                                "and no answer") from None
    if kind == "raised":
        raise Isolated("crash", f"internal error: {value}")
    return value
