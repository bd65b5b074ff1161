"""stablehlo: the StableHLO op set (declarations, custom syntax callbacks, printers).

The op table below is shared with mhlo (same ops under the `mhlo.` prefix, plus
a few of its own). The regular ops (elementwise, compare, select, the shape,
slice, dot, pad, rng, fft, dynamic_* ... ops, top-k) declare assembly formats
(`FORMATS`, as StableHLO's ODS writes them); the irregular ones (regions,
convolution's dimension numbers, constants, calls) keep hand-written rules in
`grammars/hlo.lark` with their callbacks and printers here. Verification and shape rules are in `hlo_verify.py`, keyed by the
stablehlo op name.
"""
from __future__ import annotations

import re

from ..ir import types as T
from ..ir.attributes import (ArrayAttr, BoolAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr, StringAttr,
                             TypeAttr)
from ..ir.core import Block, Operation, Region
from ..ir.signatures import OpSignature
from ..ir.source import Span
from ..ir.dense import DenseElementsAttr, DenseResourceAttr, SelfTypedDenseAttr, parse_dense
from ..syntax.literals import number_value, string_value
from . import hlo_attrs, hlo_verify
from .assembly_format import Custom, StringAttrKind, declare_family
from .base import PURE, RETURN_LIKE, TERMINATOR, Dialect
from .common import create, shaped_like, symbol_name

dialect = Dialect("stablehlo", grammar="hlo", attr_check=hlo_attrs.check_attr_text,
                  attr_canonical=hlo_attrs.canonical_attr_text, type_check=hlo_attrs.check_type_text,
                  encoding_check=hlo_attrs.check_tensor_bounds)

# ---- the op table -------------------------------------------------------------------
#: Elementwise unary ops without inherent attributes.
UNARY = ("abs", "ceil", "count_leading_zeros", "floor", "imag", "is_finite", "negate", "not",
         "popcnt", "real", "round_nearest_afz", "round_nearest_even", "sign")
#: Elementwise unary transcendental ops carrying an optional `result_accuracy`.
UNARY_ACCURACY = ("cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one",
                  "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh")
#: Ops with one operand whose result type may differ (printed with a functional type).
CONVERSIONS = ("convert", "bitcast_convert", "reshape", "uniform_quantize", "uniform_dequantize")
#: Elementwise binary ops.
BINARY = ("add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply", "or", "power",
          "remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical", "subtract", "xor")

_CONV_ATTRS = ("window_strides", "padding", "lhs_dilation", "rhs_dilation", "window_reversal",
               "dimension_numbers", "feature_group_count", "batch_group_count", "precision_config")

#: Other ops: name -> (summary, inherent attributes, has regions, pure).
OTHER = {
    "after_all": ("Joins tokens into one.", (), False, True),
    "all_gather": ("Concatenates operands across processes.",
                   ("all_gather_dim", "replica_groups", "channel_handle", "use_global_device_ids"), False, False),
    "all_reduce": ("Reduces operands across processes with a computation.",
                   ("replica_groups", "channel_handle", "use_global_device_ids"), True, False),
    "all_to_all": ("Scatters and gathers slices across processes.",
                   ("split_dimension", "concat_dimension", "split_count", "replica_groups", "channel_handle"),
                   False, False),
    "batch_norm_grad": ("Gradients of batch normalization.", ("epsilon", "feature_index"), False, True),
    "batch_norm_inference": ("Batch normalization with given statistics.", ("epsilon", "feature_index"),
                             False, True),
    "batch_norm_training": ("Batch normalization computing statistics.", ("epsilon", "feature_index"),
                            False, True),
    "broadcast": ("Prepends broadcast dimensions.", ("broadcast_sizes",), False, True),
    "broadcast_in_dim": ("Broadcasts to a shape, mapping operand dimensions.", ("broadcast_dimensions",),
                         False, True),
    "case": ("Runs one of its branches, chosen by index.", (), True, False),
    "cholesky": ("Cholesky decomposition.", ("lower",), False, True),
    "clamp": ("Clamps between a minimum and a maximum.", (), False, True),
    "collective_broadcast": ("Broadcasts across processes.",
                             ("replica_groups", "channel_handle", "has_dynamic_root"), False, False),
    "collective_permute": ("Sends operands between processes.", ("source_target_pairs", "channel_handle"),
                           False, False),
    "collective_reduce": ("Reduces operands across processes to a root.",
                          ("replica_groups", "channel_handle", "use_global_device_ids", "has_dynamic_root"),
                          True, False),
    "compare": ("Elementwise comparison.", ("comparison_direction", "compare_type"), False, True),
    "composite": ("A named composition of ops with a decomposition function.",
                  ("name", "composite_attributes", "decomposition", "version"), False, False),
    "concatenate": ("Concatenates along a dimension.", ("dimension",), False, True),
    "constant": ("A constant tensor.", ("value",), False, True),
    "convolution": ("Convolution.", _CONV_ATTRS, False, True),
    "create_token": ("Creates a token.", (), False, True),
    "cross-replica-sum": ("Sums across replicas (legacy).", ("replica_groups",), False, False),
    "custom_call": ("Calls an implementation-defined target.",
                    ("call_target_name", "has_side_effect", "backend_config", "api_version",
                     "called_computations", "operand_layouts", "result_layouts", "output_operand_aliases"),
                    False, False),
    "dot": ("Dot product (legacy).", ("precision_config",), False, True),
    "dot_general": ("General dot product with batching and contracting dimensions.",
                    ("dot_dimension_numbers", "precision_config", "algorithm"), False, True),
    "dynamic_broadcast_in_dim": ("broadcast_in_dim to a shape given as a tensor.",
                                 ("broadcast_dimensions", "known_expanding_dimensions",
                                  "known_nonexpanding_dimensions"), False, True),
    "dynamic_conv": ("Convolution with padding given as a tensor.",
                     tuple(a for a in _CONV_ATTRS if a != "padding"), False, True),
    "dynamic_gather": ("gather with slice sizes given as a tensor.", ("dimension_numbers", "indices_are_sorted"),
                       False, True),
    "dynamic_iota": ("iota with the shape given as a tensor.", ("iota_dimension",), False, True),
    "dynamic_pad": ("pad with paddings given as tensors.", (), False, True),
    "dynamic_reshape": ("reshape to a shape given as a tensor.", (), False, True),
    "dynamic_slice": ("Slice at start indices given as scalars.", ("slice_sizes",), False, True),
    "dynamic_update_slice": ("Updates a slice at start indices given as scalars.", (), False, True),
    "einsum": ("Einstein summation (legacy).", ("einsum_config",), False, True),
    "fft": ("Fast Fourier transform.", ("fft_type", "fft_length"), False, True),
    "gather": ("Gathers slices at indices.", ("dimension_numbers", "slice_sizes", "indices_are_sorted"),
               False, True),
    "get_dimension_size": ("The size of a dimension.", ("dimension",), False, True),
    "get_tuple_element": ("An element of a tuple.", ("index",), False, True),
    "if": ("Runs one of two branches.", (), True, False),
    "infeed": ("Reads data from the infeed.", ("infeed_config", "layout"), False, False),
    "iota": ("Values counting up along a dimension.", ("iota_dimension",), False, True),
    "map": ("Applies a computation elementwise.", ("dimensions",), True, True),
    "optimization_barrier": ("Prevents optimizations across it.", (), False, True),
    "outfeed": ("Writes data to the outfeed.", ("outfeed_config",), False, False),
    "pad": ("Pads at the edges and between elements.", ("edge_padding_low", "edge_padding_high",
                                                        "interior_padding"), False, True),
    "partition_id": ("The id of the current partition.", (), False, True),
    "real_dynamic_slice": ("Slice with bounds given as tensors.", (), False, True),
    "recv": ("Receives data from a channel.", ("channel_handle", "is_host_transfer", "source_target_pairs"),
             False, False),
    "reduce": ("Reduces dimensions with a computation.", ("dimensions",), True, True),
    "reduce_precision": ("Rounds to a smaller float format.", ("exponent_bits", "mantissa_bits"), False, True),
    "reduce_scatter": ("Reduces across processes, then scatters.",
                       ("scatter_dimension", "replica_groups", "channel_handle", "use_global_device_ids"),
                       True, False),
    "reduce_window": ("Reduces windows with a computation.",
                      ("window_dimensions", "window_strides", "base_dilations", "window_dilations", "padding"),
                      True, True),
    "replica_id": ("The id of the current replica.", (), False, True),
    "reverse": ("Reverses dimensions.", ("dimensions",), False, True),
    "rng": ("Random numbers from a distribution.", ("rng_distribution",), False, False),
    "rng_bit_generator": ("Random bits from a state.", ("rng_algorithm",), False, True),
    "scatter": ("Scatters updates at indices with a computation.",
                ("scatter_dimension_numbers", "indices_are_sorted", "unique_indices"), True, True),
    "select": ("Elementwise choice by a predicate.", (), False, True),
    "select_and_scatter": ("Selects in windows and scatters.", ("window_dimensions", "window_strides", "padding"),
                           True, True),
    "send": ("Sends data to a channel.", ("channel_handle", "is_host_transfer", "source_target_pairs"),
             False, False),
    "set_dimension_size": ("Sets the dynamic size of a dimension.", ("dimension",), False, True),
    "slice": ("Static slice.", ("start_indices", "limit_indices", "strides"), False, True),
    "sort": ("Sorts along a dimension with a comparator.", ("dimension", "is_stable"), True, True),
    "torch_index_select": ("Index select (legacy).", ("dim", "batch_dims"), False, True),
    "transpose": ("Permutes dimensions.", ("permutation",), False, True),
    "triangular_solve": ("Solves triangular systems.", ("left_side", "lower", "unit_diagonal", "transpose_a"),
                         False, True),
    "tuple": ("Builds a tuple.", (), False, True),
    "unary_einsum": ("Unary Einstein summation (legacy).", ("einsum_config",), False, True),
    "while": ("Loops while a condition holds.", (), True, False),
}


