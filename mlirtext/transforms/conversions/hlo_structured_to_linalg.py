"""hlo -> linalg/tensor/scf for the ops TOSA cannot express (exactly): pad with interior or
negative padding, strided slices, broadcast, dynamic_slice / dynamic_update_slice, gather,
torch_index_select, scatter, select_and_scatter, reduce with any body or several inputs,
reduce_window, convolution (groups, dilations, padding), dot_general on types tosa.matmul
does not take, sort, chlo.scan, compare with TOTALORDER / UNSIGNED, and while / if / case.

Each data op becomes one `linalg.generic` (or a short chain) that says, per element of the
result, where its value comes from: an affine indexing map where the access is affine, else
`tensor.extract` at computed (and, as the spec says, clamped) indices in the body, as IREE's
gather lowering does. Region bodies (reduce, scatter, sort comparators, ...) are copied
into the generic's body op by op, on scalars. Data-dependent writes (scatter,
select_and_scatter) and orders (sort, scan) are written per result element with `scf.for`
loops inside the body, bounded by COST_LIMIT; past it a scatter becomes `scf.for` loops
carrying the result tensor (`tensor.insert`), which bufferization turns into in-place stores.
Control flow becomes `scf.while` / `scf.if` on the same tensors (case: a chain of `scf.if`).
These patterns run in the convert-hlo-to-tosa pass after the TOSA ones, so an op with an
exact TOSA form always takes it.
"""
from __future__ import annotations

from typing import Optional

from ...dialects.hlo_attrs import enum_word, int_list, struct_fields, dims_field, int_field, conv_dims
from ...ir import types as T
from ...ir.attributes import ArrayAttr, DenseArrayAttr, FloatAttr, IntegerAttr, OpaqueAttr
from ...ir.core import Block, Operation, Region
from ..rewriter import RewritePattern
from .build import FASTMATH_NONE, all_static, dims_text, empty, hlo_names, insert, short_name

_FM = {"fastmath": FASTMATH_NONE}


def _plain(t: T.Type) -> bool:
    """An element type the arith dialect works on: float or signless integer."""
    e = T.element_type(t)
    return T.is_float(e) or isinstance(e, T.IntegerType) and e.is_signless


def _is_int(t: T.Type) -> bool:
    return isinstance(t, T.IntegerType)


def _map(n: int, exprs) -> OpaqueAttr:
    return OpaqueAttr(f"affine_map<({dims_text(n)}) -> ({', '.join(exprs)})>")


def _identity(n: int) -> OpaqueAttr:
    return _map(n, [f"d{i}" for i in range(n)])


def _iterators(kinds) -> ArrayAttr:
    return ArrayAttr(tuple(OpaqueAttr(f"#linalg.iterator_type<{k}>") for k in kinds))


def _affine(dim: str, scale: int, offset: int) -> str:
    text = dim if scale == 1 else f"{dim} * {scale}"
    if offset > 0:
        text += f" + {offset}"
    elif offset < 0:
        text += f" - {-offset}"
    return text


# ---- scalar bodies ---------------------------------------------------------------------------------
class Scalar:
    """Appends scalar ops (arith/math, index arithmetic, linalg.index) to a block."""

    def __init__(self, block: Block):
        self.block = block
        self._indices: dict[int, object] = {}

    def op(self, name: str, operands, result_type: T.Type, attributes=None, regions=()):
        op = Operation(name, list(operands), [result_type] if result_type is not None else [],
                       attributes or {}, list(regions))
        self.block.append(op)
        return op.results[0] if op.results else op

    def const(self, value, t: T.Type):
        attr = FloatAttr(float(value), t) if T.is_float(t) else IntegerAttr(int(value), t)
        return self.op("arith.constant", [], t, {"value": attr})

    def index(self, d: int):
        if d not in self._indices:
            self._indices[d] = self.op("linalg.index", [], T.index, {"dim": IntegerAttr(d, T.i64)})
        return self._indices[d]

    def c(self, n: int):
        return self.const(n, T.index)

    def add(self, a, b):
        return self.op("arith.addi", [a, b], a.type)

    def sub(self, a, b):
        return self.op("arith.subi", [a, b], a.type)

    def mul(self, a, b):
        return self.op("arith.muli", [a, b], a.type)

    def cmpi(self, pred: int, a, b):
        return self.op("arith.cmpi", [a, b], T.i1, {"predicate": IntegerAttr(pred, T.i64)})

    def and_(self, a, b):
        if a is None:
            return b
        return self.op("arith.andi", [a, b], T.i1)

    def select(self, cond, a, b):
        return self.op("arith.select", [cond, a, b], a.type)

    def clamp(self, x, low: int, high: int):
        """x clamped into [low, high] (index values)."""
        x = self.op("arith.maxsi", [x, self.c(low)], T.index)
        return self.op("arith.minsi", [x, self.c(high)], T.index)

    def to_index(self, x):
        if isinstance(x.type, T.IndexType):
            return x
        return self.op("arith.index_cast", [x], T.index)

    def extract(self, tensor, indices):
        return self.op("tensor.extract", [tensor, *indices], tensor.type.element)


def _scalar_int(t) -> bool:
    return isinstance(t, T.IntegerType) and t.is_signless


_FLOAT_UNARY = {"exponential": "math.exp", "log": "math.log", "sqrt": "math.sqrt", "rsqrt": "math.rsqrt",
                "tanh": "math.tanh", "floor": "math.floor", "ceil": "math.ceil", "abs": "math.absf",
                "negate": "arith.negf", "sine": "math.sin", "cosine": "math.cos",
                "exponential_minus_one": "math.expm1", "log_plus_one": "math.log1p"}
_FLOAT_BINARY = {"add": "arith.addf", "subtract": "arith.subf", "multiply": "arith.mulf",
                 "divide": "arith.divf", "maximum": "arith.maximumf", "minimum": "arith.minimumf",
                 "remainder": "arith.remf", "power": "math.powf", "atan2": "math.atan2"}
_INT_BINARY = {"add": "arith.addi", "subtract": "arith.subi", "multiply": "arith.muli",
               "maximum": "arith.maxsi", "minimum": "arith.minsi", "and": "arith.andi", "or": "arith.ori",
               "xor": "arith.xori", "shift_left": "arith.shli"}
