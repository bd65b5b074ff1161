"""hlo -> hlo: the `dynamic_*` ops, when their shapes are static after all, become the static op
they generalise (as `stablehlo-refine-shapes` + canonicalisation do), which the other hlo
patterns then lower:

- `dynamic_iota` / `dynamic_reshape` / `dynamic_broadcast_in_dim` with a static result type:
  the shape operand can only say what the type says;
- `dynamic_pad`, `dynamic_gather`, `dynamic_conv` whose padding / slice sizes are constants:
  those constants become the static op's attributes;
- `get_dimension_size` of a static dimension: a constant.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ...dialects.hlo_attrs import int_list
from ...ir import types as T
from ...ir.arrays import array_to_attr, attr_to_array
from ...ir.attributes import DenseArrayAttr, IntegerAttr
from ..constants import constant_value
from ..rewriter import RewritePattern
from .build import all_static, hlo_names, tensor_of


def _constant_ints(value) -> Optional[list[int]]:
    attr = constant_value(value)
    if attr is None:
        return None
    try:
        return [int(v) for v in np.asarray(attr_to_array(attr, value.type)).reshape(-1)]
    except Exception:  # noqa: BLE001 - an attribute we cannot read: not a constant here
        return None


def _i64s(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i64, tuple(int(v) for v in values))


def _prefix(op) -> str:
    return op.name.split(".", 1)[0]


class _Static(RewritePattern):
    """The result types are static; `static_form` gives (op name, operands, attributes) or None."""

    def match_and_rewrite(self, op, rw) -> bool:
        if not all_static(*op.result_types):
            return False
        form = self.static_form(op)
        if form is None:
            return False
        name, operands, attrs = form
        new = rw.create(op, f"{_prefix(op)}.{name}", operands, list(op.result_types), attrs)
        rw.replace_op(op, new.results)
        return True

    def static_form(self, op):
        raise NotImplementedError


def _keep(op, *names) -> dict:
    return {k: v for k, v in op.attributes.items() if k in names}


class DynamicIota(_Static):
    ops = hlo_names("dynamic_iota")

    def static_form(self, op):
        return "iota", [], _keep(op, "iota_dimension")


class DynamicReshape(_Static):
    ops = hlo_names("dynamic_reshape")

    def static_form(self, op):
        return "reshape", [op.operand("operand")], {}


class DynamicBroadcastInDim(_Static):
    ops = hlo_names("dynamic_broadcast_in_dim")

    def static_form(self, op):
        if not all_static(op.operand("operand").type):
            return None
        dims = int_list(op.attr("broadcast_dimensions"))
        return "broadcast_in_dim", [op.operand("operand")], {"broadcast_dimensions": _i64s(dims or [])}


class DynamicPad(_Static):
    ops = hlo_names("dynamic_pad")

    def static_form(self, op):
        x, value, *amounts = op.operands
        lo, hi, interior = (_constant_ints(v) for v in amounts)
        if lo is None or hi is None or interior is None:
            return None
        return "pad", [x, value], {"edge_padding_low": _i64s(lo), "edge_padding_high": _i64s(hi),
                                   "interior_padding": _i64s(interior)}


class DynamicGather(_Static):
    ops = hlo_names("dynamic_gather")

    def static_form(self, op):
        x, indices, sizes = op.operands
        slice_sizes = _constant_ints(sizes)
        if slice_sizes is None:
            return None
        attrs = _keep(op, "dimension_numbers", "indices_are_sorted")
        attrs["slice_sizes"] = _i64s(slice_sizes)
        return "gather", [x, indices], attrs


class DynamicConv(_Static):
    ops = hlo_names("dynamic_conv")

    def static_form(self, op):
        lhs, rhs, padding = op.operands
        pads = _constant_ints(padding)
        if pads is None:
            return None
        attrs = {k: v for k, v in op.attributes.items() if k != "padding"}
        pad_type = tensor_of([len(pads) // 2, 2], T.i64)
        attrs["padding"] = array_to_attr(np.array(pads, np.int64).reshape(pad_type.shape), pad_type)
        return "convolution", [lhs, rhs], attrs


class GetDimensionSize(_Static):
    ops = hlo_names("get_dimension_size")

    def static_form(self, op):
        t = op.operand("operand").type
        dim = op.attr("dimension")
        if not all_static(t) or not isinstance(dim, IntegerAttr):
            return None
        rt = op.results[0].type
        return "constant", [], {"value": array_to_attr(np.array(t.shape[dim.value], np.int32), rt)}


PATTERNS = [DynamicIota(), DynamicReshape(), DynamicBroadcastInDim(), DynamicPad(), DynamicGather(), DynamicConv(),
            GetDimensionSize()]
