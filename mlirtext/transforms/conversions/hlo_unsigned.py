"""hlo ops on unsigned integers (`ui8` ... `ui64`) -> signless types, as IREE's
`stablehlo-legalize-to-linalg` type converter does.

arith, linalg bodies, memref and llvm only know signless integers, and TOSA has no
unsigned ops, so at the hlo step every unsigned type becomes the signless type of its
width and the bits stay the same (`dense<4294967295> : tensor<ui32>` is
`dense<-1> : tensor<i32>`). Where the meaning depends on the signedness, the op goes
straight to a `linalg.generic` whose body picks the unsigned arith op the source type
asked for (`divui`, `remui`, `cmpi ult`, `maxui`, `extui`, `uitofp`, `fptoui`, `shrui`,
...); ops that only move bits (constants, iota, reshapes, slices, ...) are re-created on
the signless types and lowered by the other patterns.

While the conversion is half done, values cross between the two type systems through
`builtin.unrealized_conversion_cast` (signless -> unsigned after a converted op,
unsigned -> signless before one); a cast of a cast back to the first type folds away,
so none is left once every op converted. The function's signature becomes signless
and its source signature stays as the `mlirtext.abi` reflection: callers pass and get
back unsigned arrays, reinterpreted bit for bit (`mlirtext/interpreter/abi.py`).
"""
from __future__ import annotations

from typing import Optional

from ...ir import types as T
from ...ir.arrays import array_to_attr, attr_to_array, dtype_of, reinterpret_bits
from ...ir.attributes import IntegerAttr, TypeAttr
from ...ir.core import Operation
from ..rewriter import RewritePattern
from .build import FASTMATH_NONE, Body, all_static, elementwise_generic, hlo_names, short_name

CAST = "builtin.unrealized_conversion_cast"
ABI_ATTR = "mlirtext.abi"
_FM = {"fastmath": FASTMATH_NONE}


# ---- the type conversion ----------------------------------------------------------------------
def is_unsigned(t: T.Type) -> bool:
    """An unsigned integer, or a shaped / function type that holds one."""
    if isinstance(t, T.FunctionType):
        return any(map(is_unsigned, (*t.inputs, *t.results)))
    if isinstance(t, T.TupleType):
        return any(map(is_unsigned, t.types))
    e = T.element_type(t)
    return isinstance(e, T.IntegerType) and e.is_unsigned


def signless(t: T.Type) -> T.Type:
    """`t` with every unsigned integer made signless of the same width."""
    if isinstance(t, T.IntegerType):
        return T.IntegerType(t.width) if t.is_unsigned else t
    if isinstance(t, T.RankedTensorType):
        return T.RankedTensorType(t.shape, signless(t.element), t.encoding)
    if isinstance(t, T.UnrankedTensorType):
        return T.UnrankedTensorType(signless(t.element))
    if isinstance(t, T.FunctionType):
        return T.FunctionType(tuple(map(signless, t.inputs)), tuple(map(signless, t.results)))
    if isinstance(t, T.TupleType):
        return T.TupleType(tuple(map(signless, t.types)))
    return t


def _cast_input(op) -> Optional[object]:
    """The one value that `op` casts when it is an unrealized_conversion_cast of a single value
    (its `inputs` group holds one), else None."""
    if isinstance(op, Operation) and op.name == CAST and len(op.operands) == 1:
        (source,) = op.operands
        return source
    return None


def to_signless(rw, before: Operation, value):
    """`value` on signless types: the source of the cast that made it unsigned, else a new cast."""
    if not is_unsigned(value.type):
        return value
    source = _cast_input(getattr(value, "op", None))
    if source is not None and source.type == signless(value.type):
        return source
    return rw.create(before, CAST, [value], [signless(value.type)]).result


def replace_with_signless(rw, op: Operation, values) -> None:
    """Replace `op` by signless `values`, cast back to each result's unsigned type for the
    users not converted yet (the casts fold away as they convert)."""
    out = []
    for r, v in zip(op.results, values, strict=True):
        out.append(rw.create(op, CAST, [v], [r.type]).result if v.type != r.type else v)
    rw.replace_op(op, out)


