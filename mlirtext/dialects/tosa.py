"""tosa: the TOSA 1.0 operator set (Tensor Operator Set Architecture).

Each op is declared once, in `SPECS` (operand and result names as TOSA's ODS gives them,
inherent attributes with their kinds, verifier), with one verifier per family implementing
the TOSA 1.0 shape rules. The ops upstream declares with an assembly format get one here
(`FAMILIES`), its inherent attributes as keyword items in the op's order,

    %r = tosa.conv2d %x, %w, %b, %izp, %wzp pad([1, 1, 1, 1]) stride([1, 1]) dilation([1, 1])
             acc_type(f32) {extra} : (types) -> type

(the form iree-opt prints), the older attribute-dictionary form (`{pad = array<i64: 1, 1, 1, 1>}`)
read too. The ops upstream parses with its own C++ parser (enum attributes, written bare in the
dictionary: `{nan_mode = IGNORE}`) share one hand-written rule, `tosa_simple`; renamed
attributes (`value` -> `values` on tosa.const) get their new names.
"""
from __future__ import annotations

from typing import Callable, Optional

from ..ir import types as T
from ..ir.attributes import (ArrayAttr, DenseArrayAttr, FloatAttr, IntegerAttr, OpaqueAttr, StringAttr,
                             TypeAttr, unit)
from ..ir.signatures import OpSignature
from ..syntax.literals import string_value
from .assembly_format import Custom, declare_family
from .base import PURE, RETURN_LIKE, TERMINATOR, Dialect, VerifyError
from .common import create

dialect = Dialect("tosa", grammar="tosa")

# ---- attribute kinds ---------------------------------------------------------------
I32 = "i32"          # `axis(1)` / `axis = 1 : i32`
I64S = "i64s"        # `pad([0, 1])` / `pad = array<i64: 0, 1>`
I32S = "i32s"        # `perms([1, 0])` / `perms = array<i32: 1, 0>`
TYPE = "type"        # `acc_type(f32)`
BOOL = "bool"        # `local_bound(true)`
NUM = "num"          # `min_val(0.0 : f32)`
DENSE = "dense"      # `values(dense<...> : tensor<...>)`
STR = "str"          # `operator_name("x")`
ENUM = "enum"        # `nan_mode<IGNORE>` / `nan_mode = IGNORE` / `#tosa.nan_mode<IGNORE>`

#: Enum attribute name -> (MLIR attribute mnemonic, cases, default case or None)
ENUMS = {
    "nan_mode": ("nan_mode", ("PROPAGATE", "IGNORE"), "PROPAGATE"),
    "rounding_mode": ("rounding_mode", ("SINGLE_ROUND", "INEXACT_ROUND", "DOUBLE_ROUND"), None),
    "mode": ("resize_mode", ("NEAREST_NEIGHBOR", "BILINEAR"), None),
    "block_size": ("block_size", ("BLOCK_SIZE_1", "BLOCK_SIZE_32"), None),
}
_ENUM_OF_CASE = {case: mnemonic for mnemonic, cases, _ in ENUMS.values() for case in cases}


class Attr:
    """An inherent attribute: its name, its kind (I32, ...) and whether the op requires it."""

    __slots__ = ("name", "kind", "required")

    def __init__(self, name: str, kind: str, required: bool = True):
        self.name, self.kind, self.required = name, kind, required


class Spec:
    """One TOSA op: its operands and results as TOSA's ODS names them ("input1*": any number,
    "input1+": one or more), its inherent attributes, its verifier and whether it is pure.
    `counts` gives the operand range of the ops whose optional operands have no names here;
    `own_syntax` marks the ops upstream writes in a syntax of their own."""

    __slots__ = ("operands", "results", "attrs", "verify", "pure", "counts", "named", "custom_syntax")

    def __init__(self, operands=(), results=("output",), attrs=(), verify=None, pure=True, counts=None,
                 own_syntax=False):
        self.operands, self.results, self.attrs = tuple(operands), tuple(results), tuple(attrs)
        self.verify, self.pure = verify, pure
        lo = sum(1 for n in self.operands if n[-1] != "*")
        hi = None if any(n[-1] in "*+" for n in self.operands) else len(self.operands)
        self.counts = counts or (lo, hi)
        self.named = counts is None  # every operand has its name
        #: read by the hand-written `tosa_simple` rule, as upstream reads these ops with its own C++
        #: parser (`parseWithEnumHandling`, which takes an enum's bare case: `{nan_mode = IGNORE}`),
        #: rather than with a declared format
        self.custom_syntax = own_syntax or counts is not None or any(a.kind == ENUM for a in self.attrs)

    @property
    def result_count(self) -> int:
        """How many results the op has; -1: any number."""
        return -1 if any(n[-1] == "*" for n in self.results) else len(self.results)


SPECS: dict[str, Spec] = {}


def _declare(names, spec_factory):
    for name in names:
        SPECS[f"tosa.{name}"] = spec_factory()


# ---- type helpers --------------------------------------------------------------------
def shape_rank(t) -> Optional[int]:
    """N for `!tosa.shape<N>`, else None."""
    if isinstance(t, T.DialectType) and t.text.startswith("tosa.shape<"):
        try:
            return int(t.body)
        except ValueError:
            return None
    return None


def _is_shape(t) -> bool:
    return shape_rank(t) is not None


def _is_tensor(t) -> bool:
    return isinstance(t, (T.RankedTensorType, T.UnrankedTensorType))


def _shape(t):
    """The shape of a ranked tensor, else None (unranked or not a tensor)."""
    return t.shape if isinstance(t, T.RankedTensorType) else None


def _elt(t):
    return T.element_type(t)


def _plain(e) -> bool:
    """A builtin element type whose identity checks are meaningful (not quantized)."""
    return isinstance(e, (T.IntegerType, T.FloatType, T.IndexType))


def _dims_compatible(a, b) -> bool:
    return a is None or b is None or a == b


def _shapes_compatible(a, b) -> bool:
    sa, sb = _shape(a), _shape(b)
    if sa is None or sb is None:
        return True
    return len(sa) == len(sb) and all(_dims_compatible(x, y) for x, y in zip(sa, sb))


def _check_rank(t, rank: int, what: str) -> None:
    if _is_tensor(t):
        s = _shape(t)
        if s is not None and len(s) != rank:
            raise VerifyError(f"{what} must be {rank}D tosa-conformant tensor, but got '{t}'")
    elif not isinstance(t, T.DialectType):
        raise VerifyError(f"{what} must be a tosa-conformant tensor, but got '{t}'")


def _check_tensor(t, what: str) -> None:
    if not _is_tensor(t):
        raise VerifyError(f"{what} must be tosa-conformant tensor of number values, but got '{t}'")


def _check_shape_type(t, what: str, rank: Optional[int] = None) -> None:
    r = shape_rank(t)
    if r is None:
        raise VerifyError(f"{what} must be tosa.shape, but got '{t}'")
    if rank is not None and r != rank:
        raise VerifyError(f"{what} must be !tosa.shape<{rank}>, but got '{t}'")


def _ints(attr) -> list:
    return list(attr.values) if isinstance(attr, DenseArrayAttr) else []


def _const_shape_values(value) -> Optional[list]:
    """The values of a `tosa.const_shape` producing `value`, when known."""
    op = getattr(value, "owner", None)
    if isinstance(op, type(None)) or not hasattr(op, "name") or op.name != "tosa.const_shape":
        return None
    dense = op.attr("values")
    vals = getattr(dense, "values", None)
    if vals is None or getattr(dense, "is_raw", False):
        return None
    n = shape_rank(op.results[0].type)
    if getattr(dense, "splat", False) and n is not None and vals:
        return [vals[0]] * n
    return list(vals)


# ---- per-family verifiers ----------------------------------------------------------
def _v_elementwise_unary(op, input_name: str = "input1") -> None:
    """(TOSA's ODS calls the operand `input1` on most unary ops, `input` on sigmoid, tanh, erf,
    cast and clamp.)"""
    a, r = op.operand(input_name).type, op.result_named("output").type
    _check_tensor(a, "operand #0")
    _check_tensor(r, "result #0")
    if not _shapes_compatible(a, r):
        raise VerifyError("requires the same shape for all operands and results")
    if op.name not in ("tosa.cast",) and _plain(_elt(a)) and _plain(_elt(r)) and _elt(a) != _elt(r):
        raise VerifyError("requires the same element type for all operands and results")


def _broadcast(shapes) -> Optional[list]:
    """The broadcast of equal-rank shapes (None dims stay dynamic), or None if incompatible."""
    out = list(shapes[0])
    for s in shapes[1:]:
        for i, d in enumerate(s):
            o = out[i]
            if o == 1:
                out[i] = d
            elif d == 1 or d is None:
                continue
            elif o is None:
                out[i] = d
            elif o != d:
                return None
    return out


