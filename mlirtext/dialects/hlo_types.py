"""The types HLO op operands and results may have: the `ins`/`outs` type constraints of
StableHLO's and MHLO's op definitions, checked before an op's own rules as MLIR does.

A constraint is a kind of container (ranked tensor, 0-D tensor, statically shaped
1-D tensor, token, tuple, buffer, ...) of element classes (bool, 2/4/8/16/32/64-bit
integer, 4/6/8/16/32/64-bit float, per-tensor or per-axis quantized integer, ...).
The first operand, then the first result, that fails gets MLIR's message:
`operand #1 must be ranked tensor of ... values, but got 'tensor<2xi32>'` (with
`variadic of` for an operand of a variadic group).

StableHLO separates per-tensor from per-axis quantization (most ops take only the
first); MHLO accepts both wherever it accepts a quantized tensor.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional

from ..ir import types as T
from ..ir.core import Operation
from .base import VerifyError
from .quant_types import uniform

# ---- element classes -------------------------------------------------------------------------
_HLO_FLOATS = frozenset({"f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FN", "f8E4M3FNUZ",
                         "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "f16", "f32", "f64", "bf16"})
_INT_WIDTHS = frozenset({2, 4, 8, 16, 32, 64})
_QUANT_WIDTHS = frozenset({2, 4, 8, 16, 32})


@dataclass(frozen=True)
class Elements:
    summary: str
    test: Callable[[T.Type], bool]


def _quantized(per_axis: bool) -> Callable[[T.Type], bool]:
    """A valid StableHLO uniform quantized integer: signless (`i8`) or unsigned (`u8`) storage,
    zero points within the storage range."""
    def test(e) -> bool:
        q = uniform(e)
        return (q is not None and q.per_axis == per_axis and q.signedness in ("", "u") and q.width in _QUANT_WIDTHS
                and all(q.lo <= z <= q.hi for z in q.zero_points))
    return test


def _int(signedness: str) -> Callable[[T.Type], bool]:
    return lambda e: isinstance(e, T.IntegerType) and e.signedness == signedness and e.width in _INT_WIDTHS


PRED = Elements("bool", lambda e: e == T.i1)
SINT = Elements("2/4/8/16/32/64-bit signless integer", _int(""))
UINT = Elements("2/4/8/16/32/64-bit unsigned integer", _int("u"))
INT = Elements("2/4/8/16/32/64-bit integer", lambda e: _int("")(e) or _int("u")(e))
I32 = Elements("32-bit signless integer", lambda e: e == T.i32)
UI32 = Elements("32-bit unsigned integer", lambda e: e == T.IntegerType(32, "u"))
ANY_INT = Elements("integer", lambda e: isinstance(e, T.IntegerType))
INDEX = Elements("index", lambda e: isinstance(e, T.IndexType))
FLOAT = Elements("4/6/8/16/32/64-bit float", lambda e: isinstance(e, T.FloatType) and e.name in _HLO_FLOATS)
F32_64 = Elements("32/64-bit float", lambda e: e in (T.f32, T.f64))
COMPLEX = Elements("complex type with 32/64-bit float elements",
                   lambda e: isinstance(e, T.ComplexType) and e.element in (T.f32, T.f64))
QUANT = Elements("per-tensor integer quantized", _quantized(False))
QUANT_AXIS = Elements("per-axis integer quantized", _quantized(True))


# ---- constraints -----------------------------------------------------------------------------
class Constraint:
    summary: str

    def accepts(self, t: T.Type) -> bool:
        raise NotImplementedError


def _valid_quantized_dimension(t: T.RankedTensorType) -> bool:
    q = uniform(t.element)
    if q is None or not q.per_axis:
        return True
    return q.axis < len(t.shape) and (t.shape[q.axis] is None or t.shape[q.axis] == len(q.scales))


@dataclass(frozen=True)
class TensorOf(Constraint):
    """A tensor of the given element classes: `rank` None any rank, `ranked` False admits
    `tensor<*x...>`, `static` a static shape."""
    elements: tuple
    what: str = "ranked tensor"
    ranked: bool = True
    rank: Optional[int] = None
    static: bool = False

    @property
    def summary(self) -> str:
        return f"{self.what} of {' or '.join(e.summary for e in self.elements)} values"

    def accepts(self, t) -> bool:
        if isinstance(t, T.UnrankedTensorType):
            return not self.ranked and self.rank is None and not self.static and self._element(t.element)
        if not isinstance(t, T.RankedTensorType):
            return False
        if self.rank is not None and len(t.shape) != self.rank or self.static and None in t.shape:
            return False
        return self._element(t.element) and _valid_quantized_dimension(t)

    def _element(self, e) -> bool:
        return any(c.test(e) for c in self.elements)


@dataclass(frozen=True)
class _Token(Constraint):
    summary: str = "token"

    def accepts(self, t) -> bool:
        return isinstance(t, T.DialectType) and t.dialect in ("stablehlo", "mhlo") and t.mnemonic == "token"


@dataclass(frozen=True)
class BufferOf(Constraint):
    elements: tuple

    @property
    def summary(self) -> str:
        return f"memref of {' or '.join(e.summary for e in self.elements)} values"

    def accepts(self, t) -> bool:
        return isinstance(t, T.MemRefType) and any(c.test(t.element) for c in self.elements)


@dataclass(frozen=True)
class TupleOf(Constraint):
    """A tuple, nested to any depth, whose leaves meet one of `leaves`."""
    leaves: tuple

    @property
    def summary(self) -> str:
        return "nested tuple with any combination of " + " or ".join(c.summary for c in self.leaves) + " values"

    def accepts(self, t) -> bool:
        return isinstance(t, T.TupleType) and all(self.accepts(x) or any(c.accepts(x) for c in self.leaves)
                                                  for x in t.types)


@dataclass(frozen=True)
class AnyOf(Constraint):
    options: tuple

    @property
    def summary(self) -> str:
        return " or ".join(c.summary for c in self.options)

    def accepts(self, t) -> bool:
        return any(c.accepts(t) for c in self.options)


def ranked(*elements: Elements, what: str = "ranked tensor", rank=None, static=False) -> TensorOf:
    return TensorOf(elements, what, True, rank, static)


TOKEN = _Token()
_ALL = (FLOAT, PRED, INT, COMPLEX, QUANT)
TENSOR = ranked(*_ALL)                                        # HLO_Tensor
TENSOR_Q = ranked(*_ALL, QUANT_AXIS)                          # ... or per-axis quantized
NON_QUANT = ranked(FLOAT, PRED, INT, COMPLEX)
INT_T = ranked(INT)
FP = ranked(FLOAT)
FP32_64 = ranked(F32_64)
PRED_T = ranked(PRED)
COMPLEX_T = ranked(COMPLEX)
I32_T = ranked(I32)
UI32_T = ranked(UI32)
INT_FP = ranked(INT, FLOAT)
PRED_INT = ranked(PRED, INT)
FP_COMPLEX = ranked(FLOAT, COMPLEX)
FP_Q = ranked(FLOAT, QUANT)
FP_COMPLEX_Q = ranked(FLOAT, COMPLEX, QUANT)
INT_FP_COMPLEX_Q = ranked(INT, FLOAT, COMPLEX, QUANT)
PRED_INT_FP = ranked(PRED, INT, FLOAT)
SIGNED = ranked(SINT, FLOAT, COMPLEX, QUANT)                  # abs, sign
Q_ANY = ranked(QUANT, QUANT_AXIS)
FP_Q_ANY = ranked(FLOAT, QUANT, QUANT_AXIS)
FP_Q_1D = ranked(FLOAT, QUANT, what="1D tensor", rank=1)
SCALAR_INT = ranked(INT, what="0D tensor", rank=0)
SCALAR = ranked(*_ALL, what="0D tensor", rank=0)
SCALAR_PRED_INT_FP = ranked(PRED, INT, FLOAT, what="0D tensor", rank=0)
DIMENSIONS = ranked(INDEX, INT, what="statically shaped 1-dimensional tensor", rank=1, static=True)
DIMENSIONS_ANY = ranked(INDEX, INT, what="1D tensor", rank=1)
STATIC_1D_INT = ranked(INT, what="statically shaped 1-dimensional integer tensor", rank=1, static=True)
STATIC_2D_INT = ranked(INT, what="statically shaped 2-dimensional integer tensor", rank=2, static=True)
STATIC_INT_FP = ranked(INT, FLOAT, what="statically shaped tensor", static=True)
INDICES = ranked(ANY_INT, INDEX)
BUFFER = BufferOf(_ALL)
TUPLE = TupleOf((TENSOR, BUFFER, ranked(QUANT_AXIS), TOKEN))
TENSOR_OR_TOKEN = AnyOf((TENSOR, TOKEN))
TENSOR_Q_OR_TOKEN = AnyOf((TENSOR, ranked(QUANT_AXIS), TOKEN))
TENSOR_Q_TOKEN_BUFFER = AnyOf((TENSOR_Q_OR_TOKEN, BUFFER))
TENSOR_Q_TOKEN_TUPLE = AnyOf((TENSOR, ranked(QUANT_AXIS), TOKEN, TUPLE))
TENSOR_Q_TOKEN_TUPLE_BUFFER = AnyOf((TENSOR_Q_TOKEN_TUPLE, BUFFER))


@dataclass(frozen=True)
class Variadic:
    """Any number of values, each meeting `each`."""
    each: Constraint


# ---- the ops -----------------------------------------------------------------------------------
#: short op name -> (operand constraints, result constraints), in order; `Variadic` groups
#: of one op share the values left over equally (MLIR's SameVariadicOperandSize).
_Spec = tuple[tuple, tuple]
STABLEHLO: dict[str, _Spec] = {
    "abs": ((SIGNED,), (ranked(SINT, FLOAT, QUANT),)),
    "sign": ((SIGNED,), (SIGNED,)),
    "convert": ((NON_QUANT,), (NON_QUANT,)),
    "count_leading_zeros": ((INT_T,), (INT_T,)),
    "popcnt": ((INT_T,), (INT_T,)),
    "imag": ((FP_COMPLEX,), (FP,)),
    "real": ((FP_COMPLEX,), (FP,)),
    "is_finite": ((FP_Q,), (PRED_T,)),
    "not": ((PRED_INT,), (PRED_INT,)),
    "negate": ((INT_FP_COMPLEX_Q,), (INT_FP_COMPLEX_Q,)),
    "add": ((TENSOR_Q, TENSOR_Q), (TENSOR_Q,)),
    "atan2": ((FP_COMPLEX_Q, FP_COMPLEX_Q), (FP_COMPLEX_Q,)),
    "complex": ((FP32_64, FP32_64), (COMPLEX_T,)),
    "and": ((PRED_INT, PRED_INT), (TENSOR,)),
    "or": ((PRED_INT, PRED_INT), (TENSOR,)),
    "xor": ((PRED_INT, PRED_INT), (TENSOR,)),
    "outfeed": ((Variadic(TENSOR_Q), TOKEN), (TOKEN,)),
    "send": ((Variadic(TENSOR_Q), TOKEN), (TOKEN,)),
    "recv": ((TOKEN,), (Variadic(TENSOR_Q_OR_TOKEN),)),
    "infeed": ((TOKEN,), (Variadic(TENSOR_Q_OR_TOKEN),)),
    "replica_id": ((), (UI32_T,)),
    "partition_id": ((), (UI32_T,)),
    "after_all": ((Variadic(TOKEN),), (TOKEN,)),
    "create_token": ((), (TOKEN,)),
    "if": ((PRED_T,), (Variadic(TENSOR_Q_OR_TOKEN),)),
    "case": ((I32_T,), (Variadic(TENSOR_Q_OR_TOKEN),)),
    "while": ((Variadic(TENSOR_Q_TOKEN_BUFFER),), (Variadic(TENSOR_Q_TOKEN_BUFFER),)),
    "reduce_scatter": ((TENSOR,), (TENSOR,)),
    "collective_permute": ((TENSOR,), (TENSOR,)),
    "reduce": ((Variadic(TENSOR), Variadic(TENSOR)), (Variadic(TENSOR),)),
    "reduce_window": ((Variadic(TENSOR), Variadic(TENSOR)), (Variadic(TENSOR),)),
    "get_tuple_element": ((TUPLE,), (TENSOR_Q_TOKEN_TUPLE_BUFFER,)),
    "tuple": ((Variadic(TENSOR_Q_TOKEN_TUPLE_BUFFER),), (TUPLE,)),
    "compare": ((TENSOR, TENSOR), (PRED_T,)),
    "dynamic_slice": ((TENSOR, Variadic(SCALAR_INT)), (TENSOR,)),
    "dynamic_update_slice": ((TENSOR, TENSOR, Variadic(SCALAR_INT)), (TENSOR,)),
    "batch_norm_grad": ((FP_Q, FP_Q_1D, FP_Q_1D, FP_Q_1D, FP_Q), (FP_Q, FP_Q_1D, FP_Q_1D)),
    "batch_norm_inference": ((FP_Q, FP_Q_1D, FP_Q_1D, FP_Q_1D, FP_Q_1D), (FP_Q,)),
    "batch_norm_training": ((FP_Q, FP_Q_1D, FP_Q_1D), (FP_Q, FP_Q_1D, FP_Q_1D)),
    "bitcast_convert": ((TENSOR_Q,), (TENSOR_Q,)),
    "broadcast": ((TENSOR,), (TENSOR_Q,)),
    "broadcast_in_dim": ((TENSOR_Q,), (TENSOR_Q,)),
    "dynamic_broadcast_in_dim": ((TENSOR_Q, DIMENSIONS), (TENSOR_Q,)),
    "clamp": ((TENSOR, TENSOR, TENSOR), (TENSOR,)),
    "concatenate": ((Variadic(TENSOR),), (TENSOR,)),
    "composite": ((Variadic(TENSOR_Q_TOKEN_TUPLE),), (Variadic(TENSOR_Q_TOKEN_TUPLE),)),
    "convolution": ((TENSOR, TENSOR_Q), (TENSOR_Q,)),
    "dot": ((TENSOR, TENSOR_Q), (TENSOR_Q,)),
    "dot_general": ((TENSOR, TENSOR_Q), (TENSOR_Q,)),
    "einsum": ((TENSOR, TENSOR), (TENSOR,)),
    "unary_einsum": ((TENSOR,), (TENSOR,)),
    "fft": ((FP_COMPLEX,), (FP_COMPLEX,)),
    "gather": ((TENSOR, INT_T), (TENSOR,)),
    "get_dimension_size": ((TENSOR_Q,), (I32_T,)),
    "set_dimension_size": ((TENSOR, I32_T), (TENSOR,)),
    "map": ((Variadic(TENSOR),), (TENSOR,)),
    "reshape": ((TENSOR_Q,), (TENSOR_Q,)),
    "dynamic_reshape": ((TENSOR_Q, DIMENSIONS), (TENSOR_Q,)),
    "scatter": ((Variadic(TENSOR), INDICES, Variadic(TENSOR)), (Variadic(TENSOR),)),
    "select": ((PRED_T, TENSOR, TENSOR), (TENSOR,)),
    "select_and_scatter": ((TENSOR, TENSOR, TENSOR), (TENSOR,)),
    "sort": ((Variadic(TENSOR),), (Variadic(TENSOR),)),
    "reverse": ((TENSOR,), (TENSOR,)),
    "pad": ((TENSOR, SCALAR), (TENSOR,)),
    "dynamic_pad": ((TENSOR, SCALAR, DIMENSIONS, DIMENSIONS, DIMENSIONS), (TENSOR,)),
    "transpose": ((TENSOR_Q,), (TENSOR_Q,)),
    "triangular_solve": ((FP_COMPLEX, FP_COMPLEX), (FP_COMPLEX,)),
    "return": ((Variadic(TENSOR_Q_TOKEN_BUFFER),), ()),
    "torch_index_select": ((TENSOR, TENSOR), (TENSOR,)),
    "optimization_barrier": ((Variadic(TENSOR_OR_TOKEN),), (Variadic(TENSOR_OR_TOKEN),)),
    "rng": ((SCALAR_PRED_INT_FP, SCALAR_PRED_INT_FP, DIMENSIONS), (PRED_INT_FP,)),
    "rng_bit_generator": ((INT_FP,), (INT_FP, STATIC_INT_FP)),
    "uniform_quantize": ((FP_Q_ANY,), (Q_ANY,)),
    "uniform_dequantize": ((Q_ANY,), (FP,)),
    "reduce_precision": ((FP_Q,), (FP_Q,)),
    "dynamic_gather": ((TENSOR, INT_T, STATIC_1D_INT), (TENSOR,)),
    "dynamic_conv": ((TENSOR, TENSOR, STATIC_2D_INT), (TENSOR,)),
    "dynamic_iota": ((DIMENSIONS,), (TENSOR,)),
    "slice": ((TENSOR,), (TENSOR,)),
    "real_dynamic_slice": ((TENSOR, DIMENSIONS_ANY, DIMENSIONS_ANY, DIMENSIONS_ANY), (TENSOR,)),
}
for _n in ("cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "rsqrt",
           "sine", "sqrt", "tan", "tanh", "cholesky"):
    STABLEHLO[_n] = ((FP_COMPLEX_Q,), (FP_COMPLEX_Q,))
for _n in ("ceil", "floor", "round_nearest_afz", "round_nearest_even"):
    STABLEHLO[_n] = ((FP_Q,), (FP_Q,))
for _n in ("divide", "power", "remainder", "subtract"):
    STABLEHLO[_n] = ((INT_FP_COMPLEX_Q,) * 2, (INT_FP_COMPLEX_Q,))
for _n in ("maximum", "minimum", "multiply"):
    STABLEHLO[_n] = ((TENSOR,) * 2, (TENSOR,))
for _n in ("shift_left", "shift_right_arithmetic", "shift_right_logical"):
    STABLEHLO[_n] = ((INT_T,) * 2, (INT_T,))
for _n in ("all_gather", "all_reduce", "all_to_all", "collective_broadcast", "collective_reduce"):
    STABLEHLO[_n] = ((Variadic(TENSOR),), (Variadic(TENSOR),))


#: MHLO's: most are StableHLO's with per-axis quantized tensors allowed wherever quantized ones
#: are (MHLO_Tensor); the others below, where MHLO takes unranked tensors or fewer element types.
_SAME_AS_STABLEHLO = (
    "count_leading_zeros", "popcnt", "imag", "real", "not", "sign", "complex", "atan2", "add", "maximum", "minimum",
    "multiply", "divide", "power", "remainder", "subtract", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "and", "or", "xor", "cbrt", "cosine", "exponential", "exponential_minus_one", "log",
    "log_plus_one", "logistic", "rsqrt", "sine", "sqrt", "tan", "tanh", "ceil", "floor", "after_all", "replica_id",
    "partition_id", "if", "all_gather", "all_reduce", "all_to_all", "reduce_scatter", "collective_permute",
    "reduce", "reduce_window", "compare", "dynamic_slice", "dynamic_update_slice", "bitcast_convert", "broadcast",
    "broadcast_in_dim", "triangular_solve", "clamp", "concatenate", "convolution", "dot_general", "einsum",
    "gather", "map", "scatter", "select", "select_and_scatter", "sort", "reverse", "transpose",
    "torch_index_select", "rng_bit_generator", "uniform_quantize", "uniform_dequantize", "dynamic_gather", "while")


def _per_axis_too(c):
    if c is TENSOR:
        return TENSOR_Q
    return Variadic(TENSOR_Q) if isinstance(c, Variadic) and c.each is TENSOR else c


_M_ANY = TensorOf((*_ALL, QUANT_AXIS), "tensor", ranked=False)
_M_DIMENSIONS = ranked(INDEX, INT, what="1D tensor", rank=1)
_M_I32 = TensorOf((I32,), "tensor", ranked=False)
_M_FP_1D = ranked(FLOAT, what="1D tensor", rank=1)
MHLO: dict[str, _Spec] = {name: tuple(tuple(_per_axis_too(c) for c in side) for side in STABLEHLO[name])
                          for name in _SAME_AS_STABLEHLO}
MHLO.update({
    "convert": ((TENSOR_Q,), (TENSOR_Q,)),
    "is_finite": ((FP,), (PRED_T,)),
    "negate": ((ranked(INT, FLOAT, COMPLEX, QUANT, QUANT_AXIS),),) * 2,
    "stochastic_convert": ((FP, ranked(UINT)), (TENSOR_Q,)),
    "collective_broadcast": ((TENSOR_Q,), (TENSOR_Q,)),
    "batch_norm_grad": ((FP, _M_FP_1D, _M_FP_1D, _M_FP_1D, FP), (FP, _M_FP_1D, _M_FP_1D)),
    "batch_norm_inference": ((FP, _M_FP_1D, _M_FP_1D, _M_FP_1D, _M_FP_1D), (FP,)),
    "batch_norm_training": ((FP, _M_FP_1D, _M_FP_1D), (FP, _M_FP_1D, _M_FP_1D)),
    "cholesky": ((FP_COMPLEX,), (FP_COMPLEX,)),
    "ragged_dot": ((TENSOR_Q,) * 3, (TENSOR,)),
    "fft": ((TENSOR_Q,), (TENSOR_Q,)),
    "get_dimension_size": ((TENSOR_Q,), (_M_I32,)),
    "set_dimension_size": ((TENSOR_Q, _M_I32), (TENSOR_Q,)),
    "reshape": ((_M_ANY,), (TENSOR_Q,)),
    "dynamic_reshape": ((_M_ANY, _M_DIMENSIONS), (_M_ANY,)),
    "topk": ((TENSOR_Q,), (TENSOR_Q, TENSOR_Q)),
    "pad": ((TENSOR_Q, TENSOR_Q), (TENSOR_Q,)),
    "rng": ((SCALAR_PRED_INT_FP, SCALAR_PRED_INT_FP, _M_DIMENSIONS), (PRED_INT_FP,)),
    "reduce_precision": ((FP,), (FP,)),
    "dynamic_pad": ((TENSOR_Q, TENSOR_Q, _M_DIMENSIONS, _M_DIMENSIONS, _M_DIMENSIONS), (TENSOR_Q,)),
    "dynamic_conv": ((TENSOR_Q,) * 3, (TENSOR_Q,)),
    "dynamic_iota": ((_M_DIMENSIONS,), (TENSOR_Q,)),
})
for _n in ("round_nearest_afz", "round_nearest_even", "erf"):
    MHLO[_n] = ((FP,), (FP,))
for _n in ("acos", "acosh", "asin", "asinh", "atanh", "cosh", "sinh"):
    MHLO[_n] = ((TensorOf((FLOAT, COMPLEX), "tensor", ranked=False),),) * 2
_TABLES = {"stablehlo": STABLEHLO, "mhlo": MHLO}


# ---- checking ----------------------------------------------------------------------------------
def _spread(specs: tuple, n: int) -> Optional[list]:
    """One constraint (and whether it is variadic) per value, or None when `n` values cannot
    be spread over `specs`."""
    variadic = sum(isinstance(s, Variadic) for s in specs)
    fixed = len(specs) - variadic
    if n < fixed or (variadic == 0 and n != fixed) or (variadic and (n - fixed) % variadic):
        return None
    each = (n - fixed) // variadic if variadic else 0
    out = []
    for s in specs:
        out += [(s.each, True)] * each if isinstance(s, Variadic) else [(s, False)]
    return out


def spec_for(name: str) -> Optional[_Spec]:
    dialect, _, short = name.partition(".")
    table = _TABLES.get(dialect)
    return table.get(short) if table is not None else None


def check(op: Operation) -> None:
    """Raise MLIR's message for the first operand, then result, of a type its op does not take."""
    problem = _problem(op.name, tuple(op.operand_types), tuple(op.result_types))
    if problem is not None:
        raise VerifyError(problem)


@lru_cache(maxsize=4096)  # a program repeats few signatures: most ops are answered from here
def _problem(name: str, operand_types: tuple, result_types: tuple) -> Optional[str]:
    spec = spec_for(name)
    if spec is None:
        return None
    for kind, specs, types in (("operand", spec[0], operand_types), ("result", spec[1], result_types)):
        spread = _spread(specs, len(types))
        if spread is None:
            continue  # a count problem: the op's own rules say it
        for i, ((constraint, variadic), t) in enumerate(zip(spread, types)):
            if not constraint.accepts(t):
                return f"{kind} #{i} must be {'variadic of ' if variadic else ''}{constraint.summary}, but got '{t}'"
    return None
