"""Building IR allocates many objects and frees few: pause the cycle collector meanwhile.

With the collector on, every few hundred allocations it walks the young objects,
and now and then the whole growing IR, finding nothing to free. Paused, it runs
once the work is done (as part of the next allocation that crosses its threshold).
"""
from __future__ import annotations

import gc
from contextlib import contextmanager


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
