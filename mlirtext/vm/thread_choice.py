"""Whether a function's calls on local-task use the helper threads, chosen by measuring both.

The machines this runs on are shared: when other processes keep the other cores busy, a helper
thread only takes turns with the calling thread on one core, and a call made by both is slower
than one made by the calling thread alone (switches, two working sets in one cache). Neither
choice is right on every machine and at every moment, so each function times its calls both
ways and uses the faster. The way not in use is measured afresh now and then (its old times
forgotten, then WARMUP counted calls of it), so that the choice follows the load as it changes.
How often is set by what a try costs: at most EXPLORE_SHARE of the calls' time goes to the slower
way. Two ways close together are tried often (cheap, and the pair most likely to swap); a way
twice as slow is tried rarely (ResNet-50 at 2 threads: 60 ms alone, 32 with the helpers; a try
every 32 calls, as a fixed period had it, cost 5% of the time). The chosen way needs no trying:
its own calls are timed, and when the load slows them past the other's time the choice swaps.

The first call after a switch is not counted: it runs cold (a helper that slept, caches that
hold the other thread's data), and counting it would make the way being tried look slower than
it is; nor are the first COLD calls of each way. The results are the same bits either way (every
workgroup computes the same values whichever thread runs it).
"""
from __future__ import annotations

import math
from collections import deque

#: Of the calls' time, at most this share is spent trying the slower way again.
EXPLORE_SHARE = 0.03
#: Calls between two tries of the way not in use, at least and at most. The first choice, made on
#: the coldest calls, is checked MIN_GAP calls on whatever a try costs (MobileNetV3-small at 2
#: threads in the zoo benchmark: the helpers' warm-up calls, right after other runtimes' calls,
#: took 2.4-2.6 ms against 1.7 alone; measured again, 1.3).
MIN_GAP = 16
MAX_GAP = 1024
#: Recent call times kept per way. A way's time is the second fastest of them: a call is only ever
#: slowed, never sped up (preempted, its caches refilled after an idle while, a helper woken),
#: so the fastest calls say what a way costs now; the second, not the first, because one call
#: may have been lucky (another process paused just then). The median of five was moved by a
#: few slowed calls: MobileNetV3-small at 2 threads went alone (1.8 ms) for 60 calls after the
#: helpers' first four calls of a benchmark round (2.1-2.9 ms: its caches filled by the runtime
#: timed before it), where their other calls took 1.3-1.4. A way whose calls all slow down (a
#: process that took the other core) still shows it within WINDOW calls.
WINDOW = 8
#: Counted calls of a way before it is compared: its first calls, and each try of it afresh. With
#: one, a single call slowed by another process (a runtime's threads still spinning on the other
#: core after its own call) decided (EfficientNet-B0 at 2 threads beside ONNX Runtime: the first
#: 20 calls alone, 10.2 ms, where the helpers take 7.5).
WARMUP = 3
#: The first calls of each way are not counted either: they run cold (on the helpers' side, the
#: dispatches' native call items are made and the helpers' caches filled: EfficientNet-B0's first
#: three calls with the helpers took 22, 14 and 11 ms, the fourth 7).
COLD = 2


class ThreadChoice:
    def __init__(self):
        self.times = {True: deque(maxlen=WINDOW), False: deque(maxlen=WINDOW)}
        self.last = None    # the way of the previous call
        self.seen = {True: 0, False: 0}    # calls made each way
        self.since = 0      # calls since the way not in use was last tried
        self.tried = False  # whether it has been: the first choice, made on the coldest calls, is checked MIN_GAP calls on

    def pick(self) -> bool:
        """True: this call shares its dispatches with the helper threads."""
        for helpers in (True, False):   # each way until WARMUP of its calls are counted, helpers first
            if len(self.times[helpers]) < WARMUP:
                return helpers
        best = self.faster()
        self.since += 1
        if self.since >= MIN_GAP and (not self.tried or self.since >= self.gap(best)):
            self.since, self.tried = 0, True
            self.times[not best].clear()    # (the rule above now tries it afresh)
            return not best
        return best

    def record(self, helpers: bool, seconds: float) -> None:
        self.seen[helpers] += 1
        if helpers == self.last and self.seen[helpers] > COLD:    # (the first call after a switch: not counted)
            self.times[helpers].append(seconds)
        self.last = helpers

    def cost(self, helpers: bool) -> float:
        """A way's time: the second fastest of its recent calls (WINDOW)."""
        return sorted(self.times[helpers])[1]

    def faster(self) -> bool:
        """The way whose recent calls took less time (the helpers on a tie)."""
        return self.cost(True) <= self.cost(False)

    def gap(self, best: bool) -> int:
        """Calls between tries of the way not in use: a try (WARMUP counted calls and the first,
        cold one) costs at most EXPLORE_SHARE of the time of the calls between."""
        now = self.cost(best)
        lost = (WARMUP + 1) * (self.cost(not best) - now)
        return min(MAX_GAP, max(MIN_GAP, math.ceil(lost / (EXPLORE_SHARE * max(now, 1e-9)))))
