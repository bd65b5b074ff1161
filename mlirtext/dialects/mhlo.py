"""mhlo: XLA's HLO dialect: the StableHLO op set under the `mhlo.` prefix, plus its own ops.

Both come from the HLO family modules (`hlo/`), with their checks: the shared op set
(`op_set.SHARED_OPS`, the same records stablehlo declares) and mhlo's own
(`op_set.MHLO_OPS`: async ops, topk, copy, ...). The custom syntax is shared too
(`grammars/hlo.lark`), with mhlo's own spellings where they differ.
"""
from __future__ import annotations

import re

from ..ir import types as T
from . import hlo_attrs
from .base import Dialect, VerifyError
from .hlo.declare import declare_ops
from .hlo.op_set import MHLO_OPS, SHARED_OPS

dialect = Dialect("mhlo", attr_check=hlo_attrs.check_attr_text, type_check=hlo_attrs.check_type_text,
                  encoding_check=hlo_attrs.check_tensor_bounds)

declare_ops(dialect, "mhlo", SHARED_OPS + MHLO_OPS)
# mhlo's custom_call has one more inherent attribute than stablehlo's.
_cc = dialect.ops["mhlo.custom_call"]
dialect.op("mhlo.custom_call", _cc.summary, _cc.traits, _cc.properties + ("custom_call_schedule",),
           _cc.verify, _cc.print)

# Printing: mlir-hlo's pretty forms are stablehlo's under the `mhlo.` prefix, so the stablehlo
# printers and declared formats print mhlo ops too. They read the attributes in
# the prefix's own spelling (`#mhlo<comparison_direction GT>`, `#mhlo.conv<...>`) and fall back
# to the generic form, keeping the source's `<{...}>` / `{...}` split, for any attribute without
# a pretty spelling: mhlo's dense-element dimension lists (`broadcast_dimensions = dense<[0]> :
# tensor<1xi64>`) print generic, as mlir-hlo prints them. Ops without a printer are generic.


# ---- `mhlo.result_alias` on function arguments (mhlo's verifyRegionArgAttribute) ---------------
_ALIAS_FIELD = re.compile(r"(tuple_indices|result_index)\s*=\s*\[([^\]]*)\]")


def _walk_tuple(t, indices):
    """The type at `indices` inside nested tuples, or None when an index is out of range."""
    for i in indices:
        if not isinstance(t, T.TupleType) or not 0 <= i < len(t.types):
            return None
        t = t.types[i]
    return t


def _compatible(a, b) -> bool:
    if isinstance(a, T.RankedTensorType) and isinstance(b, T.RankedTensorType):
        return a.element == b.element and len(a.shape) == len(b.shape) and all(
            x is None or y is None or x == y for x, y in zip(a.shape, b.shape))
    return a == b


def _check_result_alias(op, attr, arg_index) -> None:
    what = 'attribute "mhlo.result_alias"'
    text = str(attr)
    if arg_index is None:
        raise VerifyError(f"{what} can only be used on function-like operations")
    if not (text.startswith("#mhlo.result_alias<") and text.endswith(">")):
        raise VerifyError(f"{what} must be a #mhlo.result_alias attribute")
    fields = {m.group(1): [int(x) for x in m.group(2).replace(" ", "").split(",") if x]
              for m in _ALIAS_FIELD.finditer(text)}
    arg_tuple, result = fields.get("tuple_indices", []), fields.get("result_index")
    if not result:
        raise VerifyError("failed parsing argument-result alias attribute: expected at least 1 element(s), found 0")
    if any(i < 0 for i in arg_tuple + result):
        raise VerifyError(f"{what} expects all argument and result indices to be >= 0")
    ftype = op.attr("function_type")
    ftype = getattr(ftype, "type", None)
    if not isinstance(ftype, T.FunctionType) or arg_index >= len(ftype.inputs):
        return
    if result[0] >= len(ftype.results):
        raise VerifyError(f"{what} result index is out of range, must be <{len(ftype.results)}")
    arg_type = _walk_tuple(ftype.inputs[arg_index], arg_tuple)
    if arg_type is None:
        raise VerifyError(f"{what} argument tuple indices are invalid")
    result_type = _walk_tuple(ftype.results[result[0]], result[1:])
    if result_type is None:
        raise VerifyError(f"{what} result tuple indices are invalid")
    if not _compatible(arg_type, result_type):
        raise VerifyError(f"{what} aliases do not have compatible types, '{arg_type}' vs. '{result_type}'")


dialect.discardable_attrs["mhlo.result_alias"] = _check_result_alias


def _leaf_count(t) -> int:
    return sum(_leaf_count(e) for e in t.types) if isinstance(t, T.TupleType) else 1


def _check_parameter_replication(op, attr, arg_index) -> None:
    """No flag, one flag for the whole argument, or one per leaf buffer (tuples flattened)."""
    if arg_index is None:
        return
    ftype = getattr(op.attr("function_type"), "type", None)
    items = getattr(attr, "items", None)
    if not isinstance(ftype, T.FunctionType) or arg_index >= len(ftype.inputs) or items is None:
        return
    leaves = _leaf_count(ftype.inputs[arg_index])
    if len(items) not in (0, 1, leaves):
        raise VerifyError(f"parameter_replication: arg {arg_index} has {leaves} leaf_buffers, but "
                          f"parameter_replication expects {len(items)}")


dialect.discardable_attrs["mhlo.parameter_replication"] = _check_parameter_replication
