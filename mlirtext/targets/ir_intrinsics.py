"""`llvm.intr.*` ops as calls to LLVM intrinsics: the overloaded name (`@llvm.exp.v8f32`,
`@llvm.memcpy.p0.p0.i64`) and the immediate operands MLIR keeps as attributes
(`isVolatile`, `is_int_min_poison`, ...), which LLVM takes as trailing `i1`/`i32` arguments."""
from __future__ import annotations

from ..dialects import llvm_types as LT
from ..ir import types as T
from ..ir.attributes import IntegerAttr
from .ir_types import Untranslatable

#: Overloaded on the result type (elementwise math and bit operations).
_BY_RESULT = {
    "fabs", "sqrt", "exp", "exp2", "exp10", "log", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "pow", "fma", "fmuladd", "floor", "ceil", "round", "roundeven",
    "trunc", "rint", "nearbyint", "copysign", "minnum", "maxnum", "minimum", "maximum", "bitreverse",
    "ctpop", "bswap", "smax", "smin", "umax", "umin", "fshl", "fshr", "sadd.sat", "uadd.sat", "ssub.sat",
    "usub.sat", "sshl.sat", "ushl.sat", "abs", "ctlz", "cttz", "expect", "stepvector", "canonicalize",
    "launder.invariant.group", "strip.invariant.group", "scmp", "ucmp",
}
#: Overloaded on these operand positions, in order.
_BY_OPERANDS = {
    "memcpy": (0, 1, 2), "memmove": (0, 1, 2), "memset": (0, 2), "powi": (0, 1), "ldexp": (0, 1),
    "is.fpclass": (0,), "ptrmask": (0, 1), "sadd.with.overflow": (0,), "uadd.with.overflow": (0,),
    "ssub.with.overflow": (0,), "usub.with.overflow": (0,), "smul.with.overflow": (0,),
    "umul.with.overflow": (0,), "vector.reduce.add": (0,), "vector.reduce.mul": (0,),
    "vector.reduce.and": (0,), "vector.reduce.or": (0,), "vector.reduce.xor": (0,),
    "vector.reduce.smax": (0,), "vector.reduce.smin": (0,), "vector.reduce.umax": (0,),
    "vector.reduce.umin": (0,), "vector.reduce.fmax": (0,), "vector.reduce.fmin": (0,),
    "vector.reduce.fmaximum": (0,), "vector.reduce.fminimum": (0,), "vector.reduce.fadd": (1,),
    "vector.reduce.fmul": (1,), "stackrestore": (0,), "lifetime.start": (0,), "lifetime.end": (0,),
    "eh.typeid.for": (0,),
}
#: Overloaded on the result type, then operand 0 (conversions, subvectors).
_RESULT_THEN_OPERAND = {"lround", "llround", "lrint", "llrint", "fptosi.sat", "fptoui.sat", "vector.extract"}
#: Overloaded on the vector (operand 0), then the subvector (operand 1).
_TWO_OPERANDS = {"vector.insert"}
_NOT_OVERLOADED = {"assume", "trap", "debugtrap", "vastart", "vaend", "vacopy"}
_STACKSAVE = {"stacksave"}
#: Attributes that LLVM takes as trailing immediate arguments: intrinsic -> [(attribute, IR type)].
_IMMEDIATES = {
    "memcpy": [("isVolatile", "i1")], "memmove": [("isVolatile", "i1")], "memset": [("isVolatile", "i1")],
    "abs": [("is_int_min_poison", "i1")], "ctlz": [("is_zero_poison", "i1")],
    "cttz": [("is_zero_poison", "i1")], "is.fpclass": [("bit", "i32")],
    "vector.insert": [("pos", "i64")], "vector.extract": [("pos", "i64")],
}


def mangle(t: T.Type) -> str:
    """LLVM's overload suffix for a type: f32, i64, v8f32, nxv4i32, p0."""
    if isinstance(t, T.IntegerType):
        return f"i{t.width}"
    if isinstance(t, T.FloatType):
        return {"f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64", "f80": "f80",
                "f128": "f128"}.get(t.name) or _no(t)
    if isinstance(t, T.VectorType) and len(t.shape) == 1:
        scalable = "nx" if t.scalable and t.scalable[0] else ""
        return f"{scalable}v{t.shape[0]}{mangle(t.element)}"
    if isinstance(t, LT.LLVMPointerType):
        return f"p{t.address_space}"
    return _no(t)


def _no(t):
    raise Untranslatable(f"no intrinsic overload suffix for type {t}")


def intrinsic_name(op) -> str:
    """`llvm.intr.exp` on f32 -> `llvm.exp.f32`."""
    kind = op.name[len("llvm.intr."):]
    if kind in _NOT_OVERLOADED:
        return f"llvm.{kind}"
    if kind in _STACKSAVE:
        return f"llvm.{kind}.{mangle(op.results[0].type)}"
    if kind in _BY_RESULT:
        return f"llvm.{kind}.{mangle(op.results[0].type)}"
    if kind in _BY_OPERANDS:
        types = [op.operands[i].type for i in _BY_OPERANDS[kind]]
        return "llvm." + kind + "".join("." + mangle(t) for t in types)
    if kind in _TWO_OPERANDS:
        return f"llvm.{kind}.{mangle(op.operand('dstvec').type)}.{mangle(op.operand('srcvec').type)}"
    if kind in ("vector.interleave2",):
        return f"llvm.{kind}.{mangle(op.results[0].type)}"
    if kind in ("vector.deinterleave2",):
        return f"llvm.{kind}.{mangle(op.operand_types[0])}"
    if kind in _RESULT_THEN_OPERAND:
        return f"llvm.{kind}.{mangle(op.results[0].type)}.{mangle(op.operand_types[0])}"
    raise Untranslatable("no LLVM intrinsic mapping")


def immediate_arguments(op) -> list[tuple[str, str]]:
    """(IR type, value) of the immediates an intrinsic takes after its operands."""
    kind = op.name[len("llvm.intr."):]
    out = []
    for attr, ty in _IMMEDIATES.get(kind, ()):
        value = op.attributes.get(attr)
        v = value.value if isinstance(value, IntegerAttr) else 0
        out.append((ty, ("true" if v else "false") if ty == "i1" else str(v)))
    return out