def _check_broadcast(op, tensors) -> None:
    ranked = [_shape(t) for t in tensors if _shape(t) is not None]
    res = op.results[0].type
    for t in tensors:
        _check_tensor(t, "operand")
    _check_tensor(res, "result #0")
    if not ranked:
        return
    if any(len(s) != len(ranked[0]) for s in ranked):
        raise VerifyError("operands don't have matching ranks")
    out = _broadcast(ranked)
    if out is None:
        raise VerifyError("operands don't have broadcast-compatible shapes")
    rs = _shape(res)
    if rs is not None and len(ranked) == len(tensors):
        if len(rs) != len(out) or any(d is not None and o is not None and d != o and o != 1
                                      for d, o in zip(rs, out)):
            raise VerifyError("result type not broadcast compatible with broadcasted operands's shapes")


def _v_elementwise_binary(op) -> None:
    a, b = op.operand("input1").type, op.operand("input2").type
    _check_broadcast(op, [a, b])
    r = op.results[0].type
    ea, eb, er = _elt(a), _elt(b), _elt(r)
    if _plain(ea) and _plain(eb) and ea != eb:
        raise VerifyError("requires the same element type for all operands")
    if _plain(ea) and _plain(er) and ea != er:
        raise VerifyError("requires the same element type for all operands and results")


def _v_compare(op) -> None:
    a, b = op.operand("input1").type, op.operand("input2").type
    _check_broadcast(op, [a, b])
    ea, eb = _elt(a), _elt(b)
    if _plain(ea) and _plain(eb) and ea != eb:
        raise VerifyError("requires the same element type for all operands")
    r = op.result_named("output").type
    if _elt(r) != T.i1:
        raise VerifyError(f"result #0 must be tosa-conformant tensor of 1-bit signless integer values, "
                          f"but got '{r}'")


def _v_logical(op) -> None:
    for v in list(op.operands) + list(op.results):
        if _elt(v.type) != T.i1:
            raise VerifyError(f"operand must be tosa-conformant tensor of 1-bit signless integer values, "
                              f"but got '{v.type}'")
    a = op.operand("input1").type
    if len(op.operands) == 2:
        _check_broadcast(op, [a, op.operand("input2").type])
    elif not _shapes_compatible(a, op.result_named("output").type):
        raise VerifyError("requires the same shape for all operands and results")


def _v_mul(op) -> None:
    a, b, shift = op.operand_types
    _check_broadcast(op, [a, b])
    ea, er = _elt(a), _elt(op.results[0].type)
    sa, sr = _shape(a), _shape(op.results[0].type)
    if sa is not None and sr is not None and len(sa) != len(sr):
        raise VerifyError(f"result type has different rank than a, got {len(sr)} vs {len(sa)}")
    if _plain(ea) and _plain(_elt(b)) and ea != _elt(b):
        raise VerifyError("requires the same element type for all operands")
    if _plain(ea) and _plain(er) and ea != er and not (ea in (T.i8, T.i16) and er == T.i32):
        raise VerifyError("invalid data type size for operands or result")
    if _elt(shift) != T.i8:
        raise VerifyError(f"operand #2 must be 1D tensor of 8-bit signless integer values, but got '{shift}'")


def _same_elt(a, r) -> None:
    ea, er = _elt(a), _elt(r)
    if _plain(ea) and _plain(er) and ea != er:
        raise VerifyError(f"expect input and output to have same element type, got '{ea}' and '{er}'")


def _v_select(op) -> None:
    c, a, b = op.operand_types
    if _elt(c) != T.i1:
        raise VerifyError(f"operand #0 must be tosa-conformant tensor of 1-bit signless integer values, "
                          f"but got '{c}'")
    _check_broadcast(op, [c, a, b])
    if _plain(_elt(a)) and _plain(_elt(b)) and _elt(a) != _elt(b):
        raise VerifyError("failed to verify that all of {on_true, on_false, output} have same element type")
    _same_elt(a, op.results[0].type)


def _v_zp_unary(op) -> None:  # negate: input1, input1_zp, output_zp
    _v_elementwise_unary(op)


def _v_unary_of_input(op) -> None:
    _v_elementwise_unary(op, "input")


def _v_clamp(op) -> None:
    _v_elementwise_unary(op, "input")
    lo, hi = op.attr("min_val"), op.attr("max_val")
    for name, a in (("min_val", lo), ("max_val", hi)):
        if not isinstance(a, (IntegerAttr, FloatAttr)):
            raise VerifyError(f"requires attribute '{name}'")
    e = _elt(op.operand("input").type)
    if _plain(e):
        for a in (lo, hi):
            if isinstance(e, T.FloatType) != isinstance(a, FloatAttr):
                raise VerifyError("min/max attributes types are incompatible with input/output element types.")
    if isinstance(lo, FloatAttr) and isinstance(hi, FloatAttr) and lo.value > hi.value:
        raise VerifyError("expected min_val <= max_val, got min_val=" f"{lo.value}, max_val={hi.value}")
    if isinstance(lo, IntegerAttr) and isinstance(hi, IntegerAttr) and lo.value > hi.value:
        raise VerifyError(f"expected min_val <= max_val, got min_val={lo.value}, max_val={hi.value}")


def _v_table(op) -> None:
    a, table = op.operand_types
    _check_tensor(a, "operand #0")
    _check_rank(table, 1, "operand #1")
    if not _shapes_compatible(a, op.results[0].type):
        raise VerifyError("requires the same shape for input and output")


def _axis(op, rank: int) -> int:
    axis = op.attr("axis")
    v = axis.value if isinstance(axis, IntegerAttr) else 0
    if rank and not 0 <= v < rank:
        raise VerifyError(f"expect input tensor rank ({rank}) to be larger than reduce axis ({v})")
    return v


def _axis_input(op):
    """(input type, result type, their shapes, axis) of an op along an `axis` of its tensor input,
    which must have rank 1 or more; a shape is None when unranked, the axis too for the input's."""
    a, r = op.operand("input").type, op.result_named("output").type
    _check_tensor(a, "operand #0")
    sa, sr = _shape(a), _shape(r)
    if sa is None:
        return a, r, sa, sr, None
    if len(sa) == 0:
        raise VerifyError(f"operand #0 must be tosa-conformant tensor of at least rank 1, but got '{a}'")
    return a, r, sa, sr, _axis(op, len(sa))


def _v_reduce(op) -> None:
    a, r, sa, sr, axis = _axis_input(op)
    if axis is not None and sr is not None:
        if len(sr) != len(sa):
            raise VerifyError(f"expect output tensor rank ({len(sr)}) to be equal to input tensor "
                              f"rank ({len(sa)})")
        if sr[axis] is not None and sr[axis] != 1:
            raise VerifyError(f"expect reduced dimension size to be 1, got {sr[axis]}")
    if op.name in ("tosa.reduce_all", "tosa.reduce_any") and _elt(a) != T.i1:
        raise VerifyError(f"operand #0 must be tosa-conformant tensor of 1-bit signless integer values, "
                          f"but got '{a}'")


def _v_argmax(op) -> None:
    a, r, sa, sr, axis = _axis_input(op)
    if axis is not None and sr is not None:
        if len(sr) != len(sa) - 1:
            raise VerifyError(f"expected output tensor rank {len(sr)} to be equal to input rank "
                              f"{len(sa)} minus one")
        want = list(sa[:axis]) + list(sa[axis + 1:])
        if not all(_dims_compatible(x, y) for x, y in zip(want, sr)):
            raise VerifyError("incompatible input and output shapes")
    if not isinstance(_elt(r), T.IntegerType):
        raise VerifyError(f"result #0 must be tosa-conformant tensor of integer values, but got '{r}'")


def _v_concat(op) -> None:
    types = op.operand_types
    if not types:
        raise VerifyError("requires at least one input")
    for t in types:
        _check_tensor(t, "operand")
    ranked = [_shape(t) for t in types if _shape(t) is not None]
    r = op.results[0].type
    if not ranked:
        return
    rank = len(ranked[0])
    if any(len(s) != rank for s in ranked):
        raise VerifyError("expect all operands to have the same rank")
    axis = op.attr("axis")
    axis = axis.value if isinstance(axis, IntegerAttr) else 0
    if not 0 <= axis < max(rank, 1):
        raise VerifyError(f"axis must be in range 0 to {rank - 1}")
    for s in ranked[1:]:
        for i, (x, y) in enumerate(zip(ranked[0], s)):
            if i != axis and not _dims_compatible(x, y):
                raise VerifyError(f"expect all operand shapes to have the same sizes on non-axis dimensions, "
                                  f"but got {x} vs {y} at index {i} on operands 0 and 1")
    sr = _shape(r)
    if sr is not None and len(ranked) == len(types):
        if len(sr) != rank:
            raise VerifyError(f"expect output rank {len(sr)} to match input rank {rank}")
        sizes = [s[axis] for s in ranked]
        if None not in sizes and sr[axis] is not None and sum(sizes) != sr[axis]:
            raise VerifyError(f"requires sum of axis dimensions of input1 equal to output axis "
                              f"dimension, got {sum(sizes)} and {sr[axis]}")


