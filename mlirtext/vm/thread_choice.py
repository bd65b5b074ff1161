"""Whether a function's calls on local-task use the helper threads, chosen by measuring both.

The machines this runs on are shared: when other processes keep the other cores busy, a helper
thread only takes turns with the calling thread on one core, and a call made by both is slower
than one made by the calling thread alone (switches, two working sets in one cache). Neither
choice is right on every machine and at every moment, so each function times its calls both
ways and uses the faster, trying the other way now and then (BURST calls in EXPLORE_EVERY) so
that it follows the load as it changes. The first call after a switch is not counted: it runs
cold (a helper that slept, caches that hold the other thread's data), and counting it would make
the way being tried look slower than it is. The results are the same bits either way (every
workgroup computes the same values whichever thread runs it).
"""
from __future__ import annotations

import statistics
from collections import deque

#: Of this many calls, BURST go the other way, to see whether it has become the faster.
EXPLORE_EVERY = 32
BURST = 2
#: Recent call times kept per way; their median (one slow call, preempted, does not count much).
WINDOW = 5


class ThreadChoice:
    def __init__(self):
        self.times = {True: deque(maxlen=WINDOW), False: deque(maxlen=WINDOW)}
        self.calls = 0
        self.last = None    # the way of the previous call

    def pick(self) -> bool:
        """True: this call shares its dispatches with the helper threads."""
        self.calls += 1
        for helpers in (True, False):   # each way at least once, helpers first
            if not self.times[helpers]:
                return helpers
        faster = statistics.median(self.times[True]) <= statistics.median(self.times[False])
        return (not faster) if self.calls % EXPLORE_EVERY < BURST else faster

    def record(self, helpers: bool, seconds: float) -> None:
        if helpers == self.last:    # (the first call after a switch: not counted)
            self.times[helpers].append(seconds)
        self.last = helpers
