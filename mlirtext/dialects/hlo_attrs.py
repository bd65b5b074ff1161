"""Reading HLO attributes from their canonical text.

HLO attributes stay verbatim in the IR (`OpaqueAttr`); the verifier reads their
meaning here: dimension numbers of dot / gather / scatter / convolution
(`#stablehlo.dot<...>`, `#mhlo.gather<...>`, the `#stablehlo.conv<[b, 0, f]x...>`
layout form and its `raw` form), enum attributes (`#stablehlo<comparison_direction GT>`),
precision configs, and integer lists (`array<i64: ...>`, `dense<...>`, `[...]`).
Each reader returns None when the attribute is absent or not of the expected kind.
"""
from __future__ import annotations

import re
from typing import Optional

from ..ir.attributes import ArrayAttr, DenseArrayAttr, IntegerAttr, OpaqueAttr
from ..ir.dense import DenseElementsAttr

_FIELD = re.compile(r"([A-Za-z_]\w*)\s*=\s*(\[[^\]]*\]|-?\d+|[A-Za-z_]\w*)")


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def opaque_text(attr) -> Optional[str]:
    return attr.text if isinstance(attr, OpaqueAttr) else None


def struct_fields(attr) -> Optional[dict]:
    """`#stablehlo.gather<offset_dims = [1], index_vector_dim = 1>` -> {name: [ints] | int | word}."""
    text = opaque_text(attr)
    if text is None or "<" not in text:
        return None
    body = text[text.index("<") + 1:text.rindex(">")] if text.endswith(">") else text[text.index("<") + 1:]
    out: dict = {}
    for name, value in _FIELD.findall(body):
        if value.startswith("["):
            out[name] = _ints(value)
        elif re.fullmatch(r"-?\d+", value):
            out[name] = int(value)
        else:
            out[name] = value
    return out


def dims_field(fields: Optional[dict], name: str) -> list[int]:
    v = (fields or {}).get(name, [])
    return v if isinstance(v, list) else [v]


def int_field(fields: Optional[dict], name: str, default: int = 0) -> int:
    v = (fields or {}).get(name, default)
    return v if isinstance(v, int) else default


def int_list(attr) -> Optional[list[int]]:
    """Integers of `array<i64: ...>`, an integer `dense<...>` (splats expanded) or `[1, 2]`."""
    if attr is None:
        return None
    if isinstance(attr, DenseArrayAttr):
        return [int(v) for v in attr.values]
    if isinstance(attr, DenseElementsAttr):
        if attr.is_raw:
            return None
        try:
            vals = [int(v) for v in attr.values]
        except (TypeError, ValueError):
            return None
        if attr.splat:
            n = 1
            for d in attr.shape:
                n *= d if d is not None else 1
            return vals[:1] * n
        return vals
    if isinstance(attr, ArrayAttr):
        out = []
        for item in attr.items:
            if not isinstance(item, IntegerAttr):
                return None
            out.append(item.value)
        return out
    return None


def dense_shape(attr) -> Optional[tuple]:
    if isinstance(attr, DenseElementsAttr):
        return tuple(attr.shape)
    return None


def int_value(attr) -> Optional[int]:
    return attr.value if isinstance(attr, IntegerAttr) else None


def enum_word(attr) -> Optional[str]:
    """`#stablehlo<comparison_direction GT>` -> "GT"; `#mhlo<precision DEFAULT>` -> "DEFAULT"."""
    text = opaque_text(attr)
    if text is None:
        return None
    m = re.fullmatch(r"#\w+(?:\.\w+)?<\s*(?:\w+\s+)?([\w]+)\s*>", text)
    return m.group(1) if m else None


def enum_kind(attr) -> Optional[str]:
    """`#stablehlo<comparison_direction GT>` -> "comparison_direction"."""
    text = opaque_text(attr)
    if text is None:
        return None
    m = re.fullmatch(r"#\w+<\s*(\w+)\s+\w+\s*>", text)
    if m:
        return m.group(1)
    m = re.fullmatch(r"#\w+\.(\w+)<[^<>]*>", text)
    return m.group(1) if m else None


def precision_config(attr) -> Optional[list[str]]:
    """`[#stablehlo<precision DEFAULT>, ...]` -> ["DEFAULT", ...]."""
    if not isinstance(attr, ArrayAttr):
        return None
    return [enum_word(a) or str(a) for a in attr.items]


