"""CHLO semantics: broadcasting binaries, special functions, mulhi, top_k, ragged_dot, scan.

- `chlo.broadcast_<op>` broadcasts its operands numpy-style (trailing dimensions align; with
  `broadcast_dimensions` the lower-rank operand's dimensions map to those result dimensions)
  and then has the semantics of `stablehlo.<op>`.
- Special functions come from scipy.special, computed in double and rounded once to the
  result type (erf, erfc, erf_inv, lgamma = log|gamma|, digamma, bessel_i1e, polygamma,
  zeta); the inverse trigonometric and hyperbolic ones from numpy.
- `next_after` steps in the operand's own type (bf16 / f16 included), toward the second
  operand; NaN in either gives NaN, and equal operands give the second.
"""
from __future__ import annotations

import numpy as np

from ..dialects.hlo_attrs import int_list, struct_fields
from .hlo_common import bool_attr, fit, int_attr, ints, np_dtype
from .machine import InterpreterError
from .registry import impl, semantics_of
from ..ir.arrays import attr_to_array

def _special(name):
    # (imported on first use: scipy.special takes 0.2 s of CPU to import, and every compile that
    # folds a constant loads this module; scipy is optional: without it the special functions
    # report that they need it)
    try:
        import scipy.special
    except ImportError:  # pragma: no cover - depends on the environment
        raise InterpreterError(f"this chlo op needs scipy (scipy.special.{name})") from None
    return getattr(scipy.special, name)


# ---- broadcasting binaries ------------------------------------------------------------
def _broadcast_operands(op, args):
    t = op.results[0].type
    rank = len(t.shape) if hasattr(t, "shape") else max(np.ndim(a) for a in args)
    dims = ints(op, "broadcast_dimensions", None)
    out = []
    for a in args:
        a = np.asarray(a)
        if a.ndim < rank and dims is not None and len(dims) == a.ndim:
            view = [1] * rank
            for i, d in enumerate(dims):
                view[d] = a.shape[i]
            a = a.reshape(view)
        out.append(a)
    shape = np.broadcast_shapes(*(a.shape for a in out))
    return [np.broadcast_to(a, shape) for a in out]


def _broadcasting(target: str):
    def run(interp, op, args):
        fn = semantics_of(interp).impls.get(target)
        if fn is None:
            raise InterpreterError(f"'{op.name}' needs the semantics of '{target}'")
        return fn(interp, op, _broadcast_operands(op, args))
    return run


for _name in ("add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply", "or",
              "power", "remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical",
              "subtract", "xor", "compare", "select"):
    impl(f"chlo.broadcast_{_name}")(_broadcasting(f"stablehlo.{_name}"))
for _name in ("next_after", "polygamma", "zeta"):
    impl(f"chlo.broadcast_{_name}")(_broadcasting(f"chlo.{_name}"))


# ---- unary special functions -------------------------------------------------------------
def _unary(real_fn, complex_fn=None):
    def run(interp, op, args):
        a = np.asarray(args[0])
        with np.errstate(all="ignore"):
            if a.dtype.kind == "c":
                if complex_fn is None:
                    raise InterpreterError(f"'{op.name}' on complex numbers is not supported")
                r = complex_fn(a.astype(np.complex128))
            else:
                r = real_fn(a.astype(np.float64))
        return [fit(op, r)]
    return run


def _scipy(name):
    return lambda x: _special(name)(x)


_UNARY = {
    "acos": (np.arccos, np.arccos), "acosh": (np.arccosh, np.arccosh),
    "asin": (np.arcsin, np.arcsin), "asinh": (np.arcsinh, np.arcsinh),
    "atan": (np.arctan, np.arctan), "atanh": (np.arctanh, np.arctanh),
    "tan": (np.tan, np.tan),
    "erf": (_scipy("erf"), _scipy("erf")), "erfc": (_scipy("erfc"), _scipy("erfc")),
    "erf_inv": (_scipy("erfinv"), None), "lgamma": (_scipy("gammaln"), _scipy("loggamma")),
    "digamma": (_scipy("psi"), _scipy("psi")), "bessel_i1e": (_scipy("i1e"), None),
    "square": (np.square, np.square),
}
for _name, (_r, _c) in _UNARY.items():
    impl(f"chlo.{_name}")(_unary(_r, _c))