#: The operand names (StableHLO's ODS) of ops with hand-written syntax whose checks read operands
#: by name; their one result is `result`. (The ops with formats name theirs in `FORMATS`.)
NAMES = {
    "dynamic_broadcast_in_dim": ("operand", "output_dimensions"),
    "dynamic_pad": ("operand", "padding_value", "edge_padding_low", "edge_padding_high", "interior_padding"),
    "dynamic_reshape": ("operand", "output_shape"),
    "dynamic_iota": ("output_shape",),
}


def declare_op_set(d: Dialect, prefix: str, printers: dict, own_verify=()) -> None:
    """Declare the StableHLO op set on dialect `d` under `prefix` (stablehlo / mhlo).

    The regular families (every elementwise op among them) have declared assembly formats
    (`declare_formats`); `printers` maps the short name of each other op to its custom printer; `own_verify` lists short names
    that have no stablehlo op (their verifier is looked up by their own name).
    """
    def vname(short: str) -> str:
        return f"{prefix}.{short}" if short in own_verify else f"stablehlo.{short}"

    formatted = declare_formats(d, prefix, lambda short: hlo_verify.verifier_for(vname(short)))
    for short, (summary, props, _regions, pure) in OTHER.items():
        if short not in formatted:
            names = NAMES.get(short)
            d.op(f"{prefix}.{short}", summary, (PURE,) if pure else (), props,
                 hlo_verify.verifier_for(vname(short)), printers.get(short),
                 names=OpSignature.of(names, ("result",)) if names else None)
    d.op(f"{prefix}.return", "Returns values from a region of its parent op.", (TERMINATOR, RETURN_LIKE, PURE),
         (), hlo_verify.verifier_for(vname("return")), printers.get("return"))


#: short name -> custom printer, for stablehlo and mhlo ops.
PRINTERS: dict = {}

# ---- custom syntax: shared pieces -------------------------------------------------------------
class _Generic(Exception):
    """Raised by a custom printer when the op's attributes have no custom spelling."""


def prefix_of(name: str) -> str:
    return name.split(".", 1)[0]


def short_of(name: str) -> str:
    return name.split(".", 1)[1]


def hlo_create(ctx, name, operands=(), result_types=(), attributes=None, regions=()):
    """An HLO op from custom syntax (hand-written or a declared format's); mhlo ops keep the
    inherent attributes it wrote as properties, as mlir-hlo's own parser makes them."""
    op = create(ctx, name, operands, result_types, attributes or {}, regions)
    if name.startswith("mhlo."):
        d = ctx.registry.lookup(name)
        if d is not None:
            op.property_names = frozenset(k for k in op.attributes if k in d.properties)
    return op


def enum_attr(prefix: str, kind: str, word: str) -> OpaqueAttr:
    return OpaqueAttr(f"#{prefix}<{kind} {word}>")


def i64_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i64, tuple(int(v) for v in values))


def _int(item, ctx):
    if isinstance(item, tuple) and isinstance(item[0], str):
        try:
            value = number_value(item[0])
        except (TypeError, ValueError):
            value = None
        if isinstance(value, int):  # not `1.5`, which int() would quietly make 1
            return value
        raise ctx.fail(f"expected an integer, got '{item[0]}'", item[1])
    raise ctx.fail("expected an integer")


def _ints(items, ctx) -> list:
    if not isinstance(items, list):
        raise ctx.fail("expected a list of integers `[...]`")
    return [_int(i, ctx) for i in items]


# `[...]` lists, and the format pieces that are lists too (`[0:2, 1:3]`, `<a = 1, b = 2>`, dot_general's
# dimension pairs): their items, absent optional ones left out
@dialect.rule("hlo_list", "hlo_slice_ranges", "hlo_dot_algorithm", "hlo_dot_dims")
def _hlo_list(ctx, children):
    return [c for c in children if c is not None]


@dialect.rule("hlo_bare")
def _hlo_bare(ctx, children):
    return ("bare", children[0])


@dialect.rule("hlo_constant")
def _hlo_constant(ctx, children):
    name, value = children
    t = getattr(value, "type", None)
    if t is None or isinstance(value, TypeAttr):
        raise ctx.fail("expected a typed attribute such as `dense<...> : tensor<...>`")
    return hlo_create(ctx, name.value, (), [t], {"value": value})


