"""Random numbers: `stablehlo.rng` and `stablehlo.rng_bit_generator`.

Both are deterministic here, bit for bit what IREE's lowering computes (which for
rng_bit_generator matches XLA):

- `rng` UNIFORM: a linear congruential hash of each element's index, seed 0:
  u = 0; for each dimension d: u = (index_d + u) * 1103515245 + 12345 (wrapping i32);
  result = float(u as unsigned) * ((b - a) * 2.3283064e-10) + a, in the element type.
  Integer element types get the same formula computed in f32 and truncated.
- `rng` NORMAL: Box-Muller over std::mt19937(0) uniforms, as IREE's preprocessing does:
  pairs (u1, u2) give sqrt(-2 log u1) * (cos(2 pi u2), sin(2 pi u2)) * sigma + mu, the cos
  halves first.
- `rng_bit_generator`: THREE_FRY (Threefry-2x32, 20 rounds) and PHILOX / DEFAULT
  (Philox-4x32, 10 rounds) on counters state + i; the state is (key, counter) as ui64[2]
  or i32[4], and the new state advances the counter by the number of blocks used.
"""
from __future__ import annotations

import numpy as np

from .hlo_common import enum_attr, fit, np_dtype
from .machine import InterpreterError
from .registry import impl

_M32 = np.uint64(0xFFFFFFFF)


# ---- rng -------------------------------------------------------------------------------------
def _lcg_uniform(shape: tuple, a, b, dt) -> np.ndarray:
    u = np.zeros(shape, dtype=np.uint32)
    for d, n in enumerate(shape):
        view = [1] * len(shape)
        view[d] = n
        idx = np.arange(n, dtype=np.uint32).reshape(view)
        with np.errstate(over="ignore"):
            u = (idx + u) * np.uint32(1103515245) + np.uint32(12345)
    work = np.float32 if dt.kind != "f" or dt.itemsize <= 4 else dt.type
    a_, b_ = np.asarray(a).astype(work), np.asarray(b).astype(work)
    scale = (b_ - a_) * work(2.3283064e-10)
    return u.astype(work) * scale + a_


def _mt19937_canonical(count: int) -> np.ndarray:
    """`count` draws of libstdc++'s uniform_real_distribution<double>(0, 1) over mt19937(0)."""
    bits = np.random.MT19937()
    bits._legacy_seeding(0)
    raw = bits.random_raw(2 * count).astype(np.float64).reshape(count, 2)
    r = (raw[:, 0] + raw[:, 1] * 4294967296.0) / 18446744073709551616.0
    return np.where(r >= 1.0, np.nextafter(1.0, 0.0), r)


def box_muller_draws(n: int) -> tuple:
    """The f32 arrays (-2 ln u1, cos 2 pi u2, sin 2 pi u2) behind `n` normal draws of
    `stablehlo.rng` from its mt19937 stream (Box-Muller): the interpreter computes with them,
    the lowering to linalg bakes them in as constants, so both draw the same numbers."""
    half = (n + 1) // 2
    eps = np.float32(np.finfo(np.float32).eps)
    sq, co, si = [], [], []
    draws = _mt19937_canonical(2 * half + 64)
    pos = 0
    while len(sq) < half:
        if pos + 2 > len(draws):
            draws = np.concatenate([draws, _mt19937_canonical(2 * len(draws))[len(draws):]])
        u1, u2 = np.float32(draws[pos]), np.float32(draws[pos + 1])
        pos += 2
        if u1 <= eps:
            continue
        two_pi = np.float32(2.0 * np.pi)
        sq.append(np.float32(-2.0 * np.log(np.float64(u1))))
        co.append(np.float32(np.cos(np.float64(two_pi * u2))))
        si.append(np.float32(np.sin(np.float64(two_pi * u2))))
    return np.array(sq, np.float32), np.array(co, np.float32), np.array(si, np.float32)


