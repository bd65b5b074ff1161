"""math.ctpop, math.ctlz and math.isfinite as plain integer and compare ops, for targets that have
no instruction for them at every width (SPIR-V's OpBitCount and GLSL's FindUMsb are 32-bit on
Vulkan; there is no isfinite there at all).

- ctpop: the SWAR count (pairs, nibbles, bytes summed in place; the byte counts added by one
  multiply and read from the top byte), for 8, 16, 32 and 64 bits.
- ctlz: a binary search: where the top s bits are zero (s = N/2, N/4, ..., 1), count s and
  shift them out; then one more for a zero top bit (x = 0 gives N).
- isfinite: |x| < inf (an ordered compare: false for inf and NaN), any float width.
"""
from __future__ import annotations

from ..ir import types as T
from ..ir.attributes import IntegerAttr

_EQ, _OLT = 0, 4


def _repeated(byte: int, width: int) -> int:
    return int.from_bytes(bytes([byte]) * (width // 8), "little")


def ctpop(b, x):
    n = b.width
    x = b.subi(x, b.andi(b.shrui(x, b.ci(1)), b.ci(_repeated(0x55, n))))
    x = b.addi(b.andi(x, b.ci(_repeated(0x33, n))), b.andi(b.shrui(x, b.ci(2)), b.ci(_repeated(0x33, n))))
    x = b.andi(b.addi(x, b.shrui(x, b.ci(4))), b.ci(_repeated(0x0F, n)))
    if n == 8:
        return x
    return b.shrui(b.op("arith.muli", [x, b.ci(_repeated(0x01, n))], b.i), b.ci(n - 8))


def ctlz(b, x):
    n = b.width
    count = b.ci(0)
    s = n // 2
    while s >= 1:
        top_zero = b.cmpi(_EQ, b.shrui(x, b.ci(n - s)), b.ci(0))
        count = b.selecti(top_zero, b.addi(count, b.ci(s)), count)
        x = b.selecti(top_zero, b.shli(x, b.ci(s)), x)
        s //= 2
    top_zero = b.cmpi(_EQ, b.shrui(x, b.ci(n - 1)), b.ci(0))
    return b.selecti(top_zero, b.addi(count, b.ci(1)), count)


def isfinite(b, x, t: T.Type):
    """(x of float type `t`, kept in its own width: no builder float type involved)."""
    inf = b.constant(float("inf"), t)
    magnitude = b.op("math.absf", [x], t)
    return b.op("arith.cmpf", [magnitude, inf], b.b, {"predicate": IntegerAttr(_OLT)})
