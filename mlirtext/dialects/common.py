"""Helpers shared by dialect modules: building ops from grammar callbacks, type rules."""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import ArrayAttr, DenseArrayAttr, DictionaryAttr, FloatAttr, IntegerAttr
from ..ir.core import Operation
from ..ir.source import Span
from ..syntax.literals import string_value
from .base import VerifyError
from ..ir.dense import DenseElementsAttr

DYNAMIC_INDEX = -9223372036854775808  # ShapedType::kDynamic in static_* arrays


def create(ctx, name: str, operands=(), result_types=(), attributes=None, regions=(),
           successors=()) -> Operation:
    """An op built by a custom-syntax callback; its name span is the rule's first token."""
    op = Operation(name, operands, result_types, attributes or {}, regions, successors)
    op.name_span = Span(ctx.source, ctx.start, ctx.first_end)
    return op


def explicit_attrs(ctx, op_name: str, attrs, inferred: bool = False) -> dict:
    """The attribute dictionary written in an op's custom form, as a new dict; like MLIR
    (strict properties), it may not hold the op's inherent attributes."""
    attrs = dict(attrs or {})
    if attrs:
        definition = ctx.registry.lookup(op_name)
        for key in definition.properties if definition is not None else ():
            if key in attrs:
                if inferred:
                    raise ctx.fail(f"'{key}' is an inferred attribute and should not be specified in "
                                   "the explicit attribute dictionary")
                raise ctx.fail(f"inherent attribute '{key}' cannot be parsed from attr-dict when "
                               "strict properties in assembly format is enabled")
    return attrs


def symbol_name(ctx, tok) -> str:
    """The name a SYMBOL token (`@f` or `@"a b"`) defines, quotes and escapes removed."""
    text = tok.value[1:]
    if text[:1] == '"':
        return string_value(ctx, tok, text)
    return text


def token_text(tok) -> str:
    """The text of a `!`-kept keyword rule's value (a token)."""
    return tok.value


def shaped_like(t: T.Type, element: T.Type) -> T.Type:
    """`t` with its element type replaced (`tensor<4xf32>`, i1 -> `tensor<4xi1>`)."""
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, element, t.encoding)
    if isinstance(t, T.UnrankedTensorType):
        return T.UnrankedTensorType(element)
    if isinstance(t, T.VectorType):
        return T.VectorType(t.shape, element, t.scalable)
    if isinstance(t, T.MemRefType):
        return T.MemRefType(t.shape, element, t.layout, t.memory_space)
    return element


def require(condition: bool, message: str) -> None:
    if not condition:
        raise VerifyError(message)


def check_same_types(op: Operation) -> None:
    """All operands and results have one type."""
    types = op.operand_types + op.result_types
    first = types[0] if types else None
    if any(t is not first and t != first for t in types):  # `is` first: types are usually shared
        raise VerifyError("requires the same type for all operands and results")


def _signless(e) -> bool:
    return isinstance(e, T.IntegerType) and e.is_signless


#: ODS type constraints on element types, by MLIR's description of them.
ELEMENT_KINDS = {
    "int": ("signless-integer-like", lambda e: isinstance(e, T.IndexType) or _signless(e)),
    "int_nz": ("signless-non-zero-bitwidth-integer-like",
               lambda e: isinstance(e, T.IndexType) or (_signless(e) and e.width > 0)),
    "fixed_int": ("signless-fixed-width-integer-like", _signless),
    "float": ("floating-point-like", T.is_float),
    "bool": ("bool-like", lambda e: e == T.i1),
}


def is_like(t: T.Type, kind: str, memref: bool = False) -> bool:
    """`t` is a scalar of `kind`, or a vector or tensor (or, if `memref`, a memref) of one."""
    shaped = (T.RankedTensorType, T.UnrankedTensorType, T.VectorType)
    if memref:
        shaped += (T.MemRefType, T.UnrankedMemRefType)
    element = t.element if isinstance(t, shaped) else t
    return ELEMENT_KINDS[kind][1](element)


