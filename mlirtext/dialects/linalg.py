"""linalg: structured ops on tensors and memrefs.

Families:
- `linalg.generic`: indexing maps + iterator types + an explicit region;
- named structured ops (`matmul`, `fill`, `conv_*`, `pooling_*`, elementwise
  named ops, ...): `ins(...) outs(...)`; their region is implicit in the text
  and built here (the body MLIR's region builder makes), so the generic print
  carries it as MLIR's does;
- `map` / `reduce` (explicit region, or the short form `{ arith.addf }`),
  `transpose` / `broadcast` (body `yield %in`);
- `softmax`, `winograd_*`, `pack` / `unpack` (no region);
- `index`, `yield`.

Results: one per tensor `outs` operand; none for memrefs.

Verification follows MLIR's structured-op interface (operand/map/loop counts,
invertible maps, block argument and yield types, static shapes against the
loop ranges the maps imply; convolutions and poolings get their maps from
their layout, strides and dilations) with MLIR's messages. Older spellings
are read and printed in the newer form: `tensor.pack`/`unpack`,
`matmul_transpose_a/b` (matmul with `indexing_maps`), a `linalg.map` mapper
without the init argument.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import (ArrayAttr, DenseArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr, OpaqueAttr,
                             StringAttr)
from ..ir.core import Block, Operation, Region
from .affine_maps import evaluate, parse_map
from ..ir.signatures import OpSignature
from .base import PURE, RETURN_LIKE, TERMINATOR, Dialect, VerifyError
from .common import DYNAMIC_INDEX, create, mixed_text, safe_printer
from .registry import builtin_registry

dialect = Dialect("linalg", grammar="linalg")

FASTMATH_NONE = OpaqueAttr("#arith.fastmath<none>")
OVERFLOW_NONE = OpaqueAttr("#arith.overflow<none>")
TRAIT_NAMES = ("indexing_maps", "iterator_types", "doc", "library_call")


# ---- small helpers ---------------------------------------------------------------------
def _is_shaped(t) -> bool:
    return isinstance(t, (T.RankedTensorType, T.UnrankedTensorType, T.MemRefType, T.UnrankedMemRefType))


def _is_tensor(t) -> bool:
    return isinstance(t, (T.RankedTensorType, T.UnrankedTensorType))


def elem(t):
    """The block-argument type for an operand: element type of a tensor/memref, else itself."""
    return t.element if _is_shaped(t) else t


def _rank(t):
    if isinstance(t, (T.RankedTensorType, T.MemRefType)):
        return len(t.shape)
    if _is_shaped(t):
        return None
    return 0


def _shape(t):
    if isinstance(t, (T.RankedTensorType, T.MemRefType)):
        return t.shape
    return None if _is_shaped(t) else ()


def i32_array(*values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i32, tuple(values))


def i64_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i64, tuple(values))


def int_values(attr):
    if isinstance(attr, DenseArrayAttr):
        return list(attr.values)
    if isinstance(attr, ArrayAttr):
        return [a.value for a in attr.items if isinstance(a, IntegerAttr)]
    if attr is not None and hasattr(attr, "values") and not callable(attr.values):
        try:
            return [int(v) for v in attr.values]
        except (TypeError, ValueError):
            return None
    return None


def segments(op) -> tuple[list, list]:
    """(inputs, inits) of a destination-style linalg op."""
    ops = op.operands
    seg = op.attr("operandSegmentSizes")
    if isinstance(seg, DenseArrayAttr) and len(seg.values) == 2 and sum(seg.values) == len(ops):
        n = seg.values[0]
        return ops[:n], ops[n:]
    name = op.name
    if name == "linalg.map":
        return ops[:-1], ops[-1:]
    if name == "linalg.reduce":
        half = len(ops) // 2
        return ops[:half], ops[half:]
    if name in ("linalg.pack", "linalg.unpack"):
        return ops[:1], ops[1:2]
    return ops[:-1], ops[-1:]


def fill_value(op):
    """The scalar a `linalg.fill` writes: the one value of its `inputs` group."""
    (value,), _ = segments(op)
    return value


def _operand_list(ctx, part):
    """`ins(%a, %b : T1, T2)` children -> resolved values and their types."""
    if part is None:
        return [], []
    uses, types = part
    uses, types = uses or [], types or []
    return ctx.resolve_all(uses, types), list(types)


def _tensor_results(types):
    return [t for t in types if _is_tensor(t)]


# ---- building implicit bodies ----------------------------------------------------------------
class BodyBuilder:
    """Appends scalar arith/math ops to a block (the implicit region of a named op)."""

    def __init__(self, block: Block):
        self.block = block

    def op(self, name, operands, result_type, attributes=None):
        op = Operation(name, operands, [result_type] if result_type is not None else [], attributes or {})
        self.block.append(op)
        if result_type is None:
            return None
        op.results[0].name = "v"  # a name hint: hidden values take no numbers from printed ones
        return op.results[0]

    def cast(self, value, to, unsigned=False):
        src = value.type
        if src == to:
            return value
        if T.is_float(src) and T.is_float(to):
            return self.op("arith.extf" if src.width < to.width else "arith.truncf", [value], to)
        if isinstance(src, T.IntegerType) and T.is_float(to):
            return self.op("arith.uitofp" if unsigned else "arith.sitofp", [value], to)
        if T.is_float(src) and isinstance(to, T.IntegerType):
            return self.op("arith.fptoui" if unsigned else "arith.fptosi", [value], to)
        if isinstance(src, T.IndexType) or isinstance(to, T.IndexType):
            if T.is_integer(src) and T.is_integer(to):
                return self.op("arith.index_castui" if unsigned else "arith.index_cast", [value], to)
            return value
        if isinstance(src, T.IntegerType) and isinstance(to, T.IntegerType):
            if src.width < to.width:
                return self.op("arith.extui" if unsigned else "arith.extsi", [value], to)
            return self.op("arith.trunci", [value], to)
        return value

    def binary(self, kind, a, b):
        t = a.type
        if isinstance(t, T.ComplexType):
            name = {"add": "complex.add", "sub": "complex.sub", "mul": "complex.mul",
                    "div": "complex.div"}.get(kind)
            if name is None:
                raise VerifyError(f"unsupported complex operation {kind}")
            return self.op(name, [a, b], t)
        if T.is_float(t):
            name = {"add": "arith.addf", "sub": "arith.subf", "mul": "arith.mulf", "div": "arith.divf",
                    "max": "arith.maximumf", "min": "arith.minimumf", "powf": "math.powf",
                    "max_unsigned": "arith.maximumf", "min_unsigned": "arith.minimumf"}[kind]
            attrs = {"fastmath": FASTMATH_NONE} if name.startswith("arith.") else {}
            return self.op(name, [a, b], t, attrs)
        if t == T.i1 and kind in ("add", "mul"):
            return self.op("arith.ori" if kind == "add" else "arith.andi", [a, b], t)
        name = {"add": "arith.addi", "sub": "arith.subi", "mul": "arith.muli", "div": "arith.divsi",
                "div_unsigned": "arith.divui", "max": "arith.maxsi", "min": "arith.minsi",
                "max_unsigned": "arith.maxui", "min_unsigned": "arith.minui"}.get(kind, "arith.addi")
        attrs = {"overflowFlags": OVERFLOW_NONE} if name in ("arith.addi", "arith.subi", "arith.muli") else {}
        return self.op(name, [a, b], t, attrs)

    def unary(self, kind, a):
        t = a.type
        name = {"exp": "math.exp", "log": "math.log", "abs": "math.absf", "ceil": "math.ceil",
                "floor": "math.floor", "negf": "arith.negf", "round": "math.round", "sqrt": "math.sqrt",
                "rsqrt": "math.rsqrt", "tanh": "math.tanh", "erf": "math.erf"}.get(kind)
        if kind == "reciprocal":
            one = self.op("arith.constant", [], t, {"value": _one(t)})
            return self.binary("div", one, a)
        if kind == "square":
            return self.binary("mul", a, a)
        if name is None:
            return a
        attrs = {"fastmath": FASTMATH_NONE} if T.is_float(t) else {}
        return self.op(name, [a], t, attrs)

    def yield_(self, values):
        self.op("linalg.yield", list(values), None)


def _one(t):
    return FloatAttr(1.0, t) if T.is_float(t) else IntegerAttr(1, t)


CONTRACTIONS = {"matmul", "batch_matmul", "batch_reduce_matmul", "matvec", "vecmat", "batch_matvec",
                "batch_vecmat", "dot", "contract", "mmt4d", "batch_mmt4d", "matmul_transpose_a",
                "matmul_transpose_b", "batch_matmul_transpose_a", "batch_matmul_transpose_b"}
QUANTIZED = {"quantized_matmul", "quantized_batch_matmul"}
UNARY = ("exp", "log", "abs", "ceil", "floor", "negf", "reciprocal", "round", "sqrt", "rsqrt", "square",
         "tanh", "erf")
BINARY = ("add", "sub", "mul", "div", "div_unsigned", "max", "min", "powf")


def _cast_unsigned(attributes) -> bool:
    cast = attributes.get("cast")
    return isinstance(cast, OpaqueAttr) and "unsigned" in cast.text


def _body_ops(short: str, b: BodyBuilder, args, attributes) -> None:
    """The computation of named op `short` on block arguments `args` (inputs then the init)."""
    out = args[-1]
    u = out.type
    unsigned = _cast_unsigned(attributes)
    if short in CONTRACTIONS or (short.startswith(("conv_", "depthwise_conv_")) and not short.endswith("_q")):
        lhs, rhs = b.cast(args[0], u, unsigned), b.cast(args[1], u, unsigned)
        b.yield_([b.binary("add", out, b.binary("mul", lhs, rhs))])
    elif short in QUANTIZED or short.endswith("_q"):
        a = b.binary("sub", b.cast(args[0], u), b.cast(args[2], u))
        c = b.binary("sub", b.cast(args[1], u), b.cast(args[3], u))
        b.yield_([b.binary("add", out, b.binary("mul", a, c))])
    elif short.startswith("pooling_"):
        kind = short.rsplit("_", 1)[-1] if not short.endswith("_unsigned") else short.split("_")[-2]
        unsigned_pool = short.endswith("_unsigned")
        value = b.cast(args[0], u, unsigned_pool)
        fn = {"sum": "add", "max": "max", "min": "min"}[kind]
        if unsigned_pool and fn != "add":
            fn += "_unsigned"
        b.yield_([b.binary(fn, out, value)])
    elif short in ("fill", "copy"):
        b.yield_([b.cast(args[0], u, unsigned)])
    elif short in UNARY:
        b.yield_([b.unary(short, args[0])])
    elif short in BINARY:
        b.yield_([b.binary(short, args[0], args[1])])
    elif short == "select":
        b.yield_([b.op("arith.select", [args[0], args[1], args[2]], args[1].type)])
    else:
        raise KeyError(short)


def _body_block(in_types, out_types) -> Block:
    """An entry block with one argument per operand (`%in`, ..., `%out`, as MLIR's generalization names them)."""
    block = Block([elem(t) for t in list(in_types) + list(out_types)])
    for i, arg in enumerate(block.arguments):
        arg.name = "in" if i < len(in_types) else "out"
    return block


def build_body(name: str, in_types, out_types, attributes) -> Region:
    """The implicit region of named op `name` (empty when we do not know its body)."""
    block = _body_block(in_types, out_types)
    short = name.split(".", 1)[1]
    if not out_types:
        return Region()
    try:
        _body_ops(short, BodyBuilder(block), block.arguments, attributes)
    except (KeyError, IndexError, VerifyError, AttributeError):
        return Region()
    return Region([block])


def _yield_first_body(in_types, out_types) -> Region:
    block = _body_block(in_types, out_types)
    BodyBuilder(block).yield_([block.arguments[0]])
    return Region([block])


# ---- printing helpers ------------------------------------------------------------------------
def _ins_outs(p, ins, outs) -> str:
    text = ""
    if ins:
        text += f" ins({p.values(ins)} : {p.types([v.type for v in ins])})"
    if outs:
        text += f" outs({p.values(outs)} : {p.types([v.type for v in outs])})"
    return text


def _arrow(p, op) -> str:
    if not op.results:
        return ""
    types = op.result_types
    if len(types) == 1:
        return f" -> {p.type(types[0])}"
    return f" -> ({p.types(types)})"


def _ints_text(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


# ---- structured-op verification -----------------------------------------------------------------
def explicit_indexing_maps(op):
    attr = op.attr("indexing_maps")
    if not isinstance(attr, ArrayAttr):
        return None
    maps = []
    for a in attr.items:
        m = parse_map(str(a))
        if m is None:
            return None
        maps.append(m)
    return maps


def _iterator_count(op):
    attr = op.attr("iterator_types")
    return len(attr.items) if isinstance(attr, ArrayAttr) else None


def verify_results(op, inits) -> None:
    tensors = [v.type for v in inits if _is_tensor(v.type)]
    if len(op.results) != len(tensors):
        raise VerifyError(f"expected the number of tensor results ({len(op.results)}) to be equal to the "
                          f"number of output tensors ({len(tensors)})")
    for i, (r, t) in enumerate(zip(op.result_types, tensors)):
        if r != t:
            raise VerifyError(f"expected type of operand #{len(op.operands) - len(inits) + i} ('{t}') to "
                              f"match type of corresponding result ('{r}')")


def verify_region_args(op, ins, inits, check_count=True) -> None:
    if not op.regions or not op.regions[0].blocks:
        return
    block = op.regions[0].blocks[0]
    operands = list(ins) + list(inits)
    if check_count and len(block.arguments) != len(operands):
        raise VerifyError("expected as many non-induction variable region arguments as the number of "
                          "input/output operands")
    for i, (arg, v) in enumerate(zip(block.arguments, operands)):
        want = elem(v.type)
        if arg.type != want:
            raise VerifyError(f"expected type of bb argument #{i} ('{arg.type}') to match element or self "
                              f"type of the corresponding operand ('{want}')")


def verify_indexing(op, maps, num_loops, ins, inits) -> None:
    operands = list(ins) + list(inits)
    if len(maps) != len(operands):
        raise VerifyError(f"expected the number of indexing_map ({len(maps)}) to be equal to the number of "
                          f"input/output operands ({len(operands)})")
    for i, (m, v) in enumerate(zip(maps, operands)):
        if num_loops is not None and m.num_dims != num_loops:
            raise VerifyError(f"expected indexing_map #{i} to have {num_loops} dim(s) to match the number "
                              "of loops")
        rank = _rank(v.type)
        if rank is not None and rank != m.num_results:
            raise VerifyError(f"expected operand rank ({rank}) to match the result rank of indexing_map "
                              f"#{i} ({m.num_results})")
    # Loop sizes come from the first bare-dimension use of each loop (MLIR inverts the concatenated
    # maps); shapes are only checked when every loop size is static, as MLIR does.
    if num_loops is not None and maps and not loops_invertible(maps, num_loops):
        raise VerifyError("invalid indexing maps are non-invertible: " + _concat_maps_text(maps))
    sizes = {}
    for m, v in zip(maps, operands):
        shape = _shape(v.type)
        if shape is None:
            return
        for (kind, val), d in zip(m.results, shape):
            if kind == "dim" and val not in sizes:
                sizes[val] = d
    if num_loops is None or any(sizes.get(j) is None for j in range(num_loops)):
        return
    for i, (m, v) in enumerate(zip(maps, operands)):
        shape = _shape(v.type)
        if not shape:
            continue
        for k, ((kind, val), d) in enumerate(zip(m.results, shape)):
            if d is None:
                continue
            if kind == "dim":
                want = sizes.get(val)
                if want is not None and want != d:
                    raise VerifyError(f"inferred input/output operand #{i} has shape's dimension #{k} to be "
                                      f"{want}, but found {d}")
            elif kind == "expr":
                if any(sizes.get(j) in (None, 0) for j in range(m.num_dims)):
                    continue
                hi = evaluate(m, val, {j: sizes[j] - 1 for j in range(m.num_dims)})
                lo = evaluate(m, val, {j: 0 for j in range(m.num_dims)})
                if hi is None or lo is None:
                    continue
                want = max(hi, lo) + 1
                if want > d:
                    raise VerifyError(f"inferred input/output operand #{i} has shape's dimension #{k} to be "
                                      f"greater than or equal to {want}, but found {d}")


def loops_invertible(maps, num_loops: int) -> bool:
    """Whether every loop is a bare dimension of some map: the concatenated maps then have an
    inverse (as MLIR requires), so each loop's size is read off an operand's shape."""
    defined = {val for m in maps for kind, val in m.results if kind == "dim"}
    return all(j in defined for j in range(num_loops))


def _concat_maps_text(maps) -> str:
    """All maps' results as one map over d0.., as MLIR prints the concatenation."""
    import re as _re
    m0 = maps[0]
    rename = {name: f"d{i}" for i, name in enumerate(m0.dims)}
    results = []
    for m in maps:
        names = {name: f"d{i}" for i, name in enumerate(m.dims)}
        for kind, val in m.results:
            if kind == "dim":
                results.append(f"d{val}")
            elif kind == "const":
                results.append(str(val))
            else:
                results.append(_re.sub(r"[A-Za-z_][\w$]*", lambda t: names.get(t.group(), t.group()), val))
    return f"(({', '.join(rename.values())}) -> ({', '.join(results)}))"


def _verify_generic(op) -> None:
    ins, inits = segments(op)
    verify_results(op, inits)
    maps = explicit_indexing_maps(op)
    if maps is None:
        raise VerifyError("requires an 'indexing_maps' array of affine maps")
    its = op.attr("iterator_types")
    if not isinstance(its, ArrayAttr):
        raise VerifyError("requires an 'iterator_types' array")
    for it in its.items:
        if str(it).rsplit("<", 1)[-1].rstrip(">") not in ("parallel", "reduction", "window"):
            raise VerifyError(f"unexpected iterator type {it}")
    verify_indexing(op, maps, len(its.items), ins, inits)
    if not op.regions or not op.regions[0].blocks:
        raise VerifyError("expected a region with one block")
    verify_region_args(op, ins, inits)


# ---- linalg.generic -------------------------------------------------------------------------
def iterator_name(a) -> str:
    text = str(a)
    if isinstance(a, StringAttr):
        return a.value
    if text.startswith("#linalg.iterator_type<"):
        return text[len("#linalg.iterator_type<"):-1]
    return text


def _print_generic(p, op) -> None:
    trait = []
    for key, value in sorted(op.attributes.items()):  # a DictionaryAttr: sorted, as MLIR prints it
        if key == "iterator_types" and isinstance(value, ArrayAttr):
            names = ", ".join(f'"{iterator_name(a)}"' for a in value.items)
            trait.append(f"iterator_types = [{names}]")
        elif key in TRAIT_NAMES:
            trait.append(f"{key} = {p.attr(value)}")
    p.write("linalg.generic {", ", ".join(trait), "}")
    ins, inits = segments(op)
    p.write(_ins_outs(p, ins, inits))
    extra = p.attr_dict(op.attributes, elide=TRAIT_NAMES + ("operandSegmentSizes",))
    if extra:
        p.write(" attrs = ", extra.strip())
    if op.regions and op.regions[0].blocks:
        p.write(" ")
        p.region(op.regions[0])
    p.write(_arrow(p, op))


dialect.op("linalg.generic", "A loop nest over indexing maps with an explicit scalar body.",
           properties=("indexing_maps", "iterator_types", "doc", "library_call", "operandSegmentSizes"),
           verify=_verify_generic, print=safe_printer(_print_generic))


@dialect.rule("linalg_ins", "linalg_outs")
def _linalg_ins(ctx, children):
    return (children[0], children[1])


@dialect.rule("linalg_results")
def _linalg_results(ctx, children):
    return list(children[0])


@dialect.rule("linalg_extra_attrs")
def _linalg_extra_attrs(ctx, children):
    return children[0]


@dialect.rule("linalg_trait")
def _linalg_trait(ctx, children):
    item = children[0]
    if isinstance(item, dict):
        return item
    value = ctx.attr_aliases.get(item.value)
    if value is None:
        raise ctx.fail(f"undefined symbol alias id '{item.value[1:]}'", item)
    ctx.state.alias_uses.append((item.start, item.end, item.value))
    if not isinstance(value, DictionaryAttr):
        raise ctx.fail("expected a dictionary attribute for the linalg.generic trait", item)
    return value.as_dict()


def _iterator_attr(ctx, value):
    if not isinstance(value, ArrayAttr):
        raise ctx.fail("expected 'iterator_types' to be an array of strings")
    items = []
    for a in value.items:
        if isinstance(a, StringAttr):
            if a.value not in ("parallel", "reduction", "window"):
                raise ctx.fail(f"unexpected iterator_type ({a.value})")
            items.append(OpaqueAttr(f"#linalg.iterator_type<{a.value}>"))
        else:
            items.append(a)
    return ArrayAttr(tuple(items))


@dialect.rule("linalg_generic")
def _linalg_generic(ctx, children):
    trait, ins, outs, extra, region, results = children
    in_vals, in_types = _operand_list(ctx, ins)
    out_vals, out_types = _operand_list(ctx, outs)
    attributes = {}
    for key, value in trait.items():
        attributes[key] = _iterator_attr(ctx, value) if key == "iterator_types" else value
    attributes["operandSegmentSizes"] = i32_array(len(in_vals), len(out_vals))
    for key, value in (extra or {}).items():
        attributes[key] = value
    return create(ctx, "linalg.generic", in_vals + out_vals, results or [], attributes, [region])


# ---- named structured ops ---------------------------------------------------------------------
NAMED = (
    "matmul", "batch_matmul", "batch_reduce_matmul", "matvec", "vecmat", "batch_matvec", "batch_vecmat",
    "dot", "contract", "fill", "fill_rng_2d", "copy", "mmt4d", "batch_mmt4d", "quantized_matmul",
    "quantized_batch_matmul", "matmul_transpose_a", "matmul_transpose_b", "batch_matmul_transpose_a",
    "batch_matmul_transpose_b", "elemwise_unary", "elemwise_binary", "elementwise",
    "add", "sub", "mul", "div", "div_unsigned", "max", "min", "powf", "select", "exp", "log", "abs",
    "ceil", "floor", "negf", "reciprocal", "round", "sqrt", "rsqrt", "square", "tanh", "erf",
    "conv_1d", "conv_2d", "conv_3d", "conv_1d_nwc_wcf", "conv_1d_ncw_fcw", "conv_2d_nhwc_hwcf",
    "conv_2d_nhwc_fhwc", "conv_2d_nhwc_hwcf_q", "conv_2d_nhwc_fhwc_q", "conv_2d_nchw_fchw",
    "conv_2d_nchw_fchw_q", "conv_2d_ngchw_fgchw", "conv_2d_ngchw_gfchw", "conv_2d_ngchw_gfchw_q",
    "conv_2d_nhwgc_gfhwc", "conv_2d_nhwgc_gfhwc_q", "conv_3d_ndhwc_dhwcf", "conv_3d_ndhwc_dhwcf_q",
    "conv_3d_ncdhw_fcdhw", "depthwise_conv_1d_nwc_wc", "depthwise_conv_1d_ncw_cw",
    "depthwise_conv_1d_nwc_wcm", "depthwise_conv_2d_nchw_chw", "depthwise_conv_2d_nhwc_hwc",
    "depthwise_conv_2d_nhwc_hwc_q", "depthwise_conv_2d_nhwc_hwcm", "depthwise_conv_2d_nhwc_hwcm_q",
    "depthwise_conv_3d_ndhwc_dhwc", "depthwise_conv_3d_ncdhw_cdhw", "depthwise_conv_3d_ndhwc_dhwcm",
    "pooling_nhwc_sum", "pooling_nchw_sum", "pooling_nhwc_max", "pooling_nhwc_max_unsigned",
    "pooling_nchw_max", "pooling_nhwc_min", "pooling_nhwc_min_unsigned", "pooling_nwc_sum",
    "pooling_ncw_sum", "pooling_nwc_max", "pooling_nwc_max_unsigned", "pooling_ncw_max",
    "pooling_nwc_min", "pooling_nwc_min_unsigned", "pooling_ndhwc_sum", "pooling_ndhwc_max",
    "pooling_ndhwc_min",
)

#: Default indexing maps (as MLIR stores them) of the ops that carry an `indexing_maps` property.
DEFAULT_MAPS = {
    "linalg.matmul": ("affine_map<(d0, d1, d2) -> (d0, d2)>", "affine_map<(d0, d1, d2) -> (d2, d1)>",
                      "affine_map<(d0, d1, d2) -> (d0, d1)>"),
    "linalg.batch_matmul": ("affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>",
                            "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>",
                            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>"),
    "linalg.batch_reduce_matmul": ("affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>",
                                   "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>",
                                   "affine_map<(d0, d1, d2, d3) -> (d1, d2)>"),
}

#: Fixed indexing maps of other named ops (for shape checks): name -> map texts.
FIXED_MAPS = {
    "linalg.matvec": ("(d0, d1) -> (d0, d1)", "(d0, d1) -> (d1)", "(d0, d1) -> (d0)"),
    "linalg.vecmat": ("(d0, d1) -> (d1)", "(d0, d1) -> (d1, d0)", "(d0, d1) -> (d0)"),
    "linalg.batch_matvec": ("(d0, d1, d2) -> (d0, d1, d2)", "(d0, d1, d2) -> (d0, d2)",
                            "(d0, d1, d2) -> (d0, d1)"),
    "linalg.batch_vecmat": ("(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d0, d2, d1)",
                            "(d0, d1, d2) -> (d0, d1)"),
    "linalg.dot": ("(d0) -> (d0)", "(d0) -> (d0)", "(d0) -> ()"),
    "linalg.mmt4d": ("(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d5)",
                     "(d0, d1, d2, d3, d4, d5) -> (d1, d2, d4, d5)",
                     "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d3, d4)"),
}


#: Convolution / pooling layouts: (input, filter, output). In the input, a spatial letter
#: (d, h, w) stands for `o<x> * stride + k<x> * dilation`; in the filter for `k<x>`; in the
#: output for `o<x>`. Pooling filters hold only the window (spatial letters).
CONV_LAYOUTS = {
    "conv_1d": ("w", "w", "w"), "conv_2d": ("hw", "hw", "hw"), "conv_3d": ("dhw", "dhw", "dhw"),
    "conv_1d_nwc_wcf": ("nwc", "wcf", "nwf"), "conv_1d_ncw_fcw": ("ncw", "fcw", "nfw"),
    "conv_2d_nhwc_hwcf": ("nhwc", "hwcf", "nhwf"), "conv_2d_nhwc_fhwc": ("nhwc", "fhwc", "nhwf"),
    "conv_2d_nhwc_hwcf_q": ("nhwc", "hwcf", "nhwf"), "conv_2d_nhwc_fhwc_q": ("nhwc", "fhwc", "nhwf"),
    "conv_2d_nchw_fchw": ("nchw", "fchw", "nfhw"), "conv_2d_nchw_fchw_q": ("nchw", "fchw", "nfhw"),
    "conv_2d_ngchw_fgchw": ("ngchw", "fgchw", "ngfhw"), "conv_2d_ngchw_gfchw": ("ngchw", "gfchw", "ngfhw"),
    "conv_2d_ngchw_gfchw_q": ("ngchw", "gfchw", "ngfhw"), "conv_2d_nhwgc_gfhwc": ("nhwgc", "gfhwc", "nhwgf"),
    "conv_2d_nhwgc_gfhwc_q": ("nhwgc", "gfhwc", "nhwgf"),
    "conv_3d_ndhwc_dhwcf": ("ndhwc", "dhwcf", "ndhwf"), "conv_3d_ndhwc_dhwcf_q": ("ndhwc", "dhwcf", "ndhwf"),
    "conv_3d_ncdhw_fcdhw": ("ncdhw", "fcdhw", "nfdhw"),
    "depthwise_conv_1d_nwc_wc": ("nwc", "wc", "nwc"), "depthwise_conv_1d_ncw_cw": ("ncw", "cw", "ncw"),
    "depthwise_conv_1d_nwc_wcm": ("nwc", "wcm", "nwcm"), "depthwise_conv_2d_nchw_chw": ("nchw", "chw", "nchw"),
    "depthwise_conv_2d_nhwc_hwc": ("nhwc", "hwc", "nhwc"), "depthwise_conv_2d_nhwc_hwc_q": ("nhwc", "hwc", "nhwc"),
    "depthwise_conv_2d_nhwc_hwcm": ("nhwc", "hwcm", "nhwcm"),
    "depthwise_conv_2d_nhwc_hwcm_q": ("nhwc", "hwcm", "nhwcm"),
    "depthwise_conv_3d_ndhwc_dhwc": ("ndhwc", "dhwc", "ndhwc"),
    "depthwise_conv_3d_ncdhw_cdhw": ("ncdhw", "cdhw", "ncdhw"),
    "depthwise_conv_3d_ndhwc_dhwcm": ("ndhwc", "dhwcm", "ndhwcm"),
}
for _layout in ("nhwc", "nchw", "nwc", "ncw", "ndhwc"):
    _window = "".join(ch for ch in _layout if ch in "dhw")
    for _kind in ("sum", "max", "min", "max_unsigned", "min_unsigned"):
        CONV_LAYOUTS[f"pooling_{_layout}_{_kind}"] = (_layout, _window, _layout)


def _conv_maps(op):
    """The indexing maps of a convolution / pooling op (strides and dilations applied)."""
    short = op.name.split(".", 1)[1]
    layout = CONV_LAYOUTS.get(short)
    if layout is None:
        return None
    inp, filt, out = layout
    spatial = [ch for ch in inp if ch in "dhw"]

    def ints(key):
        attr = op.attributes.get(key)
        values = int_values(attr)
        if values is None:
            values = [1]
        if len(values) == 1:
            values = values * len(spatial)
        return values if len(values) == len(spatial) else [1] * len(spatial)

    strides, dilations = ints("strides"), ints("dilations")
    loops = [f"o{ch}" if ch in "dhw" else ch for ch in out]
    for ch in filt + inp:
        name = f"k{ch}" if ch in "dhw" else ch
        if name not in loops:
            loops.append(name)
    dims = ", ".join(loops)

    def expr(ch, where):
        if ch not in "dhw":
            return ch
        if where == "in":
            i = spatial.index(ch)
            return f"o{ch} * {strides[i]} + k{ch} * {dilations[i]}"
        return f"k{ch}" if where == "filter" else f"o{ch}"

    texts = [f"({dims}) -> ({', '.join(expr(ch, w) for ch in lay)})"
             for lay, w in ((inp, "in"), (filt, "filter"))]
    if short.endswith("_q"):
        texts += [f"({dims}) -> ()"] * 2
    texts.append(f"({dims}) -> ({', '.join(expr(ch, 'out') for ch in out)})")
    return [parse_map(t) for t in texts]


def indexing_maps(op):
    maps = explicit_indexing_maps(op)
    if maps is not None:
        return maps
    if op.name.split(".", 1)[1] in CONV_LAYOUTS:
        return _conv_maps(op)
    default = DEFAULT_MAPS.get(op.name) or FIXED_MAPS.get(op.name)
    if default is None:
        return None
    return [parse_map(m) for m in default]


ELEMENTWISE_UNARY = set(UNARY)
ELEMENTWISE_BINARY = set(BINARY)


def _verify_named(op) -> None:
    ins, inits = segments(op)
    verify_results(op, inits)
    short = op.name.split(".", 1)[1]
    if short == "fill":
        if len(ins) != 1 or len(inits) != 1:
            raise VerifyError("expected one input and one output")
        value, out = ins[0].type, elem(inits[0].type)
        if value != out:
            raise VerifyError(f"expected fill value type ('{value}') to match output element type ('{out}')")
    elif short in ELEMENTWISE_UNARY or short in ELEMENTWISE_BINARY or short in ("copy", "select"):
        want = {"copy": 1, "select": 3}.get(short, 1 if short in ELEMENTWISE_UNARY else 2)
        if len(ins) != want or len(inits) != 1:
            raise VerifyError(f"expected {want} input(s) and 1 output")
        out_shape = _shape(inits[0].type)
        for i, v in enumerate(list(ins) + list(inits)):
            shape = _shape(v.type)
            if out_shape is not None and shape is not None and len(shape) != len(out_shape):
                raise VerifyError(f"expected operand rank ({len(shape)}) to match the result rank of "
                                  f"indexing_map #{i} ({len(out_shape)})")
            if out_shape is not None and shape is not None:
                for k, (a, b) in enumerate(zip(shape, out_shape)):
                    if a is not None and b is not None and a != b:
                        raise VerifyError(f"inferred input/output operand #{i} has shape's dimension #{k} "
                                          f"to be {b}, but found {a}")
    else:
        maps = indexing_maps(op)
        if maps is not None:
            num_loops = maps[0].num_dims if maps else None
            verify_indexing(op, maps, num_loops, ins, inits)
        elif short in CONTRACTIONS and short not in ("contract",) and len(ins) != 2:
            raise VerifyError(f"expected 2 inputs, got {len(ins)}")
    if op.regions and op.regions[0].blocks:
        verify_region_args(op, ins, inits)


def _print_named(p, op) -> None:
    p.write(op.name)
    maps = op.attr("indexing_maps")
    elide = ["operandSegmentSizes", "linalg.memoized_indexing_maps", "indexing_maps"]
    default = DEFAULT_MAPS.get(op.name)
    if isinstance(maps, ArrayAttr) and not (default and _same_maps(maps, default)):
        p.write(" indexing_maps = [", ", ".join(p.attr(m) for m in maps.items), "]")
    p.write(p.attr_dict(op.attributes, elide=elide))
    ins, inits = segments(op)
    p.write(_ins_outs(p, ins, inits), _arrow(p, op))


def _same_maps(attr, default) -> bool:
    got = [parse_map(str(a)) for a in attr.items]
    want = [parse_map(m) for m in default]
    return got == want


for _name in NAMED:
    dialect.op(f"linalg.{_name}", f"Named structured op {_name} (implicit scalar body).",
               properties=("indexing_maps", "operandSegmentSizes", "cast", "dilations", "strides", "fun",
                           "cast", "kind", "comparison_kind"),
               verify=_verify_named, print=safe_printer(_print_named))


@dialect.rule("linalg_maps")
def _linalg_maps(ctx, children):
    return ArrayAttr(tuple(c for c in children if c is not None))


#: Removed named ops and the `indexing_maps` that express them on matmul / batch_matmul.
TRANSPOSED_MATMULS = {
    "linalg.matmul_transpose_a": ("linalg.matmul", ("(d0, d1, d2) -> (d2, d0)", "(d0, d1, d2) -> (d2, d1)",
                                                    "(d0, d1, d2) -> (d0, d1)")),
    "linalg.matmul_transpose_b": ("linalg.matmul", ("(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d1, d2)",
                                                    "(d0, d1, d2) -> (d0, d1)")),
    "linalg.batch_matmul_transpose_a": ("linalg.batch_matmul", (
        "(d0, d1, d2, d3) -> (d0, d3, d1)", "(d0, d1, d2, d3) -> (d0, d3, d2)", "(d0, d1, d2, d3) -> (d0, d1, d2)")),
    "linalg.batch_matmul_transpose_b": ("linalg.batch_matmul", (
        "(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d0, d2, d3)", "(d0, d1, d2, d3) -> (d0, d1, d2)")),
}


@dialect.rule("linalg_named")
def _linalg_named(ctx, children):
    name, maps, attrs, ins, outs, results = children
    name = name.value
    if name in TRANSPOSED_MATMULS and maps is None:  # older spelling: matmul with transposing maps
        name, texts = TRANSPOSED_MATMULS[name]
        maps = ArrayAttr(tuple(OpaqueAttr(f"affine_map<{t}>") for t in texts))
    in_vals, in_types = _operand_list(ctx, ins)
    out_vals, out_types = _operand_list(ctx, outs)
    attributes = {}
    if maps is not None:
        attributes["indexing_maps"] = maps
    elif name in DEFAULT_MAPS:
        attributes["indexing_maps"] = ArrayAttr(tuple(OpaqueAttr(m) for m in DEFAULT_MAPS[name]))
    attributes["operandSegmentSizes"] = i32_array(len(in_vals), len(out_vals))
    for key, value in (attrs or {}).items():
        attributes[key] = value
    region = build_body(name, in_types, out_types, attributes)
    return create(ctx, name, in_vals + out_vals, results or [], attributes, [region])


# ---- linalg.map / linalg.reduce -------------------------------------------------------------------
def _short_form_payload(op):
    """The payload op name when `op`'s body is one op applied to the block arguments (MLIR's short form)."""
    if not op.regions or not op.regions[0].blocks:
        return None
    block = op.regions[0].blocks[0]
    if len(block.ops) != 2:
        return None
    payload, yld = block.ops
    if yld.name != "linalg.yield" or len(yld.operands) != 1 or len(payload.results) != 1 \
            or yld.operands[0] is not payload.results[0] or payload.regions:
        return None
    args = block.arguments
    if op.name == "linalg.map":
        want = list(args[:-1])
        if not want:
            return None
    else:
        if len(args) != 2:
            return None
        want = [args[1], args[0]]
    if list(payload.operands) != want:
        return None
    if any(r.type != payload.results[0].type for r in payload.results) or \
            payload.results[0].type != args[-1].type:
        return None
    definition = builtin_registry().lookup(payload.name)
    if definition is None or definition.print is None:
        return None
    return payload


def _payload_attrs_text(p, payload) -> str:
    attrs = {k: v for k, v in payload.attributes.items()
             if not (str(v) in ("#arith.fastmath<none>", "#arith.overflow<none>"))}
    return p.attr_dict(attrs)


def _print_map_reduce(p, op) -> None:
    ins, inits = segments(op)
    p.write(op.name)
    payload = _short_form_payload(op)
    if payload is not None:
        p.write(" { ", payload.name, _payload_attrs_text(p, payload), " }")
    p.write(_ins_outs(p, ins, inits))
    if op.name == "linalg.reduce":
        p.write(" dimensions = ", _ints_text(int_values(op.attr("dimensions")) or []))
    p.write(p.attr_dict(op.attributes, elide=("dimensions",)))
    if payload is None and op.regions and op.regions[0].blocks:
        block = op.regions[0].blocks[0]
        p.write("\n", "  " * (p.level + 1), "(",
                ", ".join(f"{p.value(a)}: {p.type(a.type)}" for a in block.arguments), ") ")
        p.level += 1
        p.region(op.regions[0], print_entry_args=False)
        p.level -= 1


def _verify_map(op) -> None:
    ins, inits = segments(op)
    verify_results(op, inits)
    if len(inits) != 1:
        raise VerifyError("expected exactly one init")
    if not op.regions or not op.regions[0].blocks:
        raise VerifyError("expected a region with one block")
    block = op.regions[0].blocks[0]
    n = len(block.arguments)
    if n not in (len(ins), len(ins) + 1):
        raise VerifyError(f"expects number of operands to match the arity of mapper, but got: {len(ins)} "
                          f"and {n}")
    for i, (arg, v) in enumerate(zip(block.arguments, list(ins) + list(inits))):
        if arg.type != elem(v.type):
            raise VerifyError(f"expected element type of input {elem(v.type)} to match bbArg type {arg.type}")
    out_shape = _shape(inits[0].type)
    for v in ins:
        shape = _shape(v.type)
        if shape is not None and out_shape is not None:
            if len(shape) != len(out_shape) or any(a is not None and b is not None and a != b
                                                   for a, b in zip(shape, out_shape)):
                raise VerifyError(f"expected shape of input ({_dims_text(shape)}) to match shape of output "
                                  f"({_dims_text(out_shape)})")


def _dims_text(shape) -> str:
    return ", ".join("?" if d is None else str(d) for d in shape)


def _verify_reduce(op) -> None:
    ins, inits = segments(op)
    verify_results(op, inits)
    dims = int_values(op.attr("dimensions"))
    if dims is None:
        raise VerifyError("requires a 'dimensions' attribute")
    if len(ins) != len(inits):
        raise VerifyError("requires as many inputs as inits")
    for v in ins:
        shape = _shape(v.type)
        if shape is None:
            continue
        for d in dims:
            if d < 0 or d >= len(shape):
                raise VerifyError(f"dimensions for reduction should be in the range [0, {len(shape) - 1}].")
    if ins and inits:
        in_shape, out_shape = _shape(ins[0].type), _shape(inits[0].type)
        if in_shape is not None and out_shape is not None:
            kept = [d for i, d in enumerate(in_shape) if i not in dims]
            if len(kept) != len(out_shape):
                raise VerifyError(f"number of dimensions after reduction {len(kept)} doesn't match the init "
                                  f"rank {len(out_shape)}")
            for a, b in zip(kept, out_shape):
                if a is not None and b is not None and a != b:
                    raise VerifyError(f"init dimensions [{_dims_text(out_shape)}] doesn't match input "
                                      f"dimensions after reduction [{_dims_text(kept)}]")
    if op.regions and op.regions[0].blocks:
        block = op.regions[0].blocks[0]
        if len(block.arguments) != len(ins) + len(inits):
            raise VerifyError("mismatching number of operands and block arguments")
        verify_region_args(op, ins, inits, check_count=False)


dialect.op("linalg.map", "Applies its body elementwise to the inputs, writing the init.",
           verify=_verify_map, print=safe_printer(_print_map_reduce))
dialect.op("linalg.reduce", "Reduces the inputs over `dimensions` with its body.",
           properties=("dimensions",), verify=_verify_reduce, print=safe_printer(_print_map_reduce))


@dialect.rule("linalg_short")
def _linalg_short(ctx, children):
    tok, attrs = children
    return (tok, attrs or {})


@dialect.rule("linalg_body_args")
def _linalg_body_args(ctx, children):
    args = children[0] or []
    ctx.set_entry_args(args)
    return args


@dialect.rule("linalg_body")
def _linalg_body(ctx, children):
    return children[1]


def _short_body(ctx, op_name, short, in_types, out_types):
    tok, attrs = short
    block = _body_block(in_types, out_types)
    args = block.arguments
    if op_name == "linalg.map":
        operands = list(args[:-1])
    else:
        n = len(in_types)
        operands = list(args[n:]) + list(args[:n])
    result = args[-1].type
    payload_attrs = dict(attrs)
    name = tok.value
    if name.startswith("arith.") and name.endswith("f") and "fastmath" not in payload_attrs \
            and name not in ("arith.extf", "arith.truncf"):
        payload_attrs["fastmath"] = FASTMATH_NONE
    if name in ("arith.addi", "arith.subi", "arith.muli", "arith.shli") and "overflowFlags" not in payload_attrs:
        payload_attrs["overflowFlags"] = OVERFLOW_NONE
    payload = Operation(name, operands, [result], payload_attrs)
    payload.results[0].name = "v"
    block.append(payload)
    block.append(Operation("linalg.yield", [payload.results[0]], []))
    return Region([block])


@dialect.rule("linalg_map")
def _linalg_map(ctx, children):
    short, ins, outs, attrs, body = children
    in_vals, in_types = _operand_list(ctx, ins)
    out_vals, out_types = _operand_list(ctx, outs)
    if short is not None:
        region = _short_body(ctx, "linalg.map", short, in_types, out_types)
    elif body is not None:
        region = body
        block = region.blocks[0] if region.blocks else None
        if block is not None and len(block.arguments) == len(in_vals) and len(out_types) == 1:
            block.add_argument(elem(out_types[0]), "out")  # older mapper without the init argument
    else:
        raise ctx.fail("expected a region (`(%args) { ... }`) or a short form `{ op.name }`")
    return create(ctx, "linalg.map", in_vals + out_vals, _tensor_results(out_types), dict(attrs or {}),
                  [region])


@dialect.rule("linalg_reduce")
def _linalg_reduce(ctx, children):
    short, ins, outs, dims, attrs, body = children
    in_vals, in_types = _operand_list(ctx, ins)
    out_vals, out_types = _operand_list(ctx, outs)
    if short is not None:
        region = _short_body(ctx, "linalg.reduce", short, in_types, out_types)
    elif body is not None:
        region = body
    else:
        raise ctx.fail("expected a region (`(%args) { ... }`) or a short form `{ op.name }`")
    attributes = {"dimensions": i64_array(dims)}
    attributes.update(attrs or {})
    return create(ctx, "linalg.reduce", in_vals + out_vals, _tensor_results(out_types), attributes,
                  [region])


# ---- linalg.transpose / linalg.broadcast ---------------------------------------------------------
def _print_transpose_broadcast(p, op) -> None:
    key = "permutation" if op.name == "linalg.transpose" else "dimensions"
    ins, inits = segments(op)
    p.write(op.name, _ins_outs(p, ins, inits), f" {key} = ", _ints_text(int_values(op.attributes.get(key)) or []))
    p.write(p.attr_dict(op.attributes, elide=(key,)))


def _verify_transpose(op) -> None:
    ins, inits = segments(op)
    verify_results(op, inits)
    perm = int_values(op.attr("permutation"))
    if perm is None:
        raise VerifyError("requires a 'permutation' attribute")
    if sorted(perm) != list(range(len(perm))):
        raise VerifyError("permutation is not valid")
    src, dst = _shape(ins[0].type), _shape(inits[0].type)
    if src is None or dst is None:
        return
    if len(src) != len(perm):
        raise VerifyError(f"input rank {len(src)} does not match permutation size {len(perm)}")
    if len(dst) != len(perm):
        raise VerifyError(f"init rank {len(dst)} does not match permutation size {len(perm)}")
    for i, p_ in enumerate(perm):
        a, b = src[p_], dst[i]
        if a is not None and b is not None and a != b:
            raise VerifyError(f"dim(result, {i}) = {b} doesn't match dim(input, permutation[{i}]) = {a}")
    verify_region_args(op, ins, inits)


def _verify_broadcast(op) -> None:
    ins, inits = segments(op)
    verify_results(op, inits)
    dims = int_values(op.attr("dimensions"))
    if dims is None:
        raise VerifyError("requires a 'dimensions' attribute")
    src, dst = _shape(ins[0].type), _shape(inits[0].type)
    if src is None or dst is None:
        return
    if len(src) + len(dims) != len(dst):
        raise VerifyError(f"input rank plus added dimensions does not match init rank. input rank: "
                          f"{len(src)}, dimensions size: {len(dims)}, init rank: {len(dst)}")
    for i, d in enumerate(dims):
        if d < 0 or d >= len(dst):
            raise VerifyError(f"dimension {i} is out of range. expected range: [0, {len(dst) - 1}], got: {d}")
    kept = [i for i in range(len(dst)) if i not in dims]
    for k, (i, a) in enumerate(zip(kept, src)):
        b = dst[i]
        if a is not None and b is not None and a != b:
            raise VerifyError(f"input dim {k} should match init dim {i}. input: {a}, init: {b}")
    verify_region_args(op, ins, inits)


dialect.op("linalg.transpose", "Permutes the dimensions of the input into the init.",
           properties=("permutation",), verify=_verify_transpose, print=safe_printer(_print_transpose_broadcast),
           names=OpSignature.of(("input", "init"), ("result*",), ("permutation",)))
dialect.op("linalg.broadcast", "Broadcasts the input into the init, adding `dimensions`.",
           properties=("dimensions",), verify=_verify_broadcast, print=safe_printer(_print_transpose_broadcast),
           names=OpSignature.of(("input", "init"), ("result*",), ("dimensions",)))


@dialect.rule("linalg_pos_int")
def _linalg_pos_int(ctx, children):
    return int(children[0].value, 0)


@dialect.rule("linalg_neg_int")
def _linalg_neg_int(ctx, children):
    return -int(children[0].value, 0)


@dialect.rule("linalg_ints", "linalg_mixed")
def _linalg_ints(ctx, children):
    return [c for c in children if c is not None]


def _transpose_like(ctx, name, key, children):
    ins, outs, values, attrs = children
    in_vals, in_types = _operand_list(ctx, ins)
    out_vals, out_types = _operand_list(ctx, outs)
    if len(in_vals) != 1 or len(out_vals) != 1:
        raise ctx.fail(f"expected one input and one init for {name}")
    attributes = {key: i64_array(values)}
    attributes.update(attrs or {})
    return create(ctx, name, in_vals + out_vals, _tensor_results(out_types), attributes,
                  [_yield_first_body(in_types, out_types)])


@dialect.rule("linalg_transpose")
def _linalg_transpose(ctx, children):
    return _transpose_like(ctx, "linalg.transpose", "permutation", children)


@dialect.rule("linalg_broadcast")
def _linalg_broadcast(ctx, children):
    return _transpose_like(ctx, "linalg.broadcast", "dimensions", children)


# ---- softmax / winograd ------------------------------------------------------------------------------
def _print_softmax(p, op) -> None:
    p.write("linalg.softmax", p.attr_dict(op.attributes, elide=("dimension",)))
    p.write(f" dimension({op.attr('dimension').value})")
    p.write(_ins_outs(p, op.operands[:1], op.operands[1:2]), _arrow(p, op))


def _verify_softmax(op) -> None:
    if len(op.operands) != 2:
        raise VerifyError("expected one input and one output")
    src, dst = op.operand("input").type, op.operand("output").type
    dim = op.attr("dimension")
    if not isinstance(dim, IntegerAttr):
        raise VerifyError("requires a 'dimension' attribute")
    s, d = _shape(src), _shape(dst)
    if s is not None and d is not None:
        if len(s) != len(d) or any(a is not None and b is not None and a != b for a, b in zip(s, d)):
            raise VerifyError("incompatible output shape")
        if not 0 <= dim.value < len(s):
            raise VerifyError(f"incorrect dimension specified ({dim.value}), should be in [0, {len(s) - 1}]")
    verify_results(op, op.operands[1:2])


dialect.op("linalg.softmax", "Softmax of the input along `dimension`.", properties=("dimension",),
           verify=_verify_softmax, print=safe_printer(_print_softmax),
           names=OpSignature.of(("input", "output"), ("result*",), ("dimension",)))


@dialect.rule("linalg_softmax")
def _linalg_softmax(ctx, children):
    attrs, dim, ins, outs, results = children
    in_vals, _ = _operand_list(ctx, ins)
    out_vals, out_types = _operand_list(ctx, outs)
    if len(in_vals) != 1 or len(out_vals) != 1:
        raise ctx.fail("expected one input and one output")
    attributes = {"dimension": IntegerAttr(int(dim.value, 0), T.i64)}
    attributes.update(attrs or {})
    return create(ctx, "linalg.softmax", in_vals + out_vals, results or [], attributes)


WINOGRAD_FMR = ("F_2_3", "F_4_3", "F_2_5")


def _print_winograd(p, op) -> None:
    fmr = op.attr("fmr")
    p.write(op.name, p.attr_dict(op.attributes, elide=("fmr",)))
    p.write(f" fmr({WINOGRAD_FMR[fmr.value] if isinstance(fmr, IntegerAttr) and 0 <= fmr.value < 3 else fmr})")
    p.write(_ins_outs(p, op.operands[:1], op.operands[1:2]), _arrow(p, op))


def _verify_winograd(op) -> None:
    fmr = op.attr("fmr")
    if not isinstance(fmr, IntegerAttr) or not 0 <= fmr.value < len(WINOGRAD_FMR):
        raise VerifyError("requires an 'fmr' attribute (F_2_3, F_4_3 or F_2_5)")
    if len(op.operands) != 2:
        raise VerifyError("expected one input and one output")
    verify_results(op, op.operands[1:2])


for _name in ("winograd_filter_transform", "winograd_input_transform", "winograd_output_transform"):
    dialect.op(f"linalg.{_name}", "A Winograd convolution transform.", properties=("fmr",),
               verify=_verify_winograd, print=safe_printer(_print_winograd))


@dialect.rule("linalg_winograd")
def _linalg_winograd(ctx, children):
    name, attrs, fmr, ins, outs, results = children
    if fmr.value not in WINOGRAD_FMR:
        raise ctx.fail(f"expected one of {', '.join(WINOGRAD_FMR)}", fmr)
    in_vals, _ = _operand_list(ctx, ins)
    out_vals, _ = _operand_list(ctx, outs)
    attributes = {"fmr": IntegerAttr(WINOGRAD_FMR.index(fmr.value), T.i32)}
    attributes.update(attrs or {})
    return create(ctx, name.value, in_vals + out_vals, results or [], attributes)


# ---- pack / unpack ----------------------------------------------------------------------------------
def pack_operands(op):
    seg = op.attr("operandSegmentSizes")
    ops = op.operands
    if op.name == "linalg.pack":
        n_pad = seg.values[2] if isinstance(seg, DenseArrayAttr) and len(seg.values) == 4 else 0
        return ops[0], ops[1], (ops[2] if n_pad else None), ops[2 + n_pad:]
    return ops[0], ops[1], None, ops[2:]


def _print_pack(p, op) -> None:
    src, dest, pad, tiles = pack_operands(op)
    p.write(op.name, " ", p.value(src))
    if pad is not None:
        p.write(f" padding_value({p.value(pad)} : {p.type(pad.type)})")
    outer = int_values(op.attr("outer_dims_perm"))
    if outer:
        p.write(" outer_dims_perm = ", _ints_text(outer))
    p.write(" inner_dims_pos = ", _ints_text(int_values(op.attr("inner_dims_pos")) or []))
    p.write(" inner_tiles = ", mixed_text(p, int_values(op.attr("static_inner_tiles")) or [], tiles))
    p.write(" into ", p.value(dest))
    p.write(p.attr_dict(op.attributes, elide=("outer_dims_perm", "inner_dims_pos", "static_inner_tiles",
                                              "operandSegmentSizes")))
    p.write(" : ", p.type(src.type), " -> ", p.type(dest.type))


def _ceil_div(a, b):
    return -(-a // b)


def _verify_pack(op) -> None:
    src, dest, pad, tiles = pack_operands(op)
    packed_type, unpacked_type = (dest.type, src.type) if op.name == "linalg.pack" else (src.type, dest.type)
    verify_results(op, [dest])
    inner = int_values(op.attr("inner_dims_pos")) or []
    outer = int_values(op.attr("outer_dims_perm")) or []
    static = int_values(op.attr("static_inner_tiles")) or []
    if len(static) != len(inner):
        raise VerifyError("number of tile sizes specified must match the specified number of original "
                          "dimensions to be tiled")
    if sum(1 for s in static if s == DYNAMIC_INDEX) != len(tiles):
        raise VerifyError("expected as many dynamic tile operands as dynamic tile sizes")
    u, k = _shape(unpacked_type), _shape(packed_type)
    if u is None or k is None:
        return
    rank = len(u)
    if len(set(inner)) != len(inner) or any(not 0 <= d < rank for d in inner):
        raise VerifyError("invalid inner_dims_pos vector")
    if outer and (sorted(outer) != list(range(rank))):
        raise VerifyError("invalid outer_dims_perm vector")
    if len(k) != rank + len(inner):
        raise VerifyError(f"packed rank != (unpacked rank + num tiling factors), got {len(k)} != "
                          f"{rank + len(inner)}")
    # The expected packed shape where everything is static.
    outer_sizes = list(u)
    for d, t in zip(inner, static):
        if outer_sizes[d] is not None and t != DYNAMIC_INDEX:
            outer_sizes[d] = _ceil_div(outer_sizes[d], t)
        else:
            outer_sizes[d] = None
    if outer:
        outer_sizes = [outer_sizes[i] for i in outer]
    expected = outer_sizes + [None if t == DYNAMIC_INDEX else t for t in static]
    for a, b in zip(expected, k):
        if a is not None and b is not None and a != b:
            want = _with_shape(packed_type, [b if a is None else a for a, b in zip(expected, k)])
            raise VerifyError(f"expected '{want}' for the packed domain value, got '{packed_type}'")


def _with_shape(t, shape):
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(tuple(shape), t.element, t.encoding)
    if isinstance(t, T.MemRefType):
        return T.MemRefType(tuple(shape), t.element, t.layout, t.memory_space)
    return t


for _name in ("pack", "unpack"):
    dialect.op(f"linalg.{_name}", f"{_name.capitalize()}s a tensor into / out of tiles.",
               properties=("inner_dims_pos", "outer_dims_perm", "static_inner_tiles") +
               (("operandSegmentSizes",) if _name == "pack" else ()),
               verify=_verify_pack, print=safe_printer(_print_pack),
               names=OpSignature.of(("source", "dest", "padding_value?", "inner_tiles*") if _name == "pack" else
                                    ("source", "dest", "inner_tiles*"), ("result",),
                                    ("inner_dims_pos", "outer_dims_perm", "static_inner_tiles")))


@dialect.rule("linalg_padding")
def _linalg_padding(ctx, children):
    tok, type = children
    return ctx.resolve(tok, type)


@dialect.rule("linalg_outer_perm")
def _linalg_outer_perm(ctx, children):
    return children[0]


@dialect.rule("linalg_pack")
def _linalg_pack(ctx, children):
    name, src, pad, outer, inner, tiles, dest, attrs, src_type, dest_type = children
    name = name.value.replace("tensor.", "linalg.")  # the older spelling (ops moved from tensor to linalg)
    if name == "linalg.unpack" and pad is not None:
        raise ctx.fail("linalg.unpack takes no padding_value")
    source = ctx.resolve(src, src_type)
    destination = ctx.resolve(dest, dest_type)
    static, dynamic = [], []
    for t in tiles:
        if isinstance(t, int):
            static.append(t)
        else:
            static.append(DYNAMIC_INDEX)
            dynamic.append(ctx.resolve(t, T.index))
    attributes = {"inner_dims_pos": i64_array(inner)}
    if outer is not None:
        attributes["outer_dims_perm"] = i64_array(outer)
    attributes["static_inner_tiles"] = i64_array(static)
    operands = [source, destination] + ([pad] if pad is not None else []) + dynamic
    if name == "linalg.pack":
        attributes["operandSegmentSizes"] = i32_array(1, 1, 1 if pad is not None else 0, len(dynamic))
    else:  # not a property of unpack, but MLIR's parser attaches it (as a discardable attribute)
        attributes["operandSegmentSizes"] = i32_array(1, 1, 0, len(dynamic))
    attributes.update(attrs or {})
    results = [dest_type] if _is_tensor(dest_type) else []
    return create(ctx, name, operands, results, attributes)


# ---- linalg.index / linalg.yield ----------------------------------------------------------------
def _enclosing_structured(op):
    parent = op.parent_op
    if parent is not None and parent.name.startswith("linalg."):
        return parent
    return None


def _num_loops(op):
    if op.name == "linalg.generic":
        return _iterator_count(op)
    maps = indexing_maps(op) if op.name != "linalg.map" else None
    if maps:
        return maps[0].num_dims
    if op.name in ("linalg.map", "linalg.transpose", "linalg.broadcast") or op.name.split(".")[1] in \
            ELEMENTWISE_UNARY | ELEMENTWISE_BINARY | {"fill", "copy"}:
        _, inits = segments(op)
        return _rank(inits[0].type) if inits else None
    if op.name == "linalg.reduce":
        ins, _ = segments(op)
        return _rank(ins[0].type) if ins else None
    return None


def _print_index(p, op) -> None:
    p.write(f"linalg.index {op.attr('dim').value}", p.attr_dict(op.attributes, elide=("dim",)),
            " : ", p.type(op.results[0].type))


def _verify_index(op) -> None:
    parent = _enclosing_structured(op)
    if parent is None:
        raise VerifyError("expected parent op with LinalgOp interface")
    dim = op.attr("dim")
    if not isinstance(dim, IntegerAttr):
        raise VerifyError("requires a 'dim' attribute")
    loops = _num_loops(parent)
    if loops is not None and dim.value >= loops:
        raise VerifyError(f"expected dim ({dim.value}) to be lower than the number of loops ({loops}) of the "
                          "enclosing LinalgOp")


dialect.op("linalg.index", "The index of an iteration dimension of the enclosing structured op.",
           traits=(PURE,), properties=("dim",), verify=_verify_index, print=safe_printer(_print_index),
           names=OpSignature.of((), ("result",), ("dim",)))


@dialect.rule("linalg_index")
def _linalg_index(ctx, children):
    dim, attrs, type = children
    attributes = {"dim": IntegerAttr(int(dim.value, 0), T.i64)}
    attributes.update(attrs or {})
    return create(ctx, "linalg.index", [], [type], attributes)


def _print_yield(p, op) -> None:
    p.write("linalg.yield", p.op_attr_dict(op))
    if op.operands:
        p.write(" ", p.values(op.operands), " : ", p.types(op.operand_types))


def _verify_yield(op) -> None:
    parent = op.parent_op
    if parent is None or not parent.name.startswith("linalg."):
        raise VerifyError("expected parent op with LinalgOp interface")
    if parent.name == "linalg.reduce":
        _, inits = segments(parent)
    else:
        _, inits = segments(parent)
    if len(op.operands) != len(inits):
        raise VerifyError(f"expected number of yield values ({len(op.operands)}) to match the number of "
                          f"inits / outs operands of the enclosing LinalgOp ({len(inits)})")
    for i, (v, init) in enumerate(zip(op.operands, inits)):
        want = elem(init.type)
        if v.type != want:
            raise VerifyError(f"type of yield operand {i + 1} ('{v.type}') doesn't match the element type of "
                              f"the enclosing linalg.generic op ('{want}')")


dialect.op("linalg.yield", "Yields the values of one iteration of the enclosing structured op.",
           traits=(TERMINATOR, RETURN_LIKE, PURE), verify=_verify_yield, print=safe_printer(_print_yield),
           names=OpSignature.of(("values*",)))


@dialect.rule("linalg_yield")
def _linalg_yield(ctx, children):
    attrs, uses, types = children
    operands = ctx.resolve_all(uses, types or [])
    return create(ctx, "linalg.yield", operands, [], attrs)


# ---- building ops from code (conversions) ---------------------------------------------------------
def structured_op(name: str, ins, outs, attributes=None) -> Operation:
    """A linalg named op on values, with the attributes and implicit region the parser
    would give it: what a conversion creates instead of writing text."""
    in_types, out_types = [v.type for v in ins], [v.type for v in outs]
    attributes = dict(attributes or {})
    if name in ("linalg.transpose", "linalg.broadcast"):
        region = _yield_first_body(in_types, out_types)
    else:
        if name in DEFAULT_MAPS and "indexing_maps" not in attributes:
            attributes["indexing_maps"] = ArrayAttr(tuple(OpaqueAttr(m) for m in DEFAULT_MAPS[name]))
        attributes["operandSegmentSizes"] = i32_array(len(ins), len(outs))
        region = build_body(name, in_types, out_types, attributes)
    return Operation(name, [*ins, *outs], _tensor_results(out_types), attributes, [region])