def _v_reshape(op) -> None:
    a, shape = op.operand_types
    r = op.results[0].type
    _check_tensor(a, "operand #0")
    _check_shape_type(shape, "operand #1")
    sr = _shape(r)
    if sr is not None and shape_rank(shape) != len(sr):
        raise VerifyError("new shape does not match result rank")
    sa = _shape(a)
    if sa is not None and sr is not None and None not in sa and None not in sr:
        na = 1
        for d in sa:
            na *= d
        nr = 1
        for d in sr:
            nr *= d
        if na != nr:
            raise VerifyError(f"cannot reshape {na} elements into {nr}")
    if _plain(_elt(a)) and _plain(_elt(r)) and _elt(a) != _elt(r):
        raise VerifyError("input and output element types must match")


def _v_transpose(op) -> None:
    a, r = op.operand("input1").type, op.result_named("output").type
    _check_tensor(a, "operand #0")
    perms = op.attr("perms")
    if not isinstance(perms, DenseArrayAttr):
        return
    p = list(perms.values)
    sa, sr = _shape(a), _shape(r)
    if sa is not None and len(p) != len(sa):
        raise VerifyError(f"expected perms attribute to have size {len(sa)} (input rank) but got size {len(p)}")
    if sorted(p) != list(range(len(p))):
        raise VerifyError("expected valid permutation indices")
    if sr is not None and len(sr) != len(p):
        raise VerifyError("expected output tensor rank to equal perms size")
    if sa is not None and sr is not None:
        for i, k in enumerate(p):
            if not _dims_compatible(sr[i], sa[k]):
                raise VerifyError(f"expected output tensor dim {i} to match input dim {k} with value of {sa[k]}")


def _v_pad(op) -> None:
    a, padding, value = op.operand_types
    _check_tensor(a, "operand #0")
    _check_shape_type(padding, "operand #1")
    sa, sr = _shape(a), _shape(op.results[0].type)
    if sa is not None and shape_rank(padding) != 2 * len(sa):
        raise VerifyError(f"expected padding tensor dim 0 to have size {2 * len(sa)} (2*rank(shape1)) "
                          f"but got size {shape_rank(padding)}")
    if sa is not None and sr is not None:
        if len(sa) != len(sr):
            raise VerifyError("expect same input and output tensor rank")
        pads = _const_shape_values(op.operand("padding"))
        if pads is not None and len(pads) == 2 * len(sa):
            for i, (x, y) in enumerate(zip(sa, sr)):
                if x is not None and y is not None and pads[2 * i] >= 0 and pads[2 * i + 1] >= 0 \
                        and x + pads[2 * i] + pads[2 * i + 1] != y:
                    raise VerifyError(f"mismatch in output shape at dimension {i}: expected "
                                      f"{x} + {pads[2 * i]} + {pads[2 * i + 1]} = "
                                      f"{x + pads[2 * i] + pads[2 * i + 1]}, but got {y}")


def _v_slice(op) -> None:
    a, start, size = op.operand_types
    _check_tensor(a, "operand #0")
    _check_shape_type(start, "operand #1")
    _check_shape_type(size, "operand #2")
    sa = _shape(a)
    if sa is not None:
        if shape_rank(start) != len(sa):
            raise VerifyError("length of start is not equal to rank of input shape")
        if shape_rank(size) != len(sa):
            raise VerifyError("length of size is not equal to rank of input shape")
    sr = _shape(op.results[0].type)
    if sa is not None and sr is not None and len(sr) != len(sa):
        raise VerifyError("expect input1 and output to have the same rank")


def _v_tile(op) -> None:
    a, multiples = op.operand_types
    _check_tensor(a, "operand #0")
    _check_shape_type(multiples, "operand #1")
    sa, sr = _shape(a), _shape(op.results[0].type)
    if sa is not None and shape_rank(multiples) != len(sa):
        raise VerifyError("expect 'multiples' to have rank equal to input rank")
    if sa is not None and sr is not None and len(sa) != len(sr):
        raise VerifyError("expect same input and output tensor rank")


def _v_reverse(op) -> None:
    a, r = op.operand("input1").type, op.result_named("output").type
    _check_tensor(a, "operand #0")
    sa = _shape(a)
    axis = op.attr("axis")
    v = axis.value if isinstance(axis, IntegerAttr) else 0
    if sa is not None and (v < 0 or (len(sa) and v >= len(sa))):
        raise VerifyError(f"expect input tensor rank ({len(sa)}) to be larger than reverse axis ({v})")
    if not _shapes_compatible(a, r):
        raise VerifyError("expect output tensor shape to match input tensor shape")


def _v_gather(op) -> None:
    values, indices = op.operand_types[:2]
    _check_rank(values, 3, "operand #0")
    _check_rank(indices, 2, "operand #1")
    _check_rank(op.results[0].type, 3, "result #0")
    _same_elt(values, op.results[0].type)
    sv, si, sr = _shape(values), _shape(indices), _shape(op.results[0].type)
    if op.name == "tosa.gather" and sr:
        checks = ((0, sv[0]), (2, sv[2])) if sv else ()
        checks += ((0, si[0]), (1, si[1])) if si else ()
        for k, want in checks:
            if not _dims_compatible(want, sr[k]):
                raise VerifyError(f"requires output dimension {k} to have size {want}, got {sr[k]}")
    if op.name == "tosa.row_gather" and sv and sr:
        if not _dims_compatible(sv[0], sr[0]):
            raise VerifyError(f"expected batch of output to match size {sv[0]}, got {sr[0]}")
        if not _dims_compatible(sv[2], sr[2]):
            raise VerifyError(f"expected channels of output to match size {sv[2]}, got {sr[2]}")


def _v_scatter(op) -> None:
    vin, idx, inp = op.operand_types
    _check_rank(vin, 3, "operand #0")
    _check_rank(idx, 2, "operand #1")
    _check_rank(inp, 3, "operand #2")
    if not _shapes_compatible(vin, op.results[0].type):
        raise VerifyError("requires values_out to have the shape of values_in")
    _same_elt(vin, op.results[0].type)


def _v_matmul(op) -> None:
    a, b = op.operand_types[:2]
    r = op.results[0].type
    _check_rank(a, 3, "operand #0")
    _check_rank(b, 3, "operand #1")
    _check_rank(r, 3, "result #0")
    sa, sb, sr = _shape(a), _shape(b), _shape(r)
    if sa is None or sb is None:
        return
    transposed = op.name == "tosa.matmul_t"
    c_b = sb[2] if transposed else sb[1]
    w = sb[1] if transposed else sb[2]
    if not _dims_compatible(sa[0], sb[0]) and sa[0] != 1 and sb[0] != 1:
        raise VerifyError(f"expect operands batch dimensions to match, got {sa[0]} and {sb[0]}")
    if not _dims_compatible(sa[2], c_b):
        raise VerifyError(f"expect operands channel dimensions to match, got {sa[2]} and {c_b}")
    if sr is not None:
        n = sa[0] if sa[0] not in (None, 1) else sb[0] if sb[0] is not None else sa[0]
        inferred = [n, sa[1], w]
        if not all(_dims_compatible(x, y) for x, y in zip(sr, inferred)):
            fmt = lambda s: ", ".join("?" if d is None else str(d) for d in s)  # noqa: E731
            raise VerifyError(f"expected output shape {fmt(sr)} to be compatible with inferred shape "
                              f"{fmt(inferred)}")


def _check_sizes(op, sizes) -> None:
    for name, n, minimum in sizes:
        a = op.attributes.get(name)
        if a is None:
            continue
        if not isinstance(a, DenseArrayAttr):
            raise VerifyError(f"attribute '{name}' failed to satisfy constraint: i64 dense array attribute")
        if len(a.values) != n:
            raise VerifyError(f"attribute '{name}' failed to satisfy constraint: i64 dense array attribute "
                              f"with exactly {n} elements")
        if any(v < minimum for v in a.values):
            what = "non-negative" if minimum == 0 else "positive"
            raise VerifyError(f"expect all {name} values to be {'>= 0' if minimum == 0 else '>= 1'}, "
                              f"got {list(a.values)}" if True else what)


