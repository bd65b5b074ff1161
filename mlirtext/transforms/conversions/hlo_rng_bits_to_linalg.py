"""hlo -> linalg for `rng_bit_generator`: counter-based generators, one `linalg.generic` whose
body computes the generator block an element belongs to and picks its word (the interpreter's
`interpreter/hlo_rng.py` is the reference, bit for bit; it matches IREE and XLA).

The state is (key, counter): `i64[2]` = [key, counter] or `i32[4]` = [key0, key1, counter
high word, counter low word]. Block j encrypts counter + j:
- PHILOX / DEFAULT: Philox-4x32, 10 rounds; 32-bit outputs take the 4 words of block f / 4,
  64-bit outputs two words pairs of block f / 2 (f: the element's row-major index);
- THREE_FRY: Threefry-2x32, 20 rounds; 64-bit outputs are block f's two words; 32-bit outputs
  follow XLA's split of the shape in two halves (the first even dimension, else the largest,
  is halved: the left words fill one half and the right words the other).
The new state advances the counter by the number of blocks used. Unsigned types cross as their
signless forms (the bits are the same).
"""
from __future__ import annotations

import numpy as np

from ...dialects.hlo_attrs import enum_word
from ...ir import types as T
from ..rewriter import RewritePattern
from .build import empty, hlo_names
from .hlo_generic import identity_map, generic_body, make_generic
from .hlo_scalar import Scalar
from .hlo_unsigned import replace_with_signless, signless, to_signless

_MASK32 = 0xFFFFFFFF


class Words:
    """Scalar i32/i64 arithmetic for the generators (wrapping, unsigned where it matters)."""

    def __init__(self, b: Scalar):
        self.b = b

    def k(self, v: int, t=T.i32):
        width = t.width
        v &= (1 << width) - 1
        return self.b.const(v - (1 << width) if v >> (width - 1) else v, t)

    def add(self, x, y):
        return self.b.op("arith.addi", [x, y], x.type)

    def xor(self, x, y):
        return self.b.op("arith.xori", [x, y], x.type)

    def rotl(self, x, r: int):
        left = self.b.op("arith.shli", [x, self.k(r)], T.i32)
        right = self.b.op("arith.shrui", [x, self.k(32 - r)], T.i32)
        return self.b.op("arith.ori", [left, right], T.i32)

    def lo(self, x64):
        return self.b.op("arith.trunci", [x64], T.i32)

    def hi(self, x64):
        return self.lo(self.b.op("arith.shrui", [x64, self.k(32, T.i64)], T.i64))

    def wide(self, x32):
        return self.b.op("arith.extui", [x32], T.i64)

    def join(self, lo32, hi32):
        """lo | hi << 32."""
        high = self.b.op("arith.shli", [self.wide(hi32), self.k(32, T.i64)], T.i64)
        return self.b.op("arith.ori", [self.wide(lo32), high], T.i64)


def threefry2x32(w: Words, key0, key1, x0, x1):
    rotations = (13, 15, 26, 6, 17, 29, 16, 24)
    ks = (key0, key1, w.xor(w.xor(w.k(0x1BD11BDA), key0), key1))
    x = [w.add(x0, ks[0]), w.add(x1, ks[1])]
    for i in range(5):
        for j in range(4):
            x[0] = w.add(x[0], x[1])
            x[1] = w.xor(x[0], w.rotl(x[1], rotations[(4 * i) % 8 + j]))
        x[0] = w.add(x[0], ks[(i + 1) % 3])
        x[1] = w.add(w.add(x[1], ks[(i + 2) % 3]), w.k(i + 1))
    return x


def philox4x32(w: Words, key0, key1, x0, x1):
    s = [x0, x1, key0, key1]
    k0, k1 = key0, key1
    for _ in range(10):
        p0 = w.b.op("arith.muli", [w.wide(s[0]), w.k(0xD2511F53, T.i64)], T.i64)
        p1 = w.b.op("arith.muli", [w.wide(s[2]), w.k(0xCD9E8D57, T.i64)], T.i64)
        s = [w.xor(w.xor(w.hi(p1), s[1]), k0), w.lo(p1), w.xor(w.xor(w.hi(p0), s[3]), k1), w.lo(p0)]
        k0, k1 = w.add(k0, w.k(0x9E3779B9)), w.add(k1, w.k(0xBB67AE85))
    return s


def _threefry_split(shape: tuple):
    """XLA's split for 32-bit Threefry output: (halved dim, intermediate shape), as the interpreter."""
    if not shape:
        return 0, (1, 1)
    half = int(np.argmax(shape))
    for i, d in enumerate(shape):
        if d % 2 == 0:
            half = i
            break
    inter = list(shape)
    inter[half] = (inter[half] + 1) // 2
    if half == len(inter) - 1:
        inter.append(1)
    return half, tuple(inter)


def _row_major(b: Scalar, idx, shape):
    flat = b.c(0)
    for i, n in zip(idx, shape):
        flat = b.add(b.mul(flat, b.c(n)), i)
    return flat


