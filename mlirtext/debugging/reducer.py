"""`mlirtext reduce`: delta debugging over a module, as mlir-reduce and C-Reduce do.

Each round tries every reduction (reductions.py) in turn. A reduction with n sites is first applied
to all of them at once, then to chunks of half the size, a quarter, ... down to one site at a time
(ddmin's complement steps); a candidate is kept when it verifies, is smaller (fewer ops, else less
text) and is still interesting (interesting.py), and the chunks go on from where it was found. The
candidates of one batch, as many as there are jobs, are tested at once, each in a child process
forked from this one (multiprocessing's fork: the child starts with the parser and the passes
loaded, so a test costs what the test itself does) and killed when it runs past the time limit (a
hang is not interesting); the first interesting one of the batch, in chunk order, wins, so the
result does not depend on which child finished first. Rounds repeat until one changes nothing or
the time is spent. This process starts no threads, so forking it is safe.
"""
from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from .. import api
from .interesting import Interestingness, killed_by
from .reductions import Reduction, count_ops, reductions, size


class NotInteresting(ValueError):
    """The input itself does not fail the way asked for: there is nothing to reduce."""


@dataclass
class Progress:
    ops_before: int
    ops_now: int
    tests: int
    kept: int
    seconds: float
    reduction: str


@dataclass
class Reduced:
    text: str
    ops_before: int
    ops_after: int
    tests: int
    kept: int
    seconds: float
    #: True when the time budget ended the reduction before a round changed nothing.
    budget_spent: bool


class Reducer:
    def __init__(self, text: str, test: Interestingness, keep: frozenset = frozenset(), jobs: int = 0,
                 budget: float = 300.0, progress: Optional[Callable[[Progress], None]] = None):
        self.current = text
        self.test = test
        self.reductions: list[Reduction] = reductions(keep)
        self.jobs = jobs or os.cpu_count() or 1
        self.budget = budget
        self.progress = progress
        self.tests = self.kept = 0
        self.seen: set = {text}
        self.start = time.monotonic()
        self.limit = budget   # (the input's own test may take the whole budget; candidates get less)
        module = api.parse(text).module
        self.ops_before = self.ops_now = count_ops(module)
        self.size = size(module, text)
        self.reduction_name = ""

    def out_of_time(self) -> bool:
        return time.monotonic() - self.start >= self.budget

    def run(self) -> Reduced:
        with tempfile.TemporaryDirectory(prefix="mlirtext-reduce-") as work:
            self.work = Path(work)
            first = time.monotonic()
            self.tests += 1
            if not self.test.learn(self.observe([(self.current, api.parse(self.current).module)],
                                                 self.budget)[0]):
                raise NotInteresting(self.test.describe())
            # (a child that takes far longer than the input's test is hung, not interesting)
            self.limit = max(10.0, 3 * (time.monotonic() - first))
            changed = True
            while changed and not self.out_of_time():
                changed = False
                for r in self.reductions:
                    if self.out_of_time():
                        break
                    changed |= self._reduce_with(r)
        return Reduced(self.current, self.ops_before, self.ops_now, self.tests, self.kept,
                       time.monotonic() - self.start, self.out_of_time())

    def _reduce_with(self, r: Reduction) -> bool:
        self.reduction_name = r.name
        n = r.sites(api.parse(self.current).module)
        chunk, start, changed = n, 0, False
        while n and chunk >= 1 and not self.out_of_time():
            chunks = [list(range(i, min(i + chunk, n))) for i in range(start, n, chunk)]
            found = None
            for b in range(0, len(chunks), self.jobs):
                found = self._first_interesting(r, chunks[b:b + self.jobs])
                if found is not None or self.out_of_time():
                    break
            if found is not None:
                self.current, changed = found[1], True
                module = api.parse(self.current).module
                self.ops_now, self.size = count_ops(module), size(module, self.current)
                n = r.sites(module)
                start = found[0][0] if found[0][0] < n else 0
                continue
            if chunk == 1:
                break
            chunk, start = max(1, chunk // 2), 0
        return changed

    def _first_interesting(self, r: Reduction, chunks: list) -> Optional[tuple[list, str]]:
        """The first chunk (in order) whose candidate is interesting, with the candidate's text."""
        candidates = [(c, self._candidate(r, c)) for c in chunks]
        candidates = [(c, made) for c, made in candidates if made is not None]
        self.tests += len(candidates)
        verdicts = [self.test.judge(o) for o in self.observe([made for _, made in candidates], self.limit)]
        if self.progress is not None:
            self.progress(Progress(self.ops_before, self.ops_now, self.tests, self.kept,
                                   time.monotonic() - self.start, r.name))
        for (c, (text, _)), ok in zip(candidates, verdicts):
            if ok:
                self.kept += 1
                return c, text
        return None

    def _candidate(self, r: Reduction, chosen: list) -> Optional[tuple]:
        """The current module with `r` applied to the sites `chosen` (its text and its IR), when it
        verifies, is smaller and is new; else None."""
        result = api.parse(self.current)
        r.apply(result.module, chosen)
        text = api.to_text(result)
        if text in self.seen:
            return None
        self.seen.add(text)
        checked = api.parse_and_verify(text)
        if not checked.ok or api.has_errors(checked.diagnostics):
            return None
        if size(checked.module, text) >= self.size:
            return None
        return text, checked.module

    def observe(self, made: list, limit: float) -> list:
        """What the test observes of each candidate (text, IR), all at once, each in a forked child
        given `limit` seconds: None for one that ran past it, `killed by signal N` for one a signal
        ended."""
        fork = multiprocessing.get_context("fork")
        self.test.limit = limit
        children = []
        for text, module in made:
            receive, send = fork.Pipe(duplex=False)
            child = fork.Process(target=_observe_in_child, args=(self.test, self._write(text), module, send),
                                 daemon=True)
            child.start()
            send.close()
            children.append((child, receive))
        deadline = time.monotonic() + limit
        observations = []
        for child, receive in children:
            observation = None
            try:
                if receive.poll(max(0.0, deadline - time.monotonic())):
                    observation = receive.recv()
            except EOFError:   # (it died before it said anything)
                child.join()
                observation = killed_by(-child.exitcode) if child.exitcode is not None and child.exitcode < 0 \
                    else None
            if child.is_alive():
                child.kill()
            child.join()
            receive.close()
            observations.append(observation)
        return observations

    def _write(self, text: str) -> str:
        """A new candidate file in the work directory, holding `text`; its path."""
        fd, path = tempfile.mkstemp(dir=self.work, suffix=".mlir")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path


def _observe_in_child(test: Interestingness, path: str, module, send) -> None:
    send.send(test.observe(path, module))
    send.close()
