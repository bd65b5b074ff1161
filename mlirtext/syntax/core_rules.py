"""Callbacks for the core grammar (`grammars/core.lark`): ops, regions, types, attributes."""
from __future__ import annotations

import re

from ..dialects.base import Dialect
from ..ir import types as T
from ..ir.attributes import (ArrayAttr, DenseArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr,
                             LocationAttr, OpaqueAttr, StringAttr, TypeAttr, false,
                             true, unit)
from ..ir.core import Operation
from ..ir.dense import DenseParseError, DenseResourceAttr, SelfTypedDenseAttr, parse_dense, self_typed_dense_type
from ..ir.source import Span
from .context import ResultNames
from .literals import number_value, string_value, symbol_ref

core = Dialect("core")
rule = core.rule


def present(items) -> list:
    """Children of `[a ("," a)*]`: [None] when absent."""
    return [x for x in items if x is not None]


# ---- top level ------------------------------------------------------------------
@rule("start")
def _start(ctx, children):
    return None


@rule("attr_alias")
def _attr_alias(ctx, children):
    tok, value = children
    _define_alias(ctx, tok, value, ctx.attr_aliases)


@rule("type_alias")
def _type_alias(ctx, children):
    tok, value = children
    _define_alias(ctx, tok, value, ctx.type_aliases)


def _define_alias(ctx, tok, value, table):
    name = tok.value
    if name in table:
        raise ctx.fail(f"redefinition of alias '{name}'", tok)
    table[name] = value
    ctx.alias_order.append((name, value))
    ctx.state.alias_defs[name] = ctx.token_span(tok)


@rule("file_metadata")
def _file_metadata(ctx, children):
    ctx.file_metadata = children[0].value


# ---- operations ---------------------------------------------------------------------
@rule("operation")
def _operation(ctx, children):
    names, op, loc = children
    if op is None:
        if names:
            ctx.poison(tok.value[1:] for tok, _ in names)
        return None
    source = ctx.source
    op.span = Span(source, ctx.start, ctx.end)
    if loc is not None:
        op.location = LocationAttr(loc)
    if names:
        results = op.results
        wanted = names[0][1] if len(names) == 1 else sum(count for _, count in names)
        if wanted != len(results):
            ctx.poison(tok.value[1:] for tok, _ in names)
            op._drop_all_uses()
            raise ctx.fail(f"operation defines {len(results)} results but was provided "
                           f"{wanted} to bind", names[0][0])
        index = 0
        define = ctx.define
        for tok, count in names:
            base = tok.value[1:]
            span = Span(source, tok.start, tok.end)
            if count == 1:
                define(base, results[index], span)
                define(base + "#0", results[index], span)  # `%0#0` names it too, as in MLIR
            else:
                for i in range(count):
                    define(f"{base}#{i}", results[index + i], span)
                ctx.scope.defs[base] = results[index]
            index += count
    ctx.append_op(op)
    return None


@rule("op_results")
def _op_results(ctx, children):
    """(name token, count) pairs from the flat [name, count-or-None, ...] children."""
    names = ResultNames()
    for i in range(0, len(children), 2):
        tok, count = children[i], children[i + 1]
        n = 1 if count is None else int(count.value, 0)
        if n < 1:
            raise ctx.fail("expected a positive result count", count)
        names.append((tok, n))
    return names


@rule("trailing_loc")
def _trailing_loc(ctx, children):
    return children[0].value


@rule("generic_op")
def _generic_op(ctx, children):
    name_tok, uses, successors, props, regions, attrs, ftype = children
    name = string_value(ctx, name_tok)
    if not name:
        raise ctx.fail("empty operation name", name_tok)
    operands = ctx.resolve_all(uses, ftype.inputs)
    attributes = dict(props) if props else {}
    if attrs:
        for key, value in attrs.items():
            if key in attributes:
                raise ctx.fail(f"attribute '{key}' given both as a property and an attribute")
            attributes[key] = value
    op = Operation(name, operands, ftype.results, attributes, regions=regions or (),
                   successors=successors or (), property_names=frozenset(props or ()))
    op.name_span = Span(ctx.source, name_tok.start, name_tok.end)
    namespace = name.split(".", 1)[0]
    if not ctx.registry.knows(namespace):  # the earliest op: inner ops are reduced before outer ones
        first = ctx.unregistered.get(namespace)
        if first is None or first.start > name_tok.start:
            ctx.unregistered[namespace] = op.name_span
    return op


