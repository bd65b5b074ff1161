"""hlo -> hlo: ops with no lowering of their own, rewritten into simpler hlo ops that the
other hlo patterns lower in the same pass (as `stablehlo-legalize-...`/`unfuse-batch-norm` do).

- `batch_norm_inference`: scale * (x - mean) / sqrt(variance + epsilon) + offset, with the
  per-feature operands broadcast along `feature_index`;
- `batch_norm_training`: mean and (centred) variance by reductions over every dimension but
  the feature one, then the inference formula;
- `batch_norm_grad`: the StableHLO spec's formulas (XLA's batchnorm expander).

The new ops are stablehlo ops whatever the source spelling (mhlo or stablehlo): both lower the
same way.
"""
from __future__ import annotations

import numpy as np

from ...ir import types as T
from ...ir.arrays import array_to_attr, dtype_of
from ...ir.attributes import DenseArrayAttr, FloatAttr, IntegerAttr
from ...ir.core import Block, Operation, Region
from ..rewriter import RewritePattern
from .build import all_static, hlo_names, tensor_of


class HloBuilder:
    """Creates stablehlo ops before `anchor`, at its source position."""

    def __init__(self, rw, anchor: Operation):
        self.rw, self.anchor = rw, anchor

    def op(self, name: str, operands, result_type, attributes=None, regions=()):
        return self.rw.create(self.anchor, f"stablehlo.{name}", list(operands), [result_type], attributes or {},
                              list(regions)).result

    def constant(self, value, t: T.RankedTensorType):
        array = np.broadcast_to(np.asarray(value, dtype=dtype_of(t)), t.shape)
        return self.op("constant", [], t, {"value": array_to_attr(array, t)})

    def binary(self, name: str, a, b):
        return self.op(name, [a, b], a.type)

    def unary(self, name: str, a):
        return self.op(name, [a], a.type)

    def broadcast(self, x, dims, t: T.RankedTensorType):
        """`x` broadcast to `t`, its dimensions going to `dims` of the result."""
        return self.op("broadcast_in_dim", [x], t, {"broadcast_dimensions": DenseArrayAttr(T.i64, tuple(dims))})

    def sum(self, x, dims):
        """x summed over `dims` (a stablehlo.reduce with an add body, from zero)."""
        e = x.type.element
        scalar = tensor_of((), e)
        zero = self.constant(0, scalar)
        block = Block([scalar, scalar])
        add = Operation("stablehlo.add", list(block.arguments), [scalar])
        block.append(add)
        block.append(Operation("stablehlo.return", [add.results[0]], []))
        kept = [n for d, n in enumerate(x.type.shape) if d not in dims]
        return self.op("reduce", [x, zero], tensor_of(kept, e),
                       {"dimensions": DenseArrayAttr(T.i64, tuple(dims))}, [Region([block])])


def _float_attr(op, name: str) -> float:
    attr = op.attributes.get(name)
    return float(attr.value) if isinstance(attr, (FloatAttr, IntegerAttr)) else 0.0


class _BatchNorm(RewritePattern):
    """Shared matching: static shapes, a float element type, a valid feature index."""

    def match_and_rewrite(self, op, rw) -> bool:
        types = [*(v.type for v in op.operands), *(r.type for r in op.results)]
        x = op.operand("operand").type
        if not all_static(*types) or not T.is_float(x.element):
            return False
        fi = op.attr("feature_index")
        feature = fi.value if isinstance(fi, IntegerAttr) else -1
        if not 0 <= feature < x.rank:
            return False
        h = HloBuilder(rw, op)
        t = x
        per_feature = lambda v: h.broadcast(v, [feature], t)  # noqa: E731
        epsilon = h.constant(_float_attr(op, "epsilon"), t)
        others = [d for d in range(t.rank) if d != feature]
        rw.replace_op(op, self.build(h, op, t, per_feature, epsilon, others))
        return True

    def build(self, h: HloBuilder, op, t, per_feature, epsilon, others) -> list:
        raise NotImplementedError


def _normalize(h: HloBuilder, x, scale, offset, mean, variance, epsilon):
    """scale * (x - mean) / sqrt(variance + epsilon) + offset (all of x's type)."""
    stddev = h.unary("sqrt", h.binary("add", variance, epsilon))
    centered = h.binary("subtract", x, mean)
    return h.binary("add", h.binary("divide", h.binary("multiply", scale, centered), stddev), offset)


class BatchNormInference(_BatchNorm):
    ops = hlo_names("batch_norm_inference")

    def build(self, h, op, t, per_feature, epsilon, others):
        x, scale, offset, mean, variance = op.operands
        return [_normalize(h, x, per_feature(scale), per_feature(offset), per_feature(mean),
                           per_feature(variance), epsilon)]


def _count(h: HloBuilder, t, others, like):
    """The number of elements per feature, as a tensor of `like`'s type."""
    n = int(np.prod([t.shape[d] for d in others], dtype=np.int64))
    return h.constant(float(n), like)


class BatchNormTraining(_BatchNorm):
    ops = hlo_names("batch_norm_training")

    def build(self, h, op, t, per_feature, epsilon, others):
        x, scale, offset = op.operands
        feature_type = op.results[1].type
        mean = h.binary("divide", h.sum(x, others), _count(h, t, others, feature_type))
        centered = h.binary("subtract", x, per_feature(mean))
        variance = h.binary("divide", h.sum(h.binary("multiply", centered, centered), others),
                            _count(h, t, others, feature_type))
        out = _normalize(h, x, per_feature(scale), per_feature(offset), per_feature(mean), per_feature(variance),
                         epsilon)
        return [out, mean, variance]


class BatchNormGrad(_BatchNorm):
    ops = hlo_names("batch_norm_grad")

    def build(self, h, op, t, per_feature, epsilon, others):
        x, scale, mean, variance, grad = op.operands
        scale_b, variance_b = per_feature(scale), per_feature(variance)
        centered = h.binary("subtract", x, per_feature(mean))
        stddev = h.unary("sqrt", h.binary("add", variance_b, epsilon))
        normalized = h.binary("divide", centered, stddev)
        count = _count(h, t, others, t)
        i1 = h.binary("multiply", grad, count)
        grad_sum = h.sum(grad, others)
        i2 = per_feature(grad_sum)
        i3 = per_feature(h.sum(h.binary("multiply", grad, centered), others))
        i5 = h.binary("divide", h.binary("multiply", i3, centered), h.binary("add", variance_b, epsilon))
        i6 = h.binary("subtract", h.binary("subtract", i1, i2), i5)
        grad_operand = h.binary("multiply", h.binary("divide", h.binary("divide", scale_b, stddev), count), i6)
        grad_scale = h.sum(h.binary("multiply", grad, normalized), others)
        return [grad_operand, grad_scale, grad_sum]


PATTERNS = [BatchNormInference(), BatchNormTraining(), BatchNormGrad()]