impl("mhlo.erf")(_unary(_scipy("erf")))
# mhlo's own copies of these (mhlo-only ops of the same semantics).
for _name in ("acos", "acosh", "asin", "asinh", "atan", "atanh"):
    impl(f"mhlo.{_name}")(_unary(*_UNARY[_name]))


# sinh and cosh follow CHLO's decompositions (what the upstream tests' expected values come
# from): arithmetic in the operand type (at least f32), exp/expm1 rounded once to that type.
def _working(a: np.ndarray) -> np.dtype:
    if a.dtype == np.float64:
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def _sinh_cosh(kind):
    def run(interp, op, args):
        a = np.asarray(args[0])
        with np.errstate(all="ignore"):
            if a.dtype.kind == "c":
                z = a.astype(np.complex128)
                return [fit(op, np.sinh(z) if kind == "sinh" else np.cosh(z))]
            w = _working(a)
            x = a.astype(w)

            def exp(v):
                return np.exp(v.astype(np.float64)).astype(w)
            log_half = w.type(np.log(0.5))
            e_add = exp(x + log_half)
            e_sub = exp(log_half - x)
            if kind == "cosh":
                return [fit(op, e_add + e_sub)]
            large = e_add - e_sub
            em1 = np.expm1(x.astype(np.float64)).astype(w)
            small = w.type(0.5) * (em1 + em1 / (em1 + w.type(1)))
            return [fit(op, np.where(np.abs(x) < 1, small, large))]
    return run


impl("chlo.sinh", "mhlo.sinh")(_sinh_cosh("sinh"))
impl("chlo.cosh", "mhlo.cosh")(_sinh_cosh("cosh"))


@impl("chlo.conj")
def _conj(interp, op, args):
    return [np.conj(args[0])]


def _float_view(a):
    a = np.asarray(a)
    return a.astype(np.float64) if a.dtype.kind == "V" else a


@impl("chlo.is_inf", "mhlo.is_inf")
def _is_inf(interp, op, args):
    return [np.isinf(_float_view(args[0]))]


@impl("chlo.is_pos_inf", "mhlo.is_pos_inf")
def _is_pos_inf(interp, op, args):
    return [np.isposinf(_float_view(args[0]))]


@impl("chlo.is_neg_inf", "mhlo.is_neg_inf")
def _is_neg_inf(interp, op, args):
    return [np.isneginf(_float_view(args[0]))]


@impl("chlo.constant_like")
def _constant_like(interp, op, args):
    t = op.results[0].type
    value = attr_to_array(op.attr("value"), _scalar_type(t))
    return [np.full(np.shape(args[0]), value, dtype=np_dtype(t))]


def _scalar_type(t):
    from ..ir import types as T
    return T.element_type(t)


@impl("chlo.constant")
def _chlo_constant(interp, op, args):
    return [attr_to_array(op.attr("value"), op.results[0].type)]


# ---- binary special functions ----------------------------------------------------------------
def _next_after(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype in (np.float16, np.float32, np.float64):
        return np.nextafter(x, y)
    # Other float types (bf16, f8): step the bit pattern.
    udt = np.dtype(f"u{x.dtype.itemsize}")
    bits = x.view(udt).astype(np.int64)
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    sign_bit = 1 << (x.dtype.itemsize * 8 - 1)
    y_sign = y.view(udt).astype(np.int64) & sign_bit
    toward_zero = (xf > yf) == (xf > 0)
    stepped = np.where(toward_zero, bits - 1, bits + 1)
    stepped = np.where(xf == 0, y_sign | 1, stepped)
    out = stepped.astype(udt).view(x.dtype)
    out = np.where(xf == yf, y, out)
    return np.where(np.isnan(xf) | np.isnan(yf), np.array(np.nan, dtype=x.dtype), out)


@impl("chlo.next_after")
def _chlo_next_after(interp, op, args):
    x, y = (np.asarray(a) for a in args)
    return [fit(op, _next_after(x, y))]


@impl("chlo.polygamma")
def _polygamma(interp, op, args):
    n, x = (np.asarray(a, dtype=np.float64) for a in args)
    with np.errstate(all="ignore"):
        ok = (n == np.floor(n)) & (n >= 0)
        r = np.where(ok, _special("polygamma")(np.where(ok, n, 0).astype(np.int64), x), np.nan)
        r = np.where(n == 0, _special("psi")(x), r)
    return [fit(op, r)]


@impl("chlo.zeta")
def _zeta(interp, op, args):
    x, q = (np.asarray(a, dtype=np.float64) for a in args)
    with np.errstate(all="ignore"):
        return [fit(op, _special("zeta")(x, q))]


def _mulhi_unsigned64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.uint64), b.astype(np.uint64)
    m = np.uint64(0xFFFFFFFF)
    s = np.uint64(32)
    a_lo, a_hi, b_lo, b_hi = a & m, a >> s, b & m, b >> s
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> s) + (hi_lo & m) + lo_hi
    return hi_hi + (hi_lo >> s) + (cross >> s)