@rule("successors")
def _successors(ctx, children):
    return [ctx.block_ref(tok) for tok in children]


@rule("properties")
def _properties(ctx, children):
    return children[0]


@rule("generic_regions")
def _generic_regions(ctx, children):
    return list(children)


@rule("value_uses", "value_uses_comma", "types", "array_values")
def _list(ctx, children):
    return list(children)


# ---- regions and blocks -------------------------------------------------------------
@rule("region_open")
def _region_open(ctx, children):
    return ctx.push_region(children[0] if children else None)


@rule("region")
def _region(ctx, children):
    return ctx.pop_region(children[0])


@rule("block_label")
def _block_label(ctx, children):
    tok, args = children
    return ctx.start_block(tok, args or [])


@rule("block_args")
def _block_args(ctx, children):
    return present(children)


@rule("block_arg")
def _block_arg(ctx, children):
    tok, type, loc = children
    return (tok, type, loc)


# ---- types --------------------------------------------------------------------
@rule("scalar_type")
def _scalar_type(ctx, children):
    tok = children[0]
    t = T.scalar_type_from_name(tok.value)
    if t is None:
        raise ctx.fail(f"unknown type '{tok.value}'", tok)
    return t


def _shape(ctx, dims_tok):
    """`4x?x[8]x` -> ((4, None, 8), (False, False, True))."""
    if dims_tok is None:
        return (), ()
    shape, scalable = [], []
    for part in dims_tok.value.split("x")[:-1]:
        part = part.strip()  # `vector<2 x i1>`
        if part == "?":
            shape.append(T.DYNAMIC)
            scalable.append(False)
        elif part.startswith("["):
            shape.append(int(part[1:-1]))
            scalable.append(True)
        elif part == "*":
            return None, None
        else:
            shape.append(int(part))
            scalable.append(False)
    return tuple(shape), tuple(scalable)


@rule("tensor_type")
def _tensor_type(ctx, children):
    dims, element, encoding = children
    shape, scalable = _shape(ctx, dims)
    if shape is None:
        return T.UnrankedTensorType(element)
    if any(scalable):
        raise ctx.fail("tensor dimensions cannot be scalable", dims)
    if encoding is not None:
        check = ctx.registry.encoding_check(getattr(encoding, "dialect", None))
        problem = check(shape, encoding) if check is not None else None
        if problem is not None:
            raise ctx.fail(problem)
    return T.RankedTensorType(shape, element, encoding)


#: SHAPED_TYPE text -> its type: a file spells the same few types thousands of times.
_SHAPED_TYPES: dict = {}
_SHAPED_PARTS = re.compile(r"(\w+)<((?:(?:[0-9]+|\?)x)*)(.*)>")


@rule("simple_shaped_type")
def _simple_shaped_type(ctx, children):
    """`tensor<4x?xf32>` lexed as one token (see SHAPED_TYPE in the lexer): the type, and the
    errors at the places, that the spelled-out tensor/memref/vector rules give."""
    tok = children[0]
    t = _SHAPED_TYPES.get(tok.value)
    if t is None:
        t = _shaped_from_token(ctx, tok)
        if len(_SHAPED_TYPES) >= 4096:
            _SHAPED_TYPES.clear()
        _SHAPED_TYPES[tok.value] = t
    return t


def _shaped_from_token(ctx, tok):
    kind, dims, name = _SHAPED_PARTS.fullmatch(tok.value).groups()
    element = T.scalar_type_from_name(name)  # the lexer made sure it is one
    shape = tuple(T.DYNAMIC if d == "?" else int(d) for d in dims.split("x")[:-1])
    if kind == "tensor":
        return T.RankedTensorType(shape, element, None)
    if kind == "memref":
        return T.MemRefType(shape, element, None, None)
    if None in shape:
        at = tok.start + len("vector<")
        raise ctx.fail("vector types must have static dimensions", Span(ctx.source, at, at + len(dims)))
    return T.VectorType(shape, element, ())


@rule("memref_type")
def _memref_type(ctx, children):
    dims, element, *extra = children
    shape, scalable = _shape(ctx, dims)
    if shape is None:
        return T.UnrankedMemRefType(element, extra[0] if extra else None)
    layout = memory_space = None
    for attr in extra:
        text = str(attr)
        if layout is None and memory_space is None and (
                text.startswith(("affine_map", "strided", "#")) and not isinstance(attr, IntegerAttr)):
            layout = attr
        else:
            memory_space = attr
    return T.MemRefType(shape, element, layout, memory_space)