@dialect.rule("hlo_constant_attrs")
def _hlo_constant_attrs(ctx, children):
    name, attrs, value = children
    op = _hlo_constant(ctx, [name, value])
    for key, attr in (attrs or {}).items():
        if key == "value":
            raise ctx.fail(f"'{name.value}' takes its value after the attribute dictionary, not in it")
        op.attributes[key] = attr
    return op


@dialect.rule("hlo_constant_generic")
def _hlo_constant_generic(ctx, children):
    name, props, attrs, ftype = children
    attributes = dict(props or {})
    attributes.update(attrs or {})
    if ftype.inputs:
        raise ctx.fail(f"'{name.value}' takes no operands")
    return hlo_create(ctx, name.value, (), list(ftype.results), attributes)


@dialect.rule("hlo_range")
def _hlo_range(ctx, children):
    start, limit, stride = children
    return (int(start.value, 0), int(limit.value, 0), int(stride.value, 0) if stride is not None else 1)


@dialect.rule("hlo_call")
def _hlo_call(ctx, children):
    name, callee, uses, attrs, ftype = children
    attributes = {"call_target_name": StringAttr(symbol_name(ctx, callee))}
    attributes.update(attrs or {})
    return hlo_create(ctx, name.value, ctx.resolve_all(uses, ftype.inputs), list(ftype.results), attributes)


@dialect.rule("hlo_composite")
def _hlo_composite(ctx, children):
    name, label, uses, attrs, ftype = children
    attributes = {"name": StringAttr(string_value(ctx, label, label.value))}
    attributes.update(attrs or {})
    return hlo_create(ctx, name.value, ctx.resolve_all(uses, ftype.inputs), list(ftype.results), attributes)


def _dim_word(item, ctx) -> str:
    if isinstance(item, tuple) and item[0] == "bare":
        return item[1].value
    if isinstance(item, tuple) and isinstance(item[0], str):
        return item[0]
    raise ctx.fail("unexpected item in convolution dimension numbers")


@dialect.rule("hlo_conv_dims")
def _hlo_conv_dims(ctx, children):
    lhs, x, rhs, out = children
    if x.value != "x":
        raise ctx.fail("expected 'x' between input and kernel dimensions", x)
    parts = ["[" + ", ".join(_dim_word(i, ctx) for i in side) + "]" for side in (lhs, rhs, out)]
    return f"{parts[0]}x{parts[1]}->{parts[2]}"


def _window_key_span(ctx, key: str):
    """Where `key` is written inside the op's `window = {...}` (the dictionary's spans are gone)."""
    text, span = ctx.source.text, ctx.span()
    start = text.find("window", span.start, span.end)
    at = re.compile(rf"\b{re.escape(key)}\s*=").search(text, start if start >= 0 else span.start, span.end)
    return Span(ctx.source, at.start(), at.start() + len(key)) if at else None


def _window_attrs(ctx, window: dict, n_spatial: int) -> dict:
    out = {}
    unknown = set(window) - {"stride", "lhs_dilate", "rhs_dilate", "pad", "reverse"}
    if unknown:
        key = sorted(unknown)[0]
        raise ctx.fail(f"Unexpected keyword {key} (window keys: stride, pad, lhs_dilate, rhs_dilate, reverse)",
                       _window_key_span(ctx, key))
    for key, attr in (("stride", "window_strides"), ("lhs_dilate", "lhs_dilation"),
                      ("rhs_dilate", "rhs_dilation"), ("pad", "padding"), ("reverse", "window_reversal")):
        value = window.get(key)
        if value is None:
            continue
        if not isinstance(value, ArrayAttr):
            raise ctx.fail(f"expected a list for window '{key}'")
        if key == "pad":
            rows = []
            for row in value.items:
                if not isinstance(row, ArrayAttr) or not all(isinstance(v, IntegerAttr) for v in row.items):
                    raise ctx.fail("expected `pad = [[lo, hi], ...]`")
                rows.append([v.value for v in row.items])
            bad = [len(r) for r in rows if len(r) != 2]
            if bad:
                raise ctx.fail(f"Expected array with 2 elements, got {bad[0]} elements instead "
                               "(`pad = [[lo, hi], ...]`)", _window_key_span(ctx, key))
            ptype = T.RankedTensorType((len(rows), 2), T.i64)
            text = "[" + ", ".join("[" + ", ".join(map(str, r)) + "]" for r in rows) + "]"
            out[attr] = parse_dense(text, ptype) if rows else DenseElementsAttr(ptype, ())
        elif key == "reverse":
            out[attr] = DenseArrayAttr(T.i1, tuple(bool(v.value) for v in value.items))
        else:
            if not all(isinstance(v, IntegerAttr) for v in value.items):
                raise ctx.fail(f"expected integers for window '{key}'")
            out[attr] = i64_array(v.value for v in value.items)
    return out


@dialect.rule("hlo_conv")
def _hlo_conv(ctx, children):
    name, uses, dims, window, attrs, ftype = children
    prefix = prefix_of(name.value)
    attributes = {"dimension_numbers": OpaqueAttr(f"#{prefix}.conv<{dims}>")}
    attributes.update(_window_attrs(ctx, window or {}, 0))
    attributes.update(attrs or {})
    for key in ("batch_group_count", "feature_group_count"):
        a = attributes.get(key)
        if isinstance(a, IntegerAttr) and a.value < 1:
            # as MLIR's custom parser: reported where the attribute dictionary opens
            at = _window_key_span(ctx, key)
            brace = ctx.source.text.rfind("{", ctx.start, at.start) if at is not None else -1
            raise ctx.fail(f"'{name.value}' op attribute '{key}' failed to satisfy constraint: 64-bit signless "
                           "integer attribute whose value is positive",
                           Span(ctx.source, brace, brace + 1) if brace >= 0 else None)
    return hlo_create(ctx, name.value, ctx.resolve_all(uses, ftype.inputs), list(ftype.results), attributes)


@dialect.rule("hlo_rng_state")
def _hlo_rng_state(ctx, children):
    return hlo_create(ctx, "mhlo.xla.rng_get_and_update_state", (),
                      [T.RankedTensorType((2,), T.IntegerType(64, "u"))],
                      children[0] or {})


# ---- reduce ------------------------------------------------------------------------------
@dialect.rule("hlo_reduce_input")
def _hlo_reduce_input(ctx, children):
    return (children[0], children[1])


@dialect.rule("hlo_reduce_inputs")
def _hlo_reduce_inputs(ctx, children):
    return children


def _reduce_operands(ctx, inputs, ftype):
    n = len(inputs)
    if len(ftype.inputs) != 2 * n:
        raise ctx.fail(f"expected {2 * n} operand types, got {len(ftype.inputs)}")
    values = [ctx.resolve(tok, t) for (tok, _), t in zip(inputs, ftype.inputs[:n])]
    inits = [ctx.resolve(tok, t) for (_, tok), t in zip(inputs, ftype.inputs[n:])]
    return values + inits


def _scalar_tensor(t):
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType((), t.element)
    if isinstance(t, T.UnrankedTensorType):
        return T.RankedTensorType((), t.element)
    return t