def _out_dim(i, k, pad_a, pad_b, stride, dil=1):
    """(output size, exact) of a strided window; None when unknown."""
    if None in (i, k):
        return None, False
    num = i - 1 + pad_a + pad_b - (k - 1) * dil
    return num // stride + 1, num % stride == 0


def _check_spatial(op, in_dims, k_dims, out_dims, pads, strides, dils, names) -> None:
    for j, name in enumerate(names):
        o, exact = _out_dim(in_dims[j], k_dims[j], pads[2 * j], pads[2 * j + 1], strides[j], dils[j])
        if o is None or out_dims[j] is None:
            continue
        if exact and o != out_dims[j]:
            raise VerifyError(f"calculated output {name} did not match expected: calculated={o}, "
                              f"expected={out_dims[j]}")


def _v_conv(op) -> None:
    spatial = 3 if op.name == "tosa.conv3d" else 2
    rank = spatial + 2
    inp, weight, bias = op.operand_types[:3]
    r = op.results[0].type
    _check_rank(inp, rank, "operand #0")
    _check_rank(weight, rank if op.name != "tosa.depthwise_conv2d" else 4, "operand #1")
    _check_rank(bias, 1, "operand #2")
    _check_rank(r, rank, "result #0")
    _check_sizes(op, (("pad", 2 * spatial, 0), ("stride", spatial, 1), ("dilation", spatial, 1)))
    if not isinstance(op.attr("acc_type"), TypeAttr):
        raise VerifyError("requires attribute 'acc_type'")
    _check_zero_points(op, 3)
    si, sw, sr = _shape(inp), _shape(weight), _shape(r)
    if si is None or sw is None or sr is None:
        return
    pads, strides = _ints(op.attr("pad")), _ints(op.attr("stride"))
    dils = _ints(op.attr("dilation"))
    if op.name == "tosa.depthwise_conv2d":
        k = sw[0:2]
    else:
        k = sw[1:1 + spatial]
    names = ("depth", "height", "width") if spatial == 3 else ("height", "width")
    _check_spatial(op, si[1:1 + spatial], k, sr[1:1 + spatial], pads, strides, dils, names)
    if op.name == "tosa.depthwise_conv2d":
        if sw[2] is not None and si[3] is not None and sw[2] != si[3]:
            raise VerifyError(f"expected input channels ({si[3]}) to match weight channels ({sw[2]})")
        oc = None if None in (sw[2], sw[3]) else sw[2] * sw[3]
    else:
        if not _dims_compatible(si[-1], sw[-1]):
            raise VerifyError(f"expected input channels ({si[-1]}) to match weight channels ({sw[-1]})")
        oc = sw[0]
    if oc is not None and sr[-1] is not None and oc != sr[-1]:
        raise VerifyError(f"expected output channels ({sr[-1]}) to match weight output channels ({oc})")


def _v_transpose_conv(op) -> None:
    inp, weight, bias = op.operand_types[:3]
    r = op.results[0].type
    _check_rank(inp, 4, "operand #0")
    _check_rank(weight, 4, "operand #1")
    _check_rank(bias, 1, "operand #2")
    _check_rank(r, 4, "result #0")
    _check_sizes(op, (("out_pad", 4, -(1 << 62)), ("stride", 2, 1)))
    _check_zero_points(op, 3)
    si, sw, sr = _shape(inp), _shape(weight), _shape(r)
    if si is None or sw is None or sr is None:
        return
    op_ = _ints(op.attr("out_pad"))
    st = _ints(op.attr("stride"))
    if len(op_) != 4 or len(st) != 2:
        return
    for j, name in enumerate(("height", "width")):
        i, k, o = si[1 + j], sw[1 + j], sr[1 + j]
        if None in (i, k, o):
            continue
        want = (i - 1) * st[j] + op_[2 * j] + op_[2 * j + 1] + k
        if want != o:
            raise VerifyError(f"dimension mismatch: expected OH == (IH - 1) * stride_y + out_pad_top + "
                              f"out_pad_bottom + KH, but got {o} != {want}" if j == 0 else
                              f"dimension mismatch: expected OW == (IW - 1) * stride_x + out_pad_left + "
                              f"out_pad_right + KW, but got {o} != {want}")


def _check_zero_points(op, first: int) -> None:
    for k in (first, first + 1):
        if k < len(op.operands):
            t = op.operands[k].type
            s = _shape(t)
            if s is not None and len(s) != 1:
                raise VerifyError(f"operand #{k} must be 1D tensor, but got '{t}'")


def _v_pool(op) -> None:
    a, r = op.operand("input").type, op.result_named("output").type
    _check_rank(a, 4, "operand #0")
    _check_rank(r, 4, "result #0")
    _check_sizes(op, (("kernel", 2, 1), ("stride", 2, 1), ("pad", 4, 0)))
    if op.name == "tosa.avg_pool2d":
        if not isinstance(op.attr("acc_type"), TypeAttr):
            raise VerifyError("requires attribute 'acc_type'")
        _check_zero_points(op, 1)
    sa, sr = _shape(a), _shape(r)
    if sa is None or sr is None:
        return
    k, s, p = (_ints(op.attributes.get(n)) for n in ("kernel", "stride", "pad"))
    if len(k) != 2 or len(s) != 2 or len(p) != 4:
        return
    for j, name in enumerate(("height", "width")):
        i, o = sa[1 + j], sr[1 + j]
        if None in (i, o):
            continue
        num = i + p[2 * j] + p[2 * j + 1] - k[j]
        if num % s[j] == 0 and num // s[j] + 1 != o:
            raise VerifyError(f"calculated output {name} did not match expected: calculated="
                              f"{num // s[j] + 1}, expected={o}")
    if sa[3] is not None and sr[3] is not None and sa[3] != sr[3]:
        raise VerifyError(f"expected output channels ({sr[3]}) to match input channels ({sa[3]})")


def _v_adaptive_pool(op) -> None:
    a, r = op.operand("input").type, op.result_named("output").type
    _check_rank(a, 4, "operand #0")
    _check_rank(r, 4, "result #0")
    for t in op.operand_types:
        if not (_is_tensor(t) or _is_shape(t)):
            raise VerifyError(f"operand must be a tensor or !tosa.shape, but got '{t}'")


def _v_fft(op) -> None:
    for t in op.operand_types + op.result_types:
        _check_rank(t, 3, "operand")
    if op.name == "tosa.fft2d":
        a, b = op.operand_types
        if not _shapes_compatible(a, b):
            raise VerifyError("expected input_real and input_imag to have the same shape")
        for r in op.result_types:
            if not _shapes_compatible(a, r):
                raise VerifyError("expected output shape to match input shape")
    else:
        sa = _shape(op.operand_types[0])
        for r in op.result_types:
            sr = _shape(r)
            if sa is not None and sr is not None:
                if not _dims_compatible(sa[0], sr[0]) or not _dims_compatible(sa[1], sr[1]):
                    raise VerifyError("expected output N and H to match input")
                if sa[2] is not None and sr[2] is not None and sr[2] != sa[2] // 2 + 1:
                    raise VerifyError(f"expected output width to be equal to input_width / 2 + 1, "
                                      f"got {sr[2]}")


def _v_resize(op) -> None:
    a, scale, offset, border = op.operand_types
    _check_rank(a, 4, "operand #0")
    _check_rank(op.results[0].type, 4, "result #0")
    _check_shape_type(scale, "operand #1", 4)
    _check_shape_type(offset, "operand #2", 2)
    _check_shape_type(border, "operand #3", 2)


def _v_rescale(op) -> None:
    a = op.operand_types[0]
    _check_tensor(a, "operand #0")
    if not _shapes_compatible(a, op.results[0].type):
        raise VerifyError("requires the same shape for input and output")
    for k in (1, 2, 3, 4):
        _check_tensor(op.operand_types[k], f"operand #{k}")


def _v_const(op) -> None:
    values = op.attr("values")
    if values is None:  # (the name before TOSA 1.0)
        values = op.attr("value")
    if values is None:
        raise VerifyError("requires attribute 'values'")
    t = getattr(values, "type", None)
    r = op.results[0].type
    if t is None or not _is_tensor(r):
        if not _is_tensor(r):
            raise VerifyError(f"result #0 must be tosa-conformant tensor, but got '{r}'")
        return
    if not _is_tensor(t):
        raise VerifyError("expected tensors for attr/result type")
    if _shape(t) is not None and _shape(r) is not None and _shape(t) != _shape(r):
        raise VerifyError("failed to verify that all of {values, output} have same shape")
    if t != r and _plain(_elt(t)) and _plain(_elt(r)) and _elt(t) != _elt(r):
        raise VerifyError("expected same attr/result element types")