@rule("memref_extra")
def _memref_extra(ctx, children):
    return children[0]


@rule("vector_type")
def _vector_type(ctx, children):
    dims, element = children
    shape, scalable = _shape(ctx, dims)
    if shape is None:  # `vector<*xf32>`; `vector<f32>` is a 0-D vector, as in MLIR
        raise ctx.fail("vector types must be ranked")
    if None in shape:
        raise ctx.fail("vector types must have static dimensions", dims)
    return T.VectorType(shape, element, scalable if any(scalable) else ())


@rule("complex_type")
def _complex_type(ctx, children):
    return T.ComplexType(children[0])


@rule("tuple_type")
def _tuple_type(ctx, children):
    return T.TupleType(tuple(children[0] or ()))


@rule("named_type")
def _named_type(ctx, children):
    tok = children[0]
    t = ctx.type_aliases.get(tok.value)
    if t is not None:
        ctx.state.alias_uses.append((tok.start, tok.end, tok.value))
        return t
    if "." in tok.value:
        return _checked_dialect_type(ctx, tok)
    raise ctx.fail(f"undefined symbol alias id '{tok.value[1:]}'", tok)


def _checked_dialect_type(ctx, tok):
    """`!d.t<...>` as a type, after its dialect's parse-time check (its `type_check`; asking for
    it loads the dialect), made by the dialect's `type_parser` where it has one."""
    text = tok.value[1:]
    check = ctx.registry.type_check(text)
    problem = check(text) if check is not None else None
    if problem is not None:
        message, offset = problem
        at = tok.start + 1 + max(0, min(offset, len(text) - 1))
        raise ctx.fail(message, Span(ctx.source, at, at + 1))
    later = ctx.registry.type_check_after_parse(text)
    if later is not None:
        ctx.checks_after_parse.setdefault("!" + text, (later, text, tok.start + 1))
    return T.make_dialect_type(text, ctx.registry.type_parser(text))


@rule("dialect_type")
def _dialect_type(ctx, children):
    return _checked_dialect_type(ctx, children[0])


@rule("function_type")
def _function_type(ctx, children):
    inputs, results = children
    return T.FunctionType(tuple(inputs or ()), tuple(results))


@rule("single_type")
def _single_type(ctx, children):
    return [children[0]]


@rule("paren_types")
def _paren_types(ctx, children):
    return list(children[0] or ())


# ---- attributes -------------------------------------------------------------------
@rule("number")
def _number(ctx, children):
    return (children[0].value, children[0])


@rule("neg_number")
def _neg_number(ctx, children):
    return ("-" + children[0].value, children[0])


@rule("number_attr")
def _number_attr(ctx, children):
    (text, tok), type = children
    try:
        value = number_value(text)
    except ValueError:   # Python's int() refuses more than 4,300 decimal digits
        raise ctx.fail(f"integer literal of {len(text.lstrip('-'))} digits is too long", tok) from None
    if type is None:
        return IntegerAttr(value, T.i64) if isinstance(value, int) else FloatAttr(value, T.f64)
    if isinstance(type, T.FloatType):
        if text.startswith("0x"):
            return FloatAttr(_float_from_bits(value, type), type, "0x" + text[2:].upper())
        return FloatAttr(float(value), type)
    if isinstance(type, (T.IntegerType, T.IndexType)):
        if not isinstance(value, int):
            raise ctx.fail(f"floating point value not valid for specified type {type}", tok)
        least, greatest = T.integer_range(type)
        if not least <= value <= greatest:
            raise ctx.fail(f"integer constant out of range for attribute of type {type}", tok)
        return IntegerAttr(value, type)
    raise ctx.fail(f"invalid type {type} for a number attribute", tok)


def _float_from_bits(bits: int, type) -> float:
    import struct
    name = str(type)
    try:
        if name == "f64":
            return struct.unpack("<d", struct.pack("<Q", bits))[0]
        if name == "f32":
            return struct.unpack("<f", struct.pack("<I", bits))[0]
        if name == "f16":
            return struct.unpack("<e", struct.pack("<H", bits))[0]
        if name == "bf16":
            return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    except struct.error:
        pass
    return float("nan")


