"""memref: buffers in memory and the views of them.

Allocation (`alloc`, `alloca`, `dealloc`), element access (`load`, `store`,
`atomic_rmw`), views (`subview`, `view`, `reinterpret_cast`, `cast`,
`collapse_shape`, `expand_shape`, `transpose`), metadata (`dim`, `rank`,
`extract_strided_metadata`), and module-level buffers (`global`, `get_global`).

Offsets, sizes and strides mix SSA values and integers as MLIR writes them
(`[0, %i][%n, 1][1, 1]`): the integers go to the `static_*` array attribute,
with MLIR's dynamic marker where a value stands, and the values become operands.
"""
from __future__ import annotations

import itertools

from ..ir import types as T
from ..ir.attributes import (ArrayAttr, BoolAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr, StringAttr,
                             SymbolRefAttr, TypeAttr, unit)
from ..ir.dense import DenseElementsAttr, DenseParseError, DenseResourceAttr, parse_dense
from ..ir.source import Span
from ..ir.symbols import resolve_symbol, symbol_table_of
from ..syntax.literals import string_value
from .assembly_format import Custom, SymbolAttr, declare_family
from ..ir.signatures import OpSignature
from .base import PURE, SYMBOL, SYMBOL_TABLE, Dialect, VerifyError
from .common import create, merge_unique_attrs, symbol_name
from .registry import builtin_registry

dialect = Dialect("memref", grammar="memref")

#: MLIR's marker for a dynamic entry in static_offsets / static_sizes / static_strides.
DYNAMIC = -9223372036854775808
ATOMIC_KINDS = ("addf", "addi", "assign", "maximumf", "maxs", "maxu", "minimumf", "mins", "minu",
                "mulf", "muli", "ori", "andi", "maxnumf", "minnumf")


#: The ops that view a buffer with another shape or layout, without copying it.
VIEWS = frozenset({"memref.subview", "memref.reinterpret_cast", "memref.cast", "memref.collapse_shape",
                   "memref.expand_shape"})


def view_source(op):
    """The buffer a view op (one of `VIEWS`) reads: a reshape's `$src`, the others' `$source`."""
    return op.operand("src" if op.name in ("memref.collapse_shape", "memref.expand_shape") else "source")


def _is_memref(t) -> bool:
    return isinstance(t, (T.MemRefType, T.UnrankedMemRefType))


def _require_memref(t, index: int = 0, what: str = "memref of any type values") -> None:
    if not _is_memref(t):
        raise VerifyError(f"operand #{index} must be {what}, but got '{t}'")


def _rank(t):
    return len(t.shape) if isinstance(t, T.MemRefType) else None


def _seg(op):
    seg = op.attr("operandSegmentSizes")
    return list(seg.values) if isinstance(seg, DenseArrayAttr) else None


def _segment_attr(*sizes) -> DenseArrayAttr:
    return DenseArrayAttr(T.i32, tuple(sizes))


def _i64_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i64, tuple(values))


def _int(ctx, tok) -> int:
    try:
        return int(tok.value, 0)
    except ValueError:
        raise ctx.fail("expected integer value", tok)


# ---- mixed static/dynamic lists --------------------------------------------------------------
@dialect.rule("memref_mixed")
def _memref_mixed(ctx, children):
    return [c for c in children if c is not None]


def _split_mixed(ctx, items):
    """(static values with DYNAMIC for SSA entries, operand values) from a memref_mixed list."""
    statics, operands = [], []
    for item in items:
        if isinstance(item, tuple):
            text, tok = item
            try:
                statics.append(int(text, 0))
            except ValueError:
                raise ctx.fail("expected an integer or an SSA value", tok)
        else:
            statics.append(DYNAMIC)
            operands.append(ctx.resolve(item, T.index))
    return statics, operands


def _print_mixed(p, statics, values) -> str:
    it = iter(values)
    parts = []
    for s in statics:
        parts.append(p.value(next(it)) if s == DYNAMIC else str(s))
    return "[" + ", ".join(parts) + "]"


def _static(op, key) -> list:
    a = op.attributes.get(key)
    return list(a.values) if isinstance(a, DenseArrayAttr) else []


def _alignment_text(op) -> str:
    a = op.attr("alignment")
    return f" alignment = {a.value}" if isinstance(a, IntegerAttr) else ""


@dialect.rule("memref_alignment")
def _memref_alignment(ctx, children):
    return IntegerAttr(_int(ctx, children[0]), T.i64)


# ---- alloc / alloca / dealloc ------------------------------------------------------------------
def _layout_symbols(t) -> int:
    """Symbols of an affine-map layout (`affine_map<(d0)[s0, s1] -> ...>` has 2)."""
    layout = getattr(t, "layout", None)
    text = str(layout) if layout is not None else ""
    if not text.startswith("affine_map<"):
        return 0
    head = text[len("affine_map<"):].split("->", 1)[0]
    if "[" not in head:
        return 0
    inside = head[head.index("[") + 1:head.rindex("]")].strip()
    return len([s for s in inside.split(",") if s.strip()]) if inside else 0


def _print_alloc(p, op) -> None:
    seg = _seg(op) or [len(op.operands), 0]
    dyn, sym = op.operands[:seg[0]], op.operands[seg[0]:]
    p.write(op.name, "(", p.values(dyn), ")")
    if sym:
        p.write("[", p.values(sym), "]")
    p.write(_alignment_text(op), p.op_attr_dict(op, elide=("operandSegmentSizes", "alignment")), " : ",
            p.type(op.results[0].type))


