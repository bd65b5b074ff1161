"""A function's call, as a native program for local-task's helpers, made once and kept for its next calls.

Made from Python at every call, the program of a call (mobilenet_v3_small: 40 shared dispatches,
each its `SharedDispatch` and `Wave`, and 25 items) took ~290 us warm, ~380 us in a call at load 1.8:
a fifth of the call, on the calling thread before the first wave. Most of a call's dispatches read
and write the same arrays at every call (the constants and the buffer pool's views); their steps
are then the same objects as the last call's (vm.py's `_steps`), so the entries of those steps are
kept, their counters set back to zero, and only the others (the caller's inputs and results) are
made again. (An entry with a scalar is made at every call: a kernel may take it by value.) An
entry may be reset only when no
helper can still be in it: a program is reused only once every helper has read a later generation
than its last wave's (as `NativePool.kept` decides), so a function keeps two, used in turn (the
helpers have read the waves of the call between).
"""
from __future__ import annotations

from .native_pool import Program, Wave


class CallProgram:
    """The program of a call of `waves` (vm.py's waves of a function's dispatches) and what each of
    its entries was made for."""

    def __init__(self, steps, waves, library):
        self.waves, self.library = waves, library    # (entry k: the steps of waves[k])
        # per entry: the steps its items were made for (None: made at every call)
        self.made_for = [_made_for(steps, wave) for wave in waves]
        self.program = Program([self._entry(steps, wave) for wave in waves], library)

    def _entry(self, steps, wave):
        """A Wave, or the item of a step run whole by the caller."""
        shared = [steps[i].share() for i in wave if getattr(steps[i], "share", None) is not None]
        if not shared and len(wave) == 1:
            return steps[wave[0]].item()
        whole = [steps[i].item() for i in wave if getattr(steps[i], "share", None) is None]
        return Wave(whole, shared, self.library)

    def reusable(self, oldest_seen) -> bool:
        """No helper may still be in one of its waves: none was published, or every helper has read
        a later generation (`oldest_seen()`, asked only then)."""
        last = self.program.last_generation
        return last is None or oldest_seen() > last

    def update(self, steps) -> None:
        """Ready for a call of `steps`: entries whose steps changed made again, the others' counters zeroed."""
        program = self.program
        for k, wave in enumerate(self.waves):
            made_for = self.made_for[k]
            if made_for is not None and all(steps[i] is s for i, s in zip(wave, made_for)):
                entry = program.entries[k]
                if isinstance(entry, Wave):
                    entry.reset()
                continue
            program.replace(k, self._entry(steps, wave))
            self.made_for[k] = _made_for(steps, wave)


def _made_for(steps, wave) -> list | None:
    """The steps of `wave`; None when one has a scalar (a kernel may take it by value, read when
    its item is made: such an entry is made at every call)."""
    if any(getattr(a, "ndim", 0) == 0 for i in wave for a in steps[i].arrays):
        return None
    return [steps[i] for i in wave]