class SignlessSignature(RewritePattern):
    """A function on unsigned types takes and returns their signless forms; its source
    signature stays as `mlirtext.abi` (set here, the first step that changes it; every
    later step keeps it)."""
    ops = ("func.func",)

    def match_and_rewrite(self, fn, rw) -> bool:
        from ...dialects.func import function_type
        ftype = function_type(fn)
        if not is_unsigned(ftype) or not fn.regions or not fn.regions[0].blocks:
            return False
        fn.attributes.setdefault(ABI_ATTR, TypeAttr(ftype))
        entry = fn.regions[0].blocks[0]
        first = entry.ops[0] if entry.ops else None
        for arg in entry.arguments:
            if not is_unsigned(arg.type) or first is None:
                continue
            original = arg.type
            uses = list(arg.uses)
            arg.type = signless(original)
            cast = rw.create(first, CAST, [arg], [original]).result
            for use in uses:
                use.op.set_operand(use.index, cast)
        for ret in [op for op in fn.walk() if op.name == "func.return" and _function_of(op) is fn]:
            ret.set_operands([to_signless(rw, ret, v) for v in ret.operands])
        fn.attributes["function_type"] = TypeAttr(signless(ftype))
        rw.changed(fn)
        return True


def _function_of(op: Operation) -> Optional[Operation]:
    parent = op.parent_op
    while parent is not None and parent.name != "func.func":
        parent = parent.parent_op
    return parent


def retype_signless(op: Operation, rw):
    """Make `op`'s operands and results signless in place, keeping its regions (their ops on
    0-d unsigned tensors become scalar bodies through `unsigned_scalar_op`); users not converted
    yet read the results through casts back to the unsigned types. Returns a function that
    undoes it, for when the op then does not lower: no other pattern may see the signless op
    with its unsigned region (a TOSA reduce_max would read a `maximum` body as signed)."""
    originals = list(op.operands)
    for i, v in enumerate(originals):
        new = to_signless(rw, op, v)
        if new is not v:
            op.set_operand(i, new)
            if isinstance(getattr(v, "op", None), Operation):
                rw.changed(v.op)  # a cast this op read may have no other user now
    block = op.parent
    casts = []
    for r in op.results:
        if not is_unsigned(r.type):
            continue
        original, uses = r.type, list(r.uses)
        r.type = signless(original)
        cast = Operation(CAST, [r], [original], span=op.span, location=op.location)
        block.insert_after(op, cast)
        casts.append((r, original, cast))
        for use in uses:
            use.op.set_operand(use.index, cast.results[0])

    def undo() -> None:
        for i, v in enumerate(originals):
            op.set_operand(i, v)
        for r, original, cast in casts:
            r.type = original
            cast.results[0].replace_all_uses_with(r)
            cast.erase()

    return undo


class SignlessCall(RewritePattern):
    """A call of a function on unsigned types passes and gets back their signless forms
    (`SignlessSignature` converts the callee)."""
    ops = ("func.call",)

    def match_and_rewrite(self, op, rw) -> bool:
        if not any(map(is_unsigned, (*(v.type for v in op.operands), *op.result_types))):
            return False
        operands = [to_signless(rw, op, v) for v in op.operands]
        new = rw.create(op, "func.call", operands, [signless(t) for t in op.result_types], dict(op.attributes))
        replace_with_signless(rw, op, new.results)
        return True


class SignlessCheck(RewritePattern):
    """A `check.*` op on unsigned tensors checks their signless forms (an expected constant's
    bits reinterpreted as well), so a lowered test still checks what it computed."""
    ops = tuple(f"check.{name}" for name in ("expect_eq", "expect_eq_const", "expect_true", "expect_false",
                                              "expect_all_true"))

    def match_and_rewrite(self, op, rw) -> bool:
        from ...ir.dense import DenseElementsAttr
        if not any(is_unsigned(v.type) for v in op.operands):
            return False
        attrs = dict(op.attributes)
        for key, attr in op.attributes.items():
            if isinstance(attr, DenseElementsAttr) and is_unsigned(attr.type):
                value = _signless_constant(attr, attr.type)
                if value is None:
                    return False
                attrs[key] = value
        operands = [to_signless(rw, op, v) for v in op.operands]
        rw.create(op, op.name, operands, [], attrs)
        rw.erase_op(op)
        return True