def _v_const_shape(op) -> None:
    values = op.attr("values")
    r = op.results[0].type
    _check_shape_type(r, "result #0")
    t = getattr(values, "type", None)
    if t is None:
        raise VerifyError("requires attribute 'values'")
    s = _shape(t)
    if _elt(t) != T.index:
        raise VerifyError("attribute 'values' failed to satisfy constraint: index elements attribute")
    if s is not None:
        n = s[0] if len(s) == 1 else (0 if len(s) == 0 else None)
        if len(s) > 1:
            raise VerifyError("expect elements in attribute values with rank 1")
        if n is not None and n != shape_rank(r):
            raise VerifyError(f"expect number of elements in attribute values ({n}) to be equal to the "
                              f"rank ({shape_rank(r)}) for the result shape type")


def _v_shape_binary(op) -> None:
    ranks = [shape_rank(t) for t in op.operand_types + op.result_types]
    for t, n in zip(op.operand_types + op.result_types, ranks):
        if n is None:
            raise VerifyError(f"operand must be tosa.shape, but got '{t}'")
    if len(set(ranks)) != 1:
        raise VerifyError("requires all operands and results to have the same shape rank")


def _v_concat_shape(op) -> None:
    ranks = [shape_rank(t) for t in op.operand_types]
    if None in ranks:
        raise VerifyError("operands must be tosa.shape")
    r = shape_rank(op.results[0].type)
    if r is None:
        raise VerifyError("result must be tosa.shape")
    if sum(ranks) != r:
        raise VerifyError(f"requires output shape rank to be equal to the sum of the input shape "
                          f"ranks ({sum(ranks)}), got {r}")


def _v_slice_shape(op) -> None:
    _check_shape_type(op.operand_types[0], "operand #0")
    _check_shape_type(op.results[0].type, "result #0")


def _v_dim(op) -> None:
    a = op.operand_types[0]
    _check_tensor(a, "operand #0")
    _check_shape_type(op.results[0].type, "result #0", 1)
    s = _shape(a)
    if s is not None:
        axis = op.attr("axis")
        v = axis.value if isinstance(axis, IntegerAttr) else 0
        if not 0 <= v < len(s):
            raise VerifyError(f"expect axis to be in the range [0, {len(s) - 1}], got {v}")


def _v_assert_shape(op) -> None:
    for t in op.operand_types:
        _check_shape_type(t, "operand")


def _v_identity(op) -> None:
    pass  # MLIR checks nothing beyond the operand/result kinds


def _v_none(op) -> None:
    pass


def _v_matmul_block_scaled(op) -> None:
    a, b = op.operand_types[0], op.operand_types[2]
    r = op.results[0].type
    _check_rank(a, 3, "operand #0")
    _check_rank(b, 3, "operand #2")
    _check_rank(r, 3, "result #0")
    sa, sb, sr = _shape(a), _shape(b), _shape(r)
    if sr is None:
        return
    inferred = [sa[0] if sa else None, sa[1] if sa else None, sb[1] if sb else None]
    if inferred[0] is None and sb:
        inferred[0] = sb[0]
    if not all(_dims_compatible(x, y) for x, y in zip(sr, inferred)):
        fmt = lambda s: ", ".join("?" if d is None else str(d) for d in s)  # noqa: E731
        raise VerifyError(f"expected output shape {fmt(sr)} to be compatible with expected output shape "
                          f"{fmt(inferred)}")


def _v_cast_block_scaled(op) -> None:
    a, r = op.operand_types[0], op.result_types[0]
    if not _shapes_compatible(a, r):
        raise VerifyError(f"require compatible shapes for input_data ('{a}') and output_data ('{r}')")


def _v_conv_block_scaled(op) -> None:
    if len(op.operands) >= 5:
        bias, r = op.operand_types[4], op.results[0].type
        eb, er = _elt(bias), _elt(r)
        if _plain(eb) and _plain(er) and eb != er:
            raise VerifyError(f"expect bias and output to have same element type, got '{eb}' and '{er}'")


# ---- the op table ------------------------------------------------------------------
_NAN = Attr("nan_mode", ENUM, required=False)
_LOCAL_BOUND = Attr("local_bound", BOOL, required=False)

_AXIS = Attr("axis", I32)
_UNARY = ("input1",)
_BINARY = ("input1", "input2")
_CONV = ("input", "weight", "bias", "input_zp", "weight_zp")

_declare(("abs", "bitwise_not", "ceil", "clz", "cos", "exp", "floor", "log", "reciprocal", "rsqrt", "sin"),
         lambda: Spec(_UNARY, verify=_v_elementwise_unary))
_declare(("sigmoid", "tanh", "erf", "cast"), lambda: Spec(("input",), verify=_v_unary_of_input))
_declare(("logical_not",), lambda: Spec(_UNARY, verify=_v_logical))
_declare(("negate",), lambda: Spec(("input1", "input1_zp", "output_zp"), verify=_v_zp_unary))
_declare(("add", "sub", "intdiv", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_left_shift",
          "logical_right_shift", "pow"), lambda: Spec(_BINARY, verify=_v_elementwise_binary))
_declare(("maximum", "minimum"), lambda: Spec(_BINARY, attrs=(_NAN,), verify=_v_elementwise_binary))
_declare(("arithmetic_right_shift",),
         lambda: Spec(_BINARY, attrs=(Attr("round", BOOL),), verify=_v_elementwise_binary))
_declare(("logical_and", "logical_or", "logical_xor"), lambda: Spec(_BINARY, verify=_v_logical))
_declare(("equal", "greater", "greater_equal"), lambda: Spec(_BINARY, verify=_v_compare))
_declare(("mul",), lambda: Spec(("input1", "input2", "shift"), verify=_v_mul))
_declare(("select",), lambda: Spec(("input1", "input2", "input3"), verify=_v_select))
_declare(("table",), lambda: Spec(("input1", "table"), verify=_v_table))
_declare(("clamp",), lambda: Spec(("input",), attrs=(Attr("min_val", NUM), Attr("max_val", NUM), _NAN),
                                  verify=_v_clamp))
_declare(("reduce_all", "reduce_any", "reduce_product", "reduce_sum"),
         lambda: Spec(("input",), attrs=(_AXIS,), verify=_v_reduce))
_declare(("reduce_max", "reduce_min"), lambda: Spec(("input",), attrs=(_AXIS, _NAN), verify=_v_reduce))
_declare(("argmax",), lambda: Spec(("input",), attrs=(_AXIS, _NAN), verify=_v_argmax))
_declare(("concat",), lambda: Spec(("input1+",), attrs=(_AXIS,), verify=_v_concat))
_declare(("reshape",), lambda: Spec(("input1", "shape"), verify=_v_reshape))
_declare(("reshape_block_scaled",), lambda: Spec(("input", "new_value_shape"), results=("output*",), counts=(2, 3),
                                                 attrs=(Attr("block_size", ENUM),), verify=_v_none))
_declare(("transpose",), lambda: Spec(_UNARY, attrs=(Attr("perms", I32S),), verify=_v_transpose))
_declare(("pad",), lambda: Spec(("input1", "padding", "pad_const"), verify=_v_pad))
_declare(("slice",), lambda: Spec(("input1", "start", "size"), verify=_v_slice))
_declare(("tile",), lambda: Spec(("input1", "multiples"), verify=_v_tile))
_declare(("reverse",), lambda: Spec(_UNARY, attrs=(_AXIS,), verify=_v_reverse))
_declare(("gather",), lambda: Spec(("values", "indices"), verify=_v_gather))
_declare(("row_gather",), lambda: Spec(("values", "indices", "row_count"), verify=_v_gather))
_declare(("row_gather_block_scaled",), lambda: Spec(("values", "indices", "row_count"), results=("output*",),
                                                    counts=(3, 4), attrs=(Attr("block_size", ENUM),),
                                                    verify=_v_none))
_declare(("scatter",), lambda: Spec(("values_in", "indices", "input"), results=("values_out",), verify=_v_scatter))
_declare(("matmul", "matmul_t"), lambda: Spec(("a", "b", "a_zp", "b_zp"), verify=_v_matmul))
_declare(("matmul_t_block_scaled",), lambda: Spec(("a_data", "a_scale", "b_data", "b_scale"), results=("output_data",),
                                                  attrs=(Attr("block_size", ENUM),), verify=_v_matmul_block_scaled))
_declare(("conv2d", "conv3d", "depthwise_conv2d"),
         lambda: Spec(_CONV, attrs=(Attr("pad", I64S), Attr("stride", I64S), Attr("dilation", I64S),
                                    Attr("acc_type", TYPE), _LOCAL_BOUND), verify=_v_conv))
