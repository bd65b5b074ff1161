"""Small builders the conversions share: constants and shape values of the target dialects."""
from __future__ import annotations

import numpy as np

from ...ir import types as T
from ...ir.arrays import array_to_attr, dtype_of
from ...ir.attributes import ArrayAttr, DenseArrayAttr, FloatAttr, IntegerAttr, OpaqueAttr
from ...ir.core import Block, Operation, Region, Value


def tensor_of(shape, element: T.Type) -> T.RankedTensorType:
    return T.RankedTensorType(tuple(shape), element)


def tosa_const(rw, before: Operation, value, type: T.RankedTensorType) -> Value:
    """`tosa.const` holding `value` (an array or scalar, broadcast to `type`)."""
    array = np.broadcast_to(np.asarray(value, dtype=dtype_of(type)), type.shape)
    return rw.create(before, "tosa.const", (), [type], {"values": array_to_attr(array, type)}).result


def tosa_shape(rw, before: Operation, dims) -> Value:
    """`tosa.const_shape` of `dims`: the shape operand of reshape, tile, slice, pad."""
    dims = [int(d) for d in dims]
    attr = array_to_attr(np.array(dims, np.int64), tensor_of([len(dims)], T.index))
    return rw.create(before, "tosa.const_shape", (), [T.DialectType(f"tosa.shape<{len(dims)}>")],
                     {"values": attr}).result


def i32_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i32, tuple(int(v) for v in values))


def tosa_enum(kind: str, case: str) -> OpaqueAttr:
    return OpaqueAttr(f"#tosa.{kind}<{case}>")


# ---- linalg on tensors -----------------------------------------------------------------------------
FASTMATH_NONE = OpaqueAttr("#arith.fastmath<none>")


def insert(rw, before: Operation, op: Operation) -> Operation:
    """Insert a prebuilt op before `before`, at its source position."""
    op.span, op.name_span, op.location = before.span, before.name_span, before.location
    return rw.insert_before(before, op)


def empty(rw, before, t: T.RankedTensorType):
    return rw.create(before, "tensor.empty", (), [t]).result


def broadcast_map(src: T.RankedTensorType, out: T.RankedTensorType) -> OpaqueAttr:
    """The indexing map reading `src` at each point of `out`: a size-1 dim against a larger
    one reads index 0 (TOSA's broadcasting; the identity when the shapes match; nothing
    for a rank-0 operand)."""
    dims = ", ".join(f"d{i}" for i in range(out.rank))
    exprs = ["0" if s == 1 and o != 1 else f"d{i}" for i, (s, o) in enumerate(zip(src.shape, out.shape))]
    return OpaqueAttr(f"affine_map<({dims}) -> ({', '.join(exprs)})>")


class Body:
    """Appends scalar ops to the body block of a `linalg.generic`."""

    def __init__(self, block: Block):
        self.block = block

    def op(self, name: str, operands, result_type: T.Type, attributes=None):
        op = Operation(name, list(operands), [result_type], attributes or {})
        self.block.append(op)
        return op.results[0]

    def const(self, value, t: T.Type):
        attr = FloatAttr(float(value), t) if T.is_float(t) else IntegerAttr(int(value), t)
        return self.op("arith.constant", [], t, {"value": attr})


def elementwise_generic(rw, op: Operation, inputs, out_type: T.RankedTensorType, body) -> Operation:
    """`linalg.generic` computing `body(Body, scalars)` at every point of `out_type`."""
    dims = ", ".join(f"d{i}" for i in range(out_type.rank))
    maps = [broadcast_map(v.type, out_type) for v in inputs]
    maps.append(OpaqueAttr(f"affine_map<({dims}) -> ({dims})>"))
    block = Block([T.element_type(v.type) for v in inputs] + [out_type.element])
    for i, arg in enumerate(block.arguments):
        arg.name = "in" if i < len(inputs) else "out"
    result = body(Body(block), block.arguments[:len(inputs)])
    block.append(Operation("linalg.yield", [result], []))
    iterators = ArrayAttr(tuple(OpaqueAttr("#linalg.iterator_type<parallel>") for _ in range(out_type.rank)))
    attrs = {"indexing_maps": ArrayAttr(tuple(maps)), "iterator_types": iterators,
             "operandSegmentSizes": DenseArrayAttr(T.i32, (len(inputs), 1))}
    init = empty(rw, op, out_type)
    generic = Operation("linalg.generic", [*inputs, init], [out_type], attrs, [Region([block])])
    return insert(rw, op, generic)


# ---- names and shapes the conversions share --------------------------------------------------------
def hlo_names(*names: str) -> tuple[str, ...]:
    """`add` -> ("stablehlo.add", "mhlo.add"): patterns convert both spellings."""
    return tuple(f"{prefix}.{n}" for n in names for prefix in ("stablehlo", "mhlo"))


def short_name(op: Operation) -> str:
    """The op name without its dialect: `stablehlo.add` -> `add`."""
    return op.name.split(".", 1)[1]


def all_static(*types) -> bool:
    """Ranked tensors with static shapes (what the lowerings handle)."""
    return all(isinstance(t, T.RankedTensorType) and t.has_static_shape for t in types)


def dims_text(rank: int) -> str:
    """`d0, d1, ...`: the dimension list of an affine map."""
    return ", ".join(f"d{i}" for i in range(rank))


def scalar_const(rw, before: Operation, value, t: T.Type) -> Value:
    """An `arith.constant` scalar of type `t`."""
    attr = FloatAttr(float(value), t) if T.is_float(t) else IntegerAttr(int(value), t)
    return rw.create(before, "arith.constant", (), [t], {"value": attr}).result


def common_cast(b, x, dst: T.Type):
    """The conversions every dialect's cast agrees on, in a scalar body: none, float to float
    (extend or truncate), i1 to float (0 or 1); None for the others."""
    src = x.type
    if src == dst:
        return x
    if T.is_float(src) and T.is_float(dst):
        return b.op("arith.extf" if src.width < dst.width else "arith.truncf", [x], dst)
    if src == T.i1 and T.is_float(dst):
        return b.op("arith.uitofp", [x], dst)
    return None
