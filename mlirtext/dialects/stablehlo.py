"""stablehlo: the StableHLO op set, built from the HLO family modules (`hlo/`).

Each family module declares its ops with their checks and syntax: the regular ops
(elementwise, compare, select, the shape, slice, dot, pad, rng, fft, dynamic_* ... ops)
with declared assembly formats, as StableHLO's ODS writes them; the irregular ones
(regions, convolution's dimension numbers, constants, calls) with hand-written rules
in `grammars/hlo.lark`, whose callbacks this dialect owns. mhlo declares the same op
set under its prefix.
"""
from __future__ import annotations

from . import hlo_attrs
from .base import Dialect
from .hlo.declare import declare_ops
from .hlo.op_set import RULES, SHARED_OPS

dialect = Dialect("stablehlo", grammar="hlo", attr_check=hlo_attrs.check_attr_text,
                  attr_canonical=hlo_attrs.canonical_attr_text, type_check=hlo_attrs.check_type_text,
                  encoding_check=hlo_attrs.check_tensor_bounds)
dialect.rules.update(RULES)
declare_ops(dialect, "stablehlo", SHARED_OPS)