_declare(("conv2d_block_scaled",), lambda: Spec(("input_data", "input_scale", "weight_data", "weight_scale", "bias"),
                                                counts=(5, 9), attrs=(Attr("block_size", ENUM),),
                                                verify=_v_conv_block_scaled))
_declare(("transpose_conv2d",),
         lambda: Spec(_CONV, attrs=(Attr("out_pad", I64S), Attr("stride", I64S), Attr("acc_type", TYPE),
                                    _LOCAL_BOUND), verify=_v_transpose_conv))
_declare(("avg_pool2d",),
         lambda: Spec(("input", "input_zp", "output_zp"), attrs=(Attr("kernel", I64S), Attr("stride", I64S),
                                                                 Attr("pad", I64S), Attr("acc_type", TYPE)),
                      verify=_v_pool))
_declare(("max_pool2d",),
         lambda: Spec(("input",), attrs=(Attr("kernel", I64S), Attr("stride", I64S), Attr("pad", I64S), _NAN),
                      verify=_v_pool))
_declare(("avg_pool2d_adaptive",), lambda: Spec(("input", "input_zp", "output_zp", "kernel", "stride", "pad"),
                                                attrs=(Attr("acc_type", TYPE),), verify=_v_adaptive_pool))
_declare(("max_pool2d_adaptive",), lambda: Spec(("input", "kernel", "stride", "pad"), attrs=(_NAN,),
                                                verify=_v_adaptive_pool))
_declare(("fft2d",), lambda: Spec(("input_real", "input_imag"), results=("output_real", "output_imag"),
                                  attrs=(Attr("inverse", BOOL), _LOCAL_BOUND), verify=_v_fft))
_declare(("rfft2d",), lambda: Spec(("input_real",), results=("output_real", "output_imag"), attrs=(_LOCAL_BOUND,),
                                   verify=_v_fft))
_declare(("resize",), lambda: Spec(("input", "scale", "offset", "border"), attrs=(Attr("mode", ENUM),),
                                   verify=_v_resize))
_declare(("rescale",),
         lambda: Spec(("input", "multiplier", "shift", "input_zp", "output_zp"),
                      attrs=(Attr("scale32", BOOL), Attr("rounding_mode", ENUM), Attr("per_channel", BOOL),
                             Attr("input_unsigned", BOOL), Attr("output_unsigned", BOOL)), verify=_v_rescale))
_declare(("cast_to_block_scaled",), lambda: Spec(("input_data",), results=("output_data", "output_scale"),
                                                 attrs=(Attr("block_size", ENUM),), verify=_v_cast_block_scaled))
_declare(("cast_from_block_scaled",), lambda: Spec(("input_data", "input_scale"), results=("output_data",),
                                                   attrs=(Attr("block_size", ENUM),), verify=_v_cast_block_scaled))
_declare(("identity",), lambda: Spec(("input1+",), results=("output*",), verify=_v_identity))
_declare(("const",), lambda: Spec((), attrs=(Attr("values", DENSE),), verify=_v_const))
_declare(("const_shape",), lambda: Spec((), attrs=(Attr("values", DENSE),), verify=_v_const_shape))
_declare(("add_shape", "sub_shape", "mul_shape", "mod_shape", "div_ceil_shape", "div_floor_shape",
          "max_shape", "min_shape"), lambda: Spec(_BINARY, verify=_v_shape_binary))
_declare(("exp2_shape", "log2_ceil_shape", "log2_floor_shape"), lambda: Spec(("input",), verify=_v_shape_binary))
_declare(("concat_shape",), lambda: Spec(("input+",), verify=_v_concat_shape))
_declare(("slice_shape",), lambda: Spec(("input", "start", "size"), verify=_v_slice_shape))
_declare(("dim",), lambda: Spec(_UNARY, attrs=(_AXIS,), verify=_v_dim))
_declare(("assert_equal_shape",), lambda: Spec(_BINARY, results=(), attrs=(Attr("allow_broadcast", BOOL),),
                                               verify=_v_assert_shape, pure=False))
_declare(("custom",), lambda: Spec(("input_list*",), results=("output_list*",),
                                   attrs=(Attr("operator_name", STR), Attr("domain_name", STR),
                                          Attr("implementation_attrs", STR)), verify=_v_none, pure=False))
_declare(("apply_scale",), lambda: Spec(("value", "multiplier", "shift"), attrs=(Attr("rounding_mode", ENUM),),
                                        verify=_v_none))
# The variables: upstream writes them with a symbol (`tosa.variable @v = ...`, `tosa.variable_read @v : T`),
# which is not read here yet; tosa_simple reads their dictionary form.
_declare(("variable",), lambda: Spec((), results=(), verify=_v_none, pure=False, own_syntax=True))
_declare(("variable_read",), lambda: Spec((), results=("output1",), verify=_v_none, pure=False, own_syntax=True))
_declare(("variable_write",), lambda: Spec(("input1",), results=(), verify=_v_none, pure=False, own_syntax=True))

#: Renamed attributes: old name -> new name, per op (None: every op).
RENAMED = {"tosa.const": {"value": "values"}}


# ---- attribute normalisation ---------------------------------------------------------
def _enum_attr(attr_name: str, case: str) -> OpaqueAttr:
    mnemonic = ENUMS[attr_name][0] if attr_name in ENUMS else _ENUM_OF_CASE.get(case, attr_name)
    return OpaqueAttr(f"#tosa.{mnemonic}<{case}>")


def enum_case(attr) -> Optional[str]:
    """`IGNORE` from `#tosa.nan_mode<IGNORE>` (or a string attribute), else None."""
    if isinstance(attr, OpaqueAttr) and attr.text.startswith("#tosa."):
        return attr.body.strip() or None
    if isinstance(attr, StringAttr):
        return attr.value
    return None


def _normalize(kind: str, name: str, attr, keyword: bool):
    """An attribute as the op stores it, from what the source wrote."""
    if kind == I32 and isinstance(attr, IntegerAttr) and (keyword or attr.type == T.i64) \
            and attr.type != T.i1:
        return IntegerAttr(attr.value, T.i32) if keyword else attr
    if kind in (I64S, I32S) and isinstance(attr, ArrayAttr) and keyword:
        if all(isinstance(v, IntegerAttr) for v in attr.items):
            return DenseArrayAttr(T.i64 if kind == I64S else T.i32, tuple(v.value for v in attr.items))
    if kind == ENUM:
        if isinstance(attr, _BareEnum):
            return _enum_attr(name, attr.case)
        if isinstance(attr, StringAttr) and name in ENUMS and attr.value in ENUMS[name][1]:
            return _enum_attr(name, attr.value)
    return attr


class _BareEnum:
    """`nan_mode = IGNORE` in an attribute dictionary, before we know the key's op."""

    __slots__ = ("case",)

    def __init__(self, case: str):
        self.case = case


def _attr_kinds(op_name: str) -> dict:
    spec = SPECS.get(op_name)
    return {a.name: a.kind for a in spec.attrs} if spec else {}


# ---- grammar callbacks ---------------------------------------------------------------
@dialect.rule("tosa_paren_item")
def _tosa_paren_item(ctx, children):
    name, value = children
    return (name, value, False)


@dialect.rule("tosa_enum_item")
def _tosa_enum_item(ctx, children):
    name, case = children
    return (name, _BareEnum(case.value), True)


@dialect.rule("tosa_bare_enum")
def _tosa_bare_enum(ctx, children):
    return _BareEnum(children[0].value)


@dialect.rule("tosa_typed_enum")
def _tosa_typed_enum(ctx, children):
    tok, _type = children
    return OpaqueAttr(tok.value)


@dialect.rule("tosa_attr_entry")
def _tosa_attr_entry(ctx, children):
    tok, value = children
    name = string_value(ctx, tok) if tok.type == "STRING" else tok.value
    return (name, unit if value is None else value, tok)


@dialect.rule("tosa_attrs")
def _tosa_attrs(ctx, children):
    out = {}
    for entry in children:
        if entry is None:
            continue
        name, value, tok = entry
        if name in out:
            raise ctx.fail(f"duplicate key '{name}' in dictionary attribute", tok)
        out[name] = (value, tok)
    return out


@dialect.rule("tosa_operands")
def _tosa_operands(ctx, children):
    return list(children)


