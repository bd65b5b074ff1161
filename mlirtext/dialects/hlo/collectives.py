"""Collectives, channels, feeds and tokens: all_reduce, reduce_scatter, all_to_all,
all_gather, collective_permute/broadcast/reduce, send, recv, infeed, outfeed, replica and
partition ids, after_all, create_token (and mhlo's add_dependency): declarations and checks.
"""
from __future__ import annotations

from typing import Optional

from ...ir import types as T
from ...ir.attributes import ArrayAttr, IntegerAttr
from .. import hlo_attrs as A
from ..assembly_format import Custom
from .declare import HloOp
from .shared import (bool_attr, check_inferred, compatible_dims, dim_text, elt, fail, int_attr, is_quant, is_ranked,
                     is_tensor, nonneg_attr, positive_attr, raw_dims, shape_of, tensor, terminator, verify_reducer)
from .syntax import HloFormat, need, same_types_family


def _parse_same_variadic_types(ctx, name, t, inputs):
    """custom<VariadicSameOperandsAndResultType>(ref($inputs), ...): one type for every input and
    the result (`: !stablehlo.token`), or a function type."""
    if isinstance(t, T.FunctionType):
        if len(t.results) != 1:
            raise ctx.fail(f"custom op '{name}' expected single output")
        return list(t.inputs), t.results[0]
    return [t] * len(inputs or ()), t


def _print_same_variadic_types(p, op):
    t = op.result_named("result").type
    need(all(v.type == t for v in op.operands_named("inputs")))
    return " " + p.type(t), ()


_SAME_VARIADIC_TYPES = Custom("type", _parse_same_variadic_types, _print_same_variadic_types)


def is_token(t) -> bool:
    return isinstance(t, T.DialectType) and t.mnemonic == "token"


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


def _channel_type(op) -> Optional[int]:
    f = A.struct_fields(op.attr("channel_handle"))
    return A.int_field(f, "type", 0) if f else None


def _send(op):
    host = bool_attr(op, "is_host_transfer")
    ct = _channel_type(op)
    if ct is None:
        return
    if not host and ct != 1:
        fail("channel_type should be DEVICE_TO_DEVICE when is_host_transfer is false")
    if host and ct != 2:
        fail("channel_type should be DEVICE_TO_HOST when is_host_transfer is true")


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


def _add_dependency(op):
    check_inferred(op, [op.operand("operand").type])


_NULLARY = HloFormat("nullary", "attr-dict `:` type($result)", ())
_AFTER_ALL = HloFormat("after_all", "$inputs attr-dict `:` custom<SameVariadicTypes>(ref($inputs), type($inputs), "
                       "type($result))", ("inputs*",), custom={"SameVariadicTypes": _SAME_VARIADIC_TYPES})

OPS = (
    HloOp("after_all", "Joins tokens into one.", format=_AFTER_ALL),
    HloOp("create_token", "Creates a token.", format=_NULLARY),
    HloOp("replica_id", "The id of the current replica.", format=_NULLARY),
    HloOp("partition_id", "The id of the current partition.", format=_NULLARY),
    HloOp("all_gather", "Concatenates operands across processes.",
          ("all_gather_dim", "replica_groups", "channel_handle", "use_global_device_ids"), (), _all_gather),
    HloOp("all_reduce", "Reduces operands across processes with a computation.",
          ("replica_groups", "channel_handle", "use_global_device_ids"), (), _all_reduce),
    HloOp("all_to_all", "Scatters and gathers slices across processes.",
          ("split_dimension", "concat_dimension", "split_count", "replica_groups", "channel_handle"), (),
          _all_to_all),
    HloOp("collective_broadcast", "Broadcasts across processes.",
          ("replica_groups", "channel_handle", "has_dynamic_root"), (), _collective_broadcast),
    HloOp("collective_permute", "Sends operands between processes.", ("source_target_pairs", "channel_handle"), (),
          _collective_permute),
    HloOp("collective_reduce", "Reduces operands across processes to a root.",
          ("replica_groups", "channel_handle", "use_global_device_ids", "has_dynamic_root"), (), _collective_reduce),
    HloOp("cross-replica-sum", "Sums across replicas (legacy).", ("replica_groups",), ()),
    HloOp("reduce_scatter", "Reduces across processes, then scatters.",
          ("scatter_dimension", "replica_groups", "channel_handle", "use_global_device_ids"), (), _reduce_scatter),
    HloOp("infeed", "Reads data from the infeed.", ("infeed_config", "layout"), (), _infeed),
    HloOp("outfeed", "Writes data to the outfeed.", ("outfeed_config",), ()),
    HloOp("recv", "Receives data from a channel.", ("channel_handle", "is_host_transfer", "source_target_pairs"), (),
          _recv),
    HloOp("send", "Sends data to a channel.", ("channel_handle", "is_host_transfer", "source_target_pairs"), (),
          _send, inferred=True),
)

#: mhlo's own.
MHLO_OPS = (
    HloOp("add_dependency", "Adds a token dependency to a value.", (), (), _add_dependency,
          format=same_types_family("add_dependency", "operand", "token")),
)
