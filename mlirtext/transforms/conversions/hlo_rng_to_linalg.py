"""hlo -> linalg for `rng`: the same deterministic numbers IREE computes (and the interpreter,
`interpreter/hlo_rng.py`, reproduces), so every level gives the same values.

- UNIFORM: a `linalg.generic` hashing each element's index with a linear congruential step
  per dimension, `u = (index_d + u) * 1103515245 + 12345` (wrapping i32, from u = 0), then
  `float(u as unsigned) * ((b - a) * 2^-32) + a` in f32 (f64 for f64 results), floored and
  converted for integer results.
- NORMAL: IREE's preprocessing draws the uniforms at compile time (std::mt19937, seed 0) and
  applies Box-Muller at run time: constants `-2 log u1`, `cos(2 pi u2)`, `sin(2 pi u2)`, then
  `sigma * sqrt(.) * (cos | sin) + mu`, the cos halves first; built here as hlo ops.
"""
from __future__ import annotations

import numpy as np

from ...interpreter.hlo_rng import box_muller_draws
from ...dialects.hlo_attrs import enum_word
from ...ir import types as T
from ...ir.attributes import IntegerAttr
from .build import FASTMATH_NONE, Body, elementwise_generic, hlo_names, tensor_of
from .hlo_decompositions import HloBuilder
from .hlo_generic import HloLoweringPattern

_FM = {"fastmath": FASTMATH_NONE}


def _distribution(op) -> str:
    return enum_word(op.attr("rng_distribution")) or "UNIFORM"


class RngUniform(HloLoweringPattern):
    ops = hlo_names("rng")

    def rewrite(self, op, rw) -> bool:
        a, b, _shape = op.operands
        t = op.results[0].type
        if _distribution(op) != "UNIFORM" or a.type.rank != 0 or b.type.rank != 0:
            return False
        if not (T.is_float(t.element) or isinstance(t.element, T.IntegerType) and t.element != T.i1):
            return False
        work = T.f64 if t.element == T.f64 else T.f32

        def body(bb: Body, args):
            lo, hi = (_cast(bb, v, work) for v in args)
            u = bb.const(0, T.i32)
            for d in range(t.rank):
                index = bb.op("linalg.index", [], T.index, {"dim": IntegerAttr(d, T.i64)})
                i = bb.op("arith.index_cast", [index], T.i32)
                u = bb.op("arith.addi", [i, u], T.i32)
                u = bb.op("arith.muli", [u, bb.const(1103515245, T.i32)], T.i32)
                u = bb.op("arith.addi", [u, bb.const(12345, T.i32)], T.i32)
            scale = bb.op("arith.mulf", [bb.op("arith.subf", [hi, lo], work, _FM), bb.const(2.3283064e-10, work)],
                          work, _FM)
            r = bb.op("arith.addf", [bb.op("arith.mulf", [bb.op("arith.uitofp", [u], work), scale], work, _FM), lo],
                      work, _FM)
            if T.is_float(t.element):
                return _cast(bb, r, t.element)
            return bb.op("arith.fptosi", [bb.op("math.floor", [r], work, _FM)], t.element)

        generic = elementwise_generic(rw, op, [a, b], t, body)
        rw.replace_op(op, generic.results)
        return True


def _cast(b: Body, v, to: T.Type):
    """A scalar converted as numpy's astype does (the interpreter's reference)."""
    src = v.type
    if src == to:
        return v
    if T.is_float(src):
        return b.op("arith.extf" if src.width < to.width else "arith.truncf", [v], to)
    return b.op("arith.sitofp", [v], to)


class RngNormal(HloLoweringPattern):
    ops = hlo_names("rng")

    def rewrite(self, op, rw) -> bool:
        mu, sigma, _shape = op.operands
        t = op.results[0].type
        if _distribution(op) != "NORMAL" or t.element != T.f32 or mu.type.rank != 0 or sigma.type.rank != 0:
            return False
        n = int(np.prod(t.shape, dtype=np.int64))
        sq, co, si = box_muller_draws(n)
        half = tensor_of([len(sq)], T.f32)
        h = HloBuilder(rw, op)
        sigma_b, mu_b = h.broadcast(sigma, [], half), h.broadcast(mu, [], half)
        magnitude = h.binary("multiply", sigma_b, h.unary("sqrt", h.constant(sq, half)))
        first = h.binary("add", h.binary("multiply", magnitude, h.constant(co, half)), mu_b)
        second = h.binary("add", h.binary("multiply", magnitude, h.constant(si, half)), mu_b)
        both = h.op("concatenate", [first, second], tensor_of([2 * len(sq)], T.f32),
                    {"dimension": IntegerAttr(0, T.i64)})
        if 2 * len(sq) != n:
            from ...ir.attributes import DenseArrayAttr
            arr = lambda v: DenseArrayAttr(T.i64, tuple(v))  # noqa: E731
            both = h.op("slice", [both], tensor_of([n], T.f32),
                        {"start_indices": arr([0]), "limit_indices": arr([n]), "strides": arr([1])})
        rw.replace_op(op, [h.op("reshape", [both], t)])
        return True


PATTERNS = [RngUniform(), RngNormal()]
