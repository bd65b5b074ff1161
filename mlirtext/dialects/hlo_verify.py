"""Verification and shape rules of the HLO family (stablehlo, mhlo, chlo).

`VERIFIERS` maps a stablehlo op name ("stablehlo.dot_general") to its check;
mhlo and chlo declarations look up the stablehlo name of the same op (or their
own name where no stablehlo op exists). Rules follow the StableHLO spec; the
messages use MLIR's wording. A check only rejects what MLIR rejects: where a
fact cannot be known (dynamic dimensions, unranked tensors, unknown attributes)
it is skipped. A check that raises anything but `VerifyError` has a bug: the
verifier reports it as an internal error naming the op, never as a pass.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from ..ir import types as T
from ..ir.attributes import ArrayAttr, IntegerAttr, OpaqueAttr
from ..ir.core import Operation
from . import hlo_attrs as A, hlo_types
from .base import VerifyError
from .quant_types import Uniform, uniform

VERIFIERS: dict[str, Callable[[Operation], None]] = {}


#: Ops whose every check is part of their return type inference in MLIR: an error is followed
#: by "failed to infer returned types" (as `--verify-diagnostics` expects).
INFERRED_ONLY = {"gather", "dynamic_gather", "if", "broadcast", "rng", "send", "topk", "async_done"}


def verifier_for(name: str) -> Callable[[Operation], None]:
    """The check for op `name`, looked up when it runs (so declarations need no order)."""
    inferred = name.split(".", 1)[-1] in INFERRED_ONLY and name.startswith(("stablehlo.", "mhlo."))

    def verify(op: Operation) -> None:
        hlo_types.check(op)  # as MLIR: the operand and result types first, then the op's own rules
        check = VERIFIERS.get(name)
        if check is not None:
            try:
                check(op)
            except VerifyError as e:
                if inferred:
                    e.also.append("failed to infer returned types")
                raise
    return verify


def rule(*names: str):
    def register(fn):
        for n in names:
            VERIFIERS[n] = fn
        return fn
    return register


def fail(message: str):
    raise VerifyError(message)


# ---- types ---------------------------------------------------------------------------
def is_ranked(t) -> bool:
    return isinstance(t, T.RankedTensorType)


def shape_of(t) -> Optional[tuple]:
    """The shape of a ranked tensor (None entries for `?`), or None."""
    return t.shape if isinstance(t, (T.RankedTensorType, T.VectorType, T.MemRefType)) else None


def _first_operand_shape(op) -> tuple:
    """(type, shape) of operand #0: (None, None) without operands, the shape None when unranked."""
    if not op.operands:
        return None, None
    t = op.operand_types[0]
    return t, shape_of(t)


def rank_of(t) -> Optional[int]:
    s = shape_of(t)
    return None if s is None else len(s)


def elt(t):
    return T.element_type(t)


def is_tensor(t) -> bool:
    return isinstance(t, (T.RankedTensorType, T.UnrankedTensorType))


def is_token(t) -> bool:
    return isinstance(t, T.DialectType) and t.mnemonic == "token"


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
    return A.int_list(owner.attributes.get("value"))


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


# ---- gather ----------------------------------------------------------------------------
def _gather_result(operand_shape, indices_shape, slice_sizes, offset_dims, collapsed, operand_batching,
                   index_vector_dim):
    batch = [d for i, d in enumerate(indices_shape) if i != index_vector_dim]
    rank = len(offset_dims) + len(batch)
    if slice_sizes is None:
        offsets = [None] * (len(operand_shape) - len(collapsed) - len(operand_batching)) \
            if operand_shape is not None else None
    else:
        offsets = [s for i, s in enumerate(slice_sizes) if i not in collapsed and i not in operand_batching]
    out = []
    bi = oi = 0
    for d in range(rank):
        if d in offset_dims:
            out.append(offsets[oi] if offsets is not None and oi < len(offsets) else None)
            oi += 1
        else:
            out.append(batch[bi] if bi < len(batch) else None)
            bi += 1
    return out


def _check_in_range(name: str, dims, limit: int, what: str) -> None:
    for d in dims:
        if d < 0 or d >= limit:
            fail(f"Expects each element of {name} to be in range [0, {what}) i.e. [0, {limit}). got: {d}.")


def verify_gather_like(op, operand_t, indices_t, slice_sizes, f, scatter=False) -> Optional[list]:
    offset_dims = A.dims_field(f, "offset_dims")
    collapsed = A.dims_field(f, "collapsed_slice_dims")
    operand_batching = A.dims_field(f, "operand_batching_dims")
    indices_batching = A.dims_field(f, "start_indices_batching_dims")
    start_index_map = A.dims_field(f, "start_index_map")
    ivd = A.int_field(f, "index_vector_dim")
    ostate = shape_of(operand_t)
    istate = shape_of(indices_t)
    if ostate is not None:
        n = len(offset_dims) + len(collapsed) + len(operand_batching)
        if n != len(ostate):
            fail(f"offset_dims size ({len(offset_dims)}) plus collapse_slice_dims size ({len(collapsed)}) plus "
                 f"operand_batching_dims size ({len(operand_batching)}) is not equal to operand rank "
                 f"({len(ostate)})")
    if istate is not None:
        ir = len(istate)
        if ivd < 0 or ivd > ir:
            fail(f"Expects index_vector_dim to be in range [0, rank-of('start_indices')] i.e. [0, {ir}]. "
                 f"got: {ivd}.")
        size = istate[ivd] if ivd < ir else 1
        if size is not None and len(start_index_map) != size:
            fail(f"start_index_map size ({len(start_index_map)}) is not equal to size of index dimension "
                 f"({ivd}) of start_indices ({size})")
    if not is_sorted(offset_dims):
        fail(f"expects offset_dims to be sorted, got: {fmt_list(offset_dims)}")
    if first_duplicate(offset_dims) is not None:
        fail(f"expects offset_dims to not repeat, got: {fmt_list(offset_dims)}")
    if istate is not None:
        implied = len(offset_dims) + len(istate) - (1 if ivd < len(istate) else 0)
        _check_in_range("offset_dims", offset_dims, implied, "implied-result-rank")
    dup = first_duplicate(collapsed + operand_batching)
    if dup is not None:
        fail(f"has duplicated dimension from collapsed_slice_dims and operand_batching_dims: {dup}")
    if not is_sorted(collapsed):
        fail(f"expects collapsed_slice_dims to be sorted, got: {fmt_list(collapsed)}")
    if ostate is not None:
        _check_in_range("collapsed_slice_dims", collapsed, len(ostate), "rank-of('operand')")
    if not is_sorted(operand_batching):
        fail(f"expects operand_batching_dims to be sorted, got: {fmt_list(operand_batching)}")
    if ostate is not None:
        _check_in_range("operand_batching_dims", operand_batching, len(ostate), "rank-of('operand')")
    if first_duplicate(indices_batching) is not None:
        fail(f"expects start_indices_batching_dims to not repeat, got: {fmt_list(indices_batching)}")
    if istate is not None:
        _check_in_range("start_indices_batching_dims", indices_batching, len(istate),
                        "rank-of('start_indices')")
    if ivd in indices_batching:
        fail(f"expects start_indices_batching_dims not to include index_vector_dim {ivd}")
    if len(operand_batching) != len(indices_batching):
        fail("operand_batching_dims and start_indices_batching_dims should have the same size")
    if ostate is not None and istate is not None:
        for i, (a, b) in enumerate(zip(operand_batching, indices_batching)):
            x, y = ostate[a], istate[b]
            if not compatible_dims(x, y):
                fail(f"operand_batching_dims[{i}] and start_indices_batching_dims[{i}] must have compatible "
                     f"sizes, but got {x} and {y}")
    dup = first_duplicate(start_index_map + operand_batching)
    if dup is not None:
        fail(f"has duplicated dimension from start_index_map and operand_batching_dims: {dup}")
    if ostate is not None:
        _check_in_range("start_index_map", start_index_map, len(ostate), "rank-of('operand')")
    if slice_sizes is not None and ostate is not None and len(slice_sizes) != len(ostate):
        fail(f"slice_sizes size ({len(slice_sizes)}) not equal to operand rank ({len(ostate)})")
    # As StableHLO's inferGatherOp: the slice sizes once the dimension numbers hold.
    for dims, name in ((collapsed, "collapsed_slice_dims"), (operand_batching, "operand_batching_dims")):
        for d in dims if slice_sizes is not None else ():
            if 0 <= d < len(slice_sizes) and slice_sizes[d] > 1:
                fail(f"Expects that for each dim in {name}, slice_sizes[dim] should be <= 1, "
                     f"but got {slice_sizes[d]}")
    if slice_sizes is not None and ostate is not None:
        for i, (s, d) in enumerate(zip(slice_sizes, ostate)):
            if s < 0 or (d is not None and s > d):
                fail(f"slice size ({s}) is out of bounds for operand dimension ({dim_text(d)}) at index {i}")
    if istate is None:
        return None
    return _gather_result(ostate, istate, slice_sizes, offset_dims, collapsed, operand_batching, ivd)


@rule("stablehlo.gather", "stablehlo.dynamic_gather")
def _gather(op):
    f = A.struct_fields(attr(op, "dimension_numbers"))
    if f is None or len(op.operands) < 2:
        return
    operand_t, indices_t = op.operand_types[:2]
    if op.name.endswith("dynamic_gather"):
        slice_sizes = constant_ints(op.operands[2]) if len(op.operands) > 2 else None
        ss, os_ = shape_of(op.operand_types[2]) if len(op.operands) > 2 else None, shape_of(operand_t)
        if slice_sizes is None and ss and os_ is not None and ss[0] is not None and ss[0] != len(os_):
            fail(f"slice_sizes size ({ss[0]}) not equal to operand rank ({len(os_)})")
    else:
        slice_sizes = ints_attr(op, "slice_sizes")
    shape = verify_gather_like(op, operand_t, indices_t, slice_sizes, f)
    if shape is not None and op.results:
        check_inferred(op, [tensor(shape, elt(operand_t))])


# ---- shared pieces -----------------------------------------------------------------------
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


def region_args(region):
    return region.blocks[0].arguments if region is not None and region.blocks else []


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


def replica_groups(op):
    a = op.attr("replica_groups")
    vals = A.int_list(a)
    shape = A.dense_shape(a)
    return vals, shape