def _reduce_dims_attr(name: str, dims: list):
    """stablehlo's `array<i64: ...>`; mhlo's reduce keeps `dense<[...]> : tensor<Nxi64>`."""
    if prefix_of(name) == "mhlo":
        return parse_dense("[" + ", ".join(map(str, dims)) + "]", T.RankedTensorType((len(dims),), T.i64))
    return i64_array(dims)


def _reduce_dims(op) -> list:
    """The reduce dimensions in the attribute kind the prefix's custom syntax reads back."""
    a = op.attr("dimensions")
    if prefix_of(op.name) == "mhlo":
        _need(isinstance(a, DenseElementsAttr) and a.hex is None and len(a.shape) == 1
              and a.type.element == T.i64)
        return [int(v) for v in (list(a.values) * a.shape[0] if a.splat else a.values)]
    return _arr(op, "dimensions")


@dialect.rule("hlo_reduce_compact")
def _hlo_reduce_compact(ctx, children):
    name, inputs, body_tok, dims, attrs, ftype = children
    operands = _reduce_operands(ctx, inputs, ftype)
    n = len(inputs)
    block = Block()
    arg_types = [_scalar_tensor(v.type) for v in operands[n:]]
    lhs = [block.add_argument(t) for t in arg_types]
    rhs = [block.add_argument(t) for t in arg_types]
    for i, v in enumerate(lhs + rhs):  # named, so the printer's numbering does not move
        v.name = f"reduce_arg{i}"
    if n != 1:
        raise ctx.fail("the compact `applies` form takes one input")
    prefix = prefix_of(name.value)
    if prefix_of(body_tok.value) != prefix or short_of(body_tok.value) not in _COMMUTATIVE:
        raise ctx.fail(f"expected the inner-op to be a commutative binary-op from the {prefix} dialect, with zero "
                       "region, producing single result", body_tok)
    inner = Operation(body_tok.value, [lhs[0], rhs[0]], [arg_types[0]])
    inner.name_span = ctx.token_span(body_tok)
    inner.results[0].name = "reduce_result"
    ret = Operation(f"{prefix_of(name.value)}.return", [inner.results[0]])
    block.append(inner)
    block.append(ret)
    attributes = {"dimensions": _reduce_dims_attr(name.value, _ints(dims, ctx))}
    attributes.update(attrs or {})
    return hlo_create(ctx, name.value, operands, list(ftype.results), attributes, [Region([block])])


@dialect.rule("hlo_reducer_pair")
def _hlo_reducer_pair(ctx, children):
    return (children[0], children[1])


@dialect.rule("hlo_reducer")
def _hlo_reducer(ctx, children):
    pairs = children
    ctx.set_entry_args([p[0] for p in pairs] + [p[1] for p in pairs])
    return pairs


@dialect.rule("hlo_reduce_long")
def _hlo_reduce_long(ctx, children):
    name, inputs, dims, attrs, ftype, _pairs, region = children
    operands = _reduce_operands(ctx, inputs, ftype)
    attributes = {"dimensions": _reduce_dims_attr(name.value, _ints(dims, ctx))}
    attributes.update(attrs or {})
    return hlo_create(ctx, name.value, operands, list(ftype.results), attributes, [region])


# ---- while -------------------------------------------------------------------------------
@dialect.rule("hlo_while_arg")
def _hlo_while_arg(ctx, children):
    return (children[0], children[1])


@dialect.rule("hlo_while_head")
def _hlo_while_head(ctx, children):
    name, *rest = children
    args = [a for a in rest[:-2] if a is not None]
    types, attrs = rest[-2], rest[-1]
    types = list(types or [])
    if len(types) != len(args):
        raise ctx.fail(f"expected {len(args)} types for the loop values, got {len(types)}")
    operands = [ctx.resolve(init, t) for (_, init), t in zip(args, types)]
    entry = [(tok, t, None) for (tok, _), t in zip(args, types)]
    stack = ctx.__dict__.setdefault("_hlo_while_args", [])
    stack.append(entry)
    ctx.set_entry_args(entry)
    return (name, operands, types, attrs)


@dialect.rule("hlo_do")
def _hlo_do(ctx, children):
    stack = ctx.__dict__.setdefault("_hlo_while_args", [])
    if stack:
        ctx.set_entry_args(stack.pop())
    return None


@dialect.rule("hlo_while")
def _hlo_while(ctx, children):
    (name, operands, types, attrs), cond, _, body = children
    return hlo_create(ctx, name.value, operands, types, attrs or {}, [cond, body])


# ---- custom syntax: printing ---------------------------------------------------------------
def _print_return(p, op) -> None:
    p.write(op.name, p.op_attr_dict(op))
    if op.operands:
        p.write(" ", p.values(op.operands), " : ", p.types(op.operand_types))




@dialect.rule("hlo_return")
def _hlo_return(ctx, children):
    name, attrs, uses, types = children
    return hlo_create(ctx, name.value, ctx.resolve_all(uses, types or []), (), attrs)


def custom(fn):
    """A custom printer that falls back to the generic form when `fn` raises `_Generic`
    (an attribute without a custom spelling) or fails on unexpected IR."""
    def print_op(p, op) -> None:
        n = len(p.out)
        try:
            fn(p, op)
        except Exception:  # noqa: BLE001 - anything odd: the generic form is always right
            del p.out[n:]
            p.generic_op(op)
    return print_op


def _need(cond) -> None:
    if not cond:
        raise _Generic()


def _arr(op, key) -> list:
    a = op.attr(key)
    _need(isinstance(a, DenseArrayAttr) and a.element_type == T.i64)
    return list(a.values)


