"""func: calls and returns."""
from __future__ import annotations

from .machine import Return
from .registry import impl


@impl("func.return")
def _return(interp, op, args):
    return Return(list(args))


@impl("func.call")
def _call(interp, op, args):
    name = op.attr("callee").root
    fn = interp.functions.get(name)
    if fn is None or not fn.regions or not fn.regions[0].blocks:
        from .runtime_calls import RUNTIME  # printMemrefF32, printF32, rtclock, ... (runner utils)
        if name in RUNTIME:
            return RUNTIME[name](interp, op, args)
    return interp.call(name, args, reflect=False)  # a call inside the program: its own types
