"""chlo -> stablehlo for the broadcasting binaries and the constants, as `chlo-legalize-to-stablehlo`
writes them for static shapes:

- `chlo.broadcast_<op>`: each operand `stablehlo.broadcast_in_dim` to the result's shape (its
  dimensions going to `broadcast_dimensions` when given, else to the trailing ones, numpy-style),
  then the non-broadcasting op (`stablehlo.<op>`; `chlo.next_after` / `polygamma` / `zeta`,
  lowered in turn); `broadcast_compare` keeps its direction and comparison type;
- `chlo.constant_like`: a splat `stablehlo.constant` of the result type;
- `chlo.constant`: `stablehlo.constant` with the same value.
"""
from __future__ import annotations

from ...dialects.hlo_attrs import int_list
from ...ir import types as T
from ...ir.arrays import attr_to_array
from ...ir.attributes import OpaqueAttr
from ..rewriter import RewritePattern
from .build import all_static, short_name
from .hlo_decompositions import HloBuilder

#: Broadcasting ops whose non-broadcasting form is a chlo op (the others are stablehlo ops).
_CHLO_TARGETS = ("next_after", "polygamma", "zeta")
_BINARIES = ("add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply", "next_after", "or",
             "polygamma", "power", "remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical",
             "subtract", "xor", "zeta", "compare", "select")


def _broadcast_to(h: HloBuilder, x, out: T.RankedTensorType, explicit):
    """`x` broadcast to `out`'s shape (keeping its element type)."""
    t = x.type
    target = T.RankedTensorType(out.shape, t.element)
    if t == target:
        return x
    dims = explicit if explicit is not None and len(explicit) == t.rank else \
        list(range(out.rank - t.rank, out.rank))
    return h.broadcast(x, dims, target)


def _as_stablehlo(attr):
    """`#chlo<comparison_direction LT>` -> `#stablehlo<comparison_direction LT>`."""
    if isinstance(attr, OpaqueAttr) and attr.text.startswith("#chlo<"):
        return OpaqueAttr("#stablehlo<" + attr.text[len("#chlo<"):])
    return attr


class BroadcastingOp(RewritePattern):
    ops = tuple(f"chlo.broadcast_{name}" for name in _BINARIES)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if not all_static(t, *(v.type for v in op.operands)):
            return False
        attr = op.attr("broadcast_dimensions")
        explicit = int_list(attr) if attr is not None else None
        h = HloBuilder(rw, op)
        operands = [_broadcast_to(h, v, t, explicit) for v in op.operands]
        name = short_name(op)[len("broadcast_"):]
        attributes = {k: _as_stablehlo(v) for k, v in op.attributes.items()
                      if k in ("comparison_direction", "compare_type")}
        dialect = "chlo" if name in _CHLO_TARGETS else "stablehlo"
        rw.replace_op(op, rw.create(op, f"{dialect}.{name}", operands, [t], attributes).results)
        return True


class ConstantLike(RewritePattern):
    ops = ("chlo.constant_like",)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        value = op.attr("value")
        if not all_static(t) or value is None:
            return False
        rw.replace_op(op, [HloBuilder(rw, op).constant(attr_to_array(value, t.element), t)])
        return True


class Constant(RewritePattern):
    ops = ("chlo.constant",)

    def match_and_rewrite(self, op, rw) -> bool:
        if "value" not in op.attributes:
            return False
        t = op.results[0].type
        rw.replace_op(op, [HloBuilder(rw, op).op("constant", [], t, {"value": op.attr("value")})])
        return True


PATTERNS = [BroadcastingOp(), ConstantLike(), Constant()]
