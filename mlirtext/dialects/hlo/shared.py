"""Shared pieces of the HLO checks: type predicates and compatibility, shape and
attribute readers, the reducer-body and window rules, and the quantization pieces
several families use. Rules follow the StableHLO spec; the messages
use MLIR's wording. A check only rejects what MLIR rejects: where a fact cannot be known
(dynamic dimensions, unranked tensors, unknown attributes) it is skipped.
"""
from __future__ import annotations

import re
from typing import Optional

from ...ir import types as T
from ...ir.attributes import IntegerAttr, TypeAttr
from ...ir.core import Operation
from .. import hlo_attrs as A
from ..base import VerifyError
from ..quant_types import Uniform, uniform


def fail(message: str):
    raise VerifyError(message)


def is_ranked(t) -> bool:
    return isinstance(t, T.RankedTensorType)


def shape_of(t) -> Optional[tuple]:
    """The shape of a ranked tensor (None entries for `?`), or None."""
    return t.shape if isinstance(t, (T.RankedTensorType, T.VectorType, T.MemRefType)) else None


def rank_of(t) -> Optional[int]:
    s = shape_of(t)
    return None if s is None else len(s)


def elt(t):
    return T.element_type(t)


def is_tensor(t) -> bool:
    return isinstance(t, (T.RankedTensorType, T.UnrankedTensorType))


def bounds_of(t) -> Optional[list]:
    """`tensor<?x4xf32, #stablehlo.bounds<3, ?>>` -> [3, None]."""
    if not isinstance(t, T.RankedTensorType) or t.encoding is None:
        return None
    text = str(t.encoding)
    m = re.fullmatch(r"#\w+\.(?:bounds|type_extensions)<(?:bounds\s*=\s*\[)?([^\]>]*)\]?>", text)
    if not m:
        return None
    out = []
    for part in m.group(1).split(","):
        part = part.strip()
        if not part:
            continue
        out.append(None if part in ("?", "-9223372036854775808") else int(part))
    return out


# quantized types (`!quant.uniform<i8<-8:7>:f32:1, {...}>`): quant_types.uniform reads them
def qtype(t) -> Optional[Uniform]:
    """The uniform quantized element type of `t` (a type or an element type), or None."""
    return uniform(elt(t))


def is_quant(t) -> bool:
    return qtype(t) is not None


def expressed(e):
    q = uniform(e)
    return T.scalar_type_from_name(q.expressed) if q else e


def storage(e):
    q = uniform(e)
    return e if q is None else T.IntegerType(q.width, "u" if q.signedness == "u" else "")


def _storage_key(q: Uniform) -> tuple:
    return q.signedness == "u", q.width, q.lo, q.hi


def compatible_elements(a, b) -> bool:
    a, b = elt(a), elt(b)
    if a == b:
        return True
    qa, qb = uniform(a), uniform(b)
    if qa and qb and _storage_key(qa) != _storage_key(qb):
        return False
    return expressed(a) == expressed(b) and (qa is not None or qb is not None)


def compatible_dims(a, b) -> bool:
    return a is None or b is None or a == b


def compatible_shapes(a, b) -> bool:
    sa, sb = shape_of(a), shape_of(b)
    if sa is None or sb is None:
        return True
    return len(sa) == len(sb) and all(compatible_dims(x, y) for x, y in zip(sa, sb))


def compatible(a, b) -> bool:
    """Types compatible for HLO type inference: shapes (with `?`), element types, tuples."""
    if a == b:
        return True
    if isinstance(a, T.TupleType) or isinstance(b, T.TupleType):
        return (isinstance(a, T.TupleType) and isinstance(b, T.TupleType) and len(a.types) == len(b.types)
                and all(compatible(x, y) for x, y in zip(a.types, b.types)))
    if is_tensor(a) and is_tensor(b):
        return compatible_shapes(a, b) and compatible_elements(a, b)
    return False


def tensor(shape, element) -> T.RankedTensorType:
    return T.RankedTensorType(tuple(shape), element)


def quoted(types) -> str:
    return ", ".join(f"'{t}'" for t in types)


def check_inferred(op: Operation, inferred) -> None:
    """The result types must be compatible with the inferred ones."""
    got = op.result_types
    if len(got) != len(inferred) or not all(compatible(a, b) for a, b in zip(inferred, got)):
        fail(f"inferred type(s) {quoted(inferred)} are incompatible with return type(s) of operation "
             f"{quoted(got)}")


