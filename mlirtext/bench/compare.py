"""Whether a row's outputs are the baseline's: floats within a stated tolerance, everything else exact."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Float outputs agree when |got - want| <= ATOL + RTOL * |want| element by element (NaN where the
#: baseline has NaN). Native kernels reorder sums and use polynomial approximations of exp, tanh,
#: ...: they agree with the interpreter to a few ulps per op, far inside this bound.
RTOL = 1e-3
ATOL = 1e-4

TOLERANCE_TEXT = (f"floats: |out - baseline| <= {ATOL:g} + {RTOL:g}*|baseline| per element (NaN where the "
                  "baseline is NaN); integers and booleans: exact")


@dataclass
class Agreement:
    ok: bool
    max_error: float          # the largest |out - baseline| (inf when a shape, type or NaN differs)
    why: str = ""             # what differs, when not ok


def compare_outputs(got: list, want: list) -> Agreement:
    if len(got) != len(want):
        return Agreement(False, float("inf"), f"{len(got)} results, the baseline has {len(want)}")
    worst, why = 0.0, ""
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            return Agreement(False, float("inf"), f"result {i} has shape {g.shape}, the baseline {w.shape}")
        if g.dtype != w.dtype:
            return Agreement(False, float("inf"), f"result {i} is {g.dtype}, the baseline {w.dtype}")
        if g.size == 0:
            continue
        if w.dtype.kind in "fc":
            nan_w, nan_g = np.isnan(w), np.isnan(g)
            if not np.array_equal(nan_w, nan_g):
                return Agreement(False, float("inf"), f"result {i} has NaN where the baseline does not, "
                                 "or the other way round")
            g64, w64 = g[~nan_w].astype(np.complex128 if w.dtype.kind == "c" else np.float64), \
                w[~nan_w].astype(np.complex128 if w.dtype.kind == "c" else np.float64)
            with np.errstate(invalid="ignore"):
                same_inf = (g64 == w64)   # inf == inf counts as agreement; inf - inf would be NaN
                diff = np.where(same_inf, 0.0, np.abs(g64 - w64))
            err = float(np.max(diff)) if diff.size else 0.0
            bad = diff > ATOL + RTOL * np.abs(w64)
        else:
            diff = np.abs(g.astype(np.float64) - w.astype(np.float64))
            err = float(np.max(diff))
            bad = g != w
        if np.any(bad) and not why:
            why = f"result {i}: {int(np.count_nonzero(bad))} of {w.size} elements differ"
        worst = max(worst, err if not np.isnan(err) else float("inf"))
    return Agreement(not why, worst, why)