@dialect.rule("tosa_simple")
def _tosa_simple(ctx, children):
    name_tok, uses = children[0], children[1]
    ftype = children[-1]
    dict_entries = children[-2] or {}
    items = children[2:-2]
    name = name_tok.value
    operands = ctx.resolve_all(uses, ftype.inputs)
    kinds = _attr_kinds(name)
    renamed = RENAMED.get(name, {})
    attributes = {}
    for key_tok, value, is_enum in items:
        key = renamed.get(key_tok.value, key_tok.value)
        kind = kinds.get(key)
        if kind is None:
            raise ctx.fail(f"'{name}' has no attribute named '{key}'", key_tok)
        if is_enum != (kind == ENUM):
            form = f"{key}<...>" if kind == ENUM else f"{key}(...)"
            raise ctx.fail(f"expected '{form}' for attribute '{key}'", key_tok)
        if key in attributes:
            raise ctx.fail(f"attribute '{key}' given twice", key_tok)
        attributes[key] = _normalize(kind, key, value, keyword=True)
    for key, (value, tok) in dict_entries.items():
        key = renamed.get(key, key)
        if key in attributes:
            raise ctx.fail(f"attribute '{key}' given twice", tok)
        kind = kinds.get(key)
        if isinstance(value, _BareEnum):
            if kind not in (ENUM, None):
                raise ctx.fail("expected attribute value", tok)
            value = _enum_attr(key, value.case)
        elif kind is not None:
            value = _normalize(kind, key, value, keyword=False)
        attributes[key] = value
    return create(ctx, name, operands, list(ftype.results), attributes)


@dialect.rule("tosa_yield_types")
def _tosa_yield_types(ctx, children):
    return list(children[0] or [])


@dialect.rule("tosa_yield")
def _tosa_yield(ctx, children):
    uses, attrs, types = children
    operands = ctx.resolve_all(uses, types or [])
    return create(ctx, "tosa.yield", operands, [], attrs)


@dialect.rule("tosa_paren_types")
def _tosa_paren_types(ctx, children):
    return list(children[0] or [])


@dialect.rule("tosa_bind")
def _tosa_bind(ctx, children):
    return (children[0], children[1])


@dialect.rule("tosa_binds")
def _tosa_binds(ctx, children):
    return [c for c in children if c is not None]


@dialect.rule("tosa_cond_if")
def _tosa_cond_if(ctx, children):
    cond, binds, cond_type, input_types, results, then_r, else_r, attrs = children
    binds = binds or []
    input_types = input_types or []
    operands = [ctx.resolve(cond, cond_type)]
    operands += ctx.resolve_all([b[1] for b in binds], input_types)
    return create(ctx, "tosa.cond_if", operands, list(results), attrs, regions=[then_r, else_r])


@dialect.rule("tosa_while_head")
def _tosa_while_head(ctx, children):
    binds, ftype = children
    operands = ctx.resolve_all([b[1] for b in binds], ftype.inputs)
    ctx.set_entry_args([(b[0], t, None) for b, t in zip(binds, ftype.inputs)])
    return (operands, ftype)


@dialect.rule("tosa_while")
def _tosa_while(ctx, children):
    (operands, ftype), cond_r, body_r, _kw, attrs = children
    return create(ctx, "tosa.while_loop", operands, list(ftype.results), attrs, regions=[cond_r, body_r])


# ---- printing ------------------------------------------------------------------------
def _keyword_text(kind: str, attr) -> Optional[str]:
    """The text inside `name(...)` for an attribute of this kind, or None if it has another form."""
    if kind == I32 and isinstance(attr, IntegerAttr) and attr.type == T.i32:
        return str(attr.value)
    if kind in (I64S, I32S) and isinstance(attr, DenseArrayAttr) \
            and attr.element_type == (T.i64 if kind == I64S else T.i32):
        return "[" + ", ".join(str(v) for v in attr.values) + "]"
    if kind == TYPE and isinstance(attr, TypeAttr):
        return str(attr.type)
    if kind == BOOL and isinstance(attr, IntegerAttr) and attr.type == T.i1:
        return str(attr)
    if kind in (NUM, DENSE, STR):
        return str(attr)
    return None


def _print_simple(p, op) -> None:
    spec = SPECS[op.name]
    # One blank between the pieces: iree-opt writes two where an optional group is absent
    # (`tosa.const  values(`, `tosa.cast %a  :`), an artefact not copied.
    p.write(op.name)
    if op.operands:
        p.write(" ", p.values(op.operands))
    printed = set()
    for a in spec.attrs:
        attr = op.attr(a.name)
        if attr is None:
            continue
        if a.kind == ENUM:
            case = enum_case(attr)
            if case is None or not isinstance(attr, OpaqueAttr):
                continue
            printed.add(a.name)
            if a.name in ENUMS and ENUMS[a.name][2] == case:
                continue  # the default is not printed
            p.write(f" {a.name}<{case}>")
            continue
        text = _keyword_text(a.kind, attr)
        if text is None:
            continue
        if a.kind in (NUM, DENSE, STR):
            text = p.attr(attr)
        printed.add(a.name)
        p.write(f" {a.name}({text})")
    p.write(p.attr_dict(op.attributes, elide=printed))
    p.write(" : ", p.function_type(op.operand_types, op.result_types))


def _print_yield(p, op) -> None:
    p.write("tosa.yield")
    if op.operands:
        p.write(" ", p.values(op.operands))
    p.write(p.op_attr_dict(op))
    if op.operands:
        p.write(" : ", p.types(op.operand_types))


def _print_cond_if(p, op) -> None:
    p.write("tosa.cond_if ", p.value(op.operand("condition")))
    inputs = op.operands_named("input_list")
    then_r, else_r = op.regions
    if inputs:
        entry = then_r.blocks[0] if then_r.blocks else None
        names = [p.value(entry.arguments[i]) if entry is not None and i < len(entry.arguments)
                 else f"%arg{i}" for i in range(len(inputs))]
        p.write(" (", ", ".join(f"{n} = {p.value(v)}" for n, v in zip(names, inputs)), ")")
    p.write(" : ", p.type(op.operand("condition").type))
    if inputs:
        p.write(" (", p.types([v.type for v in inputs]), ")")
    p.write(" -> ", p.result_types(op.result_types), " ")
    p.region(then_r, print_entry_args=True)
    p.write(" else ")
    p.region(else_r, print_entry_args=True)
    p.write(p.op_attr_dict(op))


def _print_while(p, op) -> None:
    cond_r, body_r = op.regions
    entry = cond_r.blocks[0] if cond_r.blocks else None
    names = [p.value(entry.arguments[i]) if entry is not None and i < len(entry.arguments) else f"%arg{i}"
             for i in range(len(op.operands))]
    p.write("tosa.while_loop (", ", ".join(f"{n} = {p.value(v)}" for n, v in zip(names, op.operands)), ")")
    p.write(" : ", p.function_type(op.operand_types, op.result_types), " ")
    p.region(cond_r, print_entry_args=False)
    p.write(" do ")
    p.region(body_r, print_entry_args=True)
    p.write(p.attr_dict(op.attributes, keyword="attributes"))


# ---- verification entry points -----------------------------------------------------------
def _check_attr_kind(op, a: Attr) -> None:
    attr = op.attributes.get(a.name)
    if attr is None:
        if a.required and not (a.kind == ENUM and a.name in ENUMS and ENUMS[a.name][2] is not None):
            if a.name == "values" and op.name == "tosa.const" and "value" in op.attributes:
                return
            raise VerifyError(f"requires attribute '{a.name}'")
        return
    ok = {
        I32: lambda x: isinstance(x, IntegerAttr) and x.type == T.i32,
        I64S: lambda x: isinstance(x, DenseArrayAttr) and x.element_type == T.i64,
        I32S: lambda x: isinstance(x, DenseArrayAttr) and x.element_type == T.i32,
        TYPE: lambda x: isinstance(x, TypeAttr),
        BOOL: lambda x: isinstance(x, IntegerAttr) and x.type == T.i1,
        NUM: lambda x: isinstance(x, (IntegerAttr, FloatAttr)),
        DENSE: lambda x: hasattr(x, "type"),
        STR: lambda x: isinstance(x, StringAttr),
        ENUM: lambda x: enum_case(x) is not None and isinstance(x, OpaqueAttr),
    }[a.kind](attr)
    if not ok:
        what = {I32: "32-bit signless integer attribute", I64S: "i64 dense array attribute",
                I32S: "i32 dense array attribute", TYPE: "any type attribute", BOOL: "bool attribute",
                NUM: "integer or float attribute", DENSE: "elements attribute", STR: "string attribute",
                ENUM: f"valid {a.name} enum"}[a.kind]
        raise VerifyError(f"attribute '{a.name}' failed to satisfy constraint: {what}")
    if a.kind == ENUM and a.name in ENUMS and enum_case(attr) not in ENUMS[a.name][1]:
        raise VerifyError(f"attribute '{a.name}' failed to satisfy constraint: valid {a.name} enum")


