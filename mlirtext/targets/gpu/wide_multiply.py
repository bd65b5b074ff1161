"""opencl-spirv: the i128 multiplies LLVM's optimiser makes, written back as OpenCL's `mul_hi`.

The high half of a 64-bit product (chlo.mulhi) is lowered as four 32-bit partial products
(hlo_unsigned.multiply_high), and LLVM's optimiser recognises the idiom and folds it into
`trunc (lshr (mul (zext a to i128), (zext b to i128)), 64)`. SPIR-V has no 128-bit integers
without an extension pocl does not read (LLVM stops: "OpTypeInt type with a width other than 8,
16, 32 or 64 bits"), but OpenCL has the operation itself: `mul_hi(ulong, ulong)` and
`mul_hi(long, long)`, which the SPIR-V back-end knows by their mangled names (OpenCL.std
u_mul_hi / s_mul_hi). So after optimisation each such chain becomes a call to it and the i128
instructions it leaves unused are dropped; an i128 that is still there is reported.
"""
from __future__ import annotations

import re

#: OpenCL's mul_hi for (unsigned, signed) 64-bit operands, by its Itanium-mangled name.
MUL_HI = {"zext": "_Z6mul_himm", "sext": "_Z6mul_hill"}

_DEF = re.compile(r"^\s*(%[-\w.$]+) = (.*)$")
_TRUNC = re.compile(r"trunc (?:nuw |nsw )*i128 (%[-\w.$]+) to i64$")
_SHIFT = re.compile(r"lshr (?:exact )?i128 (%[-\w.$]+), 64$")
_MUL = re.compile(r"mul (?:nuw |nsw )*i128 (\S+), (\S+)$")
_EXT = re.compile(r"(zext|sext) (?:nneg )?i64 (\S+) to i128$")
_NAME = re.compile(r"%[-\w.$]+")
_I128 = re.compile(r"(?<![-\w.$@%])i128\b")   # the type, not a name that ends in it


class WideIntegerError(Exception):
    """An i128 operation with no OpenCL form."""


def mul_hi_for_i128(ir: str) -> str:
    """Optimised LLVM IR `ir` with each i128 multiply-high chain a call to OpenCL's mul_hi."""
    if not _I128.search(ir):
        return ir
    used: set = set()
    pieces = re.split(r"(?m)^(?=define )", ir)   # (value names are per function)
    text = "".join(_rewrite_function(p, used) if p.startswith("define ") else p for p in pieces)
    found = _I128.search(text)
    if found:
        line = text[text.rfind("\n", 0, found.start()) + 1:text.find("\n", found.start())]
        raise WideIntegerError(f"128-bit integer arithmetic has no opencl-spirv form: {line.strip()}")
    return text + "".join(f"declare i64 @{name}(i64, i64)\n" for name in sorted(used))


def _rewrite_function(text: str, used: set) -> str:
    """One function's text with its multiply-high chains as mul_hi calls (their names added to
    `used`) and the i128 instructions left unused dropped."""
    lines = text.splitlines()
    defs = {}   # value -> (line index, what it is defined as)
    for i, line in enumerate(lines):
        m = _DEF.match(line)
        if m:
            defs[m.group(1)] = (i, m.group(2))
    for name, (i, rhs) in defs.items():
        found = _as_mul_hi(rhs, defs)
        if found:
            function, (a, b) = found
            lines[i] = f"  {name} = call i64 @{function}(i64 {a}, i64 {b})"
            used.add(function)
    return "\n".join(_drop_unused_i128(lines)) + "\n"


def _as_mul_hi(rhs: str, defs: dict):
    """(mul_hi's name, its two i64 operands) when `rhs` is trunc(lshr(mul(ext a, ext b), 64)),
    both operands extended alike (or constants that fit), else None."""
    def definition(value, pattern):
        return pattern.match(defs[value][1]) if value in defs else None
    trunc = _TRUNC.match(rhs)
    shift = trunc and definition(trunc.group(1), _SHIFT)
    mul = shift and definition(shift.group(1), _MUL)
    if not mul:
        return None
    operands = [_operand(v, defs) for v in mul.groups()]
    if None in operands:
        return None
    kinds = {kind for kind, _ in operands if kind}
    if len(kinds) > 1:
        return None
    kind = kinds.pop() if kinds else "zext"
    args = [value if k else _constant(value, kind) for k, value in operands]
    return None if None in args else (MUL_HI[kind], args)


def _operand(value: str, defs: dict):
    """(zext / sext, the i64 value) of an extended i64, (None, literal) of a constant, else None."""
    if re.fullmatch(r"-?\d+", value):
        return None, value
    m = value in defs and _EXT.match(defs[value][1])
    return (m.group(1), m.group(2)) if m else None


def _constant(literal: str, kind: str) -> str | None:
    """An i128 constant as the i64 operand it extends, if it is one."""
    v = int(literal)
    if kind == "zext" and 0 <= v < 1 << 64:
        return str(v - (1 << 64) if v >= 1 << 63 else v)
    if kind == "sext" and -(1 << 63) <= v < 1 << 63:
        return literal
    return None


def _drop_unused_i128(lines: list) -> list:
    """`lines` without the i128 definitions nothing uses any more (repeated: a chain goes whole)."""
    while True:
        uses: dict = {}
        for line in lines:
            m = _DEF.match(line)
            for name in _NAME.findall(m.group(2) if m else line):
                uses[name] = uses.get(name, 0) + 1
        dead = {i for i, line in enumerate(lines)
                if (m := _DEF.match(line)) and _I128.search(m.group(2)) and not uses.get(m.group(1))}
        if not dead:
            return lines
        lines = [line for i, line in enumerate(lines) if i not in dead]
