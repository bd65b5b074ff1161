"""`stablehlo.custom_call` targets other than the `check.*` ones (those are in check.py),
as the runtimes the corpus was written for execute them. Register more with
`@custom_call("target")` from registry.py; `stablehlo.custom_call` dispatches on the name.
"""
from __future__ import annotations

import numpy as np

from .hlo_common import fit
from .registry import custom_call


@custom_call("shape_assertion")
def _shape_assertion(interp, op, args):
    """JAX's shape-polymorphism guard. IREE erases it on import (`ShapeAssertionDrop` in its
    StableHLO input conversion: shapes are not checked at run time), and so does this
    reference: the IREE e2e test `stablehlo_ops/shape_assertion.mlir` relies on that."""
    return [np.array(True) for _ in op.results]


@custom_call("ProductOfElementaryHouseholderReflectors")
def _householder_product(interp, op, args):
    """LAPACK's orgqr: the first N columns of Q = H_0 H_1 ... H_{K-1}, where
    H_i = I - tau_i v_i v_i^T and v_i is column i of `a` below the diagonal with v_i[i] = 1.
    `a` is (..., M, N), `taus` (..., K). One vectorised step per reflector (K is small)."""
    a, taus = (np.asarray(x) for x in args)
    m, n = a.shape[-2], a.shape[-1]
    k = taus.shape[-1]
    work = np.complex128 if a.dtype.kind == "c" else np.float64
    a64, t64 = a.astype(work), taus.astype(work)
    batch = a.shape[:-2]
    q = np.broadcast_to(np.eye(m, n, dtype=work), batch + (m, n)).copy()
    rows = np.arange(m)
    for i in reversed(range(k)):
        v = np.where(rows > i, a64[..., :, i], 0).astype(work)
        v[..., i] = 1
        # q <- (I - tau v v^H) q
        vq = np.einsum("...m,...mn->...n", v.conj(), q)
        q = q - t64[..., i, None, None] * v[..., :, None] * vq[..., None, :]
    return [fit(op, q)]