_BOOL_BINARY = {"add": "arith.ori", "multiply": "arith.andi", "maximum": "arith.ori", "minimum": "arith.andi",
                "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}
#: comparison direction -> (arith.cmpf predicate, signed arith.cmpi predicate, unsigned arith.cmpi predicate)
_PREDICATES = {"EQ": (1, 0, 0), "NE": (13, 1, 1), "LT": (4, 2, 6), "LE": (5, 3, 7), "GT": (2, 4, 8),
               "GE": (3, 5, 9)}


def compare_scalar(b: Scalar, direction: str, kind: Optional[str], x, y):
    """`x direction y` on scalars as StableHLO compares (TOTALORDER included); None if unsupported."""
    t = x.type
    if direction not in _PREDICATES:
        return None
    fpred, spred, upred = _PREDICATES[direction]
    if T.is_float(t):
        if kind == "TOTALORDER":
            x, y = _total_order_key(b, x), _total_order_key(b, y)
            return b.cmpi(spred, x, y)
        return b.op("arith.cmpf", [x, y], T.i1, {"predicate": IntegerAttr(fpred, T.i64), **_FM})
    if not _scalar_int(t):
        return None
    unsigned = kind == "UNSIGNED" or t == T.i1
    return b.cmpi(upred if unsigned else spred, x, y)


def _total_order_key(b: Scalar, x):
    """An integer that orders as IEEE totalOrder orders x: the bits, with the magnitude bits
    flipped for negative numbers (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN)."""
    width = x.type.width
    it = T.IntegerType(width)
    bits = b.op("arith.bitcast", [x], it)
    sign = b.op("arith.shrsi", [bits, b.const(width - 1, it)], it)  # all ones for negatives
    mask = b.op("arith.shrui", [sign, b.const(1, it)], it)          # magnitude bits of them
    return b.op("arith.xori", [bits, mask], it)


def _cast_scalar(b: Scalar, x, dst: T.Type):
    src = x.type
    if src == dst:
        return x
    if T.is_float(src) and T.is_float(dst):
        return b.op("arith.extf" if src.width < dst.width else "arith.truncf", [x], dst)
    if src == T.i1 and T.is_float(dst):
        return b.op("arith.uitofp", [x], dst)
    if _scalar_int(src) and T.is_float(dst):
        return b.op("arith.sitofp", [x], dst)
    if T.is_float(src) and dst == T.i1:
        return b.op("arith.cmpf", [x, b.const(0.0, src)], T.i1, {"predicate": IntegerAttr(13, T.i64), **_FM})
    if T.is_float(src) and _scalar_int(dst):
        return b.op("arith.fptosi", [x], dst)
    if _scalar_int(src) and dst == T.i1:
        return b.cmpi(1, x, b.const(0, src))
    if src == T.i1 and _scalar_int(dst):
        return b.op("arith.extui", [x], dst)
    if _scalar_int(src) and _scalar_int(dst):
        return b.op("arith.extsi" if src.width < dst.width else "arith.trunci", [x], dst)
    return None


def scalar_op(b: Scalar, op: Operation, args):
    """The scalar form of HLO op `op` (on 0-d tensors) applied to `args`; None if unknown."""
    kind = short_name(op)
    rt = T.element_type(op.results[0].type) if op.results else None
    if rt is not None and not _plain(rt):
        return None
    if kind == "constant":
        from ...dialects.common import splat_value
        v = splat_value(op.attributes.get("value"))
        return None if v is None else b.const(v, rt)
    if kind in ("reshape", "broadcast_in_dim", "convert"):
        src = op.operands[0].type
        if not (isinstance(src, T.RankedTensorType) and src.rank == 0 and _plain(src)):
            return None
        return _cast_scalar(b, args[0], rt)
    if kind == "compare":
        return compare_scalar(b, enum_word(op.attributes.get("comparison_direction")),
                              enum_word(op.attributes.get("compare_type")), *args)
    if kind == "select":
        return b.select(*args)
    if kind == "not":
        x = args[0]
        return b.op("arith.xori", [x, b.const(1 if x.type == T.i1 else -1, x.type)], x.type)
    if kind == "clamp":
        lo, x, hi = args
        if T.is_float(rt):
            return b.op("arith.minimumf", [b.op("arith.maximumf", [x, lo], rt, _FM), hi], rt, _FM)
        return b.op("arith.minsi", [b.op("arith.maxsi", [x, lo], rt), hi], rt)
    if T.is_float(rt):
        if kind in _FLOAT_BINARY and len(args) == 2:
            return b.op(_FLOAT_BINARY[kind], args, rt, _FM)
        if kind in _FLOAT_UNARY and len(args) == 1:
            return b.op(_FLOAT_UNARY[kind], args, rt, _FM)
        return None
    if rt == T.i1:
        return b.op(_BOOL_BINARY[kind], args, rt) if kind in _BOOL_BINARY and len(args) == 2 else None
    if kind in _INT_BINARY and len(args) == 2:
        return b.op(_INT_BINARY[kind], args, rt)
    if kind == "negate":
        return b.sub(b.const(0, rt), args[0])
    return None


_ELEMENTWISE = frozenset(set(_FLOAT_UNARY) | set(_FLOAT_BINARY) | set(_INT_BINARY) |
                         {"compare", "select", "not", "constant", "convert"})


def scalarize(b: Scalar, block: Block, args, elementwise: bool = False) -> Optional[list]:
    """Copy HLO region `block` (ops on 0-d tensors) as scalar ops on `args`; its returned values,
    or None when some op has no scalar form here. With `elementwise`, the region may work on
    tensors of any one shape as long as every op is elementwise (then it is the same per element)."""
    if len(block.arguments) != len(args):
        return None
    values = dict(zip(block.arguments, args))
    for op in block.ops:
        if op.name.endswith(".return"):
            try:
                return [values[v] for v in op.operands]
            except KeyError:
                return None
        if op.regions or any(v not in values for v in op.operands) or len(op.results) != 1 or \
                not isinstance(op.results[0].type, T.RankedTensorType) or op.dialect not in ("stablehlo", "mhlo"):
            return None
        if op.results[0].type.rank != 0 and not (elementwise and short_name(op) in _ELEMENTWISE and all(
                v.type.shape == op.results[0].type.shape for v in op.operands)):
            return None
        result = scalar_op(b, op, [values[v] for v in op.operands])
        if result is None:
            return None
        values[op.results[0]] = result
    return None


# ---- building generics ------------------------------------------------------------------------------
def generic_body(ins, outs, body):
    """A detached body block for a generic over `ins` / `outs` (values or types), filled by
    `body(Scalar, in_args, out_args)`, which returns the values to yield (None: give up)."""
    types = [T.element_type(v if isinstance(v, T.Type) else v.type) for v in (*ins, *outs)]
    block = Block(types)
    for i, arg in enumerate(block.arguments):
        arg.name = "in" if i < len(ins) else "out"
    b = Scalar(block)
    results = body(b, block.arguments[:len(ins)], block.arguments[len(ins):])
    if results is None:
        return None
    block.append(Operation("linalg.yield", list(results), []))
    return block


def make_generic(rw, op, ins, in_maps, outs, out_maps, kinds, block) -> Operation:
    attrs = {"indexing_maps": ArrayAttr(tuple(in_maps) + tuple(out_maps)), "iterator_types": _iterators(kinds),
             "operandSegmentSizes": DenseArrayAttr(T.i32, (len(ins), len(outs)))}
    generic = Operation("linalg.generic", [*ins, *outs], [v.type for v in outs], attrs, [Region([block])])
    return insert(rw, op, generic)


def broadcast_scalar(rw, op, scalar_tensor, t: T.RankedTensorType):
    """A tensor of type `t` filled with the one element of 0-d tensor `scalar_tensor`."""
    block = generic_body([scalar_tensor], [t], lambda b, i, o: [i[0]])
    return make_generic(rw, op, [scalar_tensor], [_map(t.rank, [])], [empty(rw, op, t)], [_identity(t.rank)],
                        ["parallel"] * t.rank, block).result


#: The most scalar body runs a lowering with a nested loop (scatter, sort, select_and_scatter, scan)
#: may cost; beyond it the op is left for a lowering that writes in place (not here yet), since
#: O(n^2) loops would make the lowered program too slow to run.
COST_LIMIT = 1 << 18


#: The most updates the in-place scatter loops take.
IN_PLACE_LIMIT = 1 << 13


def _too_costly(*counts) -> bool:
    total = 1
    for c in counts:
        total *= int(c)
    return total > COST_LIMIT


def _size(t) -> int:
    n = 1
    for d in t.shape:
        n *= d
    return n


class _Pattern(RewritePattern):
    """Static shapes, and element types arith works on."""

    def match_and_rewrite(self, op, rw) -> bool:
        types = [*(v.type for v in op.operands), *(r.type for r in op.results)]
        if not all_static(*types) or not all(map(_plain, types)):
            return False
        if any(0 in t.shape for t in types):
            if op.results and all(0 in r.type.shape for r in op.results):
                rw.replace_op(op, [empty(rw, op, r.type) for r in op.results])  # no values to compute
                return True
            return False  # empty operands: nothing to index
        return self.rewrite(op, rw)

    def rewrite(self, op, rw) -> bool:
        raise NotImplementedError


# ---- data movement ----------------------------------------------------------------------------------
class Pad(_Pattern):
    """out[i] = x[(i - lo) / (interior + 1)] where that is a whole in-range index, else the pad value."""
    ops = hlo_names("pad")

    def rewrite(self, op, rw) -> bool:
        x, value = op.operands
        t = op.results[0].type
        lo = int_list(op.attributes.get("edge_padding_low"))
        interior = int_list(op.attributes.get("interior_padding")) or [0] * t.rank
        if lo is None:
            return False
        shape = x.type.shape

        def body(b: Scalar, ins, outs):
            cond, where = None, []
            for d in range(t.rank):
                j = b.index(d)
                if lo[d]:
                    j = b.sub(j, b.c(lo[d]))
                step = interior[d] + 1
                if step != 1:
                    cond = b.and_(cond, b.cmpi(0, b.op("arith.remsi", [j, b.c(step)], T.index), b.c(0)))
                    j = b.op("arith.divsi", [j, b.c(step)], T.index)
                if lo[d] > 0 or step != 1:
                    cond = b.and_(cond, b.cmpi(5, j, b.c(0)))  # sge
                if lo[d] + (shape[d] - 1) * step + 1 < t.shape[d] or lo[d] < 0 or step != 1:
                    cond = b.and_(cond, b.cmpi(2, j, b.c(shape[d])))  # slt
                where.append(j)
            if cond is None:
                return [b.extract(x, where)]
            where = [b.clamp(j, 0, n - 1) for j, n in zip(where, shape)]
            return [b.select(cond, b.extract(x, where), ins[0])]

        block = generic_body([value], [t], body)
        out = make_generic(rw, op, [value], [_map(t.rank, [])], [empty(rw, op, t)], [_identity(t.rank)],
                           ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class StridedSlice(_Pattern):
    """A slice TOSA has no form for (strides): an affine read of the operand."""
    ops = hlo_names("slice")

    def rewrite(self, op, rw) -> bool:
        x = op.operands[0]
        t = op.results[0].type
        start = int_list(op.attributes.get("start_indices"))
        strides = int_list(op.attributes.get("strides")) or [1] * t.rank
        if start is None:
            return False
        in_map = _map(t.rank, [_affine(f"d{d}", strides[d], start[d]) for d in range(t.rank)])
        block = generic_body([x], [t], lambda b, i, o: [i[0]])
        out = make_generic(rw, op, [x], [in_map], [empty(rw, op, t)], [_identity(t.rank)],
                           ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


def _start_indices(rw, op, starts, limits):
    """Scalar index values of 0-d start tensors, clamped into [0, limit] (the spec's clamp)."""
    out = []
    for s, limit in zip(starts, limits):
        v = rw.create(op, "tensor.extract", [s], [s.type.element]).result
        v = rw.create(op, "arith.index_cast", [v], [T.index]).result
        zero = rw.create(op, "arith.constant", [], [T.index], {"value": IntegerAttr(0, T.index)}).result
        top = rw.create(op, "arith.constant", [], [T.index], {"value": IntegerAttr(limit, T.index)}).result
        v = rw.create(op, "arith.maxsi", [v, zero], [T.index]).result
        out.append(rw.create(op, "arith.minsi", [v, top], [T.index]).result)
    return out


class DynamicSlice(_Pattern):
    ops = hlo_names("dynamic_slice")

    def rewrite(self, op, rw) -> bool:
        x, *starts = op.operands
        t = op.results[0].type
        if len(starts) != t.rank or not all(_scalar_int(s.type.element) for s in starts):
            return False
        offsets = _start_indices(rw, op, starts, [n - m for n, m in zip(x.type.shape, t.shape)])
        block = generic_body([], [t], lambda b, i, o: [b.extract(x, [b.add(b.index(d), offsets[d])
                                                                     for d in range(t.rank)])])
        out = make_generic(rw, op, [], [], [empty(rw, op, t)], [_identity(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class DynamicUpdateSlice(_Pattern):
    ops = hlo_names("dynamic_update_slice")

    def rewrite(self, op, rw) -> bool:
        x, update, *starts = op.operands
        t = op.results[0].type
        if len(starts) != t.rank or not all(_scalar_int(s.type.element) for s in starts):
            return False
        ushape = update.type.shape
        offsets = _start_indices(rw, op, starts, [n - m for n, m in zip(t.shape, ushape)])

        def body(b: Scalar, ins, outs):
            cond, where = None, []
            for d in range(t.rank):
                j = b.sub(b.index(d), offsets[d])
                cond = b.and_(cond, b.and_(b.cmpi(5, j, b.c(0)), b.cmpi(2, j, b.c(ushape[d]))))
                where.append(b.clamp(j, 0, ushape[d] - 1))
            if cond is None:
                return [b.extract(update, [])]
            return [b.select(cond, b.extract(update, where), ins[0])]

        block = generic_body([x], [t], body)
        out = make_generic(rw, op, [x], [_identity(t.rank)], [empty(rw, op, t)], [_identity(t.rank)],
                           ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class Gather(_Pattern):
    """Per result element: its batch index picks a start index vector (clamped so the slice
    fits), its offset index the place in the slice (StableHLO's gather, batching dims too)."""
    ops = hlo_names("gather")

    def rewrite(self, op, rw) -> bool:
        x, indices = op.operands
        t = op.results[0].type
        f = struct_fields(op.attributes.get("dimension_numbers"))
        sizes = int_list(op.attributes.get("slice_sizes"))
        if f is None or sizes is None or not _scalar_int(indices.type.element):
            return False
        offset_dims = dims_field(f, "offset_dims")
        collapsed = dims_field(f, "collapsed_slice_dims")
        operand_batching = dims_field(f, "operand_batching_dims")
        indices_batching = dims_field(f, "start_indices_batching_dims")
        start_map = dims_field(f, "start_index_map")
        ivd = int_field(f, "index_vector_dim", 0)
        batch_dims = [d for d in range(t.rank) if d not in offset_dims]
        window_dims = [d for d in range(x.type.rank) if d not in collapsed and d not in operand_batching]
        if len(window_dims) != len(offset_dims):
            return False

        def body(b: Scalar, ins, outs):
            batch = [b.index(d) for d in batch_dims]
            where = [b.c(0)] * x.type.rank
            for k, d in enumerate(start_map):
                at = list(batch)
                if ivd < indices.type.rank:
                    at.insert(ivd, b.c(k))
                start = b.to_index(b.extract(indices, at))
                where[d] = b.clamp(start, 0, x.type.shape[d] - sizes[d])
            for od, sd in zip(operand_batching, indices_batching):
                where[od] = batch[sd - (0 if sd < ivd else 1)]
            for wd, od in zip(window_dims, offset_dims):
                where[wd] = b.add(where[wd], b.index(od))
            return [b.extract(x, where)]

        block = generic_body([], [t], body)
        out = make_generic(rw, op, [], [], [empty(rw, op, t)], [_identity(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


# ---- reductions -------------------------------------------------------------------------------------
class Reduce(_Pattern):
    """Any reduce TOSA's reductions do not cover: a reduction generic whose body is the region's,
    on accumulators that start as the init values."""
    ops = hlo_names("reduce")

    def rewrite(self, op, rw) -> bool:
        n = len(op.operands) // 2
        inputs, inits = op.operands[:n], op.operands[n:]
        rank = inputs[0].type.rank
        dims = set(int_list(op.attributes.get("dimensions")) or [])
        kept = [d for d in range(rank) if d not in dims]
        if not op.regions or not op.regions[0].blocks:
            return False
        region = op.regions[0].blocks[0]
        block = generic_body(inputs, [r.type for r in op.results],
                             lambda b, ins, outs: scalarize(b, region, [*outs, *ins]))
        if block is None:
            return False
        accs = [broadcast_scalar(rw, op, init, r.type) for init, r in zip(inits, op.results)]
        kinds = ["reduction" if d in dims else "parallel" for d in range(rank)]
        out = make_generic(rw, op, inputs, [_identity(rank)] * n, accs,
                           [_map(rank, [f"d{d}" for d in kept])] * n, kinds, block)
        rw.replace_op(op, out.results)
        return True


def _pad_op(rw, op, x, value, lo, hi, interior):
    """A `stablehlo.pad` (the Pad pattern lowers it in turn)."""
    shape = [l + h + (n - 1) * (i + 1) + 1 for n, l, h, i in zip(x.type.shape, lo, hi, interior)]
    t = T.RankedTensorType(tuple(shape), x.type.element)
    arr = lambda v: DenseArrayAttr(T.i64, tuple(int(a) for a in v))
    return rw.create(op, "stablehlo.pad", [x, value], [t], {"edge_padding_low": arr(lo), "edge_padding_high": arr(hi),
                                                         "interior_padding": arr(interior)}).result


def _pairs(attr, rank):
    values = int_list(attr)
    if not values:
        return [0] * rank, [0] * rank
    return values[0::2], values[1::2]


class ReduceWindow(_Pattern):
    """Pad (and base-dilate) with the init values, then reduce each window: loops over the
    result and the window (its extent given by a `tensor.empty` of the window's shape, as
    linalg's pooling ops do), the body the region's."""
    ops = hlo_names("reduce_window")

    def rewrite(self, op, rw) -> bool:
        n = len(op.operands) // 2
        inputs, inits = list(op.operands[:n]), op.operands[n:]
        rank = inputs[0].type.rank
        window = int_list(op.attributes.get("window_dimensions"))
        strides = int_list(op.attributes.get("window_strides")) or [1] * rank
        base = int_list(op.attributes.get("base_dilations")) or [1] * rank
        wdil = int_list(op.attributes.get("window_dilations")) or [1] * rank
        lo, hi = _pairs(op.attributes.get("padding"), rank)
        if window is None or not op.regions or not op.regions[0].blocks:
            return False
        region = op.regions[0].blocks[0]
        wt = T.RankedTensorType(tuple(window), T.i1)
        block = generic_body([wt, *inputs], [r.type for r in op.results],
                             lambda b, ins, outs: scalarize(b, region, [*outs, *ins[1:]]))
        if block is None:
            return False
        if any(lo) or any(hi) or any(d != 1 for d in base):
            inputs = [_pad_op(rw, op, x, v, lo, hi, [d - 1 for d in base]) for x, v in zip(inputs, inits)]
        loops = 2 * rank
        in_map = _map(loops, [f"d{d} * {strides[d]} + d{rank + d} * {wdil[d]}" for d in range(rank)])
        accs = [broadcast_scalar(rw, op, init, r.type) for init, r in zip(inits, op.results)]
        kinds = ["parallel"] * rank + ["reduction"] * rank
        out = make_generic(rw, op, [empty(rw, op, wt), *inputs],
                           [_map(loops, [f"d{rank + d}" for d in range(rank)])] + [in_map] * n, accs,
                           [_map(loops, [f"d{d}" for d in range(rank)])] * n, kinds, block)
        rw.replace_op(op, out.results)
        return True


# ---- convolution ------------------------------------------------------------------------------------
class Convolution(_Pattern):
    """Pad (and lhs-dilate) the input with zeros, then one reduction generic: loops over the
    result's dims, the kernel's input features and its window; feature and batch groups pick
    the input's feature / batch through `floordiv` in its indexing map."""
    ops = hlo_names("convolution")

    def rewrite(self, op, rw) -> bool:
        x, k = op.operands
        t = op.results[0].type
        dn = conv_dims(op.attributes.get("dimension_numbers"))
        if dn is None or dn.layout_error:
            return False
        sp = len(dn.input_spatial)
        strides = int_list(op.attributes.get("window_strides")) or [1] * sp
        lhs_dil = int_list(op.attributes.get("lhs_dilation")) or [1] * sp
        rhs_dil = int_list(op.attributes.get("rhs_dilation")) or [1] * sp
        lo, hi = _pairs(op.attributes.get("padding"), sp)
        groups = _int_attr(op.attributes.get("feature_group_count"))
        batch_groups = _int_attr(op.attributes.get("batch_group_count"))
        reversal = int_list(op.attributes.get("window_reversal"))
        if reversal and any(reversal):
            return False
        et = t.element
        xe, ke = x.type.element, k.type.element
        if T.is_float(et) != T.is_float(xe) or T.is_float(et) != T.is_float(ke) or et == T.i1:
            return False

        def body(b: Scalar, ins, outs):
            a, w = _cast_scalar(b, ins[0], et), _cast_scalar(b, ins[1], et)
            if a is None or w is None:
                return None
            if T.is_float(et):
                return [b.op("arith.addf", [outs[0], b.op("arith.mulf", [a, w], et, _FM)], et, _FM)]
            return [b.op("arith.addi", [outs[0], b.op("arith.muli", [a, w], et)], et)]

        block = generic_body([x, k], [t], body)
        if block is None:
            return False
        if any(lo) or any(hi) or any(d != 1 for d in lhs_dil):
            full_lo, full_hi, full_int = [0] * x.type.rank, [0] * x.type.rank, [0] * x.type.rank
            for i, d in enumerate(dn.input_spatial):
                full_lo[d], full_hi[d], full_int[d] = lo[i], hi[i], lhs_dil[i] - 1
            zero = rw.create(op, "stablehlo.constant", [], [T.RankedTensorType((), xe)],
                             {"value": _zero_dense(xe)}).result
            x = _pad_op(rw, op, x, zero, full_lo, full_hi, full_int)
        # loops: the result's dims, then the kernel's input feature, then its spatial dims
        r = t.rank
        c_loop = r
        k_loops = [r + 1 + i for i in range(sp)]
        loops = r + 1 + sp
        out_features = t.shape[dn.output_feature]
        in_exprs = [""] * x.type.rank
        ob, of = f"d{dn.output_batch}", f"d{dn.output_feature}"
        cg = k.type.shape[dn.kernel_input_feature]
        if batch_groups > 1:
            in_exprs[dn.input_batch] = f"({of} floordiv {out_features // batch_groups}) * {t.shape[dn.output_batch]} + {ob}"
        else:
            in_exprs[dn.input_batch] = ob
        if groups > 1:
            in_exprs[dn.input_feature] = f"({of} floordiv {out_features // groups}) * {cg} + d{c_loop}"
        else:
            in_exprs[dn.input_feature] = f"d{c_loop}"
        for i, d in enumerate(dn.input_spatial):
            in_exprs[d] = f"d{dn.output_spatial[i]} * {strides[i]} + d{k_loops[i]} * {rhs_dil[i]}"
        k_exprs = [""] * k.type.rank
        k_exprs[dn.kernel_input_feature] = f"d{c_loop}"
        k_exprs[dn.kernel_output_feature] = of
        for i, d in enumerate(dn.kernel_spatial):
            k_exprs[d] = f"d{k_loops[i]}"
        zero = rw.create(op, "arith.constant", [], [et], {"value": FloatAttr(0.0, et) if T.is_float(et)
                                                           else IntegerAttr(0, et)}).result
        from ...dialects.linalg import structured_op
        init = insert(rw, op, structured_op("linalg.fill", [zero], [empty(rw, op, t)])).result
        kinds = ["parallel"] * r + ["reduction"] * (1 + sp)
        out = make_generic(rw, op, [x, k], [_map(loops, in_exprs), _map(loops, k_exprs)], [init],
                           [_map(loops, [f"d{d}" for d in range(r)])], kinds, block)
        rw.replace_op(op, out.results)
        return True


def _int_attr(attr, default: int = 1) -> int:
    if isinstance(attr, IntegerAttr):
        return attr.value
    values = int_list(attr)
    return values[0] if values else default


def _zero_dense(e: T.Type):
    from ...ir.dense import DenseElementsAttr
    return DenseElementsAttr(T.RankedTensorType((), e), [0.0 if T.is_float(e) else 0], True, None)


# ---- elementwise ops TOSA leaves ----------------------------------------------------------------
class Compare(_Pattern):
    """TOTALORDER and UNSIGNED compares (TOSA has neither)."""
    ops = hlo_names("compare")

    def rewrite(self, op, rw) -> bool:
        from .build import elementwise_generic
        a, c = op.operands
        t = op.results[0].type
        direction = enum_word(op.attributes.get("comparison_direction"))
        kind = enum_word(op.attributes.get("compare_type"))
        if a.type.rank != t.rank or c.type.rank != t.rank:
            return False
        probe = Scalar(Block([a.type.element, c.type.element]))
        if compare_scalar(probe, direction, kind, *probe.block.arguments) is None:
            return False
        generic = elementwise_generic(rw, op, [a, c], t,
                                      lambda b, args: compare_scalar(Scalar(b.block), direction, kind, *args))
        rw.replace_op(op, generic.results)
        return True


# ---- scatter ----------------------------------------------------------------------------------------
def for_nest(b: Scalar, bounds, carried, fn, ivs=()):
    """`scf.for` loops over `bounds` carrying `carried`; `fn(Scalar, ivs, carried)` gives the
    innermost body's new values (None: give up). The nest's results, or None."""
    if len(ivs) == len(bounds):
        return fn(b, list(ivs), carried)
    block = Block([T.index, *[v.type for v in carried]])
    block.arguments[0].name = "i"
    new = for_nest(Scalar(block), bounds, list(block.arguments[1:]), fn, (*ivs, block.arguments[0]))
    if new is None:
        return None
    block.append(Operation("scf.yield", list(new), []))
    lower, upper, step = b.c(0), b.c(bounds[len(ivs)]), b.c(1)
    loop = Operation("scf.for", [lower, upper, step, *carried], [v.type for v in carried], {}, [Region([block])])
    b.block.append(loop)
    return list(loop.results)


class Scatter(_Pattern):
    """Per result element: start from the operand's value and walk every update element in
    order, applying the update computation where the update's target is this element (the
    spec's sequential semantics; targets out of bounds match nothing)."""
    ops = hlo_names("scatter")

    def rewrite(self, op, rw) -> bool:
        n = (len(op.operands) - 1) // 2
        inputs, indices, updates = op.operands[:n], op.operands[n], op.operands[n + 1:]
        t = op.results[0].type
        f = struct_fields(op.attributes.get("scatter_dimension_numbers"))
        if f is None or not _scalar_int(indices.type.element) or not op.regions or not op.regions[0].blocks:
            return False
        window_dims = dims_field(f, "update_window_dims")
        inserted = dims_field(f, "inserted_window_dims")
        input_batching = dims_field(f, "input_batching_dims")
        indices_batching = dims_field(f, "scatter_indices_batching_dims")
        to_operand = dims_field(f, "scatter_dims_to_operand_dims")
        ivd = int_field(f, "index_vector_dim", 0)
        ushape = updates[0].type.shape
        scatter_dims = [d for d in range(len(ushape)) if d not in window_dims]
        operand_window = [d for d in range(t.rank) if d not in inserted and d not in input_batching]
        region = op.regions[0].blocks[0]

        def target(c: Scalar, u):
            """The operand index update element `u` goes to (dims no index names: 0)."""
            where = [None] * t.rank
            scatter_index = [u[d] for d in scatter_dims]
            for k, d in enumerate(to_operand):
                at = list(scatter_index)
                if ivd < indices.type.rank:
                    at.insert(ivd, c.c(k))
                where[d] = c.to_index(c.extract(indices, at))
            for od, sd in zip(input_batching, indices_batching):
                where[od] = scatter_index[sd - (0 if sd < ivd else 1)]
            for wd, ud in zip(operand_window, window_dims):
                where[wd] = u[ud] if where[wd] is None else c.add(where[wd], u[ud])
            return [c.c(0) if w is None else w for w in where]

        if _too_costly(_size(t), _size(updates[0].type)):
            if _size(updates[0].type) > IN_PLACE_LIMIT:
                return False  # one interpreted loop step per update: too slow to check at every level
            return self.in_place(op, rw, inputs, updates, region, target)

        def body(b: Scalar, ins, outs):
            here = [b.index(d) for d in range(t.rank)]

            def inner(c: Scalar, u, carried):
                where = [None] * t.rank
                scatter_index = [u[d] for d in scatter_dims]
                for k, d in enumerate(to_operand):
                    at = list(scatter_index)
                    if ivd < indices.type.rank:
                        at.insert(ivd, c.c(k))
                    where[d] = c.to_index(c.extract(indices, at))
                for od, sd in zip(input_batching, indices_batching):
                    where[od] = scatter_index[sd - (0 if sd < ivd else 1)]
                for wd, ud in zip(operand_window, window_dims):
                    where[wd] = u[ud] if where[wd] is None else c.add(where[wd], u[ud])
                cond = None
                for d in range(t.rank):
                    if where[d] is not None:
                        cond = c.and_(cond, c.cmpi(0, where[d], here[d]))
                    # (a dim no index names stays 0: the update only reaches index 0 there)
                    else:
                        cond = c.and_(cond, c.cmpi(0, c.c(0), here[d]))
                values = [c.extract(v, u) for v in updates]
                new = scalarize(c, region, [*carried, *values])
                if new is None:
                    return None
                return [c.select(cond, a, old) for a, old in zip(new, carried)]

            return for_nest(b, ushape, list(ins), inner)

        block = generic_body(inputs, [r.type for r in op.results], body)
        if block is None:
            return False
        out = make_generic(rw, op, inputs, [_identity(t.rank)] * n, [empty(rw, op, r.type) for r in op.results],
                           [_identity(t.rank)] * n, ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True

    @staticmethod
    def in_place(op, rw, inputs, updates, region, target) -> bool:
        """Large scatters: `scf.for` loops over the update elements, in order, carrying the
        results as tensors; each in-bounds update reads, combines and inserts one element."""
        t = op.results[0].type
        top = Scalar(Block())

        def step(c: Scalar, u, carried):
            where = target(c, u)
            inside = None
            for d, w in enumerate(where):
                inside = c.and_(inside, c.and_(c.cmpi(5, w, c.c(0)), c.cmpi(2, w, c.c(t.shape[d]))))
            then, other = Block(), Block()
            b = Scalar(then)
            at = [b.clamp(w, 0, t.shape[d] - 1) for d, w in enumerate(where)]
            new = scalarize(b, region, [*(b.extract(v, at) for v in carried), *(b.extract(v, u) for v in updates)])
            if new is None:
                return None
            stored = [b.op("tensor.insert", [x, v, *at], v.type) for x, v in zip(new, carried)]
            then.append(Operation("scf.yield", stored, []))
            other.append(Operation("scf.yield", list(carried), []))
            branch = Operation("scf.if", [inside], [v.type for v in carried], {}, [Region([then]), Region([other])])
            c.block.append(branch)
            return list(branch.results)

        results = for_nest(top, updates[0].type.shape, list(inputs), step)
        if results is None:
            return False
        for inner in list(top.block.ops):
            inner.detach()
            rw.insert_before(op, inner)
        rw.replace_op(op, results)
        return True


class SelectAndScatter(_Pattern):
    """Per result element: start from the init value and, for every window (source element),
    find the element the select region picks (scanning the window in order, padding
    excluded); where that is this element, apply the scatter region with the source value."""
    ops = hlo_names("select_and_scatter")

    def rewrite(self, op, rw) -> bool:
        x, source, init = op.operands
        t = op.results[0].type
        rank = t.rank
        window = int_list(op.attributes.get("window_dimensions")) or [1] * rank
        strides = int_list(op.attributes.get("window_strides")) or [1] * rank
        lo, _ = _pairs(op.attributes.get("padding"), rank)
        if len(op.regions) != 2 or not all(r.blocks for r in op.regions):
            return False
        select, scatter = op.regions[0].blocks[0], op.regions[1].blocks[0]
        flat = _row_major(t.shape)
        if _too_costly(_size(t), _size(source.type), *window):
            return False

        def body(b: Scalar, ins, outs):
            here = b.c(0)
            for d in range(rank):
                here = b.add(here, b.mul(b.index(d), b.c(flat[d])))

            def per_window(c: Scalar, w, carried):
                def scan(e: Scalar, k, best):
                    best_val, best_at = best
                    valid, at, where = None, e.c(0), []
                    for d in range(rank):
                        p = e.add(e.mul(w[d], e.c(strides[d])), k[d])
                        if lo[d]:
                            p = e.sub(p, e.c(lo[d]))
                        valid = e.and_(valid, e.and_(e.cmpi(5, p, e.c(0)), e.cmpi(2, p, e.c(t.shape[d]))))
                        where.append(e.clamp(p, 0, t.shape[d] - 1))
                        at = e.add(at, e.mul(p, e.c(flat[d])))
                    value = e.extract(x, where)
                    keep = scalarize(e, select, [best_val, value])
                    if keep is None or keep[0].type != T.i1:
                        return None
                    none_yet = e.cmpi(2, best_at, e.c(0))
                    change = e.op("arith.xori", [keep[0], e.const(1, T.i1)], T.i1)
                    take = e.and_(valid, e.op("arith.ori", [change, none_yet], T.i1))
                    return [e.select(take, value, best_val), e.select(take, at, best_at)]

                picked = for_nest(c, window, [c.extract(x, [c.c(0)] * rank), c.c(-1)], scan)
                if picked is None:
                    return None
                new = scalarize(c, scatter, [carried[0], c.extract(source, w)])
                if new is None:
                    return None
                return [c.select(c.cmpi(0, picked[1], here), new[0], carried[0])]

            return for_nest(b, source.type.shape, [ins[0]], per_window)

        block = generic_body([init], [t], body)
        if block is None:
            return False
        out = make_generic(rw, op, [init], [_map(rank, [])], [empty(rw, op, t)], [_identity(rank)],
                           ["parallel"] * rank, block)
        rw.replace_op(op, out.results)
        return True


def _row_major(shape) -> list[int]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


# ---- control flow -----------------------------------------------------------------------------------
def _region_as(block: Block, arg_values, terminator) -> Optional[Block]:
    """A copy of HLO region `block` into a new block whose arguments are `arg_values`' types
    (or, when `arg_values` is None, no arguments and outer values used directly); the HLO
    return becomes `terminator(new_block, returned values)`."""
    new = Block([v.type for v in block.arguments] if arg_values is None else [t for t in arg_values])
    mapping = dict(zip(block.arguments, new.arguments))
    for a, b in zip(block.arguments, new.arguments):
        b.name = a.name
    for op in block.ops:
        if op.name.endswith(".return") and op.dialect in ("stablehlo", "mhlo"):
            terminator(new, [mapping.get(v, v) for v in op.operands])
            return new
        new.append(op.clone(mapping))
    return None


def _yield(block: Block, values) -> None:
    block.append(Operation("scf.yield", list(values), []))


def _extract_scalar(block_or_rw, value, before=None):
    """The element of 0-d tensor `value`: appended to a block, or created before `before`."""
    if before is None:
        op = Operation("tensor.extract", [value], [value.type.element])
        block_or_rw.append(op)
        return op.results[0]
    return block_or_rw.create(before, "tensor.extract", [value], [value.type.element]).result


class While(RewritePattern):
    """`scf.while` on the same (tensor) values; the condition's 0-d tensor is read as an i1."""
    ops = hlo_names("while")

    def match_and_rewrite(self, op, rw) -> bool:
        if len(op.regions) != 2 or not all(r.blocks and len(r.blocks) == 1 for r in op.regions):
            return False
        if not all_static(*(v.type for v in op.operands)):
            return False
        types = [v.type for v in op.operands]

        def condition(block, values):
            flag = _extract_scalar(block, values[0])
            block.append(Operation("scf.condition", [flag, *block.arguments], []))

        before = _region_as(op.regions[0].blocks[0], types, condition)
        after = _region_as(op.regions[1].blocks[0], types, _yield)
        if before is None or after is None:
            return False
        new = rw.create(op, "scf.while", op.operands, types, regions=[Region([before]), Region([after])])
        rw.replace_op(op, new.results)
        return True


class If(RewritePattern):
    ops = hlo_names("if")

    def match_and_rewrite(self, op, rw) -> bool:
        if len(op.regions) != 2 or not all(r.blocks and len(r.blocks) == 1 for r in op.regions):
            return False
        branches = [_region_as(r.blocks[0], [], _yield) for r in op.regions]
        if any(b is None for b in branches):
            return False
        flag = _extract_scalar(rw, op.operands[0], op)
        new = rw.create(op, "scf.if", [flag], [r.type for r in op.results],
                        regions=[Region([branches[0]]), Region([branches[1]])])
        rw.replace_op(op, new.results)
        return True


class Case(RewritePattern):
    """A chain of `scf.if` on `index == i`; an index out of range takes the last branch."""
    ops = hlo_names("case")

    def match_and_rewrite(self, op, rw) -> bool:
        if not op.regions or not all(r.blocks and len(r.blocks) == 1 for r in op.regions):
            return False
        branches = [_region_as(r.blocks[0], [], _yield) for r in op.regions]
        if any(b is None for b in branches) or not _scalar_int(op.operands[0].type.element):
            return False
        types = [r.type for r in op.results]
        index = _extract_scalar(rw, op.operands[0], op)
        chain = branches[-1]
        for i in range(len(branches) - 2, -1, -1):
            block = Block()
            c = Operation("arith.constant", [], [index.type], {"value": IntegerAttr(i, index.type)})
            block.append(c)
            eq = Operation("arith.cmpi", [index, c.results[0]], [T.i1], {"predicate": IntegerAttr(0, T.i64)})
            block.append(eq)
            inner = Operation("scf.if", [eq.results[0]], types, {}, [Region([branches[i]]), Region([chain])])
            block.append(inner)
            _yield(block, inner.results)
            chain = block
        # `chain` is a block computing the result: splice its ops in before `op`
        values = None
        for inner in list(chain.ops):
            inner.detach()
            if inner.name == "scf.yield":
                values = list(inner.operands)
                inner.drop_operand_uses()
                continue
            rw.insert_before(op, inner)
        rw.replace_op(op, values)
        return True


# ---- contractions and index selection TOSA leaves ---------------------------------------------------
class DotGeneral(_Pattern):
    """A contraction generic (batch, lhs free, rhs free loops, then the contracting ones), for
    the element types tosa.matmul does not take; narrow floats accumulate in f32 (as the
    spec's reference does) and are rounded once at the end."""
    ops = hlo_names("dot_general", "dot")

    def rewrite(self, op, rw) -> bool:
        from ...dialects.hlo_attrs import dot_dims
        lhs, rhs = op.operands
        lt, rtype, t = lhs.type, rhs.type, op.results[0].type
        if short_name(op) == "dot":
            if lt.rank not in (1, 2) or rtype.rank not in (1, 2):
                return False
            dims = {"lhs_batching_dimensions": [], "rhs_batching_dimensions": [],
                    "lhs_contracting_dimensions": [lt.rank - 1], "rhs_contracting_dimensions": [0]}
        else:
            dims = dot_dims(op.attributes.get("dot_dimension_numbers"))
        if dims is None or t.element == T.i1 or T.is_float(t.element) != T.is_float(lt.element) or \
                T.is_float(t.element) != T.is_float(rtype.element):
            return False
        lb, rb = dims["lhs_batching_dimensions"], dims["rhs_batching_dimensions"]
        lc, rc = dims["lhs_contracting_dimensions"], dims["rhs_contracting_dimensions"]
        lf = [d for d in range(lt.rank) if d not in lb and d not in lc]
        rf = [d for d in range(rtype.rank) if d not in rb and d not in rc]
        nb, nl, nr = len(lb), len(lf), len(rf)
        loops = nb + nl + nr + len(lc)
        lexpr, rexpr = [""] * lt.rank, [""] * rtype.rank
        for i, (a, b) in enumerate(zip(lb, rb)):
            lexpr[a] = rexpr[b] = f"d{i}"
        for i, a in enumerate(lf):
            lexpr[a] = f"d{nb + i}"
        for i, b in enumerate(rf):
            rexpr[b] = f"d{nb + nl + i}"
        for i, (a, b) in enumerate(zip(lc, rc)):
            lexpr[a] = rexpr[b] = f"d{nb + nl + nr + i}"
        acc = t.element
        if T.is_float(acc) and acc.width < 32:
            acc = T.f32
        at = T.RankedTensorType(t.shape, acc)

        def body(b: Scalar, ins, outs):
            x, y = _cast_scalar(b, ins[0], acc), _cast_scalar(b, ins[1], acc)
            if x is None or y is None:
                return None
            if T.is_float(acc):
                return [b.op("arith.addf", [outs[0], b.op("arith.mulf", [x, y], acc, _FM)], acc, _FM)]
            return [b.op("arith.addi", [outs[0], b.op("arith.muli", [x, y], acc)], acc)]

        block = generic_body([lhs, rhs], [at], body)
        if block is None:
            return False
        zero = rw.create(op, "arith.constant", [], [acc], {"value": FloatAttr(0.0, acc) if T.is_float(acc)
                                                            else IntegerAttr(0, acc)}).result
        from ...dialects.linalg import structured_op
        init = insert(rw, op, structured_op("linalg.fill", [zero], [empty(rw, op, at)])).result
        kinds = ["parallel"] * (nb + nl + nr) + ["reduction"] * len(lc)
        out = make_generic(rw, op, [lhs, rhs], [_map(loops, lexpr), _map(loops, rexpr)], [init],
                           [_map(loops, [f"d{i}" for i in range(nb + nl + nr)])], kinds, block).result
        if acc != t.element:
            round_block = generic_body([at], [t], lambda b, i, o: [_cast_scalar(b, i[0], t.element)])
            out = make_generic(rw, op, [out], [_identity(t.rank)], [empty(rw, op, t)], [_identity(t.rank)],
                               ["parallel"] * t.rank, round_block).result
        rw.replace_op(op, [out])
        return True


class TorchIndexSelect(_Pattern):
    """out[i.., j.., k..] = input[i.., index[i..batch, j..], k..] (index_select along `dim`,
    the first `batch_dims` dims shared by input and index)."""
    ops = hlo_names("torch_index_select")

    def rewrite(self, op, rw) -> bool:
        x, index = op.operands
        t = op.results[0].type
        dim = _int_attr(op.attributes.get("dim"), 0)
        batch = _int_attr(op.attributes.get("batch_dims"), 0)
        if not _scalar_int(index.type.element):
            return False
        extra = index.type.rank - batch

        def body(b: Scalar, ins, outs):
            at = [b.index(d) for d in range(batch)] + [b.index(dim + i) for i in range(extra)]
            k = b.clamp(b.to_index(b.extract(index, at)), 0, x.type.shape[dim] - 1)
            where = [b.index(d) for d in range(dim)] + [k] + \
                [b.index(d - 1 + extra) for d in range(dim + 1, x.type.rank)]
            return [b.extract(x, where)]

        block = generic_body([], [t], body)
        out = make_generic(rw, op, [], [], [empty(rw, op, t)], [_identity(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class Sort(_Pattern):
    """A stable sort by ranks: first each element's final position along the dimension
    (how many elements the comparator puts before it, ties kept in order), then each result
    element takes the element whose position it is. O(n^2) comparator calls per line."""
    ops = hlo_names("sort")

    def rewrite(self, op, rw) -> bool:
        inputs = list(op.operands)
        t = inputs[0].type
        dim = _int_attr(op.attributes.get("dimension"), -1)
        if dim < 0:
            dim += t.rank
        if not op.regions or not op.regions[0].blocks:
            return False
        comparator = op.regions[0].blocks[0]
        n = t.shape[dim]
        if _too_costly(_size(t), n):
            return False
        rank_type = T.RankedTensorType(t.shape, T.i64)

        def compare(c: Scalar, a_at, b_at):
            args = []
            for x in inputs:
                args += [c.extract(x, a_at), c.extract(x, b_at)]
            out = scalarize(c, comparator, args)
            return None if out is None or out[0].type != T.i1 else out[0]

        def ranks(b: Scalar, ins, outs):
            here = [b.index(d) for d in range(t.rank)]
            i = here[dim]

            def count(c: Scalar, js, carried):
                j = js[0]
                there = list(here)
                there[dim] = j
                before = compare(c, here, there)     # comp(x_i, x_j)
                after = compare(c, there, here)      # comp(x_j, x_i)
                if before is None or after is None:
                    return None
                not_before = c.op("arith.xori", [before, c.const(1, T.i1)], T.i1)
                earlier = c.cmpi(2, j, i)            # j < i
                later = c.cmpi(4, j, i)              # j > i
                inc = c.op("arith.ori", [c.and_(earlier, not_before), c.and_(later, after)], T.i1)
                return [c.add(carried[0], c.op("arith.extui", [inc], T.i64))]

            return for_nest(b, [n], [b.const(0, T.i64)], count)

        block = generic_body([], [rank_type], ranks)
        if block is None:
            return False

        def place(b: Scalar, ins, outs):
            here = [b.index(d) for d in range(t.rank)]
            p = b.op("arith.index_cast", [here[dim]], T.i64)

            def find(c: Scalar, js, carried):
                there = list(here)
                there[dim] = js[0]
                hit = c.cmpi(0, c.extract(position, there), p)
                return [c.select(hit, c.extract(x, there), old) for x, old in zip(inputs, carried)]

            return for_nest(b, [n], list(ins), find)

        position = make_generic(rw, op, [], [], [empty(rw, op, rank_type)], [_identity(t.rank)],
                                ["parallel"] * t.rank, block).result
        block2 = generic_body(inputs, [r.type for r in op.results], place)
        out = make_generic(rw, op, inputs, [_identity(t.rank)] * len(inputs), [empty(rw, op, r.type) for r in op.results],
                           [_identity(t.rank)] * len(inputs), ["parallel"] * t.rank, block2)
        rw.replace_op(op, out.results)
        return True


class Broadcast(_Pattern):
    """`broadcast`: the operand's dims are the result's trailing ones."""
    ops = hlo_names("broadcast")

    def rewrite(self, op, rw) -> bool:
        x = op.operands[0]
        t = op.results[0].type
        lead = t.rank - x.type.rank
        block = generic_body([x], [t], lambda b, i, o: [i[0]])
        out = make_generic(rw, op, [x], [_map(t.rank, [f"d{lead + d}" for d in range(x.type.rank)])],
                           [empty(rw, op, t)], [_identity(t.rank)], ["parallel"] * t.rank, block)
        rw.replace_op(op, out.results)
        return True


class Scan(_Pattern):
    """`chlo.scan` with an elementwise body: each output element runs the recurrence along the
    scan dimension up to its own position (O(n^2) per line); the final carries run it all."""
    ops = ("chlo.scan",)

    def rewrite(self, op, rw) -> bool:
        seg = op.attributes.get("operandSegmentSizes")
        if not isinstance(seg, DenseArrayAttr) or len(seg.values) != 2 or not op.regions:
            return False
        n_in = seg.values[0]
        inputs, inits = op.operands[:n_in], op.operands[n_in:]
        n_out = len(op.results) - len(inits)
        if not inputs or n_out < 0:
            return False
        t = inputs[0].type
        dim = _int_attr(op.attributes.get("dimension"), 0)
        reverse = "true" in str(op.attributes.get("is_reverse", "false"))
        n = t.shape[dim]
        if _too_costly(_size(t), n):
            return False
        region = op.regions[0].blocks[0]

        def run(b: Scalar, here, stop_at):
            """The recurrence at `here` (indices with the scan dim left out), up to `stop_at`
            (an index, or None for the whole line): the outputs there and the carries."""
            carried = [b.extract(v, here) for v in inits]
            outs0 = [b.const(0, x.type.element) if not T.is_float(x.type.element) else b.const(0.0, x.type.element)
                     for x in op.results[:n_out]] if n_out else []

            def step(c: Scalar, ms, state):
                j = c.sub(c.c(n - 1), ms[0]) if reverse else ms[0]
                at = list(here)
                at.insert(dim, j)
                carries, outs = state[:len(inits)], state[len(inits):]
                values = scalarize(c, region, [*(c.extract(x, at) for x in inputs), *carries], elementwise=True)
                if values is None:
                    return None
                if stop_at is None:
                    active = None
                else:
                    active = c.cmpi(5 if reverse else 3, j, stop_at)  # j >= i (reverse) / j <= i
                    hit = c.cmpi(0, j, stop_at)
                new_carries = values[n_out:]
                new_outs = values[:n_out]
                if active is not None:
                    new_carries = [c.select(active, v, old) for v, old in zip(new_carries, carries)]
                    new_outs = [c.select(hit, v, old) for v, old in zip(new_outs, outs)]
                return [*new_carries, *new_outs]

            return for_nest(b, [n], [*carried, *outs0], step)

        def outputs(b: Scalar, ins, outs):
            idx = [b.index(d) for d in range(t.rank)]
            here = idx[:dim] + idx[dim + 1:]
            state = run(b, here, idx[dim])
            return None if state is None else state[len(inits):]

        def carries(b: Scalar, ins, outs):
            here = [b.index(d) for d in range(t.rank - 1)]
            state = run(b, here, None)
            return None if state is None else state[:len(inits)]

        ct = inits[0].type if inits else None
        blocks = [generic_body([], [r.type for r in op.results[:n_out]], outputs) if n_out else None,
                  generic_body([], [r.type for r in op.results[n_out:]], carries) if inits else None]
        if (n_out and blocks[0] is None) or (inits and blocks[1] is None):
            return False
        values = []
        if n_out:
            values += make_generic(rw, op, [], [], [empty(rw, op, r.type) for r in op.results[:n_out]],
                                   [_identity(t.rank)] * n_out, ["parallel"] * t.rank, blocks[0]).results
        if inits:
            values += make_generic(rw, op, [], [], [empty(rw, op, r.type) for r in op.results[n_out:]],
                                   [_identity(ct.rank)] * len(inits), ["parallel"] * ct.rank, blocks[1]).results
        rw.replace_op(op, values)
        return True


PATTERNS = [Pad(), StridedSlice(), DynamicSlice(), DynamicUpdateSlice(), Gather(), Reduce(), ReduceWindow(),
            Convolution(), Compare(), Scatter(), SelectAndScatter(), While(), If(), Case(), DotGeneral(), TorchIndexSelect(), Sort(), Broadcast(), Scan()]