def _verify_simple(op) -> None:
    spec = SPECS[op.name]
    lo, hi = spec.counts
    n = len(op.operands)
    if n < lo or (hi is not None and n > hi):
        want = f"{lo}" if lo == hi else f"at least {lo}"
        raise VerifyError(f"expected {want} operands, but found {n}")
    want = spec.result_count
    if want >= 0 and len(op.results) != want:
        raise VerifyError(f"requires {want} result{'s' if want != 1 else ''}, but found {len(op.results)}")
    for a in spec.attrs:
        _check_attr_kind(op, a)
    if spec.verify is not None:
        spec.verify(op)


def _verify_yield(op) -> None:
    parent = op.parent_op
    if parent is None or parent.name not in ("tosa.cond_if", "tosa.while_loop"):
        return
    if parent.name == "tosa.cond_if":
        want = parent.result_types
        if list(op.operand_types) != list(want) and len(op.operands) != len(want):
            raise VerifyError(f"require same number of values in each region's yield ({len(op.operands)}) "
                              f"and the op's results ({len(want)})")
        return


def _verify_cond_if(op) -> None:
    c = op.operand("condition").type
    if _elt(c) != T.i1 or (_shape(c) is not None and len(_shape(c)) != 0 and
                           any(d != 1 and d is not None for d in _shape(c))):
        if _elt(c) != T.i1:
            raise VerifyError(f"operand #0 must be tosa-conformant scalar tensor of 1-bit signless integer "
                              f"values, but got '{c}'")
    if len(op.regions) != 2:
        raise VerifyError("requires two regions")
    for region in op.regions:
        for block in region.blocks[:1]:
            term = block.ops[-1] if block.ops else None
            if term is not None and term.name == "tosa.yield":
                if len(term.operands) != len(op.results):
                    raise VerifyError(f"require same number of values in each region's yield "
                                      f"({len(term.operands)}) and the op's results ({len(op.results)})")


def _verify_while(op) -> None:
    if len(op.regions) != 2:
        raise VerifyError("requires two regions")
    if len(op.operands) != len(op.results):
        raise VerifyError(f"require same number of inputs ({len(op.operands)}) and outputs ({len(op.results)})")
    for i, (a, r) in enumerate(zip(op.operand_types, op.result_types)):
        if _plain(_elt(a)) and _plain(_elt(r)) and _elt(a) != _elt(r):
            raise VerifyError(f"expected input and output types to match at index {i}")
    cond, body = op.regions
    if cond.blocks and cond.blocks[0].ops:
        term = cond.blocks[0].ops[-1]
        if term.name == "tosa.yield":
            if len(term.operands) != 1:
                raise VerifyError(f"require 'cond' region to yield a single value, got {len(term.operands)}")
            t = term.operands[0].type
            if _elt(t) != T.i1:
                raise VerifyError(f"expected condition tensor to be of element type i1, got '{t}'")
    if body.blocks and body.blocks[-1].ops:
        term = body.blocks[-1].ops[-1]
        if term.name == "tosa.yield" and len(term.operands) != len(op.results):
            raise VerifyError(f"require same number of values in 'body_graph' results "
                              f"({len(term.operands)}) and 'output_list' ({len(op.results)})")


# ---- declared assembly formats -------------------------------------------------------------
class KeywordAttr:
    """An inherent attribute as TOSA's keyword item writes it (`axis(1)`, `pad([0, 1])`,
    `acc_type(f32)`, `round(true)`): the value is read as an attribute and given the kind the op
    declares (an integer as i32, a list as a dense array), and written there only when it has
    that kind (`accepts`); one of another kind stays in the attribute dictionary."""

    grammar = "attribute"

    def __init__(self, kind: str):
        self.kind = kind

    def parse(self, ctx, child):
        return _normalize(self.kind, "", child, keyword=True)

    def accepts(self, attr) -> bool:
        return _keyword_text(self.kind, attr) is not None

    def print(self, p, attr) -> str:
        return p.attr(attr) if self.kind in (NUM, DENSE, STR) else _keyword_text(self.kind, attr)


def _format_of(spec: Spec) -> str:
    """An op's format: its operands, a keyword item per inherent attribute (`pad([...])`), the
    attribute dictionary and the function type. TOSA's ODS at the corpus's commit gives these ops
    `operands attr-dict : functional-type(operands, results)`, the attributes in the dictionary
    (as the corpus writes them); later MLIR (iree-opt 3.13) writes them as keyword items in the
    op's order (`axis(1)`). Each item is optional here, so that both forms read; the verifier
    requires the required ones."""
    items = "".join(f" (`{a.name}` `(` ${a.name}^ `)`)?" for a in spec.attrs)
    return " `,` ".join(f"${n.rstrip('*+')}" for n in spec.operands) + items + \
        " attr-dict `:` functional-type(operands, results)"


def _summary_and_traits(name: str) -> dict:
    spec = SPECS[name]
    return {"summary": f"TOSA {name[5:]}.", "traits": (PURE,) if spec.pure else (),
            "properties": tuple(a.name for a in spec.attrs)}


#: declared below with a format of their own (`values(...)`)
_CONSTANTS = ("tosa.const", "tosa.const_shape")


def _families() -> dict:
    """The ops with a declared format, grouped by what their format is made of: family (the
    first op's short name) -> op names."""
    families: dict = {}
    for name, spec in SPECS.items():
        if not spec.custom_syntax and name not in _CONSTANTS:
            key = (spec.operands, spec.results, tuple((a.name, a.kind) for a in spec.attrs))
            families.setdefault(key, []).append(name)
    return {names[0][5:]: names for names in families.values()}


#: family -> the op names that share its declared format
FAMILIES = _families()
for _family, _names in FAMILIES.items():
    _spec = SPECS[_names[0]]
    declare_family(dialect, _family, _names, _format_of(_spec),
                   operands=tuple(n.replace("+", "*") for n in _spec.operands), results=_spec.results,
                   attributes={a.name: KeywordAttr(a.kind) for a in _spec.attrs}, strict_properties=False,
                   per_op=_summary_and_traits, verify=_verify_simple)


# `tosa.const values(dense<...> : tensor<...>) {extra} : () -> tensor<...>`: the one keyword item of the
# constants (or the value in the dictionary, `{values = dense<...>}`); `value` is read as `values`.
def _parse_values(ctx, name, item):
    tok, value, is_enum = item
    key = RENAMED.get(name, {}).get(tok.value, tok.value)
    if key != "values":
        raise ctx.fail(f"'{name}' has no attribute named '{key}'", tok)
    if is_enum:
        raise ctx.fail("expected 'values(...)' for attribute 'values'", tok)
    return {"values": value}


def _print_values(p, op):
    key = "values" if "values" in op.attributes else "value"  # the old name (generic form), printed as new
    attr = op.attr(key)
    return ("", ()) if attr is None else (f" values({p.attr(attr)})", (key,))


def _build_constant(ctx, name, operands, result_types, attributes):
    for old, new in RENAMED.get(name, {}).items():
        if old in attributes:
            if new in attributes:
                raise ctx.fail(f"attribute '{new}' given twice")
            attributes[new] = attributes.pop(old)
    return create(ctx, name, operands, result_types, attributes)


def _constant_op(name: str) -> dict:
    return {**_summary_and_traits(name), "properties": ("values", "value") if name == "tosa.const" else ("values",)}


declare_family(dialect, "constant", list(_CONSTANTS),
               "custom<Values> attr-dict `:` functional-type(operands, results)", results=("output",),
               custom={"Values": Custom("[tosa_item]", _parse_values, _print_values)}, per_op=_constant_op,
               strict_properties=False, build=_build_constant, verify=_verify_simple)
for _name, _spec in SPECS.items():
    if not _spec.custom_syntax:
        continue
    # (an op with `counts` has names for its leading operands only: those read by name from the start)
    _signature = OpSignature.of(_spec.operands, _spec.results, tuple(a.name for a in _spec.attrs))
    dialect.op(_name, **_summary_and_traits(_name), verify=_verify_simple, print=_print_simple, names=_signature)
dialect.op("tosa.yield", "Returns values from a tosa.cond_if / tosa.while_loop region.",
           traits=(PURE, TERMINATOR, RETURN_LIKE), verify=_verify_yield, print=_print_yield,
           names=OpSignature.of(("inputs*",)))
# (names as TOSA's ODS gives them: Tosa_IfOp, Tosa_WhileOp)
dialect.op("tosa.cond_if", "Runs the then or the else region depending on a boolean tensor.",
           operands=(1, None), verify=_verify_cond_if, print=_print_cond_if,
           names=OpSignature.of(("condition", "input_list*"), ("output_list*",)))
dialect.op("tosa.while_loop", "Runs the body region while the cond region yields true.",
           verify=_verify_while, print=_print_while, names=OpSignature.of(("input_list*",), ("output_list*",)))
