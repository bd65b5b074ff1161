"""A sweep: every test of a suite one Ray task, results gathered as they come.

Ray does the scheduling (one CPU per task, plus the memory the test may take, and a device resource
when the test runs on a device some cluster node advertises), the transport, and the retries: a task
whose worker process or node is lost is run again elsewhere (`max_retries`). Inside the task the test
body runs in a child process (`isolation.py`), so a test that hangs or crashes is recorded as a
`timeout` or a `crash` and its worker lives on. At most a few tasks per CPU are in flight, so that a
budget (`budget` seconds: start no test after it) stops a sweep promptly and results arrive in order.
"""
from __future__ import annotations

import importlib
import os
import time
from dataclasses import dataclass, field, replace

from .. import cluster
from .progress import StatusLine
from .results import Result

#: suite name -> the module that describes it (`tests(options)`, `warm(options)`, `run(test, options)`).
SUITES = {
    "onnx": "mlirtext.sweeps.onnx_suite",
    "check": "mlirtext.sweeps.check_suite",
    "lowering": "mlirtext.sweeps.lowering_suite",
    "native": "mlirtext.sweeps.native_suite",
    "vm": "mlirtext.sweeps.vm_suite",
    "gpu": "mlirtext.sweeps.gpu_suite",
    "files": "mlirtext.sweeps.files_suite",
    "bench": "mlirtext.sweeps.files_suite",
}

#: Times Ray runs a task again when its worker process or node dies (not when the test fails).
MAX_RETRIES = 3


@dataclass(frozen=True)
class SweepOptions:
    """What every task of a sweep is told. `path`: the corpus directory (corpus suites) or the directory
    of models (files suite); `filter`: only tests whose name contains it; `files`: globs over the corpus
    (the corpus suites take only the files that match one)."""
    suite: str
    path: str = ""
    devices: tuple = ()
    filter: str = ""
    limit: int = 0
    time_limit: float = 120.0
    memory_mb: int = 4096
    extra: dict = field(default_factory=dict)
    files: tuple = ()


def suite_module(name: str):
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}: choose from {', '.join(SUITES)}, or a directory")
    return importlib.import_module(SUITES[name])


def select_tests(options: SweepOptions) -> list[str]:
    tests = [t for t in suite_module(options.suite).tests(options) if options.filter in t]
    return tests[:options.limit] if options.limit else tests


_warmed: set = set()


def run_test(test: str, options: SweepOptions) -> list[dict]:
    """The Ray task: warm the suite once per worker process, then run the test in a child process."""
    from .isolation import Isolated, run_isolated
    suite = suite_module(options.suite)
    if options.suite not in _warmed:
        suite.warm(options)
        _warmed.add(options.suite)
    node = f"{cluster.node_info()['hostname']}:{os.getpid()}"
    started = time.monotonic()
    try:
        results = run_isolated(suite.run, (test, options), options.time_limit, options.memory_mb)
    except Isolated as e:
        results = [Result(name, e.status, e.why) for name in suite.result_names(test, options)]
    seconds = round(time.monotonic() - started, 3)
    for r in results:
        r.node = node
        r.seconds = r.seconds or seconds
    return [r.as_dict() for r in results]


def run_sweep(options: SweepOptions, address: str | None = None, num_cpus: int | None = None,
              budget: float = 0.0, progress: StatusLine | None = None, tests: list[str] | None = None,
              local_devices=()) -> tuple[list[Result], list[str]]:
    """(The results of every test that ran, the tests a spent budget left out). `local_devices`: the
    devices a local Ray instance (no `address`) offers."""
    tests = select_tests(options) if tests is None else tests   # a bad selection fails before Ray starts
    ray = cluster.connect(address, num_cpus, local_devices)
    placed = tuple(d for d in options.devices if d in cluster.cluster_devices(ray))
    requirement = {cluster.device_resource(d): 0.001 for d in placed}
    # (a suite that runs on a device only where the task holds it, as the GPU suite, reads `placed_devices`)
    options = replace(options, extra={**options.extra, "placed_devices": placed})
    task = ray.remote(run_test).options(num_cpus=1, memory=options.memory_mb << 20, max_retries=MAX_RETRIES,
                                        retry_exceptions=False, resources=requirement)
    window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    stop_starting = time.monotonic() + budget if budget else float("inf")
    pending = list(reversed(tests))
    in_flight: dict = {}
    results: list[Result] = []
    if progress:
        progress.start(len(tests))
    while pending or in_flight:
        while pending and len(in_flight) < window and time.monotonic() < stop_starting:
            test = pending.pop()
            in_flight[task.remote(test, options)] = test
        if not in_flight:
            break
        done, _ = ray.wait(list(in_flight), num_returns=1, timeout=1.0)
        for ref in done:
            test = in_flight.pop(ref)
            answer = _answer(ray, ref, test, options)
            results += answer
            if progress:
                progress.add(answer)
    if progress:
        progress.close()
    return results, list(reversed(pending))


def _answer(ray, ref, test: str, options: SweepOptions) -> list[Result]:
    """The task's results, or a crash for each of its results when Ray gave up on it (its worker or
    node died more than MAX_RETRIES times)."""
    try:
        return [Result(**d) for d in ray.get(ref)]
    except Exception as e:  # noqa: BLE001 - Ray's errors for a lost task, recorded, the sweep goes on
        why = f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        return [Result(name, "crash", why) for name in suite_module(options.suite).result_names(test, options)]