def _unravel(b: Scalar, flat, shape):
    out = []
    for n in reversed(shape):
        out.append(b.op("arith.remui", [flat, b.c(n)], T.index))
        flat = b.op("arith.divui", [flat, b.c(n)], T.index)
    return out[::-1]


class RngBitGenerator(RewritePattern):
    ops = hlo_names("rng_bit_generator")

    def match_and_rewrite(self, op, rw) -> bool:
        algorithm = enum_word(op.attr("rng_algorithm")) or "DEFAULT"
        state_t, out_t = (signless(r.type) for r in op.results)
        if not (isinstance(out_t, T.RankedTensorType) and out_t.has_static_shape):
            return False
        st = state_t.element
        if not isinstance(st, T.IntegerType) or (tuple(state_t.shape), st.width) not in (((2,), 64), ((4,), 32)):
            return False  # the state layouts the spec's implementations use
        e = out_t.element
        bits = getattr(e, "width", 0)
        if bits not in (32, 64) or algorithm not in ("PHILOX", "DEFAULT", "THREE_FRY"):
            return False
        shape = tuple(out_t.shape)
        n = int(np.prod(shape, dtype=np.int64))
        three_fry = algorithm == "THREE_FRY"
        if three_fry:
            used = n if bits == 64 else int(np.prod(_threefry_split(shape)[1], dtype=np.int64))
        else:
            used = (n + 1) // 2 if bits == 64 else (n + 3) // 4
        state = to_signless(rw, op, op.operand("initial_state"))

        def read_state(b: Scalar):
            w = Words(b)
            word = lambda i: b.extract(state, [b.c(i)])  # noqa: E731
            if st.width == 64:
                key = word(0)
                return w, w.lo(key), w.hi(key), word(1)
            return w, word(0), word(1), w.join(word(3), word(2))

        def values(b: Scalar, ins, outs):
            w, key0, key1, counter = read_state(b)
            flat = _row_major(b, [b.index(d) for d in range(len(shape))], shape)

            def block(j):
                c = w.add(counter, b.op("arith.index_cast", [j], T.i64))
                gen = threefry2x32 if three_fry else philox4x32
                return gen(w, key0, key1, w.lo(c), w.hi(c))

            if three_fry and bits == 64:
                x = block(flat)
                word = w.join(x[0], x[1])
            elif three_fry:
                word = _threefry_word(b, shape, block)
            else:
                per = 2 if bits == 64 else 4
                x = block(b.op("arith.divui", [flat, b.c(per)], T.index))
                lane = b.op("arith.remui", [flat, b.c(per)], T.index)
                if bits == 64:
                    x = [w.join(x[0], x[1]), w.join(x[2], x[3])]
                word = x[-1]
                for i in range(len(x) - 2, -1, -1):
                    word = b.select(b.cmpi(0, lane, b.c(i)), x[i], word)
            return [word if word.type == e else b.op("arith.bitcast", [word], e)]

        def new_state(b: Scalar, ins, outs):
            w, _k0, _k1, counter = read_state(b)
            advanced = w.add(counter, w.k(used, T.i64))
            i = b.index(0)
            if st.width == 64:
                return [b.select(b.cmpi(0, i, b.c(1)), advanced, ins[0])]
            lo, hi = w.lo(advanced), w.hi(advanced)
            return [b.select(b.cmpi(0, i, b.c(2)), lo, b.select(b.cmpi(0, i, b.c(3)), hi, ins[0]))]

        rank = len(shape)
        out = make_generic(rw, op, [], [], [empty(rw, op, out_t)], [identity_map(rank)], ["parallel"] * rank,
                           generic_body([], [out_t], values)).result
        nst = make_generic(rw, op, [state], [identity_map(1)], [empty(rw, op, state_t)], [identity_map(1)], ["parallel"],
                           generic_body([state], [state_t], new_state)).result
        replace_with_signless(rw, op, [nst, out])
        return True


def _threefry_word(b: Scalar, shape, block):
    """The 32-bit Threefry word at the element: XLA concatenates the left words and the right
    words along the dimension after the halved one, reshapes to the shape (the halved dim
    rounded up to even) and slices it back."""
    half, inter = _threefry_split(shape)
    if int(np.prod(shape, dtype=np.int64)) == 1:
        return block(b.c(0))[0]
    rounded = list(shape)
    rounded[half] += rounded[half] & 1
    joined = list(inter)
    joined[half + 1] *= 2
    flat = _row_major(b, [b.index(d) for d in range(len(shape))], rounded)
    q = _unravel(b, flat, joined)
    side = b.cmpi(9, q[half + 1], b.c(inter[half + 1]))  # uge: the right words' half
    q[half + 1] = b.op("arith.remui", [q[half + 1], b.c(inter[half + 1])], T.index)
    x = block(_row_major(b, q, inter))
    return b.select(side, x[1], x[0])


PATTERNS = [RngBitGenerator()]