@impl("chlo.mulhi")
def _mulhi(interp, op, args):
    a, b = (np.asarray(x) for x in args)
    bits = a.dtype.itemsize * 8
    from ..ir import types as T
    e = T.element_type(op.operand("lhs").type)
    if isinstance(e, T.IntegerType):
        bits = e.width
    with np.errstate(all="ignore"):
        if bits <= 32:
            wide = np.uint64 if a.dtype.kind == "u" else np.int64
            r = (a.astype(wide) * b.astype(wide)) >> wide(bits)
        elif a.dtype.kind == "u":
            r = _mulhi_unsigned64(a, b)
        else:
            hi = _mulhi_unsigned64(a.view(np.uint64), b.view(np.uint64))
            hi = hi - np.where(a < 0, b.view(np.uint64), np.uint64(0)) \
                - np.where(b < 0, a.view(np.uint64), np.uint64(0))
            r = hi.view(np.int64)
    return [fit(op, r)]


# ---- top_k -------------------------------------------------------------------------------------------
def _descending_order(x: np.ndarray) -> np.ndarray:
    """Indices sorting the last axis largest first (stable: equal values keep their order)."""
    if x.dtype.kind in "fV":
        f = x.astype(np.float64) if x.dtype.kind == "V" else x
        bits = f.dtype.itemsize * 8
        i = f.view(np.dtype(f"i{f.dtype.itemsize}")).astype(np.int64)
        key = np.where(i < 0, -(i & ((1 << (bits - 1)) - 1)) - 1, i) if bits < 64 else \
            np.where(i < 0, i ^ np.int64(0x7FFFFFFFFFFFFFFF), i)
        return np.argsort(-key, axis=-1, kind="stable")
    if x.dtype.kind == "u":
        return np.argsort(~x, axis=-1, kind="stable")
    if x.dtype.kind == "b":
        return np.argsort(~x, axis=-1, kind="stable")
    return np.argsort(-(x.astype(np.float64)) if x.dtype.itemsize < 8 else ~x, axis=-1, kind="stable")


@impl("chlo.top_k", "mhlo.topk")
def _top_k(interp, op, args):
    x = np.asarray(args[0])
    k = int_attr(op, "k")
    order = _descending_order(x)[..., :k]
    values = np.take_along_axis(x, order, axis=-1)
    return [values, fit(op, order, 1)]


# ---- ragged_dot ------------------------------------------------------------------------------------
def dot_general(lhs, rhs, lb, rb, lc, rc) -> np.ndarray:
    """dot_general with batch dims first, then lhs free, then rhs free dims (einsum)."""
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ls = [None] * lhs.ndim
    rs = [None] * rhs.ndim
    for i, j in zip(lb, rb):
        ls[i] = rs[j] = next(letters)
    for i, j in zip(lc, rc):
        ls[i] = rs[j] = next(letters)
    for i in range(lhs.ndim):
        if ls[i] is None:
            ls[i] = next(letters)
    for j in range(rhs.ndim):
        if rs[j] is None:
            rs[j] = next(letters)
    out = [ls[i] for i in lb] + [ls[i] for i in range(lhs.ndim) if i not in lb and i not in lc] + \
          [rs[j] for j in range(rhs.ndim) if j not in rb and j not in rc]
    return np.einsum(f"{''.join(ls)},{''.join(rs)}->{''.join(out)}", lhs, rhs)


