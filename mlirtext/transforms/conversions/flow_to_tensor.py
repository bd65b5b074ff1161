"""flow -> tensor for the IREE `flow.tensor.*` ops e2e tests use to hide shapes from folding:

- `flow.tensor.tie_shape %x : tensor<?x?xT>{%d0, %d1}` only names the dynamic sizes of `%x`
  (which it already has): it is `%x` itself;
- `flow.tensor.dynamic_constant dense<...> : tensor<2x3xT> -> tensor<?x3xT>` is the constant
  with its static type, `tensor.cast` to the dynamic one (IREE lowers it to a constant whose
  shape it cannot fold).
"""
from __future__ import annotations

from ...ir import types as T
from ..rewriter import RewritePattern


class TieShape(RewritePattern):
    ops = ("flow.tensor.tie_shape",)

    def match_and_rewrite(self, op, rw) -> bool:
        tensor = op.operand("operand")
        if tensor.type != op.results[0].type:
            return False
        rw.replace_op(op, [tensor])
        return True


class DynamicConstant(RewritePattern):
    ops = ("flow.tensor.dynamic_constant",)

    def match_and_rewrite(self, op, rw) -> bool:
        value = op.attr("value")
        static = getattr(value, "type", None)
        if not (isinstance(static, T.RankedTensorType) and static.has_static_shape):
            return False
        const = rw.create(op, "arith.constant", (), [static], {"value": value}).result
        if static != op.results[0].type:
            const = rw.create(op, "tensor.cast", [const], [op.results[0].type]).result
        rw.replace_op(op, [const])
        return True


PATTERNS = [TieShape(), DynamicConstant()]