def _list_text(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _sig_same(p, op) -> str:
    types = op.operand_types + op.result_types
    if types and all(t == types[0] for t in types) and len(op.results) == 1:
        return p.type(types[0])
    return p.function_type(op.operand_types, op.result_types)


def _sig_func(p, op) -> str:
    return p.function_type(op.operand_types, op.result_types)


@custom
def _print_constant(p, op) -> None:
    value = op.attr("value")
    _need(value is not None and getattr(value, "type", None) == op.results[0].type)
    _need(not isinstance(value, TypeAttr))
    attrs = p.op_attr_dict(op, elide=("value",))
    # after an attribute dictionary the grammar takes only a dense literal (`hlo_constant_value`)
    _need(not attrs or isinstance(value, (DenseElementsAttr, SelfTypedDenseAttr, DenseResourceAttr)))
    p.write(op.name, attrs, " ", str(value) if attrs else p.attr(value))


@custom
def _print_custom_call(p, op) -> None:
    target = op.attr("call_target_name")
    _need(isinstance(target, StringAttr))
    p.write(op.name, " ", p.symbol(target.value), "(", p.values(op.operands), ")",
            p.op_attr_dict(op, elide=("call_target_name",)), " : ", _sig_func(p, op))


@custom
def _print_composite(p, op) -> None:
    label = op.attr("name")
    _need(isinstance(label, StringAttr))
    p.write(op.name, " ", str(label), " " if op.operands else "", p.values(op.operands),
            p.op_attr_dict(op, elide=("name",)), " : ", _sig_func(p, op))


@custom
def _print_convolution(p, op) -> None:
    prefix = prefix_of(op.name)
    dims = op.attr("dimension_numbers")
    _need(isinstance(dims, OpaqueAttr) and dims.text.startswith(f"#{prefix}.conv<["))
    _need(len(op.operands) == 2)
    window = []
    used = ["dimension_numbers"]
    for word, key in (("stride", "window_strides"), ("pad", "padding"), ("lhs_dilate", "lhs_dilation"),
                      ("rhs_dilate", "rhs_dilation"), ("reverse", "window_reversal")):
        a = op.attr(key)
        if a is None:
            continue
        used.append(key)
        if key == "padding":
            _need(isinstance(a, DenseElementsAttr) and len(a.shape) == 2 and a.shape[1] == 2 and a.hex is None)
            n = a.shape[0]
            vals = list(a.values) * (2 * n) if a.splat else list(a.values)
            _need(len(vals) == 2 * n)
            rows = ", ".join(f"[{int(vals[2 * i])}, {int(vals[2 * i + 1])}]" for i in range(n))
            window.append(f"pad = [{rows}]")
        elif key == "window_reversal":
            _need(isinstance(a, DenseArrayAttr) and a.element_type == T.i1)
            window.append("reverse = [" + ", ".join("true" if v else "false" for v in a.values) + "]")
        else:
            window.append(f"{word} = {_list_text(_arr(op, key))}")
    p.write(op.name, "(", p.values(op.operands), ") dim_numbers = ", dims.text[len(prefix) + 7:-1],
            ", window = {", ", ".join(window), "}", p.op_attr_dict(op, elide=used), " : ", _sig_func(p, op))


_COMMUTATIVE = ("add", "and", "maximum", "minimum", "multiply", "or", "xor")


def _compact_reduce_body(op):
    """The op name of a reduce body `%r = op %a, %b; return %r`, else None."""
    if len(op.regions) != 1 or len(op.regions[0].blocks) != 1 or len(op.operands) != 2:
        return None
    block = op.regions[0].blocks[0]
    if len(block.ops) != 2 or len(block.arguments) != 2:
        return None
    inner, ret = block.ops
    if inner.regions or inner.attributes or len(inner.results) != 1 or len(inner.operands) != 2:
        return None
    if not ret.name.endswith(".return") or list(ret.operands) != [inner.results[0]]:
        return None
    if list(inner.operands) != list(block.arguments):
        return None
    t = block.arguments[0].type
    if block.arguments[1].type != t or inner.results[0].type != t:
        return None
    init = op.operands[1].type
    if not isinstance(init, T.RankedTensorType) or t != T.RankedTensorType((), init.element):
        return None
    if prefix_of(inner.name) != prefix_of(op.name) or short_of(inner.name) not in _COMMUTATIVE:
        return None
    return inner.name


@custom
def _print_reduce(p, op) -> None:
    n = len(op.operands) // 2
    _need(n >= 1 and len(op.operands) == 2 * n and len(op.regions) == 1)
    inputs = ", ".join(f"({p.value(a)} init: {p.value(b)})" for a, b in zip(op.operands[:n], op.operands[n:]))
    dims = _list_text(_reduce_dims(op))
    attrs = p.op_attr_dict(op, elide=("dimensions",))
    body = _compact_reduce_body(op)
    p.write(op.name, inputs)
    if body is not None:
        p.write(" applies ", body, " across dimensions = ", dims, attrs, " : ", _sig_func(p, op))
        return
    region = op.regions[0]
    _need(len(region.blocks) >= 1 and len(region.blocks[0].arguments) == 2 * n)
    args = region.blocks[0].arguments
    p.write(" across dimensions = ", dims, attrs, " : ", _sig_func(p, op), "\n", "  " * (p.level + 1), "reducer")
    for a, b in zip(args[:n], args[n:]):
        p.write(f"({p.value(a)}: {p.type(a.type)}, {p.value(b)}: {p.type(b.type)})")
    p.write(" ")
    p.region(region, print_entry_args=False)


@custom
def _print_while(p, op) -> None:
    _need(len(op.regions) == 2 and all(len(r.blocks) >= 1 for r in op.regions))
    cond, body = op.regions
    cargs, bargs = cond.blocks[0].arguments, body.blocks[0].arguments
    n = len(op.operands)
    _need(len(cargs) == n and len(bargs) == n and op.operand_types == op.result_types)
    _need([a.type for a in cargs] == op.operand_types == [a.type for a in bargs])
    for c, b in zip(cargs, bargs):  # one name for both regions' arguments, as the header declares
        p.names[id(b)] = p.names[id(c)]
    p.write(op.name, "(", ", ".join(f"{p.value(a)} = {p.value(v)}" for a, v in zip(cargs, op.operands)), ")")
    if n:
        p.write(" : ", p.types(op.operand_types))
    p.write(p.attr_dict(op.attributes, keyword="attributes"), "\n", "  " * (p.level + 1), "cond ")
    p.region(cond, print_entry_args=False)
    p.write(" do ")
    p.region(body, print_entry_args=False)


PRINTERS.update({
    "constant": _print_constant,
    "custom_call": _print_custom_call, "composite": _print_composite, "convolution": _print_convolution,
    "reduce": _print_reduce, "while": _print_while, "return": custom(_print_return),
})


# ---- declared assembly formats: the regular families -----------------------------------------
# As StableHLO's ODS declares them (`$lhs `,` $rhs attr-dict `:`
# custom<SameOperandsAndResultType>(...)`), for stablehlo and mhlo alike (one rule per prefix).
# Printing raises where the IR has no custom spelling (an attribute of another kind, a type
# the short form cannot say): the printer then writes the generic form.
class _EnumWord:
    """An HLO enum attribute written as its bare word: `GT` for `#stablehlo<comparison_direction GT>`."""

    grammar = "BARE_ID"

    def __init__(self, prefix: str, kind: str):
        self.prefix, self.kind = prefix, kind
        self.pattern = re.compile(rf"#{prefix}<{kind} (\w+)>")

    def parse(self, ctx, tok):
        return enum_attr(self.prefix, self.kind, tok.value)

    def print(self, p, attr) -> str:
        return self.pattern.fullmatch(attr.text).group(1)


class _I64List:
    """`[0, 1]`: a dense i64 array (`array<i64: 0, 1>`)."""

    grammar = "hlo_list"

    def parse(self, ctx, items):
        return i64_array(_ints(items, ctx))

    def print(self, p, attr) -> str:
        _need(isinstance(attr, DenseArrayAttr) and attr.element_type == T.i64)
        return _list_text(attr.values)


class _Int:
    """An integer of `type` written bare: `dim = 0` (i64), `%t[1]` (i32)."""

    def __init__(self, type, grammar: str):
        self.type, self.grammar = type, grammar

    def parse(self, ctx, item):
        return IntegerAttr(_int(item if isinstance(item, tuple) else (item.value, item), ctx), self.type)

    def print(self, p, attr) -> str:
        _need(isinstance(attr, IntegerAttr) and attr.type == self.type)
        return str(attr.value)


def _print_same_types(p, op):
    """`T` when every operand and the one result have type T, else the function type."""
    return " " + _sig_same(p, op), ()


def same_types(n_operands: int) -> Custom:
    """custom<SameOperandsAndResultType>: one type for all, or a function type."""
    def parse(ctx, name, t):
        if not isinstance(t, T.FunctionType):
            return (t,) * (n_operands + 1)
        if len(t.inputs) != n_operands:
            raise ctx.fail(f"custom op '{name}' {n_operands} operands present, but expected {len(t.inputs)}")
        if len(t.results) != 1:
            raise ctx.fail(f"custom op '{name}' expected single output")
        return (*t.inputs, t.results[0])
    return Custom("type", parse, _print_same_types)


def _parse_complex_types(ctx, name, t):
    """custom<ComplexOpType>: `tensor<..xcomplex<E>>` (operands: the parts) or a function type."""
    if isinstance(t, T.FunctionType):
        return same_types(2).parse(ctx, name, t)
    if not isinstance(t, (T.RankedTensorType, T.UnrankedTensorType)) or \
            not isinstance(T.element_type(t), T.ComplexType):
        raise ctx.fail(f"custom op '{name}' expected tensor with complex element type")
    part = shaped_like(t, T.element_type(t).element)
    return part, part, t


def _print_complex_types(p, op):
    t = op.result_named("result").type
    e = T.element_type(t)
    if isinstance(e, T.ComplexType) and op.operand_types == [shaped_like(t, e.element)] * 2:
        return " " + p.type(t), ()
    return " " + _sig_func(p, op), ()


def _parse_select_types(ctx, name, types):
    """custom<SelectOpType>: `pred type, T` or a function type."""
    if len(types) == 2:
        return types[0], types[1], types[1], types[1]
    if len(types) == 1 and isinstance(types[0], T.FunctionType):
        ftype = types[0]
        if len(ftype.inputs) != 3 or len(ftype.results) != 1:
            raise ctx.fail(f"custom op '{name}' expected a function type with 3 inputs and 1 result")
        return (*ftype.inputs, ftype.results[0])
    raise ctx.fail(f"custom op '{name}' expected functional type or list of two types")


def _print_select_types(p, op):
    pred, a, b = op.operand_types
    if a == b == op.result_named("result").type:
        return f" {p.type(pred)}, {p.type(a)}", ()
    return " " + _sig_func(p, op), ()


_SLICE_KEYS = ("start_indices", "limit_indices", "strides")


def _parse_slice_ranges(ctx, name, ranges):
    """`[0:2, 1:4:2]`: start, limit and stride (1 when left out) per dimension."""
    return {key: i64_array(r[k] for r in ranges) for k, key in enumerate(_SLICE_KEYS)}


def _print_slice_ranges(p, op):
    starts, limits, strides = (_arr(op, key) for key in _SLICE_KEYS)
    _need(len(starts) == len(limits) == len(strides))
    ranges = [f"{s}:{l}" + (f":{k}" if k != 1 else "") for s, l, k in zip(starts, limits, strides)]
    return " [" + ", ".join(ranges) + "]", _SLICE_KEYS


class _Words(_EnumWord):
    """`[DEFAULT, HIGHEST]`: an array of `#prefix<kind WORD>` enum attributes (precision_config)."""

    grammar = "hlo_list"

    def parse(self, ctx, items):
        words = []
        for item in items:
            if not (isinstance(item, tuple) and item[0] == "bare"):
                raise ctx.fail(f"expected a {self.kind} word")
            words.append(enum_attr(self.prefix, self.kind, item[1].value))
        return ArrayAttr(tuple(words))

    def print(self, p, attr) -> str:
        _need(isinstance(attr, ArrayAttr))
        words = [self.pattern.fullmatch(str(item)) for item in attr.items]
        _need(all(words))
        return _list_text(m.group(1) for m in words)


class _Bool:
    """`true` / `false` (cholesky's `lower`)."""

    grammar = "BARE_ID"

    def parse(self, ctx, tok):
        if tok.value not in ("true", "false"):
            raise ctx.fail(f"expected true or false, got '{tok.value}'", tok)
        return BoolAttr(tok.value == "true")

    def print(self, p, attr) -> str:
        _need(isinstance(attr, IntegerAttr) and attr.type == T.i1)
        return "true" if attr.value else "false"


class _DotAlgorithm:
    """`<lhs_precision_type = tf32, ...>`: the body of `#prefix.dot_algorithm<...>`."""

    grammar = "hlo_dot_algorithm"

    def __init__(self, prefix: str):
        self.head = f"#{prefix}.dot_algorithm<"

    def parse(self, ctx, entries):
        return OpaqueAttr(self.head + ", ".join(f"{k} = {v}" for k, v, _ in entries) + ">")

    def print(self, p, attr) -> str:
        _need(isinstance(attr, OpaqueAttr) and attr.text.startswith(self.head))
        return f"<{attr.body}>"


_DOT_FIELD = re.compile(r"(\w+) = \[([^\]]*)\]")
_DOT_KEYS = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
             "rhs_contracting_dimensions")