def _verify_alloc(op) -> None:
    t = op.results[0].type if op.results else None
    if not isinstance(t, T.MemRefType):
        raise VerifyError(f"result #0 must be memref of any type values, but got '{t}'")
    seg = _seg(op)
    if seg is None or len(seg) != 2 or sum(seg) != len(op.operands):
        raise VerifyError("operand count does not match the 'operandSegmentSizes' attribute")
    dynamic = sum(1 for d in t.shape if d is None)
    if seg[0] != dynamic:
        raise VerifyError("dimension operand count does not equal memref dynamic dimension count")
    symbols = _layout_symbols(t)
    if seg[1] != symbols:
        raise VerifyError(f"symbol operand count does not equal memref symbol count: expected {symbols}, "
                          f"got {seg[1]}")
    for v in op.operands:
        if v.type != T.index:
            raise VerifyError(f"operand must be index, but got '{v.type}'")
    a = op.attr("alignment")
    if a is not None and not (isinstance(a, IntegerAttr) and a.value > 0 and a.value & (a.value - 1) == 0):
        raise VerifyError("attribute 'alignment' failed to satisfy constraint: 64-bit signless integer "
                          "attribute whose value is positive and whose value is a power of two > 0")


for _name in ("alloc", "alloca"):
    dialect.op(f"memref.{_name}", "Allocates a buffer ('alloca': on the stack, freed at function exit); "
               "dynamic sizes and layout symbols are operands.",
               properties=("operandSegmentSizes", "alignment"), verify=_verify_alloc, print=_print_alloc)


@dialect.rule("memref_alloc")
def _memref_alloc(ctx, children):
    name, dyn, sym, alignment, attrs, type = children
    dyn, sym = dyn or [], sym or []
    operands = [ctx.resolve(t, T.index) for t in (*dyn, *sym)]
    attributes = {"operandSegmentSizes": _segment_attr(len(dyn), len(sym))}
    if alignment is not None:
        attributes["alignment"] = alignment
    return create(ctx, name.value, operands, [type], merge_unique_attrs(ctx, attributes, attrs))


def _memref_type(t):
    """None if `t` is a memref type, else the parse error for it."""
    return None if _is_memref(t) else f"expected a memref type, got {t}"


def _element(t):
    return t.element


def _verify_dealloc(op) -> None:
    _require_memref(op.operand("memref").type)


declare_family(dialect, "dealloc", ["memref.dealloc"], "$memref attr-dict `:` type($memref)",
               operands=("memref",), strict_properties=False, summary="Frees a buffer made by memref.alloc.",
               verify=_verify_dealloc)


# ---- load / store -----------------------------------------------------------------------------
@dialect.rule("memref_access_alignment")
def _memref_access_alignment(ctx, children):
    return IntegerAttr(_int(ctx, children[0]), T.i64)


@dialect.rule("memref_nontemporal")
def _memref_nontemporal(ctx, children):
    return BoolAttr(children[0].value == "true")


def _nontemporal_text(p, op) -> tuple[str, tuple]:
    """` nontemporal(true)`; the attribute is never left in the dictionary (false is the default)."""
    nt = op.attr("nontemporal")
    return " nontemporal(true)" if isinstance(nt, IntegerAttr) and nt.type == T.i1 and nt.value else "", \
        ("nontemporal",)


def _access_alignment_text(p, op) -> tuple[str, tuple]:
    a = op.attr("alignment")
    return (f" alignment({a.value})" if isinstance(a, IntegerAttr) else ""), ("alignment",)


#: `custom<Nontemporal>` and `custom<Alignment>`: the access flags of load and store.
_ACCESS = {"Nontemporal": Custom("[memref_nontemporal]", lambda ctx, op_name, v: {"nontemporal": v},
                                 _nontemporal_text),
           "Alignment": Custom("[memref_access_alignment]", lambda ctx, op_name, v: {"alignment": v},
                               _access_alignment_text)}


def _check_indices(op, memref, indices, what: str) -> None:
    _require_memref(memref.type)
    r = _rank(memref.type)
    if r is not None and r != len(indices):
        if what == "load":
            raise VerifyError(f"incorrect number of indices for load, expected {r} but got {len(indices)}")
        raise VerifyError("store index operand count not equal to memref rank")
    for v in indices:
        if v.type != T.index:
            raise VerifyError(f"operand must be index, but got '{v.type}'")


def _verify_load(op) -> None:
    m = op.operand("memref")
    _check_indices(op, m, op.operands_named("indices"), "load")
    if op.result_named("result").type != m.type.element:
        raise VerifyError("failed to verify that result type matches element type of 'memref'")


declare_family(dialect, "load", ["memref.load"],
               "$memref `[` $indices `]` custom<Nontemporal> custom<Alignment> attr-dict `:` type($memref)",
               operands=("memref", "indices*"), results=("result",),
               infer={"indices": T.index, "result": ("memref", _element)}, type_checks={"memref": _memref_type},
               custom=_ACCESS, strict_properties=False, summary="Reads one element of a buffer.",
               properties=("nontemporal", "alignment"), verify=_verify_load)


def _verify_store(op) -> None:
    v, m = op.operand("value"), op.operand("memref")
    _check_indices(op, m, op.operands_named("indices"), "store")
    if v.type != m.type.element:
        raise VerifyError("failed to verify that type of 'value' matches element type of 'memref'")


declare_family(dialect, "store", ["memref.store"],
               "$value `,` $memref `[` $indices `]` custom<Nontemporal> custom<Alignment> attr-dict `:` "
               "type($memref)", operands=("value", "memref", "indices*"),
               infer={"value": ("memref", _element), "indices": T.index}, type_checks={"memref": _memref_type},
               custom=_ACCESS, strict_properties=False, summary="Writes one element of a buffer.",
               properties=("nontemporal", "alignment"), verify=_verify_store)


