"""One BLAS thread for the bench's baseline.

The baseline (the reference device) computes with numpy, whose matmuls go to a multi-threaded
BLAS. On a busy machine the number of threads that BLAS gets varies from run to run, and so did
the speedups measured against it (the same MLP read 69x, 150x and 181x; 11.6x with one thread).
While the bench runs, BLAS is held to one thread, so the baseline is one core's numpy:

- with threadpoolctl installed (`pip install 'mlirtext[bench]'`): its `threadpool_limits`, which
  knows every BLAS (OpenBLAS, MKL, BLIS) and OpenMP;
- without it: OpenBLAS (what numpy's and scipy's wheels bundle) through its own
  `openblas_set_num_threads`, found among the shared libraries this process has loaded (Linux's
  /proc/self/maps); the previous count is restored afterwards;
- otherwise (another BLAS, another system) the threads are left alone and the report says so.

mlirtext's own devices and IREE do not use BLAS: the limit changes only the baseline.
"""
from __future__ import annotations

import ctypes
import importlib
from contextlib import contextmanager
from typing import Iterator

#: (set, get) symbol pairs of OpenBLAS builds: scipy-openblas (numpy >= 2 wheels, 64-bit and
#: 32-bit integer interfaces) and plain OpenBLAS.
_OPENBLAS_SYMBOLS = (("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
                     ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
                     ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
                     ("openblas_set_num_threads", "openblas_get_num_threads"))


def _loaded_openblas() -> list:
    """(set, get) functions of every OpenBLAS loaded in this process."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and "/" in line})
    except OSError:
        return []
    found = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for set_name, get_name in _OPENBLAS_SYMBOLS:
            if hasattr(lib, set_name) and hasattr(lib, get_name):
                found.append((getattr(lib, set_name), getattr(lib, get_name)))
                break
    return found


@contextmanager
def one_blas_thread() -> Iterator[str]:
    """Hold BLAS to one thread inside the block; yields how (a phrase for the report). numpy
    (which loads its BLAS) is imported by the time the bench runs."""
    try:
        threadpoolctl = importlib.import_module("threadpoolctl")
    except ImportError:
        threadpoolctl = None
    if threadpoolctl is not None:
        with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
            yield "numpy with 1 BLAS thread (threadpoolctl)"
        return
    libraries = _loaded_openblas()
    if not libraries:
        yield "numpy with its BLAS's own thread count (not limited: install threadpoolctl)"
        return
    before = [get() for _, get in libraries]
    for set_threads, _ in libraries:
        set_threads(1)
    try:
        yield "numpy with 1 BLAS thread (OpenBLAS's openblas_set_num_threads)"
    finally:
        for (set_threads, _), count in zip(libraries, before):
            set_threads(count)


def blas_threads() -> list:
    """The thread count of each OpenBLAS loaded in this process (what the fallback sets)."""
    return [get() for _, get in _loaded_openblas()]