@impl("chlo.ragged_dot", "mhlo.ragged_dot")
def _ragged_dot(interp, op, args):
    lhs, rhs, group_sizes = (np.asarray(a) for a in args)
    f = struct_fields(op.attr("ragged_dot_dimension_numbers")) or {}

    def dims(name):
        v = f.get(name, [])
        return v if isinstance(v, list) else [v]
    lb, rb = dims("lhs_batching_dimensions"), dims("rhs_batching_dimensions")
    lc, rc = dims("lhs_contracting_dimensions"), dims("rhs_contracting_dimensions")
    (ragged,) = dims("lhs_ragged_dimensions") or [None]
    group_dims = dims("rhs_group_dimensions")
    sizes = group_sizes.reshape(-1).astype(np.int64)
    if group_sizes.ndim != 1:
        raise InterpreterError("ragged_dot with per-batch group sizes is not supported")
    calc = np.float64 if lhs.dtype.kind in "fV" and lhs.dtype != np.float64 else None
    l_ = lhs.astype(calc) if calc else lhs
    r_ = rhs.astype(calc) if calc else rhs
    starts = np.concatenate([[0], np.cumsum(sizes)])
    if ragged in lc:
        # Mode 2: the contracting dimension is ragged; one result per group (leading dim).
        parts = []
        for g in range(len(sizes)):
            mask_shape = [1] * lhs.ndim
            mask_shape[ragged] = lhs.shape[ragged]
            pos = np.arange(lhs.shape[ragged]).reshape(mask_shape)
            mask = (pos >= starts[g]) & (pos < starts[g + 1])
            parts.append(dot_general(np.where(mask, l_, 0), r_, lb, rb, lc, rc))
        return [fit(op, np.stack(parts))]
    if ragged in lb or not group_dims:
        raise InterpreterError("ragged_dot with a ragged batch dimension is not supported")
    (gd,) = group_dims
    r_rest_b = [d - (d > gd) for d in rb]
    r_rest_c = [d - (d > gd) for d in rc]
    free = [i for i in range(lhs.ndim) if i not in lb and i not in lc]
    pos_axis = len(lb) + free.index(ragged)
    out = None
    for g in range(len(sizes)):
        part = dot_general(l_, np.take(r_, g, axis=gd), lb, r_rest_b, lc, r_rest_c)
        if out is None:
            out = np.zeros_like(part)
        mask_shape = [1] * part.ndim
        mask_shape[pos_axis] = part.shape[pos_axis]
        pos = np.arange(part.shape[pos_axis]).reshape(mask_shape)
        out = np.where((pos >= starts[g]) & (pos < starts[g + 1]), part, out)
    return [fit(op, out)]


# ---- scan ------------------------------------------------------------------------------------------
@impl("chlo.scan")
def _scan(interp, op, args):
    """Runs the body once per position along `dimension` (on whole slices, not elements)."""
    dim = int_attr(op, "dimension", 0)
    reverse = bool_attr(op, "is_reverse", False)
    n_inputs = _count_inputs(op, args)
    inputs, carries = list(args[:n_inputs]), list(args[n_inputs:])
    n_out = len(op.results) - len(carries)
    length = np.asarray(inputs[0]).shape[dim] if inputs else 0
    outs = [[None] * length for _ in range(n_out)]
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        slices = [np.take(np.asarray(x), i, axis=dim) for x in inputs]
        values = interp.run_region(op.regions[0], slices + carries)
        for k in range(n_out):
            outs[k][i] = np.asarray(values[k])
        carries = list(values[n_out:])
    results = []
    for k in range(n_out):
        if length:
            results.append(fit(op, np.stack(outs[k], axis=dim), k))
        else:
            t = op.results[k].type
            results.append(np.zeros(tuple(t.shape), dtype=np_dtype(t)))
    return results + [fit(op, c, n_out + j) for j, c in enumerate(carries)]


def _count_inputs(op, args) -> int:
    """How many operands are scanned inputs (the rest are initial carries)."""
    sizes = op.attr("operandSegmentSizes") or op.attr("operand_segment_sizes")
    seg = int_list(sizes) if sizes is not None else None
    if seg:
        return seg[0]
    return len(args) // 2  # without segment sizes: as many inputs as carries