def _parse_dot_dims(ctx, name, child):
    """custom<DotDimensionNumbers>: `batching_dims = [0] x [0], contracting_dims = [2] x [1]`
    (batching optional) -> `#prefix.dot<...>` with the non-empty fields."""
    lists = [_ints(items, ctx) for pair in child for items in pair]
    if len(lists) == 2:
        lists = [[], []] + lists
    fields = [f"{key} = {_list_text(values)}" for key, values in zip(_DOT_KEYS, lists) if values]
    return {"dot_dimension_numbers": OpaqueAttr(f"#{prefix_of(name)}.dot<{', '.join(fields)}>")}


def _print_dot_dims(p, op):
    prefix = prefix_of(op.name)
    a = op.attr("dot_dimension_numbers")
    _need(isinstance(a, OpaqueAttr) and a.text.startswith(f"#{prefix}.dot<") and a.text.endswith(">"))
    body = a.text[len(prefix) + 6:-1].strip()
    fields = {m.group(1): [int(x) for x in m.group(2).replace(" ", "").split(",") if x]
              for m in _DOT_FIELD.finditer(body)}
    _need(_DOT_FIELD.sub("", body).replace(",", "").strip() == "")
    _need(set(fields) <= set(_DOT_KEYS))
    # the custom form reads back in this order: a verbatim attribute in another order stays generic
    _need(list(fields) == [k for k in _DOT_KEYS if k in fields])
    lb, rb, lc, rc = (fields.get(k, []) for k in _DOT_KEYS)
    batching = f" batching_dims = {_list_text(lb)} x {_list_text(rb)}," if lb or rb else ""
    return f"{batching} contracting_dims = {_list_text(lc)} x {_list_text(rc)}", ("dot_dimension_numbers",)


@dialect.rule("hlo_dims_pair")
def _hlo_dims_pair(ctx, children):
    lhs, x, rhs = children
    if x.value != "x":
        raise ctx.fail(f"expected 'x', found '{x.value}'", x)
    return lhs, rhs


_FORMAT = re.compile(r"e(\d+)m(\d+)\Z")