def check_type(t: T.Type, what: str, kind: str) -> None:
    """`what` (`operand #0`, `result #1`) has a type of `kind`, or MLIR's message saying not."""
    if not is_like(t, kind):
        raise VerifyError(f"{what} must be {ELEMENT_KINDS[kind][0]}, but got '{t}'")


def check_element_kind(op: Operation, kind: str) -> None:
    """Every operand's type is `kind`-like (see ELEMENT_KINDS)."""
    checked = None
    for i, t in enumerate(op.operand_types):
        if t is not checked:  # operands usually share one type object: check it once
            check_type(t, f"operand #{i}", kind)
            checked = t


def same_shape(a: T.Type, b: T.Type) -> bool:
    """Both scalars, or the same kind of container with the same shape (vector, tensor, memref)."""
    def shape(t):
        if isinstance(t, (T.UnrankedTensorType, T.UnrankedMemRefType)):
            return type(t), None
        if isinstance(t, T.ShapedType):
            return type(t), tuple(t.shape)
        return None, None
    return shape(a) == shape(b)


def splat_value(attr):
    """The one value every element of a constant attribute has (a Python number), or None."""
    if isinstance(attr, (IntegerAttr, FloatAttr)):
        return attr.value
    if isinstance(attr, DenseElementsAttr) and not attr.is_raw and attr.values:
        first = attr.values[0]
        if attr.splat or all(v == first for v in attr.values):
            return first if not isinstance(first, str) else None
    return None


def safe_printer(printer):
    """A custom printer that falls back to the generic form when the op is not in the
    shape the custom form needs (built by a pass, or read in generic form)."""
    def run(p, op):
        mark, level = len(p.out), p.level
        try:
            printer(p, op)
        except Exception:  # noqa: BLE001 - any shape problem: print generically
            del p.out[mark:]
            p.level = level
            p.generic_op(op)
    run.__name__ = printer.__name__
    return run


def dense_i32_array(values) -> DenseArrayAttr:
    return DenseArrayAttr(T.i32, tuple(values))


def operand_segments(op, n: int) -> list:
    """The operand groups of an op with `operandSegmentSizes` (n groups)."""
    sizes = op.attr("operandSegmentSizes")
    if not isinstance(sizes, DenseArrayAttr) or len(sizes.values) != n:
        raise VerifyError("requires 'operandSegmentSizes' attribute with " + str(n) + " elements")
    if sum(sizes.values) != len(op.operands):
        raise VerifyError(f"operand count ({len(op.operands)}) does not match with the total size "
                          f"({sum(sizes.values)}) specified in attribute 'operandSegmentSizes'")
    out, i = [], 0
    for s in sizes.values:
        out.append(op.operands[i:i + s])
        i += s
    return out


def merge_attrs(attributes: dict, attrs) -> dict:
    for k, v in (attrs or {}).items():
        attributes[k] = v
    return attributes


def merge_unique_attrs(ctx, attributes: dict, attrs) -> dict:
    """`attributes` with the written attribute dictionary `attrs` added; a key in both is an error."""
    for key, v in (attrs or {}).items():
        if key in attributes:
            raise ctx.fail(f"attribute '{key}' given twice")
        attributes[key] = v
    return attributes


def dict_array_attr(dicts):
    """An array of dictionary attributes (`arg_attrs`, `res_attrs`), or None when all are empty."""
    if not any(dicts):
        return None
    return ArrayAttr(tuple(DictionaryAttr(tuple((d or {}).items())) for d in dicts))


def add_arg_res_attrs(attributes: dict, arg_dicts, res_dicts) -> None:
    """A function-like op's `arg_attrs` / `res_attrs`, each set only when some dictionary is given."""
    for key, dicts in (("arg_attrs", arg_dicts), ("res_attrs", res_dicts)):
        array = dict_array_attr(dicts)
        if array is not None:
            attributes[key] = array


def mixed_text(p, static, dynamic) -> str:
    """`[4, %n, 8]`: a static_* array with its DYNAMIC_INDEX entries taken from `dynamic`."""
    parts, k = [], 0
    for s in static:
        if s == DYNAMIC_INDEX and k < len(dynamic):
            parts.append(p.value(dynamic[k]))
            k += 1
        else:
            parts.append(str(s))
    return "[" + ", ".join(parts) + "]"
