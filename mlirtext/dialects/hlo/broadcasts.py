"""broadcast, broadcast_in_dim, dynamic_broadcast_in_dim (and mhlo's
minimum_broadcast_shapes, chlo's broadcasting elementwise ops): declarations and checks.
"""
from __future__ import annotations

from .declare import HloOp
from .shared import (KDYN, check_inferred, compatible_dims, compatible_elements, constant_ints, dim_text, elt, fail,
                     first_duplicate, ints_attr, is_quant, qtype, rank1_attrs, shape_of, shape_operand_check,
                     static_or_single_bounded, tensor, verify_q_same_params)
from .syntax import FUNCTIONAL, I64S, HloFormat


def verify_broadcast_quant(op, dims) -> None:
    if not op.operands or not op.results:
        return
    ot, rt = op.operand_types[0], op.result_types[0]
    verify_q_same_params(ot, rt, per_axis=False)
    qo, qr = qtype(ot), qtype(rt)
    if qr is None or not qr.per_axis or qo is None or not qo.per_axis:
        return
    if qo.axis < len(dims) and qr.axis != dims[qo.axis]:
        fail(f"result quantization_dimension {qr.axis} not same as broadcast_dimensions[{qo.axis}] = "
             f"{dims[qo.axis]}")
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None or os_[qo.axis] is None or rs[qr.axis] is None:
        return
    for i in range(rs[qr.axis]):
        j = 0 if os_[qo.axis] == 1 else i
        if i >= len(qr.scales) or j >= len(qo.scales):
            return
        if qr.scales[i] != qo.scales[j]:
            fail(f"mismatch result scale {i} ({qr.scales[i]:e}) and operand scale {j} ({qo.scales[j]:e})")
        if qr.zero_points[i] != qo.zero_points[j]:
            fail(f"mismatch result zero_point {i} ({qr.zero_points[i]}) and operand zero_point {j} "
                 f"({qo.zero_points[j]})")


def _broadcast(op):
    sizes = ints_attr(op, "broadcast_sizes")
    if sizes is None:
        return
    rank1_attrs(op, "broadcast_sizes")
    t = op.operand("operand").type
    s = shape_of(t)
    if s is None:
        return
    for v in sizes:
        if v < 0:
            fail(f"Broadcast with negative dimension size {v}")
    check_inferred(op, [tensor(list(sizes) + list(s), elt(t))])


def _broadcast_in_dim(op):
    dims = ints_attr(op, "broadcast_dimensions")
    if dims is None:
        return
    ot, rt = op.operand("operand").type, op.result_named("result").type
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None:
        return
    if not static_or_single_bounded(rt):
        fail(f"result #0 must be statically shaped or single bounded dimension tensor, but got '{rt}'")
    if len(dims) != len(os_):
        fail(f"broadcast_dimensions size ({len(dims)}) does not match operand rank ({len(os_)})")
    if first_duplicate(dims) is not None:
        fail("broadcast_dimensions should not have duplicates")
    for i, d in enumerate(dims):
        if d < 0 or d >= len(rs):
            fail(f"broadcast_dimensions contains invalid value {d} for result with rank {len(rs)}")
        if os_[i] is not None and os_[i] != 1 and os_[i] != rs[d]:
            fail(f"size of operand dimension {i} ({os_[i]}) is not equal to 1 or size of result dimension {d} "
                 f"({dim_text(rs[d]) if rs[d] is not None else KDYN})")
    verify_broadcast_quant(op, dims)