def _parse_exponent_mantissa(ctx, name, tok):
    """custom<ExponentMantissa>: `e5m10` -> exponent_bits 5, mantissa_bits 10 (i32)."""
    if tok.type == "STRING":  # as MLIR's parseKeyword: a string is no keyword
        raise ctx.fail(f"custom op '{name}' expected valid keyword", tok)
    m = _FORMAT.match(tok.value)
    if m is None:
        raise ctx.fail(f"custom op '{name}' expected exponent mantissa in format e#m#, saw {tok.value}", tok)
    return {"exponent_bits": IntegerAttr(int(m.group(1)), T.i32), "mantissa_bits": IntegerAttr(int(m.group(2)), T.i32)}


def _print_exponent_mantissa(p, op):
    e, m = op.attr("exponent_bits"), op.attr("mantissa_bits")
    _need(isinstance(e, IntegerAttr) and isinstance(m, IntegerAttr) and e.type == T.i32 and m.type == T.i32)
    return f" e{e.value}m{m.value}", ("exponent_bits", "mantissa_bits")


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
    _need(all(v.type == t for v in op.operands_named("inputs")))
    return " " + p.type(t), ()


def _parse_pairwise_types(ctx, name, types):
    """custom<PairwiseOpType>: the operands' types, which are the results' too."""
    return list(types), list(types)


def _print_pairwise_types(p, op):
    types = [v.type for v in op.operands_named("operand")]
    _need(types and types == [r.type for r in op.results])
    return " " + p.types(types), ()


def _parse_tuple_type(ctx, name, t):
    """custom<TupleOpType>: the result's tuple type gives the operands' types."""
    if not isinstance(t, T.TupleType):
        raise ctx.fail(f"custom op '{name}' expected tuple type")
    return list(t.types), t


def _print_tuple_type(p, op):
    t = op.result_named("result").type
    _need(isinstance(t, T.TupleType) and tuple(op.operand_types) == tuple(t.types))
    return " " + p.type(t), ()


_SELECT_TYPES = Custom("types", _parse_select_types, _print_select_types)
_COMPLEX_TYPES = Custom("type", _parse_complex_types, _print_complex_types)
_SLICE_RANGES = Custom("hlo_slice_ranges", _parse_slice_ranges, _print_slice_ranges)
_DOT_DIMS = Custom("hlo_dot_dims", _parse_dot_dims, _print_dot_dims)
_EXPONENT_MANTISSA = Custom("(BARE_ID | STRING)", _parse_exponent_mantissa, _print_exponent_mantissa)
_TUPLE_TYPE = Custom("type", _parse_tuple_type, _print_tuple_type)
_SAME_VARIADIC_TYPES = Custom("type", _parse_same_variadic_types, _print_same_variadic_types)
_PAIRWISE_TYPES = Custom("types", _parse_pairwise_types, _print_pairwise_types)
_I64S = _I64List()
_I64 = _Int(T.i64, "number")
_FUNCTIONAL = "attr-dict `:` functional-type(operands, results)"
_SAME_TYPES = "attr-dict `:` custom<SameTypes>"


def same_types_format(*names: str, result: str = "result") -> str:
    """`attr-dict : custom<SameTypes>(type($a), ..., type($result))` over operands `names`."""
    return _SAME_TYPES + "(" + ", ".join(f"type(${n})" for n in (*names, result)) + ")"


def _precision(prefix: str) -> _Words:
    return _Words(prefix, "precision")