class FoldCasts(RewritePattern):
    """cast(cast(x : A -> B) : B -> A) is x; a cast nothing uses goes."""
    ops = (CAST,)

    def match_and_rewrite(self, op, rw) -> bool:
        if not any(r.uses for r in op.results):
            rw.erase_op(op)
            return True
        source = _cast_input(op)
        if source is None or len(op.results) != 1:
            return False
        first = _cast_input(getattr(source, "op", None))
        if first is not None and first.type == op.results[0].type:
            rw.replace_op(op, [first])
            return True
        back = [u.op for u in op.results[0].uses if _cast_input(u.op) is not None
                and u.op.results[0].type == source.type]  # the same pair, seen from here
        for user in back:
            rw.replace_op(user, [source])
        return bool(back)


# ---- ops that only move bits: the same op on signless types ------------------------------------
_BIT_MOVES = ("constant", "iota", "reshape", "transpose", "broadcast_in_dim", "broadcast", "slice",
              "concatenate", "reverse", "bitcast_convert", "select", "get_tuple_element", "tuple",
              "optimization_barrier")


class SignlessBitMove(RewritePattern):
    """An op whose result bits do not depend on the signedness (data movement, select,
    constants with their bits reinterpreted), re-created on signless types."""
    ops = hlo_names(*_BIT_MOVES)

    def match_and_rewrite(self, op, rw) -> bool:
        types = [*(v.type for v in op.operands), *op.result_types]
        if op.regions or not any(map(is_unsigned, types)):
            return False
        attrs = dict(op.attributes)
        if short_name(op) == "constant":
            value = _signless_constant(attrs.get("value"), op.results[0].type)
            if value is None:
                return False
            attrs["value"] = value
        operands = [to_signless(rw, op, v) for v in op.operands]
        new = rw.create(op, op.name, operands, [signless(t) for t in op.result_types], attrs)
        replace_with_signless(rw, op, new.results)
        return True


def _signless_constant(attr, t: T.Type):
    """The attribute with the bits of `attr` (of unsigned type `t`) as signless integers."""
    try:
        array = attr_to_array(attr, t)
    except (ValueError, TypeError):
        return None
    target = signless(t)
    return array_to_attr(reinterpret_bits(array, T.element_type(target), dtype_of(target)), target)


# ---- ops whose meaning depends on the signedness: linalg bodies on unsigned arith --------------
def _cmpi(b: Body, pred: int, x, y):
    return b.op("arith.cmpi", [x, y], T.i1, {"predicate": IntegerAttr(pred, T.i64)})


#: comparison direction -> unsigned arith.cmpi predicate (eq, ne, ult, ule, ugt, uge)
_UNSIGNED_PREDICATES = {"EQ": 0, "NE": 1, "LT": 6, "LE": 7, "GT": 8, "GE": 9}
_SAME_BITS = {"add": "arith.addi", "subtract": "arith.subi", "multiply": "arith.muli", "and": "arith.andi",
              "or": "arith.ori", "xor": "arith.xori", "maximum": "arith.maxui", "minimum": "arith.minui"}


def _divide(b: Body, x, y, t):
    """x / 0 is all ones (XLA's answer; the spec leaves it undefined), else arith.divui."""
    zero = _cmpi(b, 0, y, b.const(0, t))
    safe = b.op("arith.select", [zero, b.const(1, t), y], t)
    return b.op("arith.select", [zero, b.const(-1, t), b.op("arith.divui", [x, safe], t)], t)


def _remainder(b: Body, x, y, t):
    """x % 0 is x (XLA's answer), else arith.remui."""
    zero = _cmpi(b, 0, y, b.const(0, t))
    safe = b.op("arith.select", [zero, b.const(1, t), y], t)
    return b.op("arith.select", [zero, x, b.op("arith.remui", [x, safe], t)], t)


def guarded_shift(name: str):
    """Shifts by the width or more (the amount read as unsigned) give 0, or the sign for an
    arithmetic shift right: arith's shifts are poison there."""
    def build(b: Body, x, y, t):
        width = b.const(t.width, t)
        big = _cmpi(b, 9, y, width)  # uge
        safe = b.op("arith.select", [big, b.const(0, t), y], t)
        shifted = b.op(name, [x, safe], t)
        if name == "arith.shrsi":
            fill = b.op("arith.shrsi", [x, b.const(t.width - 1, t)], t)
        else:
            fill = b.const(0, t)
        return b.op("arith.select", [big, fill, shifted], t)
    return build