# ---- convolution dimension numbers ---------------------------------------------------
class ConvDims:
    """Convolution dimension numbers (all dimension indices are ints)."""

    def __init__(self):
        self.input_batch = 0
        self.input_feature = 0
        self.input_spatial: list[int] = []
        self.kernel_input_feature = 0
        self.kernel_output_feature = 0
        self.kernel_spatial: list[int] = []
        self.output_batch = 0
        self.output_feature = 0
        self.output_spatial: list[int] = []
        self.layout_error: Optional[str] = None


def _layout(part: str, letters: tuple[str, str]):
    """`[b, 0, 1, f]` -> (pos of letters[0], pos of letters[1], [pos of spatial 0, 1, ...])."""
    items = [x.strip() for x in part.strip().strip("[]").split(",") if x.strip()]
    a = b = None
    spatial: dict[int, int] = {}
    for i, it in enumerate(items):
        if it == letters[0]:
            a = i
        elif it == letters[1]:
            b = i
        elif it.isdigit():
            spatial[int(it)] = i
    return a, b, [spatial[k] for k in sorted(spatial)], len(items)


def conv_dims(attr) -> Optional[ConvDims]:
    text = opaque_text(attr)
    if text is None or "<" not in text:
        return None
    body = text[text.index("<") + 1:-1]
    d = ConvDims()
    if body.lstrip().startswith("raw") or "=" in body:
        f = struct_fields(attr) or {}
        d.input_batch = int_field(f, "input_batch_dimension")
        d.input_feature = int_field(f, "input_feature_dimension")
        d.input_spatial = dims_field(f, "input_spatial_dimensions")
        d.kernel_input_feature = int_field(f, "kernel_input_feature_dimension")
        d.kernel_output_feature = int_field(f, "kernel_output_feature_dimension")
        d.kernel_spatial = dims_field(f, "kernel_spatial_dimensions")
        d.output_batch = int_field(f, "output_batch_dimension")
        d.output_feature = int_field(f, "output_feature_dimension")
        d.output_spatial = dims_field(f, "output_spatial_dimensions")
        return d
    m = re.fullmatch(r"\s*(\[[^\]]*\])\s*x\s*(\[[^\]]*\])\s*->\s*(\[[^\]]*\])\s*", body)
    if not m:
        return None
    a, b, sp, _ = _layout(m.group(1), ("b", "f"))
    d.input_batch, d.input_feature, d.input_spatial = a or 0, b or 0, sp
    a, b, sp, _ = _layout(m.group(2), ("i", "o"))
    d.kernel_input_feature, d.kernel_output_feature, d.kernel_spatial = a or 0, b or 0, sp
    a, b, sp, _ = _layout(m.group(3), ("b", "f"))
    d.output_batch, d.output_feature, d.output_spatial = a or 0, b or 0, sp
    return d


def dot_dims(attr) -> Optional[dict]:
    """`#stablehlo.dot<lhs_batching_dimensions = [0], ...>` -> the four dimension lists."""
    f = struct_fields(attr)
    if f is None:
        return None
    return {k: dims_field(f, k) for k in ("lhs_batching_dimensions", "rhs_batching_dimensions",
                                          "lhs_contracting_dimensions", "rhs_contracting_dimensions")}


def dot_numbers_attr(dialect: str, lb, rb, lc, rc) -> OpaqueAttr:
    """`#<dialect>.dot<...>` with the four dimension lists (the inverse of `dot_dims`)."""
    text = lambda ds: "[" + ", ".join(map(str, ds)) + "]"  # noqa: E731
    return OpaqueAttr(f"#{dialect}.dot<lhs_batching_dimensions = {text(lb)}, rhs_batching_dimensions = {text(rb)}, "
                      f"lhs_contracting_dimensions = {text(lc)}, rhs_contracting_dimensions = {text(rc)}>")


# ---- syntax checks of attribute text (run by the parser) ---------------------------------------
_STRUCT_KEYS = {
    "dot": ("dot", ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
                    "rhs_contracting_dimensions")),
    "gather": ("gather", ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                          "start_indices_batching_dims", "start_index_map", "index_vector_dim")),
    "scatter": ("scatter", ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                            "scatter_indices_batching_dims", "scatter_dims_to_operand_dims", "index_vector_dim")),
}
_TOKEN = re.compile(r"\s*(?:([A-Za-z_]\w*)|(-?\d+)|(\S))")