def _dynamic_broadcast_in_dim(op):
    dims = ints_attr(op, "broadcast_dimensions")
    if dims is None or len(op.operands) < 2 or not op.results:
        return
    shape = op.operand("output_dimensions")
    ot, st, rt = op.operand("operand").type, shape.type, op.result_types[0]
    ss = shape_of(st)
    if ss is not None and None in ss:
        fail(f"operand #1 must be statically shaped 1-dimensional tensor of index or integer values, "
             f"but got '{st}'")
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None:
        return
    if not (is_quant(ot) or is_quant(rt)) and not compatible_elements(ot, rt):
        fail(f"expects operand and result to have compatible element type. Got: '{ot}' and '{rt}'")
    if len(dims) != len(os_):
        fail(f"broadcast_dimensions size ({len(dims)}) does not match operand rank ({len(os_)})")
    if len(rs) < len(os_):
        fail(f"result rank ({len(rs)}) is less than operand rank ({len(os_)})")
    if first_duplicate(dims) is not None:
        fail("broadcast_dimensions should not have duplicates")
    for i, d in enumerate(dims):
        if d < 0 or d >= len(rs):
            fail(f"broadcast_dimensions contains invalid value {d} for result with rank {len(rs)}")
        if os_[i] != 1 and not compatible_dims(os_[i], rs[d]):
            fail(f"size of operand dimension {i} ({os_[i]}) is not compatible with size of result dimension "
                 f"{d} ({rs[d]})")
    shape_operand_check(op, shape, rt)
    hints = (ints_attr(op, "known_expanding_dimensions") or []) + \
        (ints_attr(op, "known_nonexpanding_dimensions") or [])
    if len(set(hints)) != len(hints):
        fail("duplicate expansion hint for at least one operand dimension")
    for h in sorted(set(hints)):
        if h < 0 or h >= len(os_):
            fail(f"hint for expanding dimension {h} does not refer to a valid operand dimension")
    vals = constant_ints(shape)
    if vals is not None and None not in os_:
        for i, d in enumerate(dims):
            if os_[i] != 1 and d < len(vals) and os_[i] != vals[d]:
                fail(f"size of operand dimension {i} ({os_[i]}) is not equal to 1 or value of shape at index "
                     f"{d} ({vals[d]})")
    verify_broadcast_quant(op, dims)


OPS = (
    HloOp("broadcast", "Prepends broadcast dimensions.", ("broadcast_sizes",), verify=_broadcast,
          format=HloFormat("broadcast", "$operand `,` `sizes` `=` $broadcast_sizes " + FUNCTIONAL, ("operand",),
                           {"broadcast_sizes": I64S}), inferred=True),
    HloOp("broadcast_in_dim", "Broadcasts to a shape, mapping operand dimensions.", ("broadcast_dimensions",),
          verify=_broadcast_in_dim,
          format=HloFormat("broadcast_in_dim", "$operand `,` `dims` `=` $broadcast_dimensions " + FUNCTIONAL,
                           ("operand",), {"broadcast_dimensions": I64S})),
    HloOp("dynamic_broadcast_in_dim", "broadcast_in_dim to a shape given as a tensor.",
          ("broadcast_dimensions", "known_expanding_dimensions", "known_nonexpanding_dimensions"),
          verify=_dynamic_broadcast_in_dim,
          format=HloFormat("dynamic_broadcast_in_dim", "$operand `,` $output_dimensions `,` `dims` `=` "
                           "$broadcast_dimensions " + FUNCTIONAL, ("operand", "output_dimensions"),
                           {"broadcast_dimensions": I64S})),
)

#: mhlo's own.
MHLO_OPS = (
    HloOp("minimum_broadcast_shapes", "Minimal broadcast shapes."),
)

#: chlo's broadcasting elementwise binaries (`chlo.broadcast_add`, ...).
CHLO_BROADCAST_BINARY = ("add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply", "next_after",
                         "or", "polygamma", "power", "remainder", "shift_left", "shift_right_arithmetic",
                         "shift_right_logical", "subtract", "xor", "zeta")
# As chlo's ODS writes them; the inherent attributes go in the attribute dictionary.
_BROADCAST = ("broadcast_dimensions",)
_CHLO_BINARY = HloFormat("broadcast_binary", "$lhs `,` $rhs " + FUNCTIONAL, ("lhs", "rhs"), dict.fromkeys(_BROADCAST))
_CHLO_COMPARE = ("comparison_direction", "compare_type")

#: chlo's.
CHLO_OPS = (
    *(HloOp(f"broadcast_{n}", f"Broadcasting elementwise {n}.", _BROADCAST, format=_CHLO_BINARY)
      for n in CHLO_BROADCAST_BINARY),
    HloOp("broadcast_compare", "Broadcasting elementwise comparison.", _BROADCAST + _CHLO_COMPARE,
          format=HloFormat("broadcast_compare", "$lhs `,` $rhs " + FUNCTIONAL, ("lhs", "rhs"),
                           dict.fromkeys(_BROADCAST + _CHLO_COMPARE))),
    HloOp("broadcast_select", "Broadcasting select.",
          format=HloFormat("broadcast_select", "$pred `,` $on_true `,` $on_false " + FUNCTIONAL,
                           ("pred", "on_true", "on_false"))),
)