@impl("stablehlo.rng", "mhlo.rng")
def _rng(interp, op, args):
    a, b, shape = args
    shape = tuple(int(x) for x in np.asarray(shape).reshape(-1))
    dist = enum_attr(op, "rng_distribution", "UNIFORM")
    dt = np_dtype(op.results[0].type)
    if dist == "UNIFORM":
        r = _lcg_uniform(shape, a, b, dt)
        if dt.kind in "iu":
            r = np.floor(r)
        return [fit(op, r)]
    if dist == "NORMAL":
        n = int(np.prod(shape, dtype=np.int64))
        sq, co, si = box_muller_draws(n)
        mag = np.float32(np.asarray(b)) * np.sqrt(sq)
        mu = np.float32(np.asarray(a))
        res = np.concatenate([mag * co + mu, mag * si + mu])[:n]
        return [fit(op, res.reshape(shape))]
    raise InterpreterError(f"rng_distribution {dist} is not supported")


# ---- rng_bit_generator -------------------------------------------------------------------------
def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return ((x << np.uint32(r)) | (x >> np.uint32(32 - r))).astype(np.uint32)


def threefry2x32(key0, key1, x0: np.ndarray, x1: np.ndarray):
    rotations = (13, 15, 26, 6, 17, 29, 16, 24)
    key0, key1 = np.uint32(key0), np.uint32(key1)
    ks = (key0, key1, np.uint32(0x1BD11BDA) ^ key0 ^ key1)
    with np.errstate(over="ignore"):
        x = [x0.astype(np.uint32) + ks[0], x1.astype(np.uint32) + ks[1]]
        for i in range(5):
            rot = (4 * i) % 8
            for j in range(4):
                x[0] = x[0] + x[1]
                x[1] = _rotl(x[1], rotations[rot + j])
                x[1] = x[0] ^ x[1]
            x[0] = x[0] + ks[(i + 1) % 3]
            x[1] = x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x[0], x[1]


def philox4x32(key0, key1, x0: np.ndarray, x1: np.ndarray):
    k0, k1 = np.uint64(key0), np.uint64(key1)
    s = [x0.astype(np.uint64), x1.astype(np.uint64), np.full(x0.shape, k0), np.full(x0.shape, k1)]
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = s[0] * np.uint64(0xD2511F53)
            p1 = s[2] * np.uint64(0xCD9E8D57)
            hi0, lo0 = p0 >> np.uint64(32), p0 & _M32
            hi1, lo1 = p1 >> np.uint64(32), p1 & _M32
            s = [hi1 ^ s[1] ^ k0, lo1, hi0 ^ s[3] ^ k1, lo0]
            k0 = (k0 + np.uint64(0x9E3779B9)) & _M32
            k1 = (k1 + np.uint64(0xBB67AE85)) & _M32
    return [v.astype(np.uint32) for v in s]


def _read_state(state: np.ndarray):
    """(key0, key1, counter, writer) from a ui64[2] / i64[2] or 32-bit [4] state."""
    st = np.asarray(state)
    if st.shape == (2,) and st.dtype.itemsize == 8:
        u = st.view(np.uint64)
        key = int(u[0])
        counter = int(u[1])

        def write(new_counter):
            out = u.copy()
            out[1] = np.uint64(new_counter & 0xFFFFFFFFFFFFFFFF)
            return out.view(st.dtype)
        return key & 0xFFFFFFFF, key >> 32, counter, write
    if st.shape == (4,) and st.dtype.itemsize == 4:
        u = st.view(np.uint32)
        # IREE reads the counter as (s[2] << 32) | s[3] and writes it back low word first.
        counter = (int(u[2]) << 32) | int(u[3])

        def write(new_counter):
            out = u.copy()
            out[2] = np.uint32(new_counter & 0xFFFFFFFF)
            out[3] = np.uint32((new_counter >> 32) & 0xFFFFFFFF)
            return out.view(st.dtype)
        return int(u[0]), int(u[1]), counter, write
    raise InterpreterError(f"rng_bit_generator: unsupported state shape {st.shape} of {st.dtype}")


def _counters(counter: int, count: int):
    c = (np.arange(count, dtype=np.uint64) + np.uint64(counter)) if count else np.zeros(0, np.uint64)
    return c & _M32, c >> np.uint64(32)