def _check_struct(text: str, start: int, what: str, keys) -> Optional[tuple]:
    body_end = len(text) - 1
    pos = start
    seen = set()
    failed = f"failed parsing {what} dimension numbers"

    def tok(p):
        m = _TOKEN.match(text, p, body_end)
        if not m or m.end() <= p or m.start(m.lastindex) >= body_end:
            return None, body_end, body_end
        return m.group(m.lastindex), m.start(m.lastindex), m.end()
    t, at, pos = tok(pos)
    if t is None:
        return None
    while True:
        if t is None:
            return failed, at
        if not re.fullmatch(r"[A-Za-z_]\w*", t):
            return failed, at
        if t not in keys:
            return "expected one of: " + ", ".join(f"`{k}`" for k in keys), at
        if t in seen:
            return f"duplicated `{t}` entry", at
        seen.add(t)
        t, at, pos = tok(pos)
        if t != "=":
            return failed, at
        t, at, pos = tok(pos)
        if t == "[":
            t, at, pos = tok(pos)
            if t != "]":
                while True:
                    if t is None or not re.fullmatch(r"-?\d+", t):
                        return failed, at
                    t, at, pos = tok(pos)
                    if t == "]":
                        break
                    if t != ",":
                        return failed, at
                    t, at, pos = tok(pos)
        elif t is None or not re.fullmatch(r"-?\d+", t):
            return failed, at
        t, at, pos = tok(pos)
        if t is None:
            return None
        if t != ",":
            return failed, at
        t, at, pos = tok(pos)
        if t is None:
            return None


def _check_conv_layout(text: str, start: int) -> Optional[tuple]:
    body = text[start:-1]
    parts = re.split(r"(x|->)", body)
    groups = [p for i, p in enumerate(parts) if i % 2 == 0]
    letters = (("b", "f"), ("i", "o"), ("b", "f"))
    if len(groups) != 3:
        return None
    offset = start
    for gi, (group, allowed) in enumerate(zip(groups, letters)):
        stripped = group.strip()
        at = offset + (len(group) - len(group.lstrip()))
        if not stripped.startswith("["):
            return "expected '['", at
        items = [x.strip() for x in stripped.strip("[]").split(",")]
        remaining = list(allowed)
        spatial = []
        for it in items:
            if re.fullmatch(r"-?\d+", it):
                v = int(it)
                if v < 0:
                    return f"Unexpected dimension {v}", at
                if v in spatial:
                    return f"Duplicate entries for spatial dimension {v}", at
                spatial.append(v)
            elif it == "?":
                continue
            elif it in remaining:
                remaining.remove(it)
            elif remaining:
                return f"Unexpected dimension {it}, expecting {', '.join(remaining)}", at
            else:
                return f"Unexpected keyword {it}", at
        if remaining:
            return f"Expected dimensions {', '.join(remaining)} not specified", at
        for k in range(len(spatial)):
            if k not in spatial:
                return f"Expected spatial dimensions {k} not specified", at
        offset += len(group) + (len(parts[2 * gi + 1]) if 2 * gi + 1 < len(parts) else 0)
    return None