def verify_replica_groups(op, same_size: bool, use_global: bool, expected=None) -> None:
    vals, shape = replica_groups(op)
    if vals is None or shape is None:
        return
    if len(shape) != 2:
        fail("replica groups should be a rank 2 tensor")
    if use_global and shape[0] * shape[1] == 0:
        fail("if `use_global_device_ids` is set, the replica groups cannot be empty")
    seen = set()
    for v in vals:
        if v == -1:
            if not same_size:
                continue
            fail("Invalid replica id -1")
        if v in seen:
            fail(f"replica id #{v} seen more than once")
        seen.add(v)
    for i in range(len(seen)):
        if i not in seen:
            fail(f"replica id #{i} not seen in replica groups")
    if same_size and expected is not None and (shape[0] == 0 or len(vals) // shape[0] != expected):
        fail(f"group size of replica_groups must be {expected}")


def channel_id(op) -> int:
    f = A.struct_fields(op.attr("channel_handle"))
    return A.int_field(f, "handle", 0) if f else 0


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


@rule("stablehlo.reduce_precision")
def _reduce_precision(op):
    positive_attr(op, "exponent_bits", 32)
    nonneg_attr(op, "mantissa_bits", 32)


# ---- collectives -----------------------------------------------------------------------
@rule("stablehlo.all_reduce")
def _all_reduce(op):
    use_global = bool_attr(op, "use_global_device_ids")
    verify_replica_groups(op, False, use_global)
    if use_global and channel_id(op) <= 0:
        fail(f"channel_id must be positive when useGlobalDeviceIds is set but got: {channel_id(op)}")
    if not op.regions or not op.regions[0].blocks:
        return
    block = op.regions[0].blocks[0]
    for t in op.operand_types:
        if is_token(t):
            continue
        verify_reducer(block, [t], [tensor((), elt(t))], [])
    term = terminator(op.regions[0])
    if term is not None and term.operands:
        acc = elt(term.operands[0].type)
        inferred = [T.RankedTensorType(shape_of(t), acc) if is_ranked(t) else T.UnrankedTensorType(acc)
                    for t in op.operand_types]
        check_inferred(op, inferred)


@rule("stablehlo.reduce_scatter")
def _reduce_scatter(op):
    nonneg_attr(op, "scatter_dimension")
    use_global = bool_attr(op, "use_global_device_ids")
    verify_replica_groups(op, True, use_global)
    if not op.operands or not op.results:
        return
    ot, rt = op.operand_types[0], op.result_types[0]
    if op.regions and op.regions[0].blocks:
        verify_reducer(op.regions[0].blocks[0], [ot], [tensor((), elt(ot))], [])
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None:
        return
    dim = int_attr(op, "scatter_dimension", 0)
    if len(os_) != len(rs):
        fail("operand and result should have same rank")
    if dim >= len(os_):
        fail("scatter dim should be less than operand/result rank")
    if use_global and channel_id(op) <= 0:
        fail(f"channel_id must be positive when useGlobalDeviceIds is set but got: {channel_id(op)}")
    if os_[dim] is None or rs[dim] is None:
        return
    if rs[dim] == 0:
        fail("result dimension size at scatter_dimension cannot be zero")
    if os_[dim] == 0:
        fail("operand dimension size at scatter_dimension cannot be zero")
    if os_[dim] % rs[dim] != 0:
        fail(f"operand scatter dimension has size {os_[dim]}, expected to be a multiple of result scatter "
             f"dimension size {rs[dim]}")
    for i, (a, b) in enumerate(zip(os_, rs)):
        if i != dim and not compatible_dims(a, b):
            fail(f"non scatter dimensions should be same for operand ({dim_text(a)}) and result ({dim_text(b)})")
    term = terminator(op.regions[0]) if op.regions else None
    if term is not None and term.operands and elt(rt) != elt(term.operands[0].type):
        fail(f"result element-type is expected to be '{elt(term.operands[0].type)}', but got '{elt(rt)}'")


@rule("stablehlo.all_to_all")
def _all_to_all(op):
    for name in ("split_dimension", "concat_dimension"):
        nonneg_attr(op, name)
    positive_attr(op, "split_count")
    split_dim = int_attr(op, "split_dimension", 0)
    concat_dim = int_attr(op, "concat_dimension", 0)
    count = int_attr(op, "split_count", 1)
    if len(op.operands) != len(op.results):
        fail("requires the same number of operands and results")
    for i, (a, b) in enumerate(zip(op.operand_types, op.result_types)):
        if is_tensor(a) and is_tensor(b) and elt(a) != elt(b) and not (is_quant(a) or is_quant(b)):
            fail(f"requires the same element type for operand and result at index {i}")
    if "split_count" not in op.attributes:
        verify_replica_groups(op, True, False)
        return
    verify_replica_groups(op, True, False, count)
    inferred = []
    for t in op.operand_types:
        s = shape_of(t)
        if s is None:
            return
        if split_dim >= len(s):
            fail(f"AllToAll split_dimension {split_dim} is out-of-bounds for input rank {len(s)}")
        if concat_dim >= len(s):
            fail(f"AllToAll concat_dimension {concat_dim} is out-of-bounds for input rank {len(s)}")
        s = list(s)
        if s[split_dim] is not None and s[split_dim] % count != 0:
            fail(f"split dimension has size {s[split_dim]}, expected to be a multiple of split_count {count}")
        if s[split_dim] is not None:
            s[split_dim] //= count
        if s[concat_dim] is not None:
            s[concat_dim] *= count
        inferred.append(tensor(s, elt(t)))
    check_inferred(op, inferred)


@rule("stablehlo.all_gather")
def _all_gather(op):
    nonneg_attr(op, "all_gather_dim")
    dim = int_attr(op, "all_gather_dim", 0)
    use_global = bool_attr(op, "use_global_device_ids")
    for ot, rt in zip(op.operand_types, op.result_types):
        os_, rs = shape_of(ot), shape_of(rt)
        if os_ is None or rs is None:
            continue
        if dim >= len(os_):
            fail("all_gather_dim must be a valid index of operand")
        if os_[dim] == 0:
            fail("dimension size of operand at 'all_gather_dim' cannot be zero")
        verify_replica_groups(op, True, use_global)
        if use_global and channel_id(op) < 0:
            fail("channel_id cannot be negative when useGlobalDeviceIds is set")
        if len(rs) != len(os_):
            fail("operand and result must have the same rank")
        for i in range(len(os_)):
            if i != dim and not compatible_dims(rs[i], os_[i]):
                fail("operand and result should have the same shape except for the dimension size at "
                     "'all_gather_dim'")
        if os_[dim] is None or rs[dim] is None:
            continue
        if rs[dim] % os_[dim] != 0:
            fail(f"result gather dimension has size {rs[dim]}, expected to be a multiple of operand gather "
                 f"dimension size {os_[dim]}")


@rule("stablehlo.collective_permute")
def _collective_permute(op):
    a = op.attr("source_target_pairs")
    vals, shape = A.int_list(a), A.dense_shape(a)
    if vals is None or shape is None:
        return
    if len(shape) != 2:
        fail(f"expect source_target_pairs attribute to be of rank 2, but got rank {len(shape)}")
    if shape[1] != 2:
        fail(f"expect source_target_pairs attribute of shape (N, 2), but got ({raw_dims(shape)})")
    sources, targets = set(), set()
    for i, v in enumerate(vals):
        if v < 0:
            fail("replica ids in source_target_pairs must be >= 0.")
        s = sources if i % 2 == 0 else targets
        if v in s:
            fail("duplicate sources not allowed." if i % 2 == 0 else "duplicate targets not allowed.")
        s.add(v)


@rule("stablehlo.collective_broadcast")
def _collective_broadcast(op):
    vals, shape = replica_groups(op)
    if vals is not None and shape is not None:
        if len(shape) != 2:
            fail(f"replica groups should be a rank 2 tensor,but instead it is of rank {len(shape)}")
        seen = set()
        for v in vals:
            if v < 0:
                fail(f"replica_groups values must be positive, but was given {v}")
            if v in seen:
                fail(f"replica id #{v} seen more than once")
            seen.add(v)
    dyn = bool_attr(op, "has_dynamic_root")
    n = len(op.operands)
    if not dyn and n == 0:
        fail("collective_broadcast requires at least one data operand")
    if dyn:
        if n < 2:
            fail("collective_broadcast with has_dynamic_root=true requires at least two operands (data + root)")
        last = op.operand_types[-1]
        s = shape_of(last)
        if s is None or len(s) != 1 or elt(last) != T.i32:
            fail("last operand of collective_broadcast with has_dynamic_root=true must be a rank-1 i32 tensor")
        if s[0] is not None and s[0] != n - 1:
            fail(f"last operand of collective_broadcast with has_dynamic_root=true must have the same number of "
                 f"elements as data operands ({n - 1}), but got {s[0]}")


# ---- broadcasts ------------------------------------------------------------------------
@rule("stablehlo.broadcast")
def _broadcast(op):
    sizes = ints_attr(op, "broadcast_sizes")
    if sizes is None:
        return
    rank1_attrs(op, "broadcast_sizes")
    t = op.operand("operand").type
    s = shape_of(t)
    if s is None:
        return
    for v in sizes:
        if v < 0:
            fail(f"Broadcast with negative dimension size {v}")
    check_inferred(op, [tensor(list(sizes) + list(s), elt(t))])


def _static_or_single_bounded(t) -> bool:
    s = shape_of(t)
    if s is None:
        return False
    if None not in s:
        return True
    b = bounds_of(t)
    return b is not None and s.count(None) == 1 and b[s.index(None)] is not None


@rule("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op):
    dims = ints_attr(op, "broadcast_dimensions")
    if dims is None:
        return
    ot, rt = op.operand("operand").type, op.result_named("result").type
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None:
        return
    if not _static_or_single_bounded(rt):
        fail(f"result #0 must be statically shaped or single bounded dimension tensor, but got '{rt}'")
    if len(dims) != len(os_):
        fail(f"broadcast_dimensions size ({len(dims)}) does not match operand rank ({len(os_)})")
    if first_duplicate(dims) is not None:
        fail("broadcast_dimensions should not have duplicates")
    for i, d in enumerate(dims):
        if d < 0 or d >= len(rs):
            fail(f"broadcast_dimensions contains invalid value {d} for result with rank {len(rs)}")
        if os_[i] is not None and os_[i] != 1 and os_[i] != rs[d]:
            fail(f"size of operand dimension {i} ({os_[i]}) is not equal to 1 or size of result dimension {d} "
                 f"({dim_text(rs[d]) if rs[d] is not None else KDYN})")
    verify_broadcast_quant(op, dims)


def shape_operand_check(op, value, result_type) -> None:
    vals = constant_ints(value)
    rs = shape_of(result_type)
    if vals is None or rs is None:
        return
    if len(vals) != len(rs) or any(d is not None and v != d for v, d in zip(vals, rs)):
        fail(f"output shape [{', '.join(map(str, vals))}] is incompatible with return type of operation "
             f"'{result_type}'")


@rule("stablehlo.dynamic_broadcast_in_dim")
def _dynamic_broadcast_in_dim(op):
    dims = ints_attr(op, "broadcast_dimensions")
    if dims is None or len(op.operands) < 2 or not op.results:
        return
    shape = op.operand("output_dimensions")
    ot, st, rt = op.operand("operand").type, shape.type, op.result_types[0]
    ss = shape_of(st)
    if ss is not None and None in ss:
        fail(f"operand #1 must be statically shaped 1-dimensional tensor of index or integer values, "
             f"but got '{st}'")
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None:
        return
    if not (is_quant(ot) or is_quant(rt)) and not compatible_elements(ot, rt):
        fail(f"expects operand and result to have compatible element type. Got: '{ot}' and '{rt}'")
    if len(dims) != len(os_):
        fail(f"broadcast_dimensions size ({len(dims)}) does not match operand rank ({len(os_)})")
    if len(rs) < len(os_):
        fail(f"result rank ({len(rs)}) is less than operand rank ({len(os_)})")
    if first_duplicate(dims) is not None:
        fail("broadcast_dimensions should not have duplicates")
    for i, d in enumerate(dims):
        if d < 0 or d >= len(rs):
            fail(f"broadcast_dimensions contains invalid value {d} for result with rank {len(rs)}")
        if os_[i] != 1 and not compatible_dims(os_[i], rs[d]):
            fail(f"size of operand dimension {i} ({os_[i]}) is not compatible with size of result dimension "
                 f"{d} ({rs[d]})")
    shape_operand_check(op, shape, rt)
    hints = (ints_attr(op, "known_expanding_dimensions") or []) + \
        (ints_attr(op, "known_nonexpanding_dimensions") or [])
    if len(set(hints)) != len(hints):
        fail("duplicate expansion hint for at least one operand dimension")
    for h in sorted(set(hints)):
        if h < 0 or h >= len(os_):
            fail(f"hint for expanding dimension {h} does not refer to a valid operand dimension")
    vals = constant_ints(shape)
    if vals is not None and None not in os_:
        for i, d in enumerate(dims):
            if os_[i] != 1 and d < len(vals) and os_[i] != vals[d]:
                fail(f"size of operand dimension {i} ({os_[i]}) is not equal to 1 or value of shape at index "
                     f"{d} ({vals[d]})")
    verify_broadcast_quant(op, dims)


# ---- control flow ----------------------------------------------------------------------------
def _conditional(op, operand_t, regions):
    s = shape_of(operand_t)
    if s is not None and len(s) != 0:
        fail(f"operand should be rank 0 tensor but got rank {len(s)}")
    if not regions:
        fail("expect at least one branch")
    for r in regions:
        if not r.blocks:
            fail("expect non-empty region")
    first = terminator(regions[0])
    first_types = [v.type for v in first.operands] if first is not None else []
    for i, r in enumerate(regions):
        n = len(region_args(r))
        if n != 0:
            fail(f"branch {i} must have 0 arguments, but found {n}")
        term = terminator(r)
        types = [v.type for v in term.operands] if term is not None else []
        if len(types) != len(first_types) or not all(compatible(a, b) for a, b in zip(first_types, types)):
            fail(f"branch 0 and branch {i} have mismatched return types: {quoted(first_types)} vs {quoted(types)}")
    check_inferred(op, first_types)


@rule("stablehlo.if")
def _if(op):
    if op.operands:
        _conditional(op, op.operand_types[0], op.regions)


@rule("stablehlo.case")
def _case(op):
    if op.operands:
        _conditional(op, op.operand_types[0], op.regions)


@rule("stablehlo.while")
def _while(op):
    if len(op.regions) != 2 or not op.regions[0].blocks or not op.regions[1].blocks:
        return
    types = op.operand_types
    cond_args = [a.type for a in op.regions[0].blocks[0].arguments]
    body_args = [a.type for a in op.regions[1].blocks[0].arguments]

    def compat(a, b):
        return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    if not compat(types, cond_args):
        fail(f"expect operands to be compatible with condition block arguments but got {quoted(types)} vs "
             f"{quoted(cond_args)}")
    if not compat(types, body_args):
        fail(f"expect operands to be compatible with body block arguments but got {quoted(types)} vs "
             f"{quoted(body_args)}")
    bt = terminator(op.regions[1])
    if bt is not None:
        rets = [v.type for v in bt.operands]
        if not compat(types, rets):
            fail(f"expect operands to be compatible with body block return types but got {quoted(types)} vs "
                 f"{quoted(rets)}")
    ct = terminator(op.regions[0])
    if ct is not None:
        rets = [v.type for v in ct.operands]
        if len(rets) != 1:
            fail(f"expect condition body returns a single value but got {len(rets)}")
        s = shape_of(rets[0])
        if (s is not None and len(s) != 0) or elt(rets[0]) != T.i1:
            fail(f"expect condition block return a zero-ranked tensor of i1 but got '{rets[0]}'")
    check_inferred(op, types)


# ---- concatenate, clamp, cholesky --------------------------------------------------------
@rule("stablehlo.concatenate")
def _concatenate(op):
    if not op.operands:
        fail("expected 1 or more operands, but found 0")
    nonneg_attr(op, "dimension")
    dim = int_attr(op, "dimension", 0)
    shapes = [shape_of(t) for t in op.operand_types]
    if any(s is None for s in shapes):
        return
    rank = len(shapes[0])
    if rank == 0:
        fail("rank-0 values cannot be concatenated")
    if dim >= rank:
        fail(f"dimension {dim} is out-of-bounds for input rank {rank}")
    for i, s in enumerate(shapes):
        if len(s) != rank:
            fail(f"operands (0) and ({i}) do not match rank")
        for d in range(rank):
            if d != dim and not compatible_dims(shapes[0][d], s[d]):
                fail(f"shapes of operand (0) and ({i}) are not compatible at non-concat index {d}: "
                     f"({raw_dims(shapes[0])}) != ({raw_dims(s)})")
    out = []
    for d in range(rank):
        if d == dim:
            vals = [s[d] for s in shapes]
            out.append(None if None in vals else sum(vals))
        else:
            known = [s[d] for s in shapes if s[d] is not None]
            out.append(known[0] if known else None)
    check_inferred(op, [tensor(out, elt(op.operands_named("inputs")[0].type))])


@rule("stablehlo.clamp")
def _clamp(op):
    if len(op.operands) != 3:
        return
    mn, x, mx = op.operand_types
    xs = shape_of(x)
    if xs is None:
        return
    for name, t in (("min", mn), ("max", mx)):
        s = shape_of(t)
        if s is not None and len(s) != 0 and not (len(s) == len(xs) and compatible_shapes(t, x)):
            fail(f"{name} shape [{raw_dims(s)}] is not scalar and is not compatible to operand shape "
                 f"[{raw_dims(xs)}]")
    check_inferred(op, [x])


@rule("stablehlo.cholesky")
def _cholesky(op):
    t, s = _first_operand_shape(op)
    if s is None:
        return
    if len(s) < 2:
        fail(f"argument 'a' must have rank >= 2, got shape {raw_dims(s)}.")
    if not compatible_dims(s[-2], s[-1]):
        fail(f"minor dimensions of 'a' must have equal size, got shape {raw_dims(s)}.")
    check_inferred(op, [t])


# ---- dot -----------------------------------------------------------------------------------
_PRECISIONS = {"DEFAULT", "HIGH", "HIGHEST", "PACKED_NIBBLE"}


def verify_precision_config(op) -> None:
    a = op.attr("precision_config")
    if a is None:
        return
    if isinstance(a, ArrayAttr):
        for item in a.items:
            if not (isinstance(item, OpaqueAttr) and A.enum_word(item) in _PRECISIONS):
                fail("attribute 'precision_config' failed to satisfy constraint: Precision Config attribute")
        if len(a.items) > 2:
            fail("expects precision config to be empty or have <= 2 elements.")


@rule("stablehlo.dot")
def _dot(op):
    verify_precision_config(op)
    l, r = shape_of(op.operand("lhs").type), shape_of(op.operand("rhs").type)
    if l is None or r is None:
        return
    if len(l) == 1 and len(r) == 1 and compatible_dims(l[0], r[0]):
        dims = []
    elif len(l) == 2 and len(r) == 1 and compatible_dims(l[1], r[0]):
        dims = [l[0]]
    elif len(l) == 1 and len(r) == 2 and compatible_dims(l[0], r[0]):
        dims = [r[1]]
    elif len(l) == 2 and len(r) == 2 and compatible_dims(l[1], r[0]):
        dims = [l[0], r[1]]
    else:
        fail("expected both lhs/rhs ranks to be either 1 or 2")
    result = op.result_named("result").type
    rs = shape_of(result)
    if rs is not None and (len(rs) != len(dims) or not all(compatible_dims(a, b) for a, b in zip(dims, rs))):
        fail(f"inferred shape '{q_dims(dims)}' is incompatible with return type of operation '{result}'")


def check_dims_distinct(a, b, na, nb):
    sa = set(a)
    for d in b:
        if d in sa:
            fail(f"has duplicated dimension from {na} and {nb}: {d}")
    if first_duplicate(a) is not None:
        fail(f"has duplicated dimension from {na} and {nb}: {first_duplicate(a)}")
    if first_duplicate(b) is not None:
        fail(f"has duplicated dimension from {na} and {nb}: {first_duplicate(b)}")


def check_dot_general_dims(l, r, lb, rb, lc, rc) -> None:
    """The dimension numbers of a dot_general (or ragged_dot) against the operand shapes `l` and
    `r` (None when unranked)."""
    if len(lb) != len(rb):
        fail("lhs and rhs should have the same number of batching dimensions")
    if len(lc) != len(rc):
        fail("lhs and rhs should have the same number of contracting dimensions")
    check_dims_distinct(lb, lc, "lhs_batching_dimensions", "lhs_contracting_dimensions")
    check_dims_distinct(rb, rc, "rhs_batching_dimensions", "rhs_contracting_dimensions")
    if l is None or r is None:
        return
    for rank, dims, name in ((len(l), lb, "lhs_batching_dimensions"), (len(l), lc, "lhs_contracting_dimensions"),
                             (len(r), rb, "rhs_batching_dimensions"), (len(r), rc, "rhs_contracting_dimensions")):
        for x in dims:
            if x < 0 or x >= rank:
                fail(f"{name} value: {x} is out of range: [0, {rank})")
    for a, b in zip(lb, rb):
        if not compatible_dims(l[a], r[b]):
            fail("batching dimension sizes must match for lhs/rhs")
    for a, b in zip(lc, rc):
        if not compatible_dims(l[a], r[b]):
            fail("contracting dimension sizes must match for lhs/rhs")


@rule("stablehlo.dot_general")
def _dot_general(op):
    verify_precision_config(op)
    d = A.dot_dims(attr(op, "dot_dimension_numbers"))
    if d is None:
        return
    lb, rb = d["lhs_batching_dimensions"], d["rhs_batching_dimensions"]
    lc, rc = d["lhs_contracting_dimensions"], d["rhs_contracting_dimensions"]
    l, r = shape_of(op.operand("lhs").type), shape_of(op.operand("rhs").type)
    check_dot_general_dims(l, r, lb, rb, lc, rc)
    if l is None or r is None:
        return
    dims = [l[i] for i in lb] + [l[i] for i in range(len(l)) if i not in lb and i not in lc] + \
        [r[i] for i in range(len(r)) if i not in rb and i not in rc]
    result = op.result_named("result").type
    rs = shape_of(result)
    if rs is not None and (len(rs) != len(dims) or not all(compatible_dims(a, b) for a, b in zip(dims, rs))):
        fail(f"inferred shape '{q_dims(dims)}' is incompatible with return type of operation '{result}'")
    verify_dot_general_quant(op, rc)
    algorithm = op.attr("algorithm")
    if algorithm is not None:
        pc = A.precision_config(op.attr("precision_config")) or []
        if any(p != "DEFAULT" for p in pc):
            fail("must specify DEFAULT precision config when algorithm is set.")
        f = A.struct_fields(algorithm) or {}
        for key, msg in (("lhs_component_count", "lhs component count must be positive"),
                         ("rhs_component_count", "rhs component count must be positive"),
                         ("num_primitive_operations", "num primitive operations must be positive")):
            if isinstance(f.get(key), int) and f[key] < 1:
                fail(msg)


@rule("mhlo.ragged_dot", "chlo.ragged_dot")
def _ragged_dot(op):
    """Three modes, by the kind of the lhs ragged dimension (MHLO's checkRaggedDotConstraints):
    non-contracting [b,m,k] x [g,b,k,n] with group_sizes [b,g]; contracting and batch, where
    the rhs has no group dimension. group_sizes is [g] or [b..., x..., g]."""
    verify_precision_config(op)
    f = A.struct_fields(attr(op, "ragged_dot_dimension_numbers"))
    if f is None or len(op.operands) != 3:
        return
    lb, rb, lc, rc = (A.dims_field(f, k) for k in ("lhs_batching_dimensions", "rhs_batching_dimensions",
                                                    "lhs_contracting_dimensions", "rhs_contracting_dimensions"))
    ragged, groups = A.dims_field(f, "lhs_ragged_dimensions"), A.dims_field(f, "rhs_group_dimensions")
    l, r, g = (shape_of(t) for t in op.operand_types)
    check_dot_general_dims(l, r, lb, rb, lc, rc)
    if l is None or r is None or g is None:
        return
    if len(ragged) != 1:
        fail("There must be exactly one ragged dimension in the lhs.")
    rd = ragged[0]
    if not 0 <= rd < len(l):
        fail(f"Expects lhs_ragged_dim to be in range [0, lhs_rank) i.e. [0, {len(l)}). got: {rd}.")
    mode = "batch" if rd in lb else "contracting" if rd in lc else "non-contracting"
    if mode == "batch":
        prefix = lb[:lb.index(rd)]
    elif mode == "contracting":
        prefix = lb + lc[:lc.index(rd)]
    else:
        prefix = lb + [i for i in range(rd) if i not in lb and i not in lc]
    want = [l[i] for i in prefix]
    if len(g) != 1:
        if len(g) != len(want) + 1:
            fail(f"expected group_sizes to have rank {len(want) + 1}, got {len(g)}")
        if list(g[:-1]) != want:
            fail(f"group_sizes is expected to have shape [{', '.join(map(dim_text, want + [g[-1]]))}], got "
                 f"[{', '.join(map(dim_text, g))}]")
    for x in groups:
        if not 0 <= x < len(r):
            fail(f"Expects rhs_group_dim to be in range [0, rhs_rank) i.e. [0, {len(r)}). got: {x}.")
    check_dims_distinct(groups, rb, "rhs_group_dimensions", "rhs_batching_dimensions")
    check_dims_distinct(groups, rc, "rhs_group_dimensions", "rhs_contracting_dimensions")
    if mode != "non-contracting" and groups:
        fail("There must be zero group dimensions in the rhs when the ragged dimension is batch or contracting.")
    if mode == "non-contracting":
        if len(groups) != 1:
            fail("There must be exactly one group dimension in the rhs when the lhs ragged dimension is "
                 "non-contracting.")
        if not compatible_dims(g[-1], r[groups[0]]):
            fail(f"rhs group dimension is expected to have size={dim_text(g[-1])}, got {dim_text(r[groups[0]])}")
    dims = ([g[-1]] if mode == "contracting" else []) + [l[i] for i in lb] + \
        [l[i] for i in range(len(l)) if i not in lb and i not in lc] + \
        [r[i] for i in range(len(r)) if i not in rb and i not in rc and i not in groups]
    rs = shape_of(op.result_types[0]) if op.results else None
    if rs is not None and (len(rs) != len(dims) or not all(compatible_dims(a, b) for a, b in zip(dims, rs))):
        fail(f"inferred shape '{q_dims(dims)}' is incompatible with return type of operation '{op.result_types[0]}'")


# ---- shape manipulation --------------------------------------------------------------------
@rule("stablehlo.transpose")
def _transpose(op):
    rank1_attrs(op, "permutation")
    perm = ints_attr(op, "permutation")
    if perm is None:
        if "permutation" not in op.attributes:
            fail("requires attribute 'permutation'")
        return
    t, s = _first_operand_shape(op)
    if s is None:
        return
    if len(perm) != len(s):
        fail(f"TransposeOp operand rank {len(s)} does not match permutation size {len(perm)}")
    if sorted(perm) != list(range(len(s))):
        fail(f"attribute permutation must be a permutation of [{', '.join(map(str, range(len(s))))}] but got "
             f"{', '.join(map(str, perm))}")
    if op.results:
        verify_transpose_quant(op, perm)
    check_inferred(op, [tensor([s[p] for p in perm], elt(t))])


@rule("stablehlo.slice")
def _slice(op):
    rank1_attrs(op, "start_indices", "limit_indices", "strides")
    start, limit, strides = (ints_attr(op, n) for n in ("start_indices", "limit_indices", "strides"))
    if start is None or limit is None or strides is None:
        return
    t = op.operand("operand").type
    s = shape_of(t)
    if s is None:
        return
    if len(start) != len(s):
        fail(f"the number of elements in start_indices ({len(start)}) does not match the rank of the operand "
             f"({len(s)})")
    if len(limit) != len(s) or len(strides) != len(s):
        return
    b = bounds_of(t)
    out = []
    for i in range(len(s)):
        if start[i] < 0:
            fail(f"negative start index {start[i]} in dimension {i}")
        size = s[i] if s[i] is not None else (b[i] if b and i < len(b) else None)
        if size is not None and limit[i] > size:
            fail(f"limit index {limit[i]} is larger than dimension {'size' if s[i] is not None else 'bound'} "
                 f"{size} in dimension {i}")
        if start[i] > limit[i]:
            fail(f"start index {start[i]} is larger than limit index {limit[i]} in dimension {i}")
        if strides[i] <= 0:
            fail(f"stride must be positive but got {strides[i]} in dimension {i}")
        out.append(-(-(limit[i] - start[i]) // strides[i]))
    check_inferred(op, [tensor(out, elt(t))])


@rule("stablehlo.dynamic_slice")
def _dynamic_slice(op):
    rank1_attrs(op, "slice_sizes")
    sizes = ints_attr(op, "slice_sizes")
    if sizes is None:
        return
    t = op.operand("operand").type
    idx = [v.type for v in op.operands_named("start_indices")]
    if len(idx) != len(sizes):
        fail(f"has mismatched number of slice sizes ({len(sizes)}) and number of start indices ({len(idx)})")
    s = shape_of(t)
    if s is None:
        return
    if len(s) != len(idx):
        fail(f"has mismatched number of start indices ({len(idx)}) and the rank of operand ({len(s)})")
    if any(not same_el(idx[0], x) for x in idx[1:]):
        fail("start indices must have same element type")
    for i, z in enumerate(sizes):
        if z < 0:
            fail(f"has negative size index to dynamic slice: {z}")
        if s[i] is not None and z > s[i]:
            fail(f"has slice size {z} greater than dimension size {s[i]} in dimension {i} of operand")
    check_inferred(op, [tensor(sizes, elt(t))])


@rule("stablehlo.dynamic_update_slice")
def _dynamic_update_slice(op):
    t, u = op.operand("operand").type, op.operand("update").type
    idx = [v.type for v in op.operands_named("start_indices")]
    s, us = shape_of(t), shape_of(u)
    if s is None or us is None:
        return
    if len(us) != len(s):
        fail(f"update rank does not match operand rank: {len(us)} vs {len(s)}.")
    if len(idx) != len(s):
        fail(f"expects number of start_indices to match operand rank: {len(idx)} vs {len(s)}.")
    if any(not same_el(idx[0], x) for x in idx[1:]):
        fail("start indices must have same element type")
    for i, (a, b) in enumerate(zip(s, us)):
        if b is None:
            continue
        if a is not None and (b < 0 or b > a):
            fail(f"expects size at dimension {i} of update to be in range [0, {a}]. Got: {b}.")
    check_inferred(op, [t])


@rule("stablehlo.pad")
def _pad(op):
    rank1_attrs(op, "edge_padding_low", "edge_padding_high", "interior_padding")
    low, high, interior = (ints_attr(op, n) for n in ("edge_padding_low", "edge_padding_high", "interior_padding"))
    if low is None or high is None or interior is None:
        return
    t, pv = op.operand("operand").type, op.operand("padding_value").type
    s = shape_of(t)
    ps = shape_of(pv)
    if ps is not None and len(ps) != 0:
        fail(f"padding value type should be a rank-0 tensor, is rank {len(ps)}")
    if s is None:
        return
    if len(low) != len(s):
        fail(f"edge_padding_low length ({len(low)}) must match operand rank ({len(s)})")
    if len(high) != len(s):
        fail(f"edge_padding_high length ({len(high)}) must match operand rank ({len(s)})")
    if len(interior) != len(s):
        fail(f"interior_padding length ({len(interior)}) must match operand rank ({len(s)})")
    b = bounds_of(t)
    out = []
    for i, d in enumerate(s):
        if interior[i] < 0:
            fail(f"Interior padding cannot be negative: {interior[i]}")
        size = d if d is not None else (b[i] if b and i < len(b) else None)
        if size is None:
            out.append(None)
            continue
        r = size + low[i] + high[i] + max(size - 1, 0) * interior[i]
        if r < 0:
            fail(f"Padding result in negative {'size' if d is not None else 'bound'} for dimension {i}")
        out.append(r if d is not None else None)
    check_inferred(op, [tensor(out, elt(t))])


@rule("stablehlo.dynamic_pad")
def _dynamic_pad(op):
    if len(op.operands) != 5 or not op.results:
        return
    s = shape_of(op.operand("operand").type)
    low_value, high_value = op.operand("edge_padding_low"), op.operand("edge_padding_high")
    ls = shape_of(low_value.type)
    if s is None or ls is None:
        return
    if ls and ls[0] is not None and ls[0] != len(s):
        fail(f"padding operands size ({ls[0]}) must match operand rank ({len(s)})")
    interior = constant_ints(op.operand("interior_padding"))
    if interior is not None and any(v < 0 for v in interior):
        fail(f"interior_padding must be non-negative, but got {', '.join(map(str, interior))}")
    rs = shape_of(op.result_named("result").type)
    low, high = constant_ints(low_value), constant_ints(high_value)
    if interior is None or low is None or high is None or rs is None or None in s or None in rs:
        return
    for i, (a, o, lo, hi, it) in enumerate(zip(s, rs, low, high, interior)):
        want = a + lo + max(a - 1, 0) * it + hi
        if o != want:
            fail(f"expected output dimension at index {i} to equal {want}, but got {o}")


@rule("stablehlo.reshape")
def _reshape(op):
    a, b = op.operand("operand").type, op.result_named("result").type
    if shape_of(b) is not None and None in shape_of(b) and not _static_or_single_bounded(b):
        fail(f"result #0 must be statically shaped or single bounded dimension tensor, but got '{b}'")
    if not (is_quant(a) or is_quant(b)) and is_tensor(a) and is_tensor(b) and not compatible_elements(a, b):
        fail(f"expects operand and result to have compatible element type. Got: '{a}' and '{b}'")
    na, nb = getattr(a, "num_elements", None), getattr(b, "num_elements", None)
    if isinstance(a, T.RankedTensorType) and a.has_static_shape and isinstance(b, T.RankedTensorType) \
            and b.has_static_shape and na != nb:
        fail(f"number of output elements ({nb}) doesn't match expected number of elements ({na})")
    verify_reshape_quant(op)


@rule("stablehlo.dynamic_reshape")
def _dynamic_reshape(op):
    if len(op.operands) != 2 or not op.results:
        return
    shape = op.operand("output_shape")
    a, st, b = op.operand("operand").type, shape.type, op.result_types[0]
    ss = shape_of(st)
    if ss is not None and None in ss:
        fail(f"operand #1 must be statically shaped 1-dimensional tensor of index or integer values, "
             f"but got '{st}'")
    if not (is_quant(a) or is_quant(b)) and not compatible_elements(a, b):
        fail(f"expects operand and result to have compatible element type. Got: '{a}' and '{b}'")
    if isinstance(a, T.RankedTensorType) and a.has_static_shape and isinstance(b, T.RankedTensorType) \
            and b.has_static_shape and a.num_elements != b.num_elements:
        fail(f"number of output elements ({b.num_elements}) doesn't match expected number of elements "
             f"({a.num_elements})")
    shape_operand_check(op, shape, b)
    rs = shape_of(b)
    if ss and rs is not None and ss[0] is not None and ss[0] != len(rs):
        fail("result should have a rank equal to the number of elements in output_shape")
    vals = constant_ints(shape)
    if vals is not None and isinstance(a, T.RankedTensorType) and a.has_static_shape:
        n = 1
        for v in vals:
            n *= v
        if n != a.num_elements:
            fail(f"output_shape is incompatible with input type of operation: input has {a.num_elements} "
                 f"elements, but output_shape has {n}")


# ---- elementwise -----------------------------------------------------------------------
def _bounded_compatible(inferred, actual) -> bool:
    """A static dimension of `actual` must fit the bound of a dynamic one of `inferred`."""
    si, sa, b = shape_of(inferred), shape_of(actual), bounds_of(inferred)
    if si is None or sa is None or b is None or len(si) != len(sa) or len(b) != len(si):
        return True
    return all(not (di is None and bd is not None and da is not None and da > bd)
               for di, da, bd in zip(si, sa, b))


def check_inferred_bounded(op, inferred) -> None:
    if list(inferred) == op.result_types:
        return  # exactly the inferred types: compatible, and within their own bounds
    check_inferred(op, inferred)
    for a, b in zip(inferred, op.result_types):
        if not _bounded_compatible(a, b):
            fail(f"inferred type(s) {quoted(inferred)} are incompatible with return type(s) of operation "
                 f"{quoted(op.result_types)}")


def same_shapes(types) -> bool:
    ranked = [shape_of(t) for t in types if shape_of(t) is not None]
    return all(len(s) == len(ranked[0]) and all(compatible_dims(a, b) for a, b in zip(s, ranked[0]))
               for s in ranked)


def _real_of(e):
    return e.element if isinstance(e, T.ComplexType) else e


def _with_elt(t, e):
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, e, t.encoding)
    if isinstance(t, T.UnrankedTensorType):
        return T.UnrankedTensorType(e)
    return t


_ACCURACY_MODES = ("DEFAULT", "HIGHEST", "TOLERANCE")


def verify_result_accuracy(op) -> None:
    a = op.attr("result_accuracy")
    if a is None:
        return
    text = str(a)
    m = re.search(r"mode\s*=\s*#\w+\.result_accuracy_mode<\s*(\w+)\s*>", text)
    mode = m.group(1) if m else "DEFAULT"
    nums = {}
    for k in ("atol", "rtol", "ulps"):
        mm = re.search(k + r"\s*=\s*(-?[\d.eE+-]+)", text)
        nums[k] = float(mm.group(1)) if mm else 0.0
    if mode in ("DEFAULT", "HIGHEST") and any(v != 0 for v in nums.values()):
        fail(f"Invalid tolerances for ResultAccuracyAttr with mode {mode}, must be all zero.")
    if any(v < 0 for v in nums.values()):
        fail("Negative tolerance")


def _elementwise(op):
    types = op.operand_types + op.result_types
    if types and types.count(types[0]) == len(types):
        return  # one type throughout (the common case): none of the checks below can fail
    if not same_shapes(types):
        fail("requires the same shape for all operands and results")
    tensors = [t for t in types if is_tensor(t)]
    if any(not _bounded_compatible(a, b) for a in tensors for b in tensors):
        fail("requires compatible types for all operands and results")
    if tensors and not all(compatible_elements(tensors[0], t) for t in tensors):
        if not any(is_quant(t) for t in tensors):
            fail("requires compatible types for all operands and results")


_UNARY_SAME = ("ceil", "count_leading_zeros", "floor", "negate", "not", "popcnt", "round_nearest_afz",
               "round_nearest_even", "sign", "cbrt", "cosine", "exponential", "exponential_minus_one", "log",
               "log_plus_one", "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh",
               "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "erf")
_BINARY_SAME = ("add", "and", "atan2", "divide", "maximum", "minimum", "multiply", "or", "power", "remainder",
                "shift_left", "shift_right_arithmetic", "shift_right_logical", "subtract", "xor")


def _compatible_with_result(op) -> None:
    """HLO_CompatibleOperandsAndResultType, a trait checked before the shape trait: every type is
    compatible with the result's (shapes with `?`, quantized types by storage and expressed type)."""
    types = op.operand_types + op.result_types
    if not op.results or types.count(types[0]) == len(types):
        return
    r = op.result_types[0]
    if not all(compatible_shapes(t, r) and compatible_elements(t, r) for t in types):
        fail("requires compatible types for all operands and results")


def _same_type_op(op):
    verify_result_accuracy(op)
    if op.name == "stablehlo.add":  # the one without the trait: its own quantization rules instead
        _elementwise(op)
        if any(is_quant(t) for t in op.operand_types + op.result_types):
            verify_binary_quant(op)
    else:
        _compatible_with_result(op)
        _elementwise(op)
    if op.operands and op.results:
        check_inferred_bounded(op, [op.operand_types[0]])


for _n in _UNARY_SAME + _BINARY_SAME:
    VERIFIERS[f"stablehlo.{_n}"] = _same_type_op
    VERIFIERS[f"mhlo.{_n}"] = _same_type_op


@rule("stablehlo.abs")
def _abs(op):
    t = op.operand("operand").type
    check_inferred(op, [_with_elt(t, _real_of(elt(t)))])


@rule("stablehlo.real", "stablehlo.imag")
def _real(op):
    if not same_shapes(op.operand_types + op.result_types):
        fail("requires the same shape for all operands and results")
    t = op.operand("operand").type
    check_inferred(op, [_with_elt(t, _real_of(elt(t)))])


@rule("stablehlo.complex")
def _complex(op):
    if not same_shapes(op.operand_types + op.result_types):
        fail("requires the same shape for all operands and results")
    t = op.operand("lhs").type
    if elt(t) != elt(op.operand("rhs").type):
        fail("requires the same element type for all operands")
    check_inferred(op, [_with_elt(t, T.ComplexType(elt(t)))])


@rule("stablehlo.is_finite")
def _is_finite(op):
    if not same_shapes(op.operand_types + op.result_types):
        fail("all non-scalar operands/results must have the same shape and base type")
    check_inferred(op, [_with_elt(op.operand("operand").type, T.i1)])


_DIRECTIONS = {"EQ", "NE", "GE", "GT", "LE", "LT"}


@rule("stablehlo.compare")
def _compare(op):
    d = op.attr("comparison_direction")
    if d is not None and A.enum_word(d) not in _DIRECTIONS:
        fail("attribute 'comparison_direction' failed to satisfy constraint: Which comparison operation to "
             "perform.")
    if not same_shapes(op.operand_types + op.result_types):
        fail("requires the same shape for all operands and results")
    lhs = op.operand("lhs").type
    if not compatible_elements(lhs, op.operand("rhs").type):
        fail("requires compatible types for all operands")
    check_inferred(op, [_with_elt(lhs, T.i1)])


@rule("stablehlo.select")
def _select(op):
    p, a, b = (op.operand(n).type for n in ("pred", "on_true", "on_false"))
    if not compatible_shape_and_el(a, b):
        fail("requires compatible types for non-predicate operands")
    ps = shape_of(p)
    if ps is not None and len(ps) != 0 and not (rank_of(a) in (None, len(ps)) and compatible_shapes(p, a)):
        fail("requires the same shape for all operands")
    check_inferred(op, [a])


@rule("stablehlo.bitcast_convert")
def _bitcast_convert(op):
    a, b = op.operand("operand").type, op.result_named("result").type
    ea, eb = elt(a), elt(b)
    if isinstance(ea, T.ComplexType) != isinstance(eb, T.ComplexType):
        fail(f"cannot convert between real and complex types, but got: '{a}' and '{b}'")
    wa, wb = bitwidth(ea), bitwidth(eb)
    sa, sb = shape_of(a), shape_of(b)
    if wa is None or wb is None or sa is None or sb is None:
        return
    if wa < wb:
        small, big = sa, sb
    else:
        small, big = sb, sa
    if wa != wb:
        if len(small) != len(big) + 1:
            fail(f"rank of smaller element type ({len(small)}) should be 1 more than rank of larger element type "
                 f"({len(big)}), but {len(small)} != {len(big)} + 1.")
        prefix = small[:-1]
        sw, bw = min(wa, wb), max(wa, wb)
        if small[-1] is not None and small[-1] * sw != bw:
            fail(f"requires compatible bit widths. Got: '{a}' and '{b}', but {sw} * {small[-1]} != {bw}.")
    else:
        prefix = small
    for x, y in zip(prefix, big):
        if not compatible_dims(x, y):
            fail(f"operand and result shapes must match except for the innermost dimension of the shape with "
                 f"the smaller element type. Got: '{a}' and '{b}'.")


@rule("stablehlo.get_tuple_element")
def _get_tuple_element(op):
    nonneg_attr(op, "index", 32)
    tt = op.operand("operand").type
    if not isinstance(tt, T.TupleType):
        return
    i = int_attr(op, "index", 0)
    if i >= len(tt.types):
        fail(f"index {i} is out of bounds of operand with size {len(tt.types)}")
    check_inferred(op, [tt.types[i]])


@rule("stablehlo.tuple")
def _tuple(op):
    check_inferred(op, [T.TupleType(tuple(op.operand_types))])


def _dim_in_bounds(t, dim):
    if dim < 0:
        fail(f"requires non-negative dimension attribute; found ({dim})")
    r = rank_of(t)
    if r is not None and dim >= r:
        fail(f"requires dimension attribute in range [0, {r}); found ({dim})")


@rule("stablehlo.get_dimension_size")
def _get_dimension_size(op):
    nonneg_attr(op, "dimension")
    _dim_in_bounds(op.operand("operand").type, int_attr(op, "dimension", 0))


@rule("stablehlo.set_dimension_size")
def _set_dimension_size(op):
    nonneg_attr(op, "dimension")
    s = shape_of(op.operand("size").type)
    if s is not None and len(s) != 0:
        fail("size operand should be of rank-0")
    _dim_in_bounds(op.operand("operand").type, int_attr(op, "dimension", 0))


@rule("stablehlo.iota")
def _iota(op):
    nonneg_attr(op, "iota_dimension")
    r = rank_of(op.result_named("result").type)
    if r == 0:
        fail("does not support scalars.")
    d = int_attr(op, "iota_dimension", 0)
    if r is not None and d >= r:
        fail("iota dimension cannot go beyond the output rank.")


@rule("stablehlo.dynamic_iota")
def _dynamic_iota(op):
    nonneg_attr(op, "iota_dimension")
    result = op.result_named("result").type
    r = rank_of(result)
    d = int_attr(op, "iota_dimension", 0)
    if r is not None and d >= r:
        fail("iota dimension cannot go beyond the output rank.")
    shape_operand_check(op, op.operand("output_shape"), result)


@rule("stablehlo.reverse")
def _reverse(op):
    rank1_attrs(op, "dimensions")
    dims = ints_attr(op, "dimensions")
    if dims is None:
        return
    if len(set(dims)) != len(dims):
        fail(f"dimensions should be unique. Got: {', '.join(map(str, dims))}")
    r = rank_of(op.operand("operand").type)
    for d in dims:
        if d < 0:
            fail(f"all dimensions should be non-negative. Got dimension: {d}.")
        if r is not None and d >= r:
            fail(f"all dimensions should be between [0, {r}). Got dimension: {d}.")


@rule("stablehlo.sort")
def _sort(op):
    if not op.operands:
        return
    if not same_shapes(op.operand_types + op.result_types):
        fail("requires the same shape for all operands and results")
    dim = int_attr(op, "dimension", -1)
    r = rank_of(op.operand_types[0])
    if r is not None and (dim < -r or dim >= r):
        fail(f"dimension attribute value must be in range [-{r}, {r}), but found {dim}")
    if not op.regions or not op.regions[0].blocks:
        return
    block = op.regions[0].blocks[0]
    n = len(op.operands)
    if len(block.arguments) != 2 * n:
        fail(f"comparator block should have {2 * n} arguments")
    for i, t in enumerate(op.operand_types):
        want = tensor((), elt(t))
        for j in (2 * i, 2 * i + 1):
            if block.arguments[j].type != want:
                fail(f"comparator block argument #{j} should be of type '{want}' but got "
                     f"'{block.arguments[j].type}'")
    term = terminator(op.regions[0])
    if term is not None:
        if len(term.operands) != 1:
            fail(f"comparator must return single output but got {len(term.operands)}")
        rt = term.operands[0].type
        if rank_of(rt) != 0 or elt(rt) != T.i1:
            fail(f"comparator must return tensor<i1> but got '{rt}'")
    got = op.result_types
    if len(got) != n or not all(compatible(a, b) for a, b in zip(op.operand_types, got)):
        raise VerifyError(f"inferred type(s) {quoted(op.operand_types)} are incompatible with return type(s) of "
                          f"operation {quoted(got)}", also=["failed to infer returned types"])


def _channel_type(op) -> Optional[int]:
    f = A.struct_fields(op.attr("channel_handle"))
    return A.int_field(f, "type", 0) if f else None


@rule("stablehlo.send")
def _send(op):
    host = bool_attr(op, "is_host_transfer")
    ct = _channel_type(op)
    if ct is None:
        return
    if not host and ct != 1:
        fail("channel_type should be DEVICE_TO_DEVICE when is_host_transfer is false")
    if host and ct != 2:
        fail("channel_type should be DEVICE_TO_HOST when is_host_transfer is true")


@rule("stablehlo.recv")
def _recv(op):
    host = bool_attr(op, "is_host_transfer")
    ct = _channel_type(op)
    if ct is not None:
        if not host and ct != 1:
            fail("channel_type should be DEVICE_TO_DEVICE when is_host_transfer is false")
        if host and ct != 3:
            fail("channel_type should be HOST_TO_DEVICE when is_host_transfer is true")
    rs = op.result_types
    if not rs:
        fail("result is expected to be at least of size 1, but got 0")
    for t in rs[:-1]:
        if not is_tensor(t):
            fail(f"everything but the last element of result types is expected to be of tensor type, but got "
                 f"'{t}'")
    if not is_token(rs[-1]):
        fail(f"last element of result types is expected to be of token type, but got '{rs[-1]}'")


@rule("stablehlo.infeed")
def _infeed(op):
    rs = op.result_types
    if not rs:
        fail("result is expected to be at least of size 1, but got 0")
    for t in rs[:-1]:
        if not is_tensor(t):
            fail(f"all elements of result types, except the last element, are expected to be of tensor type, "
                 f"but got '{t}'")
    if not is_token(rs[-1]):
        fail(f"last element of result types is expected to be of token type, but got '{rs[-1]}'")
    layout = op.attr("layout")
    if layout is None:
        return
    if not isinstance(layout, ArrayAttr):
        fail("layout-attribute expected to be of array-type.")
    if len(layout.items) != len(rs) - 1:
        fail(f"layout-attribute size must be {len(rs) - 1} (which is the number of op-results - 1 (for token "
             f"result)), but got {len(layout.items)}")
    for child in layout.items:
        if not isinstance(child, ArrayAttr):
            # a diagnostic prints an attribute whole: `0 : i64`, where an array or dictionary elides i64
            text = f"{child.value} : {child.type}" if isinstance(child, IntegerAttr) and child.type != T.i1 else child
            fail(f"layout-attribute expected to have elements of type array, but got {text}")
        for leaf in child.items:
            if not isinstance(leaf, IntegerAttr):
                fail(f"layout-attribute's leaf elements are expected to be of type integer, but got {leaf}")


@rule("stablehlo.rng_bit_generator")
def _rng_bit_generator(op):
    a, b = op.operand("initial_state").type, op.result_named("output_state").type
    if not (rank_of(a) in (None, rank_of(b)) and compatible_shapes(a, b)) and rank_of(b) is not None:
        fail(f"output state shape must be compatible with initial state shape. Got: '{a}' and '{b}'")


@rule("stablehlo.uniform_quantize")
def _uniform_quantize(op):
    re_ = qtype(op.result_named("result").type)
    if re_ is None:
        return
    oe = elt(op.operand("operand").type)
    want = expressed(oe)
    got = T.scalar_type_from_name(re_.expressed)
    if got is not None and want != got:
        fail(f"Expressed type of result expected to be '{want}', but got '{got}'")


@rule("stablehlo.constant")
def _constant(op):
    v = op.attr("value")
    if not op.results or v is None:
        return
    rt = op.result_types[0]
    vt = getattr(v, "type", None)
    if isinstance(vt, T.RankedTensorType) and not vt.has_static_shape:
        fail("elements literal type must have static shape")
    if isinstance(rt, T.RankedTensorType) and not rt.has_static_shape:
        fail(f"result #0 must be statically shaped tensor of any type values, but got '{rt}'")
    if isinstance(vt, T.Type) and vt != rt and not (is_quant(rt) and compatible_shapes(vt, rt)
                                                   and rank_of(vt) == rank_of(rt)
                                                   and storage(elt(rt)) == elt(vt)):
        fail(f"inferred type(s) '{vt}' are incompatible with return type(s) of operation '{rt}'")


# ---- reductions -------------------------------------------------------------------------
@rule("stablehlo.reduce")
def _reduce(op):
    n = len(op.operands) // 2
    if n == 0 or not op.regions or not op.regions[0].blocks:
        return
    inputs, inits = op.operand_types[:n], op.operand_types[n:]
    dims = ints_attr(op, "dimensions")
    if dims is None:
        return
    shapes = [shape_of(t) for t in inputs]
    if any(s is None for s in shapes):
        return
    for i in range(1, n):
        if not (len(shapes[i]) == len(shapes[0]) and compatible_shapes(inputs[0], inputs[i])):
            fail(f"expects all inputs to have compatible shapes. Shape at input-index {i} is not compatible with "
                 f"shape at input-index 0")
    rank = len(shapes[0])
    seen = set()
    for d in dims:
        if d < 0 or d >= rank:
            fail(f"Out-of-bounds dimension {d}, expected to be in range [0, {rank})")
        if d in seen:
            fail(f"Duplicate reduction dimension: {d}")
        seen.add(d)
    kept = [shapes[0][i] for i in range(rank) if i not in seen]
    verify_reducer(op.regions[0].blocks[0], inputs, inits, kept)
    term = terminator(op.regions[0])
    if term is not None and len(term.operands) == n:
        check_inferred(op, [tensor(kept, elt(v.type)) for v in term.operands])


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


@rule("stablehlo.reduce_window")
def _reduce_window(op):
    if "window_dimensions" not in op.attributes:
        fail("requires attribute 'window_dimensions'")
    rank1_attrs(op, "window_dimensions", "window_strides", "base_dilations", "window_dilations")
    n = len(op.operands) // 2
    if n == 0:
        return
    inputs, inits = op.operand_types[:n], op.operand_types[n:]
    window = ints_attr(op, "window_dimensions")
    shapes = [shape_of(t) for t in inputs]
    if window is None or any(s is None for s in shapes):
        return
    for i in range(1, n):
        if not (len(shapes[i]) == len(shapes[0]) and compatible_shapes(inputs[0], inputs[i])):
            fail(f"expects all inputs to have compatible shapes. Shape at input-index {i} is not compatible with "
                 f"shape at input-index 0")
    pads = padding_pairs(op)
    for t in inputs:
        if rank_of(t) != len(window):
            fail(f"expects window-dimensions size == input rank, but got window-dimensions size: {len(window)} "
                 f"and input: '{t}' with rank = {rank_of(t)}.")
    win = verify_window(window, ints_attr(op, "window_strides"), pads, ints_attr(op, "base_dilations"),
                        ints_attr(op, "window_dilations"))
    if op.regions and op.regions[0].blocks:
        verify_reducer(op.regions[0].blocks[0], inputs, inits, window)
        term = terminator(op.regions[0])
        if term is not None and len(term.operands) == n:
            check_inferred(op, [tensor(window_output(s, win), elt(v.type)) for s, v in zip(shapes, term.operands)])


@rule("stablehlo.select_and_scatter")
def _select_and_scatter(op):
    if len(op.operands) != 3 or len(op.regions) != 2:
        return
    ot, st, it = op.operand_types
    sel = op.regions[0].blocks[0] if op.regions[0].blocks else None
    if sel is None:
        return
    if len(sel.arguments) != 2:
        fail(f"expects the select-region to take 2 parameters, but takes {len(sel.arguments)}")
    want = tensor((), elt(ot))
    for i, a in enumerate(sel.arguments):
        if not compatible_shape_and_el(want, a.type, True):
            fail(f"expects the type of select-region's parameter at index {i} to be '{want}', but got '{a.type}'")
    term = terminator(op.regions[0])
    if term is not None:
        if len(term.operands) != 1:
            fail(f"expects select-region to return single value, but got: {len(term.operands)}")
        rt = term.operands[0].type
        if not is_ranked(rt) or elt(rt) != T.i1 or rank_of(rt) != 0:
            fail(f"expects the return-type of select-region to be tensor<i1>, but got: '{rt}'")
    if op.regions[1].blocks:
        verify_reducer(op.regions[1].blocks[0], [tensor((), elt(st))], [it], [])
    window = ints_attr(op, "window_dimensions") or []
    r = rank_of(ot)
    if r is None:
        return
    if r != len(window):
        fail(f"expects window-dimensions size == operand rank, but got window-dimensions size: {len(window)} and "
             f"operand-type: '{ot}' with rank = {r}.")
    pads = padding_pairs(op)
    win = verify_window(window, ints_attr(op, "window_strides"), pads, None, None)
    wt = tensor(window_output(shape_of(ot), win), elt(ot))
    if not compatible_shape_and_el(wt, st, True):
        fail(f"expects source-type to be '{wt}', but got'{st}'")
    sc = terminator(op.regions[1])
    if sc is not None and sc.operands:
        check_inferred(op, [_with_elt(ot, elt(sc.operands[0].type))])


@rule("stablehlo.map")
def _map(op):
    if not op.regions or not op.regions[0].blocks:
        fail("expect non-empty region")
    block = op.regions[0].blocks[0]
    args = block.arguments
    if len(op.operands) != len(args):
        fail(f"expects number of operands to match the arity of map computation, but got: {len(op.operands)} and "
             f"{len(args)}")
    for i, a in enumerate(args):
        if rank_of(a.type) != 0:
            fail(f"computation arguments must be 0-rank tensor, but got: arg #{i} of type '{a.type}'")
        oe = elt(op.operand_types[i])
        if elt(a.type) != oe:
            fail(f"element type of operands and computation arguments must match, but got: '{oe}' and "
                 f"'{elt(a.type)}'")
    term = terminator(op.regions[0])
    outs = [v.type for v in term.operands] if term is not None else []
    if len(outs) != 1:
        fail(f"computation must return single output, but got: {len(outs)}")
    if rank_of(outs[0]) != 0:
        fail(f"computation must return 0-rank tensor, but got: '{outs[0]}'")
    dims = ints_attr(op, "dimensions") or []
    if any(d != i for i, d in enumerate(dims)):
        fail(f"requires monotonically increasing dimension numbers, but got: {', '.join(map(str, dims))}")
    shape = None
    for t in op.operand_types:
        s = shape_of(t)
        if s is None:
            return
        if len(dims) != len(s):
            fail(f"applied to a subset of dimensions currently not supported: operand dimensions = {len(s)}, "
                 f"requested map dimensions size = {len(dims)}")
        shape = s
    if shape is not None:
        check_inferred(op, [tensor(shape, elt(outs[0]))])


# ---- batch norm, fft, triangular solve -------------------------------------------------------
def _batch_norm(op, multi, single, n_results_single):
    nonneg_attr(op, "feature_index")
    fi = int_attr(op, "feature_index", 0)
    mt = [t for t in multi]
    st = [t for t in single]

    def pairwise(ts):
        return all(rank_of(a) in (None, rank_of(b)) and compatible_shapes(a, b) for a in ts for b in ts
                   if rank_of(b) is not None)
    if not pairwise(mt):
        fail("expects multi-dimensional operands to have compatible shapes.")
    if not pairwise(st):
        fail("expects single-dimensional operands to have compatible shapes.")
    ms = shape_of(mt[0])
    if ms is None:
        return
    if fi >= len(ms):
        fail(f"expects featureIndex to be smaller than the rank of multi-dimensional operands; got featureIndex "
             f"{fi}, and rank {len(ms)}.")
    ss = shape_of(st[0])
    if ss is None or not ss:
        return
    if not compatible_dims(ss[0], ms[fi]):
        fail(f"expects the size of single-dimensional operands to be compatible with feature count, but the size "
             f"of single-dimensional operands is {dim_text(ss[0])} and the feature count is {dim_text(ms[fi])}.")
    inferred = [mt[0]] + [tensor([ms[fi]], elt(mt[0]))] * n_results_single
    check_inferred(op, inferred)


@rule("stablehlo.batch_norm_grad")
def _bn_grad(op):
    if len(op.operands) == 5:
        o = op.operand_types
        if op.results and len({str(elt(t)) for t in [o[0]] + op.result_types}) > 1:
            fail("failed to verify that all of {operand, grad_operand, grad_scale, grad_offset} have same "
                 "element type")
        _batch_norm(op, [o[0], o[4]], [o[1], o[2], o[3]], 2)


@rule("stablehlo.batch_norm_training")
def _bn_training(op):
    if len(op.operands) == 3:
        o = op.operand_types
        _batch_norm(op, [o[0]], [o[1], o[2]], 2)


@rule("stablehlo.batch_norm_inference")
def _bn_inference(op):
    if len(op.operands) == 5:
        o = op.operand_types
        _batch_norm(op, [o[0]], list(o[1:]), 0)


@rule("stablehlo.fft")
def _fft(op):
    length = ints_attr(op, "fft_length")
    kind = A.enum_word(op.attr("fft_type"))
    if length is None:
        return
    n = len(length)
    if n > 3 or n < 1:
        fail(f"rank must be between 1 and 3, but got {n}.")
    t = op.operand("operand").type
    e = elt(t)
    rfft, irfft = kind == "RFFT", kind == "IRFFT"
    if rfft:
        if e not in (T.f32, T.f64):
            fail(f"RFFT requires f32 or f64 input type, but is given '{e}'.")
    elif not isinstance(e, T.ComplexType):
        fail(f"FFT/IFFT/IRFFT take a complex tensor as input, but is given '{t}'.")
    re_ = T.ComplexType(e) if rfft else (e.element if irfft else e)
    s = shape_of(t)
    if s is None:
        return
    if len(s) < n:
        fail(f"operand rank must not be less than fft rank of {n} for operand of type '{t}'.")
    out = list(s)
    if rfft:
        for a, b in zip(s[-n:], length):
            if not compatible_dims(a, b):
                fail(f"RFFT requires innermost dimensions to be compatible with fft_length. Got: {raw_dims(s)} "
                     f"but wanted {', '.join(map(str, length))}.")
        if length[-1] != 0:
            out[-1] = length[-1] // 2 + 1
    if irfft:
        for a, b in zip(s[-n:][:-1], length):
            if not compatible_dims(a, b):
                fail(f"IRFFT requires non-final dimensions to be compatible with fft_length. Got: {raw_dims(s)} "
                     f"but wanted {', '.join(map(str, length))}, and {KDYN if a is None else a} != {b}.")
        last = s[-1]
        if (not compatible_dims(last, 0) or length[-1] != 0) and not compatible_dims(last, length[-1] // 2 + 1):
            fail(f"IRFFT requires innermost dimension to be compatible with fft_length[-1]/2+1. Got: {last} but "
                 f"fft_length is {', '.join(map(str, length))}.")
        out[-1] = length[-1]
    check_inferred(op, [tensor(out, re_)])


@rule("stablehlo.triangular_solve")
def _triangular_solve(op):
    if len(op.operands) != 2:
        return
    a, b = op.operand_types
    sa, sb = shape_of(a), shape_of(b)
    if sa is None or sb is None:
        return
    if len(sa) < 2:
        fail(f"operand 'a' must have rank >= 2, but got '{a}'")
    if not compatible_dims(sa[-2], sa[-1]):
        fail(f"two minor dimensions of operand 'a' must be compatible, but got '{a}'")
    if len(sa) != len(sb):
        fail(f"operands must have equal rank, but got '{a}' and '{b}'")
    left = bool_attr(op, "left_side")
    if not compatible_dims(sa[-1], sb[-2 if left else -1]):
        fail(f"shared dimension of operands 'a' and 'b' must be compatible, but got '{a}' and '{b}'")
    if not all(compatible_dims(x, y) for x, y in zip(sa[:-2], sb[:-2])):
        fail(f"batch dimensions of the operands must be compatible, but got '{a}' and '{b}'")
    ta = A.enum_word(op.attr("transpose_a"))
    if ta is not None and ta not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        fail("Invalid transpose option value for triangular solve")
    check_inferred(op, [b])


# ---- convolution -------------------------------------------------------------------------
def _quant_conv_common(lhs_e, rhs_e, res_e) -> None:
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


def _quant_axis(e) -> Optional[int]:
    q = uniform(e)
    return None if q is None else q.axis


@rule("stablehlo.convolution", "stablehlo.dynamic_conv")
def _convolution(op):
    d = A.conv_dims(op.attr("dimension_numbers"))
    if d is None or len(op.operands) < 2:
        return
    lt, rt = op.operand_types[0], op.operand_types[1]
    ls, rs = shape_of(lt), shape_of(rt)
    if ls is None or rs is None:
        return
    n = len(ls)
    if n < 2:
        fail(f"expects convolution arguments to have >= 2 dimensions. Got: '{lt}' and '{rt}'.")
    if n != len(rs):
        fail(f"expects convolution arguments to have same number of dimensions. Got: '{lt}' and '{rt}'.")
    if not (is_quant(lt) or is_quant(rt)) and not compatible_elements(lt, rt):
        fail(f"expects lhs and rhs to have compatible element type. Got: {elt(lt)} and {elt(rt)}")
    ns = len(d.input_spatial)
    if ns != len(d.kernel_spatial) or ns != len(d.output_spatial):
        fail(f"expects the same size for input, kernel and output spatial-dimensions, but got {ns}, "
             f"{len(d.kernel_spatial)}, and {len(d.output_spatial)} resp.")
    ins = [d.input_batch, d.input_feature] + d.input_spatial
    ker = [d.kernel_input_feature, d.kernel_output_feature] + d.kernel_spatial
    out = [d.output_batch, d.output_feature] + d.output_spatial
    if not all(0 <= x < n for x in ins + ker + out):
        fail(f"expects input, kernel, and output dimension-numbers to be in-range [0, {n}).")
    for name, dims in (("input", ins), ("kernel", ker), ("output", out)):
        if len(set(dims)) != len(dims):
            fail(f"expects {name} dimension-numbers to be unique, got {{{', '.join(map(str, dims))}}}.")
    fgc = int_attr(op, "feature_group_count", 1)
    bgc = int_attr(op, "batch_group_count", 1)
    if fgc <= 0:
        fail("attribute 'feature_group_count' failed to satisfy constraint: 64-bit signless integer attribute "
             "whose value is positive")
    if bgc <= 0:
        fail("attribute 'batch_group_count' failed to satisfy constraint: 64-bit signless integer attribute "
             "whose value is positive")
    if bgc > 1 and fgc > 1:
        fail(f"expects batch_group_count and feature_group_count not to be both greater than 1. Got {bgc} and "
             f"{fgc} resp.")
    in_f, in_b = ls[d.input_feature], ls[d.input_batch]
    k_in, k_out = rs[d.kernel_input_feature], rs[d.kernel_output_feature]
    if in_b is not None and in_b % bgc != 0:
        fail(f"expects input batch dimension ({in_b}) to be divisible by batch_group_count. Got batch_group_count "
             f"= {bgc}.")
    if in_f is not None:
        if in_f % fgc != 0:
            fail(f"expects input feature dimension ({in_f}) to be a multiple of feature_group_count. Got "
                 f"feature_group_count = {fgc}.")
        if k_in is not None and in_f // fgc != k_in:
            fail(f"expects input feature dimension ({in_f}) / feature_group_count = kernel input feature dimension "
                 f"({k_in}). Got feature_group_count = {fgc}.")
    if k_out is not None:
        if k_out % bgc != 0:
            fail(f"expects output feature dimension size ({k_out}) to be a multiple of batch_group_count. Got "
                 f"batch_group_count = {bgc}.")
        if k_out % fgc != 0:
            fail(f"expects kernel output feature dimension ({k_out}) to be divisible by feature_group_count. For "
                 f"feature_group_count = {fgc}.")
    pc = op.attr("precision_config")
    if isinstance(pc, ArrayAttr) and len(pc.items) > 2:
        fail("expects precision config to be empty or have <= 2 elements.")
    if n != ns + 2 and op.name.startswith("stablehlo."):
        fail(f"expects convolution arguments to have {ns + 2} dimensions. Got: {n}")
    window = [rs[k] for k in d.kernel_spatial]
    if op.name.endswith("dynamic_conv"):
        return
    pads = padding_pairs(op)
    win = verify_window(window, ints_attr(op, "window_strides"), pads, ints_attr(op, "lhs_dilation"),
                        ints_attr(op, "rhs_dilation"), ints_attr(op, "window_reversal"))
    dims = [None] * n
    spatial = window_output([ls[k] for k in d.input_spatial], win)
    for k, v in zip(d.output_spatial, spatial):
        dims[k] = v
    dims[d.output_batch] = None if in_b is None else in_b // bgc
    dims[d.output_feature] = k_out
    if op.results:
        res = op.result_types[0]
        r = shape_of(res)
        if r is not None and (len(r) != len(dims) or not all(compatible_dims(a, b) for a, b in zip(dims, r))):
            fail(f"inferred shape '{q_dims(dims)}' is incompatible with return type of operation '{res}'")
        if any(is_quant(t) for t in (lt, rt, res)):
            ax = _quant_axis(elt(rt))
            if ax is not None and ax != d.kernel_output_feature:
                fail("quantization dimension of rhs should be same with kernel_output_feature_dimension")
            ax = _quant_axis(elt(res))
            if ax is not None and ax != d.output_feature:
                fail("quantization dimension of result should be same with output_feature_dimension")
            _quant_conv_common(elt(lt), elt(rt), elt(res))


# ---- quantization ----------------------------------------------------------------------------
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


def verify_binary_quant(op) -> None:
    if len(op.operands) != 2 or not op.results:
        return
    l, r, o = op.operand_types[0], op.operand_types[1], op.result_types[0]
    ql, qr, qo = qtype(l), qtype(r), qtype(o)
    if (ql is None) != (qo is None) or (qr is None) != (qo is None):
        fail("all operands and results to be either quantized or non-quantized")
    if qo is None:
        return

    if ql.width != qo.width or qr.width != qo.width:
        fail("mismatched operands and result quantization storage types")
    if ql.expressed != qo.expressed or qr.expressed != qo.expressed:
        fail("mismatched operands and result quantization expressed types")
    if (ql.per_axis or qr.per_axis) and not qo.per_axis:
        fail("result is not per_axis quantized but lhs or rhs are")
    if ql.per_axis and ql.axis != qo.axis:
        fail("quantization_dimension of lhs and result are not same")
    if qr.per_axis and qr.axis != qo.axis:
        fail("quantization_dimension of rhs and result are not same")


def verify_broadcast_quant(op, dims) -> None:
    if not op.operands or not op.results:
        return
    ot, rt = op.operand_types[0], op.result_types[0]
    verify_q_same_params(ot, rt, per_axis=False)
    qo, qr = qtype(ot), qtype(rt)
    if qr is None or not qr.per_axis or qo is None or not qo.per_axis:
        return
    if qo.axis < len(dims) and qr.axis != dims[qo.axis]:
        fail(f"result quantization_dimension {qr.axis} not same as broadcast_dimensions[{qo.axis}] = "
             f"{dims[qo.axis]}")
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None or os_[qo.axis] is None or rs[qr.axis] is None:
        return
    for i in range(rs[qr.axis]):
        j = 0 if os_[qo.axis] == 1 else i
        if i >= len(qr.scales) or j >= len(qo.scales):
            return
        if qr.scales[i] != qo.scales[j]:
            fail(f"mismatch result scale {i} ({qr.scales[i]:e}) and operand scale {j} ({qo.scales[j]:e})")
        if qr.zero_points[i] != qo.zero_points[j]:
            fail(f"mismatch result zero_point {i} ({qr.zero_points[i]}) and operand zero_point {j} ({qo.zero_points[j]})")


def verify_transpose_quant(op, perm) -> None:
    ot, rt = op.operand_types[0], op.result_types[0]
    verify_q_same_params(ot, rt)
    qo, qr = qtype(ot), qtype(rt)
    if qr is not None and qr.per_axis and qo is not None and qo.per_axis and qr.axis < len(perm):
        if qo.axis != perm[qr.axis]:
            fail(f"operand quantization_dimension {qo.axis} is not same as permutation[{qr.axis}] = "
                 f"{perm[qr.axis]}")


def verify_reshape_quant(op) -> None:
    ot, rt = op.operand_types[0], op.result_types[0]
    verify_q_same_params(ot, rt)
    qo, qr = qtype(ot), qtype(rt)
    if qo is None or qr is None or not qo.per_axis or not qr.per_axis:
        return
    os_, rs = shape_of(ot), shape_of(rt)
    if os_ is None or rs is None or qo.axis >= len(os_) or qr.axis >= len(rs):
        return
    if os_[qo.axis] != rs[qr.axis]:
        fail(f"expect same quantization dimension size for operand and result '{ot}' and '{rt}'")

    def prod(xs):
        n = 1
        for x in xs:
            if x is None:
                return None
            n *= x
        return n
    a, b = prod(os_[:qo.axis]), prod(rs[:qr.axis])
    if a is not None and b is not None and a != b:
        fail("product of dimensions before quantization dimension must match between operand and result")


def verify_dot_general_quant(op, rhs_contracting) -> None:
    l, r, o = op.operand_types[0], op.operand_types[1], op.result_types[0]
    if not any(is_quant(t) for t in (l, r, o)):
        return
    qr = qtype(r)
    if qr is not None:
        if not qr.per_axis and any(z != 0 for z in qr.zero_points):
            fail("Zero point of rhs should be 0")
        if qr.per_axis:
            if any(z != 0 for z in qr.zero_points):
                fail("Zero points of rhs should be 0")
            if qr.axis in rhs_contracting:
                fail("Quantization dimension of rhs should not be in the contracting dimension of rhs")
    _quant_conv_common(elt(l), elt(r), elt(o))


# ---- custom_call, composite ---------------------------------------------------------------------
def _tuple_get(t, indices):
    for i in indices:
        if not isinstance(t, T.TupleType) or i < 0 or i >= len(t.types):
            return None
        t = t.types[i]
    return t


@rule("stablehlo.custom_call")
def _custom_call(op):
    stable = op.name.startswith("stablehlo.")
    api = int_attr(op, "api_version")
    if api is None:
        word = A.enum_word(op.attr("api_version"))
        api = {"API_VERSION_TYPED_FFI": 4, "API_VERSION_STATUS_RETURNING_UNIFIED": 3}.get(word)
    bc = op.attr("backend_config")
    from ..ir.attributes import DictionaryAttr
    if bc is not None and api is not None:
        if api == 4 and not isinstance(bc, DictionaryAttr):
            fail("backend_config for api_version API_VERSION_TYPED_FFI must be a dictionary attribute" if stable
                 else "unsupported user-encoded backend config, backend config must be a dictionary attribute")
        if api != 4 and isinstance(bc, DictionaryAttr):
            name = {1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                    3: "API_VERSION_STATUS_RETURNING_UNIFIED"}.get(api, "API_VERSION_UNSPECIFIED")
            fail(f"backend_config for api_version {name} must be a string attribute" if stable
                 else "unsupported dictionary attribute backend config, backend config must be a user-encoded "
                      "string attribute")
    ol, rl = op.attr("operand_layouts"), op.attr("result_layouts")
    if (ol is None) != (rl is None):
        fail("Layout attributes should be specified for either both operands and results or none")
    if isinstance(ol, ArrayAttr) and isinstance(rl, ArrayAttr):
        results = op.result_types
        if len(results) == 1 and isinstance(results[0], T.TupleType):
            results = list(results[0].types)
        if len(op.operands) != len(ol.items):
            fail(f"Number of operands must match the number of operand layouts, {len(op.operands)} != "
                 f"{len(ol.items)}")
        if len(results) != len(rl.items):
            fail(f"Number of results must match the number of result layouts, {len(results)} != {len(rl.items)}")
        for kind, types, layouts in (("operand", op.operand_types, ol.items), ("result", results, rl.items)):
            for i, (t, lay) in enumerate(zip(types, layouts)):
                if isinstance(t, T.TupleType):
                    fail("Tuple types are not fully supported with layout constraints yet")
                vals = A.int_list(lay)
                if vals is None:
                    continue
                if not is_tensor(t):
                    if vals:
                        fail(f"Only tensor types can have non-empty layout: {kind} #{i} of type '{t}' has layout "
                             f"{lay}")
                    continue
                r = rank_of(t)
                if r is not None and sorted(vals) != list(range(r)):
                    fail(f"incorrect layout {lay} for type '{t}', layout must be a permutation of [0, {r})")
    aliases = op.attr("output_operand_aliases")
    if isinstance(aliases, ArrayAttr):
        results = op.result_types
        out_t = results[0] if len(results) == 1 else T.TupleType(tuple(results))
        for a in aliases.items:
            f = A.struct_fields(a) or {}
            oi = A.int_field(f, "operand_index", 0)
            if oi < 0 or oi >= len(op.operands):
                fail(f"expects operandIndex in the output_operand_alias attribute to be in range "
                     f"[0, {len(op.operands)}); got: {oi}")
            otup, itup = A.dims_field(f, "output_tuple_indices"), A.dims_field(f, "operand_tuple_indices")
            ot = _tuple_get(out_t, otup)
            if ot is None:
                fail("output_tuple_indices in the output_operand_alias attribute out of bounds")
            it = _tuple_get(op.operand_types[oi], itup)
            if it is None:
                fail("operand_tuple_indices in the output_operand_alias attribute out of bounds")
            if it != ot:
                fail(f"shapes mismatch in the output_operand_alias attribute: operand part has type '{it}' and "
                     f"output part has type '{ot}'")


_COMPOSITE_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$")


@rule("stablehlo.composite")
def _composite(op):
    from ..ir.attributes import StringAttr, SymbolRefAttr
    name = op.attr("name")
    if isinstance(name, StringAttr) and not _COMPOSITE_NAME.match(name.value):
        fail("name must be a valid namespaced op name, i.e. it must match the following regular expression: "
             "^[a-zA-Z][a-zA-Z0-9_]*([.][a-zA-Z0-9_$]+)+$ e.g. \"my_namespace.my_op\"")
    dec = op.attr("decomposition")
    if not isinstance(dec, SymbolRefAttr):
        return
    target = _lookup_func(op, dec.root)
    if target is None:
        fail(f"'{dec.root}' does not reference a valid function")
    ft = _func_type(target)
    if ft is None:
        return
    types = op.operand_types
    if len(types) != len(ft.inputs):
        fail(f"has {len(types)} operand(s), but decomposition has {len(ft.inputs)}")
    for i, (a, b) in enumerate(zip(types, ft.inputs)):
        if a != b:
            fail(f"operand at index {i} has type '{a}', but decomposition has type '{b}'")
    rs = op.result_types
    if len(rs) != len(ft.results):
        fail(f"has {len(rs)} result(s), but decomposition has {len(ft.results)}")
    for i, (a, b) in enumerate(zip(rs, ft.results)):
        if a != b:
            fail(f"result at index {i} has type '{a}', but decomposition has type '{b}'")


def _lookup_func(op, name):
    cur = op.parent_op
    while cur is not None:
        for region in cur.regions:
            for block in region.blocks:
                for o in block.ops:
                    if o.name == "func.func" and o.sym_name == name:
                        return o
        cur = cur.parent_op
    return None


def _func_type(f):
    from ..ir.attributes import TypeAttr
    a = f.attributes.get("function_type")
    if isinstance(a, TypeAttr) and isinstance(a.type, T.FunctionType):
        return a.type
    return None


@rule("stablehlo.or", "stablehlo.and", "stablehlo.xor", "stablehlo.not")
def _logical(op):
    for i, t in enumerate(op.operand_types):
        e = elt(t)
        if is_tensor(t) and not isinstance(e, T.IntegerType):
            fail(f"operand #{i} must be ranked tensor of bool or 2/4/8/16/32/64-bit integer values, but got '{t}'")
    _same_type_op(op)


@rule("stablehlo.add_dependency")
def _add_dependency(op):
    check_inferred(op, [op.operand("operand").type])


@rule("stablehlo.stochastic_convert")
def _stochastic_convert(op):
    a, b = bitwidth(elt(op.operand("operand").type)), bitwidth(elt(op.operand("random").type))
    if a is not None and b is not None and a != b:
        fail(f"requires the random's bitwidth to match the operand's, but got: {b} and {a}")


@rule("stablehlo.collective_reduce")
def _collective_reduce(op):
    use_global = bool_attr(op, "use_global_device_ids")
    if use_global and channel_id(op) <= 0:
        fail(f"channel_id must be positive when useGlobalDeviceIds is set but got: {channel_id(op)}")
    dyn = bool_attr(op, "has_dynamic_root")
    n = len(op.operands)
    if not dyn and n == 0:
        fail("collective_reduce requires at least one data operand")
    data = list(op.operand_types)
    if dyn:
        if n < 2:
            fail("collective_reduce with has_dynamic_root=true requires at least two operands (data + root)")
        last = data.pop()
        s = shape_of(last)
        if s is None or len(s) != 1 or elt(last) != T.i32:
            fail("last operand of collective_reduce with has_dynamic_root=true must be a rank-1 i32 tensor")
        if s[0] is not None and s[0] != n - 1:
            fail(f"last operand of collective_reduce with has_dynamic_root=true must have the same number of "
                 f"elements as data operands ({n - 1}), but got {s[0]}")
    if op.regions and op.regions[0].blocks:
        for t in data:
            verify_reducer(op.regions[0].blocks[0], [t], [tensor((), elt(t))], [])


@rule("stablehlo.rng")
def _rng(op):
    kind = A.enum_word(op.attr("rng_distribution"))
    a, b, shape = op.operand("a"), op.operand("b"), op.operand("shape")
    if kind == "NORMAL" and not (isinstance(elt(a.type), T.FloatType) and isinstance(elt(b.type), T.FloatType)):
        fail("mu and sigma must be floats")
    vals = constant_ints(shape)
    ss = shape_of(shape.type)
    if vals is not None:
        dims = vals
    elif ss and ss[0] is not None:
        dims = [None] * ss[0]
    else:
        return
    check_inferred(op, [tensor(dims, elt(b.type))])


@rule("stablehlo.optimization_barrier")
def _optimization_barrier(op):
    check_inferred(op, list(op.operand_types))


# ---- scatter ---------------------------------------------------------------------------------------
def _scatter_dims(operand_t, indices_shape, update_t, f) -> None:
    uwd = A.dims_field(f, "update_window_dims")
    iwd = A.dims_field(f, "inserted_window_dims")
    ibd = A.dims_field(f, "input_batching_dims")
    sibd = A.dims_field(f, "scatter_indices_batching_dims")
    sdod = A.dims_field(f, "scatter_dims_to_operand_dims")
    ivd = A.int_field(f, "index_vector_dim")
    orank, urank = rank_of(operand_t), rank_of(update_t)
    os_ = shape_of(operand_t)
    size = len(uwd) + len(iwd) + len(ibd)
    if orank is not None and orank != size:
        fail(f"Expects rank-of operand to match size-of('update_window_dims') + size-of('inserted_window_dims') + "
             f"size-of('input_batching_dims') i.e. {size} but got {orank}.")
    if not is_sorted(uwd):
        fail(f"Expects update_window_dims to be sorted; got: [{', '.join(map(str, uwd))}].")
    if first_duplicate(uwd) is not None:
        fail(f"Expects update_window_dims to not repeat; got: [{', '.join(map(str, uwd))}].")
    if urank is not None:
        _check_in_range("update_window_dims", uwd, urank, "rank-of('updates')")
    dup = first_duplicate(iwd + ibd)
    if dup is not None:
        fail(f"has duplicated dimension from inserted_window_dims and input_batching_dims: {dup}")
    if not is_sorted(iwd):
        fail(f"Expects inserted_window_dims to be sorted; got: [{', '.join(map(str, iwd))}].")
    if orank is not None:
        _check_in_range("inserted_window_dims", iwd, orank, "rank-of('operand')")
    if not is_sorted(ibd):
        fail(f"Expects input_batching_dims to be sorted; got: [{', '.join(map(str, ibd))}].")
    if orank is not None:
        _check_in_range("input_batching_dims", ibd, orank, "rank-of('operand')")
    if first_duplicate(sibd) is not None:
        fail(f"Expects scatter_indices_batching_dims to not repeat; got: [{', '.join(map(str, sibd))}].")
    _check_in_range("scatter_indices_batching_dims", sibd, len(indices_shape), "rank-of('scatter_indices')")
    if ivd in sibd:
        fail(f"expects scatter_indices_batching_dims not to include index_vector_dim {ivd}.")
    if len(ibd) != len(sibd):
        fail("input_batching_dims and scatter_indices_batching_dims should have the same size.")
    if os_ is not None:
        for i, (a, b) in enumerate(zip(ibd, sibd)):
            if not compatible_dims(os_[a], indices_shape[b]):
                fail(f"input_batching_dims[{i}] and scatter_indices_batching_dims[{i}] must have compatible sizes, "
                     f"but got {dim_text(os_[a])} and {dim_text(indices_shape[b])}.")
    if ivd < len(indices_shape) and indices_shape[ivd] is not None and len(sdod) != indices_shape[ivd]:
        fail(f"Scatter op has {len(sdod)} elements in scatter_dims_to_operand_dims and the bound of dimension "
             f"index_vector_dim={ivd} of scatter_indices is {indices_shape[ivd]}. These two numbers must be equal.")
    dup = first_duplicate(sdod + ibd)
    if dup is not None:
        fail(f"has duplicated dimension from scatter_dims_to_operand_dims and input_batching_dims: {dup}")
    if orank is not None:
        _check_in_range("scatter_dims_to_operand_dims", sdod, orank, "rank-of('operand')")


@rule("stablehlo.scatter")
def _scatter(op):
    f = A.struct_fields(attr(op, "scatter_dimension_numbers"))
    k = len(op.operands)
    if f is None or k < 3 or k % 2 == 0:
        return
    n = (k - 1) // 2
    inputs, idx_t, updates = op.operand_types[:n], op.operand_types[n], op.operand_types[n + 1:]
    for t in inputs:
        if not (rank_of(t) in (None, rank_of(inputs[0])) and compatible_shapes(inputs[0], t)):
            fail("Not all inputs have compatible shapes.")
    for t in updates:
        if not (rank_of(t) in (None, rank_of(updates[0])) and compatible_shapes(updates[0], t)):
            fail("Not all updates have compatible shapes.")
    ishape = shape_of(idx_t)
    ivd = A.int_field(f, "index_vector_dim")
    if ishape is None:
        return
    if ivd < 0 or ivd > len(ishape):
        fail(f"Expects index_vector_dim to be in range [0, rank-of('scatter_indices')] i.e. [0, {len(ishape)}]. "
             f"got: {ivd}.")
    if op.regions and op.regions[0].blocks:
        verify_reducer(op.regions[0].blocks[0], inputs, [tensor((), elt(u)) for u in updates], [])
    expanded = list(ishape) + ([1] if ivd == len(ishape) else [])
    uwd = A.dims_field(f, "update_window_dims")
    iwd = A.dims_field(f, "inserted_window_dims")
    ibd = A.dims_field(f, "input_batching_dims")
    for u in updates:
        want = len(expanded) - 1 + len(uwd)
        if rank_of(u) is not None and rank_of(u) != want:
            fail(f"expects updates tensor must be of rank {want} ( == rank-of('scatter_indices') - 1 + "
                 f"size-of('update_window_dims'), where 'scatter_indices' is expanded by a trailing 1 dimension "
                 f"if 'index_vector_dim' == rank-of('scatter_indices')), but got {rank_of(u)}.")
    for t, u in zip(inputs, updates):
        _scatter_dims(t, expanded, u, f)
    for t, u in zip(inputs, updates):
        us, os_ = shape_of(u), shape_of(t)
        if us is None or os_ is None:
            continue
        max_sizes = [os_[i] for i in range(len(os_)) if i not in iwd and i not in ibd]
        for i, w in enumerate(uwd):
            if i >= len(max_sizes) or us[w] is None or max_sizes[i] is None:
                continue
            if us[w] > max_sizes[i]:
                fail(f"expects bounds of the window dimensions of updates to not exceed the bounds of the "
                     f"corresponding dimensions of operand. For dimension {w}, updates bound is {us[w]}, operand "
                     f"bound is {max_sizes[i]}.")
        seen = 0
        for i in range(len(us)):
            if i in uwd:
                continue
            if seen == ivd:
                seen += 1
            if seen < len(expanded) and not compatible_dims(us[i], expanded[seen]):
                fail(f"expects bounds of the scatter dimensions of updates to be same as the bounds of the "
                     f"corresponding dimensions of scatter indices. For scatter dimension {i}, updates bound is "
                     f"{dim_text(us[i])} , scatter_indices bound is {dim_text(expanded[seen])}.")
            seen += 1
    term = terminator(op.regions[0]) if op.regions else None
    if term is not None and len(term.operands) == n:
        check_inferred(op, [_with_elt(t, elt(v.type)) for t, v in zip(inputs, term.operands)])


for _n in ("add_dependency", "stochastic_convert"):
    VERIFIERS[f"mhlo.{_n}"] = VERIFIERS[f"stablehlo.{_n}"]


@rule("mhlo.topk", "chlo.top_k")
def _topk(op):
    if not op.operands:
        return
    s = shape_of(op.operand_types[0])
    k = int_attr(op, "k")
    if s is None or k is None:
        return
    if len(s) < 1:
        fail("operand's rank must be at least 1")
    if s[-1] is not None and s[-1] < k:
        fail(f"operand's last dimension must be at least {k}")
    out = list(s[:-1]) + [k]
    check_inferred(op, [tensor(out, elt(op.operand_types[0])), tensor(out, T.i32)])


# ---- mhlo async ops -----------------------------------------------------------------------------
def _split_top(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _bundle(t) -> Optional[list[str]]:
    if isinstance(t, T.DialectType) and t.mnemonic == "async_bundle":
        return _split_top(t.body)
    return None


def _types_text(types) -> str:
    return str(types[0]) if len(types) == 1 else f"tuple<{', '.join(map(str, types))}>"


@rule("mhlo.async_start")
def _async_start(op):
    from ..ir.attributes import StringAttr, SymbolRefAttr
    if op.results:
        comps = _bundle(op.result_types[0])
        if comps is not None and len(comps) < 2:
            fail(f"bundle is expected to have at least 2 components, but got {len(comps)}")
    callee = op.attr("called_computation")
    if not isinstance(callee, SymbolRefAttr):
        return
    target = _lookup_func(op, callee.root)
    if target is None:
        fail(f"can't find function: {callee.root}")
    thread = target.attributes.get("execution_thread")
    if not isinstance(thread, StringAttr):
        fail("callee must have execution_thread attribute")
    mine = op.attr("execution_thread")
    if isinstance(mine, StringAttr) and mine.value != thread.value:
        fail(f'execution_thread does not match the execution_thread of {callee.root}. Got: "{mine.value}", but '
             f'expected "{thread.value}".')
    ft = _func_type(target)
    if ft is None:
        return
    if len(op.operands) != len(ft.inputs):
        fail(f"number of operands doesn't match operands for {callee.root}. Got: {len(op.operands)}, but "
             f"expected: {len(ft.inputs)}.")
    for i, (a, b) in enumerate(zip(op.operand_types, ft.inputs)):
        if a != b:
            fail(f"type mismatch on argument #{i} of {callee.root}. Got: '{a}', but expected: '{b}'")
    comps = _bundle(op.result_types[0]) if op.results else None
    if comps is None:
        return
    if ft.inputs and comps[0] != _types_text(ft.inputs):
        fail("component #0 of async bundle doesn't match callee input types")
    if ft.results and comps[1] != _types_text(ft.results):
        fail("component #1 of async bundle doesn't match callee result types")


@rule("mhlo.async_done")
def _async_done(op):
    if not op.operands or not op.results:
        return
    comps = _bundle(op.operand_types[0])
    if comps is None or len(comps) < 2:
        return
    got = _types_text(op.result_types)
    if comps[1] != got and not comps[1].startswith("tuple<"):
        fail(f"inferred type(s) '{comps[1]}' are incompatible with return type(s) of operation "
             f"{quoted(op.result_types)}")