#: family -> (short names, format, operands, named attributes (name -> kind, or a function of the
#: prefix giving it), customs[, results]). Results: one, `result`, unless given.
FORMATS = {
    "unary": (UNARY + UNARY_ACCURACY + ("convert", "uniform_quantize", "uniform_dequantize"),
              "$operand " + same_types_format("operand"), ("operand",), {}, {"SameTypes": same_types(1)}),
    "binary": (tuple(n for n in BINARY if n != "complex"), "$lhs `,` $rhs " + same_types_format("lhs", "rhs"),
               ("lhs", "rhs"), {}, {"SameTypes": same_types(2)}),
    "complex": (("complex",), "$lhs `,` $rhs attr-dict `:` custom<ComplexTypes>(type($lhs), type($rhs), "
                "type($result))", ("lhs", "rhs"), {}, {"ComplexTypes": _COMPLEX_TYPES}),
    "clamp": (("clamp",), "$min `,` $operand `,` $max " + same_types_format("min", "operand", "max"),
              ("min", "operand", "max"), {}, {"SameTypes": same_types(3)}),
    "select": (("select",), "$pred `,` $on_true `,` $on_false attr-dict `:` custom<SelectTypes>(type($pred), "
               "type($on_true), type($on_false), type($result))", ("pred", "on_true", "on_false"), {},
               {"SelectTypes": _SELECT_TYPES}),
    "compare": (("compare",), "$comparison_direction `,` $lhs `,` $rhs (`,` $compare_type^)? " + _FUNCTIONAL,
                ("lhs", "rhs"), {"comparison_direction": lambda prefix: _EnumWord(prefix, "comparison_direction"),
                                 "compare_type": lambda prefix: _EnumWord(prefix, "comparison_type")}, {}),
    "cast": (("reshape", "bitcast_convert"), "$operand " + _FUNCTIONAL, ("operand",), {}, {}),
    "broadcast_in_dim": (("broadcast_in_dim",), "$operand `,` `dims` `=` $broadcast_dimensions " + _FUNCTIONAL,
                         ("operand",), {"broadcast_dimensions": _I64S}, {}),
    "broadcast": (("broadcast",), "$operand `,` `sizes` `=` $broadcast_sizes " + _FUNCTIONAL, ("operand",),
                  {"broadcast_sizes": _I64S}, {}),
    "transpose": (("transpose",), "$operand `,` `dims` `=` $permutation " + _FUNCTIONAL, ("operand",),
                  {"permutation": _I64S}, {}),
    "reverse": (("reverse",), "$operand `,` `dims` `=` $dimensions " + same_types_format("operand"), ("operand",),
                {"dimensions": _I64S}, {"SameTypes": same_types(1)}),
    "iota": (("iota",), "`dim` `=` $iota_dimension attr-dict `:` type($result)", (),
             {"iota_dimension": _I64}, {}),
    "get_tuple_element": (("get_tuple_element",), "$operand `[` $index `]` " + _FUNCTIONAL, ("operand",),
                          {"index": _Int(T.i32, "INTEGER")}, {}),
    "slice": (("slice",), "$operand custom<SliceRanges> " + _FUNCTIONAL, ("operand",), {},
              {"SliceRanges": _SLICE_RANGES}),
    "concatenate": (("concatenate",), "$inputs `,` `dim` `=` $dimension " + _FUNCTIONAL, ("inputs*",),
                    {"dimension": _I64}, {}),
    "dynamic_slice": (("dynamic_slice",), "$operand `,` $start_indices `,` `sizes` `=` $slice_sizes " + _FUNCTIONAL,
                      ("operand", "start_indices*"), {"slice_sizes": _I64S}, {}),
    "dynamic_update_slice": (("dynamic_update_slice",), "$operand `,` $update (`,` $start_indices^)? " + _FUNCTIONAL,
                             ("operand", "update", "start_indices*"), {}, {}),
    "pad": (("pad",), "$operand `,` $padding_value `,` `low` `=` $edge_padding_low `,` `high` `=` "
            "$edge_padding_high `,` `interior` `=` $interior_padding " + _FUNCTIONAL, ("operand", "padding_value"),
            {"edge_padding_low": _I64S, "edge_padding_high": _I64S, "interior_padding": _I64S}, {}),
    "dot": (("dot",), "$lhs `,` $rhs (`,` `precision` `=` $precision_config^)? " + _FUNCTIONAL, ("lhs", "rhs"),
            {"precision_config": _precision}, {}),
    "dot_general": (("dot_general",), "$lhs `,` $rhs `,` custom<DotDimensionNumbers> (`,` `precision` `=` "
                    "$precision_config^)? (`,` `algorithm` `=` $algorithm^)? " + _FUNCTIONAL, ("lhs", "rhs"),
                    {"precision_config": _precision, "algorithm": _DotAlgorithm}, {"DotDimensionNumbers": _DOT_DIMS}),
    "einsum": (("einsum",), "$lhs `,` $rhs `,` `config` `=` $einsum_config " + _FUNCTIONAL, ("lhs", "rhs"),
               {"einsum_config": StringAttrKind()}, {}),
    "unary_einsum": (("unary_einsum",), "$operand `,` `config` `=` $einsum_config " + _FUNCTIONAL, ("operand",),
                     {"einsum_config": StringAttrKind()}, {}),
    "fft": (("fft",), "$operand `,` `type` `=` $fft_type `,` `length` `=` $fft_length " + _FUNCTIONAL,
            ("operand",), {"fft_type": lambda prefix: _EnumWord(prefix, "fft_type"), "fft_length": _I64S}, {}),
    "rng": (("rng",), "$a `,` $b `,` $shape `,` `distribution` `=` $rng_distribution " + _FUNCTIONAL,
            ("a", "b", "shape"), {"rng_distribution": lambda prefix: _EnumWord(prefix, "rng_distribution")}, {}),
    "rng_bit_generator": (("rng_bit_generator",), "$initial_state `,` `algorithm` `=` $rng_algorithm " + _FUNCTIONAL,
                          ("initial_state",), {"rng_algorithm": lambda prefix: _EnumWord(prefix, "rng_algorithm")},
                          {}, ("output_state", "output")),
    "cholesky": (("cholesky",), "$a (`,` `lower` `=` $lower^)? " + same_types_format("a"), ("a",), {"lower": _Bool()},
                 {"SameTypes": same_types(1)}),
    "reduce_precision": (("reduce_precision",), "$operand `,` `format` `=` custom<ExponentMantissa> "
                         + same_types_format("operand", result="output"), ("operand",), {},
                         {"ExponentMantissa": _EXPONENT_MANTISSA, "SameTypes": same_types(1)}, ("output",)),
    "dimension_size": (("get_dimension_size",), "$operand `,` `dim` `=` $dimension " + _FUNCTIONAL, ("operand",),
                       {"dimension": _I64}, {}),
    "set_dimension_size": (("set_dimension_size",), "$operand `,` $size `,` `dim` `=` $dimension " + _FUNCTIONAL,
                           ("operand", "size"), {"dimension": _I64}, {}),
    "dynamic_iota": (("dynamic_iota",), "$output_shape `,` `dim` `=` $iota_dimension " + _FUNCTIONAL,
                     ("output_shape",), {"iota_dimension": _I64}, {}),
    "dynamic_broadcast_in_dim": (("dynamic_broadcast_in_dim",), "$operand `,` $output_dimensions `,` `dims` `=` "
                                 "$broadcast_dimensions " + _FUNCTIONAL, ("operand", "output_dimensions"),
                                 {"broadcast_dimensions": _I64S}, {}),
    "dynamic_reshape": (("dynamic_reshape",), "$operand `,` $output_shape " + _FUNCTIONAL,
                        ("operand", "output_shape"), {}, {}),
    "dynamic_pad": (("dynamic_pad",), "$operand `,` $padding_value `,` $edge_padding_low `,` $edge_padding_high "
                    "`,` $interior_padding " + _FUNCTIONAL,
                    ("operand", "padding_value", "edge_padding_low", "edge_padding_high", "interior_padding"), {}, {}),
    "real_dynamic_slice": (("real_dynamic_slice",), "$operand `,` $start_indices `,` $limit_indices `,` $strides "
                           + _FUNCTIONAL, ("operand", "start_indices", "limit_indices", "strides"), {}, {}),
    "tuple": (("tuple",), "$val attr-dict `:` custom<TupleType>(type($val), type($result))", ("val*",), {},
              {"TupleType": _TUPLE_TYPE}),
    "nullary": (("create_token", "replica_id", "partition_id"), "attr-dict `:` type($result)", (), {}, {}),
    "after_all": (("after_all",), "$inputs attr-dict `:` custom<SameVariadicTypes>(ref($inputs), type($inputs), "
                  "type($result))", ("inputs*",), {}, {"SameVariadicTypes": _SAME_VARIADIC_TYPES}),
    # (the operands before the attribute dictionary, as mlirtext has always printed it; StableHLO's
    # ODS writes the dictionary first: the same text when there is none)
    "optimization_barrier": (("optimization_barrier",), "$operand attr-dict `:` custom<PairwiseTypes>(type($operand), "
                             "type($result))", ("operand*",), {}, {"PairwiseTypes": _PAIRWISE_TYPES}, ("result*",)),
}


def declare_formats(d: Dialect, prefix: str, verifier) -> set:
    """Declare the `FORMATS` families on `d` under `prefix`; `verifier(short name)` gives each
    op's check. Returns the short names declared."""
    declared = set()
    for family, (shorts, text, operands, attributes, customs, *results) in FORMATS.items():
        kinds = {k: v(prefix) if callable(v) else v for k, v in attributes.items()}

        def per_op(name: str) -> dict:
            short = short_of(name)
            summary, props, _regions, pure = OTHER.get(short) or (f"Elementwise {short}.", (), False, True)
            if short in UNARY_ACCURACY:
                props = ("result_accuracy",)
            return {"summary": summary, "traits": (PURE,) if pure else (), "properties": props,
                    "verify": verifier(short)}

        declare_family(d, family, [f"{prefix}.{s}" for s in shorts], text, operands=operands,
                       results=results[0] if results else ("result",), attributes=kinds, custom=customs, per_op=per_op,
                       strict_properties=False, build=hlo_create)
        declared.update(shorts)
    return declared


def declare_top_k(d: Dialect, name: str, largest: bool, verify) -> None:
    """`chlo.top_k(%x, k = 5) : T -> (T1, T2)`; mhlo's `topk` takes `, largest = true` too (both
    dialects' ODS formats)."""
    option = " (`,` `largest` `=` $largest^)?" if largest else ""
    declare_family(d, short_of(name), [name], "`(` $operand `,` `k` `=` $k" + option + " `)` attr-dict `:` "
                   "type($operand) `->` `(` type($values) `,` type($indices) `)`", operands=("operand",),
                   results=("values", "indices"), attributes={"k": _I64, **({"largest": _Bool()} if largest else {})},
                   strict_properties=False, build=hlo_create, summary="The k largest elements and their indices.",
                   traits=(PURE,), properties=("k", "largest") if largest else ("k",), verify=verify)


# ---- declarations (after the printers they use) -----------------------------------------
declare_op_set(dialect, "stablehlo", PRINTERS)