# ---- dim / rank ---------------------------------------------------------------------------------
def _verify_dim(op) -> None:
    m, i = op.operand("source"), op.operand("index")
    _require_memref(m.type, 0, "unranked.memref of any type values or non-0-ranked.memref of any type values")
    if i.type != T.index:
        raise VerifyError(f"operand #1 must be index, but got '{i.type}'")
    result = op.result_named("result").type
    if result != T.index:
        raise VerifyError(f"result #0 must be index, but got '{result}'")


declare_family(dialect, "dim", ["memref.dim"], "$source `,` $index attr-dict `:` type($source)",
               operands=("source", "index"), results=("result",), infer={"index": T.index, "result": T.index},
               strict_properties=False, summary="The size of one dimension of a buffer.", traits=(PURE,),
               verify=_verify_dim)


def _verify_rank(op) -> None:
    _require_memref(op.operand("memref").type)


declare_family(dialect, "rank", ["memref.rank"], "$memref attr-dict `:` type($memref)", operands=("memref",),
               results=("result",), infer={"result": T.index}, strict_properties=False,
               summary="The rank of a buffer, as an index.", traits=(PURE,), verify=_verify_rank)


# ---- cast / memory_space_cast / copy --------------------------------------------------------------
def _shapes_compatible(a, b) -> bool:
    if not isinstance(a, T.MemRefType) or not isinstance(b, T.MemRefType):
        return True
    if len(a.shape) != len(b.shape):
        return False
    return all(x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


def _verify_cast(op) -> None:
    a, b = op.operand("source").type, op.result_named("dest").type
    _require_memref(a)
    ok = _is_memref(b) and a.element == b.element and _shapes_compatible(a, b)
    if ok and op.name == "memref.cast":
        ok = getattr(a, "memory_space", None) == getattr(b, "memory_space", None)
        if isinstance(a, T.UnrankedMemRefType) and isinstance(b, T.UnrankedMemRefType):
            ok = False
    if not ok:
        raise VerifyError(f"operand type '{a}' and result type '{b}' are cast incompatible")


def _verify_copy(op) -> None:
    a, b = op.operand("source").type, op.operand("target").type
    _require_memref(a, 0)
    _require_memref(b, 1)
    if isinstance(a, T.MemRefType) and isinstance(b, T.MemRefType) and a.shape != b.shape:
        raise VerifyError("requires the same shape for all operands")
    if a.element != b.element:
        raise VerifyError("requires the same element type for all operands")


declare_family(dialect, "cast", ["memref.cast", "memref.memory_space_cast"],
               "$source attr-dict `:` type($source) `to` type($dest)", operands=("source",), results=("dest",),
               strict_properties=False, traits=(PURE,), verify=_verify_cast, per_op=lambda name: dict(
                   summary="Converts between compatible memref types (static and dynamic sizes, ranked and "
                   "unranked)." if name == "memref.cast" else "Moves a memref to another memory space."))
declare_family(dialect, "copy", ["memref.copy"], "$source `,` $target attr-dict `:` type($source) `to` type($target)",
               operands=("source", "target"), strict_properties=False,
               summary="Copies the elements of one buffer into another of the same shape.", verify=_verify_copy)


# ---- subview / view / reinterpret_cast --------------------------------------------------------------
_OFFSET_KEYS = ("static_offsets", "static_sizes", "static_strides")
#: MLIR's names (OffsetSizeAndStrideOpInterface) of subview's and reinterpret_cast's operands
_OFFSETS_SIZES_STRIDES = OpSignature.of(("source", "offsets*", "sizes*", "strides*"), ("result",), _OFFSET_KEYS)


def _print_offsets_sizes_strides(p, op, source_count: int, sep: str) -> list[str]:
    seg = _seg(op) or [source_count, 0, 0, 0]
    values = op.operands[source_count:]
    out, i = [], 0
    for key, n in zip(_OFFSET_KEYS, seg[1:]):
        out.append(_print_mixed(p, _static(op, key), values[i:i + n]))
        i += n
    return out


def _print_subview(p, op) -> None:
    offsets, sizes, strides = _print_offsets_sizes_strides(p, op, 1, " ")
    source = op.operand("source")
    p.write("memref.subview ", p.value(source), offsets, " ", sizes, " ", strides,
            p.op_attr_dict(op, elide=("operandSegmentSizes",) + _OFFSET_KEYS), " : ",
            p.type(source.type), " to ", p.type(op.results[0].type))


def _check_mixed(op, key: str, count: int, what: str, n_dynamic: int) -> None:
    statics = _static(op, key)
    if len(statics) != count:
        raise VerifyError(f"expected {count} {what} values")
    if sum(1 for s in statics if s == DYNAMIC) != n_dynamic:
        raise VerifyError(f"expected {sum(1 for s in statics if s == DYNAMIC)} dynamic {what} values")


def _verify_subview(op) -> None:
    src, res = op.operand("source").type, op.results[0].type
    if not isinstance(src, T.MemRefType):
        raise VerifyError(f"operand #0 must be memref of any type values, but got '{src}'")
    if not isinstance(res, T.MemRefType):
        raise VerifyError(f"result #0 must be memref of any type values, but got '{res}'")
    seg = _seg(op)
    if seg is None or len(seg) != 4 or sum(seg) != len(op.operands):
        raise VerifyError("operand count does not match the 'operandSegmentSizes' attribute")
    rank = len(src.shape)
    n_off, n_size, n_stride = (len(_static(op, k)) for k in _OFFSET_KEYS)
    if n_off != n_size:
        raise VerifyError(f"expected mixed offsets rank to match mixed sizes rank ({n_off} vs {n_size}) so "
                          "the rank of the result type is well-formed.")
    if n_size != n_stride:
        raise VerifyError(f"expected mixed sizes rank to match mixed strides rank ({n_size} vs {n_stride}) so "
                          "the rank of the result type is well-formed.")
    for key, what, n in zip(_OFFSET_KEYS, ("offset", "size", "stride"), seg[1:]):
        _check_mixed(op, key, rank, what, n)
    _check_subview_type(op, src, res)


def strides_and_offset(t):
    """(strides, offset) of a memref type, None for `?`; None when the layout is not strided."""
    layout = t.layout
    if layout is None:
        strides, acc = [], 1
        for d in reversed(t.shape):
            strides.append(acc)
            acc = None if acc is None or d is None else acc * d
        return list(reversed(strides)), 0
    text = str(layout)
    if not text.startswith("strided<["):
        return None
    body = text[len("strided<"):-1]
    close = body.index("]")
    def num(x):
        x = x.strip()
        return None if x == "?" else int(x)
    strides = [num(x) for x in body[1:close].split(",") if x.strip()]
    rest = body[close + 1:].strip()
    offset = num(rest.split(":", 1)[1]) if rest.startswith(",") and "offset" in rest else 0
    return strides, offset


def _mul(a, b):
    if a == 0 or b == 0:
        return 0
    return None if a is None or b is None else a * b


def _add(a, b):
    return None if a is None or b is None else a + b


def _format_strided(shape, element, strides, offset, memory_space) -> str:
    st = ", ".join("?" if x is None else str(x) for x in strides)
    off = "" if offset == 0 else f", offset: {'?' if offset is None else offset}"
    dims = "".join(("?" if d is None else str(d)) + "x" for d in shape)
    space = f", {memory_space}" if memory_space is not None else ""
    return f"memref<{dims}{element}, strided<[{st}]{off}>{space}>"


def _check_subview_type(op, src, res) -> None:
    """MLIR's rule: the result is the inferred strided type, possibly with unit dimensions dropped."""
    layout = strides_and_offset(src)
    offsets, sizes, steps = (_static(op, k) for k in _OFFSET_KEYS)
    shape = [None if s == DYNAMIC else s for s in sizes]
    expected = None
    if layout is not None:
        src_strides, offset = layout
        for o, st in zip(offsets, src_strides):
            offset = _add(offset, _mul(None if o == DYNAMIC else o, st))
        strides = [_mul(st, None if k == DYNAMIC else k) for st, k in zip(src_strides, steps)]
        expected = _format_strided(shape, src.element, strides, offset, src.memory_space)

    def fail(what):
        want = expected if expected is not None else f"memref<...x{src.element}>"
        raise VerifyError(f"expected result type to be '{want}' or a rank-reduced version. (mismatch of "
                          f"result {what}), but got '{res}'")
    drop = len(shape) - len(res.shape)
    units = [i for i, d in enumerate(shape) if d == 1]
    candidates = [c for c in itertools.combinations(units, drop)
                  if [d for i, d in enumerate(shape) if i not in c] == list(res.shape)] if 0 <= drop <= len(units) \
        else []
    if not candidates:
        fail("sizes")
    if src.element != res.element:
        fail("element type")
    if src.memory_space != res.memory_space:
        fail("memory space")
    got = strides_and_offset(res)
    if layout is None or got is None:
        return
    got_strides, got_offset = got

    def compatible(a, b):
        return a == b
    if not compatible(offset, got_offset):
        fail("layout")
    for c in candidates:
        kept = [x for i, x in enumerate(strides) if i not in c]
        if all(compatible(a, b) for a, b in zip(kept, got_strides)):
            return
    fail("layout")


dialect.op("memref.subview", "A strided view of part of a buffer: offsets, sizes and strides per dimension.",
           traits=(PURE,), properties=("operandSegmentSizes",) + _OFFSET_KEYS,
           verify=_verify_subview, print=_print_subview, names=_OFFSETS_SIZES_STRIDES)


def _offsets_sizes_strides_op(ctx, name: str, children):
    """subview and reinterpret_cast: a source, offsets, sizes and strides (each static or SSA), then
    the attribute dictionary and the source and result types."""
    src, offsets, sizes, strides, attrs, src_type, dst_type = children
    operands = [ctx.resolve(src, src_type)]
    attributes, counts = {}, []
    for key, items in zip(_OFFSET_KEYS, (offsets, sizes, strides)):
        statics, values = _split_mixed(ctx, items)
        attributes[key] = _i64_array(statics)
        operands += values
        counts.append(len(values))
    attributes = {"operandSegmentSizes": _segment_attr(1, *counts), **attributes}
    return create(ctx, name, operands, [dst_type], merge_unique_attrs(ctx, attributes, attrs))


@dialect.rule("memref_subview")
def _memref_subview(ctx, children):
    return _offsets_sizes_strides_op(ctx, "memref.subview", children)


def _print_view(p, op) -> None:
    src, off, *sizes = op.operands
    p.write("memref.view ", p.value(src), "[", p.value(off), "][", p.values(sizes), "]", p.op_attr_dict(op),
            " : ", p.type(src.type), " to ", p.type(op.results[0].type))


def _verify_view(op) -> None:
    src, off, *sizes = op.operands
    s, r = src.type, op.results[0].type
    if not (isinstance(s, T.MemRefType) and len(s.shape) == 1 and s.element == T.i8):
        raise VerifyError(f"operand #0 must be 1D memref of 8-bit signless integer values, but got '{s}'")
    if s.layout is not None:
        raise VerifyError("unsupported map for base memref type " + str(s))
    if not isinstance(r, T.MemRefType):
        raise VerifyError(f"result #0 must be memref of any type values, but got '{r}'")
    if r.layout is not None:
        raise VerifyError("unsupported map for result memref type " + str(r))
    if s.memory_space != r.memory_space:
        raise VerifyError("different memory spaces specified for base memref type " + str(s)
                          + " and view memref type " + str(r))
    dynamic = sum(1 for d in r.shape if d is None)
    if len(sizes) != dynamic:
        raise VerifyError(f"incorrect number of size operands for type {r}")


dialect.op("memref.view", "A typed view of a 1-D i8 buffer at a byte offset.", traits=(PURE,),
           verify=_verify_view, print=_print_view)


@dialect.rule("memref_view")
def _memref_view(ctx, children):
    src, off, sizes, attrs, src_type, dst_type = children
    operands = [ctx.resolve(src, src_type), ctx.resolve(off, T.index)]
    operands += [ctx.resolve(t, T.index) for t in sizes or []]
    return create(ctx, "memref.view", operands, [dst_type], attrs)


def _print_reinterpret_cast(p, op) -> None:
    offsets, sizes, strides = _print_offsets_sizes_strides(p, op, 1, "")
    source = op.operand("source")
    p.write("memref.reinterpret_cast ", p.value(source), " to offset: ", offsets, ", sizes: ", sizes,
            ", strides: ", strides, p.op_attr_dict(op, elide=("operandSegmentSizes",) + _OFFSET_KEYS),
            " : ", p.type(source.type), " to ", p.type(op.results[0].type))


def _verify_reinterpret_cast(op) -> None:
    src, res = op.operand("source").type, op.results[0].type
    _require_memref(src)
    if not isinstance(res, T.MemRefType):
        raise VerifyError(f"result #0 must be memref of any type values, but got '{res}'")
    seg = _seg(op)
    if seg is None or len(seg) != 4 or sum(seg) != len(op.operands):
        raise VerifyError("operand count does not match the 'operandSegmentSizes' attribute")
    rank = len(res.shape)
    for key, what, count, n in zip(_OFFSET_KEYS, ("offset", "size", "stride"), (1, rank, rank), seg[1:]):
        _check_mixed(op, key, count, what, n)
    if src.element != res.element:
        raise VerifyError("different element types specified for source and result")
    if getattr(src, "memory_space", None) != getattr(res, "memory_space", None):
        raise VerifyError("different memory spaces specified for source and result")
    for i, (s, d) in enumerate(zip(_static(op, "static_sizes"), res.shape)):
        if s != DYNAMIC and d is not None and s != d:
            raise VerifyError(f"expected result type with size = {s} instead of {d} in dim = {i}")


dialect.op("memref.reinterpret_cast", "Reinterprets a buffer with a given offset, sizes and strides.",
           traits=(PURE,), properties=("operandSegmentSizes",) + _OFFSET_KEYS,
           verify=_verify_reinterpret_cast, print=_print_reinterpret_cast, names=_OFFSETS_SIZES_STRIDES)


@dialect.rule("memref_reinterpret_cast")
def _memref_reinterpret_cast(ctx, children):
    return _offsets_sizes_strides_op(ctx, "memref.reinterpret_cast", children)


# ---- collapse_shape / expand_shape ------------------------------------------------------------------
def _groups(op):
    a = op.attr("reassociation")
    if not isinstance(a, ArrayAttr):
        return None
    out = []
    for g in a.items:
        if not isinstance(g, ArrayAttr) or not all(isinstance(x, IntegerAttr) for x in g.items):
            return None
        out.append([x.value for x in g.items])
    return out


def _print_reshape(p, op) -> None:
    groups = _groups(op) or []
    text = "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"
    src = op.operand("src")
    p.write(op.name, " ", p.value(src), " ", text)
    if op.name == "memref.expand_shape":
        p.write(" output_shape ", _print_mixed(p, _static(op, "static_output_shape"), op.operands_named("output_shape")))
    p.write(p.op_attr_dict(op, elide=("reassociation", "static_output_shape")), " : ",
            p.type(src.type), " into ", p.type(op.results[0].type))


def _verify_reshape(op) -> None:
    src, res = op.operand("src").type, op.results[0].type
    if not isinstance(src, T.MemRefType) or not isinstance(res, T.MemRefType):
        raise VerifyError("expects ranked memref source and result types")
    groups = _groups(op)
    if groups is None:
        raise VerifyError("requires attribute 'reassociation' (an array of arrays of integers)")
    expand = op.name == "memref.expand_shape"
    big, small = (res, src) if expand else (src, res)
    if len(groups) != len(small.shape):
        raise VerifyError(f"invalid number of reassociation groups: found {len(groups)}, expected "
                          f"{len(small.shape)}")
    flat = [d for g in groups for d in g]
    if not groups and small.rank == 0:  # to or from rank 0: every dimension of the other is 1
        if any(d is not None and d != 1 for d in big.shape):
            raise VerifyError("expected all dimensions of the expanded type to be 1 when collapsing to rank 0")
    elif flat != list(range(len(big.shape))):
        raise VerifyError("expected reassociation map #0 to be valid and contiguous")
    if src.element != res.element:
        raise VerifyError("expected source and result element types to match")
    for i, g in enumerate(groups):
        dims = [big.shape[d] for d in g]
        if None in dims or small.shape[i] is None:
            continue
        n = 1
        for d in dims:
            n *= d
        if n != small.shape[i]:
            raise VerifyError(f"expected dimension {i} of collapsed type to be static value of {n}")
    if expand:
        statics = _static(op, "static_output_shape")
        if len(statics) != len(res.shape):
            raise VerifyError(f"expected number of static shape bounds to be equal to the output rank "
                              f"({len(res.shape)}) but found {len(statics)} inputs instead")
        if sum(1 for s in statics if s == DYNAMIC) != len(op.operands) - 1:
            raise VerifyError("mismatch in dynamic dims in output_shape and static_output_shape")


for _name in ("collapse_shape", "expand_shape"):
    dialect.op(f"memref.{_name}", "Reshapes a buffer by grouping (collapse) or splitting (expand) dimensions.",
               traits=(PURE,), properties=("reassociation", "static_output_shape"),
               verify=_verify_reshape, print=_print_reshape,
               names=OpSignature.of(("src", "output_shape*") if _name == "expand_shape" else ("src",), ("result",),
                                    ("reassociation", "static_output_shape")))


@dialect.rule("memref_group")
def _memref_group(ctx, children):
    return ArrayAttr(tuple(IntegerAttr(_int(ctx, t), T.i64) for t in children if t is not None))


@dialect.rule("memref_reassociation")
def _memref_reassociation(ctx, children):
    return ArrayAttr(tuple(c for c in children if c is not None))


@dialect.rule("memref_output_shape")
def _memref_output_shape(ctx, children):
    return children[0]


@dialect.rule("memref_reshape")
def _memref_reshape(ctx, children):
    name, src, reassoc, output_shape, attrs, src_type, dst_type = children
    operands = [ctx.resolve(src, src_type)]
    attributes = {"reassociation": reassoc}
    if name.value == "memref.expand_shape":
        if output_shape is None:
            raise ctx.fail("expected 'output_shape'")
        statics, values = _split_mixed(ctx, output_shape)
        attributes["static_output_shape"] = _i64_array(statics)
        operands += values
    elif output_shape is not None:
        raise ctx.fail("unexpected 'output_shape' for collapse_shape")
    return create(ctx, name.value, operands, [dst_type], merge_unique_attrs(ctx, attributes, attrs))


# ---- global / get_global ---------------------------------------------------------------------------
def _tensor_of(t):
    if isinstance(t, T.MemRefType):
        return T.RankedTensorType(t.shape, t.element)
    return None


def _print_global(p, op) -> None:
    a = op.attributes
    p.write("memref.global ")
    vis = a.get("sym_visibility")
    if isinstance(vis, StringAttr):
        p.write(f'"{vis.value}" ')
    if "constant" in a:
        p.write("constant ")
    t = a["type"].type if isinstance(a.get("type"), TypeAttr) else None
    p.write(p.symbol(a["sym_name"].value), " : ", p.type(t))
    init = a.get("initial_value")
    if init is not None:
        if init.__class__.__name__ == "UnitAttr":
            p.write(" = uninitialized")
        else:
            text = p.attr(init)
            suffix = f" : {init.type}" if hasattr(init, "type") else ""
            if suffix and text.endswith(suffix) and getattr(init, "type", None) == _tensor_of(t):
                text = text[:-len(suffix)]
            p.write(" = ", text)
    p.write(_alignment_text(op))
    p.write(p.op_attr_dict(op, elide=("sym_name", "sym_visibility", "type", "initial_value", "constant",
                                      "alignment")))


def _verify_global(op) -> None:
    a = op.attributes
    if not isinstance(a.get("sym_name"), StringAttr):
        raise VerifyError("requires attribute 'sym_name'")
    t = a["type"].type if isinstance(a.get("type"), TypeAttr) else None
    if not isinstance(t, T.MemRefType) or None in t.shape:
        raise VerifyError(f"type should be static shaped memref, but got '{t}'")
    init = a.get("initial_value")
    if init is not None and init.__class__.__name__ != "UnitAttr":
        if not isinstance(init, (DenseElementsAttr, DenseResourceAttr)):
            raise VerifyError("initial value should be a unit or elements attribute")
        want = _tensor_of(t)
        if init.type != want:
            raise VerifyError(f"initial value expected to be of type '{want}', but was of type '{init.type}'")
    if "constant" in a and init is None:
        pass
    al = a.get("alignment")
    if al is not None and not (isinstance(al, IntegerAttr) and al.value > 0 and al.value & (al.value - 1) == 0):
        raise VerifyError("alignment attribute value " + str(getattr(al, 'value', al)) + " is not a power of 2")


dialect.op("memref.global", "A module-level buffer (a symbol), optionally constant and initialised.",
           traits=(SYMBOL,), properties=("sym_name", "sym_visibility", "type", "initial_value", "constant",
                                         "alignment"),
           verify=_verify_global, print=_print_global)


@dialect.rule("memref_initial_dense")
def _memref_initial_dense(ctx, children):
    return ("dense", children[0])


@dialect.rule("memref_initial_uninitialized")
def _memref_initial_uninitialized(ctx, children):
    return ("uninitialized", None)


@dialect.rule("memref_global")
def _memref_global(ctx, children):
    vis, constant, name, type, initial, alignment, attrs = children
    attributes = {"sym_name": StringAttr(symbol_name(ctx, name)), "type": TypeAttr(type)}
    if vis is not None:
        attributes["sym_visibility"] = StringAttr(string_value(ctx, vis))
    if constant is not None:
        attributes["constant"] = unit
    if initial is not None:
        kind, tok = initial
        if kind == "uninitialized":
            attributes["initial_value"] = unit
        else:
            tensor = _tensor_of(type)
            if tensor is None:
                raise ctx.fail(f"type should be static shaped memref, but got '{type}'", name)
            body = tok.value[6:-1]
            try:
                attributes["initial_value"] = parse_dense(body, tensor)
            except DenseParseError as e:
                at = tok.start + 6 + max(0, min(e.offset, len(body)))
                raise ctx.fail(str(e), Span(ctx.source, at, at + 1))
    if alignment is not None:
        attributes["alignment"] = alignment
    return create(ctx, "memref.global", (), (), merge_unique_attrs(ctx, attributes, attrs))


def _verify_get_global(op) -> None:
    ref = op.attr("name")
    if not isinstance(ref, SymbolRefAttr):
        raise VerifyError("requires attribute 'name' (a symbol reference)")

    def is_table(o):
        d = builtin_registry().lookup(o.name)
        return d is not None and d.has(SYMBOL_TABLE)
    table = symbol_table_of(op.parent_op, is_table) if op.parent_op is not None else None
    target = resolve_symbol(table, ref) if table is not None else None
    if target is None or target.name != "memref.global":
        raise VerifyError(f"'{ref.root}' does not reference a valid global memref")
    t = target.attr("type")
    t = t.type if isinstance(t, TypeAttr) else None
    result = op.result_named("result").type
    if t != result:
        raise VerifyError(f"result type {result} does not match type {t} of the global memref "
                          f"@{ref.root}")


declare_family(dialect, "get_global", ["memref.get_global"], "$name attr-dict `:` type($result)",
               results=("result",), attributes={"name": SymbolAttr()}, strict_properties=False,
               summary="The buffer of a memref.global, by symbol.", traits=(PURE,), properties=("name",),
               verify=_verify_get_global)


# ---- transpose -----------------------------------------------------------------------------------
def _perm_text(attr) -> str:
    text = str(attr)
    if text.startswith("affine_map<") and text.endswith(">"):
        return text[len("affine_map<"):-1]
    return text


def _print_transpose(p, op) -> None:
    p.write("memref.transpose ", p.value(op.operand("in")), " ", _perm_text(op.attr("permutation")),
            p.op_attr_dict(op, elide=("permutation",)), " : ", p.type(op.operand("in").type), " to ",
            p.type(op.results[0].type))


def _verify_transpose(op) -> None:
    src, res = op.operand("in").type, op.results[0].type
    if not isinstance(src, T.MemRefType):
        raise VerifyError(f"operand #0 must be strided memref of any type values, but got '{src}'")
    perm = _perm_text(op.attr("permutation"))
    head = perm.split("->", 1)[0]
    dims = [d.strip() for d in head.strip().strip("()").split(",") if d.strip()]
    if len(dims) != len(src.shape):
        raise VerifyError("expected a permutation map of same rank as the input")
    if not isinstance(res, T.MemRefType) or len(res.shape) != len(src.shape) or res.element != src.element:
        raise VerifyError(f"result type {res} is not a permutation of {src}")


dialect.op("memref.transpose", "A view with permuted dimensions.", traits=(PURE,), properties=("permutation",),
           verify=_verify_transpose, print=_print_transpose,
           names=OpSignature.of(("in",), ("result",), ("permutation",)))


@dialect.rule("memref_perm")
def _memref_perm(ctx, children):
    names = [c.value for c in children]
    n = len(names) // 2
    dims, results = names[:n], names[n:]
    if len(set(dims)) != len(dims) or sorted(results) != sorted(dims):
        raise ctx.fail("expected a permutation map")
    return OpaqueAttr(f"affine_map<({', '.join(dims)}) -> ({', '.join(results)})>")


@dialect.rule("memref_transpose")
def _memref_transpose(ctx, children):
    src, perm, attrs, src_type, dst_type = children
    return create(ctx, "memref.transpose", [ctx.resolve(src, src_type)], [dst_type],
                  merge_unique_attrs(ctx, {"permutation": perm}, attrs))


# ---- atomic_rmw ------------------------------------------------------------------------------------
def _print_atomic_rmw(p, op) -> None:
    kind = op.attr("kind")
    name = ATOMIC_KINDS[kind.value] if isinstance(kind, IntegerAttr) and 0 <= kind.value < len(ATOMIC_KINDS) \
        else str(kind)
    v, m, *idx = op.operands
    p.write("memref.atomic_rmw ", name, " ", p.value(v), ", ", p.value(m), "[", p.values(idx), "]",
            p.op_attr_dict(op, elide=("kind",)), " : (", p.type(v.type), ", ", p.type(m.type), ") -> ",
            p.type(op.results[0].type))


def _verify_atomic_rmw(op) -> None:
    v, m, *idx = op.operands
    _check_indices(op, m, idx, "atomic_rmw")
    if v.type != m.type.element or op.results[0].type != v.type:
        raise VerifyError("failed to verify that value type matches element type of memref")
    kind = op.attr("kind")
    if not isinstance(kind, IntegerAttr) or not 0 <= kind.value < len(ATOMIC_KINDS):
        raise VerifyError("requires attribute 'kind'")
    name = ATOMIC_KINDS[kind.value]
    if name.endswith("f") and not T.is_float(v.type):
        raise VerifyError("expects a floating-point type")
    if name[-1] in "isu" and name not in ("assign",) and not T.is_integer(v.type):
        raise VerifyError("expects an integer type")


dialect.op("memref.atomic_rmw", "Atomically combines a value into one element; returns the old element.",
           properties=("kind",), verify=_verify_atomic_rmw, print=_print_atomic_rmw)


@dialect.rule("memref_atomic_rmw")
def _memref_atomic_rmw(ctx, children):
    kind, v, m, idx, attrs, ftype = children
    if kind.value not in ATOMIC_KINDS:
        raise ctx.fail(f"unknown atomic kind '{kind.value}'", kind)
    if len(ftype.inputs) != 2 or len(ftype.results) != 1:
        raise ctx.fail("expected a type `(value type, memref type) -> value type`")
    vt, mt = ftype.inputs
    operands = [ctx.resolve(v, vt), ctx.resolve(m, mt)] + [ctx.resolve(t, T.index) for t in idx or []]
    attributes = {"kind": IntegerAttr(ATOMIC_KINDS.index(kind.value), T.i64)}
    return create(ctx, "memref.atomic_rmw", operands, list(ftype.results), merge_unique_attrs(ctx, attributes, attrs))


# ---- metadata ops ---------------------------------------------------------------------------------
def _print_arrow_op(p, op) -> None:
    source = op.operand("source")
    p.write(op.name, " ", p.value(source), p.op_attr_dict(op), " : ", p.type(source.type),
            " -> ", p.types(op.result_types))


def _verify_strided_metadata(op) -> None:
    src = op.operand("source").type
    if not isinstance(src, T.MemRefType):
        raise VerifyError(f"operand #0 must be strided memref of any type values, but got '{src}'")
    r = len(src.shape)
    if len(op.results) != 2 + 2 * r:
        raise VerifyError(f"expected {2 + 2 * r} results, but found {len(op.results)}")
    base = op.results[0].type
    if not (isinstance(base, T.MemRefType) and base.shape == () and base.element == src.element):
        raise VerifyError(f"result #0 must be a 0-D memref of {src.element}, but got '{base}'")
    for res in op.results[1:]:
        if res.type != T.index:
            raise VerifyError(f"expected index results for offset, sizes and strides, got '{res.type}'")


dialect.op("memref.extract_strided_metadata", "The base buffer, offset, sizes and strides of a memref.",
           traits=(PURE,), verify=_verify_strided_metadata, print=_print_arrow_op,
           names=OpSignature.of(("source",), ("base_buffer", "offset", "sizes*", "strides*")))


@dialect.rule("memref_extract_strided_metadata")
def _memref_extract_strided_metadata(ctx, children):
    src, attrs, src_type, types = children
    return create(ctx, "memref.extract_strided_metadata", [ctx.resolve(src, src_type)], types, attrs)


def _verify_to_index(op) -> None:
    _require_memref(op.operand("source").type)
    result = op.result_named("aligned_pointer").type
    if result != T.index:
        raise VerifyError(f"result #0 must be index, but got '{result}'")


declare_family(dialect, "to_index", ["memref.extract_aligned_pointer_as_index"],
               "$source attr-dict `:` type($source) `->` type($aligned_pointer)", operands=("source",),
               results=("aligned_pointer",), strict_properties=False,
               summary="The aligned pointer of a buffer, as an index.", traits=(PURE,), verify=_verify_to_index)


def _print_assume_alignment(p, op) -> None:
    memref = op.operand("memref")
    p.write("memref.assume_alignment ", p.value(memref), ", ", str(op.attr("alignment").value),
            p.op_attr_dict(op, elide=("alignment",)), " : ", p.type(memref.type))


def _verify_assume_alignment(op) -> None:
    _require_memref(op.operand("memref").type)
    a = op.attr("alignment")
    if not isinstance(a, IntegerAttr) or a.value <= 0 or a.value & (a.value - 1):
        raise VerifyError("alignment must be power of 2")
    if op.results and op.results[0].type != op.operand("memref").type:
        raise VerifyError("failed to verify that all of {memref, result} have same type")


dialect.op("memref.assume_alignment", "Asserts the buffer's alignment; returns the same buffer.",
           properties=("alignment",), verify=_verify_assume_alignment, print=_print_assume_alignment,
           names=OpSignature.of(("memref",), ("result",), ("alignment",)))


@dialect.rule("memref_assume_alignment")
def _memref_assume_alignment(ctx, children):
    src, alignment, attrs, type = children
    attributes = {"alignment": IntegerAttr(_int(ctx, alignment), T.i32)}
    return create(ctx, "memref.assume_alignment", [ctx.resolve(src, type)], [type],
                  merge_unique_attrs(ctx, attributes, attrs))


def _print_prefetch(p, op) -> None:
    a = op.attributes
    m, *idx = op.operands
    write = "write" if getattr(a.get("isWrite"), "value", 0) else "read"
    cache = "data" if getattr(a.get("isDataCache"), "value", 1) else "instr"
    p.write("memref.prefetch ", p.value(m), "[", p.values(idx), "], ", write, ", locality<",
            str(getattr(a.get("localityHint"), "value", 3)), ">, ", cache,
            p.op_attr_dict(op, elide=("isWrite", "isDataCache", "localityHint")), " : ", p.type(m.type))


def _verify_prefetch(op) -> None:
    m, *idx = op.operands
    _check_indices(op, m, idx, "prefetch")
    hint = op.attr("localityHint")
    if not isinstance(hint, IntegerAttr) or not 0 <= hint.value <= 3:
        raise VerifyError("attribute 'localityHint' failed to satisfy constraint: 32-bit signless integer "
                          "attribute whose minimum value is 0 whose maximum value is 3")


dialect.op("memref.prefetch", "A prefetch hint for one element of a buffer.",
           properties=("isWrite", "localityHint", "isDataCache"), verify=_verify_prefetch, print=_print_prefetch)


@dialect.rule("memref_prefetch")
def _memref_prefetch(ctx, children):
    m, idx, rw, hint, cache, attrs, type = children
    if rw.value not in ("read", "write"):
        raise ctx.fail("rw specifier has to be 'read' or 'write'", rw)
    if cache.value not in ("data", "instr"):
        raise ctx.fail("cache type has to be 'data' or 'instr'", cache)
    operands = [ctx.resolve(m, type)] + [ctx.resolve(t, T.index) for t in idx or []]
    attributes = {"isDataCache": BoolAttr(cache.value == "data"), "isWrite": BoolAttr(rw.value == "write"),
                  "localityHint": IntegerAttr(_int(ctx, hint), T.i32)}
    return create(ctx, "memref.prefetch", operands, (), merge_unique_attrs(ctx, attributes, attrs))
