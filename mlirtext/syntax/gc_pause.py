"""The cycle collector's pace while IR is built or rewritten.

Building IR allocates many objects and frees few: `gc_paused` pauses the collector meanwhile.
With the collector on, every few hundred allocations it walks the young objects, and now and
then the whole growing IR, finding nothing to free. Paused, it runs once the work is done (as
part of the next allocation that crosses its threshold).

Rewriting IR (a pass pipeline) does free: every op a pattern replaces is cyclic garbage (an op
and its results point at each other), but an old one, which only a full collection finds. A full
collection walks every object, and by CPython's default pace (one per 10 collections of the
middle generation) a pipeline over a function of N ops makes O(N) of them, each O(N): forming the
dispatches of a 2,000-op function spent a third of its time there, 4,000 ops half.
`rare_full_collections` spaces them out while a pipeline runs.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

#: Collections of the middle generation between two full ones while passes run (CPython: 10).
#: At most ~100 x 7,000 objects wait to be freed: tens of MB, against seconds of collecting.
FULL_COLLECTION_EVERY = 100

_pace_lock = threading.Lock()
_pacing = 0            # pipelines running now, on any thread
_saved_threshold = None


@contextmanager
def gc_paused():
    """No cyclic garbage collection inside the block (nested uses are fine)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


@contextmanager
def rare_full_collections():
    """Full collections at most once per `FULL_COLLECTION_EVERY` middle ones inside the block;
    nested and concurrent uses (the server's threads) share one setting, restored by the last."""
    global _pacing, _saved_threshold
    with _pace_lock:
        if _pacing == 0:
            _saved_threshold = gc.get_threshold()
            young, middle, full = _saved_threshold
            gc.set_threshold(young, middle, max(full, FULL_COLLECTION_EVERY))
        _pacing += 1
    try:
        yield
    finally:
        with _pace_lock:
            _pacing -= 1
            if _pacing == 0:
                gc.set_threshold(*_saved_threshold)
