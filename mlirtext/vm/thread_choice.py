"""Whether a function's calls on local-task use the helper threads, chosen by measuring both.

The machines this runs on are shared: when other processes keep the other cores busy, a helper
thread only takes turns with the calling thread on one core, and a call made by both is slower
than one made by the calling thread alone (switches, two working sets in one cache). Neither
choice is right on every machine and at every moment, so each function times its calls both
ways and uses the faster, trying the other way now and then (BURST calls in EXPLORE_EVERY) so
that it follows the load as it changes. The first call after a switch is not counted: it runs
cold (a helper that slept, caches that hold the other thread's data), and counting it would make
the way being tried look slower than it is; nor are the first COLD calls of each way, and the
first choice waits for WARMUP counted calls of each. The results are the same bits either way (every
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
#: Counted calls of each way before the first choice: with one, a single call slowed by another
#: process (a runtime's threads still spinning on the other core after its own call) decided
#: for the next EXPLORE_EVERY calls and more (EfficientNet-B0 at 2 threads beside ONNX Runtime:
#: the first 20 calls alone, 10.2 ms, where the helpers take 7.5).
WARMUP = 3
#: The first calls of each way are not counted either: they run cold (on the helpers' side, the
#: dispatches' native call items are made and the helpers' caches filled: EfficientNet-B0's first
#: three calls with the helpers took 22, 14 and 11 ms, the fourth 7).
COLD = 2


class ThreadChoice:
    def __init__(self):
        self.times = {True: deque(maxlen=WINDOW), False: deque(maxlen=WINDOW)}
        self.calls = 0
        self.last = None    # the way of the previous call
        self.seen = {True: 0, False: 0}    # calls made each way

    def pick(self) -> bool:
        """True: this call shares its dispatches with the helper threads."""
        self.calls += 1
        for helpers in (True, False):   # each way WARMUP times, helpers first
            if len(self.times[helpers]) < WARMUP:
                return helpers
        faster = statistics.median(self.times[True]) <= statistics.median(self.times[False])
        return (not faster) if self.calls % EXPLORE_EVERY < BURST else faster

    def record(self, helpers: bool, seconds: float) -> None:
        self.seen[helpers] += 1
        if helpers == self.last and self.seen[helpers] > COLD:    # (the first call after a switch: not counted)
            self.times[helpers].append(seconds)
        self.last = helpers