def dim_text(d) -> str:
    return "?" if d is None else str(d)


def attr(op, *names):
    for n in names:
        a = op.attr(n)
        if a is not None:
            return a
    return None


def ints_attr(op, *names) -> Optional[list[int]]:
    return A.int_list(attr(op, *names))


def constant_ints(value) -> Optional[list[int]]:
    """The integers of a value defined by a constant op, or None."""
    owner = getattr(value, "op", None)
    if owner is None or not owner.name.endswith(".constant"):
        return None
    return A.int_list(owner.attr("value"))


def fmt_list(xs) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def is_sorted(xs) -> bool:
    return all(a <= b for a, b in zip(xs, xs[1:]))


def first_duplicate(xs):
    seen = set()
    for x in xs:
        if x in seen:
            return x
        seen.add(x)
    return None


KDYN = -9223372036854775808


def raw_dims(shape) -> str:
    """A shape as MLIR streams an ArrayRef<int64_t>: `1, 2, 3` (dynamic as its raw value)."""
    return ", ".join(str(KDYN if d is None else d) for d in shape)


def q_dims(shape) -> str:
    """`[1, ?, 3]` as MLIR's dimSizesToString writes it."""
    return "[" + ", ".join(dim_text(d) for d in shape) + "]"


def terminator(region):
    if region is None or not region.blocks or not region.blocks[0].ops:
        return None
    return region.blocks[0].ops[-1]


def bool_attr(op, name) -> bool:
    a = op.attr(name)
    if a is None:
        return False
    if isinstance(a, IntegerAttr):
        return bool(a.value)
    return str(a) in ("true", "unit")


def int_attr(op, name, default=None):
    v = A.int_value(op.attr(name))
    return default if v is None else v


def bitwidth(e) -> Optional[int]:
    if isinstance(e, T.ComplexType):
        w = bitwidth(e.element)
        return None if w is None else 2 * w
    q = uniform(e)
    if q:
        return q.width
    if isinstance(e, T.IntegerType):
        return e.width
    if isinstance(e, T.FloatType):
        return e.width
    if isinstance(e, T.IndexType):
        return 64
    return None


def same_el(a, b, ignore_fp=True) -> bool:
    ea, eb = elt(a), elt(b)
    if ignore_fp and isinstance(ea, T.FloatType) and isinstance(eb, T.FloatType):
        return True
    return ea == eb


def compatible_shape_and_el(a, b, ignore_fp=False) -> bool:
    return compatible_shapes(a, b) and (rank_of(a) is None or rank_of(b) is None
                                        or rank_of(a) == rank_of(b)) and same_el(a, b, ignore_fp)


def _kind(e) -> str:
    if uniform(e):
        return "quant"
    if isinstance(e, T.IntegerType):
        return "int"
    if isinstance(e, T.FloatType):
        return "float"
    if isinstance(e, T.ComplexType):
        return "complex"
    return "other"


def promotable(a, b, ignore_fp=False) -> bool:
    ea, eb = elt(a), elt(b)
    ka, kb = _kind(ea), _kind(eb)
    if ka != kb or ka == "other":
        return ea == eb
    if ka == "quant" and expressed(ea) != expressed(eb):
        return False
    if ignore_fp and ka == "float":
        return True
    wa, wb = bitwidth(ea), bitwidth(eb)
    return wa is None or wb is None or wa <= wb


