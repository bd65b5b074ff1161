"""`mlirtext compare DIR_A DIR_B`: the first dispatch whose tensors differ between two traces."""
from __future__ import annotations

from ..debugging.dispatch_trace import TraceError, first_difference
from ..diagnostics import Diagnostic, report
from ..transforms.semantics_check import Tolerance


def main(args) -> int:
    tolerance = Tolerance(args.tolerance_ulp, args.tolerance)
    try:
        compared, found = first_difference(args.trace_a, args.trace_b, tolerance)
    except TraceError as e:
        report([Diagnostic("error", str(e))])
        return 1
    if found is None:
        print(f"compare: the {compared} dispatches agree within {tolerance}")
        return 0
    r, d = found.record, found.difference
    print(f"compare: dispatch {r['index']} ({r['name']}, kernel @{r['kernel']}): {found.tensor} differs: "
          f"max |diff| {d.max_abs:.3g}, max rel {d.max_rel:.3g}, {d.max_ulp} ulp (the tolerance is {tolerance})")
    for source in r["sources"]:
        print(f"  {source['at']}: {source['op']}")
    return 1
