"""mhlo -> stablehlo, as mlir-hlo's `hlo-legalize-to-stablehlo` does for the ops both have: for
tools that read StableHLO but not MHLO (IREE's compiler has no mhlo dialect any more).

- `mhlo.<op>` becomes `stablehlo.<op>` where StableHLO has that op; mhlo's own elementwise special
  functions (acos, asin, atan, acosh, asinh, atanh, cosh, sinh, erf) become their `chlo.` ops and
  `mhlo.topk` (largest) becomes `chlo.top_k`;
- the attributes follow: `#mhlo<...>` / `#mhlo.dot<...>` enums and structs are spelled
  `#stablehlo...`, and the integer lists older mhlo writes as `dense<...>` (dimensions,
  permutation, slice bounds, window sizes, ...) become the `array<i64: ...>` StableHLO takes;
- any other mhlo-only op (fusion, copy, async ops, ...) has no StableHLO form: the pass fails
  and names each one.

`MhloOnlyToChlo` does the chlo part as a pattern of the compile flow's hlo step.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...diagnostics import Diagnostic
from ...dialects import lookup
from ...dialects.hlo_attrs import int_list
from ...ir import types as T
from ...ir.attributes import DenseArrayAttr, IntegerAttr, OpaqueAttr
from ...ir.core import Operation
from ...ir.dense import DenseElementsAttr
from ..passes import Pass, PassFailure
from ..rewriter import RewritePattern

#: mhlo-only ops with a chlo equivalent of the same operands, results and semantics.
_TO_CHLO = {name: f"chlo.{name}" for name in ("acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh",
                                               "erf")}
#: Attributes StableHLO declares as `array<i64: ...>` (older mhlo: a 1-D integer `dense<...>`).
_I64_ARRAYS = frozenset({
    "broadcast_dimensions", "dimensions", "permutation", "start_indices", "limit_indices", "strides",
    "window_dimensions", "window_strides", "base_dilations", "window_dilations", "lhs_dilation", "rhs_dilation",
    "slice_sizes", "edge_padding_low", "edge_padding_high", "interior_padding", "known_expanding_dimensions",
    "known_nonexpanding_dimensions", "fft_length"})


def _attribute(key: str, attr):
    if isinstance(attr, OpaqueAttr) and attr.text.startswith("#mhlo"):
        return OpaqueAttr("#stablehlo" + attr.text[len("#mhlo"):])
    if key in _I64_ARRAYS and isinstance(attr, DenseElementsAttr) and len(attr.shape) == 1 and \
            isinstance(attr.element_type, T.IntegerType):
        values = int_list(attr)
        if values is not None:
            return DenseArrayAttr(T.i64, tuple(values))
    return attr


def chlo_equivalent(op: Operation):
    """The chlo op that computes what mhlo-only `op` does (None if there is none)."""
    short = op.name[len("mhlo."):]
    if short == "topk":
        largest = op.attr("largest")
        return None if isinstance(largest, IntegerAttr) and not largest.value else "chlo.top_k"
    return _TO_CHLO.get(short)


def _new_name(op: Operation):
    name = chlo_equivalent(op) or f"stablehlo.{op.name[len('mhlo.'):]}"
    return name if name.startswith("chlo.") or lookup(name) is not None else None


class MhloOnlyToChlo(RewritePattern):
    """mhlo's own special functions and top-k as their chlo ops (lowered in turn): the compile
    flow's form of the renaming above."""
    ops = tuple(f"mhlo.{name}" for name in _TO_CHLO) + ("mhlo.topk",)

    def match_and_rewrite(self, op, rw) -> bool:
        name = chlo_equivalent(op)
        if name is None:
            return False
        attributes = {k: v for k, v in op.attributes.items() if k != "largest"}
        rw.replace_op(op, rw.create(op, name, list(op.operands), [r.type for r in op.results], attributes).results)
        return True


PATTERNS = [MhloOnlyToChlo()]


def mhlo_to_stablehlo(module: Operation) -> list:
    """Rename `module`'s mhlo ops (in place); diagnostics for the ones with no StableHLO form."""
    problems = []
    for op in module.walk():
        if op.dialect != "mhlo":
            continue
        name = _new_name(op)
        if name is None:
            problems.append(Diagnostic("error", f"'{op.name}' has no StableHLO form", op.name_span or op.span))
            continue
        op.name = name
        op.form = None
        op.attributes = {k: _attribute(k, v) for k, v in op.attributes.items() if k != "largest"}
    return problems


@dataclass(frozen=True)
class LegalizeHloToStablehlo(Pass):
    name = "hlo-legalize-to-stablehlo"
    summary = "Rename mhlo ops and attributes to their StableHLO (or chlo) forms; report the ones without one"

    def run(self, op: Operation) -> None:
        problems = mhlo_to_stablehlo(op)
        if problems:
            raise PassFailure("", diagnostics=problems)