def verify_reducer(block, input_types, init_types, allowed_dims) -> None:
    n = len(input_types)
    args = block.arguments
    if len(args) != 2 * n:
        fail(f"Reduction-region must take {2 * n} parameters, but takes {len(args)} parameter(s)")
    term = block.ops[-1] if block.ops else None
    if term is None:
        return
    rets = [v.type for v in term.operands]
    if not rets:
        fail("The reduction-region expected to return some value(s)")
    if len(rets) != n:
        fail(f"Reduction-region here must produce {n} tensors, but produces {len(rets)} instead")
    for r in rets:
        if not is_tensor(r):
            fail(f"Reduction-region here must produce tensor-typed result(s), but produces '{r}' instead")
    for i in range(n):
        acc = rets[i]
        if not compatible_shape_and_el(acc, args[i].type):
            fail(f"The type of reduction-region's parameter at index {i} is different than the corresponding "
                 f"result type: '{args[i].type}' vs '{acc}'")
        if not compatible_shape_and_el(acc, args[n + i].type, True):
            fail(f"The type of reduction-region's parameter at index {n + i} is different than the "
                 f"corresponding result type: '{args[n + i].type}' vs '{acc}'")
        if not (compatible_shapes(init_types[i], acc) and rank_of(init_types[i]) in (None, rank_of(acc))):
            fail(f"The shape of reduction-region's result type at index {i} differs from the op's corresponding "
                 f"init-value type: '{acc}' vs '{init_types[i]}'")
        if not promotable(init_types[i], acc, True):
            fail(f"The element-type of reduction-region's result type at index {i} is expected to be promotable "
                 f"from the op's corresponding init-value element-type: '{acc}' vs '{init_types[i]}'")
        if not promotable(input_types[i], args[n + i].type, True):
            fail(f"The element-type of reduction-region's argument at index {n + i} is expected to be promotable "
                 f"from '{elt(input_types[i])}', but got '{elt(args[n + i].type)}'")
        shape = shape_of(args[n + i].type)
        if shape is None or allowed_dims is None:
            continue
        if len(shape) > len(allowed_dims):
            fail(f"The rank of reduction-region's argument at index {n + i} is expected to be <= "
                 f"{len(allowed_dims)}, got {len(shape)}")
        k = 0
        for d in allowed_dims:
            if k < len(shape) and compatible_dims(d, shape[k]):
                k += 1
        if k != len(shape):
            fail(f"The shape of reduction-region's argument at index {n + i} is not compatible with that of "
                 f"reduce-op's input-parameter at index {i}")


def nonneg_attr(op, name, width=64) -> None:
    v = int_attr(op, name)
    if v is not None and v < 0:
        fail(f"attribute '{name}' failed to satisfy constraint: {width}-bit signless integer attribute whose "
             f"value is non-negative")


def rank1_attrs(op, *names) -> None:
    """mhlo's dimension lists are `dense<...>` elements: each must be 1-D (stablehlo's are arrays)."""
    for name in names:
        ss = A.dense_shape(op.attr(name))
        if ss is not None and len(ss) != 1:
            fail(f"{name} has rank {len(ss)} instead of required rank 1.")


def positive_attr(op, name, width=64) -> None:
    v = int_attr(op, name)
    if v is not None and v <= 0:
        fail(f"attribute '{name}' failed to satisfy constraint: {width}-bit signless integer attribute whose "
             f"value is positive")


def same_shapes(types) -> bool:
    ranked = [shape_of(t) for t in types if shape_of(t) is not None]
    return all(len(s) == len(ranked[0]) and all(compatible_dims(a, b) for a, b in zip(s, ranked[0]))
               for s in ranked)


def with_elt(t, e):
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, e, t.encoding)
    if isinstance(t, T.UnrankedTensorType):
        return T.UnrankedTensorType(e)
    return t


def shape_operand_check(op, value, result_type) -> None:
    vals = constant_ints(value)
    rs = shape_of(result_type)
    if vals is None or rs is None:
        return
    if len(vals) != len(rs) or any(d is not None and v != d for v, d in zip(vals, rs)):
        fail(f"output shape [{', '.join(map(str, vals))}] is incompatible with return type of operation "
             f"'{result_type}'")


def check_in_range(name: str, dims, limit: int, what: str) -> None:
    for d in dims:
        if d < 0 or d >= limit:
            fail(f"Expects each element of {name} to be in range [0, {what}) i.e. [0, {limit}). got: {d}.")


