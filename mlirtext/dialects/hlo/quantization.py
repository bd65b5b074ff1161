"""uniform_quantize and uniform_dequantize: declarations and checks (the quantization
rules of other ops sit with those ops; the pieces they share are in shared.py).
"""
from __future__ import annotations

from ...ir import types as T
from .declare import HloOp
from .shared import elt, expressed, fail, qtype
from .syntax import UNARY_FORMAT


def _uniform_quantize(op):
    re_ = qtype(op.result_named("result").type)
    if re_ is None:
        return
    oe = elt(op.operand("operand").type)
    want = expressed(oe)
    got = T.scalar_type_from_name(re_.expressed)
    if got is not None and want != got:
        fail(f"Expressed type of result expected to be '{want}', but got '{got}'")


OPS = (
    HloOp("uniform_quantize", "Elementwise uniform_quantize.", verify=_uniform_quantize, format=UNARY_FORMAT),
    HloOp("uniform_dequantize", "Elementwise uniform_dequantize.", format=UNARY_FORMAT),
)
