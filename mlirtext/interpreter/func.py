"""func: calls and returns."""
from __future__ import annotations

from .machine import Return
from .registry import impl


@impl("func.return")
def _return(interp, op, args):
    return Return(list(args))


@impl("func.call")
def _call(interp, op, args):
    return interp.call(op.attributes["callee"].root, args)