@rule("string_attr")
def _string_attr(ctx, children):
    tok, type = children
    return StringAttr(string_value(ctx, tok), type)


@rule("true_attr")
def _true(ctx, children):
    return true


@rule("false_attr")
def _false(ctx, children):
    return false


@rule("unit_attr")
def _unit(ctx, children):
    return unit


@rule("array_attr")
def _array_attr(ctx, children):
    return ArrayAttr(tuple(present(children)))


@rule("dict_attr")
def _dict_attr(ctx, children):
    return DictionaryAttr(tuple(children[0].items()))


@rule("dense_array_attr")
def _dense_array_attr(ctx, children):
    type, values = children
    out = []
    for v in values or ():
        if isinstance(v, tuple):
            out.append(number_value(v[0]))
        else:  # true/false
            out.append(1 if v is true else 0)
    if isinstance(type, T.FloatType):
        out = [float(v) for v in out]
    elif any(isinstance(v, float) for v in out):
        raise ctx.fail(f"expected integer elements for array<{type}>")
    return DenseArrayAttr(type, tuple(out))


@rule("dense_attr")
def _dense_attr(ctx, children):
    tok, type = children
    body = tok.value[6:-1]
    try:
        return parse_dense(body, type)
    except DenseParseError as e:
        at = tok.start + 6 + max(0, min(e.offset, len(body)))
        raise ctx.fail(str(e), Span(ctx.source, at, at + 1))


@rule("dense_self_typed_attr")
def _dense_self_typed_attr(ctx, children):
    """`dense<tensor<2x!tosa.mxint8> : [127 : i8, -128 : i8]>`: elements of a dialect element type,
    typed inside the literal; kept verbatim."""
    text = children[0].value
    def element(e):
        if not e.startswith("!"):
            return T.scalar_type_from_name(e)
        return T.make_dialect_type(e[1:], ctx.registry.type_parser(e[1:]))
    t = self_typed_dense_type(text, element)
    if t is None:
        raise ctx.fail("expected ':' and the literal's type after the dense literal", children[0])
    return SelfTypedDenseAttr(text, t)


@rule("dense_resource_attr")
def _dense_resource_attr(ctx, children):
    tok, type = children
    return DenseResourceAttr(tok.value, type)


@rule("raw_attr", "dialect_attr")
def _opaque_attr(ctx, children):
    tok = children[0]
    if tok.value.startswith("#"):
        check = ctx.registry.attr_check(tok.value)
        problem = check(tok.value) if check is not None else None
        if problem is not None:
            message, offset = problem
            at = tok.start + max(0, min(offset, len(tok.value) - 1))
            raise ctx.fail(message, Span(ctx.source, at, at + 1))
        later = ctx.registry.attr_check_after_parse(tok.value)
        if later is not None:
            ctx.checks_after_parse.setdefault(tok.value, (later, tok.value, tok.start))
        canonical = ctx.registry.attr_canonical(tok.value)
        text = canonical(tok.value) if canonical is not None else None
        if text is not None:
            return OpaqueAttr(text)
    return OpaqueAttr(tok.value)


@rule("loc_attr")
def _loc_attr(ctx, children):
    return LocationAttr(children[0].value)


@rule("symbol_ref_attr")
def _symbol_ref_attr(ctx, children):
    return symbol_ref(ctx, children)


@rule("named_attr")
def _named_attr(ctx, children):
    tok = children[0]
    value = ctx.attr_aliases.get(tok.value)
    if value is not None:
        ctx.state.alias_uses.append((tok.start, tok.end, tok.value))
        return value
    if "." in tok.value:
        return OpaqueAttr(tok.value)
    raise ctx.fail(f"undefined symbol alias id '{tok.value[1:]}'", tok)


@rule("type_attr")
def _type_attr(ctx, children):
    return TypeAttr(children[0])


@rule("attr_dict")
def _attr_dict(ctx, children):
    out = {}
    for entry in present(children):
        name, value, tok = entry
        if name in out:
            raise ctx.fail(f"duplicate key '{name}' in dictionary attribute", tok)
        out[name] = value
    return out


@rule("attr_entry")
def _attr_entry(ctx, children):
    tok, value = children
    name = string_value(ctx, tok) if tok.type == "STRING" else tok.value
    return (name, unit if value is None else value, tok)
