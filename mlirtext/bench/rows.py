"""One row of the bench table (a target on a device) and the figures drawn from its samples."""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .compare import Agreement

# A row's status: the baseline itself, agreeing with it, differing from it, broken (a compile or
# a call failed), or not run (compiled, but no device here runs it).
BASELINE, OK, MISMATCH, FAILED, NOT_RUN = "baseline", "ok", "mismatch", "failed", "not run"


@dataclass
class Row:
    target: str                            # "llvm-cpu", "reference", ... or "iree llvm-cpu"
    device: str
    call: Optional[Callable] = None        # numpy arrays in, a list of numpy arrays out
    artifact_bytes: Optional[int] = None
    compile_s: Optional[float] = None
    load_s: Optional[float] = None
    first_call_s: Optional[float] = None
    peak_bytes: Optional[int] = None       # the VM's memory plan (None where the runtime plans its own)
    status: str = OK
    message: str = ""
    agreement: Optional[Agreement] = None
    calls_per_round: int = 1
    rounds: list = field(default_factory=list)   # per round: the seconds of each call
    speedup: Optional[float] = None

    @property
    def label(self) -> str:
        return f"{self.target} / {self.device}"

    @property
    def measured(self) -> bool:
        return self.status in (BASELINE, OK) and bool(self.rounds)

    @property
    def samples(self) -> list:
        return [s for r in self.rounds for s in r]

    @property
    def median_s(self) -> Optional[float]:
        return statistics.median(self.samples) if self.measured else None

    @property
    def p90_s(self) -> Optional[float]:
        return float(np.percentile(self.samples, 90)) if self.measured else None


def speedup_over(row: Row, baseline: Row) -> Optional[float]:
    """The median over rounds of (baseline's median call in that round / this row's): each ratio
    compares calls made moments apart, so load on a shared machine hits both sides."""
    if not (row.measured and baseline.measured):
        return None
    ratios = [statistics.median(b) / statistics.median(r) for r, b in zip(row.rounds, baseline.rounds)
              if r and b and statistics.median(r) > 0]
    return statistics.median(ratios) if ratios else None
