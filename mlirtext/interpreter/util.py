"""util (IREE): `util.unfoldable_constant` is a constant, `util.optimization_barrier` the identity."""
from __future__ import annotations

from ..ir.arrays import attr_to_array
from .registry import impl


@impl("util.unfoldable_constant")
def _unfoldable_constant(interp, op, args):
    value = op.attr("value")
    return [attr_to_array(value, op.results[0].type)]


@impl("util.optimization_barrier")
def _optimization_barrier(interp, op, args):
    return list(args)