def multiply_high(b, x, y, t: T.IntegerType, unsigned: bool):
    """The high half of the full product of two `t` integers (chlo.mulhi): the product at
    twice the width shifted down; at 64 bits (nothing wider to compute in) from 32-bit halves,
    as MLIR's wide-integer emulation does, the signed result corrected from the unsigned one."""
    if t.width < 64:
        wide = T.IntegerType(2 * t.width)
        ext = "arith.extui" if unsigned else "arith.extsi"
        product = b.op("arith.muli", [b.op(ext, [x], wide), b.op(ext, [y], wide)], wide)
        return b.op("arith.trunci", [b.op("arith.shrui", [product, b.const(t.width, wide)], wide)], t)
    mask, half = b.const(0xFFFFFFFF, t), b.const(32, t)
    lo = lambda v: b.op("arith.andi", [v, mask], t)
    hi = lambda v: b.op("arith.shrui", [v, half], t)
    mul = lambda u, v: b.op("arith.muli", [u, v], t)
    add = lambda u, v: b.op("arith.addi", [u, v], t)
    xl, xh, yl, yh = lo(x), hi(x), lo(y), hi(y)
    ll, lh, hl, hh = mul(xl, yl), mul(xl, yh), mul(xh, yl), mul(xh, yh)
    cross = add(add(hi(ll), lo(lh)), lo(hl))
    high = add(add(add(hh, hi(lh)), hi(hl)), hi(cross))
    if unsigned:
        return high
    zero = b.const(0, t)
    for a, c in ((x, y), (y, x)):  # x < 0 adds 2^64 * y to the unsigned product, and so on
        negative = _cmpi(b, 2, a, zero)
        high = b.op("arith.subi", [high, b.op("arith.select", [negative, c, zero], t)], t)
    return high


def integer_power(b, x, y, t: T.IntegerType, unsigned: bool):
    """x ** y by squaring over the exponent's bits (wrapping at the width); a negative signed
    exponent gives 0, but 1 for x = 1 and +-1 for x = -1 (the spec's reference)."""
    from .hlo_generic import for_nest
    from .hlo_scalar import Scalar

    def step(c, _, carried):
        result, base, exp = carried
        odd = _cmpi(c, 1, c.op("arith.andi", [exp, c.const(1, t)], t), c.const(0, t))
        result = c.op("arith.select", [odd, c.op("arith.muli", [result, base], t), result], t)
        return [result, c.op("arith.muli", [base, base], t), c.op("arith.shrui", [exp, c.const(1, t)], t)]

    outer = Scalar(b.block)
    power = for_nest(outer, [t.width], [b.const(1, t), x, y], step)[0]
    if unsigned:
        return power
    one, minus_one, zero = b.const(1, t), b.const(-1, t), b.const(0, t)
    odd = _cmpi(b, 1, b.op("arith.andi", [y, one], t), zero)
    at_minus_one = b.op("arith.select", [odd, minus_one, one], t)
    small = b.op("arith.select", [_cmpi(b, 0, x, one), one,
                                  b.op("arith.select", [_cmpi(b, 0, x, minus_one), at_minus_one, zero], t)], t)
    return b.op("arith.select", [_cmpi(b, 2, y, zero), small, power], t)


_BINARY = {"divide": _divide, "remainder": _remainder, "shift_left": guarded_shift("arith.shli"),
           "shift_right_logical": guarded_shift("arith.shrui"), "shift_right_arithmetic": guarded_shift("arith.shrsi"),
           "mulhi": lambda b, x, y, t: multiply_high(b, x, y, t, True),
           "power": lambda b, x, y, t: integer_power(b, x, y, t, True)}


def convert_scalar(b: Body, x, src: T.Type, dst: T.Type):
    """StableHLO's convert where `src` or `dst` is unsigned (`x` and the result on their signless
    forms): widening zero-extends an unsigned source, floats go through uitofp / fptoui."""
    xs, ds = signless(src), signless(dst)
    src_unsigned = isinstance(src, T.IntegerType) and src.is_unsigned
    if T.is_float(src):
        if ds == T.i1:
            return b.op("arith.cmpf", [x, b.const(0.0, src)], T.i1, {"predicate": IntegerAttr(13, T.i64), **_FM})
        return b.op("arith.fptoui" if dst.is_unsigned else "arith.fptosi", [x], ds)
    if T.is_float(dst):
        return b.op("arith.uitofp" if src_unsigned or xs == T.i1 else "arith.sitofp", [x], dst)
    if not isinstance(xs, T.IntegerType) or not isinstance(ds, T.IntegerType):
        return None
    if ds == T.i1:
        return _cmpi(b, 1, x, b.const(0, xs))
    if xs.width == ds.width:
        return x
    if xs.width > ds.width:
        return b.op("arith.trunci", [x], ds)
    return b.op("arith.extui" if src_unsigned or xs == T.i1 else "arith.extsi", [x], ds)