def verify_window(window, strides, padding, lhs_dil, rhs_dil, reversal=None):
    def size(n, name):
        if n and len(n) != len(window):
            fail(f"expects {name} to have same dimension-size as size of window dimensions ({len(window)}), but "
                 f"got: {len(n)}.")
    size(strides, "window-strides")
    size(lhs_dil, "base-dilation factors")
    size(rhs_dil, "window-dilation factors")
    size(padding, "padding-entries")
    size(reversal, "window-reversal")
    out = []
    for i, w in enumerate(window):
        if w is not None and w <= 0:
            fail(f"expects window to have positive value for {i}-th window dimension, but got {w}.")
        st = strides[i] if strides else 1
        if st <= 0:
            fail(f"expects window to have positive stride for {i}-th window dimension, but got {st}.")
        bd = lhs_dil[i] if lhs_dil else 1
        if bd <= 0:
            fail(f"expects window to have positive base dilation factor for {i}-th window dimension, but got {bd}.")
        wd = rhs_dil[i] if rhs_dil else 1
        if wd <= 0:
            fail(f"expects window to have positive window dilation factor for {i}-th window dimension, but got "
                 f"{wd}.")
        lo, hi = padding[i] if padding else (0, 0)
        out.append((w, st, bd, wd, lo, hi))
    return out


def window_output(base, window):
    res = []
    for b, (w, st, bd, wd, lo, hi) in zip(base, window):
        if b is None or w is None:
            res.append(None)
            continue
        db = 0 if b == 0 else (b - 1) * bd + 1
        pb = lo + db + hi
        dw = 0 if w == 0 else (w - 1) * wd + 1
        res.append(0 if pb <= 0 or dw > pb else (pb - dw) // st + 1)
    return res


def padding_pairs(op, name="padding"):
    a = op.attr(name)
    if a is None:
        return []
    vals, shape = A.int_list(a), A.dense_shape(a)
    if vals is None:
        return []
    if shape is not None and (len(shape) != 2 or shape[1] != 2):
        fail(f"expects the shape of padding-attribute to be {{N, 2}}, but got {{{raw_dims(shape)}}}.")
    return [(vals[i], vals[i + 1]) for i in range(0, len(vals) - 1, 2)]


def verify_q_same_params(a, b, per_axis=True) -> None:
    """StableHLO's verifyQPerTensor/PerAxisScaleAndZeroPointConstraints: per tensor, the same
    element type; per axis, the same scales and zero points as far as both lists go (MLIR
    compares them pairwise, so a longer list with the same start passes)."""
    qa, qb = qtype(a), qtype(b)
    if qa is None or qb is None:
        return
    if not qa.per_axis and not qb.per_axis and elt(a) != elt(b):
        fail(f"expect same quantization scale and zero_point but got '{a}' vs '{b}'")
    if per_axis and qa.per_axis and qb.per_axis and (
            any(x != y for x, y in zip(qa.scales, qb.scales))
            or any(x != y for x, y in zip(qa.zero_points, qb.zero_points))):
        fail(f"expect same quantization scales and zero_points but got '{a}' vs '{b}'")


def quant_conv_common(lhs_e, rhs_e, res_e) -> None:
    ql, qr, qo = uniform(lhs_e), uniform(rhs_e), uniform(res_e)
    if qr is None or (ql is None) != (qo is None):
        fail("rhs should be quantized for quantized operations and is_quantized(lhs)=is_quantized(result) "
             "should hold")
    if ql is not None and (ql.signedness, ql.width) != (qr.signedness, qr.width):
        fail("mismatched lhs and rhs quantization storage types")
    if ql is not None and not (ql.expressed == qr.expressed == qo.expressed):
        fail("mismatched lhs, rhs and result quantization expressed types")
    if ql is None and (str(lhs_e) != qr.expressed or str(res_e) != qr.expressed):
        fail("mismatched rhs quantization expressed type and lhs and result element type")
    if qo is not None and qo.per_axis and not qr.per_axis:
        fail("mismatched rhs and result quantization granularity")


def first_operand_shape(op) -> tuple:
    """(type, shape) of operand #0: (None, None) without operands, the shape None when unranked."""
    if not op.operands:
        return None, None
    t = op.operand_types[0]
    return t, shape_of(t)


def static_or_single_bounded(t) -> bool:
    s = shape_of(t)
    if s is None:
        return False
    if None not in s:
        return True
    b = bounds_of(t)
    return b is not None and s.count(None) == 1 and b[s.index(None)] is not None


def lookup_func(op, name):
    cur = op.parent_op
    while cur is not None:
        for region in cur.regions:
            for block in region.blocks:
                for o in block.ops:
                    if o.name == "func.func" and o.sym_name == name:
                        return o
        cur = cur.parent_op
    return None


def func_type(f):
    a = f.attr("function_type")
    if isinstance(a, TypeAttr) and isinstance(a.type, T.FunctionType):
        return a.type
    return None
