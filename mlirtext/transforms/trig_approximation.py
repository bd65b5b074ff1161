"""sin, cos, tan, atan and atan2 as arith polynomials, for targets without a math library (GPUs).

Written from the math (Payne & Hanek's range reduction; the kernel polynomials are the classic
Cephes (f32) and fdlibm (f64) minimax fits); the code is our own.
Everything is straight-line code with `select`s, on f32 or f64 scalars or 1-D vectors.

sin/cos/tan: |x| = n pi/2 + r, |r| <= pi/4, and the quadrant n mod 4 picks +-sin r or +-cos r.
Up to pi/4, r = |x|. Above (inf and NaN give NaN), Payne-Hanek on integers: |x| = m 2^s (m the
mantissa as an integer, at most 27 bits: an f64 mantissa is taken in two halves), and
|x| 2/pi mod 4 = m 2^s sum w_j 2^(-32(j+1)) mod 4, with w_j the 32-bit words of 2/pi: the
words whose products are multiples of 4 are skipped, the next four (f64: five) taken (a table
lookup by `select`s), the 59-bit products summed into fixed point with 2 integer bits and 62
(f64: 126) fraction bits, wrapping arithmetic being the mod 4. Its absolute error is under 2^-61
(f64: 2^-99) quarter turns, far below the result's last bit for every float input, and it needs
no fused multiply-add (a Cody-Waite reduction, x - n pi/2 in parts, does: Vulkan's Fma may round
twice) but 64-bit integers (Vulkan: shaderInt64). The code is straight-line, so a reduction
that skips Payne-Hanek for small |x| would not save its cost.

Bounds (`ULP_BOUNDS`) against numpy in float64 (f64: in long double), tests/test_gpu_math.py, over
2^18 inputs per op (random bit patterns, dense sweeps, edge cases); "measured" is the largest
error seen there natively (a fused fma, as NVPTX and AMDGPU have) and on lavapipe (whose Fma
rounds twice), 2^16 inputs:

| op         | f32 bound | native | lavapipe | f64 bound | native | lavapipe |
|------------|-----------|--------|----------|-----------|--------|----------|
| sin, cos   | 3         | 1      | 3        | 2         | 1      | 2        |
| tan        | 4         | 3      | 3        | 4         | 3      | 3        |
| atan       | 3         | 2      |          | 2         | 1      |          |
| atan2      | 3         | 2      | 2        | 2         | 2      | 1        |
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..ir import types as T

_OEQ, _OGT, _OLT, _UNO = 1, 2, 4, 14    # arith.cmpf predicates
_NE, _ULT = 1, 6                      # arith.cmpi predicates

#: The largest error, in ulp of the result, that each expansion is held to, by (op, float width).
ULP_BOUNDS = {("math.sin", 32): 3, ("math.cos", 32): 3, ("math.tan", 32): 4, ("math.atan", 32): 3,
              ("math.atan2", 32): 3, ("math.sin", 64): 2, ("math.cos", 64): 2, ("math.tan", 64): 4,
              ("math.atan", 64): 2, ("math.atan2", 64): 2}


def _arctan_inverse(x: int, precision: int) -> int:
    """atan(1/x) in fixed point with `precision` fraction bits (its Taylor series), x >= 2."""
    one = 1 << precision
    total, power, k, sign = 0, one // x, 1, 1
    while power:
        total += sign * (power // k)
        power //= x * x
        k, sign = k + 2, -sign
    return total


def pi_fixed(precision: int) -> int:
    """pi in fixed point (Machin: pi = 16 atan(1/5) - 4 atan(1/239)), good to a few units of the
    last of `precision` bits."""
    return 16 * _arctan_inverse(5, precision) - 4 * _arctan_inverse(239, precision)


def _two_over_pi_words(count: int) -> list[int]:
    """The first `count` 32-bit words of the fraction of 2/pi (64 guard bits)."""
    bits = 32 * count
    precision = bits + 64
    fraction = (2 << (bits + precision)) // pi_fixed(precision)   # 2/pi 2^bits (2/pi < 1)
    return [(fraction >> (bits - 32 * (j + 1))) & 0xFFFFFFFF for j in range(count)]


#: Table index k holds word k - 2 of 2/pi (indices 0 and 1: the integer part, 0, and the word
#: above it): f32 needs the first 9 entries, f64 (up to its largest exponent, and four words
#: beyond) all 38.
_TABLE = [0, 0] + _two_over_pi_words(36)
_TABLE_SIZE = {32: 9, 64: 38}

_PRECISION = 256
_EXACT = {"pi": Fraction(pi_fixed(_PRECISION), 1 << _PRECISION),
          "atan(1/2)": Fraction(_arctan_inverse(2, _PRECISION), 1 << _PRECISION)}


def float_parts(value: Fraction, count: int, width: int) -> list[float]:
    """`value` as a sum of `count` floats of `width` bits, the largest first, each the rounding
    of what the ones before leave."""
    dtype = np.float64 if width == 64 else np.float32
    out = []
    for _ in range(count):
        p = float(dtype(float(value)))
        out.append(p)
        value -= Fraction(p)
    return out


_PIO2 = {w: float_parts(_EXACT["pi"] / 2, 2, w) for w in (32, 64)}

_SIN_POLY = {32: (-1.9515295891e-4, 8.3321608736e-3, -1.6666654611e-1),
             64: (1.58969099521155010221e-10, -2.50507602534068634195e-08, 2.75573137070700676789e-06,
                  -1.98412698298579493134e-04, 8.33333333332248946124e-03, -1.66666666666666324348e-01)}
_COS_POLY = {32: (2.443315711809948e-5, -1.388731625493765e-3, 4.166664568298827e-2),
             64: (-1.13596475577881948265e-11, 2.08757232129817482790e-09, -2.75573143513906633035e-07,
                  2.48015872894767294178e-05, -1.38888888888741095749e-03, 4.16666666666666019037e-02)}


def _table_lookup(b, k, t):
    """_TABLE[k] as an integer of type `t` (k's), by a tree of selects on k's bits."""
    values = [b.constant(w, t) for w in _TABLE[:_TABLE_SIZE[b.width]]]
    bit = 0
    while len(values) > 1:
        take = b.cmpi(_NE, b.op("arith.andi", [k, b.constant(1 << bit, t)], t), b.constant(0, t))
        values = [b.op("arith.select", [take, values[i + 1], values[i]], t) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
        bit += 1
    return values[0]


def _payne_hanek_part(b, m, s, wide: bool):
    """m 2^s 2/pi mod 4 in fixed point, for an integer m < 2^27 (as i64) and an exponent s (of
    the builder's integer type): (high, low), high an i64 with 2 integer and 62 fraction bits
    (wrapping: the mod 4), low the next 64 fraction bits (unsigned) when `wide`, else None.
    The words of 2/pi from the first whose product with m 2^s is not a multiple of 4 are taken
    (w_0, w_1, ...), p_j = m w_j (< 2^59) weighing 2^(t + 62 - 32j) units of high; the first
    word not taken adds under 2^-38 units of high to `wide`'s 128 bits (under 2^-68 to high
    without `wide`, which truncates at 2^-62)."""
    i64 = b.like(T.i64)

    def i(op, *args):
        return b.op(op, list(args), i64)

    def c64(v):
        return b.constant(v, i64)
    k = b.shrsi(b.addi(s, b.ci(30)), b.ci(5))            # t = s - 32k in [-30, 1] for s >= -62
    t = b.subi(s, b.shli(k, b.ci(5)))
    k = b.addi(k, b.ci(1))                               # the table index of word k - 1 (k >= -1)
    t64 = b.op("arith.extsi", [t], i64) if b.width == 32 else t
    k64 = b.op("arith.extsi", [k], i64) if b.width == 32 else k
    words = [_table_lookup(b, i("arith.addi", k64, c64(j)), i64) for j in range(5 if wide else 4)]
    p = [i("arith.muli", m, w) for w in words]
    high = i("arith.addi", i("arith.shli", p[0], i("arith.addi", t64, c64(62))),
             i("arith.shli", p[1], i("arith.addi", t64, c64(30))))
    down = i("arith.subi", c64(2), t64)                  # p2's shift right, in [1, 32]
    if not wide:
        return i("arith.addi", high, i("arith.shrui", i("arith.addi", p[2], i("arith.shrui", p[3], c64(32))), down)), None
    # p2 and p3 straddle the two words; p4 lies in the low one
    high = i("arith.addi", high, i("arith.shrui", p[2], down))
    high = i("arith.addi", high, i("arith.shrui", p[3], i("arith.minsi", i("arith.subi", c64(34), t64), c64(63))))
    low, carry1 = _add_with_carry(b, i("arith.shli", p[2], i("arith.addi", t64, c64(62))),
                                  i("arith.shli", p[3], i("arith.addi", t64, c64(30))))
    low, carry2 = _add_with_carry(b, low, i("arith.shrui", p[4], down))
    return i("arith.addi", high, i("arith.addi", carry1, carry2)), low


def _add_with_carry(b, x, y):
    """(x + y mod 2^64, the carry out as 0 or 1) for i64 values taken as unsigned."""
    i64 = b.like(T.i64)
    total = b.op("arith.addi", [x, y], i64)
    return total, b.op("arith.extui", [b.cmpi(_ULT, total, x)], i64)        # it wrapped


def _payne_hanek(b, ax):
    """(quadrant n mod 4 as the builder's integer type, r) for |x| = ax, finite and >= 2^-10
    (for smaller ones the shifts would leave their range)."""
    i64 = b.like(T.i64)
    bits = b.bits(ax)
    if b.width == 32:
        exponent = b.shrui(bits, b.ci(23))
        m = b.op("arith.extui", [b.ori(b.andi(bits, b.ci(0x7FFFFF)), b.ci(0x800000))], i64)
        q, low = _payne_hanek_part(b, m, b.subi(exponent, b.ci(150)), False)
    else:   # the 53-bit mantissa in two parts of 27 and 26 bits
        exponent = b.shrui(bits, b.ci(52))
        m = b.ori(b.andi(bits, b.ci((1 << 52) - 1)), b.ci(1 << 52))
        s = b.subi(exponent, b.ci(1075))
        q1, low1 = _payne_hanek_part(b, b.shrui(m, b.ci(26)), b.addi(s, b.ci(26)), True)
        q2, low2 = _payne_hanek_part(b, b.andi(m, b.ci((1 << 26) - 1)), s, True)
        low, carry = _add_with_carry(b, low1, low2)
        q = b.addi(b.addi(q1, q2), carry)
    n = b.op("arith.shrui", [b.op("arith.addi", [q, b.constant(1 << 61, i64)], i64), b.constant(62, i64)], i64)
    fraction = b.op("arith.subi", [q, b.op("arith.shli", [n, b.constant(62, i64)], i64)], i64)   # signed
    # the fraction as hi + lo floats (hi its rounding, lo the rest and the low word's bits)
    hi = b.op("arith.sitofp", [fraction], b.f)
    lo = b.op("arith.sitofp", [b.op("arith.subi", [fraction, b.op("arith.fptosi", [hi], i64)], i64)], b.f)
    if low is not None:
        top = b.op("arith.uitofp", [b.op("arith.shrui", [low, b.constant(11, i64)], i64)], b.f)   # exact
        lo = b.fma(top, b.c(2.0 ** -53), lo)
    # r = (hi + lo) pi/2 2^-62, with pi/2 in two parts
    c_hi, c_lo = (p * 2.0 ** -62 for p in _PIO2[b.width][:2])
    r = b.fma(hi, b.c(c_hi), b.fma(hi, b.c(c_lo), b.mul(lo, b.c(c_hi))))
    if b.width == 32:
        n = b.op("arith.trunci", [n], b.i)
    return n, r


def _reduce(b, ax):
    """(n mod 4, r) with ax = n pi/2 + r, |r| <= pi/4 (about), for ax = |x|; r is NaN for inf/NaN.
    Up to pi/4, n = 0 and r = ax; above, Payne-Hanek (only integer arithmetic, and no fused
    multiply-add needed: Vulkan's Fma may round twice)."""
    reduce = b.fcmp(_OGT, ax, b.c(math.pi / 4))
    far_quadrant, far_r = _payne_hanek(b, b.select(reduce, ax, b.c(1.0)))
    far_r = b.add(far_r, b.sub(ax, ax))                          # inf gives NaN
    reduce = b.op("arith.ori", [reduce, b.fcmp(_UNO, ax, ax)], b.b)
    return b.selecti(reduce, far_quadrant, b.ci(0)), b.select(reduce, far_r, ax)


def _sin_cos_reduced(b, r):
    """(sin r, cos r) for |r| <= pi/4 (sin r keeps r's sign, -0 included)."""
    z = b.mul(r, r)
    sin_poly = b.horner(z, _SIN_POLY[b.width])
    s = b.copysign(b.fma(b.mul(r, z), sin_poly, r), r)
    cos_tail = b.mul(b.mul(z, z), b.horner(z, _COS_POLY[b.width]))
    half_z = b.mul(z, b.c(0.5))
    w = b.sub(b.c(1.0), half_z)
    # 1 - z/2 + z^2 C(z), with the rounding of 1 - z/2 put back (fdlibm's __kernel_cos)
    c = b.add(w, b.add(b.sub(b.sub(b.c(1.0), w), half_z), cos_tail))
    return s, c


def _quadrant_pick(b, quadrant, s, c, offset):
    """sin(n pi/2 + r) (offset 0) or cos (offset 1) from n mod 4 and sin r, cos r."""
    q = b.addi(quadrant, b.ci(offset))
    odd = b.cmpi(_NE, b.andi(q, b.ci(1)), b.ci(0))
    negate = b.cmpi(_NE, b.andi(q, b.ci(2)), b.ci(0))
    v = b.select(odd, c, s)
    return b.select(negate, b.op("arith.negf", [v], b.f), v)


def sin(b, x):
    ax = b.abs(x)
    quadrant, r = _reduce(b, ax)
    s, c = _sin_cos_reduced(b, r)
    v = _quadrant_pick(b, quadrant, s, c, 0)
    return b.mul(v, b.copysign(b.c(1.0), x))                      # sin is odd: -0 stays -0


def cos(b, x):
    quadrant, r = _reduce(b, b.abs(x))
    s, c = _sin_cos_reduced(b, r)
    return _quadrant_pick(b, quadrant, s, c, 1)


def tan(b, x):
    ax = b.abs(x)
    quadrant, r = _reduce(b, ax)
    s, c = _sin_cos_reduced(b, r)
    odd = b.cmpi(_NE, b.andi(quadrant, b.ci(1)), b.ci(0))
    v = b.select(odd, b.op("arith.negf", [b.div(c, s)], b.f), b.div(s, c))
    return b.mul(v, b.copysign(b.c(1.0), x))


# atan(t) = t + t^3 P(t^2) on the reduced range, highest degree first
_ATAN_POLY = {32: (8.05374449538e-2, -1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1),
              # fdlibm's aT10 .. aT0, which it subtracts: negated here
              64: (-1.62858201153657823623e-02, 3.65315727442169155270e-02, -4.97687799461593236017e-02,
                   5.83357013379057348645e-02, -6.66107313738753120669e-02, 7.69187620504482999495e-02,
                   -9.09088713343650656196e-02, 1.11111104054623557880e-01, -1.42857142725034663711e-01,
                   1.99999999998764832476e-01, -3.33333333333329318027e-01)}


def _atan_unit(b, a):
    """atan(a) for a in [0, 1] (NaN passes). f32: a > tan(pi/8) goes to pi/4 + atan((a-1)/(a+1));
    f64 (a longer polynomial on |t| <= 7/16): three ranges, around 0, atan(1/2) and pi/4,
    each base in two parts."""
    one = b.c(1.0)
    if b.width == 32:
        ranges = [(math.tan(math.pi / 8), b.div(b.sub(a, one), b.add(a, one)), _EXACT["pi"] / 4)]
    else:
        ranges = [(7 / 16, b.div(b.sub(b.add(a, a), one), b.add(b.c(2.0), a)), _EXACT["atan(1/2)"]),
                  (11 / 16, b.div(b.sub(a, one), b.add(a, one)), _EXACT["pi"] / 4)]
    t, base_hi, base_lo = a, b.c(0.0), b.c(0.0)
    for start, reduced, base in ranges:
        hi, lo = float_parts(base, 2, b.width)
        inside = b.fcmp(_OGT, a, b.c(start))
        t = b.select(inside, reduced, t)
        base_hi, base_lo = b.select(inside, b.c(hi), base_hi), b.select(inside, b.c(lo), base_lo)
    z = b.mul(t, t)
    tail = b.mul(b.mul(t, z), b.horner(z, _ATAN_POLY[b.width]))
    return b.add(base_hi, b.add(t, b.add(tail, base_lo)))


def atan2(b, y, x):
    """atan2(y, x): atan of min(|x|,|y|)/max(|x|,|y|), then pi/2 - . where |y| > |x|, pi - . where
    x < 0 (or -0), the sign of y. Both 0: 0 or pi; both inf: pi/4 or 3 pi/4; NaN stays NaN."""
    ax, ay = b.abs(x), b.abs(y)
    swap = b.fcmp(_OGT, ay, ax)
    big, small = b.select(swap, ay, ax), b.select(swap, ax, ay)
    a = b.div(small, big)
    a = b.select(b.fcmp(_OEQ, big, b.c(0.0)), b.c(0.0), a)                           # 0/0
    a = b.select(b.fcmp(_OEQ, small, b.c(math.inf)), b.c(1.0), a)                    # inf/inf
    r = _atan_unit(b, a)
    pio2_hi, pio2_lo = float_parts(_EXACT["pi"] / 2, 2, b.width)
    pi_hi, pi_lo = float_parts(_EXACT["pi"], 2, b.width)
    r = b.select(swap, b.add(b.sub(b.c(pio2_hi), r), b.c(pio2_lo)), r)
    x_negative = b.fcmp(_OLT, b.copysign(b.c(1.0), x), b.c(0.0))
    r = b.select(x_negative, b.add(b.sub(b.c(pi_hi), r), b.c(pi_lo)), r)
    r = b.copysign(r, y)
    nan = b.op("arith.ori", [b.fcmp(_UNO, x, x), b.fcmp(_UNO, y, y)], b.b)
    return b.select(nan, b.add(x, y), r)


def atan(b, x):
    ax = b.abs(x)
    inverted = b.fcmp(_OGT, ax, b.c(1.0))
    a = b.select(inverted, b.div(b.c(1.0), ax), ax)
    r = _atan_unit(b, a)
    pio2_hi, pio2_lo = float_parts(_EXACT["pi"] / 2, 2, b.width)
    r = b.select(inverted, b.add(b.sub(b.c(pio2_hi), r), b.c(pio2_lo)), r)
    return b.copysign(r, x)