def _threefry_shape(shape: tuple):
    if not shape:
        return shape, 0
    half = int(np.argmax(shape))
    for i, d in enumerate(shape):
        if d % 2 == 0:
            half = i
            break
    new = list(shape)
    new[half] = (new[half] + 1) // 2
    if half == len(new) - 1:
        new.append(1)
    return tuple(new), half


def _three_fry(key0, key1, counter, shape, bits):
    n = int(np.prod(shape, dtype=np.int64))
    if bits == 64:
        lo, hi = threefry2x32(key0, key1, *_counters(counter, n))
        out = lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))
        return out.reshape(shape), n
    inter, half = _threefry_shape(shape)
    count = int(np.prod(inter, dtype=np.int64))
    left, right = threefry2x32(key0, key1, *_counters(counter, count))
    if n == 1:
        return left[:1].reshape(shape), count
    cat = np.concatenate([left.reshape(inter), right.reshape(inter)], axis=half + 1)
    collapsed = list(shape)
    collapsed[half] += collapsed[half] & 1
    full = cat.reshape(collapsed)
    return full[tuple(slice(0, d) for d in shape)], count


def _philox(key0, key1, counter, shape, bits):
    n = int(np.prod(shape, dtype=np.int64))
    if bits == 64:
        count = (n + 1) // 2
        o = philox4x32(key0, key1, *_counters(counter, count))
        a = o[0].astype(np.uint64) | (o[1].astype(np.uint64) << np.uint64(32))
        b = o[2].astype(np.uint64) | (o[3].astype(np.uint64) << np.uint64(32))
        flat = np.stack([a, b], axis=1).reshape(-1)
    else:
        count = (n + 3) // 4
        o = philox4x32(key0, key1, *_counters(counter, count))
        flat = np.stack(o, axis=1).reshape(-1)
    if n == 1:
        flat = flat[:1]
    return flat[:n].reshape(shape), count


@impl("stablehlo.rng_bit_generator", "mhlo.rng_bit_generator")
def _rng_bit_generator(interp, op, args):
    (state,) = args
    algorithm = enum_attr(op, "rng_algorithm", "DEFAULT")
    t = op.results[1].type
    shape = tuple(t.shape)
    dt = np_dtype(t)
    bits = dt.itemsize * 8
    if bits not in (16, 32, 64):
        raise InterpreterError(f"rng_bit_generator producing {bits}-bit values is not supported")
    key0, key1, counter, write = _read_state(state)
    if algorithm == "THREE_FRY":
        raw, used = _three_fry(key0, key1, counter, shape, 64 if bits == 64 else 32)
    elif algorithm in ("PHILOX", "DEFAULT"):
        raw, used = _philox(key0, key1, counter, shape, 64 if bits == 64 else 32)
    else:
        raise InterpreterError(f"rng_algorithm {algorithm} is not supported")
    raw = np.ascontiguousarray(raw)
    if bits == 16:
        raw = raw.astype(np.uint16)
    values = raw.view(np.dtype(f"u{bits // 8}")).view(dt) if dt.kind not in "iu" else raw.astype(dt)
    return [fit(op, write(counter + used), 0), values.reshape(shape)]


@impl("mhlo.rng_uniform")
def _rng_uniform_legacy(interp, op, args):
    a, b, shape = args
    shape = tuple(int(x) for x in np.asarray(shape).reshape(-1))
    dt = np_dtype(op.results[0].type)
    r = _lcg_uniform(shape, a, b, dt)
    return [fit(op, np.floor(r) if dt.kind in "iu" else r)]


@impl("mhlo.xla.rng_get_and_update_state")
def _rng_get_and_update_state(interp, op, args):
    """XLA's global RNG state: returns the current 128-bit state and advances it by `delta`."""
    from .hlo_common import int_attr
    state = getattr(interp, "rng_state", 0)
    interp.rng_state = (state + int_attr(op, "delta", 0)) & ((1 << 128) - 1)
    words = np.array([state & 0xFFFFFFFFFFFFFFFF, state >> 64], dtype=np.uint64)
    return [fit(op, words)]