def unsigned_scalar(b: Body, kind: str, op: Operation, args) -> Optional[object]:
    """The scalar form of hlo op `kind` on unsigned operands (given as signless values); None
    when there is none here."""
    from ...dialects.hlo_attrs import enum_word
    src = T.element_type(op.operands[0].type)
    t = signless(src)
    if kind == "convert":
        return convert_scalar(b, args[0], src, T.element_type(op.results[0].type))
    if kind == "compare":
        direction = enum_word(op.attr("comparison_direction"))
        pred = _UNSIGNED_PREDICATES.get(direction)
        return None if pred is None else _cmpi(b, pred, *args)
    if not (isinstance(src, T.IntegerType) and src.is_unsigned):
        return None
    if kind in _SAME_BITS and len(args) == 2:
        return b.op(_SAME_BITS[kind], args, t)
    if kind in _BINARY and len(args) == 2:
        return _BINARY[kind](b, *args, t)
    if kind == "negate":
        return b.op("arith.subi", [b.const(0, t), args[0]], t)
    if kind == "not":
        return b.op("arith.xori", [args[0], b.const(-1, t)], t)
    if kind == "abs":
        return args[0]
    if kind == "sign":
        return b.op("arith.extui", [_cmpi(b, 1, args[0], b.const(0, t))], t) if t.width > 1 else args[0]
    if kind == "popcnt":
        return b.op("math.ctpop", args, t)
    if kind == "count_leading_zeros":
        return b.op("math.ctlz", args, t)
    if kind == "clamp":
        lo, x, hi = args
        return b.op("arith.minui", [b.op("arith.maxui", [x, lo], t), hi], t)
    return None


def unsigned_scalar_op(b, op: Operation, args):
    """The scalar form of an hlo op on 0-d unsigned tensors (a region's body), on the signless
    values `args`; None when there is none here."""
    kind = short_name(op)
    rt = op.results[0].type if len(op.results) == 1 else None
    if rt is None or getattr(rt, "rank", None) != 0:
        return None
    if kind == "constant":
        from ...dialects.common import splat_value
        value = _signless_constant(op.attr("value"), rt)
        v = None if value is None else splat_value(value)
        return None if v is None else b.const(v, signless(rt.element))
    if kind in ("reshape", "broadcast_in_dim", "bitcast_convert") and signless(op.operand("operand").type) == signless(rt):
        return args[0]
    if kind == "select":
        return b.op("arith.select", args, args[1].type)
    return unsigned_scalar(b, kind, op, args)


_ELEMENTWISE = ("convert", "compare", *_SAME_BITS, *_BINARY, "negate", "not", "abs", "sign", "popcnt",
                "count_leading_zeros", "clamp")


class UnsignedElementwise(RewritePattern):
    """An elementwise op on unsigned integers (or converting to / from them): a
    `linalg.generic` on the signless tensors whose body uses the unsigned arith ops."""
    ops = hlo_names(*_ELEMENTWISE) + ("chlo.mulhi",)

    def match_and_rewrite(self, op, rw) -> bool:
        types = [*(v.type for v in op.operands), *op.result_types]
        if len(op.results) != 1 or not any(map(is_unsigned, types)) or not all_static(*types):
            return False
        t = signless(op.results[0].type)
        if any(v.type.rank not in (0, t.rank) or v.type.rank == t.rank and v.type.shape != t.shape
               for v in op.operands):
            return False
        kind = short_name(op)
        from ...ir.core import Block
        probe = Body(Block([signless(T.element_type(v.type)) for v in op.operands]))
        if unsigned_scalar(probe, kind, op, probe.block.arguments) is None:
            return False
        operands = [to_signless(rw, op, v) for v in op.operands]
        generic = elementwise_generic(rw, op, operands, t, lambda b, args: unsigned_scalar(b, kind, op, args))
        replace_with_signless(rw, op, generic.results)
        return True


PATTERNS = [SignlessSignature(), SignlessCall(), SignlessCheck(), FoldCasts(), SignlessBitMove(), UnsignedElementwise()]