_F8 = frozenset({"f8E3M4", "f8E4M3", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E4M3B11FNUZ", "f8E5M2FNUZ"})
#: (lhs, rhs, accumulation type, primitive operations) of the precise dot algorithms StableHLO
#: knows some hardware to support (`isKnownDotAlgorithm`); any f8 x f8 -> f32 in one operation too.
_KNOWN_DOT_ALGORITHMS = frozenset({
    ("f16", "f16", "f16", 1), ("f16", "f16", "f32", 1), ("bf16", "bf16", "bf16", 1), ("bf16", "bf16", "f32", 1),
    ("bf16", "bf16", "f32", 3), ("bf16", "bf16", "f32", 6), ("bf16", "bf16", "f32", 9), ("tf32", "tf32", "f32", 1),
    ("tf32", "tf32", "f32", 3), ("f32", "f32", "f32", 1), ("f64", "f64", "f64", 1)})


def unknown_dot_algorithm(f: dict) -> Optional[str]:
    """MLIR's message when the fields `f` of a `#stablehlo.dot_algorithm<...>` name a combination
    no hardware is known to support, else None (also when a field is missing)."""
    keys = ("lhs_precision_type", "rhs_precision_type", "accumulation_type", "lhs_component_count",
            "rhs_component_count", "num_primitive_operations", "allow_imprecise_accumulation")
    if any(k not in f for k in keys):
        return None
    lhs, rhs, acc, lc, rc, ops, imprecise = (f[k] for k in keys)
    imprecise = imprecise == "true"
    if lc == 1 and rc == 1:
        if lhs in _F8 and rhs in _F8 and acc == "f32" and ops == 1:
            return None
        if not imprecise and (lhs, rhs, acc, ops) in _KNOWN_DOT_ALGORITHMS:
            return None
    return (f"dot algorithm not known to be supported on any hardware: {{lhs:'{lhs}', rhs:'{rhs}', accum:'{acc}', "
            f"lhs_components:{lc}, rhs_components:{rc}, primitive_ops:{ops}, imprecise:{int(imprecise)}}}")


def check_attr_text(text: str) -> Optional[tuple]:
    """Syntax errors in an HLO attribute's text: (message, offset) or None."""
    m = re.match(r"#(?:stablehlo|mhlo)\.(\w+)<", text)
    if not m or not text.endswith(">"):
        return None
    kind = m.group(1)
    # Comments inside a multi-line attribute are blanked (same length, so offsets hold).
    text = re.sub(r"//[^\n]*", lambda c: " " * len(c.group(0)), text)
    if kind == "dot_algorithm":
        f = struct_fields(OpaqueAttr(text)) or {}
        for key, msg in (("lhs_component_count", "lhs component count must be positive"),
                         ("rhs_component_count", "rhs component count must be positive"),
                         ("num_primitive_operations", "num primitive operations must be positive")):
            if isinstance(f.get(key), int) and f[key] < 1:
                return msg, 0
        unknown = unknown_dot_algorithm(f)
        if unknown is not None:
            return unknown, text.index("<")  # where MLIR puts it: the parameters
    if kind in _STRUCT_KEYS:
        what, keys = _STRUCT_KEYS[kind]
        return _check_struct(text, m.end(), what, keys)
    if kind == "conv" and not text[m.end():].lstrip().startswith("raw"):
        return _check_conv_layout(text, m.end())
    return None


_TYPE_EXTENSIONS = re.compile(r"#stablehlo\.type_extensions<\s*bounds\s*=\s*\[(?P<b>[^\]]*)\]\s*>$")
_BOUNDS = re.compile(r"#stablehlo\.bounds<(?P<b>[^>]*)>$")


def canonical_attr_text(text: str) -> Optional[str]:
    """`#stablehlo.type_extensions<bounds = [3, ?]>` (the older spelling) and `#stablehlo.bounds< 3,? >`
    -> `#stablehlo.bounds<3, ?>`, as stablehlo prints them; None for anything else."""
    m = _TYPE_EXTENSIONS.match(text) or _BOUNDS.match(text)
    if m is None:
        return None
    items = [b.strip() for b in m.group("b").split(",")] if m.group("b").strip() else []
    if not all(b == "?" or re.fullmatch(r"-?\d+", b) for b in items):
        return None
    return f"#stablehlo.bounds<{', '.join(items)}>"


#: The types each HLO dialect defines (`!stablehlo.token`, ...).
_HLO_TYPES = {"stablehlo": ("token", "future"), "mhlo": ("token", "async_bundle")}


def check_type_text(text: str) -> Optional[tuple]:
    """`!stablehlo.foobar` -> ("unknown stablehlo type: foobar", offset), as the dialect's type parser says."""
    m = re.match(r"(stablehlo|mhlo)\.(\w+)", text)
    if m is None or m.group(2) in _HLO_TYPES[m.group(1)]:
        return None
    return f"unknown {m.group(1)} type: {m.group(2)}", m.start(2)


_ANY_BOUNDS = re.compile(r"#(?:stablehlo|mhlo)\.(?:bounds<(?P<a>[^>]*)>|type_extensions<\s*bounds\s*=\s*\[(?P<b>[^\]]*)\]\s*>)$")


def check_tensor_bounds(shape, encoding) -> Optional[str]:
    """hlo::verifyBounds: one bound per dimension, and bounds only on dynamic dimensions."""
    m = _ANY_BOUNDS.match(str(encoding))
    if m is None:
        return None
    body = m.group("a") if m.group("a") is not None else m.group("b")
    items = [b.strip() for b in body.split(",")] if body.strip() else []
    if len(items) != len(shape):
        return f"Bounds length is {len(items)}, expected to be equal to rank({len(shape)}) of the tensor"
    for i, (d, b) in enumerate(zip(shape, items)):
        if d is not None and b != "?":
            return (f"Static dimension {i} cannot have a bound, use ShapedType::kDynamic to indicate a "
                    "missing bound")
    return None
