"""Opening a large document on two cores.

Parsing and verifying a 20,000-line file takes over a second of one core, and
the language server publishes no diagnostics before it is done. With a worker
process, the open splits in two: the worker computes the diagnostics of the
second half of the pieces while this process computes those of the first half
(`partial.piece_diagnostics`, which parses only the few other pieces they
depend on); the two halves are published at once; then this process builds the
document (hover, definitions, ...) as usual, its first half already parsed and
verified in the piece cache. Only diagnostics cross between the processes:
sending the IR would cost more than parsing it again.

The worker is forked once, before the server starts any thread, from a process
whose parser is warm, so it is ready at once and costs little memory.

Two processes finish sooner where a second core is idle: side by side on a
2-core machine with the cores to itself, opens took 0.61x as long with the
worker as without (median of 4 rounds). On a busy machine they do not: Linux
shares the CPU between sessions (autogroups), and the server and its worker are
one session; measured side by side on a loaded 2-core machine (load average
7-9), the worker made opens 0.84x as long in one run and 1.51x in another. So
the worker is used only when the runnable tasks, sampled at the open, leave a
core idle.
"""
from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Optional

from .document import PIECE_CACHE, DocDiagnostic
from .partial import piece_diagnostics

log = logging.getLogger(__name__)

#: Below this size a document opens in well under a second on one core: the round trip
#: to the worker (sending the text, the worker's own alias and symbol look-ups) is not worth it.
MIN_PARALLEL_CHARS = 200_000
#: Runnable-task samples taken at an open, and the pause between two.
LOAD_SAMPLES = 5
LOAD_SAMPLE_GAP_S = 0.003
LOADAVG = "/proc/loadavg"
#: How often the worker checks that the server is still there.
PARENT_CHECK_S = 1.0


class DiagnosticsWorker:
    """A worker process that computes half of a newly opened document's diagnostics."""

    def __init__(self):
        self.pool: Optional[ProcessPoolExecutor] = None
        self.started: Optional[Future] = None

    def start(self) -> None:
        """Fork the worker now. Call it before any thread starts: a fork copies only the
        calling thread, and a lock another thread held would stay locked in the child."""
        if "fork" not in multiprocessing.get_all_start_methods():
            return  # without fork a worker starts cold (imports, tables): not worth it
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"),
                                        initializer=_init_worker)
        self.started = self.pool.submit(os.getpid)  # the pool forks its worker on the first submit

    @property
    def ready(self) -> bool:
        started = self.started
        return started is not None and started.done() and started.exception() is None

    def stop(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self.started = None

    def diagnostics(self, text: str, filename: str, layout) -> Optional[list[DocDiagnostic]]:
        """The diagnostics of the document `text` (`layout` = `layout_of(text)`), half of
        them computed by the worker; None when the worker is not worth it or not there
        (the caller then builds the document as usual)."""
        count = sum(len(bounds) for _, _, bounds in layout)
        if len(text) < MIN_PARALLEL_CHARS or count < 2 or not self.ready or not _core_idle():
            return None
        split = _middle_piece(layout, len(text))
        try:
            theirs = self.pool.submit(piece_diagnostics, text, filename, layout, split, count)
        except Exception:  # noqa: BLE001 - a broken pool: go on without it
            log.warning("the diagnostics worker is gone; analysing on one core", exc_info=True)
            self.stop()
            return None
        try:
            mine = piece_diagnostics(text, filename, layout, 0, split)
        except Exception:  # noqa: BLE001 - a bug here must not cost the open: the caller does it all
            log.warning("computing half of the diagnostics failed; analysing on one core", exc_info=True)
            mine = None
        try:
            found = theirs.result()
        except Exception:  # noqa: BLE001 - the worker died or failed: the caller does it all
            log.warning("the diagnostics worker failed; analysing on one core", exc_info=True)
            self.stop()
            return None
        # The worker frees what it built while this process builds the document.
        self.pool.submit(_worker_collect)
        return None if mine is None else mine + found


def _core_idle() -> bool:
    """Whether a core is left for the worker: fewer runnable tasks than cores, this one
    included, on average over a few samples (the fourth field of /proc/loadavg, "4/312",
    counts them now). True where there is no /proc to read."""
    running = 0
    for i in range(LOAD_SAMPLES):
        if i:
            time.sleep(LOAD_SAMPLE_GAP_S)
        try:
            with open(LOADAVG) as f:
                running += int(f.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return True
    return running / LOAD_SAMPLES <= (os.cpu_count() or 1) - 1


def _middle_piece(layout, length: int) -> int:
    """The index of the first piece that starts in the second half of the text (never 0)."""
    index = 0
    for _, _, bounds in layout:
        for start, _ in bounds:
            if start >= length // 2 and index:
                return index
            index += 1
    return index - 1


def _init_worker() -> None:
    """In the worker: let go of the server's stdin and stdout (the protocol's channel),
    leave collecting to `_worker_collect`, run once a result is sent, and exit with the
    server (a forked worker holds both ends of its task pipe: a killed server would not
    close it)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    gc.disable()
    threading.Thread(target=_exit_with, args=(os.getppid(),), daemon=True).start()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


def _worker_collect() -> None:
    PIECE_CACHE.entries.clear()
    gc.collect()
